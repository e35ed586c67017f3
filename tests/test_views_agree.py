"""Every view of one advice says the same numbers: the TUI (its Scaling, Overview and Advice
tabs, run headless at 80×24) and the report (Markdown, terminal text, HTML) print the same
knee, the same ceiling and the same speed-ups, and the knee is W001's; the short report
(terminal, Markdown, HTML) prints the same shares, speed-ups with their 90% intervals,
commands, reader, model check and counts.

The advice is the stored one the TUI tests use (``tests/data/tui_small_files.json``); the
short report's, the demo's three datasets from their stored calibrations
(``report_helpers``)."""

from __future__ import annotations

import asyncio
import html as htmllib
import io
import re
from pathlib import Path
from typing import Any

import pytest
from report_helpers import stored_demo_report
from rich.console import Console
from tui_helpers import fixture_advice, settle, wait_until

from hep_advisor.findings.advice import Report
from hep_advisor.models.knee import KNEE_FRACTION, knee
from hep_advisor.render import fmt, modelcheck, summary
from hep_advisor.render.advice_view import advice_view
from hep_advisor.render.html import report_html
from hep_advisor.render.markdown import report_markdown
from hep_advisor.render.report_parts import counts_line, speedup_line
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
    md = report_markdown(report, verbose=True)  # the full views: the scaling, every card
    buf = io.StringIO()
    Console(file=buf, width=200, color_system=None).print(advice_view(report))
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

    # the speed-ups, each recommendation's, printed alike (2.58×, never 2.6×), the reports
    # naming the interval's level
    for rec in advice.recommendations:
        printed = fmt.speedup_text(rec.predicted_speedup, rec.speedup_low, rec.speedup_high)
        level = fmt.speedup_level(rec.predicted_speedup, rec.speedup_low, rec.speedup_high)
        # (one its own measurement contradicts says so, with the model's figure beside it)
        said = f"predicted {level}" if rec.contradicted else f"Predicted speed-up {level}"
        assert said in md and level in text and level in html
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


def _flat(text: str) -> str:
    return " ".join(text.split())


def short_views(report: Report) -> dict[str, str]:
    """The short report as each view prints it, as plain words: the terminal's (its broken
    command lines joined), the Markdown's (unescaped) and the HTML page's (its text)."""
    buf = io.StringIO()
    Console(file=buf, width=80, color_system=None).print(report)
    text = buf.getvalue().replace(" \\\n", " ")
    md = re.sub(r"\\([\\`*_\[\]<>|#~&])", r"\1", report_markdown(report))
    md = md.replace("**", "").replace("`", "")
    page = report_html(report).replace("<sup>", "^")  # 10<sup>6</sup> bytes
    page = htmllib.unescape(re.sub(r"<[^>]+>", " ", page))
    return {"text": _flat(text), "markdown": _flat(md), "html": _flat(page)}


def test_the_short_views_say_the_same_thing(tiny_demo: Path) -> None:
    report = stored_demo_report(tiny_demo)
    views = short_views(report)
    mc = modelcheck.report_check(report)
    rows, rejected = summary.rec_rows(report)
    assert rows and mc.checked
    facts = [summary.units_line(0.9), summary.reader_line(report), counts_line(report),
             modelcheck.header_line(mc)[len("model check: "):],
             *modelcheck.warning_lines(mc, len(report.advice))]
    for d in summary.dataset_rows(report):
        facts += [d.rate, d.shares]  # the shares add up (summary.share_percents)
    for row in rows:
        facts += [row.rec.title, row.act.command or row.act.note]
    facts += [summary.rejected_line(r, True) for r in rejected]
    for name, view in views.items():
        # the severity, speed-up and dataset: on one line (the page puts the severity in a
        # badge before the title)
        lines = [row.line for row in rows] if name != "html" else \
            [x for row in rows for x in row.line.split(" · ", 1)]
        missing = [f for f in [*facts, *lines] if _flat(f) not in view and
                   _flat(f[:1].upper() + f[1:]) not in view]
        assert not missing, (name, missing)
    # one figure per fact: each recommendation's speed-up, in the same words, once per view
    for row in rows:
        said = fmt.speedup_level(row.rec.predicted_speedup, row.rec.speedup_low,
                                 row.rec.speedup_high)
        for name, view in views.items():
            if name != "html":  # the page's cards (collapsed) say it again
                assert view.count(said) == sum(
                    1 for r in rows if fmt.speedup_level(r.rec.predicted_speedup,
                                                         r.rec.speedup_low,
                                                         r.rec.speedup_high) == said), name
