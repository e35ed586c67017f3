"""The cluster part of the advice (``--dask ADDRESS``), as a plain result: every node, the
shared-storage test, the cluster model's summary and its recommendations (D001-D003).  Made by
:mod:`hep_advisor.pipeline.cluster_calibration`."""

from __future__ import annotations

from dataclasses import dataclass, field

from hep_advisor.models.cluster_model import ClusterModel, ClusterModelSummary
from hep_advisor.probes.cluster_probe import ClusterNode, ConcurrentRead

from .recommendation import Recommendation


@dataclass(frozen=True)
class ClusterAdvice:
    """What ``--dask`` adds to a report or calibration: the scheduler, every node (its
    workers, site probe, network and read tests), the shared-storage test (every worker of
    every node at once; ``null`` with one node), the model and its predictions, and
    ``saturates_at_nodes``: the node count (at ``workers_per_node`` workers each) past which
    one more node adds less than a tenth of a node's rate (``null``: not within
    ``SATURATION_LIMIT`` nodes, or the shared storage did not saturate when measured).
    ``error``: why there is no cluster result (the scheduler could not be reached, ...)."""

    scheduler: str
    group_by: str = "host"
    workers: int = 0
    nodes: tuple[ClusterNode, ...] = ()
    shared_storage: ConcurrentRead | None = None
    model: ClusterModelSummary | None = None
    workers_per_node: int = 1
    saturates_at_nodes: int | None = None
    #: D001-D003 (in the JSON among the report's recommendations, not here)
    recommendations: tuple[Recommendation, ...] = field(default=(), metadata={"json": False})
    notes: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    elapsed_s: float = 0.0
    bytes_read: int = 0
    error: str | None = None
    #: the tree the workers' event loop read (``null``: none)
    tree: str | None = None
    fitted: ClusterModel | None = field(default=None, repr=False, compare=False,
                                        metadata={"json": False})



def failed_nodes(advice: ClusterAdvice) -> list[ClusterNode]:
    """Nodes with no measured read rate (a failed test or probe)."""
    return [n for n in advice.nodes
            if n.calibration is None or n.calibration.worker_mb_per_s is None]
