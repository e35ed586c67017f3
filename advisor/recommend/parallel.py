"""The worker count (W001): the knee of the predicted scaling curve."""

from __future__ import annotations

from models import scenarios as sc

from ..advice import Action, Evidence, Recommendation, contradicted
from ..knee import KNEE_FRACTION, knee
from . import versions
from .context import Context


def workers_rule(ctx: Context) -> Recommendation | None:
    preds = [(p.workers, p.aggregate_mb_per_s) for p in ctx.summary.predictions]
    if len(preds) < 2:
        return None
    n = knee(preds)
    if n <= ctx.workers_now:
        return None
    scen = sc.workers(n)
    point = ctx.predict(scen)
    by_w = dict(preds)
    tree = ctx.tree
    tname = tree.name if tree else "TREE"
    ev = [
        Evidence("cores", ctx.cores, "physical", "probed",
                 f"{ctx.logical} logical"),
        *(Evidence(f"predicted at {w} worker{'s' if w > 1 else ''}", round(r, 1), "MB/s",
                   "derived") for w, r in preds),
        ctx.param_evidence("parallel_efficiency", "parallel efficiency", 1.0, ""),
        Evidence("knee", f"{100 * KNEE_FRACTION:.0f}% of the best predicted rate", "",
                 "threshold"),
    ]
    cal = ctx.calibration
    for pp in (cal.parallel_loop if cal is not None else ()):
        if pp.aggregate_mb_per_s:
            ev.append(Evidence(f"measured at {pp.workers} worker{'s' if pp.workers > 1 else ''}"
                               " (cached, short files)", round(pp.aggregate_mb_per_s, 1),
                               "MB/s", "measured"))
    more = max(w for w, _ in preds)
    rec = ctx.make(
        code="W001", kind="workers", title=f"Run {n} workers in parallel",
        audience="analyst", point=point, scenario=scen,
        summary=(f"The predicted rate grows to {by_w[n]:.1f} MB/s at {n} workers and at most "
                 f"{max(by_w.values()):.1f} MB/s up to {more}: more workers than {n} add "
                 "little here."),
        evidence=ev,
        actions=[
            Action.labelled("RDataFrame: run the event loop on N threads (call it before "
                            "creating the RDataFrame)", f"ROOT.EnableImplicitMT({n})",
                            versions.ROOT_IMT),
            Action.labelled("uproot with processes, each task a file or, with fewer files "
                            "than workers, an entry range on cluster boundaries",
                            f"concurrent.futures.ProcessPoolExecutor(max_workers={n})",
                            versions.UPROOT_PROCESSES),
            Action.labelled("coffea", f"coffea.processor.FuturesExecutor(workers={n})",
                            versions.COFFEA),
            Action.labelled("Dask", f"dask.distributed.LocalCluster(n_workers={n}, "
                            "threads_per_worker=1)", versions.DASK),
            Action.labelled("PROOF-Lite, where the ROOT build still has it",
                            f'TProof::Open("lite://", "workers={n}");', versions.PROOF),
        ],
        extra_assumptions=(f"each worker reads whole files or clusters of {tname}; more "
                           "workers than units of work stay idle",))
    against = _measured_against(ctx, n)
    return contradicted(rec, against) if rec is not None and against else rec


def _measured_against(ctx: Context, n: int) -> str | None:
    """What the parallel event loop measured, where it points the other way beyond the
    predicted interval: at some measured worker count k (2 .. n), the measured rate over the
    1-worker rate below the low end of the speed-up the model predicts for k workers."""
    cal = ctx.calibration
    if cal is None:
        return None
    by_w = {p.workers: p.aggregate_mb_per_s for p in cal.parallel_loop
            if p.aggregate_mb_per_s and p.aggregate_mb_per_s > 0}
    one = by_w.get(1)
    if not one:
        return None
    for k in sorted(w for w in by_w if 1 < w <= n):
        ratio = by_w[k] / one
        point = ctx.predict(sc.workers(k))
        low = point.speedup_low if point.speedup_low is not None else point.speedup
        if low is not None and ratio < low:
            return (f"the parallel event loop measured {by_w[k]:.3g} MB/s with {k} workers "
                    f"against {one:.3g} MB/s with 1 ({ratio:.2f}x), below the "
                    f"{point.speedup_low or 0:.2f}–{point.speedup_high or 0:.2f}x the model "
                    f"predicts for {k} workers")
    return None
