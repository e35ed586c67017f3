"""Overview: the verdict with each limit's share of the time, the site and dataset cards, and
the top recommendations."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.widgets import Static

from hep_advisor.tui import views

if TYPE_CHECKING:
    from hep_advisor.render.scaling import ScalingData
    from hep_advisor.tui.source import Loaded


class OverviewPane(VerticalScroll):
    """The first tab: what limits the analysis now, and what to do first."""

    def compose(self) -> ComposeResult:
        verdict = Static("Loading: probing the site and the data…", id="ov-verdict")
        verdict.border_title = "Verdict"
        yield verdict
        with Horizontal(id="ov-cards"):
            site = Static("", id="ov-site", classes="card")
            site.border_title = "Site"
            yield site
            data = Static("", id="ov-dataset", classes="card")
            data.border_title = "Dataset"
            yield data
        recs = Static("", id="ov-recs")
        recs.border_title = "Top recommendations"
        yield recs

    def show_message(self, text: str, style: str = "$text-muted") -> None:
        self.query_one("#ov-verdict", Static).update(Content.styled(text, style))

    def show(self, loaded: Loaded, scaling: ScalingData | None) -> None:
        a = loaded.advice
        if a.verdict is not None:
            verdict = views.verdict_content(a.verdict)
        else:
            verdict = Content.styled(
                "No verdict: " + ("; ".join(a.notes) or "the calibration could not be fitted"),
                "$text-warning")
        if a.notes and a.verdict is not None:
            verdict = Content.assemble(verdict, "\n", *[(f"note: {n}\n", "$text-warning")
                                                        for n in a.notes]).rstrip()
        self.query_one("#ov-verdict", Static).update(verdict)
        self.query_one("#ov-site", Static).update(views.site_card(a.site))
        self.query_one("#ov-dataset", Static).update(views.dataset_card(a.label, a.dataset))
        recs = self.query_one("#ov-recs", Static)
        counts = a.counts()
        recs.border_subtitle = (f"{counts['critical']} critical · {counts['warning']} warnings · "
                                f"{counts['uncertain']} uncertain · {counts['info']} info")
        recs.update(views.top_recommendations(a.recommendations))
