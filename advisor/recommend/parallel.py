"""The worker count (W001): the knee of the predicted scaling curve."""

from __future__ import annotations

from models import scenarios as sc

from ..advice import Action, Evidence, Recommendation
from .context import Context

#: The knee: the fewest workers that reach this fraction of the best predicted rate.
KNEE_FRACTION = 0.90


def knee(points: list[tuple[int, float]]) -> int:
    best = max(r for _, r in points)
    return min(w for w, r in points if r >= KNEE_FRACTION * best)


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
    return ctx.make(
        code="W001", kind="workers", title=f"Run {n} workers in parallel",
        audience="analyst", point=point, scenario=scen,
        summary=(f"The predicted rate grows to {by_w[n]:.1f} MB/s at {n} workers and at most "
                 f"{max(by_w.values()):.1f} MB/s up to {more}: more workers than {n} add "
                 "little here."),
        evidence=ev,
        actions=[
            Action("PROOF-Lite", f'TProof::Open("lite://", "workers={n}");'),
            Action("RDataFrame", f"ROOT.EnableImplicitMT({n})"),
            Action("uproot with processes, each task a file or, with fewer files than "
                   "workers, an entry range on cluster boundaries",
                   f"concurrent.futures.ProcessPoolExecutor(max_workers={n})"),
            Action("coffea", f"coffea.processor.FuturesExecutor(workers={n})"),
            Action("Dask", f"dask.distributed.LocalCluster(n_workers={n}, "
                   "threads_per_worker=1)"),
        ],
        extra_assumptions=(f"each worker reads whole files or clusters of {tname}; more "
                           "workers than units of work stay idle",))
