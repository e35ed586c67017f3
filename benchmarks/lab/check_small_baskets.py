"""Where the warm event loop's unexplained time goes with small baskets: per basket or per MB
(issues 57 and 58: merges of uproot-written files with a basket per branch per few hundred
entries realised 1.2-1.7x what the replay predicted, which charged that time per MB).

    python -m benchmarks.lab.check_small_baskets DIR [--tree Events] [--repeats 5]

``DIR``'s ROOT files are merged twice into a temporary directory (removed at the end; ``DIR``
is only read): ``hadd -fk`` (the baskets copied as they are: the same baskets and MB in fewer
files) and ``hadd -O -fk`` (M001's printed options: the baskets refilled, fewer and larger).
Each layout is read warm with the plain analysis (``uproot.iterate`` over every branch,
library ``ak``, uproot's default step), the layouts alternating, in this process; and each
layout's baskets are decompressed directly with uproot's own decompressors, timed apart.  Then:

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
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import uproot

from hep_advisor.demo.root_writer import hadd_path
from hep_advisor.probes.readtests.decoders import decoder, decompress_all
from hep_advisor.probes.readtests.rootblocks import (
    Block,
    basket_locations,
    parse_basket,
    split_blocks,
    stored_bytes,
)


def blocks(path: Path, tree: str) -> list[tuple[str, list[Block]]]:
    """Each basket of ``path``'s tree as (algorithm, its compression blocks), read whole from
    the file (``rootblocks``: the decompression test's own parsing); uncompressed baskets left
    out."""
    out = []
    with path.open("rb") as fh:
        for seek, nbytes in basket_locations(str(path), [tree]):
            fh.seek(seek)
            _keylen, objlen, payload = parse_basket(fh.read(nbytes))
            found = split_blocks(payload) if objlen != len(payload) else None
            if found is not None:
                out.append(found)
    return out


def decompression(files: list[Path], tree: str, repeats: int) -> tuple[int, float, float]:
    """Baskets, compressed MB and the median seconds to decompress them all with uproot's own
    decompressors (``decoders.decoder``)."""
    baskets = [b for f in files for b in blocks(f, tree)]
    mb = sum(stored_bytes(k) for _, ks in baskets for k in ks) / 1e6
    decode = {alg: decoder(alg)[0] for alg in {alg for alg, _ in baskets}}
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for alg, ks in baskets:
            decompress_all(ks, decode[alg])
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
