"""``--reader``: the reader spec's grammar, a reader deduced from a trace, the event loop
running the named reader, and the baseline replayed with it (tiny files written by uproot)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from helpers import snapshot, write_flat
from hep_advisor.models.calcosts import step_touch
from hep_advisor.models.physics import Params
from hep_advisor.models.reader_baseline import WHOLE_FILE, reader_baseline, replay_reader
from hep_advisor.models.replay import LocalDevice
from hep_advisor.models.replay.cpucosts import CpuCosts
from hep_advisor.models.replay.predict import layout_time
from hep_advisor.probes.basketmap import read_basket_map
from hep_advisor.probes.readtests.eventloop import measure_event_loop, plan_reads, read_pass
from hep_advisor.probes.readtests.readers import (
    KINDS,
    ReaderSpec,
    deduce_reader,
    memory_size,
    parse_reader,
    reader_from_trace,
)
from hep_advisor.probes.readtests.runner import Session


# -- the grammar -----------------------------------------------------------------------------
@pytest.mark.parametrize("text, kind, step, cache", [
    ("uproot.iterate", "uproot.iterate", None, None),
    ("uproot.iterate:step_size=5000", "uproot.iterate", 5000, None),
    ("uproot.iterate:step_size=20 MB", "uproot.iterate", "20 MB", None),
    (" UPROOT.ARRAYS ", "uproot.arrays", None, None),
    ("root.getentry", "root.getentry", None, None),
    ("root.ttreecache", "root.ttreecache", None, None),
    ("root.ttreecache:size=30 MB", "root.ttreecache", None, 30_000_000),
    ("root.ttreecache:size=auto", "root.ttreecache", None, None),
    ("rdataframe", "rdataframe", None, None),
    ("uproot.iterate:step_size=10,library=np", "uproot.iterate", 10, None),
    ("root.getentry:loop=python", "root.getentry", None, None),
    ("root.ttreecache:size=1 MB,loop=python", "root.ttreecache", None, 1_000_000),
])
def test_spec_parses(text: str, kind: str, step: object, cache: object) -> None:
    spec = parse_reader(text)
    assert (spec.kind, spec.step_size, spec.cache_bytes) == (kind, step, cache)
    assert parse_reader(spec.text).text == spec.text  # the canonical text reads back


def test_spec_defaults_and_engines() -> None:
    assert parse_reader("uproot.iterate").step == "100 MB"  # uproot's own default
    assert parse_reader("uproot.iterate").text == "uproot.iterate:step_size=100 MB"
    assert [parse_reader(k).engine for k in KINDS] == ["uproot", "uproot", "root", "root",
                                                      "root"]
    assert parse_reader("root.getentry").root_cache_bytes == 0
    assert parse_reader("root.ttreecache").root_cache_bytes == -1
    assert parse_reader("root.ttreecache:size=1 MiB").root_cache_bytes == 2**20
    assert memory_size("100 MB") == 100_000_000 and memory_size("1.5kib") == 1536
    assert parse_reader("uproot.arrays").library == "ak"  # uproot's default
    assert parse_reader("uproot.arrays:library=np").library == "np"
    with pytest.raises(ValueError, match="library 'pd'"):
        parse_reader("uproot.iterate:library=pd")
    assert parse_reader("root.getentry:loop=python").loop == "python"
    assert parse_reader("root.getentry").loop == "cxx"
    with pytest.raises(ValueError, match="loop 'java'"):
        parse_reader("root.getentry:loop=java")


@pytest.mark.parametrize("text, cause", [
    ("", "empty reader spec"),
    ("uproot.read", "unknown reader 'uproot.read'"),
    ("uproot.iterate:step=5", "has no option 'step'"),
    ("uproot.iterate:step_size", "is not OPTION=VALUE"),
    ("uproot.iterate:step_size=0", "at least 1 entry"),
    ("uproot.iterate:step_size=12 parsecs", "not a memory size"),
    ("uproot.arrays:step_size=10", "uproot.arrays has no option 'step_size'"),
    ("root.ttreecache:size=lots", "not a memory size"),
    ("missing-trace.json", "no such file"),
])
def test_bad_spec_is_one_line(text: str, cause: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_reader(text)
    assert cause in str(err.value) and "\n" not in str(err.value)


def test_bad_spec_on_the_command_line(tmp_path: Path) -> None:
    f = write_flat(tmp_path / "f.root")
    done = subprocess.run([sys.executable, "-m", "hep_advisor", "calibrate", str(f), "--reader",
                           "uproot.iterate:steps=3"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2
    assert "--reader" in done.stderr and "has no option 'steps'" in done.stderr
    assert "Traceback" not in done.stderr


# -- a trace ---------------------------------------------------------------------------------
def _trace(path: str, *, key: int = 0, basket: int = 0, command: str = "python prog.py",
           branches: list[str] | None = None) -> dict:
    return {"command": command, "files": [{"path": path, "opens": 1, "requests": key + basket,
                                           "bytes": 1, "bytes_needed": 1,
                                           **({"branches": branches} if branches else {})}],
            "requests_by_kind": {"basket": basket, "key": key, "metadata": 3, "other": 0}}


def test_reader_deduced_from_a_trace(tmp_path: Path) -> None:
    f = str(write_flat(tmp_path / "f.root", entries=400, branches=3, chunks=4))
    baskets = read_basket_map(f).baskets  # 3 branches x 4 baskets
    assert baskets == 12
    prog = tmp_path / "prog.py"

    # a key pre-pass: a memory-size step (uproot's default where the program names none)
    prog.write_text("import uproot\nfor a in uproot.iterate(p):\n    pass\n")
    spec = deduce_reader(_trace(f, key=12, basket=1, command=f"python {prog}"))
    assert (spec.kind, spec.step) == ("uproot.iterate", "100 MB")
    prog.write_text("for a in tree.iterate(step_size='20 MB'):\n    pass\n")
    assert deduce_reader(_trace(f, key=12, basket=1, command=f"python {prog}")).step == "20 MB"

    # no pre-pass, one read per basket: GetEntry without TTreeCache (in Python: a .py)
    prog.write_text("import ROOT\n")
    spec = deduce_reader(_trace(f, basket=12, command=f"python {prog}", branches=["b0"]))
    assert (spec.kind, spec.loop) == ("root.getentry", "python")
    assert deduce_reader(_trace(f, basket=12, command="root -b -q ana.C")).loop == "cxx"
    # ... unless those were the baskets of one branch only (the trace's branches): 4 baskets
    assert deduce_reader(_trace(f, basket=2, command=f"python {prog}",
                                branches=["b0"])).kind == "root.ttreecache"

    # coalesced uproot reads: the program's entry step, else arrays
    prog.write_text("import uproot\nfor a in t.iterate(step_size=5_000):\n    pass\n")
    spec = deduce_reader(_trace(f, basket=2, command=f"python {prog}", branches=["b1", "b2"]))
    assert (spec.kind, spec.step_size, spec.branches) == ("uproot.iterate", 5000, ("b1", "b2"))
    prog.write_text("import uproot\na = t.arrays(library='np')\n")
    spec = deduce_reader(_trace(f, basket=2, command=f"python {prog}"))
    assert (spec.kind, spec.library) == ("uproot.arrays", "np")
    prog.write_text("import ROOT\ndf = ROOT.RDataFrame('t', p)\n")
    assert deduce_reader(_trace(f, basket=2, command=f"python {prog}")).kind == "rdataframe"
    assert all(spec.how)  # says on what it rests


def test_trace_file(tmp_path: Path) -> None:
    f = str(write_flat(tmp_path / "f.root"))
    doc = tmp_path / "trace.json"
    doc.write_text(json.dumps({"schema_version": 1, "trace": _trace(f, key=3)}))
    spec = parse_reader(str(doc))
    assert spec.kind == "uproot.iterate" and spec.source == str(doc)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match=r"bad\.json: not JSON"):
        reader_from_trace(str(bad))
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"schema_version": 1, "command": "report"}))
    with pytest.raises(ValueError, match=r"other\.json: not a trace"):
        parse_reader(str(other))


# -- the event loop runs the reader ----------------------------------------------------------
@pytest.mark.parametrize("text", ["uproot.iterate:step_size=100", "uproot.arrays",
                                  "uproot.iterate:step_size=1 MB",
                                  "uproot.iterate:step_size=300,library=np"])
def test_event_loop_runs_the_reader(tmp_path: Path, text: str) -> None:
    f = write_flat(tmp_path / "f.root", entries=1000, branches=4, chunks=5)
    before = snapshot(tmp_path)
    loop = measure_event_loop(Session(60), [str(f)], "t", ["b0", "b2"], share_s=0.5,
                              reader=parse_reader(text))
    assert loop.reader == parse_reader(text).text
    assert loop.branches == 2 and loop.events_per_s and loop.events_per_s > 0
    # the sample its passes read, recorded for the engine's replay of it
    assert [p.path for p in loop.parts] == [str(f)] and 0 < loop.parts[0].entries <= 1000
    plan = plan_reads([str(f)], "t", ["b0", "b2"])
    assert read_pass(plan, reader=parse_reader(text)).total_entries == 1000  # events counted
    assert snapshot(tmp_path) == before  # a read test writes nothing


def test_root_readers_run(tmp_path: Path) -> None:
    pytest.importorskip("ROOT")
    from hep_advisor.probes.readtests.pyloops import pyroot_pass, rdataframe_pass
    from hep_advisor.probes.readtests.rootengine import measure_root_event_loop

    f = write_flat(tmp_path / "f.root", entries=600, branches=3, chunks=3)
    spec = parse_reader("root.getentry")
    result = measure_root_event_loop(Session(60), [str(f)], "t", ["b0"], share_s=0.5,
                                     reader=spec)
    assert result.event_loop.reader == "root.getentry"
    assert [p.path for p in result.event_loop.parts] == [str(f)]
    assert 0 < result.event_loop.parts[0].entries <= 600
    assert result.cache_on is not None and not result.cache_on.tree_cache
    stats = result.cache_on
    assert stats.cache_bytes == 0 and stats.entries > 0
    # no cache: one read per basket of b0 (200 entries each) the pass reached
    assert stats.read_calls >= -(-stats.entries // 200)
    r = rdataframe_pass([(str(f), -1)], "t", ["b0", "b1"])
    assert r.total_entries == 600 and r.seconds > 0
    p = pyroot_pass([(str(f), 500)], "t", ["b0"], 0)
    assert p.total_entries == 500 and p.complete
    with pytest.raises(ValueError, match="no tree 'nope'"):
        pyroot_pass([(str(f), -1)], "nope", [], 0)


# -- the baseline replayed -------------------------------------------------------------------
def test_replay_reader_mapping() -> None:
    assert replay_reader(parse_reader("uproot.iterate")).step == "100 MB"
    assert replay_reader(parse_reader("uproot.arrays")).step == WHOLE_FILE
    assert replay_reader(parse_reader("root.getentry")).cache_bytes == 0
    assert replay_reader(parse_reader("root.ttreecache")).cache_bytes is None
    assert replay_reader(parse_reader("root.ttreecache:size=2 MB")).cache_bytes == 2_000_000
    assert replay_reader(parse_reader("rdataframe")) == replay_reader(
        parse_reader("root.ttreecache"))


def _baseline(storage_mb_per_s: float, access_ms: float) -> Any:
    params = Params(storage_mb_per_s=storage_mb_per_s, access_ms=access_ms, devices=1,
                    decompress_mb_per_s=200, process_mb_per_s=100, open_s=0.001,
                    cache_mb_per_s=5000, call_s=0.001, basket_s=1e-5)
    return SimpleNamespace(params=params, row=lambda workers: {})


def test_baseline_pays_the_key_prepass_on_a_slow_device(tmp_path: Path) -> None:
    f = write_flat(tmp_path / "f.root", entries=4000, branches=40, chunks=20)
    maps = [read_basket_map(str(f))]
    site: Any = SimpleNamespace(storage=[], os=None)
    slow = _baseline(70, 8.0)  # an IOPS-bound disk: every key read is an access
    default = reader_baseline(parse_reader("uproot.iterate"), maps, 1, None, site, slow)
    step = reader_baseline(parse_reader("uproot.iterate:step_size=1000"), maps, 1, None, site,
                           slow)
    assert default.entries == step.entries == 4000
    # 800 key reads, one access each where read-ahead has not brought them in
    assert default.io_s > 3 * step.io_s
    assert default.events_per_s < step.events_per_s
    # the ROOT loop without cache reads basket by basket: more device reads than coalesced uproot
    getentry = reader_baseline(parse_reader("root.getentry"), maps, 1, None, site, slow)
    arrays = reader_baseline(parse_reader("uproot.arrays"), maps, 1, None, site, slow)
    assert getentry.device_requests > arrays.device_requests
    assert getentry.notes  # uproot's CPU terms for a ROOT reader: said
    # a fast device: the pre-pass costs little
    fast = _baseline(3000, 0.01)
    d2 = reader_baseline(parse_reader("uproot.iterate"), maps, 1, None, site, fast)
    s2 = reader_baseline(parse_reader("uproot.iterate:step_size=1000"), maps, 1, None, site,
                         fast)
    assert d2.events_per_s > 0.5 * s2.events_per_s
    # the branch set: a trace's, else the one given; more files than maps scale the time
    two = reader_baseline(ReaderSpec("uproot.arrays", branches=("b0",)), maps, 2, None, site,
                          slow, branches=["b1", "b2"])
    assert two.entries == 8000 and two.files == 2
    with pytest.raises(ValueError, match="not in the sampled files"):
        reader_baseline(parse_reader("uproot.arrays"), maps, 1, None, site, slow,
                        branches=["nope"])


def test_python_root_loops_measure_cold_and_warm(tmp_path: Path) -> None:
    pytest.importorskip("ROOT")
    from hep_advisor.probes.readtests.pyloops import python_root_event_loop

    files = [str(write_flat(tmp_path / f"f{i}.root", entries=300, branches=3, chunks=3))
             for i in range(2)]
    before = snapshot(tmp_path)
    for text in ("root.getentry:loop=python", "rdataframe"):
        spec = parse_reader(text)
        loop = python_root_event_loop(Session(60), files, "t", ["b0", "b1"], 1.0, spec)
        assert loop.engine == "root" and loop.branches == 2
        assert loop.warm is not None and loop.warm.median and loop.warm.median > 0
        assert loop.cold is not None and len(loop.cold.samples) >= 1
        assert loop.parts and {p.path for p in loop.parts} <= set(files)
        # what a program pays once is measured apart (its first set-up pass less a second:
        # RDataFrame's compilation, a GetEntry loop's first file; about 0 where this process
        # did the same before)
        assert loop.setup_s is not None and loop.setup_s >= 0
    assert snapshot(tmp_path) == before


def test_a_fresh_process_measures_what_a_getentry_program_pays_once(tmp_path: Path) -> None:
    """A ``GetEntry`` program's one-time cost is its first pass less the later ones in a fresh
    process: ROOT's first open there is in it (the calibration's own process opened files with
    ROOT before, and its first-less-second missed it)."""
    pytest.importorskip("ROOT")
    from hep_advisor.probes.readtests.rootengine import fresh_setup_s

    f = write_flat(tmp_path / "f.root", entries=600, branches=3, chunks=3)
    before = snapshot(tmp_path)
    once = fresh_setup_s(str(f), "t", ["b0", "b1"], 16, 0, timeout_s=60)
    assert once is not None and 0.005 < once < 10  # the loop's first call and ROOT's first open
    assert fresh_setup_s(str(f), "nope", ["b0"], 16, 0, timeout_s=60) is None  # no such tree
    assert fresh_setup_s(str(f), "t", ["b0"], 16, 0, timeout_s=0.5) is None  # no time to start
    assert snapshot(tmp_path) == before


def test_rdataframe_setup_is_its_first_pass_less_a_second(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """The one-time part of RDataFrame's set-up: the first set-up pass less the same pass
    again (whose open, cold reads and per-pass work the timed passes count)."""
    pytest.importorskip("ROOT")
    import time

    from hep_advisor.probes.readtests import pyloops

    f = str(write_flat(tmp_path / "f.root", entries=300, branches=3, chunks=3))
    calls: list[list[tuple[str, int]]] = []

    def fake(parts: list[tuple[str, int]], *args: Any) -> Any:
        calls.append(list(parts))
        time.sleep(0.4 if len(calls) == 1 else 0.1)  # the first pass pays 0.3 s more
        return pyloops.LoopPass(tuple(n if n >= 0 else 300 for _, n in parts), 0.1)

    monkeypatch.setattr(pyloops, "rdataframe_pass", fake)
    loop = pyloops.python_root_event_loop(Session(60), [f], "t", ["b0"], 6.0,
                                          parse_reader("rdataframe"))
    assert calls[0] == calls[1] == [(f, 16)]  # the set-up pass, twice
    assert loop.setup_s is not None and 0.2 < loop.setup_s < 0.38
    # no room in the share for the second pass: the first stands
    calls.clear()
    short = pyloops.python_root_event_loop(Session(60), [f], "t", ["b0"], 1.0,
                                           parse_reader("rdataframe"))
    assert calls[1] != [(f, 16)] and short.setup_s is not None and short.setup_s >= 0.38


def test_rate_limited_device_hides_spaced_out_reads(tmp_path: Path) -> None:
    """On a rate limiter (the device form "max") the reads are paced by the CPU work between
    them: the baseline lies between the larger of the I/O and CPU times and their sum; on a
    disk they add."""
    import dataclasses

    f = write_flat(tmp_path / "f.root", entries=2000, branches=10, chunks=4)
    maps = [read_basket_map(str(f))]
    site: Any = SimpleNamespace(storage=[], os=None)
    disk = _baseline(70, 8.0)
    limiter: Any = SimpleNamespace(
        params=dataclasses.replace(disk.params, storage_overlap=1.0), row=disk.row)
    spec = parse_reader("uproot.iterate:step_size=500")
    a = reader_baseline(spec, maps, 1, None, site, disk)
    m = reader_baseline(spec, maps, 1, None, site, limiter)
    assert (a.device_limit, m.device_limit) == ("additive", "max")
    assert a.events_per_s == pytest.approx(a.entries / (a.io_s + a.cpu_s))
    t = m.entries / m.events_per_s
    assert max(m.io_s, m.cpu_s) * (1 - 1e-9) <= t <= (m.io_s + m.cpu_s) * (1 + 1e-9)


@pytest.mark.parametrize(("text", "opens_added"), [
    ("uproot.arrays", True), ("uproot.iterate:step_size=500", True), ("root.getentry", True),
    ("root.getentry:loop=python", False), ("root.ttreecache:loop=python", False),
    ("rdataframe", False)])
def test_the_open_per_file_is_added_only_where_the_loop_did_not_time_it(
        tmp_path: Path, text: str, opens_added: bool) -> None:
    """RDataFrame's and PyROOT's loops time the files' opening as the program pays it (ROOT
    opens in about a millisecond, uproot in tens): uproot's measured open is added to the
    other readers' loops alone."""
    f = write_flat(tmp_path / "f.root", entries=2000, branches=10, chunks=4)
    maps = [read_basket_map(str(f))]
    site: Any = SimpleNamespace(storage=[], os=None)
    spec = parse_reader(text)
    assert spec.opens_in_loop is not opens_added
    rate = SimpleNamespace(median=10_000.0, conditions=SimpleNamespace(cache="warm"))
    loop = SimpleNamespace(reader=spec.text, warm=rate, cold=None, setup_s=None,
                           events_per_s=10_000.0, engine=spec.engine, refault_per_mb=None)
    cal: Any = SimpleNamespace(raw_read=None, engine="uproot", event_loop=loop,
                               open_overhead_s=SimpleNamespace(warm=0.0005, cold=0.06),
                               first_touch=None)
    rb = reader_baseline(spec, maps, 4, cal, site, _baseline(70, 8.0))
    assert rb.cpu_source == "measured" and rb.files == 4
    # and a new process's first writes of its largest step's arrays (uproot's readers only)
    step_mb = layout_time(maps, LocalDevice(70, 0.008), CpuCosts(open_s=0.0),
                          reader=replay_reader(spec)).step_mb
    assert (step_mb > 0) is (spec.engine == "uproot")
    touch = step_mb * step_touch(None)[0]
    assert rb.cpu_s == pytest.approx(rb.entries / 10_000 + (4 * 0.0005 if opens_added else 0.0)
                                     + touch)
    assert any("uproot's, measured" in n for n in rb.notes) is (opens_added and
                                                                 spec.engine == "root")


def test_the_measured_warm_open_is_added_as_measured(tmp_path: Path) -> None:
    """Where the loop's CPU is measured, the open per file added is the measured warm open,
    even where the rate model's fitted open term is lower (here 1 ms fitted, 50 ms
    measured): a program opening many small files pays what was measured."""
    f = write_flat(tmp_path / "f.root", entries=2000, branches=10, chunks=4)
    maps = [read_basket_map(str(f))]
    site: Any = SimpleNamespace(storage=[], os=None)
    spec = parse_reader("uproot.arrays")
    rate = SimpleNamespace(median=10_000.0, conditions=SimpleNamespace(cache="warm"))
    loop = SimpleNamespace(reader=spec.text, warm=rate, cold=None, setup_s=None,
                           events_per_s=10_000.0, engine="uproot", refault_per_mb=None)
    cal: Any = SimpleNamespace(raw_read=None, engine="uproot", event_loop=loop,
                               open_overhead_s=SimpleNamespace(warm=0.05, cold=0.06),
                               first_touch=None)
    rb = reader_baseline(spec, maps, 4, cal, site, _baseline(70, 8.0))
    step_mb = layout_time(maps, LocalDevice(70, 0.008), CpuCosts(open_s=0.0),
                          reader=replay_reader(spec)).step_mb
    assert rb.cpu_s == pytest.approx(rb.entries / 10_000 + 4 * 0.05
                                     + step_mb * step_touch(None)[0])


def test_rdataframe_loop_is_not_begun_without_time_for_its_setup(tmp_path: Path) -> None:
    """RDataFrame's one-time set-up cannot be stopped once begun: with less than it left of
    the budget the loop is left out (its reason given), not run past the budget."""
    from hep_advisor.probes.readtests.pyloops import RDF_SETUP_S, python_root_event_loop
    from hep_advisor.probes.readtests.runner import OutOfTime

    f = str(write_flat(tmp_path / "f.root", entries=300, branches=3, chunks=3))
    with pytest.raises(OutOfTime, match="RDataFrame's one-time set-up"):
        python_root_event_loop(Session(RDF_SETUP_S / 3), [f], "t", ["b0"], 1.0,
                               parse_reader("rdataframe"))


def test_rdataframe_loop_leaves_out_the_leaf_lists_it_cannot_read(tmp_path: Path) -> None:
    """A branch written from a leaf list whose leaf is named otherwise (``Photons_E[n]/F`` in
    ``Photon_E``, as in uproot's HZZ sample) is a column RDataFrame lists but cannot read: the
    loop over every branch leaves it out and reads the rest, instead of failing."""
    ROOT = pytest.importorskip("ROOT")
    from array import array

    from hep_advisor.probes.readtests.pyloops import _leaf_list_branches, python_root_event_loop

    path = str(tmp_path / "ll.root")
    f = ROOT.TFile(path, "RECREATE")
    t = ROOT.TTree("t", "t")
    n, x = array("i", [0]), array("f", [0.0])
    e = array("f", [0.0] * 4)
    t.Branch("n", n, "n/I")
    t.Branch("x", x, "x/F")
    t.Branch("Photon_E", e, "Photons_E[n]/F")
    for i in range(200):
        n[0], x[0] = i % 4, float(i)
        t.Fill()
    t.Write()
    f.Close()
    assert _leaf_list_branches(ROOT, path, "t") == {"Photon_E"}
    loop = python_root_event_loop(Session(60.0), [path], "t", None, 30.0,
                                  parse_reader("rdataframe"))
    assert loop.branches == 2 and loop.events_per_s > 0
    assert list(tmp_path.iterdir()) == [Path(path)]


def test_rdataframe_columns_of_uproot_branch_names() -> None:
    """uproot names a split object's member ``evt/evt_f0``; RDataFrame's column is
    ``evt.evt_f0`` (or the member's own name where that is the column)."""
    from hep_advisor.probes.readtests.pyloops import _columns

    columns = ["evt", "evt.evt_f0", "evt.evt_f1", "x", "jets_pt"]
    assert _columns(["evt/evt_f0", "x", "obj/jets_pt", "nope"], columns) == [
        "evt.evt_f0", "x", "jets_pt", "nope"]
    assert _columns([], columns) == []


def test_root_branch_names_of_uproot_branch_names() -> None:
    """ROOT's ``GetBranch``/``SetBranchStatus`` know no ``/``: enabling uproot's
    ``evt/evt_f0`` read nothing (checked on a split-object file: 0 bytes per entry); the
    loops enable ROOT's name for it."""
    from hep_advisor.probes.readtests.pyloops import root_branch_names

    known = {"evt", "evt.evt_f0", "evt_f0", "x", "jets_pt"}
    tree = SimpleNamespace(GetBranch=lambda name: name in known)
    assert root_branch_names(tree, ["evt/evt_f0", "x", "obj/jets_pt", "nope"]) == [
        "evt.evt_f0", "x", "jets_pt", "nope"]


def test_printed_root_code_names_branches_as_root_does() -> None:
    """Code printed for ROOT (SetBranchStatus, RDataFrame's Snapshot) names a split object's
    member as ROOT does (``evt.evt_f0``), not with uproot's ``/``."""
    from hep_advisor.rules.branches import root_name

    assert [root_name(b) for b in ("evt/evt_f0", "x", "a/b/c")] == ["evt.evt_f0", "x", "a.b.c"]


@pytest.mark.root
def test_a_root_reader_runs_in_a_child_ended_at_its_share(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """A reader that runs in ROOT is timed in a child process: its result comes back (the
    loop, ROOT's read statistics); a pass that runs past the test's share is ended with it
    (OutOfTime), so the budget holds whatever ROOT does."""
    pytest.importorskip("ROOT")
    import time

    from hep_advisor.probes.readtests import pyloops, steps
    from hep_advisor.probes.readtests.runner import OutOfTime

    files = [str(write_flat(tmp_path / f"f{i}.root", entries=300, branches=3, chunks=3))
             for i in range(2)]
    session = Session(60)
    session.begin("event_loop")
    session.extend(20.0)
    loop, on, _, opened = steps.root_reader_loop(session, files, "t", ["b0", "b1"], 20.0,
                                                parse_reader("root.ttreecache"))
    assert loop.engine == "root" and loop.warm is not None and on is not None
    # the compiled loop is timed without its opens: ROOT's own open per file comes back
    assert opened is not None and opened.warm is not None and 0 < opened.warm < 0.5
    # what a program pays once on its first file (its first pass less a second one)
    assert loop.setup_s is not None and 0 <= loop.setup_s < 5.0

    def stuck(*args: Any, **kwargs: Any) -> Any:  # a pass ROOT cannot be stopped in
        time.sleep(30)
        raise AssertionError("not ended")

    monkeypatch.setattr(pyloops, "rdataframe_pass", stuck)
    short = Session(60)
    short.begin("event_loop")
    short.extend(1.0)
    t0 = time.perf_counter()
    with pytest.raises(OutOfTime, match="ran past the test's share"):
        steps.root_reader_loop(short, files, "t", ["b0"], 1.0, parse_reader("rdataframe"))
    assert time.perf_counter() - t0 < 1.0 + steps.ROOT_CHILD_GRACE_S + 1.0
