"""The knee of a predicted scaling curve: one definition for the worker-count recommendation
(W001) and for every view that shows the curve (the report, the TUI).

Dependency-free on purpose: the TUI imports it before any model library is loaded.
"""

from __future__ import annotations

from collections.abc import Iterable

#: The knee: the fewest workers that reach this fraction of the best predicted rate.
KNEE_FRACTION = 0.90


def knee(points: Iterable[tuple[int, float]]) -> int:
    """The fewest workers whose predicted rate reaches ``KNEE_FRACTION`` of the best, from
    ``(workers, rate)`` pairs (at least one)."""
    pts = list(points)
    best = max(r for _, r in pts)
    return min(w for w, r in pts if r >= KNEE_FRACTION * best)
