"""The terminal view of a trace (Rich): what the program read (and the requests drawn over
time), what it cost, what to change.  ``hep-advisor trace`` prints :func:`trace_view`; the
report's text view ends with :func:`trace_section` (``report --trace FILE``).  The words and
figures are :mod:`.trace_parts`', shared with the Markdown and HTML views."""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from hep_advisor.findings.trace import Trace
from hep_advisor.render import trace_parts as tp
from hep_advisor.render.trace_grid import draw, legend, phase_legend

KIND_STYLE = {"basket": "blue", "key": "red", "metadata": "green", "other": "bright_black",
              "axis": "bright_black", "label": "", "phase": "yellow"}
#: The picture's height in rows (plot, time axis, labels, phases).
PICTURE_ROWS = 16


def summary_table(t: Trace) -> Table:
    tab = Table.grid(padding=(0, 2))
    tab.add_column(style="bold", no_wrap=True)
    tab.add_column(overflow="fold")
    for k, v in tp.summary_lines(t):
        tab.add_row(k, Text(v))
    return tab


def kinds_table(t: Trace) -> Table:
    tab = Table(title="requests by kind", title_justify="left")
    tab.add_column("kind")
    tab.add_column("requests", justify="right")
    tab.add_column("bytes", justify="right")
    for row in tp.kind_rows(t):
        tab.add_row(Text(row[0], style=KIND_STYLE[row[0]]), *row[1:])
    return tab


def files_table(t: Trace, limit: int = 8) -> Table:
    title, rows = tp.file_rows(t, limit)
    tab = Table(title=title, title_justify="left")
    for col in tp.FILE_HEADER:
        tab.add_column(col, justify="left" if col == "file" else "right",
                       overflow="fold" if col == "file" else "ellipsis")
    for r in rows:
        tab.add_row(*r)
    return tab


def phases_table(t: Trace) -> Table:
    tab = Table(title="phases", title_justify="left")
    for col in tp.PHASE_HEADER:
        tab.add_column(col, justify="left" if col == "phase" else "right")
    for r in tp.phase_rows(t):
        tab.add_row(*r)
    return tab


def split_table(t: Trace) -> Table:
    tab = Table(title="where the time went", title_justify="left")
    tab.add_column("part")
    tab.add_column("seconds", justify="right")
    tab.add_column("how", style="dim")
    for part, s, how in tp.split_rows(t):
        tab.add_row(part, tp.sec(s), how)
    return tab


def findings_view(t: Trace) -> RenderableType:
    if not t.findings:
        return Text(tp.NO_FINDING, style="dim")
    parts: list[RenderableType] = []
    for f in t.findings:
        body = Table.grid(padding=(0, 1))
        body.add_column()
        body.add_row(Text(tp.finding_speedup(f), style="bold"))
        arg = tp.finding_argument(f)
        if arg:
            body.add_row(Text(f"argument: {arg}"))
        body.add_row(Text("change:", style="bold"))
        body.add_row(Text(f.change, style="cyan"))
        for x in f.evidence:
            body.add_row(Text(f"• {tp.evidence_line(x)}", style="dim"))
        parts.append(Panel(body, title=f"{f.code}  {f.title}", title_align="left"))
    return Group(*parts)


class RequestsPicture:
    """The requests over time in character cells, as wide as the console (at most 120)."""

    def __init__(self, t: Trace, rows: int = PICTURE_ROWS) -> None:
        self.trace, self.rows = t, rows

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        t = self.trace
        if t.picture is None:
            return
        width = min(options.max_width, 120)
        yield Text("requests over time (offset in the file against seconds since the start)",
                   style="bold")
        for runs in draw(t.picture, t.phases, width, self.rows):
            yield Text.assemble(*((s, KIND_STYLE.get(k, "")) for s, k in runs))
        counts = {k: getattr(t.requests_by_kind, k) for k in tp.KINDS}
        line = Text.assemble(*((s, KIND_STYLE.get(k, "")) for s, k in legend(counts)))
        if t.picture.thinned:
            line.append(f"  ({len(t.picture.requests):,} of {t.picture.total:,} drawn)",
                        style="dim")
        yield line
        yield Text.assemble(*((s, KIND_STYLE.get(k, "")) for s, k in phase_legend(t.phases)))


def trace_view(t: Trace) -> RenderableType:
    notes = [Text(f"note: {n}", style="yellow") for n in t.notes]
    return Group(summary_table(t), RequestsPicture(t), kinds_table(t), files_table(t),
                 phases_table(t), split_table(t), findings_view(t), *notes)


def trace_section(t: Trace) -> RenderableType:
    """The report's Trace section (``report --trace FILE``)."""
    return Group(Rule("trace: the program as it ran", align="left"), trace_view(t))
