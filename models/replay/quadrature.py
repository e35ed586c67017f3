"""A 90% interval from inputs moved one at a time: each input's replays at its ends, the shifts
of the log of the figure added in quadrature (independent inputs, to first order), upward and
downward apart.  The replays, the rewrites, W001 and L001 take their intervals from here."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence


def quadrature(point: float, effects: Iterable[Sequence[float]]) -> tuple[float, float]:
    """(low, high) around ``point``: ``effects`` holds, per input, the figure at each of that
    input's ends (the others at their points)."""
    ups, downs = [], []
    for values in effects:
        if not values:
            continue
        ups.append(max(max(math.log(v / point) for v in values), 0.0))
        downs.append(max(max(math.log(point / v) for v in values), 0.0))
    return (point * math.exp(-math.sqrt(sum(d * d for d in downs))),
            point * math.exp(math.sqrt(sum(u * u for u in ups))))


__all__ = ["quadrature"]
