"""The trace as a picture: each request as a mark at (time, offset in its file), coloured by
kind, over the program's phases, so that a key pre-pass (a diagonal of tiny reads before the
data) or a scatter shows at a glance.  Plain SVG text (well-formed XML); no UI library.

:func:`requests_svg` draws a :class:`hep_advisor.findings.trace_picture.RequestPicture`;
The standalone page of ``hep-advisor trace -o FILE.html`` is :func:`.trace_parts.trace_html`.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from itertools import pairwise
from typing import Any

from hep_advisor.findings.trace_picture import RequestPicture

KINDS = ("basket", "key", "metadata", "other")
COLOURS = {"basket": "#1f77b4", "key": "#d62728", "metadata": "#2ca02c", "other": "#7f7f7f"}
KIND_NOTE = {"basket": "basket data", "key": "a basket's key header alone",
             "metadata": "file and tree metadata", "other": "anything else"}
PHASE_COLOURS = {"opening": "#efeaff", "pre-pass": "#ffe9d6", "reading": "#e3f0ff",
                 "processing": "#eeeeee"}
PHASE_BARS = {"opening": "#b9a6ef", "pre-pass": "#f0a366", "reading": "#7fb4e8",
              "processing": "#b8b8b8"}
#: Drawn last (on top): the rarer, smaller kinds stay visible over large basket reads.
DRAW_ORDER = ("basket", "other", "metadata", "key")
FONT = 'font-family="system-ui,-apple-system,Segoe UI,Roboto,sans-serif"'


def e(x: object) -> str:
    return escape(str(x), quote=True)


def _ticks(hi: float, target: int = 5) -> list[float]:
    from hep_advisor.render.htmlkit import ticks_linear as _ticks_linear

    return [t for t in _ticks_linear(0.0, hi) if t <= hi] if hi > 0 else [0.0]


def _num(v: float) -> str:
    return f"{v:g}" if v >= 1 or v == 0 else f"{v:.2g}"


def requests_svg(picture: RequestPicture, phases: Sequence[Any] = (),
                 counts: dict[str, int] | None = None, width: int = 760,
                 height: int = 360, title: str = "Requests over time") -> str:
    """``phases``: ``PhaseSpan``-like records (name, start_s, end_s), drawn as bars above the
    plot, one lane each (phases may overlap: a pre-pass per file between the reads of many
    files), and shaded behind the marks where they do not overlap; ``counts``: requests per
    kind for the legend (default: those in the picture)."""
    shown_phases = [p for p in phases if p.end_s >= p.start_s]
    lane = 13
    pad_l, pad_r, pad_t, pad_b = 74, 190, 44 + lane * len(shown_phases), 44
    height += lane * len(shown_phases)
    w, h = width - pad_l - pad_r, height - pad_t - pad_b
    t_max, span = picture.t_max, picture.span
    bases = picture.bases()

    def xmap(t: float) -> float:
        return pad_l + w * min(max(t, 0.0), t_max) / t_max

    def ymap(pos: float) -> float:
        return pad_t + h * (1 - min(max(pos, 0.0), span) / span)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" {FONT} role="img" '
           f'aria-label="{e(title)}: offset in the file against time, coloured by kind">',
           f'<text x="{pad_l}" y="16" font-size="14" font-weight="600">{e(title)}</text>',
           f'<text x="{pad_l}" y="31" font-size="11" fill="#57606a">each read request at its '
           'time (left to right, its duration as width) and its place in the file (bottom to '
           'top, its size as height)</text>']
    # the phases: a bar each above the plot, named on the left; shaded behind the marks
    # when none overlaps another
    ordered = sorted(shown_phases, key=lambda p: p.start_s)
    apart = all(b.start_s >= a.end_s for a, b in pairwise(ordered))
    for i, p in enumerate(shown_phases):
        x1, x2 = xmap(p.start_s), xmap(p.end_s)
        top = 40 + lane * i
        out.append(f'<rect class="phase" x="{x1:.1f}" y="{top}" width="{max(x2 - x1, 1.5):.1f}" '
                   f'height="{lane - 4}" fill="{PHASE_BARS.get(p.name, "#bbbbbb")}">'
                   f"<title>{e(p.name)}: {p.start_s:.2f}-{p.end_s:.2f} s</title></rect>")
        out.append(f'<text x="{pad_l - 6}" y="{top + lane - 5}" font-size="10" '
                   f'text-anchor="end" fill="#57606a">{e(p.name)}</text>')
        if apart:
            out.append(f'<rect class="phase-shade" x="{x1:.1f}" y="{pad_t}" '
                       f'width="{max(x2 - x1, 1.0):.1f}" height="{h}" '
                       f'fill="{PHASE_COLOURS.get(p.name, "#f3f3f3")}"/>')
    # grid and axes
    for t in _ticks(t_max):
        x = xmap(t)
        out.append(f'<line x1="{x:.1f}" y1="{pad_t + h}" x2="{x:.1f}" y2="{pad_t + h + 4}" '
                   'stroke="#57606a"/>')
        out.append(f'<text x="{x:.1f}" y="{pad_t + h + 16}" font-size="11" '
                   f'text-anchor="middle" fill="#57606a">{_num(t)}</text>')
    for mb in _ticks(span / 1e6) if picture.requests else ():
        y = ymap(mb * 1e6)
        out.append(f'<line x1="{pad_l}" y1="{y:.1f}" x2="{pad_l + w}" y2="{y:.1f}" '
                   'stroke="#d0d7de" stroke-width="0.6"/>')
        out.append(f'<text x="{pad_l - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end" '
                   f'fill="#57606a">{_num(mb)}</text>')
    if len(picture.files) > 1:  # the files' boundaries on the stacked offset axis
        for i, (path, base) in enumerate(zip(picture.files, bases, strict=True)):
            y = ymap(base)
            if i:
                out.append(f'<line x1="{pad_l}" y1="{y:.1f}" x2="{pad_l + w}" y2="{y:.1f}" '
                           'stroke="#8c959f" stroke-dasharray="3 3"/>')
            if len(picture.files) <= 8:
                name = path.rsplit("/", 1)[-1]
                out.append(f'<text x="{pad_l + 4}" y="{y - 3:.1f}" font-size="9" '
                           f'fill="#57606a">{e(name)}</text>')
    out.append(f'<rect x="{pad_l}" y="{pad_t}" width="{w}" height="{h}" fill="none" '
               'stroke="#57606a"/>')
    out.append(f'<text x="{pad_l + w / 2:.0f}" y="{height - 8}" font-size="12" '
               'text-anchor="middle">seconds since the program started</text>')
    files = len(picture.files)
    ylabel = ("offset in the file, MB" if files == 1 else
              f"offset, MB ({files} files stacked in the order first read)")
    cy = pad_t + h / 2
    out.append(f'<text x="14" y="{cy:.0f}" font-size="12" text-anchor="middle" '
               f'transform="rotate(-90 14 {cy:.0f})">{e(ylabel)}</text>')
    # the requests
    by_kind: dict[str, list[str]] = {}
    for r in picture.requests:
        x1, x2 = xmap(r.start_s), xmap(r.start_s + r.duration_s)
        pos = bases[r.file] + r.offset if r.file < len(bases) else r.offset
        y_top, y_bot = ymap(pos + r.size), ymap(pos)
        hh = max(y_bot - y_top, 1.5)
        by_kind.setdefault(r.kind, []).append(
            f'<rect x="{x1:.1f}" y="{y_bot - hh:.1f}" width="{max(x2 - x1, 1.5):.1f}" '
            f'height="{hh:.1f}"/>')
    if not picture.requests:
        out.append(f'<text x="{pad_l + w / 2:.0f}" y="{pad_t + h / 2:.0f}" font-size="12" '
                   'text-anchor="middle" fill="#57606a">no read of a ROOT file was traced'
                   "</text>")
    order = [*DRAW_ORDER, *sorted(k for k in by_kind if k not in DRAW_ORDER)]
    for kind in order:
        if by_kind.get(kind):
            out.append(f'<g class="kind-{e(kind)}" fill="{COLOURS.get(kind, "#000000")}" '
                       f'fill-opacity="0.8">' + "".join(by_kind[kind]) + "</g>")
    # the legend: kinds with their request counts, then the phases
    if counts is None:
        counts = {k: sum(1 for r in picture.requests if r.kind == k) for k in order}
    lx, ly = pad_l + w + 14, pad_t + 6
    out.append(f'<text x="{lx}" y="{ly}" font-size="11" font-weight="600">requests</text>')
    kinds = [*KINDS, *sorted(k for k in counts if k not in KINDS)]
    for i, kind in enumerate(kinds):
        y = ly + 16 * (i + 1)
        out.append(f'<g class="legend-{e(kind)}"><rect x="{lx}" y="{y - 9}" width="10" '
                   f'height="10" fill="{COLOURS.get(kind, "#000000")}"/>'
                   f'<text x="{lx + 15}" y="{y}" font-size="11">{e(kind)} '
                   f"({counts.get(kind, 0):,})</text><title>{e(KIND_NOTE.get(kind, kind))}"
                   "</title></g>")
    ly += 16 * (len(kinds) + 1) + 6
    if shown_phases:
        out.append(f'<text x="{lx}" y="{ly}" font-size="11" font-weight="600">phases</text>')
        for i, p in enumerate(shown_phases):
            y = ly + 16 * (i + 1)
            out.append(f'<rect x="{lx}" y="{y - 9}" width="10" height="10" '
                       f'fill="{PHASE_BARS.get(p.name, "#bbbbbb")}"/>'
                       f'<text x="{lx + 15}" y="{y}" font-size="11">'
                       f"{e(p.name)} {p.start_s:.2f}–{p.end_s:.2f} s</text>")
    if picture.thinned:
        out.append(f'<text x="{pad_l + w}" y="{pad_t - 4}" font-size="10" text-anchor="end" '
                   f'fill="#57606a">{len(picture.requests):,} of {picture.total:,} requests '
                   "drawn (one per spot and kind, then thinned evenly)</text>")
    out.append("</svg>")
    return "\n".join(out)


def trace_svg(trace: Any) -> str:
    """The picture of a :class:`hep_advisor.findings.trace.Trace` (``""`` without one)."""
    pic = getattr(trace, "picture", None)
    if pic is None:
        return ""
    k = trace.requests_by_kind
    counts = {name: getattr(k, name) for name in KINDS}
    return requests_svg(pic, trace.phases, counts)
