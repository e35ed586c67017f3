"""Child processes of the parallel read tests: started as a fresh process would run, and
always ended, whatever happened.

The tests fork (where the platform can), so a child inherits the advisor's heap: the probe's
results, basket maps, earlier tests' objects.  Python's collector in the child would walk all
of it at every full collection, and touching each object's header copies its page (copy on
write): measured here, a one-worker job forked after a 30 s calibration read 0.57-0.86 of
what the same job read from a fresh process, and 0.85-1.05 with the inherited heap frozen
(``benchmarks/check_fork_heap.py``).  A user's worker is a fresh process, so the inherited
objects are frozen (``gc.freeze``: moved to a generation the collector never walks) while the
children start, and unfrozen in the parent after.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Sequence
from typing import Any


def start_processes(procs: Sequence[Any]) -> None:
    """Start ``procs`` (``multiprocessing`` processes) with the parent's heap frozen, so that a
    forked child's collector walks only its own objects, as in a fresh process."""
    gc.freeze()
    try:
        for p in procs:
            p.start()
    finally:
        gc.unfreeze()


def end_processes(procs: Iterable[Any], grace_s: float = 5.0) -> None:
    """Terminate, then kill, every process still alive, and reap them all."""
    for p in procs:
        if p.is_alive():
            p.terminate()
            p.join(timeout=grace_s)
        if p.is_alive():  # pragma: no cover - a child that ignores SIGTERM
            p.kill()
            p.join(timeout=grace_s)
