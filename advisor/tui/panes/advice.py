"""Advice: the ranked recommendations; the highlighted one's evidence, predicted gain and the
actions to take, whose commands ``c`` copies to the clipboard (OSC 52, where the terminal
allows).  ``y`` tries the highlighted file recommendation (M001, R001, C001) on a sample in a
worker thread (``hep_advisor.pipeline.trial``), live, and shows predicted against realised; ``Esc``
there, or leaving the app, stops it (the scratch data are removed)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from hep_advisor.tui import views
from hep_advisor.tui.panes.base import show_if_loaded

if TYPE_CHECKING:
    from hep_advisor.findings.recommendation import Action, Recommendation
    from hep_advisor.render.scaling import ScalingData
    from hep_advisor.tui.source import Loaded


class AdvicePane(Vertical):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "copy", "Copy"),
        Binding("y", "try_selected", "Try", show=False),
        Binding("escape", "cancel_try", "Stop the trial", show=False)]
    #: the trial's budget in the TUI (seconds)
    TRY_BUDGET_S = 30.0

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.recommendations: tuple[Recommendation, ...] = ()
        self.selected: Recommendation | None = None
        self.trying: str | None = None
        self.trial: Any = None  # the last TrialResult
        self._try_cancel = threading.Event()

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
            trial = Static("", id="rec-try")
            trial.display = False
            yield trial

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


    # -- try --------------------------------------------------------------------------------------
    def action_try_selected(self) -> None:
        from hep_advisor.rules.registry import tryable

        rec, advice = self.selected, getattr(self.app, "advice", None)
        if rec is None or advice is None:
            self.notify("No recommendation selected.", severity="warning")
            return
        if self.trying is not None:
            self.notify(f"{self.trying} is being tried (Esc stops it).")
            return
        if rec.code not in tryable():
            self.notify(f"{rec.code} changes no file: try knows {', '.join(tryable())}.",
                        severity="warning")
            return
        if advice.fitted is None:
            self.notify("The model is still loading: try again in a moment.")
            return
        self.trying = rec.code
        self._try_cancel = threading.Event()
        self._show_try(Content.styled(f"Trying {rec.code} on a sample (about "
                                      f"{self.TRY_BUDGET_S:.0f} s; Esc stops)…", "bold"))
        self._run_try(advice, rec.code, self._try_cancel)

    def action_cancel_try(self) -> None:
        if self.trying is not None:
            self._try_cancel.set()
        else:  # Esc as everywhere else: the app's (cancel the read tests, leave a field)
            cancel = getattr(self.app, "action_cancel", None)
            if cancel is not None:
                cancel()

    def on_unmount(self) -> None:
        self._try_cancel.set()

    def _show_try(self, text: Content) -> None:
        w = self.query_one("#rec-try", Static)
        w.update(text)
        w.display = True

    @work(thread=True, exit_on_error=False, group="try", description="try a recommendation")
    def _run_try(self, advice: Any, code: str, cancel: threading.Event) -> None:
        def progress(fraction: float, message: str) -> None:
            self.app.call_from_thread(self._show_try, Content.assemble(
                (f"Trying {code}: {100 * fraction:.0f}%  ", "bold"), message))

        try:
            from hep_advisor.pipeline.trial import try_recommendation

            result = try_recommendation(advice, code, budget_s=self.TRY_BUDGET_S,
                                        progress=progress, cancel=cancel)
        except KeyboardInterrupt:
            self.app.call_from_thread(self._try_done, None, f"{code}: trial stopped; "
                                      "the scratch data were removed")
            return
        except Exception as exc:
            self.app.call_from_thread(self._try_done, None, f"{code}: {exc}")
            return
        self.app.call_from_thread(self._try_done, result, None)

    def _try_done(self, result: Any, error: str | None) -> None:
        self.trying = None
        if result is None:
            self._show_try(Content.styled(error or "", "$text-warning"))
            self.notify(error or "", severity="warning", title="Try")
            return
        self.trial = result
        s = result.sample
        style = "$text-success" if result.within_interval else "$text-error"
        lines = [Content.styled(f"Tried {result.code} on {s.files} file(s), "
                                f"{s.bytes / 1e6:,.1f} MB", "bold"),
                 Content(f"predicted {result.predicted_speedup:.2f}× "
                         f"[{result.speedup_low:.2f}–{result.speedup_high:.2f}]"),
                 Content.styled(f"realised {result.realised_speedup:.2f}× "
                                f"({'within' if result.within_interval else 'outside'} the "
                                "interval)", style)]
        if result.sample_predicted_speedup is not None:
            lines.insert(2, Content(f"predicted for the sample "
                                    f"{result.sample_predicted_speedup:.2f}×"))
        if result.refit:
            lines.append(Content.styled("refitted: ranking " + (", ".join(result.refit_ranking)
                                                                or "(none)")
                                        + ("; kept for later runs" if result.stored else ""),
                                        "$text-muted"))
        self._show_try(Content("\n").join(lines))
        self.notify(result.headline(), title="Try")


def _action_prompt(a: Action) -> Content:
    if not a.command:
        return Content(a.description)
    return Content.assemble(a.description, "\n", ("  " + a.command.replace("\n", "\n  "),
                                                  "bold $text-accent"))
