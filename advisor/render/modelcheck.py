"""The model check as the views show it: how many of the points the calibration measured the
engine passes through (the replay of the program's reader where it gives the advice's figures,
``model.self_check``; else the fitted rate model), and, ranked by consequence, the misses that
matter.

A miss matters where the term it tests carries at least :data:`CONSEQUENCE` (10%) of the time
of a recommendation shown for the same dataset, before or after the change: there the miss
moves the predicted speed-up; elsewhere it moves a figure no recommendation rests on.

What carries a term's time:

* **before**: the verdict's shares (``Verdict.shares``, the engine's split of the time now at
  the analysis' worker count), summed over the limits the term describes
  (:data:`TERM_LIMITS`);
* **after**: each limit's share of the shorter time after the change, taken as its share now
  times the predicted speed-up (a limit the change leaves alone keeps its seconds, so its share
  of a time ``speed-up`` times shorter grows by that much), the storage's also times the
  measured growth of the bytes where the recommendation's evidence has one ("size change",
  C001); each capped at 100%.  For the limits the change shrinks this is an upper bound: the
  check may warn where the change removes the term, never stay silent where it keeps it.

The parallel event loop's points test the cores' parallel efficiency, and the replay's
concurrency points of two readers or more test how workers share the device: they touch only
a recommendation run at more workers than one (or an analysis that runs so now).  The
replay's one-reader concurrency point tests the device's single stream: the storage's time
of every recommendation.

Plain strings and dataclasses (no Rich): the terminal, Markdown and HTML views and
``hep-advisor explain model-check`` say the same thing in the same words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from hep_advisor.findings.advice import Advice, Report
from hep_advisor.findings.recommendation import Recommendation
from hep_advisor.models.selfcheck import CAUSES, SelfCheck
from hep_advisor.render import fmt

#: A miss is worth a warning where its term carries at least this share of a shown
#: recommendation's time, before or after the change.
CONSEQUENCE = 0.10

#: How the views say the rule (under the details of the check).
RULE_TEXT = (f"A miss warns only where its term carries at least {100 * CONSEQUENCE:.0f}% of a "
             "shown recommendation's time: now (the verdict's shares) or after the change "
             "(those shares times the predicted speed-up, an upper bound).")

_ALL = ("storage", "network", "decompression", "processing", "per-file overhead")
#: The verdict's limits each read test's points describe (by the start of the point's label,
#: as :data:`hep_advisor.models.selfcheck.TERMS`).
TERM_LIMITS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("replay, event loop, cold", ("storage", "decompression", "processing",
                                  "per-file overhead")),
    ("replay, parallel event loop", ("decompression", "processing", "per-file overhead")),
    ("replay, ROOT loop", ("storage", "decompression", "processing", "per-file overhead")),
    ("replay, concurrency", ("storage",)),
    ("cold sequential", ("storage", "network")),
    ("concurrency", ("storage", "network")),
    ("random", ("storage", "network")),
    ("page cache", ("storage",)),
    ("decompression", ("decompression",)),
    ("unpacking", ("processing",)),
    ("event loop, cold", ("storage", "network", "decompression", "processing")),
    ("event loop, warm", ("decompression", "processing", "per-file overhead")),
    ("event loop per MB", ("decompression", "processing")),
    ("parallel event loop", ("decompression", "processing", "per-file overhead")),
)


def limits_of(test: str) -> tuple[str, ...]:
    """The verdict's limits whose time the points of read test ``test`` describe (all of them
    for a test not named in :data:`TERM_LIMITS`)."""
    for prefix, limits in TERM_LIMITS:
        if test.startswith(prefix):
            return limits
    return _ALL


_BYTES = re.compile(r"\b(\d+) B\b")


def point_label(test: str) -> str:
    """A read test's point as a person names it: ``random 1048576 B`` -> ``random reads of
    1 MiB``, ``concurrency 4`` -> ``4 concurrent readers``."""
    m = re.fullmatch(r"random (\d+) B", test)
    if m:
        return f"random reads of {fmt.byte_size(int(m[1]))}"
    m = re.fullmatch(r"concurrency (\d+)", test)
    if m:
        return f"{m[1]} concurrent readers"
    m = re.fullmatch(r"replay, concurrency (\d+)", test)
    if m:
        n = int(m[1])
        return (f"the replay: {n} concurrent reader{'s' if n != 1 else ''}, cold "
                "(1 MiB reads)")
    if test == "replay, event loop, cold":
        return "the replay: your reader's event loop, cold"
    m = re.fullmatch(r"replay, ROOT loop (with|without) TTreeCache, cold", test)
    if m:
        return f"the replay: ROOT's loop {m[1]} TTreeCache, cold"
    m = re.fullmatch(r"(replay, )?parallel event loop (\d+)", test)
    if m:
        n = int(m[2])
        line = f"event loop, {n} worker{'s' if n != 1 else ''} in parallel"
        return f"the replay: {line} (warm)" if m[1] else line
    if test == "cold sequential":
        return "cold sequential reads"
    if test == "page cache":
        return "reads from the page cache"
    return _BYTES.sub(lambda b: fmt.byte_size(int(b[1])), test)


def describe(check: SelfCheck) -> str:
    """One line: the point, predicted against measured, and the term that disagrees."""
    way = "over" if check.ratio > 1 else "under"
    head = (f"{point_label(check.test)}: predicted {fmt.sig(check.predicted)} MB/s, measured "
            f"{fmt.sig(check.measured)} MB/s ({check.ratio:.2f}x, {way}-predicted; tolerance "
            f"±{100 * check.tolerance:.0f}%)")
    if check.cause == CAUSES[2]:
        same = ", ".join(point_label(t) for t in check.same_as)
        return (f"{head}: the calibration measured the same configuration differently "
                f"({same}); the {check.term} term cannot pass through both")
    return f"{head}: the {check.term} term disagrees"


@dataclass(frozen=True)
class Consequence:
    """How much of one recommendation's time a missed term carries (shares of 1)."""

    code: str
    dataset: str
    before: float
    after: float

    @property
    def share(self) -> float:
        return max(self.before, self.after)

    @property
    def when(self) -> str:
        return "after the change" if self.after > self.before else "now"


@dataclass(frozen=True)
class Miss:
    """A point the model misses, with the recommendations of its dataset whose time its term
    carries (``touches``: those at :data:`CONSEQUENCE` or more; ``largest``: the largest
    share, whatever its size, ``None`` without a shown recommendation)."""

    dataset: str
    check: SelfCheck
    touches: tuple[Consequence, ...]
    largest: Consequence | None

    @property
    def line(self) -> str:
        return describe(self.check)


@dataclass(frozen=True)
class ModelCheck:
    """Every dataset's points: how many were checked and passed, and the misses, those that
    touch a shown recommendation first (the largest share first)."""

    checked: int
    within: int
    misses: tuple[Miss, ...]

    @property
    def warnings(self) -> tuple[Miss, ...]:
        return tuple(m for m in self.misses if m.touches)


def _growth(rec: Recommendation) -> float:
    """The bytes' growth the recommendation measured (C001's size change), else 1."""
    for e in rec.evidence:
        if e.name == "size change" and e.unit == "%" and isinstance(e.value, (int, float)):
            return max(1.0, 1 + float(e.value) / 100)
    return 1.0


def consequence(advice: Advice, check: SelfCheck, rec: Recommendation) -> Consequence:
    """The share of ``rec``'s time before and after its change that ``check``'s term carries
    (see the module's notes)."""
    v = advice.verdict
    limits = set(limits_of(check.test))
    if v is None:
        return Consequence(rec.code, advice.label, 1.0, 1.0)
    parallel = check.test.startswith(("parallel event loop", "replay, parallel event loop")) \
        or (check.test.startswith("replay, concurrency") and
            check.conditions.get("workers", 1.0) > 1)
    if parallel and rec.workers <= 1 and v.workers <= 1:
        return Consequence(rec.code, advice.label, 0.0, 0.0)
    speedup = max(rec.predicted_speedup, 1.0)
    growth = _growth(rec)
    before = after = 0.0
    for s in v.shares:
        if s.limit not in limits:
            continue
        before += s.share
        grows = growth if s.limit in ("storage", "network") else 1.0
        after += min(1.0, s.share * speedup * grows)
    return Consequence(rec.code, advice.label, min(before, 1.0), min(after, 1.0))


def shown(advice: Advice) -> tuple[Recommendation, ...]:
    """The recommendations a view shows as something to do (not those marked not
    recommended)."""
    return tuple(r for r in advice.recommendations if r.contradicted is None)


def model_check(advice: Sequence[Advice]) -> ModelCheck:
    checked = within = 0
    misses: list[Miss] = []
    for a in advice:
        checks = a.model.self_check if a.model is not None else ()
        checked += len(checks)
        within += sum(1 for c in checks if c.ok)
        for c in checks:
            if c.ok:
                continue
            cons = [consequence(a, c, r) for r in shown(a)]
            touches = tuple(sorted((x for x in cons if x.share >= CONSEQUENCE),
                                   key=lambda x: -x.share))
            largest = max(cons, key=lambda x: x.share, default=None)
            misses.append(Miss(a.label, c, touches, largest))
    misses.sort(key=lambda m: (-(m.largest.share if m.largest else 0.0),
                               -max(m.check.ratio, 1 / m.check.ratio)))
    return ModelCheck(checked, within, tuple(misses))


def report_check(report: Report) -> ModelCheck:
    return model_check(report.advice)


def header_line(mc: ModelCheck) -> str:
    """The one line every view prints: points checked, within tolerance, and whether a miss
    touches a recommendation (its term carries :data:`CONSEQUENCE` of the time)."""
    if not mc.checked:
        return "model check: no measured point to check (no fitted model)"
    head = f"model check: {mc.within} of {mc.checked} points within tolerance"
    n = len(mc.misses)
    if not n:
        return head
    if not mc.warnings:
        return f"{head}; no miss touches a recommendation"
    return f"{head}; {len(mc.warnings)} of {n} misses touch one:"


#: The short views' warning lines at most (the rest: ``explain model-check``).
WARNINGS_SHOWN = 2


def warning_lines(mc: ModelCheck, datasets: int = 1,
                  limit: int | None = WARNINGS_SHOWN) -> list[str]:
    """One line per miss that touches a shown recommendation (its term carries
    :data:`CONSEQUENCE` of the recommendation's time before or after its change), naming those
    recommendations; at most ``limit`` lines, then how many more (``None``: every one)."""
    out: list[str] = []
    for m in mc.warnings:
        by_dataset: dict[str, list[str]] = {}
        for t in m.touches:
            codes = by_dataset.setdefault(t.dataset, [])
            if t.code not in codes:
                codes.append(t.code)
        names = "; ".join(", ".join(codes) + (f" ({d})" if datasets > 1 else "")
                          for d, codes in by_dataset.items())
        out.append(f"{point_label(m.check.test)} missed ({m.check.ratio:.2f}x): {names}")
    if limit is not None and len(out) > limit:
        rest = len(out) - limit
        out = [*out[:limit], f"and {rest} more miss{'es' if rest > 1 else ''} "
                             "(hep-advisor explain model-check)"]
    return out


def miss_consequence(m: Miss) -> str:
    """What one miss touches, for ``explain model-check``."""
    if m.touches:
        return "touches " + ", ".join(f"{t.code} ({100 * t.share:.0f}% of its time {t.when})"
                                      for t in m.touches)
    if m.largest is None:
        return "touches no recommendation (none shown for this dataset)"
    t = m.largest
    return (f"touches no recommendation: its term carries at most {100 * t.share:.0f}% of "
            f"{t.code}'s time ({t.when}), under {fmt.percent(CONSEQUENCE)}")
