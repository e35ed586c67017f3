"""The cluster part of the advice (``--dask ADDRESS``): probe every node of a Dask cluster on
the dataset's own files, build the cluster model and its advice (D001-D003).

:func:`calibrate_cluster` runs :func:`hep_advisor.probes.cluster_probe.probe_cluster` (the site
probe, the cold sequential read test and the event loop on every node, then every node reading at
once) and :func:`cluster_advice` turns the profile into a :class:`ClusterAdvice`: the nodes, the
shared-storage test, the model (``hep_advisor.models.cluster_model``) with its predictions over
nodes x workers per node, where the shared storage saturates, and the recommendations.  UI-free.

The model's worker rate is the raw cold sequential read; where the event loop ran on the
workers, its warm rate (compressed MB/s, no storage in the way) is the CPU rate per worker and
its bytes per event turn MB/s into events/s (``hep_advisor.models.cluster_model``: 1/r = 1/r_io +
1/r_cpu).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from hep_advisor.findings.cluster import ClusterAdvice
from hep_advisor.models.calcosts import loop_cpu_rate
from hep_advisor.models.cluster_model import ClusterModel
from hep_advisor.probes.cluster_probe import (
    ClusterError,
    ClusterProfile,
    GroupBy,
    probe_cluster,
)
from hep_advisor.probes.readtests.runner import ProgressCallback
from hep_advisor.probes.results import DatasetProfile, largest_tree
from hep_advisor.rules.registry import narrowed

#: Largest node count of the predictions grid is at least this (and twice the nodes measured).
GRID_NODES = 4
#: The most nodes :meth:`ClusterModel.saturation` looks at.
SATURATION_LIMIT = 256


def cluster_test_seconds(budget_s: float) -> dict[str, float]:
    """Each cluster test's seconds from the calibration's budget: a worker alone and the event
    loop a tenth of it each (0.5 to 6 s), a concurrent sample a 25th (0.5 to 2.5 s).  The
    cluster tests come on top of the budget: about budget / 4 per node."""
    def clamp(x: float, lo: float, hi: float) -> float:
        return min(hi, max(lo, x))

    return {"alone_s": clamp(budget_s / 10, 0.5, 6.0),
            "event_loop_s": clamp(budget_s / 10, 0.5, 6.0),
            "together_s": clamp(budget_s / 25, 0.5, 2.5)}


def _tree(dataset: DatasetProfile) -> str | None:
    trees = [t for t in dataset.trees if t.format == "ttree"]
    return largest_tree(trees).name if trees else None


def calibrate_cluster(target: Any, dataset: DatasetProfile, *, budget_s: float = 60.0,
                      branches: Sequence[str] | None = None, analysis: Any = None,
                      group_by: GroupBy = "host", progress: ProgressCallback | None = None,
                      cancel: threading.Event | None = None, label: str = "dataset",
                      before_read: Callable[[], None] | None = None) -> ClusterAdvice:
    """Probe the Dask cluster ``target`` (a Client, a scheduler address or ``local:N``) on the
    dataset's files (every worker must see them at the same paths) and advise.  A cluster
    that cannot be reached or probed gives a :class:`ClusterAdvice` with ``error`` set (one
    line), never an exception.  ``analysis`` reaches the workers only as ``"module:function"``
    (they import it); ``label``: the dataset the recommendations name."""
    files = list(dataset.file_paths)
    name = str(target) if isinstance(target, str) else "client"
    if not files:
        return ClusterAdvice(name, error="no files to read on the workers")
    if cancel is not None and cancel.is_set():
        return ClusterAdvice(name, error="cancelled before the cluster tests")
    tree = _tree(dataset)
    notes: list[str] = []
    if tree is None:
        notes.append("no TTree in the dataset: no event loop on the workers (read tests only)")
    if analysis is not None and not isinstance(analysis, str):
        notes.append("the analysis is a Python object, not MODULE:FUNCTION: the workers' event "
                     "loop reads the branches without it")
        analysis = None
    t0 = time.perf_counter()
    secs = cluster_test_seconds(budget_s)
    try:
        profile = probe_cluster(target, files, group_by=group_by, tree=tree,
                                branches=branches, analysis=analysis, progress=progress,
                                before_read=before_read,
                                cancel=None if cancel is None else cancel.is_set,
                                alone_s=secs["alone_s"], together_s=secs["together_s"],
                                event_loop_s=secs["event_loop_s"])
    except ClusterError as exc:
        return ClusterAdvice(name, error=str(exc), elapsed_s=time.perf_counter() - t0)
    except (OSError, TimeoutError) as exc:
        return ClusterAdvice(name, error=f"cannot use the Dask cluster at {name}: {exc}",
                             elapsed_s=time.perf_counter() - t0)
    advice = cluster_advice(profile, label=label, tree=tree)
    return replace(advice, notes=tuple(notes) + advice.notes)


def _median(values: Sequence[float]) -> float | None:
    v = sorted(values)
    if not v:
        return None
    return v[len(v) // 2] if len(v) % 2 else 0.5 * (v[len(v) // 2 - 1] + v[len(v) // 2])


def cpu_and_event_size(profile: ClusterProfile) -> tuple[float | None, float | None]:
    """(the CPU rate per worker, MB/s compressed: the median over nodes of the event loop's
    warm rate, or its cold one where faster; the MB one event carries, compressed), ``None``
    where no event loop ran."""
    cpu: list[float] = []
    size: list[float] = []
    for node in profile.nodes:
        loop = node.calibration.event_loop if node.calibration is not None else None
        if loop is None or not loop.events_per_s or not loop.compressed_mb_per_s:
            continue
        per_event = loop.compressed_mb_per_s / loop.events_per_s
        size.append(per_event)
        rate = loop_cpu_rate(loop)  # the warm rate, or the cold one where faster
        if rate:
            cpu.append(rate * per_event)
    return _median(cpu), _median(size)


def workers_now(profile: ClusterProfile) -> int:
    """Workers per node as the cluster runs now (the median node's)."""
    return int(_median([len(n.workers) for n in profile.nodes]) or 1)


def cluster_advice(profile: ClusterProfile, *, label: str = "dataset",
                   tree: str | None = None) -> ClusterAdvice:
    """The model of a probed cluster, its predictions and the recommendations."""
    from hep_advisor.rules.cluster import cluster_rules

    base = ClusterAdvice(profile.scheduler, profile.group_by, profile.workers, profile.nodes,
                         profile.shared_storage, workers_per_node=workers_now(profile),
                         skipped=profile.skipped, elapsed_s=profile.elapsed_s,
                         bytes_read=profile.bytes_read, tree=tree)
    try:
        raw = ClusterModel.from_profile(profile)
    except ValueError as exc:
        errors = [f"{n.name}: {e}" for n in profile.nodes for e in n.errors]
        return replace(base, error=f"no cluster model: {exc}"
                       + (f" ({errors[0]})" if errors else ""))
    notes: list[str] = []
    cpu, per_event = cpu_and_event_size(profile)
    model = raw
    if cpu is not None or per_event is not None:
        model = raw.what_if(cpu_mb_per_s=cpu)
        model = ClusterModel(replace(model.parameters, mb_per_event=per_event))
    else:
        notes.append("no event loop on the workers: the predictions are of the storage reads "
                     "alone (no CPU rate, no events/s)")
    n0 = len(model.parameters.nodes)
    summary = model.summary(nodes=range(1, max(GRID_NODES, 2 * n0) + 1))
    w = base.workers_per_node
    saturates = None
    if model.parameters.shared_capacity_mb_per_s is not None or model.parameters.remote:
        saturates = model.saturation(w, SATURATION_LIMIT)
    advice = replace(base, model=summary, saturates_at_nodes=saturates, fitted=model,
                     notes=tuple(notes))
    return replace(advice, recommendations=tuple(map(narrowed,
                                                       cluster_rules(advice, label))))
