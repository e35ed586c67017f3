"""The one engine the advice states its times with: the program's reader replayed
(:mod:`hep_advisor.models.replay.engine`), for the verdict (the rate now, each limit's share) and
the scaling over workers, which W001's knee reads.

:func:`replayed_job` builds the job once per context (W001 shares it); :func:`replay_engine`
gives the verdict and the model summary's predictions from it, or ``None`` and the reason, for
the labelled fallback to the fitted rate model: no reader baseline (an RNTuple, no basket map, a
branch the maps lack), data over a link (its replay is the remote rules'), or several workers
today (the replay is of one).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import cast

from hep_advisor.findings.advice import Limit, Share, Verdict
from hep_advisor.models.calcosts import collector_per_file
from hep_advisor.models.loop_sample import replay_loop_sample, replay_root_passes
from hep_advisor.models.pointnoise import point_sd
from hep_advisor.models.reader_baseline import ReaderBaseline, once_what
from hep_advisor.models.replay.engine import (
    DECOMPRESSION,
    OVERHEAD,
    PROCESSING,
    STORAGE,
    Z90,
    ReplayedJob,
    Spread,
    baseline_spread,
    curve,
    self_checks,
    sweep_checks,
)
from hep_advisor.models.replay.workers import SharedJob, paced
from hep_advisor.models.scenarios import ModelSummary, PredictionPoint
from hep_advisor.models.selfcheck import LoopSample
from hep_advisor.models.throughput import BOUNDS, PLAUSIBLE
from hep_advisor.models.unitpace import whole_run_efficiency
from hep_advisor.rules.context import Context
from hep_advisor.rules.verdict import DETAILS

ENGINE_REPLAY = "replay"
ENGINE_RATE_MODEL = "rate model"


def replayed_job(ctx: Context) -> ReplayedJob | None:
    """The whole job as the program's reader runs it (its reader baseline), one process, cold:
    one process takes the baseline's own time (on a rate limiter, as its paced replay:
    :func:`~hep_advisor.models.replay.workers.paced`); memoised on the
    context.  ``None`` without a reader baseline or with several
    workers today."""
    key = "engine: replayed job"
    if key not in ctx.replay_memo:
        ctx.replay_memo[key] = _build(ctx)
    found: ReplayedJob | None = ctx.replay_memo[key]  # type: ignore[assignment]
    return found


def _build(ctx: Context) -> ReplayedJob | None:
    from hep_advisor.models.reader_baseline import reader_baseline

    tree = ctx.tree
    if tree is None or ctx.reader is None or not ctx.basket_maps or ctx.baseline.workers != 1:
        return None
    rb = ctx.reader_baseline  # replayed once by the caller where it could
    if rb is None:
        try:
            rb = reader_baseline(ctx.reader, ctx.basket_maps, tree.files, ctx.calibration,
                                 ctx.site, ctx.baseline, ctx.branches or None,
                                 tree.compression.algorithm)
        except ValueError:  # a branch the maps lack, an empty map
            return None
    if not (rb.io_s >= 0 and rb.cpu_s >= 0 and rb.io_s + rb.cpu_s > 0):
        return None
    ctx.replay_memo["engine: reader baseline"] = rb
    measured = (rb.entries / rb.measured_baseline_events_per_s
                if rb.measured_baseline_events_per_s else None)
    interleave = 0.0 if rb.device_limit == "max" else \
        max(rb.device_requests - rb.seeks, 0.0) * rb.access_ms / 1e3
    opened = ctx.calibration.open_overhead_s if ctx.calibration is not None else None
    open_s = opened.warm if opened is not None and opened.warm else ctx.param("open_s")
    if ctx.reader.engine == "uproot":  # Python's full collections, per file (as rb.cpu_s)
        open_s += collector_per_file(ctx.calibration)
    clusters = tree.clusters.count if tree.clusters is not None else 0
    files = max(int(tree.files), 1)
    # what a run pays once (ROOT's first file, RDataFrame's compilation): by each process, side
    # by side
    job = SharedJob(io_s=rb.io_s, cpu_s=rb.cpu_s - rb.setup_s, once_s=rb.setup_s,
                    limit=rb.device_limit,  # form: below
                    # the replay's device: the raw read's one device (the rate model's fitted
                    # ``devices`` came out 1.0-1.3 +- 0.3-0.5 on one throttled disk: not used)
                    interleave_s=interleave, devices=1.0,
                    open_s=open_s, files=files,
                    clusters=max(math.ceil(clusters / files), 1) if clusters else 0)
    # one process takes the reader baseline's own time: on a rate limiter its paced replay
    # says how much of the smaller part hid behind the larger
    total = rb.entries / rb.events_per_s if rb.events_per_s > 0 else rb.io_s + rb.cpu_s
    job = paced(job, total)
    mb = rb.compressed_mb or rb.compressed_mb_per_s * total
    return ReplayedJob(job=job, open_s=rb.open_cpu_s,
                       decompress_s=rb.decompress_s, compressed_mb=mb, entries=rb.entries,
                       measured_s=measured)


def with_engine(ctx: Context, verdict: Verdict, summary: ModelSummary) -> Context:
    """``ctx`` with the engine's verdict and summary, keeping the job it replayed (a new
    context starts with an empty memo: the job, or the reader baseline's failed replay, would
    be worked out again)."""
    new = replace(ctx, verdict=verdict, summary=summary)
    new.replay_memo.update({k: v for k, v in ctx.replay_memo.items()
                            if isinstance(k, str) and k.startswith("engine: ")})
    return new


def replayed_baseline(ctx: Context) -> ReaderBaseline | None:
    """The reader baseline :func:`replayed_job` was built from (``None`` where it was not)."""
    if replayed_job(ctx) is None:
        return None
    found: ReaderBaseline | None = ctx.replay_memo.get("engine: reader baseline")  # type: ignore[assignment]
    return found


def run_spread(ctx: Context) -> Spread | None:
    """The rate now's spread (:func:`~hep_advisor.models.replay.engine.baseline_spread`)."""
    rj = replayed_job(ctx)
    if rj is None:
        return None
    loop = ctx.calibration.event_loop if ctx.calibration is not None else None
    m = None
    if loop is not None and ctx.reader is not None and loop.reader == ctx.reader.text:
        m = loop.cold if loop.cold is not None else loop.warm
    one = rj.seconds(1, 1.0, ctx.baseline.cores)
    return baseline_spread(one, rj.measured_s, point_sd(m)[0])


def efficiency_assumed(ctx: Context) -> bool:
    p = ctx.summary.parameters.get("parallel_efficiency")
    return p is None or p.source == "assumed"


def efficiency(ctx: Context) -> tuple[float, float, float]:
    """The parallel efficiency of the CPU work: (point, low, high) (:func:`_spread`); the
    point no higher than the calibration's whole parallel runs measured
    (:func:`whole_run_efficiency`), the interval reaching down to it."""
    point, low, high = _spread(ctx, "parallel_efficiency")
    whole = whole_efficiency(ctx)
    if whole is not None and whole < point:
        point = max(whole, BOUNDS["parallel_efficiency"][0])
        low = min(low, point)
    return point, low, high


def whole_efficiency(ctx: Context) -> float | None:
    """The efficiency of the calibration's whole parallel runs (first units and all), or
    ``None`` where it ran none to compare (:func:`~hep_advisor.models.unitpace.
    whole_run_efficiency`)."""
    cal = ctx.calibration
    if cal is None or not cal.parallel_loop:
        return None
    return whole_run_efficiency(cal.parallel_loop, ctx.baseline.cores)


def oversubscription(ctx: Context) -> tuple[float, float, float]:
    """The CPU work's rate at twice the logical cores' workers, of the logical cores' rate:
    (point, low, high) (:func:`_spread`)."""
    return _spread(ctx, "oversubscribed")


def _spread(ctx: Context, name: str) -> tuple[float, float, float]:
    """A parameter in (0, 1]: (point, low, high).  Assumed: its plausible range
    (``hep_advisor.models.throughput.PLAUSIBLE``), no narrower; fitted: its 90% interval
    (log-normal, within the fit's bounds); fixed or without an uncertainty: the value alone."""
    value = ctx.param(name) or 1.0
    p = ctx.summary.parameters.get(name)
    lo_b, hi_b = BOUNDS[name]
    if p is None or p.uncertainty is None or p.value <= 0:
        return value, value, value
    if p.source == "assumed":
        lo, hi = PLAUSIBLE[name]
        return value, min(lo, value), max(hi, value)
    spread = math.exp(Z90 * p.uncertainty / p.value)
    return value, max(value / spread, lo_b), min(value * spread, hi_b)


def why_not(ctx: Context) -> str:
    """Why the replay does not give the verdict and the scaling (the fallback's label)."""
    tree = ctx.tree
    if ctx.calibration is not None and ctx.calibration.remote is not None:
        return "the data are read over a link (its replay gives the remote recommendations)"
    if tree is not None and tree.format == "rntuple":
        return "the files hold an RNTuple (the replay models TTree readers)"
    if ctx.baseline.workers != 1:
        return f"the analysis runs {ctx.baseline.workers} workers now (the replay is of one)"
    if ctx.reader is None:
        return "no reader to replay"
    if not ctx.basket_maps:
        return "no basket map of the files was read"
    return "the reader's replay could not be computed on the sampled files"


def replay_engine(ctx: Context) -> tuple[Verdict, ModelSummary] | str:
    """The verdict and the model summary with the replay's predictions over the summary's
    worker counts; else why not (:func:`why_not`)."""
    if ctx.calibration is not None and ctx.calibration.remote is not None:
        return why_not(ctx)
    rj = replayed_job(ctx)
    spread = run_spread(ctx)
    if rj is None or spread is None:
        return why_not(ctx)
    eff, eta = efficiency(ctx), oversubscription(ctx)
    cores = ctx.baseline.cores
    counts = sorted({p.workers for p in ctx.summary.predictions} | {1})
    points = curve(rj, counts, eff, cores, eta, spread)
    preds = tuple(PredictionPoint(
        workers=p.workers, aggregate_mb_per_s=p.mb_per_s, low=p.low, high=p.high,
        events_per_s=p.events_per_s, speedup=p.speedup, speedup_low=p.speedup_low,
        speedup_high=p.speedup_high) for p in points)
    n = ctx.baseline.workers
    now = next(p for p in points if p.workers == n)
    raw = rj.shares(n, eff[0], cores, eta[0])
    details = dict(DETAILS)
    once = rj.job.once_s
    what = once_what(ctx.reader.kind if ctx.reader is not None else "")
    if once > 0 and now.seconds > 0:  # paid once per run: said, it is in processing
        details["processing"] = (
            f"the analysis' own work on the events (with {once:.2f} s of {what}, "
            f"{100 * once / now.seconds:.0f}% of the run, paid once per run however many "
            "events it reads)")
    shares = sorted((Share(cast(Limit, limit), v, details[cast(Limit, limit)])
                     for limit, v in raw.items() if v >= 0.005), key=lambda s: -s.share)
    if not shares:
        return why_not(ctx)
    top = shares[0]
    jobs = f"{n} job" + ("s" if n != 1 else "")
    headline = (f"{top.limit.capitalize()} limits this analysis: {100 * top.share:.0f}% of "
                f"the time goes to {top.detail.split(' (')[0]} ({jobs}, "
                f"{now.mb_per_s:.1f} MB/s predicted)")
    if top.limit == PROCESSING and once >= 0.5 * now.seconds:
        headline += f"; {100 * once / now.seconds:.0f}% is {what}, paid once per run"
    v = Verdict(limit=top.limit, headline=headline, workers=n, mb_per_s=now.mb_per_s,
                events_per_s=now.events_per_s, shares=tuple(shares))
    cal = ctx.calibration
    loop = cal.event_loop if cal is not None else None
    cold = loop.cold if loop is not None and ctx.reader is not None and \
        loop.reader == ctx.reader.text else None
    tree = ctx.tree
    rb = replayed_baseline(ctx)
    algorithm = tree.compression.algorithm if tree is not None else None
    sample = None
    passes: tuple[tuple[bool, bool, LoopSample], ...] = ()
    if cold is not None and rb is not None and ctx.reader is not None:
        sample = replay_loop_sample(ctx.reader, rb, loop, ctx.basket_maps, cal, ctx.site,
                                    ctx.baseline, ctx.branches or None, algorithm)
        passes = replay_root_passes(ctx.reader, rb, cal, ctx.basket_maps, ctx.site,
                                    ctx.baseline, ctx.branches or None, algorithm)
    checks = self_checks(rj, points[0].seconds if points[0].workers == 1 else
                         rj.seconds(1, eff[0], cores, eta[0]), cold,
                         cal.parallel_loop if cal is not None else (), eff[0], cores, eta[0],
                         sample, passes)
    if cal is not None and cal.concurrency and tree is not None and tree.file_bytes.count:
        checks += sweep_checks(ctx.replay_device(), cal.concurrency,
                               tree.file_bytes.total_bytes / tree.file_bytes.count, cores,
                               raw.get(STORAGE, 0.0),
                               cal.raw_read.cold if cal.raw_read is not None else None)
    reader = ctx.reader.describe() if ctx.reader is not None else "the reader"
    note = (f"the program's reader ({reader}) replayed through the calibrated device, with "
            f"the CPU it measured; the rate's 90% interval from {spread.why}")
    return v, replace(ctx.summary, predictions=preds, engine=ENGINE_REPLAY, engine_note=note,
                      self_check=checks, rate_model_check=ctx.summary.self_check)


__all__ = ["DECOMPRESSION", "ENGINE_RATE_MODEL", "ENGINE_REPLAY", "OVERHEAD", "PROCESSING",
           "STORAGE", "efficiency", "efficiency_assumed", "oversubscription", "replay_engine",
           "replayed_baseline", "replayed_job", "run_spread", "why_not", "with_engine"]
