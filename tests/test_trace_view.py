"""The trace in the report and on its own page: ``report --trace FILE`` in every format (the
Trace section, the requests-over-time SVG with its kinds and phases), the picture's data
(``trace.picture``) and its terminal drawing, and a bad trace file's one-line error.

The stored trace (``tests/data/trace_prepass.json``) is a real one: see tests/data/README.md.
One test traces a real program (a tiny uproot file) and reports on it end to end."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import jsonschema
import numpy as np
import pytest
from tui_helpers import fixture_advice

from hep_advisor.document.report import DocumentError, read_trace
from hep_advisor.document.schema import generate_schema
from hep_advisor.findings.trace_picture import request_picture
from hep_advisor.render.formats import render_report

DATA = Path(__file__).parent / "data"
STORED = DATA / "trace_prepass.json"
SVG = "{http://www.w3.org/2000/svg}"
KINDS = ("basket", "key", "metadata", "other")


@pytest.fixture(scope="module")
def trace() -> Any:
    return read_trace(STORED)


@pytest.fixture(scope="module")
def report(trace: Any) -> Any:
    return replace(fixture_advice(), trace=trace).report()


def trace_svgs(html: str) -> list[ET.Element]:
    """The SVG pictures of the page's Trace section, parsed as XML (the page must be)."""
    root = ET.fromstring(html.split("\n", 1)[1])  # after <!DOCTYPE html>
    return [el for el in root.iter(f"{SVG}svg")
            if "Requests over time" in (el.get("aria-label") or "")]


# -- the report, in every format ---------------------------------------------------------------

def test_text_report_has_the_trace_section(report: Any, trace: Any) -> None:
    text = render_report(report, "text", width=100)
    assert "trace: the program as it ran" in text
    section = text.split("trace: the program as it ran", 1)[1]
    for words in ("requests by kind", "where the time went", "waiting for reads", "phases:",
                  "• key 1,200", trace.command):
        assert words in section
    f = trace.findings[0]
    assert f.code in section and f.change.splitlines()[0][:40] in section
    # the picture: the key pre-pass drawn with the key's mark, the data with the basket's
    assert section.count("•") > 20 and ("█" in section or "▪" in section)


def test_markdown_report_has_the_trace_section(report: Any, trace: Any) -> None:
    md = render_report(report, "md")
    assert "## Trace: the program as it ran" in md
    section = md.split("## Trace: the program as it ran", 1)[1].split("\n## ", 1)[0]
    assert "| key | 1,200 |" in section
    assert "| where the time went | seconds | how |" in section
    assert "### Reader changes" in section and f"`{trace.findings[0].code}`" in section
    assert "```python\n" + trace.findings[0].change in section
    assert "predicted" in section and "<svg" not in md


def test_html_report_has_the_picture(report: Any, trace: Any) -> None:
    html = render_report(report, "html")
    assert "<h2>Trace: the program as it ran</h2>" in html
    svgs = trace_svgs(html)
    assert len(svgs) == 1
    svg = svgs[0]
    groups = {g.get("class"): g for g in svg.iter(f"{SVG}g")}
    # every kind drawn is a group of marks in its colour; every kind has a legend entry
    drawn = {k for k in KINDS if f"kind-{k}" in groups}
    assert drawn == {r.kind for r in trace.picture.requests} and "key" in drawn
    assert len(groups["kind-key"]) == sum(1 for r in trace.picture.requests if r.kind == "key")
    legend = {k: "".join(groups[f"legend-{k}"].itertext()) for k in KINDS}
    assert "key (1,200)" in legend["key"] and "basket (" in legend["basket"]
    texts = " ".join("".join(t.itertext()) for t in svg.iter(f"{SVG}text"))
    assert "seconds since the program started" in texts and "offset in the file, MB" in texts
    phases = [r for r in svg.iter(f"{SVG}rect") if r.get("class") == "phase"]
    assert len(phases) == len(trace.phases) and "pre-pass" in texts
    assert trace.findings[0].change.splitlines()[0][:30] in html


def test_json_report_carries_the_trace(report: Any, trace: Any) -> None:
    doc = json.loads(render_report(report, "json"))
    jsonschema.validate(doc, generate_schema())
    assert doc["trace"]["requests_by_kind"]["key"] == 1200
    assert len(doc["trace"]["picture"]["requests"]) == len(trace.picture.requests)
    assert doc["trace"]["findings"][0]["code"] == trace.findings[0].code


def test_no_trace_no_section() -> None:
    report = fixture_advice().report()
    assert "Trace" not in render_report(report, "md")
    assert json.loads(render_report(report, "json"))["trace"] is None


def test_trace_page_alone_is_valid_and_has_the_picture(trace: Any) -> None:
    """``hep-advisor trace -o FILE.html``'s page."""
    from hep_advisor.render.trace_parts import trace_html

    page = trace_html(trace)
    assert len(trace_svgs(page)) == 1 and "Reader changes" in page


# -- the picture's data and drawing ------------------------------------------------------------

def reads(n: int, kinds: tuple[str, ...] = ("key",) * 9 + ("basket",)) -> list[Any]:
    return [SimpleNamespace(read=SimpleNamespace(file=f"f{i % 2}.root", offset=4096 * i,
                                                 size=300, start_s=i * 1e-3,
                                                 duration_s=1e-4),
                            kind=kinds[i % len(kinds)]) for i in range(n)]


def test_picture_keeps_every_request_up_to_its_limit() -> None:
    pic = request_picture(reads(50), 0.1)
    assert pic.total == 50 and len(pic.requests) == 50 and not pic.thinned
    assert pic.files == ("f0.root", "f1.root") and pic.extents == (4096 * 48 + 300,
                                                                    4096 * 49 + 300)
    assert [r.kind for r in pic.requests].count("basket") == 5


def test_a_thinned_picture_says_so_and_keeps_every_kind() -> None:
    rs = reads(5000, ("key",) * 999 + ("metadata",))
    pic = request_picture(rs, 5.0, limit=300)
    assert pic.thinned and pic.total == 5000 and len(pic.requests) <= 300 + 4
    assert {r.kind for r in pic.requests} == {"key", "metadata"}
    starts = [r.start_s for r in pic.requests]
    assert starts == sorted(starts)


def test_terminal_drawing_puts_the_reads_where_they_were() -> None:
    """Two reads: a small key read early and low, a large basket read late and high."""
    from hep_advisor.render.trace_grid import FILL, POINT, cells, draw

    rs = [SimpleNamespace(read=SimpleNamespace(file="f.root", offset=0, size=100, start_s=0.0,
                                               duration_s=0.001), kind="key"),
          SimpleNamespace(read=SimpleNamespace(file="f.root", offset=500_000, size=500_000,
                                               start_s=0.95, duration_s=0.01), kind="basket")]
    pic = request_picture(rs, 1.0)
    grid = cells(pic, 10, 4)
    assert grid[3][0] == (POINT["key"], "key")  # bottom left
    assert grid[0][9] == (FILL, "basket") and grid[1][9] == (FILL, "basket")  # top right
    assert grid[3][9] is None and sum(c is not None for row in grid for c in row) == 3
    phases = [SimpleNamespace(name="reading", start_s=0.0, end_s=1.0)]
    rows = ["".join(s for s, _ in r) for r in draw(pic, phases, 40, 10)]
    assert len(rows) == 10 and all(len(r) == 40 for r in rows)
    assert "1.00 s" in rows[-2] and "reading" in rows[-1]


def test_overlapping_phases_get_lanes_of_their_own() -> None:
    """Many files: a pre-pass per file between the reads, so the pre-pass and the reading
    overlap; each is drawn whole, neither shades the plot."""
    from hep_advisor.render.trace_grid import draw, phase_lanes
    from hep_advisor.render.trace_svg import requests_svg

    ph = [SimpleNamespace(name=n, start_s=a, end_s=b) for n, a, b in
          (("opening", 0.0, 0.1), ("pre-pass", 0.1, 0.9), ("reading", 0.2, 0.9),
           ("processing", 0.9, 1.0))]
    lanes = phase_lanes(ph)
    assert [[p.name for p in lane] for lane in lanes] == [["opening", "pre-pass", "processing"],
                                                          ["reading"]]
    pic = request_picture(reads(20), 1.0)
    rows = ["".join(s for s, _ in r) for r in draw(pic, ph, 60, 12)]
    assert "pre-pass" in rows[-2] and "reading" in rows[-1] and len(rows) == 12
    svg = ET.fromstring(requests_svg(pic, ph))
    rects = [r.get("class") for r in svg.iter(f"{SVG}rect")]
    assert rects.count("phase") == 4 and "phase-shade" not in rects
    apart = ET.fromstring(requests_svg(pic, [ph[0], ph[1], ph[3]]))
    assert [r.get("class") for r in apart.iter(f"{SVG}rect")].count("phase-shade") == 3


def test_a_program_that_read_no_root_file_draws_an_empty_frame() -> None:
    from hep_advisor.render.trace_svg import requests_svg

    svg = ET.fromstring(requests_svg(request_picture([], 1.0)))
    texts = " ".join("".join(t.itertext()) for t in svg.iter(f"{SVG}text"))
    assert "no read of a ROOT file was traced" in texts
    assert not [g for g in svg.iter(f"{SVG}g") if (g.get("class") or "").startswith("kind-")]


# -- bad input ---------------------------------------------------------------------------------

@pytest.mark.parametrize("content,cause", [
    (None, "no such file"),
    ("{not json", "not JSON"),
    ('{"schema_version": 1, "command": "report", "trace": null}', "trace: missing"),
    ('{"schema_version": 1, "trace": {"command": 3}}', "trace.command"),
])
def test_bad_trace_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                    content: str | None, cause: str) -> None:
    from hep_advisor.cli import main

    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content)
    with pytest.raises(DocumentError, match=cause):
        read_trace(bad)
    for command in ("report", "tui"):
        assert main([command, str(DATA / "real-world" / "uproot-HZZ.root"), "--trace",
                     str(bad)]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and str(bad) in err and cause in err
        assert "Traceback" not in err


# -- end to end: a real program traced, then reported on -----------------------------------------

PROGRAM = """\
import sys, uproot
n = 0
for a in uproot.iterate(sys.argv[1] + ":Events", library="np"):
    n += len(a["b0"])
print("entries", n)
"""


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace not installed")
def test_report_with_a_fresh_trace(tmp_path: Path) -> None:
    import uproot

    data = tmp_path / "data"
    data.mkdir()
    rng = np.random.default_rng(2)
    with uproot.recreate(data / "t.root", compression=uproot.ZLIB(1)) as f:
        for c in range(4):
            chunk = {f"b{i}": rng.normal(size=300).astype(np.float32) for i in range(3)}
            if c == 0:
                f.mktree("Events", {k: v.dtype for k, v in chunk.items()})
            f["Events"].extend(chunk)
    (data / "prog.py").write_text(PROGRAM)
    out = tmp_path / "out"
    out.mkdir()
    env = dict(os.environ, HEP_ADVISOR_CACHE=str(tmp_path / "cache"), TMPDIR=str(out))
    hep = [sys.executable, "-m", "hep_advisor"]
    saved = out / "trace.json"
    done = subprocess.run([*hep, "trace", "--json", "-o", str(saved), "--", sys.executable,
                           str(data / "prog.py"), str(data / "t.root")], capture_output=True,
                          text=True, env=env, timeout=120)
    if done.returncode != 0 and ("ptrace" in done.stderr or "not permitted" in done.stderr):
        pytest.skip("tracing is not permitted here")
    assert done.returncode == 0, done.stderr
    pic = json.loads(saved.read_text())["trace"]["picture"]
    assert pic["total"] == len(pic["requests"]) > 0
    assert pic["files"] == [str(data / "t.root")]
    done = subprocess.run([*hep, "report", str(data / "t.root"), "--trace", str(saved),
                           "--budget", "2", "--format", "html", "-o", str(out / "r.html")],
                          capture_output=True, text=True, env=env, timeout=180)
    assert done.returncode == 0, done.stderr
    svgs = trace_svgs((out / "r.html").read_text())
    assert len(svgs) == 1
    drawn = sum(len(g) for g in svgs[0].iter(f"{SVG}g")
                if (g.get("class") or "").startswith("kind-"))
    assert drawn == len(pic["requests"])
    assert sorted(p.name for p in out.iterdir()) == ["r.html", "trace.json"]


def test_the_offset_axis_of_a_small_file_reads_in_kilobytes() -> None:
    from hep_advisor.render.trace_grid import _mb

    assert [_mb(n) for n in (65_884, 32_000, 250_000, 20_080_000)] == [
        "66 kB", "32 kB", "0.2 MB", "20 MB"]
