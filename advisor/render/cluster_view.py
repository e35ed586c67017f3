"""Rich view of the cluster (``--dask``): its summary, the per-node table and the predicted
aggregate over nodes for a few workers-per-node counts (the rows of
:mod:`.cluster_parts`, shared with the Markdown and HTML reports and the TUI)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich import box
from rich.console import Group, RenderableType
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from hep_advisor.render import cluster_parts as cp

if TYPE_CHECKING:
    from hep_advisor.findings.cluster import ClusterAdvice


def summary_grid(cl: ClusterAdvice) -> Table:
    g = Table.grid(padding=(0, 2))
    g.add_column(style="bold", no_wrap=True)
    g.add_column(overflow="fold")
    for k, v in cp.summary_lines(cl):
        g.add_row(k, Text(v, style="yellow" if k in ("note", "error") else ""))
    return g


def node_table(cl: ClusterAdvice) -> RenderableType:
    """The per-node table (its flags, one line per flagged node, under it: readable at 80
    columns)."""
    t = Table(box=box.SIMPLE_HEAD, title="nodes", title_justify="left", caption=cp.NODE_NOTE,
              caption_justify="left")
    header = cp.NODE_HEADER[:-1]
    for i, h in enumerate(header):
        t.add_column(h.replace(" ", "\n").replace("s/c", "s/\nc"),
                     justify="left" if i == 0 else "right", overflow="fold")
    rows = cp.node_rows(cl)
    for row in rows:
        t.add_row(*cp.node_cells(row)[:-1], style="red" if row.flag else "")
    flags = [Text(f"{row.name}: {row.flag}", style="red") for row in rows if row.flag]
    return Group(t, *flags) if flags else t


def scaling_table(cl: ClusterAdvice) -> Table | None:
    header, rows = cp.scaling_cells(cl)
    if not rows:
        return None
    t = Table(box=box.SIMPLE_HEAD, title="predicted aggregate over nodes",
              title_justify="left", caption=cp.EXTRAPOLATED_NOTE, caption_justify="left")
    for h in header:
        t.add_column(h, justify="right")
    for r in rows:
        t.add_row(*r)
    return t


def cluster_tables(cl: ClusterAdvice) -> RenderableType:
    """The per-node table and the predicted aggregate over nodes."""
    table = scaling_table(cl)
    return Group(node_table(cl), table) if table is not None else node_table(cl)


def cluster_view(cl: ClusterAdvice) -> RenderableType:
    parts: list[RenderableType] = [Rule("cluster (Dask)", align="left"), summary_grid(cl)]
    if cl.error is None:
        parts.append(cluster_tables(cl))
    return Group(*parts)
