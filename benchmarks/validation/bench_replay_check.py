"""The replay's self-check (issue 58) on held-out runs already made: each saved report of a
``bench_advice_true`` run advised again with this working tree's code, and every configuration
its calibration measured that the engine replays, against the measurement.

    python -m benchmarks.validation.bench_replay_check A.json B.json ... [--out FILE.json]

``A.json``: a ``bench_advice_true --out`` file; its reports (``NAME_DISK[_PROGRAM]_report.json``)
are read from beside it and the datasets' files from ``/tmp/validate/data`` (the basket maps;
``benchmarks.validation.advice_true_data`` writes them again).  Nothing is run or timed: the
checks compare the replay with measurements the calibration made then.

The points (``hep_advisor.models.replay.engine``): the program's reader cold over the whole job
(``replay, event loop, cold``), the warm parallel event loop's speed-up over one worker
(``replay, parallel event loop N``), and the concurrency sweep's aggregate cold MB/s of N
readers through the replay's device as the workers share it (``replay, concurrency N``).  Each
passes within 15% or two of its measurement's standard deviations, where wider.

Printed: one line per report (points within tolerance, each miss with its ratio and term), then
the totals per kind of point.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from benchmarks.validation.bench_advice_true import advise_saved


def kind(test: str) -> str:
    """A point's kind: its test without the worker count."""
    return re.sub(r" \d+$", "", test)


def checks_of(results: list[dict[str, Any]], where: Path) -> list[dict[str, Any]]:
    out = []
    for res in results:
        advice = advise_saved(res, where)
        if advice is None:
            continue
        checks = advice.model.self_check if advice.model is not None else ()
        out.append({"dataset": res["dataset"], "disk": res["disk"],
                    "program": res.get("program", "uproot"),
                    "engine": advice.model.engine if advice.model is not None else None,
                    "checks": [{"test": c.test, "ratio": c.ratio, "tolerance": c.tolerance,
                                "ok": c.ok, "measured": c.measured, "predicted": c.predicted,
                                "term": c.term} for c in checks]})
    return out


def summary(rows: list[dict[str, Any]]) -> None:
    per: dict[str, list[bool]] = defaultdict(list)
    for r in rows:
        checks = r["checks"]
        ok = sum(c["ok"] for c in checks)
        print(f"{r['dataset']} {r['disk']} {r['program']}: {ok} of {len(checks)} within "
              f"tolerance (engine: {r['engine']})")
        for c in checks:
            per[kind(c["test"])].append(c["ok"])
            if not c["ok"]:
                print(f"   miss {c['test']}: {c['ratio']:.2f}x (tolerance "
                      f"±{100 * c['tolerance']:.0f}%): {c['term']}")
    print("\n| point | within tolerance |\n|---|---|")
    for k, oks in per.items():
        print(f"| {k} | {sum(oks)} of {len(oks)} |")
    everything = [o for oks in per.values() for o in oks]
    reports = sum(all(c["ok"] for c in r["checks"]) for r in rows)
    print(f"| all points | {sum(everything)} of {len(everything)} |\n"
          f"| reports with every point within | {reports} of {len(rows)} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path, help="bench_advice_true --out files")
    ap.add_argument("--out", type=Path, help="write the points as JSON")
    args = ap.parse_args()
    rows = []
    for path in args.runs:
        results = json.loads(path.read_text())
        rows += checks_of(results if isinstance(results, list) else [results], path.parent)
    if not rows:
        print("no saved report found beside the runs given", file=sys.stderr)
        return 1
    summary(rows)
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
