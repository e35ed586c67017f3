"""Overview: the verdict with each limit's share of the time, the site and dataset cards, and
the top recommendations.  While the advice is on its way: the step under way, how long until
the advice, and the site and dataset cards as soon as the probes end."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.widgets import Static

from hep_advisor.tui import views

if TYPE_CHECKING:
    from hep_advisor.render.scaling import ScalingData
    from hep_advisor.tui.source import Loaded, Probed


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

    def show_waiting(self, step: str, when: str) -> None:
        """The advice is on its way: ``step`` under way, ``when`` it comes."""
        self.query_one("#ov-verdict", Static).update(Content.assemble(
            (when, "bold"), "\n", step, "\n",
            ("The Calibrate tab (3) shows the read tests live; Esc stops them (the advice then "
             "rests on what was measured).", "$text-muted")))
        recs = self.query_one("#ov-recs", Static)
        if not recs.border_subtitle:  # nothing shown yet (not an earlier advice)
            recs.update(Content.styled("The ranked recommendations come with the advice.",
                                       "$text-muted"))

    def show_probed(self, probed: Probed) -> None:
        """The site and dataset cards, from the probes (before the read tests)."""
        self.query_one("#ov-site", Static).update(views.site_card(probed.site))
        self.query_one("#ov-dataset", Static).update(
            views.dataset_card(probed.label, probed.dataset))

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
