"""Scaling: the predicted aggregate rate against workers in its shaded interval, the measured
points, the knee and the cores marked, the storage's capacity (see ``tui.plot``); under it
the same figures as the report's (``render.scaling.summary_parts``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from hep_advisor.render.scaling import summary_parts
from hep_advisor.tui.panes.base import show_if_loaded
from hep_advisor.tui.plot import SERIES, draw

if TYPE_CHECKING:
    from textual.style import Style
    from textual.visual import VisualType

    from hep_advisor.render.scaling import ScalingData
    from hep_advisor.tui.source import Loaded


class ScalingPlot(Widget):
    """Draws ``data`` to fit its size; each series styled by a component class (a cell of
    the curve on the interval's shade takes both)."""

    #: what the x axis counts
    X_NAME = "workers"
    EMPTY = "No scaling prediction yet."
    #: where the light theme needs a look of its own (a lighter shade, a darker curve)
    LIGHT: ClassVar[set[str]] = {"band", "band-edge", "predicted"}
    COMPONENT_CLASSES: ClassVar[set[str]] = {f"plot--{name}" for name in SERIES} | \
        {f"plot--{name}-light" for name in LIGHT}

    DEFAULT_CSS = """
    ScalingPlot { height: 1fr; min-height: 8; }
    ScalingPlot > .plot--predicted { color: $accent; text-style: bold; }
    ScalingPlot > .plot--band { background: $primary 40%; }
    ScalingPlot > .plot--band-edge { color: $primary 40%; }
    ScalingPlot > .plot--measured { color: $text-success; text-style: bold; }
    ScalingPlot > .plot--raw { color: $text-warning; text-style: bold; }
    ScalingPlot > .plot--capacity { color: $text-error; }
    ScalingPlot > .plot--mark { color: $foreground; }
    ScalingPlot > .plot--axis { color: $foreground-muted; }
    ScalingPlot > .plot--label { color: $foreground; }
    ScalingPlot > .plot--off { color: $text-error; text-style: bold; }
    ScalingPlot > .plot--band-light { background: $primary 20%; }
    ScalingPlot > .plot--band-edge-light { color: $primary 20%; }
    ScalingPlot > .plot--predicted-light { color: $accent-darken-3; text-style: bold; }
    """

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.data: ScalingData | None = None

    def set_data(self, data: ScalingData | None) -> None:
        self.data = data
        self.refresh()

    def render(self) -> VisualType:
        if self.data is None or not self.data.workers:
            return Content.styled(self.EMPTY, "$text-muted")
        styles: dict[str, Style] = {}
        light = "-light" if not self.app.current_theme.dark else ""

        def style(key: str) -> Style:
            if key not in styles:
                styles[key] = self.get_visual_style(
                    *(f"plot--{s}{light if s in self.LIGHT else ''}" for s in key.split("+")))
            return styles[key]

        lines = []
        for runs in draw(self.data, self.size.width, self.size.height, self.X_NAME):
            parts = [Content.styled(text, style(s)) if s else Content(text)
                     for text, s in runs]
            lines.append(Content("").join(parts))
        return Content("\n").join(lines)


class ScalingPane(Vertical):
    def compose(self) -> ComposeResult:
        yield ScalingPlot(id="plot")
        yield Static("", id="scaling-notes")

    def on_mount(self) -> None:
        show_if_loaded(self)

    def show(self, loaded: Loaded, scaling: ScalingData | None) -> None:
        self.query_one(ScalingPlot).set_data(scaling)
        notes = self.query_one("#scaling-notes", Static)
        a = loaded.advice
        if scaling is None or not scaling.workers:
            notes.update(Content.styled("No fitted model: " + ("; ".join(a.notes) or
                                                               "nothing to predict from"),
                                        "$text-warning"))
            return
        parts: list[Content] = [Content.assemble((f"{name}: ", "$text-muted"), (value, "bold"))
                                for name, value in summary_parts(scaling)]
        notes.update(Content(" · ").join(parts))
