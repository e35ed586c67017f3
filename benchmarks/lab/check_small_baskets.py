"""Where the warm event loop's unexplained time goes with small baskets: per basket or per MB
(issues 57 and 58: merges of uproot-written files with a basket per branch per few hundred
entries realised 1.2-1.7x what the replay predicted, which charged that time per MB).

    python -m benchmarks.lab.check_small_baskets DIR [--tree Events] [--repeats 5]

``DIR``'s ROOT files are merged twice into a temporary directory (removed at the end; ``DIR``
is only read): ``hadd -fk`` (the baskets copied as they are: the same baskets and MB in fewer
files) and ``hadd -O -fk`` (M001's printed options: the baskets refilled, fewer and larger).
Each layout is read warm with the plain analysis (``uproot.iterate`` over every branch,
library ``ak``, uproot's default step), the layouts alternating, in this process; and each
layout's baskets are decompressed directly with ``cramjam`` (uproot's codec library), timed
apart.  Then:

- today's files less the ``-fk`` merge (the same baskets and bytes) is the per-file cost (the
  open and its read call), per file fewer;
- each merge's time less its decompression and its files' per-file cost is what its baskets
  and bytes take beyond decompression, shown per basket and per compressed MB.

Where that time is a cost per basket, the two merges give about the same figure per basket
and very different figures per MB; where it is a cost per MB, the reverse.
"""

from __future__ import annotations

import argparse
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import uproot

from hep_advisor.demo.root_writer import hadd_path


def _codecs() -> dict[bytes, Callable[[bytes, int], Any]]:
    import cramjam

    return {b"ZS": lambda c, u: cramjam.zstd.decompress(c, output_len=u),
            b"ZL": lambda c, u: cramjam.zlib.decompress(c, output_len=u),
            b"L4": lambda c, u: cramjam.lz4.decompress_block(c[8:], output_len=u),
            b"XZ": lambda c, u: cramjam.xz.decompress(c, output_len=u)}


def blocks(path: Path, tree: str) -> list[list[tuple[bytes, bytes, int]]]:
    """Each basket's compressed blocks (codec, bytes, uncompressed size) of ``path``'s tree;
    an uncompressed basket has none."""
    data = path.read_bytes()
    out = []
    with uproot.open(path) as f:
        t = f[tree]
        for b in t.branches:
            n = b.num_baskets
            for seek, nbytes in zip(b.member("fBasketSeek")[:n], b.member("fBasketBytes")[:n],
                                    strict=True):
                objlen = struct.unpack(">i", data[seek + 6:seek + 10])[0]
                keylen = struct.unpack(">h", data[seek + 14:seek + 16])[0]
                blob = data[seek + keylen:seek + nbytes]
                found: list[tuple[bytes, bytes, int]] = []
                pos = 0
                while objlen != len(blob) and pos < len(blob):
                    c = int.from_bytes(blob[pos + 3:pos + 6], "little")
                    u = int.from_bytes(blob[pos + 6:pos + 9], "little")
                    found.append((blob[pos:pos + 2], blob[pos + 9:pos + 9 + c], u))
                    pos += 9 + c
                out.append(found)
    return out


def decompression(files: list[Path], tree: str, repeats: int) -> tuple[int, float, float]:
    """Baskets, compressed MB and the median seconds to decompress them all."""
    codecs = _codecs()
    baskets = [b for f in files for b in blocks(f, tree)]
    mb = sum(len(c) + 9 for b in baskets for _, c, _ in b) / 1e6
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for b in baskets:
            for alg, c, u in b:
                codecs[alg](c, u)
        times.append(time.perf_counter() - t0)
    return len(baskets), mb, statistics.median(times)


def loop_s(files: list[Path], tree: str) -> float:
    t0 = time.perf_counter()
    for _ in uproot.iterate([{str(f): tree} for f in files], library="ak"):
        pass
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", type=Path)
    ap.add_argument("--tree", default="Events")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    files = sorted(args.dir.glob("*.root"))
    if len(files) < 2:
        sys.exit(f"{args.dir}: needs at least two ROOT files to merge")
    hadd = hadd_path()
    with tempfile.TemporaryDirectory(prefix="hep-advisor-lab-") as tmp:
        fk, opt = Path(tmp, "fk.root"), Path(tmp, "opt.root")
        for out, flags in ((fk, ["-fk"]), (opt, ["-O", "-fk"])):
            subprocess.run([hadd, *flags, str(out), *map(str, files)], check=True,
                           capture_output=True)
        layouts = {"today": files, "hadd -fk": [fk], "hadd -O -fk": [opt]}
        for name in layouts:  # once each, untimed: the page cache and uproot's imports
            loop_s(layouts[name], args.tree)
        runs: dict[str, list[float]] = {name: [] for name in layouts}
        for _ in range(args.repeats):
            for name, fs in layouts.items():
                runs[name].append(loop_s(fs, args.tree))
        dec = {name: decompression(fs, args.tree, args.repeats) for name, fs in layouts.items()}
    t = {name: statistics.median(v) for name, v in runs.items()}
    per_file = (t["today"] - t["hadd -fk"]) / (len(files) - 1)
    print(f"{args.dir}: {len(files)} files; warm uproot.iterate, {args.repeats} runs each, "
          "alternating; medians (min-max)")
    print("| layout | files | baskets | compressed MB | loop s | decompression s | "
          "beyond decompression and per-file costs: s | per basket µs | per MB ms |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, fs in layouts.items():
        n, mb, d = dec[name]
        rest = t[name] - d - len(fs) * per_file
        print(f"| {name} | {len(fs)} | {n} | {mb:.2f} | {t[name]:.3f} ({min(runs[name]):.3f}-"
              f"{max(runs[name]):.3f}) | {d:.3f} | {rest:.3f} | {rest / n * 1e6:.1f} | "
              f"{rest / mb * 1e3:.2f} |")
    print(f"per-file cost (today less hadd -fk, per file fewer): {per_file * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
