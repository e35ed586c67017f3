"""The read tests' child processes start as a fresh process would: the parent's heap frozen."""

from __future__ import annotations

import gc
import multiprocessing as mp
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from probes.readtests.procs import end_processes, start_processes

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
