"""Scaling: the predicted aggregate rate against workers, with its interval, the measured
points, ideal linear scaling and the hardware limit (braille plot, see ``tui.plot``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from .. import views
from ..plot import draw
from .base import show_if_loaded

if TYPE_CHECKING:
    from textual.visual import VisualType

    from ..plot import ScalingData
    from ..source import Loaded


class ScalingPlot(Widget):
    """Draws ``data`` to fit its size; each series styled by a component class."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "plot--predicted", "plot--band", "plot--measured", "plot--ideal", "plot--limit",
        "plot--cores", "plot--axis", "plot--label"}

    DEFAULT_CSS = """
    ScalingPlot { height: 1fr; min-height: 8; }
    ScalingPlot > .plot--predicted { color: $accent; text-style: bold; }
    ScalingPlot > .plot--band { color: $accent-muted; }
    ScalingPlot > .plot--measured { color: $warning; text-style: bold; }
    ScalingPlot > .plot--ideal { color: $success; }
    ScalingPlot > .plot--limit { color: $error; }
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
        if self.data is None:
            return Content.styled("No scaling prediction yet.", "$text-muted")
        styles = {name: self.get_visual_style(f"plot--{name}") for name in
                  ("predicted", "band", "measured", "ideal", "limit", "cores", "axis", "label")}
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
        if scaling is None:
            notes.update(Content.styled("No fitted model: " + ("; ".join(a.notes) or
                                                               "nothing to predict from"),
                                        "$text-warning"))
            return
        best = max(scaling.predicted)
        now = next((v for n, v in zip(scaling.workers, scaling.predicted, strict=True)
                    if n == scaling.now_workers), scaling.predicted[0])
        parts: list[tuple[str, str] | str] = [
            "Now ", (views.rate(now), "bold"), f" at {scaling.now_workers} · knee ",
            (f"{scaling.knee} workers", "bold"), f" ({views.rate(best)})"]
        if scaling.limit is not None:
            parts += [" · limit ", (views.rate(scaling.limit), "bold")]
        notes.update(Content.assemble(*parts))
