"""The report as one self-contained HTML page (``hep-advisor report --format html``), and as a
fragment for Jupyter (``Advice._repr_html_``).

Inline CSS, no script, no external resource: the scaling plot is SVG written by hand
(:func:`~.scaling_svg.scaling_svg`, in a module of its own).  Every piece of text is escaped.
The markup is also well-formed XML, so that it can be checked (and embedded) with an XML
parser.
"""

from __future__ import annotations

import hashlib

from hep_advisor._version import __version__
from hep_advisor.findings.advice import Advice, Report
from hep_advisor.findings.recommendation import Recommendation
from hep_advisor.render import fmt, scaling
from hep_advisor.render import report_parts as parts
from hep_advisor.render.htmlkit import CSS, e, kv, table
from hep_advisor.render.scaling_svg import scaling_svg

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
