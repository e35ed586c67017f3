"""What limits the analysis: each limit's share of the time, from the fitted model.

The share of a limit is the elasticity of the predicted rate with respect to its parameters:
how much faster the analysis gets, in relative terms, when that part gets faster.  For one
worker the model is a sum of times per MB (reading, decompressing, processing, the per-file
costs), and the elasticity of each rate is exactly its share of the time; reads hidden behind
the CPU (``io_overlap``) take no share: making them faster gains nothing.  With several workers
sharing the devices it generalises: the rate equations are homogeneous (scale every rate by k
and every time by 1/k and the result scales by k), so the elasticities of the rates and times
still sum to one, and storage contention shows up as a larger storage share.
"""

from __future__ import annotations

import numpy as np

from hep_advisor.findings.advice import Limit, Share, Verdict
from hep_advisor.models.gradients import LOG_STEP, log_rate_gradient
from hep_advisor.models.physics import PARAMS, Params, config_matrix, rates
from hep_advisor.models.scenarios import Baseline

#: The parameters behind each limit (rates count positively, times negatively).
GROUPS: dict[Limit, tuple[str, ...]] = {
    "storage": ("storage_mb_per_s", "access_ms", "cache_mb_per_s"),
    "decompression": ("decompress_mb_per_s",),
    "processing": ("process_mb_per_s",),
    "per-file overhead": ("open_s", "call_s", "basket_s"),
    "network": ("network_mb_per_s", "latency_ms"),
}

GROUPED = frozenset(n for names in GROUPS.values() for n in names)

DETAILS: dict[Limit, str] = {
    "storage": "reading from the disks (transfer and access time)",
    "decompression": "decompressing baskets",
    "processing": "the analysis' own work on the events (and uproot/ROOT's unpacking)",
    "per-file overhead": "opening files, and the fixed cost of each read call and basket",
    "network": "the network link (bandwidth and latency)",
}


def elasticities(params: Params, row: dict[str, float], baseline: Baseline,
                 h: float = LOG_STEP) -> dict[str, float]:
    """d log(rate) / d log(parameter) at one configuration, for every positive parameter of
    the limits (``GROUPS``)."""
    names = [name for name in PARAMS if name in GROUPED
             and getattr(params, name) > 0 and np.isfinite(getattr(params, name))]
    grads = log_rate_gradient(params, baseline.cores, config_matrix([row]), names, h)[0]
    return {name: float(g) for name, g in zip(names, grads, strict=True)}


def verdict(baseline: Baseline, workers: int | None = None) -> Verdict:
    """Each limit's share of the time at ``workers`` jobs (default: the baseline's)."""
    n = workers or baseline.workers
    row = baseline.row(n)
    el = elasticities(baseline.params, row, baseline)
    raw = {limit: sum(abs(el.get(p, 0.0)) for p in names) for limit, names in GROUPS.items()}
    total = sum(raw.values()) or 1.0
    shares = sorted((Share(limit, v / total, DETAILS[limit]) for limit, v in raw.items()
                     if v / total >= 0.005), key=lambda s: -s.share)
    mb = float(rates(baseline.params, config_matrix([row]), baseline.cores)[0])
    eps = None if baseline.events_per_mb is None else mb * baseline.events_per_mb
    top = shares[0]
    jobs = f"{n} job" + ("s" if n != 1 else "")
    headline = (f"{top.limit.capitalize()} limits this analysis: {100 * top.share:.0f}% of the "
                f"time goes to {top.detail.split(' (')[0]} ({jobs}, {mb:.1f} MB/s predicted)")
    return Verdict(limit=top.limit, headline=headline, workers=n, mb_per_s=mb,
                   events_per_s=eps, shares=tuple(shares))
