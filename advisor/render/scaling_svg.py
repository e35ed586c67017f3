"""The scaling plot of one dataset as inline SVG, written by hand (the HTML report's and the
Jupyter fragment's; :mod:`.html` embeds it): the same :class:`~.scaling.ScalingData`, axes
and marks as the TUI's and matplotlib's plots (:meth:`~.scaling.ScalingData.plot_range`,
:meth:`~.scaling.ScalingData.marks`).  Every piece of text is escaped; the markup is
well-formed XML.

The prediction is the line, in its shaded interval; the measured points are markers; the knee
and the cores are dashed verticals labelled above the plot; the storage capacity is a
dash-dotted rule labelled on it.  Everything is drawn inside the axes, which are linear from
0: a series far above the curve is named in the legend with its value (``↑``), not drawn.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from hep_advisor.render import fmt, scaling
from hep_advisor.render.htmlkit import COLORS, SVG_WIDTH, e, tick_label

if TYPE_CHECKING:
    from hep_advisor.findings.advice import Advice

__all__ = ["PLOT_BOX", "scaling_svg"]

#: The axes' box: left, top, width, height (the marks' labels above it, the legend under it)
PLOT_BOX = (64, 54, SVG_WIDTH - 64 - 22, 240)
MARK_COLOR = "#57606a"
HALO = 'paint-order="stroke" stroke="#fff" stroke-width="3" stroke-linejoin="round"'


def scaling_svg(advice: Advice, uid: str = "") -> str:
    """The scaling plot of one dataset as inline SVG: predicted aggregate MB/s against workers
    in its interval, the measured points (the parallel event loop; raw cold reads, which skip
    decompression), the knee and the cores, and the storage's capacity.  ``uid``: the
    plot's id on a page of several (``data-plot``); the markup itself defines no id."""
    d = scaling.scaling_data(advice)
    if d.empty:
        return ""
    r = d.plot_range()
    x0, y0, plot_w, plot_h = PLOT_BOX
    pad = max(0.25, 0.04 * (r.xmax - 1))
    x_lo, x_hi = 1.0 - pad, r.xmax + pad

    def xmap(x: float) -> float:
        return x0 + (x - x_lo) / (x_hi - x_lo) * plot_w

    def ymap(y: float) -> float:
        return y0 + plot_h - y / r.ymax * plot_h

    def pts(points: Iterable[tuple[float, float]]) -> str:
        return " ".join(f"{xmap(x):.1f},{ymap(y):.1f}" for x, y in points)

    out: list[str] = [f'<text x="{x0}" y="20" font-size="14" font-weight="600">'
                      f"{e(d.label)}: predicted read rate against workers</text>"]
    out += _axes(r.yticks, r.xticks(), xmap, ymap)
    legend: list[tuple[str, str, str]] = []  # (swatch svg, words, tooltip)
    if d.workers:
        band = [*zip(d.workers, d.high, strict=True),
                *reversed(list(zip(d.workers, d.low, strict=True)))]
        out.append(f'<polygon points="{pts(band)}" fill="{COLORS["predicted"]}" '
                   'fill-opacity="0.2" stroke="none"/>')
    for m in d.marks():  # under the curve and the points
        x = xmap(m.workers)
        out.append(f'<line x1="{x:.1f}" y1="{y0}" x2="{x:.1f}" y2="{y0 + plot_h}" '
                   f'stroke="{MARK_COLOR}" stroke-width="1.2" stroke-dasharray="4 3"/>')
    out += _mark_labels(d.marks(), xmap, x0, x0 + plot_w, y0)
    if d.capacity is not None and r.capacity_drawn:
        y = ymap(d.capacity)
        out.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x0 + plot_w}" y2="{y:.1f}" '
                   f'stroke="{COLORS["capacity"]}" stroke-width="1.5" '
                   'stroke-dasharray="10 3 2 3"/>')
        below = y - y0 < 16  # at the top of the axes: the words under the rule
        out.append(f'<text x="{x0 + plot_w - 4}" y="{y + (13 if below else -5):.1f}" '
                   f'font-size="11" text-anchor="end" fill="{COLORS["capacity"]}" {HALO}>'
                   f"{e(scaling.CAPACITY_LABEL)}: {e(fmt.mb_per_s(d.capacity))}</text>")
        legend.append((f'<line x1="0" y1="-1" x2="22" y2="-1" stroke="{COLORS["capacity"]}" '
                       'stroke-width="1.5" stroke-dasharray="10 3 2 3"/>',
                       f"{scaling.CAPACITY_LABEL}: {scaling.CAPACITY_NOTE}", ""))
    if d.workers:
        out.append(f'<polyline points="{pts(zip(d.workers, d.predicted, strict=True))}" '
                   f'fill="none" stroke="{COLORS["predicted"]}" stroke-width="2.5" '
                   'stroke-linejoin="round"/>')
        for w, y, lo, hi in zip(d.workers, d.predicted, d.low, d.high, strict=True):
            out.append(f'<circle cx="{xmap(w):.1f}" cy="{ymap(y):.1f}" r="2.5" '
                       f'fill="{COLORS["predicted"]}"><title>{w} workers: predicted '
                       f"{e(fmt.rate_interval(y, lo, hi))} MB/s</title></circle>")
        legend.insert(0, (f'<rect x="0" y="-7" width="22" height="12" '
                          f'fill="{COLORS["predicted"]}" fill-opacity="0.2"/>'
                          f'<line x1="0" y1="-1" x2="22" y2="-1" stroke="{COLORS["predicted"]}" '
                          'stroke-width="2.5"/>',
                          f"predicted, in its {fmt.percent(d.level)} interval (shaded)", ""))
    if r.raw_drawn:
        for w, y in d.raw_reads:
            x, yy = xmap(w), ymap(y)
            out.append(f'<rect x="{x - 4:.1f}" y="{yy - 4:.1f}" width="8" height="8" '
                       f'fill="#fff" stroke="{COLORS["raw"]}" stroke-width="1.8"><title>{w} '
                       f"workers: raw reads {e(fmt.rate(y))} MB/s (cold, no decompression)"
                       "</title></rect>")
        legend.append((f'<rect x="7" y="-5" width="8" height="8" fill="none" '
                       f'stroke="{COLORS["raw"]}" stroke-width="1.8"/>', scaling.RAW_LABEL, ""))
    for w, y in d.measured:
        out.append(f'<circle cx="{xmap(w):.1f}" cy="{ymap(y):.1f}" r="4.5" '
                   f'fill="{COLORS["measured"]}" stroke="#fff" stroke-width="1"><title>{w} '
                   f"workers: measured {e(fmt.rate(y))} MB/s (event loop, warm)</title>"
                   "</circle>")
    if d.measured:
        legend.insert(1 if d.workers else 0,
                      (f'<circle cx="11" cy="-1" r="4.5" fill="{COLORS["measured"]}"/>',
                       scaling.MEASURED_LABEL, ""))
    raw_values = "; ".join(f"{w} worker{'s' if w != 1 else ''}: {fmt.mb_per_s(y)}"
                           for w, y in d.raw_reads)
    for what in r.off_scale:
        tip = f"{scaling.RAW_LABEL}: {raw_values}" if what.startswith(scaling.RAW_SHORT) \
            else scaling.CAPACITY_NOTE
        legend.append((f'<text x="11" y="4" font-size="13" font-weight="700" '
                       f'text-anchor="middle" fill="{COLORS["capacity"]}">↑</text>',
                       f"{what}, off the scale (not drawn)", tip))
    # the legend, under the axes' titles
    ly = y0 + plot_h + 70
    for i, (swatch, words, tip) in enumerate(legend):
        title = f"<title>{e(tip)}</title>" if tip else ""
        out.append(f'<g transform="translate({x0},{ly + i * 17})">{title}{swatch}'
                   f'<text x="30" y="3" font-size="11">{e(words)}</text></g>')
    height = ly + len(legend) * 17
    return (f'<svg viewBox="0 0 {SVG_WIDTH} {height}" width="{SVG_WIDTH}" height="{height}" '
            'font-family="system-ui,-apple-system,Segoe UI,Roboto,sans-serif" '
            f'role="img" aria-label="{e(d.label)}: predicted and measured scaling"'
            + (f' data-plot="{e(uid)}"' if uid else "") + ">" + "".join(out) + "</svg>")


def _axes(yticks: tuple[float, ...], xticks: tuple[int, ...], fx: Callable[[float], float],
          fy: Callable[[float], float]) -> list[str]:
    """The grid, the ticks, the box and the axes' titles (MB/s, workers, and what a MB/s
    is)."""
    x0, y0, plot_w, plot_h = PLOT_BOX
    out: list[str] = []
    for v in yticks:
        y = fy(v)
        out.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x0 + plot_w}" y2="{y:.1f}" '
                   'stroke="#d0d7de" stroke-width="1"/>')
        out.append(f'<text x="{x0 - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end" '
                   f'fill="#57606a">{e(tick_label(v))}</text>')
    for w in xticks:
        x = fx(w)
        out.append(f'<line x1="{x:.1f}" y1="{y0 + plot_h}" x2="{x:.1f}" '
                   f'y2="{y0 + plot_h + 4}" stroke="#57606a"/>')
        out.append(f'<text x="{x:.1f}" y="{y0 + plot_h + 17}" font-size="11" '
                   f'text-anchor="middle" fill="#57606a">{w}</text>')
    out.append(f'<rect x="{x0}" y="{y0}" width="{plot_w}" height="{plot_h}" fill="none" '
               'stroke="#57606a"/>')
    out.append(f'<text x="{x0 + plot_w / 2:.1f}" y="{y0 + plot_h + 34}" font-size="12" '
               f'text-anchor="middle">{e(scaling.X_AXIS)}</text>')
    out.append(f'<text x="{x0 + plot_w / 2:.1f}" y="{y0 + plot_h + 50}" font-size="11" '
               f'text-anchor="middle" fill="#57606a">{e(scaling.UNITS_NOTE)}</text>')
    cy = y0 + plot_h / 2
    out.append(f'<text x="16" y="{cy:.1f}" font-size="12" text-anchor="middle" '
               f'transform="rotate(-90 16 {cy:.1f})">{e(scaling.Y_AXIS)}</text>')
    return out


def _mark_labels(marks: tuple[scaling.Mark, ...], fx: Callable[[float], float], left: float,
                 right: float, y0: float) -> list[str]:
    """Each mark's words above the axes, centred on its line; words that would touch the
    previous ones move right, and none passes the axes' ends."""
    out: list[str] = []
    free = left
    for m in marks:
        width = 6.4 * len(m.label)  # about, at 11 px
        start = min(max(fx(m.workers) - width / 2, free, left), right - width)
        out.append(f'<text x="{start:.1f}" y="{y0 - 6}" font-size="11" '
                   f'fill="{MARK_COLOR}">{e(m.label)}</text>')
        free = start + width + 8
    return out
