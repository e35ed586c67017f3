"""Scaling: the predicted aggregate rate against workers, with its interval, the measured
points, the knee, ideal linear scaling and the storage's capacity (see ``tui.plot``); under it
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
from hep_advisor.tui.plot import draw

if TYPE_CHECKING:
    from textual.visual import VisualType

    from hep_advisor.render.scaling import ScalingData
    from hep_advisor.tui.source import Loaded


class ScalingPlot(Widget):
    """Draws ``data`` to fit its size; each series styled by a component class."""

    SERIES = ("predicted", "band", "measured", "knee", "ideal", "capacity", "cores", "axis",
              "label")
    COMPONENT_CLASSES: ClassVar[set[str]] = {f"plot--{name}" for name in SERIES}

    DEFAULT_CSS = """
    ScalingPlot { height: 1fr; min-height: 8; }
    ScalingPlot > .plot--predicted { color: $accent; text-style: bold; }
    ScalingPlot > .plot--band { color: $primary-lighten-1; }
    ScalingPlot > .plot--measured { color: $foreground; text-style: bold; }
    ScalingPlot > .plot--knee { color: $success; text-style: bold; }
    ScalingPlot > .plot--ideal { color: $foreground-muted; }
    ScalingPlot > .plot--capacity { color: $error; }
    ScalingPlot > .plot--cores { color: $foreground-muted; }
    ScalingPlot > .plot--axis { color: $foreground-muted; }
    ScalingPlot > .plot--label { color: $foreground-muted; }
    """

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.data: ScalingData | None = None

    def set_data(self, data: ScalingData | None) -> None:
        self.data = data
        self.refresh()

    def render(self) -> VisualType:
        if self.data is None or not self.data.workers:
            return Content.styled("No scaling prediction yet.", "$text-muted")
        styles = {name: self.get_visual_style(f"plot--{name}") for name in self.SERIES}
        lines = []
        for runs in draw(self.data, self.size.width, self.size.height):
            parts = [Content.styled(text, styles[s]) if s in styles else Content(text)
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
