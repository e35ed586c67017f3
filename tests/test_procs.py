"""The read tests' child processes start as a fresh process would: the parent's heap frozen."""

from __future__ import annotations

import gc
import multiprocessing as mp
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from hep_advisor.probes.readtests.procs import call_bounded, end_processes, start_processes

pytestmark = pytest.mark.skipif("fork" not in mp.get_all_start_methods(),
                                reason="only a forked child inherits the parent's heap")


def _report(queue: Any) -> None:
    queue.put(gc.get_freeze_count())


def _freeze_count_in_child(start: Callable[[Sequence[Any]], None]) -> int:
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_report, args=(queue,), daemon=True)]
    try:
        start(procs)
        return int(queue.get(timeout=30))
    finally:
        end_processes(procs)


def test_child_collector_skips_the_inherited_heap() -> None:
    heap = [{"i": i} for i in range(20_000)]  # the advisor's objects, as after a probe
    frozen = _freeze_count_in_child(start_processes)
    assert frozen >= len(heap)  # the child's collector never walks them
    assert gc.get_freeze_count() == 0  # the parent's objects are collectable again


def test_plain_start_leaves_the_heap_to_the_child_collector() -> None:
    def plain(procs: Sequence[Any]) -> None:
        for p in procs:
            p.start()

    assert _freeze_count_in_child(plain) == 0


def _sleep_then_write(path: str, seconds: float) -> str:
    import time

    time.sleep(seconds)
    with open(path, "w") as fh:
        fh.write("done")
    return "written"


def _fail(message: str) -> None:
    raise ValueError(message)


def test_bounded_call_returns_the_child_result(tmp_path: Any) -> None:
    out = tmp_path / "out.txt"
    assert call_bounded(_sleep_then_write, (str(out), 0.0), 30.0) == "written"
    assert out.read_text() == "done"


def test_bounded_call_ends_a_child_past_its_time(tmp_path: Any) -> None:
    import time

    out = tmp_path / "out.txt"
    t0 = time.monotonic()
    with pytest.raises(TimeoutError):
        call_bounded(_sleep_then_write, (str(out), 5.0), 0.3, poll_s=0.05)
    assert time.monotonic() - t0 < 3.0  # ended at its bound, not at its own end
    time.sleep(0.1)
    assert not out.exists()  # the child did not go on after the parent left


def test_bounded_call_raises_the_child_exception() -> None:
    with pytest.raises(ValueError, match="a damaged basket"):
        call_bounded(_fail, ("a damaged basket",), 30.0)


def test_bounded_call_check_can_cancel() -> None:
    class Stop(Exception):
        pass

    def check() -> None:
        raise Stop

    with pytest.raises(Stop):
        call_bounded(_sleep_then_write, ("/nonexistent/x", 5.0), 30.0, check=check,
                     poll_s=0.05)


def _slow_after_a_partial(seconds: float) -> str:
    import time

    from hep_advisor.probes.readtests.procs import report_partial

    report_partial("setup_s", 1.25)
    time.sleep(seconds)
    return "done"


def test_a_child_ended_at_its_time_gives_back_what_it_reported_before() -> None:
    with pytest.raises(TimeoutError) as found:
        call_bounded(_slow_after_a_partial, (30.0,), 1.0)
    assert found.value.partial == {"setup_s": 1.25}  # type: ignore[attr-defined]
    assert call_bounded(_slow_after_a_partial, (0.0,), 30.0) == "done"  # partials skipped


def test_the_reader_s_one_off_set_up_comes_from_its_loop_or_from_the_ended_test() -> None:
    from dataclasses import replace

    from hep_advisor.models.reader_baseline import reader_setup_s
    from hep_advisor.probes.readtests.results import Calibration, EventLoop, ReaderSetup

    cal = Calibration(budget_s=10.0, elapsed_s=9.0, partial=False, engine="uproot",
                      raw_read=None, request_sweep=(), concurrency=(), open_overhead_s=None,
                      decompression=(), event_loop=None, memory=None)
    assert reader_setup_s(cal, "rdataframe") == 0.0
    ended = replace(cal, reader_setup=ReaderSetup("rdataframe", 3.2))
    assert reader_setup_s(ended, "rdataframe") == pytest.approx(3.2)
    assert reader_setup_s(ended, "root.getentry") == 0.0  # another reader's
    loop = EventLoop.from_rate("root", 3, 1000.0, 1e3, 2e3, None, None)
    timed = replace(ended, event_loop=replace(loop, reader="rdataframe", setup_s=2.5))
    assert reader_setup_s(timed, "rdataframe") == pytest.approx(2.5)  # the loop's own
