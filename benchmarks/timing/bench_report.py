"""Report generation on already-calibrated data: how long does it take?

    python -m benchmarks.timing.bench_report [--repeats 5]

Calibrates the demo datasets once if the cache does not hold them yet, then times, in one
process (as a notebook or the TUI would run it):
  * ``demo_report()`` with the cached calibrations (site probe, cache lookups, three model
    fits, verdicts, recommendations) and rendering it as text, Markdown, JSON and HTML;
  * the same for one dataset (``advise(small_files)``);
and, as separate processes, the whole ``hep-advisor report --format json`` command (Python's
start-up and imports included).

Target (issue 5): report generation on an already-calibrated dataset under 1 s.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import subprocess
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()

    from rich.console import Console

    from hep_advisor.demo import demo_report, ensure_demo
    from hep_advisor.pipeline.advise import advise
    from hep_advisor.render.advice_view import advice_view
    from hep_advisor.render.html import report_html
    from hep_advisor.render.markdown import report_markdown

    demo = ensure_demo()
    t0 = time.perf_counter()
    demo_report()  # calibrates what the cache lacks
    print(f"warm-up (calibrations as needed): {time.perf_counter() - t0:.1f} s")

    def render(report: object) -> None:
        Console(file=io.StringIO(), width=100).print(advice_view(report))  # type: ignore[arg-type]
        report_markdown(report)  # type: ignore[arg-type]
        json.dumps(report.to_json())  # type: ignore[attr-defined]
        report_html(report)  # type: ignore[arg-type]

    rows = []
    for label, make in (("demo report (3 datasets)", demo_report),
                        ("one dataset (small files)",
                         lambda: advise([str(demo / "small_files")]).report())):
        times = []
        for _ in range(args.repeats):
            t = time.perf_counter()
            render(make())
            times.append(time.perf_counter() - t)
        rows.append((label + ", in process", times))
    times = []
    for _ in range(args.repeats):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "hep_advisor", "report", "--format", "json"],
                       check=True, capture_output=True)
        times.append(time.perf_counter() - t)
    rows.append(("`hep-advisor report --format json` (whole process)", times))
    print("\n| what | median | min-max |\n|---|---|---|")
    for label, ts in rows:
        print(f"| {label} | {statistics.median(ts):.2f} s | {min(ts):.2f}-{max(ts):.2f} s |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
