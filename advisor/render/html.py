"""The report as one self-contained HTML page to share (``hep-advisor report --format html``),
and as a fragment for Jupyter (``Advice._repr_html_``).

The answer first: when, where and how it was made; where each dataset's time goes; what to do
(each recommendation with its speed-up and the one command), the reader assumed and the model
check.  Each card's evidence, assumptions and every command, the model check's points, the
predicted scaling and the data (with their paths) are one click away, in collapsed
``<details>``; a section for the site admin has the storage's measured figures.

Inline CSS, no script, no external resource: the scaling plot is SVG written by hand
(:func:`~.scaling_svg.scaling_svg`, in a module of its own).  Every piece of text is escaped.
The markup is also well-formed XML, so that it can be checked (and embedded) with an XML
parser.
"""

from __future__ import annotations

import datetime as dt
import hashlib

from hep_advisor._version import __version__
from hep_advisor.findings.advice import Advice, Report
from hep_advisor.findings.recommendation import Recommendation
from hep_advisor.render import fmt, modelcheck, scaling, site_parts, summary
from hep_advisor.render import report_parts as parts
from hep_advisor.render.htmlkit import CSS, e, kv, table
from hep_advisor.render.options import RenderOptions
from hep_advisor.render.scaling_svg import scaling_svg

# -- the answer --------------------------------------------------------------------------------

def _open(is_open: bool) -> str:
    """``<details>``'s attribute that opens it (``--verbose``), as XML allows it."""
    return ' open="open"' if is_open else ""


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower())


def _stacked(a: Advice) -> str:
    """One bar per dataset, a segment per limit (its share of the time), and the shares in
    words beside it."""
    v = a.verdict
    if v is None:
        why = "; ".join(a.notes) or "the calibration could not be fitted"
        return f'<td colspan="2" class="note">no verdict: {e(why)}</td>'
    segs = "".join(
        f'<span class="seg seg-{_slug(s.limit)}" style="width:{pct}%" '
        f'title="{e(s.limit)} {pct}%"></span>'
        for s, pct in zip(v.shares, summary.share_percents(v.shares), strict=True) if pct > 0)
    return (f'<td><div class="stack">{segs}</div></td>'
            f"<td>{e(summary.shares_text(v, top=2))}</td>")


def _where_time_goes(report: Report) -> str:
    rows = summary.dataset_rows(report)
    head = (f"<tr><th>dataset</th><th class=\"num\">{e(summary.rate_heading(rows))}</th>"
            "<th>where the time goes</th><th></th></tr>")
    body = "".join(f'<tr><th class="ds">{e(r.label)}</th><td class="num">{e(r.rate)}</td>'
                   f"{_stacked(a)}</tr>" for r, a in zip(rows, report.advice, strict=True))
    limits = sorted({s.limit for a in report.advice if a.verdict is not None
                     for s in a.verdict.shares})
    key = "".join(f'<span class="key"><span class="seg seg-{_slug(x)}"></span>{e(x)}</span>'
                  for x in limits)
    return (f'<table class="verdict"><thead>{head}</thead><tbody>{body}</tbody></table>'
            f'<p class="keys">{key}</p>')


def _card(rec: Recommendation) -> str:
    """A recommendation's full card, as ``--verbose`` and ``explain`` print it."""
    out = [f"<p>{e(rec.summary)}</p>",
           f'<p class="dim">{e(parts.speedup_line(rec))} · {e(parts.meta_line(rec))}</p>']
    if rec.rank_note:
        out.append(f'<p class="note">ranking: {e(rec.rank_note)}</p>')
    if rec.evidence:
        out.append(table(["evidence", "value", "source", "note"], (
            [e(x.name), e(parts.evidence_value(x.value, x.unit)),
             f'<span class="src-{e(x.source)}">{e(x.source)}</span>', e(x.note or "")]
            for x in rec.evidence), numeric=(1,)))
    if rec.options:
        out.append(table(["option", "speed-up (90%)", "caveat"], (
            [e(o.name), e(fmt.speedup_text(o.predicted_speedup, o.speedup_low,
                                             o.speedup_high)), e(o.caveat or "")]
            for o in rec.options), numeric=(1,)))
    if rec.actions:
        items = "".join(
            f"<li>{e(a.description)}"
            + (f'<pre><code class="language-{parts.command_language(a.command)}">'
               f"{e(a.command)}</code></pre>" if a.command else "")
            + "</li>" for a in rec.actions)
        out.append(f"<h4>Every command</h4><ol>{items}</ol>")
    if rec.assumptions:
        out.append(f'<p class="assume">assumes: {e("; ".join(rec.assumptions))}</p>')
    return "".join(out)


def _recommendation(row: summary.RecRow, is_open: bool) -> str:
    rec, act = row.rec, row.act
    sev = rec.severity
    sev_text, _, rest = row.line.partition(" · ")
    what = (f'<span class="lead">{e(act.lead)}:</span> <code class="cmd">{e(act.command)}'
            f"</code>" if act.command else f'<span class="lead">{e(act.lead)}:</span> ')
    if act.note:
        what += f' <span class="dim">{e(act.note)}</span>'
    uncertain = (f'<p class="why-uncertain">uncertain: {e(parts.uncertain_why(rec))}</p>'
                 if sev == "uncertain" else "")
    return (f'<li class="rec {e(sev)}"><div class="rec-head">'
            f'<span class="sev {e(sev)}">{e(sev_text)}</span> <code>{e(rec.code)}</code> '
            f'<strong>{e(rec.title)}</strong></div>'
            f'<div class="rec-line">{e(rest)}</div><div class="act">{what}</div>{uncertain}'
            f'<details{_open(is_open)}><summary>evidence, assumptions and every '
            f"command</summary>{_card(rec)}</details></li>")


def _what_to_do(report: Report, is_open: bool) -> str:
    rows, rejected = summary.rec_rows(report)
    out = [f'<h2>What to do <span class="counts">{e(parts.counts_line(report))}</span></h2>']
    if not rows and not rejected:
        out.append(f"<p>{e(summary.nothing_line())}</p>")
    if rows:
        out.append('<ol class="recs">' + "".join(_recommendation(r, is_open) for r in rows)
                   + "</ol>")
    if rejected:
        several = len(report.advice) > 1
        items = "".join(f"<li>{e(summary.rejected_line(r, several))}<details{_open(is_open)}>"
                        "<summary>"
                        f"why</summary><p>{e(r.summary)}</p>{_card(r)}</details></li>"
                        for r in rejected)
        head = e(summary.REJECTED_HEAD.capitalize())
        out.append(f'<h3>{head} ({len(rejected)})</h3><ul class="rejected">{items}</ul>')
    return "".join(out)


def _model_check(report: Report, is_open: bool) -> str:
    mc = modelcheck.report_check(report)
    warn = "".join(f"<li>{e(w)}</li>"
                   for w in modelcheck.warning_lines(mc, len(report.advice)))
    rows = []
    for a in report.advice:
        for c in a.model.self_check if a.model is not None else ():
            miss = next((m for m in mc.misses if m.check is c), None)
            rows.append([e(a.label), e(modelcheck.point_label(c.test)), e(fmt.sig(c.predicted)),
                         e(fmt.sig(c.measured)), e(f"{c.ratio:.2f}x"),
                         e(f"±{100 * c.tolerance:.0f}%"),
                         "ok" if miss is None else
                         f'<span class="note">miss: {e(miss.check.term)}; '
                         f"{e(modelcheck.miss_consequence(miss))}</span>"])
    points = table(["dataset", "point", "predicted MB/s", "measured MB/s", "ratio",
                    "tolerance", ""], rows, numeric=(2, 3, 4, 5), cls="points") if rows else ""
    cls = "mc warn" if mc.warnings else "mc"
    return (f'<p class="{cls}">{e(modelcheck.header_line(mc))}</p>'
            + (f'<ul class="mc-warn">{warn}</ul>' if warn else "")
            + f'<details{_open(is_open)}><summary>the model check, point by '
            f"point</summary>{points}<p class=\"dim\">{e(modelcheck.RULE_TEXT)}</p>"
            "</details>")


def _site_admin(report: Report) -> str:
    host = kv([(k, v) for k, v in parts.site_lines(report.site) if k != "storage"])
    devices = []
    for d in site_parts.device_figures(report):
        on = f" · data of {', '.join(d.datasets)}" if d.datasets else ""
        rows = table(["measured", "value", "how"],
                     ([e(a), e(b), e(c)] for a, b, c in d.rows), numeric=(1,)) \
            if d.rows else "<p>no read test ran on it</p>"
        devices.append(f"<h3>Storage {e(d.name)}</h3><p class=\"dim\">{e(d.about)}{e(on)}"
                       f"</p>{rows}")
    return ('<section class="admin"><h2>For the site admin</h2>' + host + "".join(devices)
            + '<p class="dim">MB/s here are bytes read from the files as stored '
            "(compressed), by the calibration's raw read tests; access time and 4 KiB reads "
            "from its request sweep.</p></section>")


def _scaling(report: Report, a: Advice, level: float, index: int) -> str:
    now = scaling.now_workers(a)
    rows = ([f"<strong>{r.workers}</strong> (now)" if r.now else str(r.workers),
             e(fmt.rate(r.mb_per_s)), e(f"{fmt.rate(r.low)}–{fmt.rate(r.high)}"),
             e(fmt.num(r.events_per_s)),
             e(fmt.UNKNOWN if r.speedup is None else fmt.times(r.speedup))]
            for r in scaling.scaling_rows(a))
    tbl = table(["workers", "MB/s", f"interval ({fmt.percent(level)})", "events/s",
                f"speed-up over {now} (now)"], rows, numeric=(0, 1, 2, 3, 4))
    svg = scaling_svg(a, uid=f"{index}-{hashlib.sha1(a.label.encode()).hexdigest()[:6]}")
    summary_ = "".join(f"<li>{e(k)}: <strong>{e(v)}</strong></li>"
                       for k, v in site_parts.scaling_parts(report, a))
    summary_ = f'<ul class="dim">{summary_}</ul>' if summary_ else ""
    return (f"<h3>{e(a.label)}</h3>"
            f'<div class="scaling"><figure>{svg}</figure><div>{tbl}{summary_}</div></div>')


def _units(level: float) -> str:
    return e(summary.units_line(level)).replace("10^6", "10<sup>6</sup>")


def _meta(report: Report, options: RenderOptions) -> str:
    when = options.created.astimezone(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    bits = [f"made {e(when)}", f"on {e(report.site.hostname)}",
            f"hep-advisor {e(__version__)}"]
    cmd = (f'<p class="meta">command: <code>{e(options.command)}</code></p>'
           if options.command else "")
    return f'<p class="meta">{" · ".join(bits)}</p>{cmd}'


def report_body(report: Report, options: RenderOptions | None = None) -> str:
    options = options or RenderOptions()
    level = parts.level_of(report)
    is_open = options.verbose
    out = [f"<h1>hep-advisor report: {e(report.site.hostname)}</h1>", _meta(report, options),
           f'<p class="units">{_units(level)}</p>', "<h2>Where the time goes</h2>"]
    if report.advice:
        out.append(_where_time_goes(report))
    else:
        out.append("<p>No dataset was advised on (cancelled before the first).</p>")
    out.append(_what_to_do(report, is_open))
    out.append(f'<p class="reader">{e(summary.reader_line(report))}</p>')
    skipped = summary.skipped_line(report, "why: under the data and their calibrations")
    if skipped:
        out.append(f'<p class="dim">{e(skipped)}</p>')
    out.append(_model_check(report, is_open))
    if report.cluster is not None:
        from hep_advisor.render.cluster_parts import cluster_html

        out.append(cluster_html(report.cluster))
    if report.trace is not None:
        from hep_advisor.render.trace_parts import trace_html_section

        out.append(trace_html_section(report.trace))
    if report.advice:
        out.append(_site_admin(report))
    modelled = [a for a in report.advice if a.model is not None]
    if modelled:
        out.append(f'<details class="section"{_open(is_open)}><summary>'
                   "Predicted scaling</summary>"
                   + "".join(_scaling(report, a, level, i) for i, a in enumerate(modelled))
                   + "</details>")
    data = "".join(f"<h3>{e(a.label)}</h3>{kv(parts.dataset_lines(a, absolute=True))}"
                   for a in report.advice)
    out.append(f'<details class="section"{_open(is_open)}><summary>The data and '
               f"their calibrations (paths, read tests)</summary>{data}</details>")
    out.append(f'<details class="section"{_open(is_open)}><summary>Legend'
               "</summary><ul>" + "".join(f"<li>{e(x)}</li>"
                                          for x in parts.legend_lines(level)) + "</ul></details>")
    return "\n".join(out)


def report_html(report: Report, standalone: bool = True,
                options: RenderOptions | None = None) -> str:
    """The report as HTML: a whole page (``standalone``) or a ``<div>`` with its own scoped
    styles, for a notebook."""
    body = report_body(report, options)
    if not standalone:
        return f'<div class="hepa"><style>{CSS}</style>{body}</div>'
    title = f"hep-advisor report: {report.site.hostname}"
    return ("<!DOCTYPE html>\n"
            '<html lang="en"><head><meta charset="utf-8"/>'
            '<meta name="viewport" content="width=device-width, initial-scale=1"/>'
            f"<title>{e(title)}</title><style>{CSS}</style></head>\n"
            f'<body><div class="hepa">\n{body}\n</div></body></html>\n')
