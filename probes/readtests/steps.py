"""The steps of the built-in read tests: each adapts one test's function to the call every
step has, ``step(ctx, share_s)`` (see :mod:`.registry`), and returns the value of its
:class:`~probes.readtests.results.Calibration` field."""

from __future__ import annotations

from typing import Any

from ..rootfile import one_line
from .raw import FileSet, concurrency_sweep, request_sweep, sequential_rate
from .readers import ReaderSpec, label_loop, with_branches
from .results import (
    BasketCost,
    CallCost,
    ConcurrencyPoint,
    DecompressionPoint,
    EventLoop,
    FirstTouch,
    KeyCost,
    Measurement,
    OpenOverhead,
    ParallelPoint,
    RequestPoint,
    Skipped,
)
from .runner import Cancelled, Context, OutOfTime

#: Fraction of the decompression test's share that goes to uproot's unpacking test.
UNPACK_FRACTION = 0.2


def _fileset(ctx: Context) -> FileSet:
    fs = ctx.scratch.get("fileset")
    if not isinstance(fs, FileSet):
        fs = ctx.scratch["fileset"] = FileSet.of(ctx.files)
    return fs


def _not_rntuple(ctx: Context) -> None:
    """Skip a TTree-only test on an RNTuple dataset, with the reason."""
    if ctx.tree.format == "rntuple":
        from .rntuple_loop import NotForRNTuple

        raise NotForRNTuple("not measured for an RNTuple dataset yet (its reads go through "
                            "uproot's TTree code)")


def raw_read(ctx: Context, share_s: float) -> Measurement:
    return sequential_rate(ctx.session, _fileset(ctx), share_s, True, "raw_read")


def request_sweep_(ctx: Context, share_s: float) -> tuple[RequestPoint, ...]:
    return request_sweep(ctx.session, _fileset(ctx), share_s)


def concurrency(ctx: Context, share_s: float) -> tuple[ConcurrencyPoint, ...]:
    return concurrency_sweep(ctx.session, _fileset(ctx), share_s, ctx.workers)


def page_cache(ctx: Context, share_s: float) -> Measurement:
    return sequential_rate(ctx.session, _fileset(ctx), share_s, False, "page_cache")


def open_cost(ctx: Context, share_s: float) -> OpenOverhead:
    names = [t.name for t in ctx.dataset.trees]
    if ctx.engine == "root" and ctx.tree.format == "rntuple":
        from .rntuple_loop import NotForRNTuple

        raise NotForRNTuple("ROOT's open cost of an RNTuple is not measured yet (the ROOT "
                            "engine's open test reads TTrees)")
    if ctx.engine == "root":
        from .rootengine import root_open_overhead

        return root_open_overhead(ctx.session, ctx.files, names, share_s)
    from .opencost import open_overhead

    return open_overhead(ctx.session, ctx.files, names, share_s)


def decompression(ctx: Context, share_s: float) -> tuple[DecompressionPoint, ...]:
    """Decompression per algorithm (its own and recompressed samples), then, for uproot's
    plain event loop, uproot's unpacking of decompressed baskets (``UNPACK_FRACTION`` of the
    share, and what the decompression left) into ``ctx.fields["unpacking"]``."""
    from .decompress import measure_decompression
    from .unpacking import measure_unpacking

    if ctx.tree.format == "rntuple":  # its pages; no unpacking test (uproot's TTree path)
        from .rntuple_loop import measure_rntuple_decompression

        return measure_rntuple_decompression(ctx.session, ctx.files, ctx.tree.name, share_s,
                                             skipped=ctx.skipped)
    session = ctx.session
    unpack = ctx.engine == "uproot" and ctx.analysis is None
    t0 = session.clock()
    points = measure_decompression(
        session, ctx.dataset, ctx.files, share_s * (1 - UNPACK_FRACTION) if unpack else share_s,
        skipped=ctx.skipped)
    if unpack:
        try:
            ctx.fields["unpacking"] = measure_unpacking(
                session, ctx.files, ctx.tree.name, ctx.branches,
                max(0.0, share_s - (session.clock() - t0)))
        except (Cancelled, KeyboardInterrupt):
            raise
        except OutOfTime as exc:  # the decompression points are kept
            ctx.skipped.append(Skipped("unpacking", str(exc)))
        except Exception as exc:  # the decompression points are kept
            ctx.skipped.append(Skipped("unpacking", f"{type(exc).__name__}: {one_line(exc)}"))
    return points


def reader_event_loop(ctx: Context, spec: ReaderSpec, share_s: float) -> Any:
    """The event-loop test (a read test's step, ``ctx`` its ``Context``) with the program's
    reader: uproot's passes, ROOT's ``GetEntry`` loop with or without TTreeCache, or an
    RDataFrame; the branches are the trace's where it named them, else ``--branches``."""
    branches = with_branches(spec, ctx.branches)
    if spec.engine == "uproot":
        from .eventloop import measure_event_loop

        return measure_event_loop(ctx.session, ctx.files, ctx.tree.name, branches=branches,
                                  analysis=ctx.analysis, share_s=share_s, reader=spec)
    if ctx.analysis is not None:
        raise ValueError(f"--analysis calls a Python function on uproot's arrays: not with "
                         f"the reader {spec.kind}")
    loop, cache_on, cache_off, opened = root_reader_loop(ctx.session, ctx.files,
                                                         ctx.tree.name, branches, share_s, spec,
                                                         ctx.fields)
    if opened is not None and ctx.engine != "root":  # ROOT's open, where the test ran uproot's
        ctx.fields["reader_open"] = opened
    if cache_on is not None or cache_off is not None:
        ctx.fields["root_cache_on"] = cache_on
        ctx.fields["root_cache_off"] = cache_off
    return loop


#: Seconds a ROOT reader's child may run past the test's share before it is ended (its start
#: and the result's way back).
ROOT_CHILD_GRACE_S = 1.0


def root_reader_loop(session: Any, files: Any, tree_name: str, branches: Any, share_s: float,
                     spec: ReaderSpec, fields: dict[str, Any] | None = None
                     ) -> tuple[Any, Any, Any, Any]:
    """A reader that runs in ROOT (``GetEntry`` loops, ``RDataFrame``), timed in a child
    process that is ended at the test's share (:func:`.procs.call_bounded`): ROOT's set-up
    (its libraries, RDataFrame's compiled actions) and a pass it cannot stop then keep the
    budget.  What the child measured comes back (the event loop, its set-up, ROOT's
    read statistics); a child ended at its share is :class:`OutOfTime`, said in the
    calibration's skipped tests, and the one-off set-up it measured before it was ended (an
    RDataFrame's compilation) goes into ``fields["reader_setup"]``."""
    from .procs import call_bounded

    deadline = session.deadline
    try:
        return call_bounded(_root_reader_child, (session, files, tree_name, branches, share_s,
                                                 spec),
                            max(0.0, deadline - session.clock()) + ROOT_CHILD_GRACE_S,
                            check=session.check)
    except TimeoutError as exc:
        setup = getattr(exc, "partial", {}).get("setup_s")
        kept = ""
        if setup is not None and fields is not None:
            from .results import ReaderSetup

            fields["reader_setup"] = ReaderSetup(spec.text, float(setup))
            kept = f"; its one-off set-up, measured before, is kept ({setup:.2f} s)"
        raise OutOfTime(f"{spec.describe()}: the loop ran past the test's share "
                        f"({share_s:.1f} s) and was ended{kept}") from None


#: Seconds of a compiled ``GetEntry`` reader's child spent on its own open per file, after its
#: loop (within the loop test's time left, at most this)
READER_OPEN_S = 0.3


def _root_reader_child(session: Any, files: Any, tree_name: str, branches: Any,
                       share_s: float, spec: ReaderSpec) -> tuple[Any, Any, Any, Any]:
    """In the child: the ROOT reader's event loop (no progress to the parent's display); for
    a compiled ``GetEntry`` loop (timed without its opens), then ROOT's own open per file."""
    session.progress_cb = None
    if spec.kind == "rdataframe" or spec.loop == "python":
        from .pyloops import python_root_event_loop

        return (label_loop(python_root_event_loop(session, files, tree_name, branches,
                                                  share_s, spec), spec), None, None, None)
    from .rootengine import measure_root_event_loop, reader_open_overhead

    result = measure_root_event_loop(session, files, tree_name, branches, share_s,
                                     reader=spec)
    opened = reader_open_overhead(files, tree_name, min(READER_OPEN_S, session.left()),
                                  check=session.check)
    return result.event_loop, result.cache_on, result.cache_off, opened


def event_loop(ctx: Context, share_s: float) -> EventLoop:
    reader = ctx.scratch.get("reader")  # the program's reader (``--reader``), where named
    if reader is not None and ctx.tree.format != "rntuple":
        return reader_event_loop(ctx, reader, share_s)
    if ctx.tree.format == "rntuple":
        from .rntuple_loop import measure_rntuple_event_loop

        return measure_rntuple_event_loop(ctx.session, ctx.files, ctx.tree.name, ctx.branches,
                                          ctx.analysis, share_s, engine=ctx.engine)
    if ctx.engine == "root":
        from .rootengine import measure_root_event_loop

        result = measure_root_event_loop(ctx.session, ctx.files, ctx.tree.name, ctx.branches,
                                         share_s)
        ctx.fields["root_cache_on"] = result.cache_on
        ctx.fields["root_cache_off"] = result.cache_off
        return result.event_loop
    from .eventloop import measure_event_loop

    return measure_event_loop(ctx.session, ctx.files, ctx.tree.name, branches=ctx.branches,
                              analysis=ctx.analysis, share_s=share_s)


def call_cost(ctx: Context, share_s: float) -> CallCost:
    _not_rntuple(ctx)
    from .overhead import measure_call_cost

    t = ctx.tree
    per_branch = t.baskets.count / max(t.branches * t.files, 1)  # per file
    return measure_call_cost(ctx.session, ctx.files, ctx.tree.name, ctx.branches, share_s,
                             several_baskets=not t.baskets.count or per_branch >= 1.5)


def basket_cost(ctx: Context, share_s: float) -> BasketCost:
    _not_rntuple(ctx)
    from .baskets import measure_basket_cost

    return measure_basket_cost(ctx.session, ctx.files, ctx.tree.name, ctx.branches, share_s)


def first_touch(ctx: Context, share_s: float) -> FirstTouch:
    from .firsttouch import measure_first_touch

    return measure_first_touch(ctx.session, share_s)


def key_cost(ctx: Context, share_s: float) -> KeyCost:
    _not_rntuple(ctx)
    from .keys import measure_key_cost

    return measure_key_cost(ctx.session, ctx.files, ctx.tree.name, ctx.branches, share_s)


def worker_open_s(opened: Any, collected: Any) -> float | None:
    """Seconds a parallel-loop worker spends per file beyond reading it, for planning its
    runs: the warm open (the open test's median) and Python's full collections per file (the
    collector test, run before the parallel loop), which that median leaves out and which the
    workers, fresh processes, pay as any program does; ``None`` where the open is unknown."""
    if opened is None or opened.warm is None:
        return None
    extra = collected.per_file_s if collected is not None and collected.per_file_s else 0.0
    return float(opened.warm) + float(extra)


def parallel_loop(ctx: Context, share_s: float) -> tuple[ParallelPoint, ...]:
    _not_rntuple(ctx)
    from .overhead import measure_parallel_loop

    loop: Any = ctx.results.get("event_loop")
    rate = loop.compressed_mb_per_s if loop is not None else None
    open_s = worker_open_s(ctx.results.get("open_cost"), ctx.results.get("collector"))
    return measure_parallel_loop(ctx.session, ctx.files, ctx.tree.name, ctx.branches, share_s,
                                 rate_mb_per_s=rate, open_s=open_s)
