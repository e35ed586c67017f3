"""The cluster model: per-node rates, the caps on the aggregate, scaling and what-ifs.

From a :class:`hep_advisor.probes.cluster_probe.ClusterProfile` (or parameters given by hand):

* each node's **worker rate** r: one worker alone reading cold (MB/s, MB = 10^6 bytes), with
  the range of its samples as its interval; optionally combined with a CPU rate per worker
  (decompression and processing) as 1/r = 1/r_io + 1/r_cpu, the workers beyond the node's cores
  then counting as in :class:`hep_advisor.models.physics.Cores`;
* each node's **local capacity** C (its own disks): from its workers reading together, where
  that is measurably below w r.  w workers on the node give Ganis' form

      R_node(w) = w r / (1 + (w - 1) r / C)

  and, where the data crosses the network (shared storage that is not local to the node),
  at most the node's link L: min(R_node, L);
* the **shared storage capacity** S: from every worker of every node reading at once.  With the
  nodes' demand D = sum of R_node and r̄ = D / N (N workers in all), the aggregate is

      A = D / (1 + (D - r̄) / S)

  the same form again (for N identical workers it is N r / (1 + (N - 1) r / S)); solved for S
  from the measured A.  Where A is within :data:`SATURATION` of D the storage did not saturate:
  S is unknown (``None``; the aggregate is at least the measured figure) and predictions beyond
  the measured worker count are marked extrapolated.

Predictions run over nodes x workers per node (the measured nodes, taken in turn, stand for
the nodes of a larger cluster, so a mixed cluster stays mixed); each has an interval where the
figures behind it had a spread.  What-ifs: more nodes and more workers per node are just other
points; :meth:`ClusterModel.what_if` changes the storage servers (S scales with their number),
the nodes' links, or adds and removes nodes (heterogeneous clusters).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

import numpy as np

from .physics import Cores

if TYPE_CHECKING:
    from hep_advisor.probes.cluster_probe import ClusterProfile, ConcurrentRead

#: A measured aggregate at or above this share of the demand is "not saturated": the worker
#: rate (the calibration's cold sequential test) and the aggregate (a test timed over a common
#: window) are two tests, measured to differ by up to 9% on a throttled disk read alone.
SATURATION = 0.88
#: A node slower than this share of the median node is flagged (``NodeRates.relative``).
SLOW_NODE = 0.7
REMOTE_CLASSES = ("nfs", "lustre", "fuse", "remote")

LimitedBy = Literal["workers", "cores", "node-storage", "network", "shared-storage"]


@dataclass(frozen=True)
class NodeRates:
    """One node's parameters (MB/s).  ``worker_low``/``worker_high``: the range of the worker
    rate's samples (``None``: one sample, no interval); ``local_capacity``: the most the node's
    own storage gives all its workers (``None``: not reached, or not measured); ``network``:
    its link; ``cores``: physical cores (``None``: unknown); ``workers``: workers it had;
    ``relative``: its worker rate over the median node's.  A capacity with a low bound and no
    high one had no measurable upper bound."""

    name: str
    workers: int
    worker_mb_per_s: float
    worker_low_mb_per_s: float | None = None
    worker_high_mb_per_s: float | None = None
    local_capacity_mb_per_s: float | None = None
    local_capacity_low_mb_per_s: float | None = None
    local_capacity_high_mb_per_s: float | None = None
    network_mb_per_s: float | None = None
    cores: int | None = None
    relative: float = 1.0


@dataclass(frozen=True)
class ClusterParameters:
    """The model's parameters: the nodes, the shared storage capacity (``None``: not reached;
    then ``shared_at_least_mb_per_s`` is what it gave, with ``measured_workers`` reading),
    ``storage_servers`` (a multiplier of S, 1 as measured), ``remote`` (reads cross each node's
    link), the CPU rate per worker and the MB read per event (``None``: not used)."""

    nodes: tuple[NodeRates, ...]
    shared_capacity_mb_per_s: float | None
    shared_capacity_low_mb_per_s: float | None = None
    shared_capacity_high_mb_per_s: float | None = None
    shared_at_least_mb_per_s: float | None = None
    measured_workers: int = 0
    storage_servers: float = 1.0
    remote: bool = False
    cpu_mb_per_s: float | None = None
    mb_per_event: float | None = None


@dataclass(frozen=True)
class ClusterPrediction:
    """The aggregate of ``nodes`` x ``workers_per_node`` workers (MB/s; ``low``/``high``: its
    interval, ``None`` where not measurable); ``events_per_s`` where the MB per event is known;
    ``limited_by``: what holds it back most; ``extrapolated``: beyond what was measured."""

    nodes: int
    workers_per_node: int
    aggregate_mb_per_s: float
    low: float | None
    high: float | None
    events_per_s: float | None
    limited_by: LimitedBy
    extrapolated: bool


@dataclass(frozen=True)
class ClusterModelSummary:
    """What the JSON document carries: the parameters and the predictions."""

    parameters: ClusterParameters
    predictions: tuple[ClusterPrediction, ...]


# ---------------------------------------------------------------------------------------------
# the rate equations


def contended(demand: float, per_worker: float, capacity: float | None) -> float:
    """Ganis' form: ``demand`` (the workers' rates summed) through a device of ``capacity``,
    ``per_worker`` their mean rate; no capacity: the demand."""
    if capacity is None or not math.isfinite(capacity) or demand <= 0:
        return demand
    return demand / (1.0 + max(0.0, demand - per_worker) / capacity)


def capacity_from(measured: float, demand: float, per_worker: float) -> float | None:
    """S such that ``contended(demand, per_worker, S) == measured``; ``None`` where the
    measured figure is within :data:`SATURATION` of the demand (no measurable saturation)."""
    if not (measured > 0 and demand > 0) or measured >= SATURATION * demand:
        return None
    extra = demand - per_worker
    if extra <= 0:
        return None
    return extra / (demand / measured - 1.0)


def _range(samples: Sequence[float]) -> tuple[float | None, float | None]:
    if len(samples) < 2:
        return None, None
    return min(samples), max(samples)


# ---------------------------------------------------------------------------------------------
# the model


Which = Literal["value", "low", "high"]


class ClusterModel:
    """Predicts the aggregate read rate of a cluster from :class:`ClusterParameters`."""

    def __init__(self, parameters: ClusterParameters) -> None:
        if not parameters.nodes:
            raise ValueError("a cluster model needs at least one node")
        self.parameters = parameters

    # -- building --------------------------------------------------------------------------
    @classmethod
    def from_profile(cls, profile: ClusterProfile, *, remote: bool | None = None,
                     cpu_mb_per_s: float | None = None,
                     mb_per_event: float | None = None) -> ClusterModel:
        """The model of a probed cluster.  ``remote``: whether the reads cross the nodes' links
        (default: whether any node's storage is NFS, Lustre, FUSE or a URL)."""
        nodes: list[NodeRates] = []
        for node in profile.nodes:
            cal = node.calibration
            if cal is None or cal.worker_mb_per_s is None:
                continue
            samples = [s for a in cal.alone if a.measurement is not None
                       for s in a.measurement.samples]
            low, high = _range(samples)
            r = cal.worker_mb_per_s
            cap = cap_low = cap_high = None
            if cal.together is not None and cal.together.aggregate_mb_per_s:
                w = cal.together.workers
                cap = capacity_from(cal.together.aggregate_mb_per_s, w * r, r)
                if cap is not None and cal.together.measurement is not None:
                    t_low, t_high = _range(cal.together.measurement.samples)
                    if t_low is not None and t_high is not None:
                        cap_low = capacity_from(t_low, w * (high or r), high or r)
                        cap_high = capacity_from(t_high, w * (low or r), low or r)
            cores = node.site.cpu.physical_cores if node.site is not None else None
            link = node.network.link_mb_per_s if node.network is not None else None
            nodes.append(NodeRates(node.name, len(node.workers), r, low, high, cap, cap_low,
                                   cap_high, link, cores))
        if not nodes:
            raise ValueError("no node of the cluster has a measured read rate")
        nodes = _with_relative(nodes)
        if remote is None:
            remote = any(s.fs_class in REMOTE_CLASSES for n in profile.nodes if n.site
                         for s in n.site.storage)
        params = ClusterParameters(tuple(nodes), None, remote=remote,
                                   cpu_mb_per_s=cpu_mb_per_s, mb_per_event=mb_per_event,
                                   measured_workers=max(n.workers for n in nodes))
        shared = profile.shared_storage
        if shared is not None and shared.aggregate_mb_per_s:
            params = _with_shared(params, shared, profile)
        return cls(params)

    # -- predicting ------------------------------------------------------------------------
    def node_mix(self, n: int) -> list[NodeRates]:
        """The nodes of an ``n``-node cluster: the measured ones, taken in turn."""
        nodes = self.parameters.nodes
        return [nodes[i % len(nodes)] for i in range(n)]

    def _node_rate(self, node: NodeRates, w: int, which: Which,
                   lift: frozenset[str] = frozenset()) -> tuple[float, float]:
        """(MB/s the node's ``w`` workers deliver, its effective workers); the limits named in
        ``lift`` (``cores``, ``node-storage``, ``network``) left out."""
        p = self.parameters
        r = node.worker_mb_per_s
        cap = node.local_capacity_mb_per_s
        if which == "low":
            r = node.worker_low_mb_per_s or r
            cap = node.local_capacity_low_mb_per_s or cap
        elif which == "high":
            r = node.worker_high_mb_per_s or r
            if node.local_capacity_low_mb_per_s is not None:  # None: no upper bound
                cap = node.local_capacity_high_mb_per_s
        w_eff = float(w)
        if p.cpu_mb_per_s:
            r = 1.0 / (1.0 / r + 1.0 / p.cpu_mb_per_s)
            if node.cores and "cores" not in lift:
                w_eff = float(Cores(node.cores).effective(np.asarray([w]))[0])
        rate = w_eff * r
        if "node-storage" not in lift:
            rate = contended(rate, r, cap)
        if p.remote and node.network_mb_per_s and "network" not in lift:
            rate = min(rate, node.network_mb_per_s)
        return rate, w_eff

    def _total(self, nodes: Sequence[NodeRates], w: int, which: Which,
               lift: frozenset[str] = frozenset()) -> float:
        p = self.parameters
        demand = workers = 0.0
        for node in nodes:
            rate, w_eff = self._node_rate(node, w, which, lift)
            demand += rate
            workers += w_eff
        cap = p.shared_capacity_mb_per_s
        if which == "low":
            cap = p.shared_capacity_low_mb_per_s or cap
        elif which == "high" and p.shared_capacity_low_mb_per_s is not None:
            cap = p.shared_capacity_high_mb_per_s  # None: no upper bound
        if cap is None or "shared-storage" in lift:
            return demand
        return contended(demand, demand / max(workers, 1.0), cap * p.storage_servers)

    def _aggregate(self, nodes: Sequence[NodeRates], w: int, which: Which
                   ) -> tuple[float, LimitedBy]:
        """The aggregate, and the limit whose removal would raise it most (``workers`` where
        none would by 5% or more)."""
        total = self._total(nodes, w, which)
        names: tuple[LimitedBy, ...] = ("shared-storage", "network", "node-storage", "cores")
        gains = {name: self._total(nodes, w, which, frozenset([name])) for name in names}
        best = max(names, key=lambda name: gains[name])
        limited: LimitedBy = best if gains[best] > 1.05 * total else "workers"
        return total, limited

    def predict(self, nodes: int | Sequence[NodeRates], workers_per_node: int
                ) -> ClusterPrediction:
        """The aggregate of ``nodes`` (a count, or the nodes themselves) with
        ``workers_per_node`` workers each."""
        p = self.parameters
        mix = self.node_mix(nodes) if isinstance(nodes, int) else list(nodes)
        if not mix or workers_per_node < 1:
            raise ValueError("need at least one node and one worker per node")
        value, limited = self._aggregate(mix, workers_per_node, "value")
        spread_known = any(n.worker_low_mb_per_s is not None for n in mix) or (
            p.shared_capacity_low_mb_per_s is not None)
        low = high = None
        if spread_known:
            low = self._aggregate(mix, workers_per_node, "low")[0]
            high = self._aggregate(mix, workers_per_node, "high")[0]
            low, high = min(low, value), max(high, value)
        measured_w = max(n.workers for n in p.nodes)
        n_workers = len(mix) * workers_per_node
        extrapolated = (len(mix) > len(p.nodes) or workers_per_node > measured_w
                        or (p.shared_capacity_mb_per_s is None
                            and n_workers > max(p.measured_workers, 1)))
        events = value / p.mb_per_event if p.mb_per_event else None
        return ClusterPrediction(len(mix), workers_per_node, value, low, high, events, limited,
                                 extrapolated)

    def scaling(self, nodes: Iterable[int] | None = None,
                workers_per_node: Iterable[int] | None = None) -> tuple[ClusterPrediction, ...]:
        """Predictions over a grid (default: 1 to twice the measured nodes, and 1 to twice the
        most workers a node had, at least to its cores)."""
        p = self.parameters
        if nodes is None:
            nodes = range(1, min(64, 2 * len(p.nodes)) + 1)
        if workers_per_node is None:
            most = max(max(n.workers for n in p.nodes), max(n.cores or 1 for n in p.nodes))
            workers_per_node = range(1, min(64, 2 * most) + 1)
        wpn = list(workers_per_node)
        return tuple(self.predict(n, w) for n in nodes for w in wpn)

    def saturation(self, workers_per_node: int = 1, limit: int = 1024) -> int | None:
        """The node count past which one more node adds less than 10% of a node's rate: where
        the shared storage (or the network) saturates; ``None`` if not within ``limit``."""
        prev = self._total(self.node_mix(1), workers_per_node, "value")
        one = prev
        for n in range(2, limit + 1):
            cur = self._total(self.node_mix(n), workers_per_node, "value")
            if cur - prev < 0.1 * one:
                return n - 1
            prev = cur
        return None

    def summary(self, nodes: Iterable[int] | None = None,
                workers_per_node: Iterable[int] | None = None) -> ClusterModelSummary:
        return ClusterModelSummary(self.parameters, self.scaling(nodes, workers_per_node))

    # -- what-ifs --------------------------------------------------------------------------
    def what_if(self, *, storage_servers: float | None = None,
                network_mb_per_s: float | None = None,
                add_nodes: Sequence[NodeRates] = (),
                drop_nodes: Iterable[str] = (),
                cpu_mb_per_s: float | None = None) -> ClusterModel:
        """Another cluster: ``storage_servers`` times the shared storage's capacity (S scales
        with the servers or devices behind it), every node's link at ``network_mb_per_s``,
        ``add_nodes`` (heterogeneous nodes) and without the nodes named in ``drop_nodes``, a
        CPU rate per worker.  More nodes or workers per node: :meth:`predict` at them."""
        p = self.parameters
        drop = set(drop_nodes)
        nodes = [n for n in p.nodes if n.name not in drop] + list(add_nodes)
        if network_mb_per_s is not None:
            nodes = [replace(n, network_mb_per_s=network_mb_per_s) for n in nodes]
        params = replace(
            p, nodes=tuple(_with_relative(nodes)),
            storage_servers=p.storage_servers * (storage_servers or 1.0),
            cpu_mb_per_s=cpu_mb_per_s if cpu_mb_per_s is not None else p.cpu_mb_per_s)
        return ClusterModel(params)

    def slow_nodes(self, threshold: float = SLOW_NODE) -> list[NodeRates]:
        """Nodes whose worker rate is below ``threshold`` of the median node's."""
        return [n for n in self.parameters.nodes if n.relative < threshold]


def _with_relative(nodes: Sequence[NodeRates]) -> list[NodeRates]:
    rates = sorted(n.worker_mb_per_s for n in nodes)
    if not rates:
        return []
    median = rates[len(rates) // 2] if len(rates) % 2 else 0.5 * (
        rates[len(rates) // 2 - 1] + rates[len(rates) // 2])
    return [replace(n, relative=n.worker_mb_per_s / median if median > 0 else 1.0)
            for n in nodes]


def _with_shared(params: ClusterParameters, shared: ConcurrentRead,
                 profile: ClusterProfile) -> ClusterParameters:
    """S from the shared test: the demand of the nodes as they were (their worker counts),
    through their own caps, against what every worker read at once."""
    model = ClusterModel(params)
    by_name = {n.name: n for n in params.nodes}
    counts = {n.name: len(n.workers) for n in profile.nodes if n.name in by_name}

    def demand(which: Which) -> tuple[float, float]:
        total = workers = 0.0
        for name, w in counts.items():
            rate, w_eff = model._node_rate(by_name[name], w, which)
            total += rate
            workers += w_eff
        return total, total / max(workers, 1.0)

    measured = shared.aggregate_mb_per_s or 0.0
    d, r = demand("value")
    cap = capacity_from(measured, d, r)
    cap_low = cap_high = None
    if cap is not None and shared.measurement is not None:
        a_low, a_high = _range(shared.measurement.samples)
        if a_low is not None and a_high is not None:
            cap_low = capacity_from(a_low, *demand("high"))
            # None with a low bound: no saturation at the high end, no upper bound on S
            cap_high = capacity_from(a_high, *demand("low"))
    return replace(params, shared_capacity_mb_per_s=cap, shared_capacity_low_mb_per_s=cap_low,
                   shared_capacity_high_mb_per_s=cap_high,
                   shared_at_least_mb_per_s=measured if cap is None else None,
                   measured_workers=shared.workers)
