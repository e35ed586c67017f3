"""The answer first: the default report of the demo fits a screen, ``--verbose`` keeps every
card, ``hep-advisor explain`` prints one card (or the model check) from the cached advice
without calibrating, the model check warns only where a miss matters, numbers never print in
e-notation, and the HTML page to share puts the verdict and the actions first.

The demo's report is built from the stored calibrations (``report_helpers``), so that the
counts below are the same on every machine."""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from report_helpers import DEMO, stored_advice, stored_demo_report
from rich.cells import cell_len
from rich.console import Console

from hep_advisor._version import __version__
from hep_advisor.cli import main
from hep_advisor.findings.advice import Report, Share, Verdict
from hep_advisor.findings.recommendation import Evidence, Recommendation
from hep_advisor.models.selfcheck import SelfCheck, term_of
from hep_advisor.render import fmt, modelcheck, site_parts, summary
from hep_advisor.render import report_parts as parts
from hep_advisor.render.advice_view import advice_view, recommendation_view
from hep_advisor.render.formats import RenderOptions, render_report
from hep_advisor.render.html import report_html
from hep_advisor.render.markdown import report_markdown

E_NOTATION = re.compile(r"\d(?:\.\d+)?e[+-]\d", re.IGNORECASE)
INTERNAL = re.compile(r"random \d+ B\b|concurrency \d")


@pytest.fixture(scope="module")
def demo_report(tiny_demo: Path) -> Report:
    return stored_demo_report(tiny_demo)


def _text(renderable: object, width: int) -> str:
    buf = io.StringIO()
    Console(file=buf, width=width, force_terminal=False, color_system=None).print(renderable)
    return buf.getvalue()


# -- the default report ------------------------------------------------------------------------

def test_the_demos_report_fits_a_screen_with_the_first_command_near_the_top(
        demo_report: Report) -> None:
    text = render_report(demo_report, "text", width=80)
    lines = text.rstrip("\n").splitlines()
    assert len(lines) <= 40, text
    assert max(cell_len(line) for line in lines) <= 80
    first = next(i for i, line in enumerate(lines, 1)
                 if re.match(r"\s+(do it|measure it first): ", line))
    assert first <= 25, text
    # one line per dataset, with its shares adding up
    for a in demo_report.advice:
        assert a.verdict is not None
        row = next(line for line in lines if line.startswith(a.label + " "))
        pcts = [int(p) for p in re.findall(r"(\d+)%", row)]
        assert sum(pcts) == 100, row
    # every recommendation to act on, with its speed-up, its interval at 90% and one command
    rows, rejected = summary.rec_rows(demo_report)
    assert rows and len(rows) + len(rejected) == len(demo_report.recommendations)
    flat = " ".join(text.replace(" \\\n", " ").split())
    for row in rows:
        assert f"{row.rank}. {row.rec.code} {row.rec.title}" in flat
        assert fmt.speedup_level(row.rec.predicted_speedup, row.rec.speedup_low,
                                 row.rec.speedup_high) in flat
        assert row.act.command is not None and row.act.command in flat
    # the reader, the model check, where the detail is; the units once; no card's evidence
    assert "reader assumed: uproot.iterate, step_size='100 MB'" in flat
    assert "(--reader names yours)" in flat
    assert sum(line.startswith("model check: ") for line in lines) == 1
    assert "--verbose" in flat and "hep-advisor explain CODE" in flat \
        and "hep-advisor try CODE" in flat
    assert text.count("MB = 10^6 bytes") == 1 and "compressed MB read per second" in text
    assert "evidence" not in text and "assumes:" not in text


def test_commands_to_act_are_the_ones_apply_and_try_take(demo_report: Report) -> None:
    from hep_advisor.rules.registry import tryable

    for row in summary.rec_rows(demo_report)[0]:
        cmd = row.act.command or ""
        if row.rec.code in tryable():
            verb = "try" if row.rec.severity == "uncertain" else "apply"
            assert cmd.startswith(f"hep-advisor {verb} {row.rec.code} "), cmd
            a = next(x for x in demo_report.advice if x.label == row.rec.dataset)
            assert a.inputs[0] in cmd  # not the demo's default: its paths are named
            assert (verb == "apply") == (" --to " in cmd)
        else:
            first = next(x.command for x in row.rec.actions if x.command)
            assert cmd == first.strip().splitlines()[0]


def test_a_long_command_breaks_into_lines_that_run_as_one() -> None:
    cmd = "hepa try C001 '/a b/'\"'\"'c'\"'\"'/" + "x" * 40 + ".root' --to some-dir"
    lines = summary.command_lines(cmd, 40, 10)
    assert len(lines) > 1 and all(x.endswith(" \\") for x in lines[:-1])
    assert " ".join(x.removesuffix(" \\") for x in lines) == cmd
    assert lines[-1].endswith("--to some-dir")  # an option stays with its value


def test_an_uncertain_recommendation_says_so_and_offers_what_measures_it(
        demo_report: Report) -> None:
    from hep_advisor.rules.registry import rule

    advice = demo_report.advice[0]
    rec = next(r for r in advice.recommendations if r.contradicted is None)
    uncertain = replace(rec, severity="uncertain", speedup_low=1.1)
    card = _text(recommendation_view(1, uncertain), 200)
    r = rule(rec.code)
    assert r is not None
    assert "UNCERTAIN" in card and "uncertain: the interval" in card
    assert "reaches below 1.25×" in card and r.measure in " ".join(card.split())
    report = replace(advice, recommendations=(uncertain,)).report()
    act = summary.action(report, uncertain)
    if r.tryable:
        assert act.lead == "measure it first" and act.command is not None
        assert act.command.startswith(f"hep-advisor try {rec.code}")
    else:
        assert r.measure in act.note


# -- --verbose ---------------------------------------------------------------------------------

def test_verbose_keeps_every_card(demo_report: Report) -> None:
    """``--verbose`` prints each recommendation's card as ``recommendation_view`` draws it,
    with every figure, command and assumption of the recommendation."""
    width = 100
    verbose = render_report(demo_report, "text", width=width, verbose=True)
    level = parts.level_of(demo_report)
    for rank, rec in enumerate(demo_report.recommendations, 1):
        card = _text(recommendation_view(rank, rec, level), width)
        assert card in verbose, rec.code
        flat = " ".join(re.sub(r"[│╭╮╰╯]", " ", card).split())
        assert rec.title in flat and rec.summary.split(".")[0] in flat
        for e in rec.evidence:
            assert parts.evidence_value(e.value, e.unit).split()[0] in flat, e.name
        for act in rec.actions:
            for line in (act.command or "").splitlines():
                assert " ".join(line.split())[:40] in flat, line
        for x in rec.assumptions:
            assert " ".join(x.split())[:40] in flat
    assert "predicted scaling" in verbose and "site and data" in verbose
    short = render_report(demo_report, "text", width=width)
    assert len(verbose.splitlines()) > 5 * len(short.splitlines())


def test_one_figure_per_fact(demo_report: Report) -> None:
    """The headline's share is the bar's; the data's open cost is the cards'; the storage
    under three datasets has one figure (measured), not three fitted capacities."""
    text = _text(advice_view(demo_report), 200)
    assert site_parts.shares_a_device(demo_report)
    assert "storage capacity (model)" not in " ".join(text.split())
    assert " ".join(text.split()).count("cold sequential reads, one reader:") == 1
    md = report_markdown(demo_report, verbose=True)
    # the figure once (the model check may name the reads a miss disagrees with)
    assert "storage capacity (model)" not in md and md.count("| cold sequential reads") == 1
    single = demo_report.advice[0].report()
    assert not site_parts.shares_a_device(single)
    assert "storage capacity (model)" in " ".join(_text(advice_view(single), 200).split())
    for a in demo_report.advice:
        assert a.verdict is not None
        pcts = summary.share_percents(a.verdict.shares)
        assert sum(pcts) == 100
        assert f"{pcts[0]}% of the time" in summary.headline(a.verdict)
        assert summary.headline(a.verdict) in text
        open_s = parts.model_open_s(a)
        if open_s is not None:
            assert f"open {fmt.ms(open_s)} per file" in text
            for rec in a.recommendations:
                for e in rec.evidence:
                    if e.name == "open cost per file":
                        assert parts.evidence_value(e.value, e.unit) == fmt.ms(open_s)


def test_counts_set_the_not_recommended_apart(demo_report: Report) -> None:
    recs = demo_report.recommendations
    rejected = [r for r in recs if r.contradicted is not None]
    line = parts.counts_line(demo_report)
    assert line.startswith(f"{len(recs) - len(rejected)} recommendation")
    if rejected:
        assert line.endswith(f"; {len(rejected)} not recommended")
    text = render_report(demo_report, "text", width=80)
    for r in rejected:
        assert summary.rejected_line(r, True) in " ".join(text.split())


# -- numbers and names -------------------------------------------------------------------------

def test_numbers_never_print_in_e_notation() -> None:
    for x in (1.09e3, 1.54e3, 3.1e3, 2.65e-5, 1e-7, 123456789.0, 0.5, 23.45):
        for s in (fmt.sig(x), fmt.plain(x), parts.evidence_value(x, "s")):
            assert not E_NOTATION.search(s), s
    assert fmt.sig(1089.7) == "1,090" and fmt.sig(2.65e-5) == "0.0000265"
    assert fmt.plain(0.0000265) == "0.0000265" and fmt.plain(13120.0) == "13,120"
    assert fmt.byte_size(1048576) == "1 MiB" and fmt.byte_size(4096) == "4 KiB"
    assert fmt.kib(8192) == "8,192 KiB"


@pytest.mark.parametrize("verbose", [False, True])
def test_no_view_shows_e_notation_or_internal_names(demo_report: Report, verbose: bool) -> None:
    for fmt_name in ("text", "md", "html"):
        out = render_report(demo_report, fmt_name, width=100, verbose=verbose)
        out = re.sub(r"<style>.*?</style>", "", out, flags=re.S)
        found = [m.group(0) for m in E_NOTATION.finditer(out)]
        assert not found, (fmt_name, found)
        assert not INTERNAL.search(out), (fmt_name, INTERNAL.search(out))


# -- the model check ---------------------------------------------------------------------------

def _check(test: str, ok: bool = False) -> SelfCheck:
    return SelfCheck(test, term_of(test), {}, 100.0, 130.0, 1.3, 0.1, ok, cause="the fit")


def _rec(code: str, speedup: float, workers: int = 1, **kw: Any) -> Recommendation:
    return Recommendation(code=code, kind=code, title=code, severity="warning",
                          audience="analyst", predicted_speedup=speedup,
                          speedup_low=speedup * 0.9, speedup_high=speedup * 1.1,
                          workers=workers, scenario="x", summary="s", dataset="d", **kw)


def test_a_miss_warns_only_where_its_term_carries_a_tenth_of_a_recommendations_time(
        demo_report: Report) -> None:
    base = demo_report.advice[0]
    verdict = Verdict("per-file overhead", "h", 1, 10.0, None, (
        Share("per-file overhead", 0.90, "opening"), Share("decompression", 0.06, "dec"),
        Share("storage", 0.04, "disk")))
    merge = _rec("M001", 5.0)
    workers = _rec("W001", 1.9, workers=2)
    grows = _rec("C001", 2.0, evidence=(Evidence("size change", 50.0, "%", "measured"),))
    advice = replace(base, label="d", verdict=verdict,
                     recommendations=(merge, workers, grows))
    # decompression: 6% now, 30% after the merge (its seconds kept, the time 5x shorter)
    c = modelcheck.consequence(advice, _check("decompression ZLIB"), merge)
    assert c.before == pytest.approx(0.06) and c.after == pytest.approx(0.30)
    # the storage carries 4% now; after C001 (2x faster, 1.5x the bytes) 12%
    c = modelcheck.consequence(advice, _check("concurrency 4"), grows)
    assert c.after == pytest.approx(0.12)
    assert modelcheck.consequence(advice, _check("concurrency 4"), workers).share < 0.10
    # the cores' parallel efficiency touches W001 (2 workers), never a 1-worker change
    par = _check("parallel event loop 2")
    assert modelcheck.consequence(advice, par, merge).share == 0.0
    assert modelcheck.consequence(advice, par, workers).share >= 0.10

    model = base.model
    assert model is not None
    checks = (_check("unpacking (uproot, in memory)"), _check("decompression ZLIB"),
              _check("page cache", True))
    mc = modelcheck.model_check([replace(advice, model=replace(model, self_check=checks))])
    assert (mc.checked, mc.within, len(mc.misses)) == (3, 1, 2)
    assert [m.check.test for m in mc.warnings] == ["decompression ZLIB"]
    assert mc.misses[0].check.test == "decompression ZLIB"  # ranked by consequence
    line = modelcheck.header_line(mc)
    assert line == "model check: 1 of 3 points within tolerance; 1 of 2 misses touch one:"
    warnings = modelcheck.warning_lines(mc)
    assert len(warnings) == 1 and warnings[0].startswith(
        "decompression ZLIB missed (1.30x): ") and "M001" in warnings[0]
    assert modelcheck.describe(_check("random 1048576 B")).startswith(
        "random reads of 1 MiB: predicted 130 MB/s, measured 100 MB/s (1.30x, over-predicted")


def test_the_demo_model_check_is_one_line_without_warnings(demo_report: Report) -> None:
    mc = modelcheck.report_check(demo_report)
    assert mc.checked == sum(len(a.model.self_check) for a in demo_report.advice
                             if a.model is not None)
    text = render_report(demo_report, "text", width=80)
    assert modelcheck.header_line(mc).split(";")[0] in text
    assert ("⚠" in text) == bool(mc.warnings)


# -- explain -----------------------------------------------------------------------------------

@pytest.fixture
def cached_demo(tiny_demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache holding the demo (the tiny one, linked where the default demo goes) and the
    advice of each demo dataset, as ``hep-advisor report`` leaves them; calibrating fails."""
    from hep_advisor.pipeline import advise as core
    from hep_advisor.pipeline import cache
    from hep_advisor.pipeline.paths import default_demo_dir

    monkeypatch.setenv("HEP_ADVISOR_CACHE", str(tmp_path))
    root = default_demo_dir()
    root.parent.mkdir(parents=True, exist_ok=True)
    root.symlink_to(tiny_demo, target_is_directory=True)
    for label, (_, rel) in DEMO.items():
        advice = stored_advice(label, root)
        key = cache.cache_key([str(root / rel)],
                              core.engine_key("uproot", core.reader_spec(None)), None, None)
        cache.store_advice(key, advice)

    def no_calibration(*args: object, **kwargs: object) -> None:
        raise AssertionError("explain calibrated")

    monkeypatch.setattr(core, "calibrate_paths", no_calibration)
    monkeypatch.setattr(core, "advise", no_calibration)
    return root


def test_explain_prints_one_card_from_the_cached_advice(
        cached_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "M001"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    rec = stored_advice("small files", cached_demo).recommendation("M001")
    assert rec is not None
    assert "dataset small files" in out and rec.title in out and "evidence" in out
    for e in rec.evidence:
        assert e.name.split()[0] in out
    for act in rec.actions:
        if act.command:
            assert " ".join(act.command.splitlines()[0].split()) in out
    assert "assumes:" in out and "what measures it:" in out
    assert main(["explain", "b001"]) == 0  # a rule with no recommendation here
    assert "B001 is not among the recommendations" in capsys.readouterr().out


def test_explain_model_check_lists_every_point(cached_demo: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "model-check"]) == 0
    out = capsys.readouterr().out
    for label in DEMO:
        a = stored_advice(label, cached_demo)
        assert a.model is not None
        ok = sum(c.ok for c in a.model.self_check)
        assert f"{label}: {ok} of {len(a.model.self_check)} points within tolerance" in out
    assert "random reads of 1 MiB" in out and "model check:" in out
    assert not INTERNAL.search(out) and not E_NOTATION.search(out)


def test_explain_without_a_cached_advice_says_so_in_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HEP_ADVISOR_CACHE", str(tmp_path / "empty"))
    assert main(["explain", "M001"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no advice cached" in err[0] and "hep-advisor report" in err[0]
    assert not (tmp_path / "empty").exists() or not any((tmp_path / "empty").iterdir())
    assert main(["explain", "Z999"]) == 2
    assert "not a recommendation's code" in capsys.readouterr().err


# -- the HTML page -----------------------------------------------------------------------------

def test_the_html_page_puts_the_answer_first(demo_report: Report) -> None:
    import datetime as dt

    when = dt.datetime(2026, 12, 7, 9, 30, tzinfo=dt.timezone.utc)
    page = report_html(demo_report, options=RenderOptions(
        command="hep-advisor report --format html -o r.html", created=when))
    root = ET.fromstring(page)
    text = " ".join("".join(root.itertext()).split())
    assert f"made 2026-12-07 09:30 UTC · on {demo_report.site.hostname} · hep-advisor " \
           f"{__version__}" in text
    assert "command: hep-advisor report --format html -o r.html" in text
    order = ["Where the time goes", "What to do", "reader assumed:", "model check:",
             "For the site admin", "Predicted scaling", "The data and their calibrations"]
    assert [text.index(x) for x in order] == sorted(text.index(x) for x in order)
    # the cards' evidence, the scaling, the data (with their paths) are collapsed details
    details = list(root.iter("details"))
    assert details and all("open" not in d.attrib for d in details)
    inside = " ".join(" ".join("".join(d.itertext()).split()) for d in details)
    outside = text
    for d in [*details, *(c for c in root.iter("code") if c.attrib.get("class") == "cmd")]:
        outside = outside.replace(" ".join("".join(d.itertext()).split()), "")
    for a in demo_report.advice:
        for rec in a.recommendations:
            for e in rec.evidence:
                assert e.name in inside
        # the data's paths: in the details (and in a command that needs them), nowhere else
        assert a.inputs[0] in inside and a.inputs[0] not in outside
    assert "evidence" not in outside.replace("evidence, assumptions and every command", "")
    # the site admin's figures: one per fact, per device
    admin = next(s for s in root.iter("section") if "admin" in s.attrib.get("class", ""))
    admin_text = " ".join("".join(admin.itertext()).split())
    assert "cold sequential reads, one reader" in admin_text
    assert "median of 3 calibrations" in admin_text
    assert admin_text.count("Storage ") == len(demo_report.site.storage)
    verbose = report_html(demo_report, options=RenderOptions(verbose=True))
    assert all("open" in d.attrib for d in ET.fromstring(verbose).iter("details"))
