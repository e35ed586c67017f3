"""Every view of one advice says the same numbers: the TUI (its Scaling, Overview and Advice
tabs, run headless at 80×24) and the report (Markdown, terminal text, HTML) print the same
knee, the same ceiling and the same speed-ups, and the knee is W001's.

The advice is the stored one the TUI tests use (``tests/data/tui_small_files.json``)."""

from __future__ import annotations

import asyncio
import io
import re
from typing import Any

import pytest
from rich.console import Console
from tui_helpers import fixture_advice, settle, wait_until

from hep_advisor.findings.advice import Report
from hep_advisor.models.knee import KNEE_FRACTION, knee
from hep_advisor.render import fmt
from hep_advisor.render.html import report_html
from hep_advisor.render.markdown import report_markdown
from hep_advisor.render.report_parts import speedup_line
from hep_advisor.render.scaling import CAPACITY_LABEL, KNEE_LABEL, scaling_data

KNEE = re.compile(re.escape(KNEE_LABEL) + r":\s+(\d+) workers?, ([\d.,]+ MB/s)")
CEILING = re.compile(re.escape(CAPACITY_LABEL) + r":?\s+([\d.,]+ MB/s)")
SPEEDUP = r"(\d[\d.]*×)(?: faster)? \(interval (\d[\d.]*)–(\d[\d.]*×)\)"


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory,
                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HEP_ADVISOR_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))


@pytest.fixture(scope="module")
def advice() -> Any:
    return fixture_advice()


def tui_texts(advice: Any) -> dict[str, Any]:
    """What the TUI shows: the Scaling tab's plot and notes, the Overview's recommendations
    and each recommendation's detail on the Advice tab."""
    from textual.widgets import OptionList, Static

    from hep_advisor.tui import make_app
    from hep_advisor.tui.panes.scaling import ScalingPlot

    app = make_app(advice=advice)
    app.animation_level = "none"
    out: dict[str, Any] = {"detail": {}}

    async def main() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_until(pilot, lambda: app.loaded is not None, what="the advice")
            await settle(pilot)
            out["overview"] = str(app.query_one("#ov-recs", Static).render())
            await pilot.press("4")
            await settle(pilot)
            out["notes"] = str(app.query_one("#scaling-notes", Static).render())
            out["plot"] = str(app.query_one(ScalingPlot).render())
            await pilot.press("5")
            await settle(pilot)
            app.query_one("#rec-list", OptionList).focus()
            for i, rec in enumerate(advice.recommendations):
                if i:
                    await pilot.press("down")
                    await pilot.pause()
                out["detail"][rec.code] = str(app.query_one("#rec-detail", Static).render())

    asyncio.run(main())
    return out


def one(pattern: re.Pattern[str], text: str) -> tuple[str, ...]:
    found = {m.groups() for m in pattern.finditer(" ".join(text.split()))}
    assert len(found) == 1, f"{pattern.pattern!r}: {found} in {text!r}"
    return found.pop()


def test_tui_and_report_show_the_same_knee_ceiling_and_speedups(advice: Any) -> None:
    report = Report(site=advice.site, advice=(advice,))
    md = report_markdown(report)
    buf = io.StringIO()
    Console(file=buf, width=200, color_system=None).print(report)
    text = buf.getvalue()
    html = re.sub(r"<[^>]+>", " ", report_html(report))
    tui = tui_texts(advice)

    # the knee: W001's, 90% of the best predicted rate, the same in every view
    d = scaling_data(advice)
    w001 = next(r for r in advice.recommendations if r.code == "W001")
    assert KNEE_FRACTION == 0.90 and d.knee == w001.workers
    assert d.knee == knee(zip(d.workers, d.predicted, strict=True))
    want_knee = (str(w001.workers), fmt.mb_per_s(d.predicted_at(w001.workers)))
    for name, view in (("markdown", md), ("text", text), ("html", html),
                       ("tui", tui["notes"])):
        assert one(KNEE, view) == want_knee, name
    mark = next(m for m in d.marks() if m.label.startswith("knee"))  # the plot's knee mark
    assert mark.workers == w001.workers and mark.label in tui["plot"]

    # the ceiling: the storage's capacity from the model, one label everywhere
    assert d.capacity is not None
    want_ceiling = (fmt.mb_per_s(d.capacity),)
    for name, view in (("markdown", md), ("text", text), ("html", html),
                       ("tui notes", tui["notes"]), ("tui plot", tui["plot"])):
        assert one(CEILING, view) == want_ceiling, name
        assert "hardware limit" not in view

    # the speed-ups, each recommendation's, printed alike (2.58×, never 2.6×)
    for rec in advice.recommendations:
        printed = fmt.speedup_text(rec.predicted_speedup, rec.speedup_low, rec.speedup_high)
        # (one its own measurement contradicts says so, with the model's figure beside it)
        said = f"predicted {printed}" if rec.contradicted else f"Predicted speed-up {printed}"
        assert said in md and printed in text and printed in html
        detail = " ".join(tui["detail"][rec.code].split())
        if rec.contradicted:  # the TUI says it as the reports do, never "Predicted: ... faster"
            assert speedup_line(rec) in detail and "Predicted:" not in detail, rec.code
            continue
        got = re.search("Predicted: " + SPEEDUP, detail)
        assert got is not None, tui["detail"][rec.code]
        assert f"{got[1]} ({got[2]}–{got[3]})" == printed, rec.code
        low_high = printed.split(" ", 1)[1].strip("()")
        assert f"{fmt.times(rec.predicted_speedup)} " in tui["overview"]
        assert low_high in tui["overview"], rec.code


def test_speedups_print_alike() -> None:
    assert [fmt.times(x) for x in (1.05, 1.8, 2.0, 2.582, 12.4)] == \
        ["1.05×", "1.8×", "2.0×", "2.58×", "12×"]
    assert fmt.speedup_text(1.05, 0.98, 1.2) == "1.05× (0.98–1.2×)"
