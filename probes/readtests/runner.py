"""Budget, repetition, progress and cancellation shared by every read test.

One :class:`Session` per calibration holds the time budget, the cancel flag and the progress
callback.  The budget is split between the tests by weight (what the model needs most); time a
test leaves unused flows to the tests after it.  Each test repeats its sample until the spread is
small or its share is spent.

Progress is one protocol for every skin: a callable taking :class:`ProgressEvent` (the terminal
draws Rich bars from it, the TUI posts messages, a notebook may print).  Cancellation is a
``threading.Event`` (set it from another thread, or press Ctrl-C): tests check it between
samples and raise :class:`Cancelled`, and the calibration keeps what was measured, marked
partial.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .results import Conditions, Measurement

#: Relative spread ((p75 - p25) / median) under which a test stops repeating.
STABLE_SPREAD = 0.05
MIN_SAMPLES = 3
MAX_SAMPLES = 25

#: How the budget is shared when every test runs (renormalised over the tests that do run).
WEIGHTS = {
    "raw_read": 0.12,
    "request_sweep": 0.16,
    "concurrency": 0.16,
    "open_cost": 0.06,
    "decompression": 0.10,
    "event_loop": 0.22,
    "call_cost": 0.07,
    "basket_cost": 0.03,
    "parallel_loop": 0.07,
    "page_cache": 0.04,
}


class Cancelled(Exception):
    """The calibration was cancelled; what was measured so far is kept."""


@dataclass(frozen=True)
class ProgressEvent:
    """One step of one test.  ``fraction`` is the test's progress (0..1); ``figure`` a figure
    just measured, as text, for skins that show figures as they appear."""

    test: str
    fraction: float
    message: str
    figure: str | None = None


ProgressCallback = Callable[[ProgressEvent], None]


def spread(samples: list[float] | tuple[float, ...]) -> float | None:
    """(p75 - p25) / median; for two samples |a - b| / mean; ``None`` for fewer."""
    a = np.asarray(samples, dtype=float)
    if len(a) < 2:
        return None
    med = float(np.median(a))
    if med == 0:
        return None
    if len(a) == 2:
        return float(abs(a[0] - a[1]) / med)
    q75, q25 = np.percentile(a, [75, 25])
    return float((q75 - q25) / med)


def measurement(samples: list[float], unit: str, conditions: Conditions) -> Measurement:
    return Measurement(
        unit=unit,
        samples=tuple(float(x) for x in samples),
        median=float(np.median(samples)) if samples else None,
        spread=spread(samples),
        conditions=conditions,
    )


class Session:
    """The shared state of one calibration run."""

    def __init__(
        self,
        budget_s: float,
        tests: list[str] | None = None,
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.budget_s = float(budget_s)
        self.clock = clock
        self.start = clock()
        self.progress_cb = progress
        self.cancel_event = cancel or threading.Event()
        self.pending = list(tests if tests is not None else WEIGHTS)
        self.bytes_read = 0

    # -- time ------------------------------------------------------------------------------
    def elapsed(self) -> float:
        return self.clock() - self.start

    def remaining(self) -> float:
        return max(0.0, self.budget_s - self.elapsed())

    def begin(self, test: str) -> float:
        """Start ``test``; return its share of the remaining budget, in seconds."""
        weights = {t: WEIGHTS.get(t, 0.1) for t in self.pending}
        total = sum(weights.values()) or 1.0
        share = self.remaining() * weights.get(test, 0.1) / total
        if test in self.pending:
            self.pending.remove(test)
        return share

    # -- control ---------------------------------------------------------------------------
    def check(self) -> None:
        if self.cancel_event.is_set():
            raise Cancelled()

    def cancel(self) -> None:
        self.cancel_event.set()

    def report(self, test: str, fraction: float, message: str, figure: str | None = None) -> None:
        if self.progress_cb is not None:
            self.progress_cb(ProgressEvent(test, min(max(fraction, 0.0), 1.0), message, figure))

    def repeat(
        self,
        sample: Callable[[], float],
        share_s: float,
        test: str,
        message: str,
        min_samples: int = MIN_SAMPLES,
        max_samples: int = MAX_SAMPLES,
        tolerance: float = STABLE_SPREAD,
    ) -> list[float]:
        """Call ``sample`` until the spread is within ``tolerance`` (after ``min_samples``), or
        ``share_s`` seconds are spent, or ``max_samples`` are taken; at least once."""
        t0 = self.clock()
        out: list[float] = []
        while True:
            self.check()
            out.append(float(sample()))
            spent = self.clock() - t0
            self.report(test, min(1.0, spent / share_s) if share_s > 0 else 1.0, message)
            if len(out) >= max_samples:
                break
            if len(out) >= min_samples:
                s = spread(out)
                if s is not None and s <= tolerance:
                    break
            per_sample = spent / len(out)
            if spent + per_sample > share_s:
                break
        return out
