"""A recommendation and what it is made of: its evidence, its actions, its options, and the
rules for its severity and rank.  Plain frozen dataclasses and pure functions: the rules
(:mod:`hep_advisor.rules`) make them, everything above shows them."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

Severity = Literal["critical", "warning", "uncertain", "info"]
Audience = Literal["analyst", "site admin"]
EvidenceSource = Literal["measured", "probed", "derived", "fitted", "assumed", "threshold"]

#: Severity from the predicted speed-up and its interval (stated in every report's legend):
#: critical from 2x, warning from 1.25x, each only where the interval's low end is at least
#: 1.25x and the interval no wider than 2.5x (high / low); a gain of 1.25x or more that the
#: interval does not support is "uncertain" (the card offers what measures it); info below.
CRITICAL_SPEEDUP = 2.0
WARNING_SPEEDUP = 1.25
#: The widest interval (high / low) a critical or warning recommendation may have.
TRUSTED_WIDTH = 2.5
#: A recommendation whose predicted speed-up is below this is not shown (it does not apply).
MIN_SPEEDUP = 1.05


def severity_for(speedup: float, low: float | None = None,
                 high: float | None = None) -> Severity:
    """The severity of a predicted ``speedup`` with its interval ``low``-``high`` (``None``:
    no interval, the point alone)."""
    if speedup < WARNING_SPEEDUP:
        return "info"
    if low is not None and high is not None and (
            low < WARNING_SPEEDUP or low <= 0 or high / low > TRUSTED_WIDTH):
        return "uncertain"
    return "critical" if speedup >= CRITICAL_SPEEDUP else "warning"


def with_interval(rec: Recommendation, low: float, high: float) -> Recommendation:
    """``rec`` with another interval, its severity following it (one marked not recommended
    stays ``info``)."""
    severity = rec.severity if rec.contradicted is not None else \
        severity_for(rec.predicted_speedup, low, high)
    return replace(rec, speedup_low=low, speedup_high=high, severity=severity)


#: A critical, warning or uncertain recommendation whose interval is wider than this
#: (high / low), or any uncertain one, names the measurement that would narrow it
#: (:func:`hep_advisor.rules.narrowing.narrowing`).
WIDE_INTERVAL = TRUSTED_WIDTH
@dataclass(frozen=True)
class Evidence:
    """One figure behind a recommendation: a measured or probed value, one derived from them,
    a fitted model parameter, an assumption, or the threshold the rule compared it with."""

    name: str
    value: float | str
    unit: str = ""
    source: EvidenceSource = "measured"
    note: str | None = None


@dataclass(frozen=True)
class Action:
    """Something to do, with the command line (or code) that does it, where there is one.
    ``requires``: what the command needs to run (a tool, a library and the versions it was
    checked with), where it needs more than a POSIX shell; the ``description`` ends with the
    same label, so that every view shows it."""

    description: str
    command: str | None = None
    requires: str | None = None

    @classmethod
    def labelled(cls, description: str, command: str | None, requires: str) -> Action:
        """An action whose description ends with what its command needs."""
        return cls(f"{description} — needs {requires}", command, requires)


@dataclass(frozen=True)
class Option:
    """One of several ways to act (the ``layout`` recommendation's device layouts), each with
    its own predicted speed-up and caveat."""

    name: str
    predicted_speedup: float
    speedup_low: float
    speedup_high: float
    caveat: str | None = None


@dataclass(frozen=True)
class Recommendation:
    """One ranked recommendation.  ``predicted_speedup`` (with its interval at the model's
    level) is the model's prediction for ``scenario`` at ``workers`` against the analysis as
    it runs now (``Verdict.workers``): how much sooner the same events are read."""

    code: str
    kind: str
    title: str
    severity: Severity
    audience: Audience
    predicted_speedup: float
    speedup_low: float
    speedup_high: float
    workers: int
    scenario: str
    summary: str
    evidence: tuple[Evidence, ...] = ()
    actions: tuple[Action, ...] = ()
    assumptions: tuple[str, ...] = ()
    options: tuple[Option, ...] = ()
    dataset: str = ""
    #: where the rule's own measured evidence points the other way beyond the predicted
    #: interval: what was measured (the recommendation is then not a gain: severity
    #: ``info``, its title says "not recommended", and it ranks last)
    contradicted: str | None = None
    #: where the interval overlaps that of a recommendation ranked next to it: the order
    #: may flip from one calibration to the next
    rank_note: str | None = None


def contradicted(rec: Recommendation, measured: str) -> Recommendation:
    """``rec`` turned into "not recommended" by its own measured evidence (``measured``
    says what was measured and against which predicted interval)."""
    return replace(rec, severity="info", contradicted=measured,
                   title=f"Not recommended: {rec.title[:1].lower()}{rec.title[1:]}",
                   summary=f"Not a gain here: {measured}. The model alone said: {rec.summary}")


def rank_key(rec: Recommendation) -> tuple[bool, float, str]:
    """Recommendations rank by predicted speed-up, those contradicted by their evidence last."""
    return (rec.contradicted is not None, -rec.predicted_speedup, rec.code)


def with_rank_notes(recs: tuple[Recommendation, ...]) -> tuple[Recommendation, ...]:
    """``recs`` (ranked) with a note on each whose interval overlaps that of one ranked just
    above or below it: within the intervals, the two may swap places in another run."""
    out = list(recs)
    shown = [r for r in recs if r.contradicted is None]
    for k, r in enumerate(shown):
        near = [o for o in shown[max(k - 1, 0):k + 2] if o is not r
                and o.speedup_low <= r.speedup_high and r.speedup_low <= o.speedup_high]
        if near:
            names = ", ".join(f"{o.code} ({o.speedup_low:.2f}–{o.speedup_high:.2f}x)"
                              for o in near)
            note = (f"its interval ({r.speedup_low:.2f}–{r.speedup_high:.2f}x) overlaps "
                    f"{names}: the ranking may flip from one run to the next")
            out[recs.index(r)] = replace(r, rank_note=note)
    return tuple(out)
