"""The time split's measured parts: the threads sampled from outside the program (their time on
a core, the main thread's state), the other threads' work beside the main one, the main
thread's waits off a core, strace's stops, and ROOT's own reads noted through gPerfStats."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from hep_advisor.models.attribution import thread_overlap
from hep_advisor.pipeline.trace import MIN_TRACER_SAMPLES, time_split, tracer_cost
from hep_advisor.probes.trace import TracedRead, run_traced
from hep_advisor.probes.trace.capture import Capture
from hep_advisor.probes.trace.sampler import Sample, Sampler

MS = 1_000_000  # ns


def samples(rows: list[tuple[float, str, dict[int, tuple[int, int]]]]) -> list[Sample]:
    return [Sample(t, st, th) for t, st, th in rows]


def test_other_threads_cpu_beside_or_overlapping_the_main_one() -> None:
    # 0-0.1 s: main on a core, a worker too (overlap 0.1); 0.1-0.2 s: main asleep, worker
    # on a core (the main thread waited for it: beside); 0.2-0.3 s: main in a recorded read,
    # worker on a core (overlap)
    s = samples([(0.1, "R", {1: (100 * MS, 0), 2: (100 * MS, 0)}),
                 (0.2, "S", {1: (100 * MS, 0), 2: (200 * MS, 0)}),
                 (0.3, "D", {1: (100 * MS, 0), 2: (300 * MS, 0)})])
    tt = thread_overlap(s, 1, [(0.2, 0.1)], cpu_s=0.4, main_cpu_s=0.1, wall_s=0.3)
    assert tt.other_cpu == pytest.approx(0.3)
    assert tt.beside == pytest.approx(0.1) and tt.overlap == pytest.approx(0.2)
    assert tt.outside == pytest.approx({"R": 0.1, "S": 0.1})
    assert tt.inside == pytest.approx({"D": 0.1}) and tt.inside_samples == 1
    assert tt.waits == pytest.approx(0.1)


def test_unsampled_cpu_goes_against_the_time_after_the_last_sample() -> None:
    # a child process ran 0.05 s after the last sample while the main thread slept
    s = samples([(0.1, "R", {1: (100 * MS, 0)})])
    tt = thread_overlap(s, 1, [], cpu_s=0.15, main_cpu_s=0.1, wall_s=0.2)
    assert tt.beside == pytest.approx(0.05) and tt.overlap == pytest.approx(0.0)
    # the main thread busy to the end: the same CPU overlaps it
    tt = thread_overlap(s, 1, [], cpu_s=0.25, main_cpu_s=0.2, wall_s=0.2)
    assert tt.beside == pytest.approx(0.0) and tt.overlap == pytest.approx(0.05)


def capture(**kw: object) -> Capture:
    base = dict(command=("prog",), exit_code=0, wall_s=1.0, user_s=0.5, system_s=0.0,
                reads=(), opens={}, mmaps={}, file_bytes={}, traced_calls=100,
                tracer_cost_s=0.3, read_bytes=None, runqueue_s=0.1, pid=1, main_cpu_s=0.5)
    base.update(kw)
    return Capture(**base)  # type: ignore[arg-type]


def test_split_sums_to_the_wall_time_with_measured_parts() -> None:
    # 1 s: 0.5 on a core, 0.1 waiting for one, 0.2 in a read (of it 0.1 s disk, 0.1 s stopped
    # by strace), 0.1 waiting for a disk elsewhere, 0.1 stopped by strace elsewhere
    rows = []
    t = 0.0
    run = wait = 0
    for state, n in (("R", 50), ("r", 10), ("D", 10), ("t", 10), ("d", 10), ("s", 10)):
        for _ in range(n):
            t += 0.01
            if state == "R":
                run += 10 * MS
            if state == "r":
                wait += 10 * MS
            rows.append((round(t, 6), {"r": "R", "d": "D", "s": "t"}.get(state, state),
                         {1: (run, wait)}))
    read = TracedRead("/f.root", 0, 100, 0.6, 0.2, 1)
    cap = capture(reads=(read,), samples=tuple(samples(rows)))
    s = time_split(cap, io=0.2, decompression=0.1)
    assert s.io == pytest.approx(0.1, abs=0.011)  # the read's samples off a core, not stopped
    assert s.tracer == pytest.approx(0.2, abs=0.011)  # strace's stops, measured
    assert s.other_disk == pytest.approx(0.1, abs=0.011)
    assert s.parallel == pytest.approx(0.0)
    assert s.user == pytest.approx(0.4) and s.cpu_wait == pytest.approx(0.1)
    assert abs(s.unexplained) < 0.03
    # the estimate alone (no samples) leaves the parts it cannot name unexplained
    old = time_split(replace(cap, samples=()), io=0.2, decompression=0.1)
    assert old.parallel is None and old.other_disk is None and old.tracer is None
    assert old.unexplained == pytest.approx(1.0 - 0.3 - 0.2 - 0.1 - 0.4 - 0.1)


def test_the_overhead_stated_is_straces_sampled_stops_where_sampled() -> None:
    # 100 samples, 20 of them stopped by strace (0.2 s); the cost per call times the calls
    # says 0.3 s.  The sampled stops are what the run measured; a short run (too few samples)
    # and the in-process recorder keep the per-call product (its own measured time)
    rows = [(0.01 * (i + 1), "t" if i % 5 == 0 else "R", {1: ((i + 1) * 10 * MS, 0)})
            for i in range(100)]
    cap = capture(samples=tuple(samples(rows)))
    split = time_split(cap, io=0.0, decompression=0.0)
    assert split.tracer == pytest.approx(0.2, abs=0.011)
    assert tracer_cost(cap, split) == pytest.approx(split.tracer)
    short = replace(cap, samples=cap.samples[:MIN_TRACER_SAMPLES - 1])
    assert tracer_cost(short, time_split(short, io=0.0, decompression=0.0)) == 0.3
    py = replace(cap, recorder="python")
    assert tracer_cost(py, time_split(py, io=0.0, decompression=0.0)) == 0.3


def test_sampler_sees_the_threads_of_a_real_program(tmp_path: Path) -> None:
    prog = ("import threading, time\n"
            "def spin(): \n t = time.monotonic()\n while time.monotonic() - t < 0.3: pass\n"
            "w = threading.Thread(target=spin); w.start(); spin(); w.join()\n")
    pid_file = tmp_path / "r.pid"
    with Sampler(str(pid_file), interval=0.01) as s:
        p = subprocess.Popen([sys.executable, "-c", prog])
        pid_file.write_text(f"{p.pid} 0")
        p.wait()
    assert s.pid == p.pid and len(s.samples) >= 5
    tids = {tid for x in s.samples for tid in x.threads}
    assert p.pid in tids and len(tids) >= 2
    last = max(x.threads.get(p.pid, (0, 0))[0] for x in s.samples)
    assert last > 0


def test_python_recorder_samples_and_measures_its_main_thread(tmp_path: Path) -> None:
    prog = tmp_path / "p.py"
    prog.write_text("import time\nt = time.monotonic()\nwhile time.monotonic() - t < 0.25: "
                    "pass\ntime.sleep(0.1)\n")
    cap = run_traced([sys.executable, str(prog)], recorder="python")
    assert cap.pid and cap.main_cpu_s is not None and cap.main_cpu_s > 0.15
    assert cap.samples and any(x.state == "S" for x in cap.samples)
    assert list(tmp_path.iterdir()) == [prog]


ROOT_PROGRAM = """\
import sys, ROOT
f = ROOT.TFile.Open(sys.argv[1])
t = f.Get("Events")
t.SetCacheSize(0)
for i in range(t.GetEntries()):
    t.GetEntry(i)
f.Close()
"""


def test_root_reads_noted_through_gperfstats(tmp_path: Path) -> None:
    pytest.importorskip("ROOT")
    import uproot

    from hep_advisor.probes.basketmap import read_basket_map

    path = tmp_path / "t.root"
    rng = np.random.default_rng(3)
    with uproot.recreate(path, compression=uproot.ZLIB(1)) as f:
        for c in range(3):
            chunk = {f"b{i}": rng.normal(size=200).astype(np.float32) for i in range(2)}
            if c == 0:
                f.mktree("Events", {k: v.dtype for k, v in chunk.items()})
            f["Events"].extend(chunk)
    prog = tmp_path / "r.py"
    prog.write_text(ROOT_PROGRAM)
    cap = run_traced([sys.executable, str(prog), str(path)], recorder="python",
                     stdout=subprocess.DEVNULL)
    assert cap.exit_code == 0 and not cap.recorder_errors
    assert cap.root_reads == len(cap.reads) > 0
    m = read_basket_map(str(path))
    baskets = sorted(int(n) for b in m.branches for n in b.nbytes)
    sizes = sorted(r.size for r in cap.reads)
    assert all(n in sizes for n in baskets)  # each basket's read, with its time
    assert all(r.duration_s >= 0 and r.offset == -1 for r in cap.reads)  # local: no position
    assert cap.root_counters and cap.root_counters["calls"] >= len(baskets)


def test_reads_noted_by_root_make_the_reader_root() -> None:
    from hep_advisor.pipeline.trace import reader_of

    read = TracedRead("root://h//f.root", 100, 50, 0.1, 0.02, 1)
    py = capture(recorder="python", reads=(read,), root_reads=1)
    assert reader_of(py) == "root"
    assert reader_of(replace(py, root_reads=0)) == "uproot"


def test_uproot_reads_and_waits_carry_the_kernels_thread_ids(tmp_path: Path) -> None:
    import uproot

    path = tmp_path / "u.root"
    with uproot.recreate(path) as f:
        f["Events"] = {"x": np.arange(1000, dtype=np.float32)}
    prog = tmp_path / "u.py"
    prog.write_text("import sys, uproot\nfor a in uproot.iterate(sys.argv[1] + ':Events', "
                    "library='np'):\n    pass\n")
    cap = run_traced([sys.executable, str(prog), str(path)], recorder="python")
    assert cap.reads and cap.pid
    tids = {r.pid for r in cap.reads}
    assert all(0 < t <= 2**22 for t in tids)  # the kernel's ids, not Python's idents
    assert set(cap.main_waits) <= set(cap.waits)
    s = time_split(cap, io=0.0, decompression=0.0)
    assert s.parallel is not None and s.parallel <= 0 and s.tracer == cap.tracer_cost_s


def test_requests_in_flight_at_once_count_once() -> None:
    # ten requests in flight together for 0.1 s (a callback thread's), the main thread asleep
    # (not in a recorded wait): 0.1 s of waiting beside it, not 1 s; one request while the
    # main thread waited for it itself: not counted again
    s = samples([(0.1, "S", {1: (0, 0)}), (0.2, "S", {1: (0, 0)})])
    theirs = [(0.0, 0.1)] * 10 + [(0.1, 0.1)]
    tt = thread_overlap(s, 1, [(0.1, 0.1)], cpu_s=0.0, main_cpu_s=0.0, wall_s=0.2,
                        other_waits=theirs)
    assert tt.other_waits == pytest.approx(0.1)
    assert tt.beside == pytest.approx(0.1) and tt.overlap == pytest.approx(0.0)
