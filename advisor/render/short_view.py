"""The default terminal report: the answer first, on one screen.

One line per dataset (where its time goes), one to three per recommendation (code, title,
speed-up with its 90% interval, the one command to act), the reader the figures assume, one
line of model check and where the detail is (``--verbose``, ``hep-advisor explain CODE``,
``hep-advisor try CODE``).  The words are :mod:`.summary`'s, shared with Markdown and HTML;
the full cards are :mod:`.advice_view`'s.
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text

from hep_advisor.findings.advice import Report
from hep_advisor.render import modelcheck, summary
from hep_advisor.render import report_parts as parts

SEVERITY_STYLE = {"critical": "bold red", "warning": "yellow", "uncertain": "magenta",
                  "info": "cyan"}
#: Columns before a recommendation's second and third lines.
INDENT = 4


class CommandLine:
    """``lead: command``, a shell command broken between its words with `` \\`` continuations
    where the terminal is narrower than it (so that what is copied runs as one line)."""

    def __init__(self, lead: str, command: str | None, note: str = "",
                 indent: int = INDENT, caution: str = "") -> None:
        self.lead, self.command, self.note, self.indent = lead, command, note, indent
        self.caution = caution

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        pad = " " * self.indent
        if self.command is None:
            yield Text(f"{pad}{self.lead}: {self.note}", style="dim")
        else:
            prefix = f"{pad}{self.lead}: "
            shell = parts.command_language(self.command) == "bash"
            lines = summary.command_lines(self.command, options.max_width, len(prefix),
                                          self.indent + 2) if shell else [self.command]
            for i, line in enumerate(lines):
                t = Text(prefix if i == 0 else " " * (self.indent + 2), style="dim")
                t.append(line, style="bold cyan")
                # where the command leaves room: where it goes (it is in --verbose too)
                if i == len(lines) - 1 and self.note and \
                        t.cell_len + 2 + len(self.note) <= options.max_width:
                    t.append(f"  {self.note}", style="dim")
                yield t
        if self.caution:
            yield Text(f"{pad}{self.caution}", style="magenta", overflow="fold")


def _datasets(report: Report) -> RenderableType:
    rows = summary.dataset_rows(report)
    t = Table.grid(padding=(0, 2))
    t.add_column(no_wrap=True, style="bold")
    t.add_column(justify="right", no_wrap=True)
    t.add_column(overflow="fold")
    t.add_row(Text("dataset", style="dim"), Text(summary.rate_heading(rows), style="dim"),
              Text("where the time goes", style="dim"))
    for r in rows:
        t.add_row(r.label, r.rate, r.shares)
    return t


def _recommendations(report: Report) -> list[RenderableType]:
    rows, rejected = summary.rec_rows(report)
    out: list[RenderableType] = []
    out.append(Text(parts.counts_line(report), style="bold"))
    if not rows and not rejected:
        out.append(Text(summary.nothing_line(), style="green"))
    for row in rows:
        head = Text()
        head.append(f"{row.rank:>2}. ", style="bold")
        head.append(row.rec.code, style="bold")
        head.append(f"  {row.rec.title}")
        line = Text(" " * INDENT)
        sev, _, rest = row.line.partition(" · ")
        line.append(sev, style=SEVERITY_STYLE.get(sev, ""))
        if rest:
            line.append(" · " + rest)
        out += [head, line, CommandLine(row.act.lead, row.act.command, row.act.note,
                                        caution=row.act.caution)]
    several = len(report.advice) > 1
    if rejected:
        out.append(Text(f"{summary.REJECTED_HEAD} ({len(rejected)}):", style="bold yellow"))
        out += [Text(f"    {summary.rejected_line(r, several)}", style="yellow")
                for r in rejected]
    return out


def _model_check(report: Report) -> list[RenderableType]:
    mc = modelcheck.report_check(report)
    style = "yellow" if mc.warnings else ""
    out: list[RenderableType] = [Text(modelcheck.header_line(mc), style=style)]
    out += [Text(f"  ⚠ {w}", style="yellow")
            for w in modelcheck.warning_lines(mc, len(report.advice))]
    return out


def summary_view(report: Report) -> RenderableType:
    """The report, short: what ``hep-advisor report`` prints by default."""
    level = parts.level_of(report)
    title = Text(summary.title_line(report), style="bold")
    out: list[RenderableType] = [title, Text(summary.units_line(level), style="dim"),
                                 Text("")]
    if report.advice:
        out += [_datasets(report), Text("")]
    else:
        out += [Text("no dataset was advised on (cancelled before the first)",
                     style="yellow"), Text("")]
    out += _recommendations(report)
    out.append(Text(""))
    out.append(Text(summary.reader_line(report)))
    skipped = summary.skipped_line(report)
    if skipped:
        out.append(Text(skipped, style="dim"))
    out += _model_check(report)
    if report.cluster is not None:  # asked for (--dask): shown whole
        from hep_advisor.render.cluster_view import cluster_view

        out.append(cluster_view(report.cluster))
    if report.trace is not None:  # asked for (--trace FILE): the user's program as it ran
        from hep_advisor.render.trace_view import trace_section

        out.append(trace_section(report.trace))
    out.append(Text(summary.footer_line(report), style="dim"))
    return Group(*out)
