"""Run the calibrated read tests on a dataset, within a time budget.

Order: cold sequential reads (the storage rate), the request-size sweep, the concurrency sweep,
the per-file open cost, decompression per algorithm (with recompressed samples of the other
algorithms and, for uproot's plain event loop, uproot's unpacking of decompressed baskets, in
the same share), the event loop, (with uproot) the per-call cost, the per-basket cost and the
parallel event loop, and the page-cache (warm) rate: the tests, their order, weights and
minimums are those of :mod:`.registry`.

The budget is kept.  Each test's share is its minimum and its weight's part of what is left
beyond the minimums of the tests still to run; time a test leaves unused flows to the tests
after it.  A test checks its deadline before each costly step and scales its work to the time
left; where even its smallest useful measurement does not fit it skips itself, with the reason
(:class:`~.runner.OutOfTime`), and a test whose minimum is more than what is left of the budget
is not started.  Past the budget and half the tolerance (``runner.tolerance``: 5%, at least
1 s) the test under way is stopped.

A test that cannot run here is listed in ``skipped`` with its reason; a cancelled calibration
(``cancel.set()`` or Ctrl-C) returns what was measured, marked ``partial``.  Reads never write
to the data and leave no files behind; the concurrency sweep's child processes are ended
before this returns, whatever happens.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Sequence
from typing import Any

from ..files import is_remote
from ..results import DatasetProfile, largest_tree
from ..rootfile import one_line
from .assemble import build_calibration
from .pace import machine_pace
from .pace import sample as pace_sample
from .raw import fit_access
from .registry import READ_TESTS, ReadTest, tests_for
from .results import Calibration, PaceSample, RawRead, RequestPoint, Skipped
from .runner import Cancelled, Context, OutOfTime, ProgressCallback, Session

DEFAULT_BUDGET_S = 60.0
DEFAULT_WORKERS = (1, 2, 4)
ENGINES = ("uproot", "root")
#: Files the read tests draw from at most (spread over the dataset, largest first).
MAX_FILES = 256


def _spread(paths: Sequence[str], k: int) -> list[str]:
    if len(paths) <= k:
        return list(paths)
    step = len(paths) / k
    return [paths[int(i * step)] for i in range(k)]


def step_of(test: ReadTest) -> Callable[[Context, float], Any]:
    """The function that runs ``test`` (its registry entry's ``step``)."""
    module, _, name = test.step.partition(":")
    fn: Callable[[Context, float], Any] = getattr(
        importlib.import_module(f"{__package__}.{module}"), name)
    return fn


def calibrate(
    dataset: DatasetProfile,
    budget_s: float = DEFAULT_BUDGET_S,
    workers: Sequence[int] = DEFAULT_WORKERS,
    engine: str = "uproot",
    branches: Sequence[str] | None = None,
    analysis: str | Callable[..., Any] | None = None,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
    reader: Any = None,
) -> Calibration:
    """Measure every term of the rate model on ``dataset``'s own files.  ``reader``: the
    program's reader (a :class:`~.readers.ReaderSpec`): the event loop runs it."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r} (choose from {', '.join(ENGINES)})")
    files = _spread(dataset.file_paths, MAX_FILES)
    session = Session(budget_s, tests=[t.name for t in tests_for(engine)], progress=progress,
                      cancel=cancel)
    if not files or not dataset.trees:
        return build_calibration(session, engine, False, dataset, {},
                            [Skipped("all", "no usable ROOT file to read")], [])
    if is_remote(files[0]):  # the link, not the local storage (probes.readtests.link)
        from .link import calibrate_remote

        return calibrate_remote(dataset, files, budget_s, engine, progress, cancel)
    ctx = Context(session=session, dataset=dataset, files=files,
                  tree=largest_tree(dataset.trees), engine=engine,
                  workers=tuple(workers), branches=tuple(branches) if branches else None,
                  analysis=analysis)
    if reader is not None:
        ctx.scratch["reader"] = reader
    partial = False
    paces: list[PaceSample] = []
    for test in READ_TESTS:
        if partial:
            break
        if engine not in test.engines:  # no share: the budget goes to the tests that run
            if test.why_not:
                ctx.skipped.append(Skipped(test.name, test.why_not))
            continue
        paces.append(pace_sample(test.name))
        left = session.remaining()
        share = session.begin(test.name)
        if left < test.min_s:  # what is left flows to the (smaller) tests after it
            ctx.skipped.append(Skipped(test.name, (
                f"no time left: its smallest measurement takes about {test.min_s:g} s, "
                f"{left:.2g} s of the budget were left")))
            continue
        try:
            ctx.results[test.name] = step_of(test)(ctx, share)
        except (Cancelled, KeyboardInterrupt):
            partial = True
            session.cancel()
        except OutOfTime as exc:  # it could not fit: the time is the next tests'
            ctx.skipped.append(Skipped(test.name, str(exc)))
        except Exception as exc:  # one test failing never stops the others
            ctx.skipped.append(Skipped(test.name, f"{type(exc).__name__}: {one_line(exc)}"))
    if not partial:
        paces.append(pace_sample("end"))
    values = dict(ctx.fields)
    values["machine"] = machine_pace(paces)
    for test in READ_TESTS:
        result = ctx.results.get(test.name)
        if test.field is not None and result is not None:
            values[test.field] = result
    values["raw_read"] = _raw_read(ctx.results)
    return build_calibration(session, engine, partial, dataset, values, ctx.skipped, files)


def _raw_read(results: dict[str, Any]) -> RawRead | None:
    """The cold and warm sequential rates and the request sweep, as one ``RawRead``."""
    cold, warm = results.get("raw_read"), results.get("page_cache")
    sweep: Sequence[RequestPoint] = results.get("request_sweep") or ()
    if cold is None and warm is None and not sweep:
        return None
    fit = fit_access(sweep, cold.median if cold is not None else None)
    return RawRead(
        cold_mb_per_s=cold.median if cold is not None else None,
        warm_mb_per_s=warm.median if warm is not None else None,
        iops_4k=fit.iops_4k,
        access_time_ms=fit.access_time_ms,
        bandwidth_mb_per_s=fit.bandwidth_mb_per_s,
        cold=cold,
        warm=warm,
        readahead_gain_4k=_readahead_gain(sweep),
        device_limit=fit.limit,
    )


def _readahead_gain(sweep: Sequence[RequestPoint]) -> float | None:
    small = min((p.request_bytes for p in sweep), default=None)
    rates = {p.pattern: p.mb_per_s for p in sweep if p.request_bytes == small}
    seq, rnd = rates.get("sequential"), rates.get("random")
    return seq / rnd if seq and rnd else None


__all__ = ["DEFAULT_BUDGET_S", "DEFAULT_WORKERS", "ENGINES", "calibrate", "step_of"]
