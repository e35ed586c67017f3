"""The assumptions a what-if makes where the calibration measured nothing: device presets,
the compression algorithms' relative factors and speeds, and the uncertainty given to each.

Each statement here is shown to users as a recommendation's assumption or an evidence's source,
so it says what the figure is and where it comes from.
"""

from __future__ import annotations

#: Relative uncertainty (one sigma, log-normal) of a value taken from a site or workload file.
SPEC_SD = 0.20
#: ... of a device preset (HDD, SSD, NVMe: typical figures of a device class, good to a factor).
PRESET_SD = 0.30
#: ... of an assumed decompression speed of one algorithm relative to another.
RATIO_SD = 0.30
#: ... of the assumed page-cache and network latency figures.
LOOSE_SD = 0.50

#: Device kinds: typical figures of each class (assumptions, not measurements).
#: (MB/s, IOPS, statement)
DEVICE_PRESETS: dict[str, tuple[float, float, str]] = {
    "hdd": (70.0, 120.0, "HDD: 70 MB/s, 120 random reads/s (assumed: the SATA disks of the "
            "GSI ALICE Tier-2 PROOF-Lite study streamed 70 MB/s each; hard disks stream "
            "40-200 MB/s and serve 100-200 random reads/s)"),
    "ssd": (500.0, 10_000.0, "SATA SSD: 500 MB/s, 0.1 ms per access (assumed: SATA SSDs "
            "stream 300-550 MB/s, bounded by the 6 Gb/s SATA link)"),
    "nvme": (3000.0, 50_000.0, "NVMe: 3000 MB/s, 0.02 ms per access (assumed: NVMe drives "
             "on PCIe 3 and 4 stream 2-7 GB/s)"),
}
#: Compression factor of each algorithm relative to ZLIB-1 on the same data (assumption).
FACTOR_VS_ZLIB = {"ZLIB": 1.0, "LZ4": 0.8, "ZSTD": 1.1, "LZMA": 1.3}
FACTOR_SOURCE = ("compression factors relative to ZLIB-1: LZ4 0.8, ZSTD-5 1.1, LZMA 1.3 "
                 "(typical of ROOT's comparisons; the demo's flat_* datasets measure them)")
#: Decompression speed (uncompressed MB/s out) relative to ZLIB (assumption).
SPEED_VS_ZLIB = {"ZLIB": 1.0, "LZ4": 16.0, "ZSTD": 2.0, "LZMA": 0.12}
SPEED_SOURCE = ("assumed decompression speed relative to ZLIB-1: ZSTD-5 2x, LZ4 16x, LZMA "
                "0.12x (from single-core rates of the codec libraries measured on the "
                "development machine, a 2-core VM, in 2026: ZLIB-1 307, ZSTD-5 about 900 (taken "
                "as 2x), LZ4 about 5000, LZMA about 36 uncompressed MB/s; ROOT's documentation "
                "of its compression settings gives the same order)")
