"""The scaling plot of one dataset as inline SVG, written by hand (the HTML report's and the
Jupyter fragment's; :mod:`.html` embeds it): the same :class:`~.scaling.ScalingData` as the
TUI's and matplotlib's plots.  Every piece of text is escaped; the markup is well-formed XML.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

from hep_advisor.render import fmt, scaling
from hep_advisor.render.htmlkit import (
    COLORS,
    PLOT_HEIGHT,
    PLOT_LEFT,
    PLOT_RIGHT,
    PLOT_TOP,
    SVG_WIDTH,
    e,
    tick_label,
    ticks_linear,
    ticks_log,
)

if TYPE_CHECKING:
    from hep_advisor.findings.advice import Advice

__all__ = ["scaling_svg"]


def scaling_svg(advice: Advice, uid: str = "") -> str:
    """The scaling plot of one dataset as inline SVG: predicted aggregate MB/s against workers
    with its interval band, ideal linear scaling, the storage's capacity and the measured
    points (the parallel event loop; raw cold reads, which skip decompression)."""
    d = scaling.scaling_data(advice)
    if d.empty:
        return ""
    uid = uid or hashlib.sha1(d.label.encode()).hexdigest()[:8]
    xs = [*d.workers, *(w for w, _ in d.measured), *(w for w, _ in d.raw_reads)]
    pad = max(0.25, 0.04 * (max(xs) - 1))
    x_lo, x_hi = 1.0 - pad, float(max(xs)) + pad
    vals = d.values() or [1.0]
    log = d.log_scale()
    if log:
        y_lo, y_hi = min(vals) / 1.6, max(vals) * 1.6
    else:
        y_lo, y_hi = 0.0, max(vals) * 1.12
    plot_w = SVG_WIDTH - PLOT_LEFT - PLOT_RIGHT
    x0, y0 = PLOT_LEFT, PLOT_TOP

    def xmap(x: float) -> float:
        return x0 + (x - x_lo) / (x_hi - x_lo) * plot_w

    if log:
        lo10, hi10 = math.log10(y_lo), math.log10(y_hi)

        def ymap(y: float) -> float:
            y = max(y, y_lo / 10)
            return y0 + PLOT_HEIGHT - (math.log10(y) - lo10) / (hi10 - lo10) * PLOT_HEIGHT
    else:
        def ymap(y: float) -> float:
            return y0 + PLOT_HEIGHT - (y - y_lo) / (y_hi - y_lo) * PLOT_HEIGHT

    def pts(points: Iterable[tuple[float, float]]) -> str:
        return " ".join(f"{xmap(x):.1f},{ymap(y):.1f}" for x, y in points)

    legend: list[tuple[str, str]] = []  # (swatch svg, label)
    out: list[str] = []
    clip = f"hepa-clip-{uid}"
    out.append(f'<defs><clipPath id="{clip}"><rect x="{x0}" y="{y0}" width="{plot_w}" '
               f'height="{PLOT_HEIGHT}"/></clipPath></defs>')
    out.append(f'<text x="{x0}" y="20" font-size="14" font-weight="600">'
               f"{e(d.label)}: aggregate MB/s against workers</text>")
    # grid and axes
    yt = ticks_log(y_lo, y_hi) if log else ticks_linear(y_lo, y_hi)
    for v in yt:
        y = ymap(v)
        out.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x0 + plot_w}" y2="{y:.1f}" '
                   'stroke="#d0d7de" stroke-width="1"/>')
        out.append(f'<text x="{x0 - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end" '
                   f'fill="#57606a">{e(tick_label(v))}</text>')
    step = max(1, math.ceil((x_hi - x_lo) / 12))
    for w in range(1, math.floor(x_hi) + 1, step):
        x = xmap(w)
        out.append(f'<line x1="{x:.1f}" y1="{y0 + PLOT_HEIGHT}" x2="{x:.1f}" '
                   f'y2="{y0 + PLOT_HEIGHT + 4}" stroke="#57606a"/>')
        out.append(f'<text x="{x:.1f}" y="{y0 + PLOT_HEIGHT + 17}" font-size="11" '
                   f'text-anchor="middle" fill="#57606a">{w}</text>')
    out.append(f'<rect x="{x0}" y="{y0}" width="{plot_w}" height="{PLOT_HEIGHT}" fill="none" '
               'stroke="#57606a"/>')
    out.append(f'<text x="{x0 + plot_w / 2:.1f}" y="{y0 + PLOT_HEIGHT + 34}" font-size="12" '
               'text-anchor="middle">workers (jobs in parallel)</text>')
    ylabel = "aggregate MB/s (compressed)" + (", log scale" if log else "")
    cy = y0 + PLOT_HEIGHT / 2
    out.append(f'<text x="16" y="{cy:.1f}" font-size="12" text-anchor="middle" '
               f'transform="rotate(-90 16 {cy:.1f})">{e(ylabel)}</text>')
    body: list[str] = []
    # the analysis as it runs now
    if d.workers and x_lo <= d.now <= x_hi:
        x = xmap(d.now)
        body.append(f'<line x1="{x:.1f}" y1="{y0}" x2="{x:.1f}" y2="{y0 + PLOT_HEIGHT}" '
                    f'stroke="{COLORS["now"]}" stroke-dasharray="2 3"/>')
        body.append(f'<text x="{x + 4:.1f}" y="{y0 + 12}" font-size="11" '
                    f'fill="{COLORS["now"]}">now</text>')
    if d.workers:
        upper = list(zip(d.workers, d.high, strict=True))
        lower = list(zip(d.workers, d.low, strict=True))
        band = [*upper, *reversed(lower)]
        body.append(f'<polygon points="{pts(band)}" fill="{COLORS["predicted"]}" '
                    'fill-opacity="0.18" stroke="none"/>')
        if d.ideal:
            ideal = pts(zip(d.workers, d.ideal, strict=True))
            body.append(f'<polyline points="{ideal}" fill="none" '
                        f'stroke="{COLORS["ideal"]}" stroke-width="1.5" '
                        'stroke-dasharray="6 4"/>')
        curve = pts(zip(d.workers, d.predicted, strict=True))
        body.append(f'<polyline points="{curve}" fill="none" '
                    f'stroke="{COLORS["predicted"]}" stroke-width="2.2"/>')
        for w, y, lo, hi in zip(d.workers, d.predicted, d.low, d.high, strict=True):
            body.append(f'<circle cx="{xmap(w):.1f}" cy="{ymap(y):.1f}" r="2.5" '
                        f'fill="{COLORS["predicted"]}"><title>{w} workers: predicted '
                        f"{e(fmt.rate_interval(y, lo, hi))} MB/s</title></circle>")
        legend.append((f'<rect x="0" y="-6" width="22" height="10" fill="{COLORS["predicted"]}" '
                       f'fill-opacity="0.18"/><line x1="0" y1="-1" x2="22" y2="-1" '
                       f'stroke="{COLORS["predicted"]}" stroke-width="2.2"/>',
                       f"predicted, with its {fmt.percent(d.level)} interval"))
        if d.ideal:
            legend.append((f'<line x1="0" y1="-1" x2="22" y2="-1" stroke="{COLORS["ideal"]}" '
                           'stroke-width="1.5" stroke-dasharray="6 4"/>',
                           scaling.IDEAL_LABEL + " (from 1 worker)"))
    if d.capacity is not None:
        y = ymap(d.capacity)
        body.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x0 + plot_w}" y2="{y:.1f}" '
                    f'stroke="{COLORS["capacity"]}" stroke-width="1.5" '
                    'stroke-dasharray="10 3 2 3"/>')
        body.append(f'<text x="{x0 + plot_w - 4}" y="{y - 4:.1f}" font-size="11" '
                    f'text-anchor="end" fill="{COLORS["capacity"]}">'
                    f"{e(scaling.CAPACITY_LABEL)}: {e(fmt.rate(d.capacity))} MB/s</text>")
        legend.append((f'<line x1="0" y1="-1" x2="22" y2="-1" stroke="{COLORS["capacity"]}" '
                       'stroke-width="1.5" stroke-dasharray="10 3 2 3"/>',
                       f"{scaling.CAPACITY_LABEL}: {scaling.CAPACITY_NOTE}"))
    for w, y in d.measured:
        body.append(f'<circle cx="{xmap(w):.1f}" cy="{ymap(y):.1f}" r="4.5" '
                    f'fill="{COLORS["measured"]}"><title>{w} workers: measured '
                    f"{e(fmt.rate(y))} MB/s (event loop, warm)</title></circle>")
    if d.measured:
        legend.append((f'<circle cx="11" cy="-1" r="4.5" fill="{COLORS["measured"]}"/>',
                       scaling.MEASURED_LABEL))
    for w, y in d.raw_reads:
        x, yy = xmap(w), ymap(y)
        body.append(f'<rect x="{x - 4:.1f}" y="{yy - 4:.1f}" width="8" height="8" fill="none" '
                    f'stroke="{COLORS["raw"]}" stroke-width="1.8"><title>{w} workers: raw '
                    f"reads {e(fmt.rate(y))} MB/s (cold, no decompression)</title></rect>")
    if d.raw_reads:
        legend.append((f'<rect x="7" y="-5" width="8" height="8" fill="none" '
                       f'stroke="{COLORS["raw"]}" stroke-width="1.8"/>', scaling.RAW_LABEL))
    out.append(f'<g clip-path="url(#{clip})">' + "".join(body) + "</g>")
    # the legend, under the plot
    ly = y0 + PLOT_HEIGHT + 58
    for i, (swatch, label) in enumerate(legend):
        out.append(f'<g transform="translate({x0},{ly + i * 17})">{swatch}'
                   f'<text x="30" y="3" font-size="11">{e(label)}</text></g>')
    height = ly + len(legend) * 17
    return (f'<svg viewBox="0 0 {SVG_WIDTH} {height}" width="{SVG_WIDTH}" height="{height}" '
            'font-family="system-ui,-apple-system,Segoe UI,Roboto,sans-serif" '
            f'role="img" aria-label="{e(d.label)}: predicted and measured scaling">'
            + "".join(out) + "</svg>")
