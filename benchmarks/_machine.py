"""How much CPU the shared machine gives at a moment: printed beside the benchmarks' timings,
so that a run made while the machine was slow can be told from a miss of the model."""

from __future__ import annotations

import subprocess
import sys

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
