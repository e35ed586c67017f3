"""The cluster's recommendations (``--dask``), each predicted by the cluster model
(``hep_advisor.models.cluster_model``) against the cluster as it runs now (its nodes, its workers
per node):

====  ==============  ==============================================================
code  kind            when
====  ==============  ==============================================================
D001  cluster-size    another worker count per node, or more nodes before the shared
                      storage saturates, is predicted >= 1.05x faster
D002  shared-storage  the shared storage saturated when every node read at once
D003  slow-node       a node reads below 70% of the median node, or its tests failed
====  ==============  ==============================================================

The interval of a speed-up is the ratio of the low ends and of the high ends of the two
predictions (the same nodes' spread enters both).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from hep_advisor.findings.recommendation import (
    MIN_SPEEDUP,
    Action,
    Evidence,
    Recommendation,
    severity_for,
)
from hep_advisor.models.cluster_model import SLOW_NODE, ClusterModel, ClusterPrediction, NodeRates
from hep_advisor.models.knee import KNEE_FRACTION, knee
from hep_advisor.rules import versions
from hep_advisor.rules.rule import Rule

if TYPE_CHECKING:
    from hep_advisor.findings.cluster import ClusterAdvice

#: The commands' labels: what each needs, and what was checked.
DASK_WORKER = ("the dask CLI of distributed (`dask worker`, distributed >= 2022.10); checked "
               "with distributed 2026.8")
DISTRIBUTED_RDF = ("PyROOT with distributed RDataFrame (ROOT >= 6.36: "
                   "`ROOT.RDataFrame(..., executor=client, npartitions=N)`); API read from "
                   "ROOT 6.40's PyPI wheel, not run here")
COFFEA_DASK = ("coffea's processor API with DaskExecutor (coffea 0.7 and the processor module "
               "of later releases); not run here")
JOBQUEUE = ("dask-jobqueue >= 0.7 on an HTCondor pool (HTCondorCluster, scale(jobs=...), "
            "adapt(maximum_jobs=...)); not installed or run here")


def cluster_rules(advice: ClusterAdvice, label: str = "dataset") -> list[Recommendation]:
    model = advice.fitted
    if model is None:
        return []
    found = [size_rule(advice, model, label), shared_rule(advice, model, label),
             *slow_node_rules(advice, model, label)]
    recs = [r for r in found if r is not None]
    return sorted(recs, key=lambda r: (-r.predicted_speedup, r.code))


def speedup(new: ClusterPrediction, old: ClusterPrediction) -> tuple[float, float, float]:
    """(speed-up, low, high) of ``new`` over ``old``."""
    s = new.aggregate_mb_per_s / old.aggregate_mb_per_s
    lo = (new.low or new.aggregate_mb_per_s) / (old.low or old.aggregate_mb_per_s)
    hi = (new.high or new.aggregate_mb_per_s) / (old.high or old.aggregate_mb_per_s)
    return s, min(lo, hi, s), max(lo, hi, s)


def _make(code: str, kind: str, title: str, audience: str, new: ClusterPrediction,
          old: ClusterPrediction, summary: str, evidence: Sequence[Evidence],
          actions: Sequence[Action], assumptions: Sequence[str], label: str
          ) -> Recommendation | None:
    s, lo, hi = speedup(new, old)
    s = round(s, 3)
    if s < MIN_SPEEDUP:
        return None
    extra = ("beyond what was measured (more nodes or workers per node than the cluster had): "
             "an extrapolation of the model",) if new.extrapolated else ()
    return Recommendation(
        code=code, kind=kind, title=title, severity=severity_for(s, round(lo, 3), round(hi, 3)),
        audience="site admin" if audience == "site admin" else "analyst",
        predicted_speedup=s, speedup_low=round(lo, 3), speedup_high=round(hi, 3),
        workers=new.nodes * new.workers_per_node,
        scenario=f"cluster: {new.nodes} node{'s' if new.nodes > 1 else ''} x "
                 f"{new.workers_per_node} worker{'s' if new.workers_per_node > 1 else ''}",
        summary=summary, evidence=tuple(evidence), actions=tuple(actions),
        assumptions=tuple(dict.fromkeys((*assumptions, *extra))), dataset=label)


def _rate(p: ClusterPrediction) -> str:
    ev = f", {p.events_per_s:,.0f} events/s" if p.events_per_s else ""
    return f"{p.aggregate_mb_per_s:,.1f} MB/s{ev}"


def _model_evidence(model: ClusterModel) -> list[Evidence]:
    p = model.parameters
    out = [Evidence(f"worker rate on {n.name}", round(n.worker_mb_per_s, 1), "MB/s",
                    "measured", "one worker alone, cold sequential") for n in p.nodes[:8]]
    if p.cpu_mb_per_s:
        out.append(Evidence("CPU rate per worker", round(p.cpu_mb_per_s, 1), "MB/s",
                            "derived", "the workers' warm event loop, compressed MB/s"))
    if p.shared_capacity_mb_per_s:
        out.append(Evidence("shared storage capacity", round(p.shared_capacity_mb_per_s, 1),
                            "MB/s", "fitted", "from every worker reading at once"))
    elif p.shared_at_least_mb_per_s:
        out.append(Evidence("shared storage gave (not saturated)",
                            round(p.shared_at_least_mb_per_s, 1), "MB/s", "measured",
                            f"{p.measured_workers} workers at once"))
    return out


def size_rule(advice: ClusterAdvice, model: ClusterModel, label: str
              ) -> Recommendation | None:
    """D001: workers per node (the knee of the predicted per-node scaling, where the CPU rate
    is known) and node count (up to where the shared storage saturates, where it did)."""
    p = model.parameters
    n0, w0 = len(p.nodes), advice.workers_per_node
    old = model.predict(n0, w0)
    w_best = w0
    notes: list[str] = []
    if p.cpu_mb_per_s:
        most = max(max(n.workers for n in p.nodes), max(n.cores or 1 for n in p.nodes))
        curve = [(w, model.predict(n0, w).aggregate_mb_per_s)
                 for w in range(1, min(64, 2 * most) + 1)]
        w_best = knee(curve)
    else:
        notes.append("workers per node kept as now: no CPU rate (no event loop on the "
                     "workers), so more workers would look free")
    n_best = n0
    sat = model.saturation(w_best, 256) if (p.shared_capacity_mb_per_s or p.remote) else None
    if sat is not None and sat > n0:
        n_best = sat
    new = model.predict(n_best, w_best)
    if (n_best, w_best) == (n0, w0):
        return None
    total = n_best * w_best
    tree = advice.tree or "TREE"
    mem = [w.memory_limit_bytes for n in advice.nodes for w in n.workers
           if w.memory_limit_bytes]
    job_gb = max(1, round(w_best * min(mem) / 1e9)) if mem else None
    ev = [*_model_evidence(model),
          Evidence("now", f"{n0} node(s) x {w0} worker(s): {_rate(old)}", "", "derived"),
          Evidence("recommended", f"{n_best} node(s) x {w_best} worker(s): {_rate(new)}", "",
                   "derived"),
          Evidence("knee", f"{100 * KNEE_FRACTION:.0f}% of the best predicted rate per node",
                   "", "threshold")]
    if sat is not None:
        ev.append(Evidence("shared storage saturates past", sat, "nodes", "derived",
                           f"at {w_best} workers each"))
    actions = [
        Action.labelled(f"Dask: start {w_best} single-threaded worker processes on each of "
                        f"{n_best} nodes", f"dask worker {advice.scheduler} --nworkers "
                        f"{w_best} --nthreads 1", DASK_WORKER),
        Action.labelled("one node: a LocalCluster", f"dask.distributed.LocalCluster(n_workers="
                        f"{w_best}, threads_per_worker=1)", versions.DASK),
        Action.labelled("coffea on that cluster", "processor.Runner(executor=processor."
                        "DaskExecutor(client=client), schema=...)", COFFEA_DASK),
        Action.labelled(f"distributed RDataFrame: at least one partition per worker "
                        f"({total} in all)", f'ROOT.RDataFrame("{tree}", files, '
                        f"executor=client, npartitions={total})", DISTRIBUTED_RDF),
        Action.labelled(f"HTCondor with dask-jobqueue: {n_best} jobs of {w_best} processes",
                        f"cluster = HTCondorCluster(cores={w_best}, processes={w_best}, "
                        f'memory="{job_gb or "MEM"}GB", disk="DISK"); '
                        f"cluster.scale(jobs={n_best})", JOBQUEUE),
    ]
    where = ""
    if sat is not None:
        where = f"; past {sat} nodes the shared storage adds little"
    elif advice.shared_storage is None:
        where = "; with one node the shared storage was not tested: where more nodes stop " \
            "helping is not known"
    elif p.shared_capacity_mb_per_s is None:
        where = "; the shared storage did not saturate when measured, so the model cannot " \
            "say where more nodes stop helping"
    return _make("D001", "cluster-size",
                 f"Run {w_best} workers per node on {n_best} node{'s' if n_best > 1 else ''}",
                 "analyst", new, old,
                 f"{n0} node(s) x {w0} worker(s) are predicted to read {_rate(old)}; "
                 f"{n_best} x {w_best} {_rate(new)}{where}.",
                 ev, actions,
                 ("the measured nodes stand for the nodes added, taken in turn",
                  "memory per HTCondor job: the Dask workers' memory limit times the "
                  "processes" if job_gb else "memory per HTCondor job: set it (MEM)",
                  "one partition per worker balances whole files; uneven files may want "
                  "more partitions", *notes), label)


def shared_rule(advice: ClusterAdvice, model: ClusterModel, label: str
                ) -> Recommendation | None:
    """D002: the shared storage saturated: where, and what a second server would give."""
    p = model.parameters
    cap = p.shared_capacity_mb_per_s
    if cap is None:
        return None
    n0, w0 = len(p.nodes), advice.workers_per_node
    old = model.predict(n0, w0)
    new = model.what_if(storage_servers=2).predict(n0, w0)
    sat = advice.saturates_at_nodes
    shared = advice.shared_storage
    low, high = p.shared_capacity_low_mb_per_s, p.shared_capacity_high_mb_per_s
    ev = [Evidence("shared storage capacity", round(cap, 1), "MB/s", "fitted",
                   f"interval {low:.1f}–{high:.1f} MB/s" if low and high else
                   f"at least {low:.1f} MB/s" if low else None),
          *_model_evidence(model)[:-1]]
    if shared is not None and shared.aggregate_mb_per_s:
        ev.append(Evidence(f"every worker at once ({shared.workers})",
                           round(shared.aggregate_mb_per_s, 1), "MB/s", "measured"))
    if sat is not None:
        ev.append(Evidence("saturates past", sat, "nodes", "derived",
                           f"{w0} workers each: one more node adds < 10% of a node's rate"))
    where = f" past {sat} node{'s' if sat != 1 else ''}" if sat is not None else ""
    return _make("D002", "shared-storage",
                 f"The shared storage saturates{where}: add servers rather than nodes",
                 "site admin", new, old,
                 f"Every worker reading at once got {shared.aggregate_mb_per_s or 0:,.1f} MB/s "
                 f"where the nodes alone would read more: the shared storage gives about "
                 f"{cap:,.1f} MB/s in all. Twice its servers (or devices) are predicted to read "
                 f"{_rate(new)} against {_rate(old)} now." if shared else "",
                 ev,
                 [Action("Spread the data over more storage servers or devices (Lustre OSTs, "
                         "NFS servers, XRootD data servers), or stage it to the nodes' local "
                         "disks"),
                  Action.labelled(f"Cap the jobs reading this storage at once at {sat or n0}",
                                  f"cluster.adapt(minimum_jobs=1, maximum_jobs={sat or n0})",
                                  JOBQUEUE)],
                 ("the capacity scales with the storage servers or devices behind it",),
                 label)


def _fixed(n: NodeRates, median: float) -> NodeRates:
    return replace(n, worker_mb_per_s=median, worker_low_mb_per_s=None,
                   worker_high_mb_per_s=None, relative=1.0)


def slow_node_rules(advice: ClusterAdvice, model: ClusterModel, label: str
                    ) -> list[Recommendation | None]:
    """D003: a node below ``SLOW_NODE`` of the median node's worker rate (predicted: the
    cluster with it at the median rate), or one whose tests failed (predicted: the cluster
    with it working like the others)."""
    from hep_advisor.findings.cluster import failed_nodes

    p = model.parameters
    w0 = advice.workers_per_node
    rates = sorted(n.worker_mb_per_s for n in p.nodes)
    median = rates[len(rates) // 2]
    now = model.predict(list(p.nodes), w0)
    out: list[Recommendation | None] = []
    for slow in model.slow_nodes():
        fixed = [(_fixed(n, median) if n.name == slow.name else n) for n in p.nodes]
        new = model.predict(fixed, w0)
        out.append(_make(
            "D003", "slow-node", f"Node {slow.name} reads at {100 * slow.relative:.0f}% of the "
            "median node", "site admin", new, now,
            f"One worker alone on {slow.name} reads {slow.worker_mb_per_s:,.1f} MB/s, the "
            f"median node {median:,.1f} MB/s. At the median rate the cluster is predicted to "
            f"read {_rate(new)} against {_rate(now)}.",
            [Evidence(f"worker rate on {slow.name}", round(slow.worker_mb_per_s, 1), "MB/s",
                      "measured"),
             Evidence("median node", round(median, 1), "MB/s", "derived"),
             Evidence("slow below", f"{100 * SLOW_NODE:.0f}% of the median", "", "threshold")],
            [Action(f"On {slow.name}, probe the storage the data are read from and compare it "
                    "with a fast node", "hep-advisor probe PATHS"),
             Action("Until it is fixed, leave it out of the cluster or give it fewer workers")],
            ("the node at the median rate, everything else as measured",), label))
    broken = failed_nodes(advice)
    if broken:
        new = model.predict(len(p.nodes) + len(broken), w0)
        first = broken[0]
        why = first.errors[0] if first.errors else "no measured read rate"
        names = ", ".join(n.name for n in broken[:4])
        fix = ("install hep-advisor on the workers: pip install 'hep-advisor[dask]'"
               if "must be installed" in why else "check the node's access to the data")
        out.append(_make(
            "D003", "misconfigured-node", f"{len(broken)} node(s) failed the tests: {names}",
            "site admin", new, now,
            f"{first.name}: {why}. Working like the others, the cluster is predicted to "
            f"read {_rate(new)} against {_rate(now)} without them.",
            [Evidence("failed nodes", len(broken), "", "measured", why)],
            [Action(fix[:1].upper() + fix[1:])],
            ("the failed nodes would read like the measured ones, taken in turn",), label))
    return out


_CLUSTER = ("the cluster model (every node's measured read and CPU rates, the shared storage "
            "measured with every node reading at once)")
D001 = Rule("D001", "cluster", "cluster-size", "Change the workers per node or the nodes",
            trigger="another worker count per node, or more nodes before the shared storage "
                    "saturates, is predicted >= 1.05x faster",
            prediction=_CLUSTER, measure="time the analysis once with the change applied",
            audience="site admin", source="cluster")
D002 = Rule("D002", "cluster", "shared-storage", "Relieve the shared storage",
            trigger="the shared storage saturated when every node read at once",
            prediction=_CLUSTER, measure="time the analysis once with the change applied",
            audience="site admin", source="cluster")
D003 = Rule("D003", "cluster", "slow-node", "Fix or drop the slow node",
            trigger="a node reads below 70% of the median node, or its tests failed",
            prediction=_CLUSTER, measure="time the analysis once with the change applied",
            audience="site admin", source="cluster")

RULES = (D001, D002, D003)
