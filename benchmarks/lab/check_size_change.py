"""C001's size change: the calibration's recompressed sample against every basket recompressed.

    python -m benchmarks.lab.check_size_change DATA_DIR [DATA_DIR ...] [--share 1.5,3]
        [--tree Events] [--candidates ZSTD,LZ4,ZLIB] [--out FILE.json]

For each dataset, the decompression test
(:func:`hep_advisor.probes.readtests.decompress.measure_decompression`, the calibration's own, at
each ``--share`` seconds) gives each candidate's size change (its stored bytes over the dataset's on
the sampled baskets) with its standard error; then every basket of every file is read, decompressed
and recompressed with the candidate by uproot's writer (the same
:func:`hep_advisor.probes.readtests.recompress.recompress`): the size change of the whole dataset,
which the sample estimates.  ``hadd -O -f<setting>`` writes about this too, give or take its
refilled baskets (``python -m benchmarks.lab.check_hadd_layout --setting N`` measures that).
Reads the files only; no lock needed (nothing is timed but the calibration's own test).
Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from hep_advisor.probes.readtests.decompress import measure_decompression
from hep_advisor.probes.readtests.recompress import basket_payloads, recompress
from hep_advisor.probes.readtests.rootblocks import collect_baskets
from hep_advisor.probes.readtests.runner import Session


def whole(files: list[str], tree: str, candidates: list[str]) -> dict[str, Any]:
    """Every basket of ``files`` recompressed with each candidate (from the dataset's main
    algorithm: the pool holding the most bytes)."""
    sample = collect_baskets(files, [tree], sample_bytes=1 << 40, scan_bytes=1 << 40)
    pool = max(sample.pools.values(), key=lambda p: p.compressed_bytes)
    payloads = basket_payloads(pool, 1 << 40)
    out: dict[str, Any] = {"algorithm": pool.algorithm, "baskets": len(payloads)}
    for alg in candidates:
        if alg == pool.algorithm:
            continue
        r = recompress(payloads, alg)
        out[alg] = r.stored_bytes / r.dataset_bytes
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--share", default="1.5,3")
    ap.add_argument("--tree", default="Events")
    ap.add_argument("--candidates", default="ZSTD,LZ4,ZLIB")
    ap.add_argument("--out")
    args = ap.parse_args()
    cands = args.candidates.split(",")
    shares = [float(x) for x in args.share.split(",")]
    rows: list[dict[str, Any]] = []
    print("| dataset | from | candidate | test share (s) | sampled baskets | sample's change "
          "(± 1 s.e.) | every basket | sample / every |")
    print("|---|---|---|---|---|---|---|---|")
    for d in args.dirs:
        files = sorted(str(p) for p in Path(d).glob("*.root"))
        if not files:
            print(f"{d}: no .root files", file=sys.stderr)
            continue
        truth = whole(files, args.tree, cands)
        for share in shares:
            points = measure_decompression(Session(600), files, share_s=share,
                                           tree_names=[args.tree], candidates=cands)
            for p in points:
                if p.source != "recompressed" or not p.compression_factor \
                        or not p.dataset_factor or p.algorithm not in truth:
                    continue
                change = p.dataset_factor / p.compression_factor
                sd = p.size_change_sd
                row = {"dataset": Path(d).name, "from": truth["algorithm"],
                       "candidate": p.algorithm, "share_s": share, "baskets": p.baskets,
                       "sample": change, "sd": sd, "every": truth[p.algorithm],
                       "every_baskets": truth["baskets"]}
                rows.append(row)
                err = f" ± {100 * sd:.1f}%" if sd is not None else ""
                print(f"| {row['dataset']} | {row['from']} | {p.algorithm} | {share:g} | "
                      f"{p.baskets} of {truth['baskets']} | {change:.3f}{err} | "
                      f"{truth[p.algorithm]:.3f} | {change / truth[p.algorithm]:.3f} |")
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
