"""The Cluster tab (``hep-advisor tui --dask ADDRESS``): the cluster's summary and per-node
table (the report's, :mod:`hep_advisor.render.cluster_view`) and the cluster scaling plot, the
predicted aggregate against nodes at the workers per node now (the Scaling tab's plot, its x
axis counting nodes).  The tab is added when an advice with a cluster arrives, so the app
without ``--dask`` keeps its six tabs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static, TabbedContent, TabPane

from hep_advisor.render import cluster_parts as cp
from hep_advisor.render.scaling import ScalingData
from hep_advisor.tui.panes.base import show_if_loaded
from hep_advisor.tui.panes.scaling import ScalingPlot

if TYPE_CHECKING:

    from hep_advisor.findings.cluster import ClusterAdvice
    from hep_advisor.tui.source import Loaded

TAB_ID = "cluster"
TITLE = "7 Cluster"


def cluster_scaling(cl: ClusterAdvice) -> ScalingData | None:
    """The plot's series: the aggregate against nodes at the workers per node now (``workers``
    holds node counts), the measured points, the shared storage's capacity."""
    if cl.model is None:
        return None
    w = cl.workers_per_node
    preds = sorted((p for p in cl.model.predictions if p.workers_per_node == w),
                   key=lambda p: p.nodes)
    if not preds:
        return None
    return ScalingData(
        label=f"cluster, {w} per node", level=0.9,
        workers=tuple(p.nodes for p in preds),
        predicted=tuple(p.aggregate_mb_per_s for p in preds),
        low=tuple(p.low or p.aggregate_mb_per_s for p in preds),
        high=tuple(p.high or p.aggregate_mb_per_s for p in preds),
        measured=tuple((n, y) for n, y, _ in cp.measured_points(cl)), raw_reads=(),
        capacity=cp.capacity(cl), now=len(cl.nodes))


class ClusterPlot(ScalingPlot):
    """The Scaling tab's plot with node counts on its x axis."""

    X_NAME = "nodes"
    EMPTY = "No cluster prediction."


class ClusterPane(VerticalScroll):
    DEFAULT_CSS = """
    ClusterPane ClusterPlot { height: 18; }
    """

    def compose(self) -> ComposeResult:
        yield Static("", id="cluster-summary")
        yield ClusterPlot(id="cluster-plot")
        yield Static("", id="cluster-tables")

    def on_mount(self) -> None:
        show_if_loaded(self)

    def show(self, loaded: Loaded, scaling: Any = None) -> None:
        from hep_advisor.render.cluster_view import cluster_tables, summary_grid

        cl = loaded.advice.cluster
        summary = self.query_one("#cluster-summary", Static)
        tables = self.query_one("#cluster-tables", Static)
        plot = self.query_one(ClusterPlot)
        if cl is None:
            summary.update(Content.styled("No cluster: run with --dask ADDRESS.",
                                          "$text-muted"))
            plot.set_data(None)
            tables.update("")
            return
        summary.update(summary_grid(cl))
        plot.set_data(None if cl.error else cluster_scaling(cl))
        if cl.error:
            tables.update("")
            return
        tables.update(cluster_tables(cl))


def show_cluster_tab(app: Any, loaded: Loaded) -> None:
    """Add the Cluster tab the first time an advice with a cluster arrives; show it."""
    if loaded.advice.cluster is None:
        return
    panes = list(app.query(ClusterPane))
    if panes:
        panes[0].show(loaded)
        return
    tabs = app.query_one(TabbedContent)
    tabs.add_pane(TabPane(TITLE, ClusterPane(id="cluster-pane"), id=TAB_ID))
