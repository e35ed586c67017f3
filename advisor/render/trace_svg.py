"""The trace as a picture: each request as a mark at (time, offset in its file), coloured by
kind, so that a key pre-pass (a diagonal of tiny reads before the data) or a scatter shows at
a glance.  Plain SVG text; no UI library."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

COLOURS = {"basket": "#1f77b4", "key": "#d62728", "metadata": "#2ca02c", "other": "#7f7f7f"}
#: At most this many marks (the rest sampled evenly; the caption says so).
MAX_MARKS = 5000


def requests_svg(reads: Sequence[Any], wall_s: float, width: int = 720, height: int = 320,
                 title: str = "requests over time") -> str:
    """``reads``: :class:`models.attribution.Classified` records.  Files are stacked along
    the offset axis in the order they were first read."""
    pad_l, pad_r, pad_t, pad_b = 70, 110, 28, 40
    w, h = width - pad_l - pad_r, height - pad_t - pad_b
    files: dict[str, int] = {}
    for c in reads:
        files.setdefault(c.read.file, 0)
        files[c.read.file] = max(files[c.read.file], c.read.stop)
    base: dict[str, int] = {}
    total = 0
    for f, size in files.items():
        base[f] = total
        total += size
    total = max(total, 1)
    t_max = max(wall_s, max((c.read.start_s + c.read.duration_s for c in reads), default=0.0),
                1e-6)
    shown = list(reads)
    step = max(len(shown) // MAX_MARKS, 1)
    shown = shown[::step]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">',
           f'<text x="{pad_l}" y="18" font-size="13" font-family="sans-serif">'
           f'{escape(title)}</text>',
           f'<rect x="{pad_l}" y="{pad_t}" width="{w}" height="{h}" fill="none" '
           f'stroke="#999"/>']
    for c in shown:
        x = pad_l + w * c.read.start_s / t_max
        x2 = pad_l + w * (c.read.start_s + c.read.duration_s) / t_max
        y = pad_t + h * (1 - (base[c.read.file] + c.read.offset) / total)
        bar = max(h * c.read.size / total, 1.0)
        colour = COLOURS.get(c.kind, "#000")
        out.append(f'<rect x="{x:.1f}" y="{y - bar:.1f}" width="{max(x2 - x, 1.0):.1f}" '
                   f'height="{bar:.1f}" fill="{colour}" opacity="0.7"/>')
    for i in range(5):
        t = t_max * i / 4
        x = pad_l + w * i / 4
        out.append(f'<text x="{x:.0f}" y="{pad_t + h + 16}" font-size="11" '
                   f'text-anchor="middle" font-family="sans-serif">{t:.2f} s</text>')
    out.append(f'<text x="{pad_l + w / 2:.0f}" y="{height - 4}" font-size="11" '
               f'text-anchor="middle" font-family="sans-serif">time since the program '
               f'started</text>')
    out.append(f'<text x="14" y="{pad_t + h / 2:.0f}" font-size="11" font-family="sans-serif" '
               f'transform="rotate(-90 14 {pad_t + h / 2:.0f})" text-anchor="middle">offset '
               f'({len(files)} file{"s" if len(files) != 1 else ""}, '
               f'{total / 1e6:.1f} MB)</text>')
    for i, (kind, colour) in enumerate(COLOURS.items()):
        y = pad_t + 14 + 18 * i
        out.append(f'<rect x="{pad_l + w + 12}" y="{y - 9}" width="10" height="10" '
                   f'fill="{colour}"/><text x="{pad_l + w + 26}" y="{y}" font-size="11" '
                   f'font-family="sans-serif">{kind}</text>')
    if step > 1:
        out.append(f'<text x="{pad_l + w}" y="18" font-size="10" text-anchor="end" '
                   f'font-family="sans-serif">every {step}th of {len(reads):,} requests'
                   f'</text>')
    out.append("</svg>")
    return "\n".join(out)


def trace_html(trace: Any, reads: Sequence[Any]) -> str:
    """A self-contained page: the picture, the phases and the findings."""
    rows = "".join(f"<tr><td>{escape(p.name)}</td><td>{p.start_s:.2f}</td><td>{p.end_s:.2f}"
                   f"</td><td>{p.requests:,}</td><td>{p.bytes / 1e6:,.2f}</td></tr>"
                   for p in trace.phases)
    finds = "".join(
        f"<li><b>{escape(f.code)}</b> {escape(f.title)}: predicted "
        f"{f.predicted_speedup:.2f}× ({f.speedup_low:.2f}–{f.speedup_high:.2f})"
        f"<pre>{escape(f.change)}</pre></li>" for f in trace.findings) or \
        "<li>No reader change predicted to help.</li>"
    return ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>hep-advisor trace</title>"
            "</head><body style='font-family:sans-serif'>"
            f"<h1>hep-advisor trace</h1><p><code>{escape(trace.command)}</code> — exit "
            f"{trace.exit_code}, {trace.wall_s:.2f} s wall</p>"
            f"{requests_svg(reads, trace.wall_s)}"
            "<h2>Phases</h2><table border='1' cellpadding='3'><tr><th>phase</th><th>from s"
            "</th><th>to s</th><th>requests</th><th>MB</th></tr>"
            f"{rows}</table><h2>Reader changes</h2><ul>{finds}</ul></body></html>\n")
