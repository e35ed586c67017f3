"""The cluster's section of a report (``--dask``), as data every view shares (the per-node rows,
the scaling curves, the summary lines), and as Markdown and HTML (with the cluster scaling plot
as inline SVG).  No Rich, no Textual: the terminal view is :mod:`.cluster_view`."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hep_advisor.models.cluster_model import SLOW_NODE, ClusterPrediction
from hep_advisor.models.knee import knee
from hep_advisor.render import fmt

if TYPE_CHECKING:
    from hep_advisor.findings.cluster import ClusterAdvice

#: The most curves (workers per node) the scaling plot and table show.
MAX_CURVES = 4


@dataclass(frozen=True)
class NodeRow:
    """One node as the tables show it (MB/s; ``None``: not measured)."""

    name: str
    workers: int
    cores: int | None
    worker_mb_per_s: float | None
    low: float | None
    high: float | None
    together_mb_per_s: float | None
    events_per_s: float | None
    link_mb_per_s: float | None
    relative: float | None
    flag: str


NODE_HEADER = ("node", "workers/cores", "alone MB/s", "together MB/s", "events/s", "link MB/s",
               "vs median", "flag")
#: What the node table's columns are.
NODE_NOTE = ("alone: one worker's cold sequential read (the range of its samples); together: "
             "all the node's workers at once; events/s: the event loop on one worker, cold; "
             "vs median: alone against the median node")


def node_rows(cl: ClusterAdvice) -> list[NodeRow]:
    rel = {} if cl.fitted is None else {n.name: n.relative for n in cl.fitted.parameters.nodes}
    out = []
    for n in cl.nodes:
        cal = n.calibration
        rate = cal.worker_mb_per_s if cal is not None else None
        samples = [s for a in (cal.alone if cal is not None else ()) if a.measurement
                   for s in a.measurement.samples]
        low, high = (min(samples), max(samples)) if len(samples) > 1 else (None, None)
        together = cal.together.aggregate_mb_per_s if cal and cal.together else None
        loop = cal.event_loop if cal is not None else None
        cores = n.site.cpu.logical_cores if n.site is not None else None
        flags = []
        if n.errors or rate is None:
            flags.append("failed: " + (n.errors[0] if n.errors else "no read rate"))
        r = rel.get(n.name)
        if r is not None and r < SLOW_NODE:
            flags.append(f"slow: below {100 * SLOW_NODE:.0f}% of the median")
        if cores and len(n.workers) > cores:
            flags.append(f"{len(n.workers)} workers on {cores} logical cores")
        out.append(NodeRow(n.name, len(n.workers), cores, rate, low, high, together,
                           loop.events_per_s if loop is not None else None,
                           n.network.link_mb_per_s if n.network is not None else None, r,
                           "; ".join(flags)))
    return out


def short(x: float | None) -> str:
    """Three significant figures, k and M for tens of thousands and millions."""
    if x is None or not math.isfinite(x):
        return fmt.UNKNOWN
    if abs(x) >= 1e6:
        return f"{x / 1e6:.3g} M"
    if abs(x) >= 1e4:
        return f"{x / 1e3:.3g} k"
    return f"{x:.0f}" if abs(x) >= 100 else f"{x:.3g}"


def node_cells(row: NodeRow) -> list[str]:
    """A row's cells as text (the same in every view)."""
    alone = short(row.worker_mb_per_s)
    if row.worker_mb_per_s is not None and row.low is not None and row.high is not None:
        alone += f" ({short(row.low)}–{short(row.high)})"
    return [row.name, f"{row.workers}/{fmt.num(row.cores)}", alone,
            short(row.together_mb_per_s), short(row.events_per_s), short(row.link_mb_per_s),
            fmt.UNKNOWN if row.relative is None else f"{100 * row.relative:.0f}%",
            row.flag or "ok"]


def curve_workers(cl: ClusterAdvice) -> list[int]:
    """The workers per node the plot draws: 1, as now, the knee of the predicted rate at the
    nodes measured (advisor.knee: the fewest workers near the best), the most."""
    if cl.model is None:
        return []
    grid = sorted({p.workers_per_node for p in cl.model.predictions})
    if not grid:
        return []
    n0 = max(1, len(cl.fitted.parameters.nodes) if cl.fitted is not None else len(cl.nodes))
    at = {p.workers_per_node: p.aggregate_mb_per_s for p in cl.model.predictions
          if p.nodes == n0}
    best = knee(sorted(at.items())) if at else grid[-1]
    chosen = [w for w in dict.fromkeys([1, cl.workers_per_node, best, grid[-1]]) if w in grid]
    return sorted(chosen)[:MAX_CURVES]


def curves(cl: ClusterAdvice) -> dict[int, list[ClusterPrediction]]:
    """Workers per node -> the predictions over node counts."""
    if cl.model is None:
        return {}
    out: dict[int, list[ClusterPrediction]] = {}
    for w in curve_workers(cl):
        out[w] = sorted((p for p in cl.model.predictions if p.workers_per_node == w),
                        key=lambda p: p.nodes)
    return out


def measured_points(cl: ClusterAdvice) -> list[tuple[int, float, str]]:
    """(nodes, MB/s, what) measured at the workers per node now: one node's workers together
    (or alone, with one), and every node at once."""
    out: list[tuple[int, float, str]] = []
    together = [n.calibration.together.aggregate_mb_per_s for n in cl.nodes
                if n.calibration and n.calibration.together
                and n.calibration.together.aggregate_mb_per_s]
    alone = [n.calibration.worker_mb_per_s for n in cl.nodes
             if n.calibration and n.calibration.worker_mb_per_s]
    one = together if cl.workers_per_node > 1 else alone
    if one:
        s = sorted(one)
        out.append((1, s[len(s) // 2], "one node (the median)"))
    if cl.shared_storage is not None and cl.shared_storage.aggregate_mb_per_s:
        out.append((cl.shared_storage.nodes, cl.shared_storage.aggregate_mb_per_s,
                    "every node at once"))
    return out


def capacity(cl: ClusterAdvice) -> float | None:
    if cl.fitted is None:
        return None
    p = cl.fitted.parameters
    return p.shared_capacity_mb_per_s * p.storage_servers if p.shared_capacity_mb_per_s \
        else None


def summary_lines(cl: ClusterAdvice) -> list[tuple[str, str]]:
    """(key, value) lines on the cluster: scheduler, nodes, shared storage, saturation."""
    if cl.error:
        return [("scheduler", cl.scheduler), ("error", cl.error)]
    out = [("scheduler", cl.scheduler),
           ("nodes", f"{len(cl.nodes)} ({cl.workers} workers, {cl.workers_per_node} per node "
                     f"now; grouped by {cl.group_by})")]
    sh = cl.shared_storage
    if sh is not None:
        out.append(("every node at once", f"{fmt.rate(sh.aggregate_mb_per_s)} MB/s measured "
                    f"({sh.workers} workers)" if sh.aggregate_mb_per_s else
                    f"failed: {sh.error}"))
    cap = capacity(cl)
    p = cl.fitted.parameters if cl.fitted is not None else None
    if cap is not None:
        out.append(("shared storage", f"{fmt.rate(cap)} MB/s capacity (fitted)"))
    elif p is not None and p.shared_at_least_mb_per_s:
        out.append(("shared storage", f"not saturated: at least "
                    f"{fmt.rate(p.shared_at_least_mb_per_s)} MB/s"))
    if cl.saturates_at_nodes is not None:
        w = cl.workers_per_node
        out.append(("saturates", f"past {cl.saturates_at_nodes} nodes at {w} "
                    f"worker{'s' if w > 1 else ''} each"))
    if p is not None and p.cpu_mb_per_s:
        out.append(("CPU per worker", f"{fmt.rate(p.cpu_mb_per_s)} MB/s (the workers' warm "
                    "event loop)"))
    out.append(("tests", f"{cl.elapsed_s:.0f} s, {fmt.mb(cl.bytes_read)} read"))
    out += [("note", n) for n in (*cl.notes, *cl.skipped)]
    return out


def scaling_cells(cl: ClusterAdvice) -> tuple[list[str], list[list[str]]]:
    """The scaling table: one row per node count, a column per curve (MB/s with interval)."""
    cs = curves(cl)
    header = ["nodes", *(f"{w} per node MB/s" for w in cs)]
    counts = sorted({p.nodes for ps in cs.values() for p in ps})
    rows = []
    for n in counts:
        row = [str(n)]
        for ps in cs.values():
            p = next((q for q in ps if q.nodes == n), None)
            row.append(fmt.UNKNOWN if p is None else
                       fmt.rate_interval(p.aggregate_mb_per_s, p.low, p.high)
                       + ("*" if p.extrapolated else ""))
        rows.append(row)
    return header, rows


EXTRAPOLATED_NOTE = "* beyond what was measured (more nodes or workers per node)"


# -- Markdown ----------------------------------------------------------------------------------

def cluster_markdown(cl: ClusterAdvice) -> list[str]:
    from hep_advisor.render.mdkit import esc, table

    out = ["## Cluster", ""]
    out += table(["", ""], ([f"**{k}**", esc(v)] for k, v in summary_lines(cl)))
    if cl.error:
        return out
    out += table(list(NODE_HEADER), ([esc(c) for c in node_cells(r)] for r in node_rows(cl)),
                 "lrrrrrrl")
    out += [esc(NODE_NOTE), ""]
    header, rows = scaling_cells(cl)
    if rows:
        out += ["### Predicted aggregate over nodes", ""]
        out += table(header, ([esc(c) for c in r] for r in rows), "r" * len(header))
        out += [esc(EXTRAPOLATED_NOTE), ""]
    return out


# -- HTML --------------------------------------------------------------------------------------

PALETTE = ("#0969da", "#1a7f37", "#8250df", "#bc4c00")


def cluster_svg(cl: ClusterAdvice) -> str:
    """The cluster scaling plot: aggregate MB/s against nodes, one curve (with its interval
    band) per workers per node, the shared storage's capacity and the measured points."""
    from hep_advisor.render.htmlkit import (
        COLORS,
        PLOT_HEIGHT,
        PLOT_LEFT,
        PLOT_RIGHT,
        PLOT_TOP,
        SVG_WIDTH,
        e,
    )

    cs = curves(cl)
    if not cs:
        return ""
    meas = measured_points(cl)
    cap = capacity(cl)
    xs = [p.nodes for ps in cs.values() for p in ps] + [n for n, _, _ in meas]
    ys = [p.high or p.aggregate_mb_per_s for ps in cs.values() for p in ps] + \
        [y for _, y, _ in meas] + ([cap] if cap else [])
    x_lo, x_hi = 0.75, max(xs) + 0.25
    y_hi = max(ys) * 1.12 if ys else 1.0
    plot_w = SVG_WIDTH - PLOT_LEFT - PLOT_RIGHT
    x0, y0 = PLOT_LEFT, PLOT_TOP

    def xm(x: float) -> float:
        return x0 + (x - x_lo) / (x_hi - x_lo) * plot_w

    def ym(y: float) -> float:
        return y0 + PLOT_HEIGHT - y / y_hi * PLOT_HEIGHT

    def pts(points: Iterable[tuple[float, float]]) -> str:
        return " ".join(f"{xm(x):.1f},{ym(y):.1f}" for x, y in points)

    out = [f'<text x="{x0}" y="20" font-size="14" font-weight="600">cluster: aggregate MB/s '
           "against nodes</text>"]
    step = _step(y_hi)
    v = 0.0
    while v <= y_hi:
        out.append(f'<line x1="{x0}" y1="{ym(v):.1f}" x2="{x0 + plot_w}" y2="{ym(v):.1f}" '
                   'stroke="#d0d7de"/>')
        out.append(f'<text x="{x0 - 6}" y="{ym(v) + 4:.1f}" font-size="11" text-anchor="end" '
                   f'fill="#57606a">{e(short(v))}</text>')
        v += step
    for n in range(1, math.floor(x_hi) + 1, max(1, math.ceil(x_hi / 12))):
        out.append(f'<text x="{xm(n):.1f}" y="{y0 + PLOT_HEIGHT + 17}" font-size="11" '
                   f'text-anchor="middle" fill="#57606a">{n}</text>')
    out.append(f'<rect x="{x0}" y="{y0}" width="{plot_w}" height="{PLOT_HEIGHT}" fill="none" '
               'stroke="#57606a"/>')
    out.append(f'<text x="{x0 + plot_w / 2:.1f}" y="{y0 + PLOT_HEIGHT + 34}" font-size="12" '
               'text-anchor="middle">nodes</text>')
    cy = y0 + PLOT_HEIGHT / 2
    out.append(f'<text x="16" y="{cy:.1f}" font-size="12" text-anchor="middle" '
               f'transform="rotate(-90 16 {cy:.1f})">aggregate MB/s</text>')
    legend: list[tuple[str, str]] = []
    for i, (w, ps) in enumerate(cs.items()):
        c = PALETTE[i % len(PALETTE)]
        band = [(p.nodes, p.high or p.aggregate_mb_per_s) for p in ps] + \
            [(p.nodes, p.low or p.aggregate_mb_per_s) for p in reversed(ps)]
        out.append(f'<polygon points="{pts(band)}" fill="{c}" fill-opacity="0.12"/>')
        out.append(f'<polyline points="{pts((p.nodes, p.aggregate_mb_per_s) for p in ps)}" '
                   f'fill="none" stroke="{c}" stroke-width="2"/>')
        for p in ps:
            out.append(f'<circle cx="{xm(p.nodes):.1f}" cy="{ym(p.aggregate_mb_per_s):.1f}" '
                       f'r="2.5" fill="{c}"><title>{p.nodes} nodes x {w}: predicted '
                       f"{e(fmt.rate_interval(p.aggregate_mb_per_s, p.low, p.high))} MB/s, "
                       f"limited by {e(p.limited_by)}</title></circle>")
        now = " (now)" if w == cl.workers_per_node else ""
        legend.append((f'<line x1="0" y1="-1" x2="22" y2="-1" stroke="{c}" stroke-width="2"/>',
                       f"{w} worker{'s' if w > 1 else ''} per node{now}, predicted"))
    if cap:
        out.append(f'<line x1="{x0}" y1="{ym(cap):.1f}" x2="{x0 + plot_w}" y2="{ym(cap):.1f}" '
                   f'stroke="{COLORS["capacity"]}" stroke-dasharray="10 3 2 3"/>')
        legend.append((f'<line x1="0" y1="-1" x2="22" y2="-1" stroke="{COLORS["capacity"]}" '
                       'stroke-dasharray="10 3 2 3"/>',
                       f"shared storage capacity (fitted): {fmt.rate(cap)} MB/s"))
    for n, y, what in meas:
        out.append(f'<circle cx="{xm(n):.1f}" cy="{ym(y):.1f}" r="4.5" '
                   f'fill="{COLORS["measured"]}"><title>measured, {e(what)}: {e(fmt.rate(y))} '
                   "MB/s</title></circle>")
    if meas:
        legend.append((f'<circle cx="11" cy="-1" r="4.5" fill="{COLORS["measured"]}"/>',
                       f"measured at {cl.workers_per_node} per node (raw cold reads)"))
    ly = y0 + PLOT_HEIGHT + 58
    for i, (swatch, label) in enumerate(legend):
        out.append(f'<g transform="translate({x0},{ly + i * 17})">{swatch}'
                   f'<text x="30" y="3" font-size="11">{e(label)}</text></g>')
    height = ly + len(legend) * 17
    return (f'<svg viewBox="0 0 {SVG_WIDTH} {height}" width="{SVG_WIDTH}" height="{height}" '
            'role="img" aria-label="cluster scaling">' + "".join(out) + "</svg>")


def _step(span: float) -> float:
    raw = span / 5 if span > 0 else 1.0
    mag = 10 ** math.floor(math.log10(raw))
    return next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)


def cluster_html(cl: ClusterAdvice) -> str:
    from hep_advisor.render.htmlkit import e
    from hep_advisor.render.htmlkit import kv as _kv
    from hep_advisor.render.htmlkit import table as _table

    out = ["<h2>Cluster</h2>", _kv(summary_lines(cl))]
    if cl.error:
        return "".join(out)
    out.append(_table(list(NODE_HEADER), ([e(c) for c in node_cells(r)]
                                          for r in node_rows(cl)),
                      numeric=(1, 2, 3, 4, 5, 6)))
    out.append(f'<p class="dim">{e(NODE_NOTE)}</p>')
    header, rows = scaling_cells(cl)
    if rows:
        table = _table(header, ([e(c) for c in r] for r in rows),
                       numeric=tuple(range(len(header))))
        out.append(f'<div class="scaling"><figure>{cluster_svg(cl)}</figure><div>{table}'
                   f'<p class="dim">{e(EXTRAPOLATED_NOTE)}</p></div></div>')
    return "".join(out)
