"""Benchmark: the cluster probe and model on a LocalCluster of throttled emulated disks.

Targets (issue 14): on 2 and 4 worker processes, each standing for a node, with separate
emulated disks (one per worker) and with one shared disk: the per-node figures (each worker's
cold sequential rate alone) within 10% of the set rate, and the aggregate the model predicts
from the probe within 15% of the aggregate measured with 1 to N workers reading at once.

    sudo python -m benchmarks.validation.bench_cluster [--workers 2 4] [--modes separate shared]
                                            [--rate 50] [--json FILE]

Root, cgroup v1 blkio and loop devices (``python -m testbench --check``) and ``distributed``
(the ``dask`` extra) are needed; run it from the repository root.  The model sees only the
probe (each worker alone, then all of them at once); the 1..N sweep that it is compared with
is measured afterwards, with the same concurrent test, and is not given to it.  ``--modes
mixed`` makes the nodes heterogeneous: separate disks, every other one at 0.6 x the rate;
``slow``: separate disks, the last one at 0.4 x the rate (a slow node).  Each run also lists
the cluster advice (``hep_advisor.pipeline.cluster_calibration.cluster_advice``: D001-D003) drawn
from the probe.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from hep_advisor.models.cluster_model import ClusterModel
from hep_advisor.pipeline.cluster_calibration import cluster_advice
from hep_advisor.probes.cluster_probe import concurrent_read, list_workers, probe_cluster
from testbench.cluster import emulated_cluster

MIXED_SLOW = 0.6
SLOW_NODE = 0.4


def run_one(workers: int, mode: str, rate: float, samples: int) -> dict[str, Any]:
    t0 = time.perf_counter()
    rates: float | list[float] = rate
    if mode == "mixed":  # separate disks, every other one slower: heterogeneous nodes
        rates = [rate if i % 2 == 0 else round(MIXED_SLOW * rate, 1) for i in range(workers)]
    elif mode == "slow":  # separate disks, the last one slow
        rates = [rate] * (workers - 1) + [round(SLOW_NODE * rate, 1)]
    disks = "shared" if mode == "shared" else "separate"
    with emulated_cluster(workers, disks, rates) as ec:  # type: ignore[arg-type]
        set_rates = ec.worker_mb_per_s
        profile = probe_cluster(ec.client, ec.files, group_by="worker", samples=samples,
                                before_read=ec.bench.reset_throttle)
        model = ClusterModel.from_profile(profile)
        advice = cluster_advice(profile)
        infos = list_workers(ec.client)
        node_of = {w.address: f"{w.host}/{w.name}" for w in infos}
        per_node = [(n.name, n.calibration.worker_mb_per_s if n.calibration else None, r)
                    for n, r in zip(profile.nodes, set_rates, strict=True)]
        sweep = []
        for k in range(1, workers + 1):
            measured = concurrent_read(ec.client, infos[:k], ec.files, node_of,
                                       samples=samples, before_sample=ec.bench.reset_throttle)
            pred = model.predict(k, 1)
            sweep.append({
                "workers": k, "measured_mb_per_s": measured.aggregate_mb_per_s,
                "measured_samples": measured.measurement.samples if measured.measurement
                else None,
                "predicted_mb_per_s": pred.aggregate_mb_per_s, "low": pred.low,
                "high": pred.high, "limited_by": pred.limited_by,
            })
    p = model.parameters
    return {
        "workers": workers, "mode": mode, "set_mb_per_s": set_rates,
        "per_node": per_node,
        "shared_measured_mb_per_s": profile.shared_storage.aggregate_mb_per_s
        if profile.shared_storage else None,
        "shared_capacity_mb_per_s": p.shared_capacity_mb_per_s,
        "advice": [f"{r.code} {r.title} ({r.predicted_speedup:.2f}x, "
                   f"{r.speedup_low:.2f}-{r.speedup_high:.2f})" for r in advice.recommendations],
        "saturates_at_nodes": advice.saturates_at_nodes,
        "probe_s": profile.elapsed_s, "total_s": time.perf_counter() - t0,
        "sweep": sweep,
    }


def table(results: list[dict[str, Any]]) -> str:
    lines = ["| workers | disks | per-node MB/s (set) | worst per-node | k | measured | "
             "predicted | error | limited by |", "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        pairs = [(x, want) for _, x, want in r["per_node"] if x is not None]
        worst = max((x / want - 1 for x, want in pairs), key=abs) if pairs else float("nan")
        head = (f"| {r['workers']} | {r['mode']} | "
                f"{', '.join(f'{x:.1f} ({want:g})' for x, want in pairs)} | "
                f"{100 * worst:+.1f}% |")
        for i, s in enumerate(r["sweep"]):
            m, pr = s["measured_mb_per_s"], s["predicted_mb_per_s"]
            err = f"{100 * (pr / m - 1):+.1f}%" if m else "n/a"
            prefix = head if i == 0 else "| | | | |"
            lines.append(f"{prefix} {s['workers']} | {m:.1f} | {pr:.1f} | {err} | "
                         f"{s['limited_by']} |" if m else f"{prefix} {s['workers']} | n/a | "
                         f"{pr:.1f} | n/a | {s['limited_by']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--modes", nargs="+", default=["separate", "shared"],
                    choices=["separate", "shared", "mixed", "slow"],
                    help="mixed: separate disks, every other one at 0.6 x the rate; slow: "
                    "separate disks, the last at 0.4 x")
    ap.add_argument("--rate", type=float, default=50.0, help="MB/s of each emulated disk")
    ap.add_argument("--samples", type=int, default=2)
    ap.add_argument("--json", type=Path, help="write the results here")
    args = ap.parse_args(argv)
    results = []
    for n in args.workers:
        for mode in args.modes:
            r = run_one(n, mode, args.rate, args.samples)
            results.append(r)
            print(f"{n} workers, {mode}: probe {r['probe_s']:.1f} s, total {r['total_s']:.1f} s",
                  flush=True)
            for line in r["advice"] or ["no cluster advice"]:
                print(f"  {line}", flush=True)
    print(table(results))
    ok_nodes = all(x is not None and abs(x / want - 1) <= 0.10 for r in results
                   for _, x, want in r["per_node"])
    ok_agg = all(s["measured_mb_per_s"] and abs(s["predicted_mb_per_s"]
                                                / s["measured_mb_per_s"] - 1) <= 0.15
                 for r in results for s in r["sweep"])
    print(f"per-node within 10%: {ok_nodes}; aggregate within 15%: {ok_agg}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0 if ok_nodes and ok_agg else 1


if __name__ == "__main__":
    raise SystemExit(main())
