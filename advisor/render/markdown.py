"""The report as GitHub-flavoured Markdown: the same content as the terminal view, in tables and
fenced code blocks (``hep-advisor report --format md``)."""

from __future__ import annotations

from hep_advisor._version import __version__
from hep_advisor.findings.advice import Advice, Report
from hep_advisor.findings.recommendation import Recommendation
from hep_advisor.render import fmt, scaling
from hep_advisor.render import report_parts as parts
from hep_advisor.render.mdkit import esc, fence, table


def _bar(share: float, width: int = 20) -> str:
    return "█" * round(max(0.0, min(1.0, share)) * width) or "▏"


def _verdict(a: Advice) -> list[str]:
    if a.verdict is None:
        out = [f"**{esc(a.label)}**: no verdict: the calibration could not be fitted.", ""]
    else:
        out = [f"**{esc(a.label)}**: {esc(a.verdict.headline)}", ""]
        out += table(["limit", "share of the time", ""],
                     ([esc(s.limit), f"{100 * s.share:.0f}%", f"`{_bar(s.share)}`"]
                      for s in a.verdict.shares), "lrl")
    warning = parts.self_check_warning(a)
    if warning:
        out += [f"> **Warning:** {esc(warning)}", ">"]
        out += [f"> - {esc(x)}" for x in parts.self_check_failures(a)]
        out.append("")
    out += [f"> **Note:** {esc(n)}" for n in a.notes]
    if a.notes:
        out.append("")
    return out


def _recommendation(rank: int, rec: Recommendation) -> list[str]:
    label = parts.SEVERITY_LABEL[rec.severity]
    line = parts.speedup_line(rec)
    out = [f"### {rank}. {label} `{rec.code}` {esc(rec.kind)}: {esc(rec.title)}", "",
           f"**{esc(line[:1].upper() + line[1:])}** · {esc(parts.meta_line(rec))}", ""]
    if rec.rank_note:
        out += [f"*Ranking:* {esc(rec.rank_note)}", ""]
    out += [esc(rec.summary), ""]
    if rec.evidence:
        out += table(["evidence", "value", "source", "note"],
                     ([esc(e.name), esc(parts.evidence_value(e.value, e.unit)), esc(e.source),
                       esc(e.note or "")] for e in rec.evidence), "lrll")
    if rec.options:
        out += table(["option", "speed-up", "caveat"],
                     ([esc(o.name), esc(fmt.speedup_text(o.predicted_speedup, o.speedup_low,
                                                          o.speedup_high)),
                       esc(o.caveat or "")] for o in rec.options), "lrl")
    if rec.actions:
        out += ["**Actions**", ""]
        for i, act in enumerate(rec.actions, 1):
            out.append(f"{i}. {esc(act.description)}")
            if act.command:
                out += ["", *("   " + line if line else line for line in
                              fence(act.command, parts.command_language(act.command)))]
            out.append("")
    if rec.assumptions:
        out += ["*Assumes:* " + "; ".join(esc(x) for x in rec.assumptions), ""]
    return out


def _scaling(a: Advice, level: float) -> list[str]:
    now = scaling.now_workers(a)
    out = [f"### {esc(a.label)}", ""]
    out += table(["workers", "MB/s", f"interval ({fmt.percent(level)})", "events/s",
                  f"speed-up over {now} (now)"],
                 ([f"**{r.workers}** (now)" if r.now else str(r.workers), fmt.rate(r.mb_per_s),
                   f"{fmt.rate(r.low)}–{fmt.rate(r.high)}", fmt.num(r.events_per_s),
                   fmt.UNKNOWN if r.speedup is None else fmt.times(r.speedup)]
                  for r in scaling.scaling_rows(a)), "rrrrr")
    summary = scaling.summary_text(scaling.scaling_data(a))
    if summary:
        out += [esc(summary[:1].upper() + summary[1:]), ""]
    return out


def report_markdown(report: Report) -> str:
    level = parts.level_of(report)
    out = [f"# hep-advisor report: {esc(report.site.hostname)}", "",
           f"*hep-advisor {__version__}*", "", "## Verdict", ""]
    if not report.advice:
        out += ["No dataset was advised on (cancelled before the first).", ""]
    for a in report.advice:
        out += _verdict(a)
    out += [f"**{parts.counts_line(report)}**", ""]
    recs = report.recommendations
    out += ["## Recommendations", "", "Ranked by predicted speed-up.", ""]
    if not recs:
        out += [f"Nothing to change: no recommendation is predicted to gain "
                f"{fmt.times(parts.MIN_SPEEDUP)} or more.", ""]
    for i, rec in enumerate(recs, 1):
        out += _recommendation(i, rec)
    modelled = [a for a in report.advice if a.model is not None]
    if modelled:
        out += ["## Predicted scaling", ""]
        for a in modelled:
            out += _scaling(a, level)
    if report.cluster is not None:
        from hep_advisor.render.cluster_parts import cluster_markdown

        out += cluster_markdown(report.cluster)
    if report.trace is not None:
        from hep_advisor.render.trace_parts import trace_markdown

        out += trace_markdown(report.trace)
    out += ["## Site", ""]
    out += table(["", ""], ([f"**{k}**", esc(v)] for k, v in parts.site_lines(report.site)))
    out += ["## Data", ""]
    for a in report.advice:
        out += [f"### {esc(a.label)}", ""]
        out += table(["", ""], ([f"**{k}**", esc(v)] for k, v in parts.dataset_lines(a)))
    out += ["## Legend", ""]
    out += [f"- {esc(line)}" for line in parts.legend_lines(level)]
    return "\n".join(out).rstrip() + "\n"
