"""What the benchmarks share: the repository's paths, the machine's pace printed beside a
timing, and a dataset copied onto a fresh emulated slow disk.

Every script runs as a module from the repository's root (``python -m
benchmarks.validation.bench_advice_true ...``), so the root is on ``sys.path`` and
``hep_advisor``, ``testbench`` and ``benchmarks`` import from there: no script edits
``sys.path``.  A child process that imports them runs with ``cwd=REPO`` (or
``env=child_env()``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

#: The repository's root (the folder that holds ``benchmarks/``).
REPO = Path(__file__).resolve().parents[1]
#: Where benchmarks keep what they write between runs (git-ignored; ruff leaves it out).
WORK = REPO / "benchmarks" / "_work"


def child_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a child ``python -c`` that imports ``benchmarks``, ``testbench`` or
    ``hep_advisor`` from this checkout: ``PYTHONPATH`` starts with the repository's root."""
    base = dict(os.environ if env is None else env)
    rest = base.get("PYTHONPATH")
    base["PYTHONPATH"] = str(REPO) + (os.pathsep + rest if rest else "")
    return base


# -- the machine's pace -------------------------------------------------------------------------
# How much CPU the shared machine gives at a moment: printed beside the benchmarks' timings, so
# that a run made while the machine was slow can be told from a miss of the model.

#: The fixed pure-Python loop timed (about 0.5 s on one core of the development machine).
SPIN = "s=0\nfor i in range(6_000_000): s += i"


def machine_check() -> dict[str, float]:
    """The same pure-Python loop in one process, then in two at once.  ``one_s``: the one
    process' seconds (a relative figure of speed); ``cores``: how many of those loops' worth
    run at once (2 x one's time / the pair's), near 2 on an idle 2-core machine.  A pass whose
    check differs from the calibration's moment explains a CPU-bound miss."""
    argv = [sys.executable, "-c", "import time\nt = time.perf_counter()\n"
            f"c = time.process_time()\n{SPIN}\n"
            "print(time.perf_counter() - t, time.process_time() - c)"]
    one, one_cpu = map(float, subprocess.run(argv, capture_output=True, text=True,
                                             check=True).stdout.split())
    pair = [subprocess.Popen(argv, stdout=subprocess.PIPE, text=True) for _ in range(2)]
    two = max(float(p.communicate()[0].split()[0]) for p in pair)
    return {"one_s": round(one, 3), "one_cpu_s": round(one_cpu, 3), "two_s": round(two, 3),
            "cores": round(2 * one / two, 2)}


def machine_line(when: str) -> str:
    """``machine_check`` as one printed line: ``machine WHEN: one loop 0.25 s (CPU 0.25 s),
    1.95 cores' worth``.  The loop's CPU time below its wall time is time the process was
    ready and not run: other processes, or the hypervisor's other guests (steal)."""
    m = machine_check()
    return (f"  machine {when}: one loop {m['one_s']:.2f} s (CPU {m['one_cpu_s']:.2f} s), "
            f"{m['cores']:.2f} cores' worth")


# -- a dataset on a fresh emulated slow disk ----------------------------------------------------
# 70 MB/s, 120 IOPS (loop device, ext4 and cgroup-v1 throttle from ``testbench``), for the lab
# scripts that time the user's kind of read on it.  The copy and the disk are removed at the
# end; the source is only read.


@contextmanager
def slow_copy(data: Path, **disk: Any) -> Iterator[tuple[Any, Path, list[Path]]]:
    """``with slow_copy(DATA_DIR) as (bench, copy, files):`` the emulated disk, the dataset's
    directory on it and its ROOT files (sorted).  ``disk``: more arguments for
    ``testbench.emulated_disks``.  Exits with a one-line message where emulated disks cannot
    run here (not root, no cgroup v1 blkio) or the directory holds no ROOT file."""
    from testbench import availability, emulated_disks

    ok, why = availability()
    if not ok:
        raise SystemExit(f"emulated disks unavailable: {why}")
    src = sorted(data.glob("*.root"))
    if not src:
        raise SystemExit(f"{data}: no ROOT files")
    mb = sum(p.stat().st_size for p in src) / 1e6
    with emulated_disks(n=1, size_mb=int(2.5 * mb) + 64, read_mb_per_s=70.0, read_iops=120,
                        **disk) as bench:
        copy = Path(bench.mount_point) / data.name
        shutil.copytree(data, copy)
        os.sync()
        yield bench, copy, sorted(copy.glob("*.root"))
