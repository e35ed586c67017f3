"""Predict `rootreadspeed`'s throughput at 1 and 2 threads from a calibration alone, then run it.

    python -m benchmarks.validation.predict_rootreadspeed [--file F] [--tree T] [--budget 20]
        [--repeat 5]

Issue 4: "With the `root` extra: predict rootreadspeed's throughput at 1 and 2 threads from the
calibration alone, then run it, and report both."  The calibration runs with `--engine root`
(ROOT's own event loop sets the processing rate), the model is fitted to it, and predicts the
configuration rootreadspeed runs: every branch read, decompressed and unpacked by ROOT, the
file in the page cache (rootreadspeed is run once first to warm it), 1 and 2 workers (threads)
and one file opened.  rootreadspeed's own byte counts and real time give its compressed MB/s.
"""

from __future__ import annotations

import argparse
import statistics

from benchmarks.timing.bench_root_engine import rootreadspeed_binary, run_rootreadspeed


def main() -> int:
    from hep_advisor.demo import ensure_demo

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--file", default=None, help="default: the demo's flat ZLIB-1 file")
    ap.add_argument("--tree", default="pythia")
    ap.add_argument("--budget", type=float, default=20.0)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    path = args.file or str(ensure_demo() / "flat" / "pythia_zlib1.root")

    from hep_advisor.models.calibrated import calibrated_baseline
    from hep_advisor.models.physics import config_matrix
    from hep_advisor.probes import probe_dataset, probe_site
    from hep_advisor.probes.readtests.calibrate import calibrate

    ds = probe_dataset([path])
    site = probe_site([path])
    cal = calibrate(ds, budget_s=args.budget, workers=(1, 2), engine="root")
    model, baseline = calibrated_baseline(cal, ds, site)
    tree = ds.trees[0]
    rows = [{**baseline.config, "workers": float(k), "cached": 1.0,
             "file_mb": tree.compressed_bytes / 1e6} for k in (1, 2)]
    pred, low, high = model.predict_interval(config_matrix(rows), level=0.9)

    binary = rootreadspeed_binary()
    run_rootreadspeed(binary, path, args.tree, 1)  # warm the page cache
    print(f"file {path}: {tree.entries:,} entries, {tree.compressed_bytes / 1e6:.1f} MB "
          f"compressed, {tree.branches} branches; calibration {cal.elapsed_s:.1f} s "
          f"(engine root)")
    print(f"{'threads':>7} {'predicted MB/s':>15} {'90% interval':>16} "
          f"{'rootreadspeed MB/s':>19} {'range':>15} {'error':>7}")
    errors = []
    for k, p, lo, hi in zip((1, 2), pred, low, high, strict=True):
        runs = [run_rootreadspeed(binary, path, args.tree, k) for _ in range(args.repeat)]
        rates = [r["compressed_bytes"] / r["real_s"] / 1e6 for r in runs]
        med = statistics.median(rates)
        errors.append(p / med - 1)
        print(f"{k:>7} {p:15.1f} {lo:7.1f}-{hi:<8.1f} {med:19.1f} "
              f"{min(rates):6.1f}-{max(rates):<8.1f} {100 * errors[-1]:+6.1f}%")
    print(f"mean absolute error {100 * statistics.mean(abs(e) for e in errors):.1f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
