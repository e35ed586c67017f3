"""The intervals of the local recommendations, widened by this machine's run-to-run spread.

A rule's interval is the model's: how far the prediction moves within the parameters'
uncertainty.  What the user measures is one run before the change and one after, and on a
machine whose CPU speed moves from run to run that ratio scatters even where the model is right
(a pure-Python loop on the shared development machine took 0.53-1.03 s from one minute to the
next).  :func:`with_run_spread` adds the calibration's measured CPU spread
(:func:`hep_advisor.models.runspread.cpu_run_spread`), scaled by the CPU's share of each run's time
(the run after a change that removes I/O is mostly CPU:
:func:`hep_advisor.models.runspread.ratio_sd`), to each side of every interval (and of each
option's) in quadrature, at the model's level, and says so in an evidence row that also keeps the
model's own interval; a critical or warning interval widened past 3x then names what would narrow
it.  Where the calibration repeated no CPU-bound work often enough to tell, the row says that
nothing measured the spread.

The replay's own error, measured on held-out data (:data:`hep_advisor.models.runspread.
REPLAY_ERROR_SD`: how far realised speed-ups fell from the points on data no one had tuned on),
is added in quadrature too, with a row of its own: the inputs' spreads say how far the
prediction moves with what the calibration measured, not how far the engine's form is off.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from statistics import NormalDist
from typing import TypeVar

from hep_advisor.findings.recommendation import Evidence, Option, Recommendation, with_interval
from hep_advisor.models.runspread import (
    REPLAY_ERROR_FROM,
    REPLAY_ERROR_SD,
    RunSpread,
    cpu_run_spread,
    ratio_sd,
    widened,
)
from hep_advisor.rules.context import Context
from hep_advisor.rules.registry import narrowed

#: The evidence rows' names.
ROW = "this machine's run-to-run spread"
ERROR_ROW = "the engine's error on held-out data"
#: The limits whose time is I/O (the rest is CPU).
_IO_LIMITS = ("storage", "network")
#: What carries a predicted speed-up and its interval.
_Ranged = TypeVar("_Ranged", Recommendation, Option)


def cpu_share(ctx: Context) -> tuple[float, str]:
    """The CPU's share of the analysis' time, and where it comes from: the program's reader
    replayed (``--reader``), else the verdict's shares of the fitted model."""
    rb = ctx.reader_baseline
    if rb is not None and rb.cpu_s + rb.io_s > 0:
        return rb.cpu_s / (rb.cpu_s + rb.io_s), "the program's reader replayed"
    io = sum(s.share for s in ctx.verdict.shares if s.limit in _IO_LIMITS)
    return max(0.0, 1.0 - io), "the fitted model's shares"


def _row(spread: RunSpread | None, share: float, share_from: str, half: float,
         rec: Recommendation, level: float) -> Evidence:
    after = min(1.0, share * max(0.0, rec.predicted_speedup))
    if spread is None:
        return Evidence(ROW, "not measured", "", "assumed",
                        "no CPU-bound read test repeated often enough to tell: the interval "
                        "holds the model's uncertainty only, and a run before and after the "
                        "change may land outside it where the machine's speed moves")
    return Evidence(
        ROW, round(100 * half, 1), "%", "measured",
        f"± of a realised speed-up (one run before, one after) at {level:.0%}: one run's CPU "
        f"rate scattered by {100 * spread.sd:.1f}% (1σ, robust: {_parts(spread)}) over "
        f"{spread.samples} samples of {spread.measurements} repeated measurements "
        f"({', '.join(spread.names)}); the CPU "
        f"takes {100 * share:.0f}% of the time now ({share_from}) and about "
        f"{100 * after:.0f}% after (its CPU time taken as kept); added to the model's interval "
        f"({rec.speedup_low:.2f}–{rec.speedup_high:.2f}x) in quadrature. Measured over seconds: "
        "a machine whose speed drifts over minutes scatters more")


def _parts(spread: RunSpread) -> str:
    """Where the spread comes from: the kernels' pooled figure and the warm loop's own."""
    parts = []
    if spread.kernel_sd is not None:
        parts.append(f"the CPU kernels {100 * spread.kernel_sd:.1f}%")
    if spread.loop_sd is not None:
        parts.append(f"the warm event loop {100 * spread.loop_sd:.1f}%")
    return ", ".join(parts) + (", the larger taken" if len(parts) > 1 else "")


def with_run_spread(ctx: Context, recs: Sequence[Recommendation]) -> list[Recommendation]:
    """``recs`` with their intervals widened by the measured run-to-run spread, each with the
    evidence row that says by how much (see the module docstring)."""
    spread = cpu_run_spread(ctx.calibration)
    share, share_from = cpu_share(ctx)
    z = NormalDist().inv_cdf(0.5 + ctx.level / 2)

    def run(x: Recommendation | Option) -> float:
        return ratio_sd(spread, share, x.predicted_speedup) if spread is not None else 0.0

    def sd(x: Recommendation | Option) -> float:
        return math.hypot(run(x), REPLAY_ERROR_SD)

    err = Evidence(ERROR_ROW, round(100 * (math.exp(z * REPLAY_ERROR_SD) - 1), 1), "%",
                   "measured", f"± at {ctx.level:.0%} ({100 * REPLAY_ERROR_SD:.1f}% one sigma): "
                   f"{REPLAY_ERROR_FROM}; added to the interval in quadrature")
    out = []
    for rec in recs:
        row = _row(spread, share, share_from, z * run(rec), rec, ctx.level)
        options = tuple(_widen(o, sd(o), z) for o in rec.options)
        wide = _widen(rec, sd(rec), z)
        out.append(narrowed(replace(with_interval(rec, wide.speedup_low, wide.speedup_high),
                                    options=options, evidence=(*rec.evidence, row, err))))
    return out


def _widen(x: _Ranged, sd: float, z: float) -> _Ranged:
    """A recommendation or an option with its interval widened (never narrowed)."""
    low, high = widened(x.predicted_speedup, x.speedup_low, x.speedup_high, sd, z)
    return replace(x, speedup_low=round(min(low, x.speedup_low), 3),
                   speedup_high=round(max(high, x.speedup_high), 3))
