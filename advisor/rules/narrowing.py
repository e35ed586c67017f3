"""What would narrow a wide interval: ``hep-advisor try CODE`` where the rule's change can be
made on a sample, else the one run of the analysis that measures it (the rule's record)."""

from __future__ import annotations

from dataclasses import replace

from hep_advisor.findings.recommendation import (
    WARNING_SPEEDUP,
    WIDE_INTERVAL,
    Evidence,
    Recommendation,
)
from hep_advisor.rules.rule import Rule

#: What measures a change whose rule has no record.
DEFAULT_MEASURE = "time the analysis once with the change applied"


def narrowing(r: Rule | None, severity: str, low: float, high: float) -> Evidence | None:
    """What would narrow a critical or warning recommendation's interval wider than
    :data:`WIDE_INTERVAL`, or measure an uncertain one (``r``: its rule's record); ``None``
    for a narrower one, or for ``info``."""
    if severity == "info" or low <= 0 or (
            severity != "uncertain" and high <= WIDE_INTERVAL * low):
        return None
    if r is not None and r.tryable:
        how = f"hep-advisor try {r.code}"
        what = ("it applies the change to a sample of the data, times the same cold read "
                "before and after, and refits the model with the two points")
    else:
        how = f"{r.measure if r is not None else DEFAULT_MEASURE}, cold"
        what = "beside a cold run without it, that run measures the speed-up itself"
    return Evidence("what would narrow the interval", how, "", "derived",
                    f"{_why(low, high)} (the calibration's spread and the assumptions "
                    f"listed): {what}")


def _why(low: float, high: float) -> str:
    if high > WIDE_INTERVAL * low:
        return f"{low:.2f}-{high:.2f}x is wider than {WIDE_INTERVAL:g}x"
    return f"{low:.2f}-{high:.2f}x reaches below {WARNING_SPEEDUP:g}x"


def with_narrowing(rec: Recommendation, r: Rule | None) -> Recommendation:
    """``rec`` with :func:`narrowing`'s evidence where its interval calls for it and it has
    none (the rules built outside ``Context.make``: remote, cluster; ``r``: its record)."""
    wide = narrowing(r, rec.severity, rec.speedup_low, rec.speedup_high)
    if wide is None or any(e.name == wide.name for e in rec.evidence):
        return rec
    return replace(rec, evidence=(*rec.evidence, wide))
