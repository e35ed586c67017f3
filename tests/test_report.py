"""`hep-advisor report` and its four formats: the terminal view (80 columns and wider), Markdown,
the versioned JSON, and the self-contained HTML page with its SVG scaling plot; the matplotlib
plot; writing with -o (atomically); exit codes and error lines."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from rich.cells import cell_len
from rich.console import Console

from hep_advisor.cli import main
from hep_advisor.document.schema import generate_schema
from hep_advisor.findings.advice import Advice, Report
from hep_advisor.findings.recommendation import (
    CRITICAL_SPEEDUP,
    MIN_SPEEDUP,
    WARNING_SPEEDUP,
    Action,
    Evidence,
    Option,
    Recommendation,
)
from hep_advisor.pipeline.advise import advise
from hep_advisor.pipeline.derive import advise_from
from hep_advisor.pipeline.fileio import write_atomically
from hep_advisor.render import fmt, report_parts, scaling, summary
from hep_advisor.render.advice_view import advice_view
from hep_advisor.render.html import report_html, scaling_svg
from hep_advisor.render.markdown import esc, report_markdown

#: The keys the issue names for each recommendation of the JSON document.
REC_KEYS = {"code", "kind", "title", "severity", "audience", "predicted_speedup", "speedup_low",
            "speedup_high", "evidence", "actions"}
NASTY = "<script>alert('x')</script> & | pipes | `ticks` **bold**"


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Calibrations go to a temporary cache (shared with the CLI's subprocesses, which then
    reuse the fixture's calibration and run in a couple of seconds)."""
    path = tmp_path_factory.mktemp("cache")
    mp = pytest.MonkeyPatch()
    mp.setenv("HEP_ADVISOR_CACHE", str(path))
    yield path
    mp.undo()


@pytest.fixture(scope="module")
def small(tiny_demo: Path, cache_dir: Path) -> Advice:
    return advise([str(tiny_demo / "small_files")], budget_s=3)


@pytest.fixture(scope="module")
def report(small: Advice, tiny_demo: Path) -> Report:
    """Two datasets on one site: the small files, and the LZMA file."""
    lzma = advise([str(tiny_demo / "flat" / "pythia_lzma7.root")], budget_s=2, site=small.site,
                  label="LZMA file")
    return Report(site=small.site, advice=(small, lzma))


def _rec(code: str, speedup: float, dataset: str, **kw: Any) -> Recommendation:
    from hep_advisor.findings.recommendation import severity_for

    fields: dict[str, Any] = dict(
        code=code, kind="layout", title=f"title of {code} {NASTY}",
        severity=severity_for(speedup), audience="site admin", predicted_speedup=speedup,
        speedup_low=speedup * 0.9, speedup_high=speedup * 1.1, workers=2, scenario="x",
        summary=f"summary {NASTY}",
        evidence=(Evidence(f"figure {NASTY}", 1.5, "MB/s", "measured", f"note {NASTY}"),
                  Evidence("threshold", 2.0, "×", "threshold")),
        actions=(Action(f"do {NASTY}", "echo '<b>' | grep -c b && ls"), Action("then wait")),
        assumptions=(f"assumed {NASTY}",),
        options=(Option("separate disks", 1.8, 1.5, 2.1, f"caveat {NASTY}"),),
        dataset=dataset)
    fields.update(kw)
    return Recommendation(**fields)


@pytest.fixture(scope="module")
def made(small: Advice) -> Report:
    """The real advice with hand-made recommendations of every severity, with text that
    needs escaping in Markdown and HTML."""
    recs = (_rec("X001", CRITICAL_SPEEDUP + 0.5, small.label),
            _rec("X002", WARNING_SPEEDUP + 0.1, small.label, options=()),
            _rec("X003", MIN_SPEEDUP + 0.01, small.label, evidence=(), actions=()))
    return replace(small, recommendations=recs).report()


def _text(renderable: object, width: int) -> str:
    buf = io.StringIO()
    Console(file=buf, width=width, force_terminal=False, color_system=None).print(renderable)
    return buf.getvalue()


# -- the terminal view ---------------------------------------------------------------------------

def test_text_has_the_verdict_counts_recommendations_and_legend(report: Report) -> None:
    """The full report (``--verbose``)."""
    assert report.recommendations, "the demo's small files should get recommendations"
    text = _text(advice_view(report), 400)
    for a in report.advice:
        assert a.verdict is not None and summary.headline(a.verdict) in text
        assert f"{a.label}: predicted scaling" in text
        for pct in summary.share_percents(a.verdict.shares):
            assert f"{pct}%" in text
    for r in report.recommendations:
        assert r.code in text and r.title in text
        assert fmt.speedup_level(r.predicted_speedup, r.speedup_low, r.speedup_high) in text
        for act in r.actions:
            assert (act.command or act.description).splitlines()[0] in text
    assert report_parts.counts_line(report) in text
    assert "critical ≥ 2.0×" in text and "warning ≥ 1.25×" in text and "info ≥ 1.05×" in text
    assert "90% intervals" in text and report.site.hostname in text


@pytest.mark.parametrize("width", [80, 120])
def test_text_fits_the_terminal(made: Report, report: Report, width: int) -> None:
    for r in (made, report):
        for view in (r, advice_view(r)):  # short, and --verbose
            lines = _text(view, width).splitlines()
            assert max(cell_len(line) for line in lines) <= width
    assert "separate disks" in _text(advice_view(made), width)  # the options table


def test_ranking_and_severity_colours(made: Report) -> None:
    buf = io.StringIO()
    Console(file=buf, width=100, force_terminal=True, color_system="truecolor").print(made)
    ansi = buf.getvalue()
    assert "\x1b[" in ansi  # coloured on a terminal
    text = _text(advice_view(made), 100)
    assert text.index("1. CRITICAL X001") < text.index("2. WARNING X002") < text.index(
        "3. INFO X003")
    short = _text(made, 100)
    assert short.index("1. X001") < short.index("critical ·") < short.index("2. X002") \
        < short.index("warning ·") < short.index("3. X003") < short.index("info ·")


def test_advice_renders_itself(small: Advice) -> None:
    assert small.verdict is not None and summary.shares_text(small.verdict) in _text(small, 400)
    html = small._repr_html_()
    assert html.startswith('<div class="hepa">') and "<svg" in html
    ET.fromstring(html)


def test_many_worker_counts_are_thinned_in_the_scaling_table(small: Advice) -> None:
    assert small.model is not None
    p = small.model.predictions[0]
    many = tuple(replace(p, workers=w) for w in range(1, 129))
    big = replace(small, model=replace(small.model, predictions=many))
    rows = scaling.scaling_rows(big)
    workers = [r.workers for r in rows]
    assert len(rows) <= 16 and {1, 2, 64, 128} <= set(workers)
    assert [r.workers for r in rows if r.now] == [scaling.now_workers(small)]


# -- Markdown ----------------------------------------------------------------------------------

def _md_tables(md: str) -> list[list[str]]:
    tables: list[list[str]] = []
    current: list[str] = []
    for line in md.splitlines():
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    return tables


def test_markdown_has_the_tables_and_the_commands(report: Report, made: Report) -> None:
    short = report_markdown(report)
    assert short.startswith("# hep-advisor report")
    assert "| dataset | now, 1 job | where the time goes |" in short
    for row in summary.rec_rows(report)[0]:
        assert f"**`{row.rec.code}` {esc(row.rec.title)}**" in short
        assert row.act.command is None or row.act.command in short
    md = report_markdown(report, verbose=True)
    assert md.startswith("# hep-advisor report")
    for heading in ("## Verdict", "## Recommendations", "## Predicted scaling", "## Site",
                    "## Data", "## Legend"):
        assert heading in md
    assert "| evidence | value | source | note |" in md
    assert "| workers | MB/s | interval (90%) | events/s |" in md
    for r in report.recommendations:
        assert f"`{r.code}`" in md
        for act in r.actions:
            if act.command:
                assert "```" in md and act.command.splitlines()[0] in md
    for t in (_md_tables(md) + _md_tables(report_markdown(made, verbose=True))
              + _md_tables(short)):
        cells = {len(re.split(r"(?<!\\)\|", row)) for row in t}
        assert len(cells) == 1, t  # every row has the header's columns (pipes escaped)
        assert re.fullmatch(r"\| (---:?)( \| ---:?)* \|", t[1])


def test_markdown_escapes_text(made: Report) -> None:
    short = report_markdown(made)
    assert "<script>" not in short and r"\<script\>" in short
    md = report_markdown(made, verbose=True)
    assert "<script>" not in md and r"\<script\>" in md
    assert "| caveat" in md and r"\| pipes \|" in md
    assert "```bash\n   echo '<b>' | grep -c b && ls\n   ```" in md  # code is verbatim


# -- JSON --------------------------------------------------------------------------------------

def test_json_follows_the_schema(report: Report) -> None:
    doc = json.loads(json.dumps(report.to_json(), allow_nan=False))
    jsonschema.validate(doc, generate_schema())
    assert doc["command"] == "report" and len(doc["datasets"]) == 2
    recs = doc["recommendations"]
    assert [r["code"] for r in recs] == [r.code for r in report.recommendations]
    speedups = [r["predicted_speedup"] for r in recs]
    assert speedups == sorted(speedups, reverse=True)
    for r in recs:
        assert r.keys() >= REC_KEYS
        assert r["speedup_low"] <= r["predicted_speedup"] <= r["speedup_high"]
        assert all({"description", "command"} <= a.keys() for a in r["actions"])
        assert all({"name", "value", "unit", "source"} <= e.keys() for e in r["evidence"])


# -- HTML --------------------------------------------------------------------------------------

def _external(root: ET.Element) -> list[str]:
    found = []
    for el in root.iter():
        for name, value in el.attrib.items():
            if name in ("src", "href", "xlink:href", "action", "data") or name.endswith("}href"):
                found.append(f"{el.tag} {name}={value}")
    return found


def test_html_is_well_formed_and_self_contained(report: Report) -> None:
    page = report_html(report)
    assert page.startswith("<!DOCTYPE html>")
    root = ET.fromstring(page)
    assert root.tag == "html"
    svgs = list(root.iter("svg"))
    assert len(svgs) == len(report.advice)
    assert not _external(root)  # no linked resource at all
    assert not re.search(r"https?://", page) and "<script" not in page and "<link" not in page
    assert "@import" not in page and "url(http" not in page
    text = "".join(root.itertext())
    for r in report.recommendations:
        assert r.code in text and r.title in text
    for a in report.advice:
        assert a.verdict is not None and summary.shares_text(a.verdict) in text
    assert "storage capacity (model)" in text and "knee" in text
    fragment = report_html(report, standalone=False)
    assert fragment.startswith('<div class="hepa"><style>')
    assert ET.fromstring(fragment).tag == "div"


def test_html_escapes_text(made: Report) -> None:
    page = report_html(made)
    ET.fromstring(page)
    assert "<script>" not in page and "&lt;script&gt;" in page
    root = ET.fromstring(page)
    assert NASTY in "".join(root.itertext())  # escaped, not lost
    assert "echo '<b>' | grep -c b && ls" in "".join(root.itertext())


@pytest.fixture(scope="module")
def stored() -> Advice:
    """Advice from a stored calibration with a parallel loop and a concurrency sweep (a live
    3 s calibration on a loaded machine may not reach the parallel loop)."""
    from tui_helpers import fixture_advice

    return fixture_advice(label="small")


def test_svg_plot_shows_predictions_measurements_and_limits(stored: Advice) -> None:
    """The prediction in its shaded interval, the measured points, the knee and the cores,
    the ceiling; the raw reads of the page cache (200× the rest) named with their values, not
    drawn; every shape inside the axes (nothing drawn off the chart, no clipping needed)."""
    from hep_advisor.render.scaling_svg import PLOT_BOX

    small = stored
    svg = ET.fromstring(scaling_svg(small))
    text = " ".join(svg.itertext())
    cal = small.calibration
    assert cal is not None and cal.parallel_loop and cal.concurrency
    assert svg.find(".//polygon") is not None  # the interval band
    assert len(svg.findall(".//polyline")) == 1  # the prediction, the one line
    assert svg.find(".//clipPath") is None
    assert scaling.MEASURED_LABEL in text and "90% interval" in text
    assert "storage capacity (model): 3.33 MB/s" in text  # on its rule
    assert "knee · 2 cores" in text and scaling.UNITS_NOTE in text
    assert "raw reads (cold): 619.9–665.7 MB/s, off the scale" in text
    titles = [t.text or "" for t in svg.iter("title")]
    assert sum(t.endswith("(event loop, warm)") for t in titles) == len(cal.parallel_loop)
    raw = next(t for t in titles if t.startswith(scaling.RAW_LABEL))  # the values, on hover
    assert raw.count("MB/s") == len(cal.concurrency)
    left, top, width, height = PLOT_BOX
    drawn: list[tuple[float, float]] = []  # the plot's shapes (the legend's are in <g>s)
    for el in svg:
        if el.tag == "circle":
            drawn.append((float(el.get("cx", 0)), float(el.get("cy", 0))))
        elif el.tag in ("polygon", "polyline"):
            drawn += [(float(x), float(y)) for x, y in
                      (pt.split(",") for pt in el.get("points", "").split())]
    assert len(drawn) > 2 * len(small.model.predictions)  # type: ignore[union-attr]
    assert all(left <= x <= left + width and top <= y <= top + height for x, y in drawn)
    # an advice without a fitted model still draws its measured points, and names the rest
    bare = replace(small, model=None, verdict=None, baseline=None)
    assert "<polygon" not in scaling_svg(bare) and "raw reads" in scaling_svg(bare)
    assert "(event loop, warm)" in scaling_svg(bare)


# -- the matplotlib plot -----------------------------------------------------------------------

def test_matplotlib_plot(stored: Advice) -> None:
    small = stored
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ax = small.plot()
    try:
        labels = ax.get_legend_handles_labels()[1]
        assert scaling.MEASURED_LABEL in labels and "predicted" in labels
        assert any(label.startswith("storage capacity") for label in labels)
        assert any("interval" in label for label in labels)
        # the raw reads of the page cache (200× the rest): named with their values, not drawn
        assert "raw reads (cold): 619.9–665.7 MB/s, off the scale (not drawn)" in labels
        assert scaling.RAW_LABEL not in labels
        r = scaling.scaling_data(small).plot_range()
        assert ax.get_ylim() == (0, r.ymax) and ax.get_yscale() == "linear"
        marks = [t.get_text() for t in ax.texts]
        assert "knee · 2 cores" in marks and "storage capacity (model): 3.33 MB/s" in marks
        fig, other = plt.subplots()
        assert small.plot(ax=other) is other
        plt.close(fig)
    finally:
        plt.close(ax.figure)


def test_plot_without_matplotlib_says_how_to_get_it(small: Advice,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match="pip install matplotlib"):
        small.plot()


# -- the command -------------------------------------------------------------------------------

def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hep_advisor", "report", *args],
                          capture_output=True, text=True, timeout=300, env=os.environ.copy())


def test_cli_json_on_stdout_is_only_json(small: Advice, tiny_demo: Path) -> None:
    r = run(str(tiny_demo / "small_files"), "--budget", "3", "--format", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)  # nothing but the document
    jsonschema.validate(doc, generate_schema())
    assert [x["code"] for x in doc["recommendations"]] == [x.code for x in small.recommendations]
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("fmt", ["text", "md", "json", "html"])
def test_cli_writes_the_file_atomically(small: Advice, tiny_demo: Path, tmp_path: Path,
                                        fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / f"report.{fmt}"
    out.write_text("old\n")
    assert main(["report", str(tiny_demo / "small_files"), "--budget", "3", "--format", fmt,
                 "-o", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip().splitlines()[-1] == f"wrote {out}"
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]  # no temporary file left
    content = out.read_text()
    assert small.recommendations[0].code in content
    if fmt == "text":
        assert "\x1b[" not in content
        assert max(cell_len(line) for line in content.splitlines()) <= 100
    elif fmt == "json":
        jsonschema.validate(json.loads(content), generate_schema())
    elif fmt == "html":
        ET.fromstring(content)
    else:
        assert content.startswith("# hep-advisor report")


def test_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    target = tmp_path / "r.md"
    target.write_text("old\n")

    def broken(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError):
        write_atomically(target, "new\n")
    assert target.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["r.md"]


def test_cli_unwritable_output_is_one_line(small: Advice, tiny_demo: Path, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "missing" / "r.md"
    assert main(["report", str(tiny_demo / "small_files"), "--budget", "3", "--format", "md",
                 "-o", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(out) in err[0] and "cannot write" in err[0]


@pytest.mark.parametrize("kind", ["missing", "not root"])
def test_cli_bad_path_is_one_line_and_exit_2(tmp_path: Path, cache_dir: Path, kind: str) -> None:
    path = tmp_path / "nothing.root"
    if kind == "not root":
        path.write_text("not a ROOT file\n")
    r = run(str(path), "--budget", "2")
    assert r.returncode == 2
    assert r.stdout == "" and "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0]


def test_cli_without_paths_reports_on_the_demo(report: Report,
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from hep_advisor.demo import report as demo

    calls: list[dict[str, Any]] = []

    def fake_demo_report(budget_s: float, **kw: Any) -> Report:
        calls.append({"budget_s": budget_s, **kw})
        return report

    monkeypatch.setattr(demo, "demo_report", fake_demo_report)
    assert main(["report", "--budget", "7", "--format", "md", "--no-cache"]) == 0
    assert calls and calls[0]["budget_s"] == 7 and calls[0]["cache"] is False
    md = capsys.readouterr().out
    assert all(f"| {esc(a.label)} |" in md for a in report.advice)
    assert main(["report", "--branches", "a,b"]) == 2  # the demo runs its own event loop


def test_cli_ctrl_c_reports_what_was_measured(small: Advice, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """A cancelled calibration (Ctrl-C) still gives the report, and exit status 130."""
    from hep_advisor.pipeline import advise as core

    def cancelled(paths: Any, cancel: threading.Event, **kw: Any) -> Advice:
        cancel.set()
        return small

    monkeypatch.setattr(core, "advise", cancelled)
    assert main(["report", "some.root", "--format", "json"]) == 130
    captured = capsys.readouterr()
    assert json.loads(captured.out)["recommendations"] is not None
    assert "partial" in captured.err


def test_report_help() -> None:
    with pytest.raises(SystemExit) as exc:
        main(["report", "--help"])
    assert exc.value.code == 0


def test_a_report_on_calibrated_data_renders_the_same_advice_again(small: Advice,
                                                                   report: Report) -> None:
    """Advising again from the cached calibration gives the same findings, and every format
    renders. (How long it takes is a benchmark: benchmarks/timing/bench_report.py.)"""
    again = advise_from(small.site, small.dataset, small.calibration, label=small.label)
    assert [r.code for r in again.recommendations] == [r.code for r in small.recommendations]
    for render in (report_markdown, report_html, lambda r: _text(r, 100), Report.to_json):
        assert render(report)
