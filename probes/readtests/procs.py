"""Child processes of the parallel read tests: always ended, whatever happened."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def end_processes(procs: Iterable[Any], grace_s: float = 5.0) -> None:
    """Terminate, then kill, every process still alive, and reap them all."""
    for p in procs:
        if p.is_alive():
            p.terminate()
            p.join(timeout=grace_s)
        if p.is_alive():  # pragma: no cover - a child that ignores SIGTERM
            p.kill()
            p.join(timeout=grace_s)
