"""A forked worker's rate against a fresh process's: what the advisor's own heap costs a child.

    python -m benchmarks.lab.check_fork_heap DATA_DIR [DATA_DIR ...] [--budget 30] [--files 3]
        [--rounds 2] [--repeats 3]

For each dataset (a directory of ROOT files), one worker reads the first ``--files`` files,
warm, every branch (``hep_advisor.probes.readtests.parallel.measure_job``, the function behind the
calibration's parallel loop), the median MB/s of ``--repeats`` runs:

- ``fresh``: from a new Python process that imported only what the job needs;
- after a calibration of the dataset in this process
(``hep_advisor.pipeline.advise.calibrate_paths`` with
  ``--budget``; its own one-worker parallel loop is printed as ``calibration``), alternately
  ``frozen`` (the parent's heap frozen while the worker forks: what the read tests do) and
  ``inherited`` (started plainly, as before that: the worker's collector walks the parent's
  objects).

Nothing is written; the timed part takes ``/tmp/hep-bench.lock``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.common import REPO


def _job(files: Sequence[str], tree: str, repeats: int) -> Any:
    from hep_advisor.probes.readtests.parallel import measure_job

    return measure_job(list(files), tree, 1, repeats=repeats, cold=False)[1]


def _plain_start(procs: Sequence[Any]) -> None:
    for p in procs:
        p.start()


def _fresh(files: Sequence[str], tree: str, repeats: int) -> dict[str, Any]:
    """The job in a new process (``--fresh``), its result as JSON."""
    out = subprocess.run([sys.executable, "-m", "benchmarks.lab.check_fork_heap", "--fresh", tree,
                          str(repeats), *files], capture_output=True, text=True, check=True,
                         cwd=REPO)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def _fmt(median: float, samples: Sequence[float]) -> str:
    return f"{median:.1f} ({', '.join(f'{x:.1f}' for x in samples)})"


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--fresh":
        tree, repeats, files = sys.argv[2], int(sys.argv[3]), sys.argv[4:]
        m = _job(files, tree, repeats)
        print(json.dumps({"median": m.median, "samples": list(m.samples)}))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="+", help="directories of ROOT files, one per dataset")
    ap.add_argument("--budget", type=float, default=30.0, help="the calibration's (s)")
    ap.add_argument("--files", type=int, default=3, help="files the job reads (default 3)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()

    import gc
    from unittest import mock

    from benchmarks.lab.check_loop_refault import locked_datasets, tree_of
    from hep_advisor.pipeline.advise import calibrate_paths
    from hep_advisor.probes.readtests import parallel

    print("| dataset | fresh | calibration's 1 worker | frozen | inherited | objects |\n"
          "|---|---|---|---|---|---|")
    for d, files in locked_datasets(args.data):
        tree = tree_of(Path(files[0]))
        job_files = files[:args.files]
        fresh = _fresh(job_files, tree, args.repeats)
        cal = calibrate_paths(files, budget_s=args.budget).calibration
        one = next((p for p in cal.parallel_loop if p.workers == 1), None)
        frozen: list[str] = []
        inherited: list[str] = []
        for _ in range(args.rounds):
            m = _job(job_files, tree, args.repeats)
            frozen.append(_fmt(m.median or 0, m.samples))
            with mock.patch.object(parallel, "start_processes", _plain_start):
                m = _job(job_files, tree, args.repeats)
            inherited.append(_fmt(m.median or 0, m.samples))
        own = f"{one.aggregate_mb_per_s:.1f}" if one and one.aggregate_mb_per_s else "—"
        print(f"| {d.name} | {_fmt(fresh['median'], fresh['samples'])} | {own} | "
              f"{'; '.join(frozen)} | {'; '.join(inherited)} | {len(gc.get_objects()):,} |",
              flush=True)
        del cal
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
