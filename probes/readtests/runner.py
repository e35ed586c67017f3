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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .registry import MIN_S, WEIGHTS
from .results import Conditions, Measurement, Skipped

if TYPE_CHECKING:
    from ..results import DatasetProfile, TreeProfile

#: Relative spread ((p75 - p25) / median) under which a test stops repeating.
STABLE_SPREAD = 0.05
MIN_SAMPLES = 3
MAX_SAMPLES = 25

# How the budget is shared when every test runs (renormalised over the tests that do run):
# ``WEIGHTS`` beyond the minimums ``MIN_S``, from the registry of the read tests.


class Cancelled(Exception):
    """The calibration was cancelled; what was measured so far is kept."""


class OutOfTime(Exception):
    """A read test cannot make even its smallest useful measurement in the time it has left:
    it is listed in ``Calibration.skipped`` with this reason, and the tests after it keep
    their time."""


@dataclass(frozen=True)
class ProgressEvent:
    """One step of one test.  ``fraction`` is the test's progress (0..1); ``figure`` a figure
    just measured, as text, for skins that show figures as they appear; ``left_s`` the time
    left of the budget."""

    test: str
    fraction: float
    message: str
    figure: str | None = None
    #: seconds of the calibration's budget actually left (``None`` where not known)
    left_s: float | None = None


ProgressCallback = Callable[[ProgressEvent], None]


@dataclass
class Context:
    """What every read test's step (``step(ctx, share_s)``, see :mod:`.registry`) is given:
    the session, the dataset and the files drawn from it, its largest tree, the engine and
    the user's choices; ``results`` holds what the tests before returned (by test name),
    ``fields`` further :class:`~probes.readtests.results.Calibration` fields a step sets
    beside its own (``unpacking``, ``root_cache_on``), ``skipped`` the reasons of what was
    left out."""

    session: Session
    dataset: DatasetProfile
    files: list[str]
    tree: TreeProfile
    engine: str = "uproot"
    workers: tuple[int, ...] = (1,)
    branches: tuple[str, ...] | None = None
    analysis: Any = None
    skipped: list[Skipped] = field(default_factory=list)
    results: dict[str, Any] = field(default_factory=dict)
    fields: dict[str, Any] = field(default_factory=dict)
    #: values the steps share (the raw tests' file list, sorted by size)
    scratch: dict[str, Any] = field(default_factory=dict)


def tolerance(budget_s: float) -> float:
    """How far past its budget a calibration may end: 5% of it, at least 1 s."""
    return max(0.05 * budget_s, 1.0)


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


def measurement(samples: list[float], unit: str, conditions: Conditions,
                parts: Sequence[float] = ()) -> Measurement:
    """``parts``: the rates of the samples' equal stretches of time, where timed (see
    ``Measurement.part_spread``)."""
    return Measurement(
        unit=unit,
        samples=tuple(float(x) for x in samples),
        median=float(np.median(samples)) if samples else None,
        spread=spread(samples),
        conditions=conditions,
        part_spread=spread(list(parts)) if len(parts) >= 3 else None,
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
        #: when the test under way should end (its share from ``begin``)
        self.deadline = self.start + self.budget_s
        #: past this, ``check`` stops the test under way (:class:`OutOfTime`): the budget, and
        #: half the calibration's tolerance (5% of the budget, at least 1 s)
        self.hard_end = self.start + self.budget_s + 0.5 * tolerance(self.budget_s)

    # -- time ------------------------------------------------------------------------------
    def elapsed(self) -> float:
        return self.clock() - self.start

    def remaining(self) -> float:
        return max(0.0, self.budget_s - self.elapsed())

    def begin(self, test: str) -> float:
        """Start ``test``; return its share of the remaining budget, in seconds (and set the
        ``deadline`` it should end by): its minimum (``MIN_S``), and its weight's part of
        what is left beyond the minimums of the tests still to run."""
        pending = {*self.pending, test}
        weights = {t: WEIGHTS.get(t, 0.1) for t in pending}
        total = sum(weights.values()) or 1.0
        spare = max(0.0, self.remaining() - sum(MIN_S.get(t, 0.0) for t in pending))
        share = min(self.remaining(), MIN_S.get(test, 0.0) + spare * weights[test] / total)
        if test in self.pending:
            self.pending.remove(test)
        self.deadline = self.clock() + share
        return share

    def reserved(self) -> float:
        """Seconds the tests still to run need at least (their minimums)."""
        return sum(MIN_S.get(t, 0.0) for t in self.pending)

    def spare(self) -> float:
        """Seconds of the budget left beyond the minimums of the tests still to run: what the
        test under way may take beyond its share without taking the next tests' time."""
        return max(0.0, self.remaining() - self.reserved())

    def extend(self, share_s: float) -> None:
        """Give the test under way ``share_s`` seconds from now (more than its share)."""
        self.deadline = self.clock() + share_s

    def left(self, deadline: float | None = None) -> float:
        """Seconds left to ``deadline`` (default: the test's, from ``begin``)."""
        return max(0.0, (self.deadline if deadline is None else deadline) - self.clock())

    def need(self, seconds: float, what: str, deadline: float | None = None) -> None:
        """Raise :class:`OutOfTime` unless ``seconds`` fit before ``deadline`` (default: the
        test's)."""
        left = self.left(deadline)
        if seconds > left:
            raise OutOfTime(f"no time for {what}: about {seconds:.2g} s needed, "
                            f"{left:.2g} s left of its share of the budget")

    # -- control ---------------------------------------------------------------------------
    def check(self) -> None:
        """Raise :class:`Cancelled` when cancelled, :class:`OutOfTime` past the budget."""
        if self.cancel_event.is_set():
            raise Cancelled()
        if self.clock() > self.hard_end:
            raise OutOfTime("the calibration's budget ran out")

    def cancel(self) -> None:
        self.cancel_event.set()

    def report(self, test: str, fraction: float, message: str, figure: str | None = None) -> None:
        if self.progress_cb is not None:
            self.progress_cb(ProgressEvent(test, min(max(fraction, 0.0), 1.0), message, figure,
                                           left_s=self.remaining()))

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
