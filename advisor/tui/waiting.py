"""What the Overview says while the advice is on its way: the step under way and how long
until the advice, from what is measured (Textual-free, so it is tested without an app).

The time left is the read tests' own: each ``ProgressEvent.left_s`` is the calibration's
budget actually left (the read tests' session measures it); between events it counts down
with the clock, and each event sets it right again (a second calibration, such as the
cluster's after the local one, starts it anew).  Before the first read test (the probe, or a
cached calibration being reused) no number is given: only the budget, which bounds it.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["Countdown"]


class Countdown:
    """The time until the read tests end; ``budget_s`` is the calibration's budget, when known."""

    def __init__(self, budget_s: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.budget_s = budget_s
        self.clock = clock
        self.started = clock()
        self.end: float | None = None  # when the read tests' budget runs out (clock's time)

    def update(self, left_s: float | None) -> None:
        """A read test's ``ProgressEvent.left_s`` (``None``: the probe's, which has none)."""
        if left_s is not None:
            self.end = self.clock() + max(0.0, left_s)

    def left(self) -> float | None:
        """Seconds of the read tests' budget left now (``None`` before the first read test)."""
        return None if self.end is None else max(0.0, self.end - self.clock())

    def elapsed(self) -> float:
        return self.clock() - self.started

    def text(self) -> str:
        """One sentence: when the advice comes."""
        left = self.left()
        budget = f"{self.budget_s:g} s " if self.budget_s else ""
        if left is None:
            within = f", within the {budget}budget" if budget else ""
            return f"The advice comes when the read tests end{within}."
        if left >= 1:
            return (f"The advice in about {left:.0f} s: what is left of the {budget}"
                    "calibration budget, then the model is fitted.")
        return ("The calibration budget is spent: the advice comes once the read test under "
                "way stops and the model is fitted.")
