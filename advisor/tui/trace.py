"""The Trace tab (``hep-advisor tui --trace FILE``): the user's own program as it ran, from a
saved ``hep-advisor trace --json`` document: the requests drawn over time (offset against
time, coloured by kind, the phases under the time axis; :mod:`hep_advisor.render.trace_grid`), the
time split, and the reader findings, each with its predicted speed-up and the change to paste
(``c`` copies the highlighted one's).  The tab is added when an advice with a trace arrives,
so the app without ``--trace`` keeps its tabs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widget import Widget
from textual.widgets import OptionList, Static, TabbedContent, TabPane
from textual.widgets.option_list import Option

from hep_advisor.render import trace_parts as tp
from hep_advisor.render.trace_grid import draw, legend, phase_legend
from hep_advisor.tui.panes.base import show_if_loaded
from hep_advisor.tui.views import bar

if TYPE_CHECKING:
    from textual.visual import VisualType

    from hep_advisor.findings.trace import Trace
    from hep_advisor.tui.source import Loaded

TAB_ID = "trace"
TITLE = "Trace"


class TracePlot(Widget):
    """The requests over time, drawn to fit its size; each kind styled by a component class."""

    STYLES = ("basket", "key", "metadata", "other", "axis", "label", "phase")
    COMPONENT_CLASSES: ClassVar[set[str]] = {f"trace--{name}" for name in STYLES}

    DEFAULT_CSS = """
    TracePlot { height: 13; text-wrap: nowrap; text-overflow: clip; }
    TracePlot > .trace--basket { color: $text-primary; }
    TracePlot > .trace--key { color: $text-error; text-style: bold; }
    TracePlot > .trace--metadata { color: $text-success; }
    TracePlot > .trace--other { color: $foreground-muted; }
    TracePlot > .trace--axis { color: $foreground-muted; }
    TracePlot > .trace--label { color: $foreground-muted; }
    TracePlot > .trace--phase { color: $text-warning; }
    """

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.trace: Trace | None = None

    def set_trace(self, trace: Trace | None) -> None:
        self.trace = trace
        self.refresh()

    def runs(self, rows: list[list[tuple[str, str]]]) -> Content:
        styles = {name: self.get_visual_style(f"trace--{name}") for name in self.STYLES}
        return Content("\n").join(
            Content("").join(Content.styled(text, styles[s]) if s in styles else Content(text)
                             for text, s in r) for r in rows)

    def render(self) -> VisualType:
        t = self.trace
        if t is None or t.picture is None:
            return Content.styled("No picture: this trace was saved without its requests "
                                  "(trace the program again with this version).",
                                  "$text-muted")
        return self.runs(draw(t.picture, t.phases, self.size.width, self.size.height))


def summary_content(t: Trace) -> Content:
    """Three lines: the command; what it read and how long it took; the best reader change
    (its details are under the picture)."""
    reads = sum(f.requests for f in t.files)
    amp = "" if t.amplification is None else f" · amplification {t.amplification:.2f}×"
    drawn = ""
    if t.picture is not None and t.picture.thinned:
        drawn = f" · {len(t.picture.requests):,} drawn"
    best = max(t.findings, key=lambda f: f.predicted_speedup, default=None)
    return Content.assemble(
        (t.command, "bold"), (f"  exit {t.exit_code}", "$text-muted"), "\n",
        f"{t.wall_s:.2f} s wall, {'cold' if t.cold else 'warm'} · {reads:,} requests, "
        f"{tp.mb(sum(f.bytes for f in t.files))}{drawn}{amp}", "\n",
        Content.assemble(("Best change ", "$text-muted"), finding_line(best),
                         ("  (below)", "$text-muted")) if best is not None else
        Content.styled("No reader change predicted to help.", "$text-muted"))


def split_content(t: Trace, width: int = 20) -> Content:
    """The time split: one bar per part, its share of the untraced wall time."""
    wall = tp.untraced_wall_s(t)
    rows = tp.split_rows(t)
    label_w = max(len(p) for p, _, _ in rows)
    lines = [Content.styled(f"Where the time went (of {wall:.2f} s untraced wall)", "bold")]
    for part, s, _how in rows:
        share = (s or 0.0) / wall if wall > 0 else 0.0
        style = "$text-muted" if part == "unexplained" else "$text-primary"
        lines.append(Content.assemble(
            f"{part:<{label_w}} ", (bar(max(share, 0.0), width), style),
            f" {tp.sec(s):>8} {100 * share:4.0f}%"))
    return Content("\n").join(lines)


def finding_line(f: Any) -> Content:
    return Content.assemble((f"{f.code} ", "bold"), (f"{f.predicted_speedup:.2f}×".rjust(6),
                                                     "bold $text-success"), f"  {f.title}")


def finding_detail(f: Any) -> Content:
    parts: list[Content] = [
        Content.assemble((f.title, "bold"), "\n", (f"{tp.finding_speedup(f)} faster",
                                                   "bold $text-success")),
    ]
    arg = tp.finding_argument(f)
    if arg:
        parts.append(Content.assemble(("argument ", "$text-muted"), (arg, "bold")))
    parts.append(Content.assemble(("Change (c copies it)", "bold underline"), "\n",
                                  (f.change, "$text-accent")))
    if f.evidence:
        rows = [Content.styled("Evidence", "bold underline")]
        rows += [Content.styled(f"• {tp.evidence_line(x)}", "$text-muted") for x in f.evidence]
        parts.append(Content("\n").join(rows))
    return Content("\n\n").join(parts)


class TracePane(VerticalScroll):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("c", "copy", "Copy the change")]
    DEFAULT_CSS = """
    TracePane { padding: 0 1; }
    TracePane #trace-summary, TracePane #trace-legend { height: auto; text-wrap: nowrap;
                                                        text-overflow: ellipsis; }
    TracePane #trace-split { height: auto; margin: 1 0; }
    TracePane #trace-list { height: auto; max-height: 8; border: round $primary-muted;
                            border-title-color: $text-primary; }
    TracePane #trace-list:focus { border: round $accent; }
    TracePane #trace-detail { height: auto; padding: 0 1; }
    """

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.trace: Trace | None = None
        self.selected: Any = None
        self._findings: list[Any] = []

    def compose(self) -> ComposeResult:
        yield Static("", id="trace-summary")
        yield TracePlot(id="trace-plot")
        yield Static("", id="trace-legend")
        yield Static("", id="trace-split")
        findings = OptionList(id="trace-list")
        findings.border_title = "Reader changes, by predicted speed-up"
        yield findings
        yield Static("", id="trace-detail")

    def on_mount(self) -> None:
        show_if_loaded(self)

    def show(self, loaded: Loaded, scaling: Any = None) -> None:
        t = loaded.advice.trace
        self.trace = t
        if t is None:
            self.query_one("#trace-summary", Static).update(Content.styled(
                "No trace: run with --trace FILE (hep-advisor trace --json -o FILE -- ...).",
                "$text-muted"))
            return
        self.query_one("#trace-summary", Static).update(summary_content(t))
        plot = self.query_one(TracePlot)
        plot.set_trace(t)
        counts = {k: getattr(t.requests_by_kind, k) for k in tp.KINDS}
        self.query_one("#trace-legend", Static).update(
            plot.runs([legend(counts), phase_legend(t.phases)]))
        self.query_one("#trace-split", Static).update(split_content(t))
        findings = sorted(t.findings, key=lambda f: -f.predicted_speedup)
        options = self.query_one("#trace-list", OptionList)
        options.clear_options()
        options.add_options([Option(finding_line(f), id=f"{i}") for i, f in
                             enumerate(findings)])
        self._findings = findings
        options.display = bool(findings)
        if findings:
            options.highlighted = 0
            self.select(findings[0])
        else:
            self.selected = None
            self.query_one("#trace-detail", Static).update(Content.styled(tp.NO_FINDING,
                                                                          "$text-muted"))

    def select(self, f: Any) -> None:
        self.selected = f
        self.query_one("#trace-detail", Static).update(finding_detail(f))

    @on(OptionList.OptionHighlighted, "#trace-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        i = int(event.option.id or 0)
        if 0 <= i < len(self._findings):
            self.select(self._findings[i])

    def action_copy(self) -> None:
        if self.selected is None:
            self.notify("No reader change to copy.", severity="warning")
            return
        self.app.copy_to_clipboard(self.selected.change)
        first = self.selected.change.splitlines()[0]
        self.notify(f"Copied to the clipboard: {first[:60]}{'…' if len(first) > 60 else ''}",
                    title="Copied")


def show_trace_tab(app: Any, loaded: Loaded) -> None:
    """Add the Trace tab (numbered after the tabs there) the first time an advice with a
    trace arrives; show it."""
    if loaded.advice.trace is None:
        return
    panes = list(app.query(TracePane))
    if panes:
        panes[0].show(loaded)
        return
    tabs = app.query_one(TabbedContent)
    number = tabs.tab_count + 1
    tabs.add_pane(TabPane(f"{number} {TITLE}", TracePane(id="trace-pane"), id=TAB_ID))
