"""The full Rich view of a ``Report`` (``hep-advisor report --verbose``): the verdict, every
recommendation's card with its evidence, assumptions and commands, the predicted scaling, the
model check, the site and the data, and a legend.  The default report is the short one
(:mod:`.short_view`); ``hep-advisor explain CODE`` prints one card (:func:`recommendation_view`).

Readable at 80 columns; wider terminals give the tables room (the evidence gets its notes in
a column of their own from 100 columns).
"""

from __future__ import annotations

from rich import box
from rich.columns import Columns
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.padding import Padding
from rich.panel import Panel
from rich.rule import Rule
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from hep_advisor._version import __version__
from hep_advisor.findings.advice import Advice, Report, Verdict
from hep_advisor.findings.recommendation import Recommendation
from hep_advisor.render import fmt, modelcheck, scaling, site_parts, summary
from hep_advisor.render import report_parts as parts

SEVERITY_STYLE = {"critical": "bold red", "warning": "yellow", "uncertain": "magenta",
                  "info": "cyan"}
SOURCE_STYLE = {"measured": "green", "probed": "green", "derived": "blue", "fitted": "cyan",
                "assumed": "yellow", "threshold": "magenta"}
BAR_WIDTH = 24


def _grid() -> Table:
    g = Table.grid(padding=(0, 2))
    g.add_column(style="bold", no_wrap=True)
    g.add_column(overflow="fold")
    return g


def _bar(share: float, width: int = BAR_WIDTH) -> Text:
    eighths = round(max(0.0, min(1.0, share)) * width * 8)
    full, rest = divmod(eighths, 8)
    text = "█" * full + ("" if rest == 0 else " ▏▎▍▌▋▊▉"[rest])
    return Text(text.ljust(width), style="magenta")


def shares_chart(v: Verdict) -> Table:
    """One bar per limit: its share of the analysis' time."""
    t = Table.grid(padding=(0, 1))
    t.add_column(no_wrap=True)
    t.add_column(no_wrap=True)
    t.add_column(justify="right", no_wrap=True)
    for s, pct in zip(v.shares, summary.share_percents(v.shares), strict=True):
        t.add_row(s.limit, _bar(s.share), f"{pct}%")
    return t


def _verdict_block(a: Advice, several: bool) -> RenderableType:
    rows: list[RenderableType] = []
    head = Text()
    if several:
        head.append(f"{a.label}: ", style="bold")
    if a.verdict is None:
        head.append("no verdict: the calibration could not be fitted", style="yellow")
        rows.append(head)
    else:
        head.append(summary.headline(a.verdict))
        rows += [head, Padding(shares_chart(a.verdict), (0, 0, 0, 2))]
    rows += [Text(f"  • {n}", style="yellow") for n in a.notes]
    return Group(*rows)


def header(report: Report) -> RenderableType:
    several = len(report.advice) > 1
    blocks: list[RenderableType] = [_verdict_block(a, several) for a in report.advice]
    if not report.advice:
        blocks.append(Text("no dataset was advised on (cancelled before the first)",
                           style="yellow"))
    mc = modelcheck.report_check(report)
    blocks.append(Text(modelcheck.header_line(mc), style="yellow" if mc.warnings else ""))
    blocks += [Text(f"  ⚠ {w}", style="yellow")
               for w in modelcheck.warning_lines(mc, len(report.advice))]
    blocks.append(Text(parts.counts_line(report), style="bold"))
    blocks.append(Text(summary.units_line(parts.level_of(report)), style="dim"))
    return Panel(Group(*blocks), title=f"[bold]hep-advisor report[/] — {report.site.hostname}",
                 subtitle=f"hep-advisor {__version__}", title_align="left",
                 subtitle_align="right")


class EvidenceTable:
    """The evidence of one recommendation: name, value, source and note in four columns where
    there is room (100 columns or more), the note under the name where there is not."""

    WIDE = 100

    def __init__(self, rec: Recommendation) -> None:
        self.rec = rec

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        wide = options.max_width >= self.WIDE
        t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="dim")
        t.add_column("evidence", ratio=3 if not wide else None)
        t.add_column("value", justify="right", max_width=28)
        t.add_column("source", no_wrap=True)
        if wide:
            t.add_column("note", style="dim", overflow="fold")
        for e in self.rec.evidence:
            source = Text(e.source, style=SOURCE_STYLE.get(e.source, ""))
            value = parts.evidence_value(e.value, e.unit)
            if wide:
                t.add_row(e.name, value, source, e.note or "")
            else:
                name: RenderableType = Text(e.name)
                if e.note:
                    name = Group(name, Padding(Text(e.note, style="dim"), (0, 0, 0, 2)))
                t.add_row(name, value, source)
        yield t


def options_table(rec: Recommendation) -> Table:
    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="dim")
    t.add_column("option")
    t.add_column("speed-up (90%)", justify="right", no_wrap=True)
    t.add_column("caveat", overflow="fold")
    for o in rec.options:
        t.add_row(o.name, fmt.speedup_text(o.predicted_speedup, o.speedup_low, o.speedup_high),
                  Text(o.caveat or "", style="yellow"))
    return t


def _command(command: str) -> RenderableType:
    return Syntax(command, parts.command_language(command), theme="ansi_dark",
                  background_color="default", word_wrap=True, padding=(0, 0, 0, 4))


def recommendation_view(rank: int, rec: Recommendation, level: float = 0.9) -> RenderableType:
    style = SEVERITY_STYLE[rec.severity]
    body: list[RenderableType] = [Text(rec.title, style="bold")]
    line = Text()
    if rec.contradicted:
        line.append(parts.speedup_line(rec, level), style="bold yellow")
    else:
        line.append("predicted speed-up ", style="bold")
        line.append(fmt.speedup_level(rec.predicted_speedup, rec.speedup_low,
                                      rec.speedup_high, level),
                    style=f"bold {style.split()[-1]}")
    line.append("  " + parts.meta_line(rec), style="dim")
    body.append(line)
    if rec.severity == "uncertain":
        body.append(Text(f"uncertain: {parts.uncertain_text(rec)}", style="magenta"))
    if rec.rank_note:
        body.append(Text(f"ranking: {rec.rank_note}", style="dim yellow"))
    body.append(Text(rec.summary))
    if rec.evidence:
        body.append(EvidenceTable(rec))
    if rec.options:
        body.append(options_table(rec))
    for act in rec.actions:
        arrow = Table.grid(padding=(0, 1))
        arrow.add_column(no_wrap=True)
        arrow.add_column(overflow="fold")
        arrow.add_row("→", act.description)
        body.append(arrow)
        if act.command:
            body.append(_command(act.command))
    if rec.assumptions:
        body.append(Text("assumes: " + "; ".join(rec.assumptions), style="dim italic"))
    title = Text()
    title.append(f" {rank}. ", style="bold")
    title.append(parts.SEVERITY_LABEL[rec.severity], style=style)
    title.append(f" {rec.code} ", style="bold")
    title.append(f"{rec.kind} ")
    return Panel(Group(*body), title=title, title_align="left", border_style=style.split()[-1])


def scaling_table(a: Advice, level: float, report: Report | None = None) -> Table:
    now = scaling.now_workers(a)
    said = site_parts.scaling_text(report or a.report(), a)
    t = Table(title=f"{a.label}: predicted scaling", title_justify="left",
              caption=f"speed-up over {now} job{'s' if now != 1 else ''} (as now); "
              f"{fmt.percent(level)} intervals" + (f"\n{said}" if said else ""),
              caption_justify="left")
    t.add_column("workers", justify="right")
    t.add_column("MB/s (interval)", justify="right")
    t.add_column("events/s", justify="right")
    t.add_column("speed-up", justify="right")
    for r in scaling.scaling_rows(a):
        t.add_row(f"{r.workers}{' (now)' if r.now else ''}",
                  fmt.rate_interval(r.mb_per_s, r.low, r.high), fmt.num(r.events_per_s),
                  fmt.UNKNOWN if r.speedup is None else fmt.times(r.speedup),
                  style="bold" if r.now else None)
    return t


def site_summary(report: Report) -> RenderableType:
    g = _grid()
    for k, v in parts.site_lines(report.site):
        g.add_row(k, v)
    for d in site_parts.device_figures(report):
        if d.rows:
            g.add_row(f"{d.name} measured", "\n".join(f"{a}: {b} ({c})" for a, b, c in d.rows))
    return Panel(g, title="[bold]site[/]", title_align="left")


def dataset_summary(a: Advice) -> RenderableType:
    g = _grid()
    for k, v in parts.dataset_lines(a):
        g.add_row(k, Text(v, style="yellow") if k == "note" else Text(v))
    return Panel(g, title=f"[bold]dataset[/] {a.label}", title_align="left")


def model_check_view(report: Report) -> RenderableType:
    """Every dataset's model check: the points it passes and misses, each miss with the
    recommendations whose time its term carries (``hep-advisor explain model-check``)."""
    mc = modelcheck.report_check(report)
    rows: list[RenderableType] = [Text(modelcheck.header_line(mc), style="bold")]
    for a in report.advice:
        checks = a.model.self_check if a.model is not None else ()
        ok = sum(1 for c in checks if c.ok)
        rows.append(Text(f"{a.label}: {ok} of {len(checks)} points within tolerance",
                         style="bold"))
        misses = [m for m in mc.misses if m.dataset == a.label]
        if not misses:
            continue
        g = Table.grid(padding=(0, 1))  # a hanging indent
        g.add_column(no_wrap=True)
        g.add_column(overflow="fold")
        for m in misses:
            g.add_row(" –", Text(m.line, style="yellow" if m.touches else ""))
            g.add_row("", Text(modelcheck.miss_consequence(m), style="dim"))
        rows.append(g)
    rows.append(Text(modelcheck.RULE_TEXT, style="dim"))
    return Group(*rows)


def legend(level: float) -> RenderableType:
    return Group(*(Text(line, style="dim") for line in parts.legend_lines(level)))


def advice_view(report: Report) -> RenderableType:
    level = parts.level_of(report)
    out: list[RenderableType] = [header(report)]
    recs = report.recommendations
    out.append(Rule(f"recommendations, ranked by predicted speed-up ({len(recs)})",
                    align="left"))
    if not recs:
        out.append(Text("Nothing to change: no recommendation is predicted to gain "
                        f"{fmt.times(parts.MIN_SPEEDUP)} or more.", style="green"))
    out += [recommendation_view(i, r, level) for i, r in enumerate(recs, 1)]
    tables = [scaling_table(a, level, report) for a in report.advice if a.model is not None]
    if tables:
        out.append(Rule("predicted scaling", align="left"))
        out.append(Columns(tables, padding=(1, 4)))
    if report.cluster is not None:
        from hep_advisor.render.cluster_view import cluster_view

        out.append(cluster_view(report.cluster))
    if report.trace is not None:  # --trace FILE: the user's program as it ran
        from hep_advisor.render.trace_view import trace_section

        out.append(trace_section(report.trace))
    out.append(Rule("model check", align="left"))
    out.append(model_check_view(report))
    out.append(Rule("site and data", align="left"))
    out.append(site_summary(report))
    out += [dataset_summary(a) for a in report.advice]
    out.append(legend(level))
    return Group(*out)
