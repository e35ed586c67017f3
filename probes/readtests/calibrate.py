"""Run the calibrated read tests on a dataset, within a time budget.

Order: cold sequential reads (the storage rate), the request-size sweep, the concurrency sweep,
the per-file open cost, decompression per algorithm (with recompressed samples of the other
algorithms and, for uproot's plain event loop, uproot's unpacking of decompressed baskets, in
the same share), the event loop, (with uproot) the per-call cost, the per-basket cost and the
parallel event loop, and the page-cache (warm) rate.  Each test gets a share of the budget
(``runner.WEIGHTS``); time a test leaves unused flows to the tests after it.  A test that
cannot run here is listed in ``skipped`` with its reason; a cancelled calibration
(``cancel.set()`` or Ctrl-C) returns what was measured, marked ``partial``.  Reads never write
to the data and leave no files behind; the concurrency sweep's child processes are ended
before this returns, whatever happens.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import psutil

from ..results import DatasetProfile
from ..rootfile import one_line
from .opencost import open_overhead
from .raw import FileSet, concurrency_sweep, fit_access, request_sweep, sequential_rate
from .results import (
    Calibration,
    ConcurrencyPoint,
    DecompressionPoint,
    EventLoop,
    MemoryFit,
    OpenOverhead,
    ParallelPoint,
    RawRead,
    RequestPoint,
    Skipped,
    Unpacking,
)
from .runner import Cancelled, ProgressCallback, Session

DEFAULT_BUDGET_S = 60.0
DEFAULT_WORKERS = (1, 2, 4)
ENGINES = ("uproot", "root")
#: Files the read tests draw from at most (spread over the dataset, largest first).
MAX_FILES = 256
#: Fraction of the decompression test's share that goes to uproot's unpacking test.
UNPACK_FRACTION = 0.2


def _spread(paths: Sequence[str], k: int) -> list[str]:
    if len(paths) <= k:
        return list(paths)
    step = len(paths) / k
    return [paths[int(i * step)] for i in range(k)]


def calibrate(
    dataset: DatasetProfile,
    budget_s: float = DEFAULT_BUDGET_S,
    workers: Sequence[int] = DEFAULT_WORKERS,
    engine: str = "uproot",
    branches: Sequence[str] | None = None,
    analysis: str | Callable[..., Any] | None = None,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
) -> Calibration:
    """Measure every term of the rate model on ``dataset``'s own files."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r} (choose from {', '.join(ENGINES)})")
    files = _spread(dataset.file_paths, MAX_FILES)
    session = Session(budget_s, progress=progress, cancel=cancel)
    skipped: list[Skipped] = []
    partial = False

    cold = warm = None
    sweep: tuple[RequestPoint, ...] = ()
    conc: tuple[ConcurrencyPoint, ...] = ()
    opened: OpenOverhead | None = None
    decomp: tuple[DecompressionPoint, ...] = ()
    loop: EventLoop | None = None

    if not files or not dataset.trees:
        skipped.append(Skipped("all", "no usable ROOT file to read"))
        return _result(session, engine, partial, None, (), (), None, (), None, dataset, skipped)
    fileset = FileSet.of(files)
    tree = max(dataset.trees, key=lambda t: t.compressed_bytes)

    def run(test: str, fn: Callable[[float], Any]) -> Any:
        nonlocal partial
        if partial:
            return None
        share = session.begin(test)
        try:
            return fn(share)
        except (Cancelled, KeyboardInterrupt):
            partial = True
            session.cancel()
            return None
        except Exception as exc:  # one test failing never stops the others
            skipped.append(Skipped(test, f"{type(exc).__name__}: {one_line(exc)}"))
            return None

    cold = run("raw_read", lambda s: sequential_rate(session, fileset, s, True, "raw_read"))
    sweep = run("request_sweep", lambda s: request_sweep(session, fileset, s)) or ()
    conc = run("concurrency", lambda s: concurrency_sweep(session, fileset, s, workers)) or ()
    names = [t.name for t in dataset.trees]
    if engine == "root":
        opened = run("open_cost", lambda s: _root_open(session, files, names, s))
    else:
        opened = run("open_cost", lambda s: open_overhead(session, files, names, s))
    # uproot's unpacking per MB shares the decompression test's time (the plain loop's only)
    unpack_tree = tree.name if engine == "uproot" and analysis is None else None
    dec = run("decompression", lambda s: _decompression(session, dataset, files, s, skipped,
                                                        unpack_tree, branches))
    decomp, unpacking = dec if dec is not None else ((), None)
    root_perf: list[Any] = [None, None]

    def event_loop(share: float) -> EventLoop:
        if engine == "root":
            from .rootengine import measure_root_event_loop

            result = measure_root_event_loop(session, files, tree.name, branches, share)
            root_perf[:] = [result.cache_on, result.cache_off]
            return result.event_loop
        from .eventloop import measure_event_loop

        return measure_event_loop(session, files, tree.name, branches=branches,
                                  analysis=analysis, share_s=share)

    loop = run("event_loop", event_loop)
    call_cost = None
    basket_cost = None
    parallel: tuple[ParallelPoint, ...] | None = None
    if engine == "uproot":
        from .baskets import measure_basket_cost
        from .overhead import measure_call_cost, measure_parallel_loop

        call_cost = run("call_cost", lambda s: measure_call_cost(session, files, tree.name,
                                                                 branches, s))
        basket_cost = run("basket_cost", lambda s: measure_basket_cost(
            session, files, tree.name, branches, s))
        rate = loop.compressed_mb_per_s if loop is not None else None
        parallel = run("parallel_loop", lambda s: measure_parallel_loop(
            session, files, tree.name, branches, s, rate_mb_per_s=rate))
    else:
        session.begin("basket_cost")  # its share flows to the tests after it
        skipped.append(Skipped("basket_cost", "measured for uproot only: ROOT's per-basket "
                               "cost (C++) differs from uproot's and is not separated here"))
    warm = run("page_cache", lambda s: sequential_rate(session, fileset, s, False, "page_cache"))
    raw = None
    if cold is not None or warm is not None or sweep:
        fit = fit_access(sweep, cold.median if cold is not None else None)
        raw = RawRead(
            cold_mb_per_s=cold.median if cold is not None else None,
            warm_mb_per_s=warm.median if warm is not None else None,
            iops_4k=fit.iops_4k,
            access_time_ms=fit.access_time_ms,
            bandwidth_mb_per_s=fit.bandwidth_mb_per_s,
            cold=cold,
            warm=warm,
            readahead_gain_4k=_readahead_gain(sweep),
        )
    cal = _result(session, engine, partial, raw, sweep, conc, opened, decomp, loop, dataset,
                  skipped, files)
    return replace(cal, root_cache_on=root_perf[0], root_cache_off=root_perf[1],
                   call_cost=call_cost, parallel_loop=parallel or (),
                   basket_cost=basket_cost, unpacking=unpacking)


def _readahead_gain(sweep: Sequence[RequestPoint]) -> float | None:
    small = min((p.request_bytes for p in sweep), default=None)
    rates = {p.pattern: p.mb_per_s for p in sweep if p.request_bytes == small}
    seq, rnd = rates.get("sequential"), rates.get("random")
    return seq / rnd if seq and rnd else None


def _decompression(session: Session, dataset: DatasetProfile, files: list[str],
                   share_s: float, skipped: list[Skipped],
                   unpack_tree: str | None = None, branches: Sequence[str] | None = None,
                   ) -> tuple[tuple[DecompressionPoint, ...], Unpacking | None]:
    """Decompression per algorithm (its own and recompressed samples), then, given a tree,
    uproot's unpacking of decompressed baskets (``UNPACK_FRACTION`` of the share, and what the
    decompression left)."""
    from .decompress import measure_decompression, measure_unpacking

    t0 = session.clock()
    points = measure_decompression(
        session, dataset, files, share_s * (1 - UNPACK_FRACTION) if unpack_tree else share_s,
        skipped=skipped)
    unpacking = None
    if unpack_tree is not None:
        try:
            unpacking = measure_unpacking(session, files, unpack_tree, branches,
                                          max(0.0, share_s - (session.clock() - t0)))
        except (Cancelled, KeyboardInterrupt):
            raise
        except Exception as exc:  # the decompression points are kept
            skipped.append(Skipped("unpacking", f"{type(exc).__name__}: {one_line(exc)}"))
    return points, unpacking


def _root_open(session: Session, files: list[str], names: list[str],
               share_s: float) -> OpenOverhead:
    from .rootengine import root_open_overhead

    return root_open_overhead(session, files, names, share_s)


def _result(session: Session, engine: str, partial: bool, raw: RawRead | None,
            sweep: tuple[RequestPoint, ...], conc: tuple[ConcurrencyPoint, ...],
            opened: OpenOverhead | None, decomp: tuple[DecompressionPoint, ...],
            loop: EventLoop | None, dataset: DatasetProfile, skipped: list[Skipped],
            files: list[str] | None = None) -> Calibration:
    available = int(psutil.virtual_memory().available)
    return Calibration(
        budget_s=session.budget_s,
        elapsed_s=session.elapsed(),
        partial=partial,
        engine=engine,
        raw_read=raw,
        request_sweep=sweep,
        concurrency=conc,
        open_overhead_s=opened,
        decompression=decomp,
        event_loop=loop,
        memory=MemoryFit(dataset_bytes=dataset.total_bytes, available_bytes=available,
                         fits_in_ram=dataset.total_bytes < available),
        skipped=tuple(skipped),
        files_used=len(files or ()),
        bytes_read=session.bytes_read,
    )


__all__ = ["DEFAULT_BUDGET_S", "DEFAULT_WORKERS", "ENGINES", "calibrate"]
