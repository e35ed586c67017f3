"""``try`` on a sample against the full application: is the trial's realised speed-up the one a
user gets after ``apply``?

    python -m benchmarks.validation.bench_try [--dir DIR] [--budget 10] [--sample-mb N]
                                   [--calibration-budget 20] [--pairs 5] [--full-budget 60]
                                   [--only NAME,...] [--json FILE]

Datasets (written with uproot into a temporary directory unless ``--dir``; none is the demo):

- ``flat_small``: 300 files x 1,500 entries of a flat 24-branch tree (ZLIB-1): per-file costs.
- ``jagged_small``: 160 files x 400 events of 40 branches, half of them jagged: per-file costs.
- ``tiny_baskets``: 8 files x 60,000 entries, 16 branches, written 250 entries per extend():
  tiny baskets.
- ``lzma``: 16 files x 100,000 entries, 16 branches, LZMA-9: decompression-bound.
- ``root_jagged``: 200 files x 2,000 events written by ROOT (its own basket buffers and
  AutoFlush, ZLIB-1), 6 event branches and a jagged 5-field collection: per-file costs.

For each: ``advise()`` (a calibration of ``--calibration-budget`` seconds, no cache), the top
file recommendation among M001/R001/C001 tried with ``--budget`` seconds (``try``), then the
same recommendation applied to all the files (``apply``, verified) and the whole dataset read
before and after the way ``try`` times its sample (``hep_advisor.pipeline.trial_run.alternate``: a
warm-up read, cold reads in alternating order, a read shorter than 1 s repeated within its pass; at
least ``--pairs`` passes within ``--full-budget`` seconds; the speed-up is the ratio of the
medians).  Printed: predicted [interval], the trial's sample and
realised speed-up, the full application's, and their difference.  Everything is written in
temporary directories and removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np


def _values(rng: np.random.Generator, n: int, kind: int) -> np.ndarray:
    if kind % 3 == 0:
        return np.round(rng.normal(50, 10, n), 1).astype(np.float32)
    if kind % 3 == 1:
        return rng.integers(0, 8, n).astype(np.int32)
    return np.round(rng.exponential(5, n), 2).astype(np.float32)


def write_flat(path: Path, entries: int, branches: int, per_extend: int,
               compression: Any = None, seed: int = 0) -> None:
    import uproot

    rng = np.random.default_rng(seed)
    with uproot.recreate(path, compression=compression) as f:
        types = {f"v{i}": (np.float32 if i % 3 != 1 else np.int32) for i in range(branches)}
        f.mktree("tree", types)
        for start in range(0, entries, per_extend):
            k = min(per_extend, entries - start)
            f["tree"].extend({f"v{i}": _values(rng, k, i) for i in range(branches)})


def write_jagged(path: Path, entries: int, branches: int, seed: int = 0) -> None:
    import awkward as ak
    import uproot

    rng = np.random.default_rng(seed)
    counts = rng.poisson(6, entries)
    data: dict[str, Any] = {}
    for i in range(branches):
        if i % 2:
            data[f"obj_v{i}"] = ak.unflatten(_values(rng, int(counts.sum()), i), counts)
        else:
            data[f"ev_v{i}"] = _values(rng, entries, i)
    with uproot.recreate(path) as f:
        f.mktree("events", {k: v.dtype if isinstance(v, np.ndarray) else v.type
                             for k, v in data.items()})
        f["events"].extend(data)


def write_root_jagged(path: Path, entries: int, seed: int = 0) -> None:
    """Events written by ROOT itself (its default basket buffers and AutoFlush, ZLIB-1 here):
    6 event-level branches and a jagged ``jet`` collection of 5 fields."""
    from hep_advisor.demo.root_writer import write_tree
    from hep_advisor.demo.spec import FLOAT, INT, Chunk, Collection, TreeSpec

    rng = np.random.default_rng(seed)
    fields = (("pt", FLOAT), ("eta", FLOAT), ("phi", FLOAT), ("m", FLOAT), ("flag", INT))
    spec = TreeSpec("events", (("run", INT), ("met", FLOAT), ("ht", FLOAT), ("w", FLOAT),
                               ("nvtx", INT), ("trig", INT)),
                    (Collection("jet", 5.0, fields),))
    counts = rng.poisson(5.0, entries).astype(np.int32)
    items = int(counts.sum())
    scalars = {n: _values(rng, entries, i) for i, (n, _) in enumerate(spec.scalars)}
    jets = {f: _values(rng, items, i).astype(np.int32 if t == INT else np.float32)
            for i, (f, t) in enumerate(fields)}
    write_tree(str(path), spec, [Chunk(entries, scalars, {"jet": (counts, jets)})], "ZLIB", 1)


def make(root: Path, name: str) -> Path:
    import uproot

    d = root / name
    d.mkdir(parents=True)
    if name == "flat_small":
        for i in range(300):
            write_flat(d / f"run_{i:04d}.root", 1500, 24, 1500, seed=i)
    elif name == "jagged_small":
        for i in range(160):
            write_jagged(d / f"ev_{i:04d}.root", 400, 40, seed=i)
    elif name == "tiny_baskets":
        for i in range(8):
            write_flat(d / f"part_{i}.root", 60_000, 16, 250, seed=i)
    elif name == "root_jagged":
        for i in range(200):
            write_root_jagged(d / f"ntuple_{i:04d}.root", 2000, seed=i)
    elif name == "lzma":
        for i in range(16):
            write_flat(d / f"lz_{i}.root", 100_000, 16, 50_000, uproot.LZMA(9), seed=i)
    else:
        raise SystemExit(f"unknown dataset {name}")
    return d


#: The recommendation each dataset was made to trigger (tried when it is recommended).
EXPECTED = {"flat_small": "M001", "jagged_small": "M001", "tiny_baskets": "R001", "lzma": "C001",
            "root_jagged": "M001"}


def read_pairs(before: list[str], after: list[str], tree: str, args: argparse.Namespace,
               reader: Any = None) -> tuple[float, float, int, int, int, list[float],
                                            list[float]]:
    """The full dataset before and after, timed the way ``try`` times its sample
    (``hep_advisor.pipeline.trial_run.alternate``), with the same reader (the one the advice is
    for: named, or uproot's default, assumed): median seconds before and after, pairs, reads
    per phase before and after."""
    from hep_advisor.pipeline.trial_run import alternate

    p = alternate(before, after, tree, budget_s=args.full_budget, min_pairs=args.pairs,
                  reader=reader)
    return (statistics.median(r.seconds for r in p.before),
            statistics.median(r.seconds for r in p.after), len(p.before),
            p.repeats_before, p.repeats_after,
            [round(r.seconds, 4) for r in p.before], [round(r.seconds, 4) for r in p.after])


def bench(root: Path, name: str, args: argparse.Namespace) -> dict[str, Any]:
    from hep_advisor.pipeline.advise import advise
    from hep_advisor.pipeline.apply import apply_plan, make_plan
    from hep_advisor.pipeline.trial import try_recommendation
    from hep_advisor.rules.registry import tryable

    data = make(root, name)
    mb = sum(p.stat().st_size for p in data.iterdir()) / 1e6
    t0 = time.perf_counter()
    advice = advise([str(data)], budget_s=args.calibration_budget, cache=False)
    recs = sorted((r for r in advice.recommendations if r.code in tryable()),
                  key=lambda r: r.code != EXPECTED[name])  # the one the dataset was made for
    row: dict[str, Any] = {"dataset": name, "writer": "ROOT" if name.startswith("root") else
                           "uproot", "files": len(list(data.iterdir())), "mb": round(mb, 1),
                           "advise_s": round(time.perf_counter() - t0, 1),
                           "recommendations": [r.code for r in advice.recommendations]}
    if not recs:
        row["miss"] = "no M001/R001/C001 recommended"
        return row
    rec = recs[0]
    t0 = time.perf_counter()
    trial = try_recommendation(advice, rec.code, budget_s=args.budget,
                               sample_mb=args.sample_mb, scratch=str(root / "scratch"),
                               store=False)
    row.update(code=rec.code, predicted=rec.predicted_speedup, low=rec.speedup_low,
               high=rec.speedup_high, try_s=round(time.perf_counter() - t0, 1),
               sample_files=trial.sample.files, sample_mb=round(trial.sample.bytes / 1e6, 2),
               sample_predicted=trial.sample_predicted_speedup,
               sample_fraction=round(trial.sample.bytes / 1e6 / mb, 3),
               try_realised=trial.realised_speedup, try_notes=list(trial.notes),
               refit_predicted=trial.refit_predicted_speedup,
               refit_low=trial.refit_speedup_low, refit_high=trial.refit_speedup_high)
    target = next((float(e.value) for e in rec.evidence if e.name == "target size"), None)
    alg = rec.title.split("with ")[1].split()[0] if rec.code == "C001" else "ZSTD"
    dest = root / f"{name}_applied"
    t0 = time.perf_counter()
    plan = make_plan(rec.code, [str(data)], dest, target_mb=target,
                     optimize="hadd -O" in rec.scenario, algorithm=alg)
    result = apply_plan(plan)
    row["apply_s"] = round(time.perf_counter() - t0, 1)
    tree = max(advice.dataset.trees, key=lambda t: t.compressed_bytes).name
    ins = sorted(str(p) for p in data.iterdir())
    outs = [o.path for o in result.outputs]
    t_full = time.perf_counter()
    tb, ta, n, rb, ra, sb, sa = read_pairs(ins, outs, tree, args, advice.options.reader)
    row["reader"] = advice.reader.spec if advice.reader is not None else None
    row.update(full_s=round(time.perf_counter() - t_full, 1), full_samples=[sb, sa],
               try_samples=[list(trial.before.samples_s), list(trial.after.samples_s)],
               load=[round(x, 2) for x in os.getloadavg()])
    row.update(full_before_s=round(tb, 3), full_after_s=round(ta, 3), full_pairs=n,
               full_repeats=[rb, ra], full_outputs=len(outs), full_realised=round(tb / ta, 3),
               try_before_s=trial.before.seconds, try_after_s=trial.after.seconds,
               try_pairs=len(trial.before.samples_s))
    row["diff_pct"] = round(100 * (row["try_realised"] / row["full_realised"] - 1), 1)
    shutil.rmtree(dest, ignore_errors=True)
    return row


def _refit(r: dict[str, Any]) -> str:
    if r.get("refit_predicted") is None:
        return "-"
    return f"{r['refit_predicted']:.2f} [{r['refit_low']:.2f}-{r['refit_high']:.2f}]"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", default=None, help="work directory (default: a temporary one)")
    ap.add_argument("--budget", type=float, default=10.0, help="try's budget (s)")
    ap.add_argument("--calibration-budget", type=float, default=20.0)
    ap.add_argument("--sample-mb", type=float, default=None,
                    help="try's sample size (default: sized to --budget, which can be the "
                    "whole dataset)")
    ap.add_argument("--pairs", type=int, default=5,
                    help="at least this many alternating passes over the full dataset")
    ap.add_argument("--full-budget", type=float, default=60.0,
                    help="time for the full dataset's passes (s; at least --pairs are run)")
    ap.add_argument("--only", default=None)
    ap.add_argument("--json", default=None, help="also write the rows to this file")
    args = ap.parse_args()
    names = args.only.split(",") if args.only else ["flat_small", "jagged_small",
                                                    "tiny_baskets", "lzma", "root_jagged"]
    base = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="bench-try-"))
    rows = []
    try:
        for name in names:
            try:
                row = bench(base, name, args)
            except Exception as exc:  # a dataset that fails is a row that says so
                row = {"dataset": name, "mb": 0, "miss": f"{type(exc).__name__}: {exc}"}
            rows.append(row)
            print(json.dumps(row), flush=True)
            shutil.rmtree(base / name, ignore_errors=True)
    finally:
        if not args.dir:
            shutil.rmtree(base, ignore_errors=True)
    print("\n| dataset | writer | MB | code | predicted [interval] | try sample | try s before/"
          "after (pairs) | try | full s before/after (pairs) | full | try vs full | refitted |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "code" not in r or "diff_pct" not in r:
            print(f"| {r['dataset']} | | {r['mb']} | - | {r.get('miss')} | | | | | | | |")
            continue
        ok = "within 15%" if abs(r["diff_pct"]) <= 15 else "MISS"
        print(f"| {r['dataset']} | {r['writer']} | {r['mb']} | {r['code']} | "
              f"{r['predicted']:.2f} [{r['low']:.2f}-{r['high']:.2f}] | {r['sample_files']} "
              f"files, {r['sample_mb']} MB ({100 * r['sample_fraction']:.0f}%) | "
              f"{r['try_before_s']:.2f}/{r['try_after_s']:.3f} ({r['try_pairs']}) | "
              f"{r['try_realised']:.2f} | {r['full_before_s']:.2f}/{r['full_after_s']:.3f} "
              f"({r['full_pairs']}) | {r['full_realised']:.2f} | {r['diff_pct']:+.1f}% {ok} | "
              f"{_refit(r)} |")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    os.sync()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
