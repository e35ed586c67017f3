"""The report as GitHub-flavoured Markdown (``hep-advisor report --format md``): short by
default, as the terminal's (:mod:`.summary`'s words: each dataset's shares, each
recommendation's speed-up and command, the reader, the model check); with ``verbose`` every
card in full, in tables and fenced code blocks, as ``--verbose`` in the terminal."""

from __future__ import annotations

from hep_advisor._version import __version__
from hep_advisor.findings.advice import Advice, Report
from hep_advisor.findings.recommendation import Recommendation
from hep_advisor.render import fmt, modelcheck, scaling, site_parts, summary
from hep_advisor.render import report_parts as parts
from hep_advisor.render.mdkit import code, esc, fence, table


def _bar(share: float, width: int = 20) -> str:
    return "█" * round(max(0.0, min(1.0, share)) * width) or "▏"


def _verdict(a: Advice) -> list[str]:
    if a.verdict is None:
        out = [f"**{esc(a.label)}**: no verdict: the calibration could not be fitted.", ""]
    else:
        v = a.verdict
        out = [f"**{esc(a.label)}**: {esc(summary.headline(v))}", ""]
        out += table(["limit", "share of the time", ""],
                     ([esc(s.limit), f"{pct}%", f"`{_bar(s.share)}`"]
                      for s, pct in zip(v.shares, summary.share_percents(v.shares),
                                        strict=True)), "lrl")
    out += [f"> **Note:** {esc(n)}" for n in a.notes]
    if a.notes:
        out.append("")
    return out


def _recommendation(rank: int, rec: Recommendation) -> list[str]:
    label = parts.SEVERITY_LABEL[rec.severity]
    line = parts.speedup_line(rec)
    out = [f"### {rank}. {label} `{rec.code}` {esc(rec.kind)}: {esc(rec.title)}", "",
           f"**{esc(line[:1].upper() + line[1:])}** · {esc(parts.meta_line(rec))}", ""]
    if rec.severity == "uncertain":
        out += [f"*Uncertain:* {esc(parts.uncertain_text(rec))}", ""]
    if rec.rank_note:
        out += [f"*Ranking:* {esc(rec.rank_note)}", ""]
    out += [esc(rec.summary), ""]
    if rec.evidence:
        out += table(["evidence", "value", "source", "note"],
                     ([esc(e.name), esc(parts.evidence_value(e.value, e.unit)), esc(e.source),
                       esc(e.note or "")] for e in rec.evidence), "lrll")
    if rec.options:
        out += table(["option", "speed-up (90%)", "caveat"],
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


def _scaling(report: Report, a: Advice, level: float) -> list[str]:
    now = scaling.now_workers(a)
    out = [f"### {esc(a.label)}", ""]
    out += table(["workers", "MB/s", f"interval ({fmt.percent(level)})", "events/s",
                  f"speed-up over {now} (now)"],
                 ([f"**{r.workers}** (now)" if r.now else str(r.workers), fmt.rate(r.mb_per_s),
                   f"{fmt.rate(r.low)}–{fmt.rate(r.high)}", fmt.num(r.events_per_s),
                   fmt.UNKNOWN if r.speedup is None else fmt.times(r.speedup)]
                  for r in scaling.scaling_rows(a)), "rrrrr")
    said = site_parts.scaling_text(report, a)
    if said:
        out += [_sentence(said), ""]
    return out


def _sentence(text: str) -> str:
    """``text`` escaped, its first letter a capital."""
    return esc(text[:1].upper() + text[1:])


def _model_check(report: Report) -> list[str]:
    mc = modelcheck.report_check(report)
    out = [_sentence(modelcheck.header_line(mc)), ""]
    for a in report.advice:
        misses = [m for m in mc.misses if m.dataset == a.label]
        if not misses:
            continue
        out += [f"**{esc(a.label)}**", ""]
        out += [f"- {esc(m.line)}; {esc(modelcheck.miss_consequence(m))}" for m in misses]
        out.append("")
    return [*out, f"*{esc(modelcheck.RULE_TEXT)}*", ""]


def _short(report: Report) -> list[str]:
    level = parts.level_of(report)
    out = [f"# hep-advisor report: {esc(report.site.hostname)}", "",
           f"*hep-advisor {__version__}* · {esc(summary.units_line(level))}", ""]
    rows = summary.dataset_rows(report)
    if rows:
        out += table(["dataset", esc(summary.rate_heading(rows)), "where the time goes"],
                     ([esc(r.label), esc(r.rate), esc(r.shares)] for r in rows), "lrl")
    else:
        out += ["No dataset was advised on (cancelled before the first).", ""]
    recs, rejected = summary.rec_rows(report)
    out += [f"**{esc(parts.counts_line(report))}**", ""]
    if not recs and not rejected:
        out += [esc(summary.nothing_line()), ""]
    for row in recs:
        act = row.act
        what = (f"{esc(act.lead)}: {code(act.command)}" if act.command else
                f"{esc(act.lead)}: {esc(act.note)}")
        if act.command and act.note:
            what += f" {esc(act.note)}"
        if act.caution:
            what += f"  \n   {esc(act.caution)}"
        out += [f"{row.rank}. **`{row.rec.code}` {esc(row.rec.title)}**  ",
                f"   {esc(row.line)}  ", f"   {what}"]
    if recs:
        out.append("")
    if rejected:
        several = len(report.advice) > 1
        out += [f"{_sentence(summary.REJECTED_HEAD)} ({len(rejected)}):", ""]
        out += [f"- {esc(summary.rejected_line(r, several))}" for r in rejected]
        out.append("")
    mc = modelcheck.report_check(report)
    skipped = summary.skipped_line(report)
    for line in (summary.reader_line(report), skipped, modelcheck.header_line(mc)):
        if line:
            out += [_sentence(line), ""]
    out += [f"- ⚠ {esc(w)}" for w in modelcheck.warning_lines(mc, len(report.advice))]
    if mc.warnings:
        out.append("")
    if report.cluster is not None:  # asked for (--dask): shown whole
        from hep_advisor.render.cluster_parts import cluster_markdown

        out += cluster_markdown(report.cluster)
    if report.trace is not None:  # asked for (--trace FILE)
        from hep_advisor.render.trace_parts import trace_markdown

        out += trace_markdown(report.trace)
    return [*out, "", f"*{_sentence(summary.footer_line(report))}*"]


def report_markdown(report: Report, verbose: bool = False) -> str:
    """The report in Markdown: short (the answer first), or with ``verbose`` every card."""
    if not verbose:
        return "\n".join(_short(report)).rstrip() + "\n"
    level = parts.level_of(report)
    out = [f"# hep-advisor report: {esc(report.site.hostname)}", "",
           f"*hep-advisor {__version__}* · {esc(summary.units_line(level))}", "",
           "## Verdict", ""]
    if not report.advice:
        out += ["No dataset was advised on (cancelled before the first).", ""]
    for a in report.advice:
        out += _verdict(a)
    out += [f"**{esc(parts.counts_line(report))}**", ""]
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
            out += _scaling(report, a, level)
    if report.cluster is not None:
        from hep_advisor.render.cluster_parts import cluster_markdown

        out += cluster_markdown(report.cluster)
    if report.trace is not None:
        from hep_advisor.render.trace_parts import trace_markdown

        out += trace_markdown(report.trace)
    out += ["## Model check", ""]
    out += _model_check(report)
    out += ["## Site", ""]
    out += table(["", ""], ([f"**{k}**", esc(v)] for k, v in parts.site_lines(report.site)))
    for d in site_parts.device_figures(report):
        if d.rows:
            out += [f"**Storage {esc(d.name)}, measured**", ""]
            out += table(["measured", "value", "how"],
                         ([esc(a), esc(b), esc(c)] for a, b, c in d.rows), "lrl")
    out += ["## Data", ""]
    for a in report.advice:
        out += [f"### {esc(a.label)}", ""]
        out += table(["", ""], ([f"**{k}**", esc(v)] for k, v in parts.dataset_lines(a)))
    out += ["## Legend", ""]
    out += [f"- {esc(line)}" for line in parts.legend_lines(level)]
    return "\n".join(out).rstrip() + "\n"
