"""Advice: the ranked recommendations; the highlighted one's evidence, predicted gain and the
actions to take, whose commands ``c`` copies to the clipboard (OSC 52, where the terminal
allows)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from .. import views
from .base import show_if_loaded

if TYPE_CHECKING:
    from ...advice import Action, Recommendation
    from ..plot import ScalingData
    from ..source import Loaded


class AdvicePane(Vertical):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("c", "copy", "Copy")]

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.recommendations: tuple[Recommendation, ...] = ()
        self.selected: Recommendation | None = None

    def compose(self) -> ComposeResult:
        recs = OptionList(id="rec-list")
        recs.border_title = "Recommendations, ranked by predicted gain"
        yield recs
        with VerticalScroll(id="rec-scroll"):
            yield Static(Content.styled("The recommendations appear once the read tests are "
                                        "done (the Calibrate tab, 3, shows them).",
                                        "$text-muted"), id="rec-detail")
            actions = OptionList(id="rec-actions")
            actions.border_title = "Actions (c copies the highlighted command)"
            actions.display = False
            yield actions

    def on_mount(self) -> None:
        show_if_loaded(self)

    def show(self, loaded: Loaded, scaling: ScalingData | None) -> None:
        self.recommendations = loaded.advice.recommendations
        recs = self.query_one("#rec-list", OptionList)
        recs.clear_options()
        recs.add_options([Option(views.rec_line(i, r), id=r.code)
                          for i, r in enumerate(self.recommendations, 1)])
        if self.recommendations:
            recs.highlighted = 0
            self.select(self.recommendations[0])
        else:
            self.selected = None
            self.query_one("#rec-detail", Static).update(Content.styled(
                "No recommendation applies: nothing here is predicted to gain 5% or more.",
                "$text-muted"))
            self.query_one("#rec-actions", OptionList).clear_options()

    def select(self, rec: Recommendation) -> None:
        self.selected = rec
        self.query_one("#rec-detail", Static).update(views.recommendation_detail(rec))
        actions = self.query_one("#rec-actions", OptionList)
        actions.clear_options()
        actions.add_options([Option(_action_prompt(a), id=str(i))
                             for i, a in enumerate(rec.actions)])
        first = next((i for i, a in enumerate(rec.actions) if a.command), None)
        actions.highlighted = first if first is not None else (0 if rec.actions else None)
        actions.display = bool(rec.actions)
        self.query_one("#rec-scroll", VerticalScroll).scroll_home(animate=False)

    @on(OptionList.OptionHighlighted, "#rec-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        rec = next((r for r in self.recommendations if r.code == event.option.id), None)
        if rec is not None and rec is not self.selected:
            self.select(rec)

    @on(OptionList.OptionSelected, "#rec-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        actions = self.query_one("#rec-actions", OptionList)
        if actions.display:
            actions.focus()

    @on(OptionList.OptionSelected, "#rec-actions")
    def _action_selected(self) -> None:
        self.action_copy()

    def selected_command(self) -> str | None:
        """The highlighted action's command, or the selected recommendation's first one."""
        if self.selected is None:
            return None
        actions = self.query_one("#rec-actions", OptionList)
        idx = actions.highlighted
        if idx is not None and 0 <= idx < len(self.selected.actions):
            cmd = self.selected.actions[idx].command
            if cmd:
                return cmd
        return next((a.command for a in self.selected.actions if a.command), None)

    def action_copy(self) -> None:
        if self.selected is None:
            self.notify("No recommendation selected.", severity="warning")
            return
        cmd = self.selected_command()
        if cmd is None:
            self.notify("This recommendation has no command to copy.", severity="warning")
            return
        self.app.copy_to_clipboard(cmd)
        first = cmd.splitlines()[0]
        self.notify(f"Copied to the clipboard: {first[:60]}{'…' if len(first) > 60 else ''}",
                    title="Copied")


def _action_prompt(a: Action) -> Content:
    if not a.command:
        return Content(a.description)
    return Content.assemble(a.description, "\n", ("  " + a.command.replace("\n", "\n  "),
                                                  "bold $text-accent"))
