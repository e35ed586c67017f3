"""Benchmark: the decompression read test beside the codec libraries called directly.

Issue 3 asks for the decompression rates per algorithm "beside a direct measurement of the same
baskets with the codec library itself".  This script

1. runs ``hep_advisor.probes.readtests.decompress.measure_decompression`` on the files (by default
the demo's
   flat files, one per algorithm: ZLIB-1, LZ4, ZSTD-5, LZMA-7, none) with a generous share, and
2. collects the same baskets with ``collect_baskets`` and times, over the very same blocks, each
   codec library called directly, bypassing uproot: ``zlib`` and ``cramjam.zlib``;
   ``lz4.block`` and ``cramjam.lz4`` (without and with the XXH64 check uproot and ROOT do);
   ``zstandard`` and ``cramjam.zstd``; ``lzma`` and ``cramjam.xz``.

Each direct figure is the median of ``--repeat`` passes over the pool, with its spread
((p75 - p25) / median).  MB = 10^6 bytes; rates in uncompressed MB/s (compressed beside).

    python -m benchmarks.timing.bench_decompression [FILES...] [--repeat 7] [--share 20]
                                             [--sample-mb 32]
"""

from __future__ import annotations

import argparse
import glob
import lzma
import os
import statistics
import sys
import time
import zlib
from collections.abc import Callable

import numpy as np

from hep_advisor.probes.readtests.decompress import (
    ORDER,
    Block,
    Pool,
    collect_baskets,
    measure_decompression,
)
from hep_advisor.probes.readtests.runner import Session


def direct_codecs() -> dict[str, list[tuple[str, Callable[[Block], int]]]]:
    import cramjam
    import lz4.block
    import xxhash
    import zstandard

    zd = zstandard.ZstdDecompressor()

    def lz4_checked(b: Block) -> int:
        assert xxhash.xxh64(b.data).intdigest() == b.checksum
        return len(lz4.block.decompress(b.data, uncompressed_size=b.uncompressed_bytes))

    return {
        "ZLIB": [
            ("zlib (stdlib)", lambda b: len(zlib.decompress(b.data, bufsize=b.uncompressed_bytes))),
            ("cramjam.zlib", lambda b: len(cramjam.zlib.decompress(
                b.data, output_len=b.uncompressed_bytes))),
        ],
        "LZ4": [
            ("lz4.block", lambda b: len(lz4.block.decompress(
                b.data, uncompressed_size=b.uncompressed_bytes))),
            ("lz4.block + xxhash", lz4_checked),
            ("cramjam.lz4", lambda b: len(cramjam.lz4.decompress_block(
                b.data, output_len=b.uncompressed_bytes))),
        ],
        "ZSTD": [
            ("zstandard", lambda b: len(zd.decompress(b.data,
                                                      max_output_size=b.uncompressed_bytes))),
            ("cramjam.zstd", lambda b: len(cramjam.zstd.decompress(
                b.data, output_len=b.uncompressed_bytes))),
        ],
        "LZMA": [
            ("lzma (stdlib)", lambda b: len(lzma.decompress(b.data))),
            ("cramjam.xz", lambda b: len(cramjam.xz.decompress(
                b.data, output_len=b.uncompressed_bytes))),
        ],
    }


def time_direct(pool: Pool, fn: Callable[[Block], int], repeat: int) -> list[float]:
    """Uncompressed MB/s of ``repeat`` passes over the pool's blocks."""
    out = []
    for b in pool.blocks[:3]:  # warm the codec
        fn(b)
    for _ in range(repeat):
        t0 = time.perf_counter()
        n = 0
        for b in pool.blocks:
            n += fn(b)
        dt = time.perf_counter() - t0
        assert n == pool.uncompressed_bytes
        out.append(n / 1e6 / dt)
    return out


def spread(xs: list[float] | tuple[float, ...]) -> float:
    if len(xs) < 3:
        return float("nan")
    q75, q25 = np.percentile(xs, [75, 25])
    return float((q75 - q25) / np.median(xs))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", help="ROOT files (default: the demo's flat files)")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--share", type=float, default=20.0, help="seconds for the read test")
    ap.add_argument("--sample-mb", type=float, default=32.0)
    args = ap.parse_args()
    files = args.files
    if not files:
        from hep_advisor.demo import ensure_demo

        files = sorted(glob.glob(str(ensure_demo() / "flat" / "*.root")))
    sample_bytes = int(args.sample_mb * 1e6)
    print(f"files: {', '.join(os.path.basename(f) for f in files)}")
    print(f"python {sys.version.split()[0]}, cpu: {os.cpu_count()} logical, "
          f"load {os.getloadavg()[0]:.2f}")

    t0 = time.perf_counter()
    points = measure_decompression(Session(args.share * 2), files, share_s=args.share,
                                   sample_bytes=sample_bytes)
    took = time.perf_counter() - t0
    print(f"\nread test (probes.readtests.decompress): {took:.1f} s for a share of "
          f"{args.share:.0f} s")
    print(f"{'algorithm':9} {'library':22} {'baskets':>7} {'ratio':>6} {'comp MB/s':>10} "
          f"{'uncomp MB/s':>11} {'spread':>7} {'n':>3}")
    ours: dict[str, float] = {}
    for p in points:
        m = p.measurement
        ratio = p.uncompressed_mb_per_s / p.compressed_mb_per_s
        ours[p.algorithm] = p.uncompressed_mb_per_s
        print(f"{p.algorithm:9} {p.library:22} {p.baskets:7d} {ratio:6.2f} "
              f"{p.compressed_mb_per_s:10.1f} {p.uncompressed_mb_per_s:11.1f} "
              f"{(m.spread or float('nan')):7.3f} {len(m.samples):3d}")

    sample = collect_baskets(files, sample_bytes=sample_bytes)
    codecs = direct_codecs()
    print(f"\ndirect codec calls on the same baskets ({args.repeat} passes each; uncompressed "
          "MB/s; 'vs test' = read test / this)")
    print(f"{'algorithm':9} {'library':22} {'baskets':>7} {'comp MB':>8} {'median':>9} "
          f"{'min':>9} {'max':>9} {'spread':>7} {'vs test':>8}")
    for alg in ORDER:
        pool = sample.pools.get(alg)
        if pool is None:
            continue
        point = next(p for p in points if p.algorithm == alg)
        pool.truncate(point.baskets)  # the baskets the read test timed
        for name, fn in codecs[alg]:
            rates = time_direct(pool, fn, args.repeat)
            med = statistics.median(rates)
            print(f"{alg:9} {name:22} {pool.baskets:7d} {pool.compressed_bytes / 1e6:8.2f} "
                  f"{med:9.1f} {min(rates):9.1f} {max(rates):9.1f} {spread(rates):7.3f} "
                  f"{ours[alg] / med:8.2f}")


if __name__ == "__main__":
    main()
