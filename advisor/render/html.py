"""The report as one self-contained HTML page (``hep-advisor report --format html``), and as a
fragment for Jupyter (``Advice._repr_html_``).

Inline CSS, no script, no external resource: the scaling plot is SVG written here by hand
(:func:`scaling_svg`).  Every piece of text is escaped.  The markup is also well-formed XML,
so that it can be checked (and embedded) with an XML parser.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable

from hep_advisor._version import __version__
from hep_advisor.findings.advice import Advice, Report
from hep_advisor.findings.recommendation import Recommendation
from hep_advisor.render import fmt, scaling
from hep_advisor.render import report_parts as parts
from hep_advisor.render.htmlkit import (
    COLORS,
    CSS,
    PLOT_HEIGHT,
    PLOT_LEFT,
    PLOT_RIGHT,
    PLOT_TOP,
    SVG_WIDTH,
    e,
    kv,
    table,
    tick_label,
    ticks_linear,
    ticks_log,
)


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


# -- the sections ------------------------------------------------------------------------------

def _bars(a: Advice) -> str:
    if a.verdict is None:
        return ""
    cells = "".join(
        f"<span>{e(s.limit)}</span><div><div class=\"bar\" style=\"width:"
        f"{100 * max(0.0, min(1.0, s.share)):.1f}%\"></div></div>"
        f'<span class="num">{100 * s.share:.0f}%</span>' for s in a.verdict.shares)
    return f'<div class="bars">{cells}</div>'


def _verdict(a: Advice, several: bool) -> str:
    name = f"<strong>{e(a.label)}</strong>: " if several else ""
    text = (e(a.verdict.headline) if a.verdict is not None
            else "no verdict: the calibration could not be fitted")
    notes = "".join(f'<p class="note">{e(n)}</p>' for n in a.notes)
    warning = parts.self_check_warning(a)
    if warning:
        items = "".join(f"<li>{e(x)}</li>" for x in parts.self_check_failures(a))
        notes = (f'<div class="selfcheck"><p><strong>{e(warning)}</strong></p>'
                 f"<ul>{items}</ul></div>{notes}")
    return f"<p>{name}{text}</p>{_bars(a)}{notes}"


def _counts(report: Report) -> str:
    c = report.counts()
    pieces = parts.counts_line(report).split(" · ")
    classes = ["critical" if c["critical"] else "", "warning" if c["warning"] else "", ""]
    return '<p class="counts">' + "".join(
        f'<span class="{k}">{e(p)}</span>' if k else f"<span>{e(p)}</span>"
        for p, k in zip(pieces, classes, strict=True)) + "</p>"


def _recommendation(rank: int, rec: Recommendation) -> str:
    sev = rec.severity
    out = [f'<section class="rec {e(sev)}">',
           f'<h3>{rank}. <span class="sev {e(sev)}">{e(parts.SEVERITY_LABEL[sev])}</span>'
           f"<code>{e(rec.code)}</code> {e(rec.kind)}: {e(rec.title)}</h3>",
           f'<p><span class="speedup">{e(parts.speedup_line(rec))}'
           f'</span> <span class="dim">· {e(parts.meta_line(rec))}</span></p>',
           *([f'<p class="note">ranking: {e(rec.rank_note)}</p>'] if rec.rank_note else []),
           f"<p>{e(rec.summary)}</p>"]
    if rec.evidence:
        out.append(table(["evidence", "value", "source", "note"], (
            [e(x.name), e(parts.evidence_value(x.value, x.unit)),
             f'<span class="src-{e(x.source)}">{e(x.source)}</span>', e(x.note or "")]
            for x in rec.evidence), numeric=(1,)))
    if rec.options:
        out.append(table(["option", "speed-up", "caveat"], (
            [e(o.name), e(fmt.speedup_text(o.predicted_speedup, o.speedup_low,
                                             o.speedup_high)), e(o.caveat or "")]
            for o in rec.options), numeric=(1,)))
    if rec.actions:
        items = "".join(
            f"<li>{e(a.description)}"
            + (f'<pre><code class="language-{parts.command_language(a.command)}">'
               f"{e(a.command)}</code></pre>" if a.command else "")
            + "</li>" for a in rec.actions)
        out.append(f"<ol>{items}</ol>")
    if rec.assumptions:
        out.append(f'<p class="assume">assumes: {e("; ".join(rec.assumptions))}</p>')
    out.append("</section>")
    return "".join(out)


def _scaling(a: Advice, level: float, index: int) -> str:
    now = scaling.now_workers(a)
    rows = ([f"<strong>{r.workers}</strong> (now)" if r.now else str(r.workers),
             e(fmt.rate(r.mb_per_s)), e(f"{fmt.rate(r.low)}–{fmt.rate(r.high)}"),
             e(fmt.num(r.events_per_s)),
             e(fmt.UNKNOWN if r.speedup is None else fmt.times(r.speedup))]
            for r in scaling.scaling_rows(a))
    tbl = table(["workers", "MB/s", f"interval ({fmt.percent(level)})", "events/s",
                f"speed-up over {now} (now)"], rows, numeric=(0, 1, 2, 3, 4))
    svg = scaling_svg(a, uid=f"{index}-{hashlib.sha1(a.label.encode()).hexdigest()[:6]}")
    summary = "".join(f"<li>{e(k)}: <strong>{e(v)}</strong></li>"
                      for k, v in scaling.summary_parts(scaling.scaling_data(a)))
    summary = f'<ul class="dim">{summary}</ul>' if summary else ""
    return (f"<h3>{e(a.label)}</h3>"
            f'<div class="scaling"><figure>{svg}</figure><div>{tbl}{summary}</div></div>')


def report_body(report: Report) -> str:
    level = parts.level_of(report)
    several = len(report.advice) > 1
    out = [f"<h1>hep-advisor report: {e(report.site.hostname)}</h1>",
           f'<p class="dim">hep-advisor {e(__version__)}</p>', "<h2>Verdict</h2>"]
    if not report.advice:
        out.append("<p>No dataset was advised on (cancelled before the first).</p>")
    out += [_verdict(a, several) for a in report.advice]
    out.append(_counts(report))
    recs = report.recommendations
    out.append(f"<h2>Recommendations, ranked by predicted speed-up ({len(recs)})</h2>")
    if not recs:
        out.append(f"<p>Nothing to change: no recommendation is predicted to gain "
                   f"{e(fmt.times(parts.MIN_SPEEDUP))} or more.</p>")
    out += [_recommendation(i, r) for i, r in enumerate(recs, 1)]
    modelled = [a for a in report.advice if a.model is not None]
    if modelled:
        out.append("<h2>Predicted scaling</h2>")
        out += [_scaling(a, level, i) for i, a in enumerate(modelled)]
    if report.cluster is not None:
        from hep_advisor.render.cluster_parts import cluster_html

        out.append(cluster_html(report.cluster))
    if report.trace is not None:
        from hep_advisor.render.trace_parts import trace_html_section

        out.append(trace_html_section(report.trace))
    out.append("<h2>Site</h2>" + kv(parts.site_lines(report.site)))
    out.append("<h2>Data</h2>")
    out += [f"<h3>{e(a.label)}</h3>{kv(parts.dataset_lines(a))}" for a in report.advice]
    out.append("<h2>Legend</h2><ul>" + "".join(f"<li>{e(x)}</li>"
                                               for x in parts.legend_lines(level)) + "</ul>")
    return "\n".join(out)


def report_html(report: Report, standalone: bool = True) -> str:
    """The report as HTML: a whole page (``standalone``) or a ``<div>`` with its own scoped
    styles, for a notebook."""
    body = report_body(report)
    if not standalone:
        return f'<div class="hepa"><style>{CSS}</style>{body}</div>'
    title = f"hep-advisor report: {report.site.hostname}"
    return ("<!DOCTYPE html>\n"
            '<html lang="en"><head><meta charset="utf-8"/>'
            '<meta name="viewport" content="width=device-width, initial-scale=1"/>'
            f"<title>{e(title)}</title><style>{CSS}</style></head>\n"
            f'<body><div class="hepa">\n{body}\n</div></body></html>\n')
