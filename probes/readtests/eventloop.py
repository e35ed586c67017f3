"""The event loop with uproot: read the selected branches into arrays, cold and warm.

A bounded part of the dataset (at most ``max_bytes`` compressed of the selected branches, and
what fits in the time share) is read with ``TTree.iterate(..., library="ak")`` in steps of
about ``step_bytes`` uncompressed, so memory stays bounded whatever the dataset size.  Opening
the files is not timed (the open cost is a test of its own); everything from the first basket
read to the last array built is, with Python's full garbage collections held off (the
collector test measures what a program pays for them: :func:`no_full_collections`).

*Cold* samples evict the files from the page cache first (``posix_fadvise``) and count as cold
only where ``mincore`` confirmed it for every file; *warm* samples re-read at once.  The rates
are events/s, and MB/s (MB = 10^6 bytes) of the selected branches' bytes from the metadata:
compressed (on disk, baskets' keys included: ``fZipBytes``) and uncompressed (``fTotBytes``),
scaled by the fraction of each file's entries read.

With ``analysis`` (a callable ``f(arrays)``, or ``"module:function"``, or
``"path/to/file.py:function"``) the user's function is called on every chunk and timed with the
reading: the rate is then that of reading plus the analysis.
"""

from __future__ import annotations

import gc
import importlib
import importlib.util
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from .pagecache import Eviction, evict
from .raw import cache_state, eviction_note
from .readers import ReaderSpec, uproot_chunks
from .readplan import DEFAULT_MAX_BYTES, Plan, plan_reads, whole_baskets
from .results import Conditions, EventLoop, LoopPart, Measurement
from .runner import Session, measurement

TEST = "event_loop"
#: Uncompressed bytes per step of ``iterate`` (arrays in memory are about this size, at most a
#: few times it with awkward's offsets and uproot's basket buffers).
DEFAULT_STEP_BYTES = 50_000_000
#: ... and at most this many per second of the test's share: a step is read whole (cold, on a
#: slow disk, a 50 MB step takes seconds), so a short share reads in smaller steps.
STEP_BYTES_PER_S = 1_000_000
#: bytes per page of memory (a minor page fault touches one)
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
#: Fraction of the share the first (pilot) pass may take; it fixes how much is read per sample.
PILOT_FRACTION = 0.3
#: With cold and warm samples, the fraction of what is left after the pilot that goes to cold.
COLD_FRACTION = 0.6
#: The warm rate is the median of at least this many samples where they are short: the model's
#: CPU terms scale with it, and a single warm sample on a shared machine is off by up to a
#: third from one minute to the next ...
WARM_MIN_SAMPLES = 3
#: ... taking at most this many seconds beyond the test's share (a slow cold pass on an
#: IOPS-bound disk often leaves the warm samples one pass's time; later tests absorb it), or
#: ``WARM_GRACE_FRACTION`` of the budget where the budget has that much left: a pass of half
#: a second (a 20 MB file of split objects) fell just past one second for two more, and its
#: single warm sample read 46,000 events/s in one calibration where the same reader ran warm at
#: 60,000 in the passes after it (benchmarks/RESULTS.md, stop 37)
WARM_GRACE_S = 1.0
WARM_GRACE_FRACTION = 0.05

Analysis = Callable[[Any], Any]


class AnalysisError(RuntimeError):
    """The user's analysis raised while being timed; the message is one line."""


@dataclass(frozen=True)
class PassResult:
    """One pass over (part of) a plan: entries read, the seconds it took, and the in-memory
    size of the arrays it built (awkward's ``nbytes``)."""

    entries: tuple[int, ...]  # per part
    seconds: float
    array_bytes: int
    complete: bool
    #: bytes of memory the pass touched for the first time (minor page faults of this
    #: process, every thread, while the reads were timed, times the page size)
    faulted_bytes: int = 0
    #: the in-memory size of its largest chunk of arrays (one step)
    largest_step_bytes: int = 0

    @property
    def total_entries(self) -> int:
        return sum(self.entries)


# -- the user's analysis ---------------------------------------------------------------------
def resolve_analysis(spec: str | Analysis | None) -> tuple[Analysis | None, str | None]:
    """The callable and its display name.  ``spec`` is a callable, ``"module:function"``
    (``function`` may be dotted), or ``"path/to/file.py:function"``.  Raises ``ValueError``
    with a one-line cause when it cannot be resolved."""
    if spec is None:
        return None, None
    if callable(spec):
        name = getattr(spec, "__qualname__", None) or getattr(spec, "__name__", None)
        module = getattr(spec, "__module__", None)
        return spec, f"{module}:{name}" if module and name else repr(spec)
    if not isinstance(spec, str) or ":" not in spec:
        raise ValueError(f"analysis {spec!r}: expected 'module:function' or a callable")
    mod_name, _, attr = spec.rpartition(":")
    if not mod_name or not attr:
        raise ValueError(f"analysis {spec!r}: expected 'module:function'")
    module = _import(spec, mod_name)
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ValueError(f"analysis {spec!r}: {mod_name!r} has no attribute "
                             f"{attr!r}") from None
    if not callable(obj):
        raise ValueError(f"analysis {spec!r}: {attr!r} is not callable")
    return obj, spec


def _import(spec: str, mod_name: str) -> Any:
    if mod_name.endswith(".py"):
        if not os.path.isfile(mod_name):
            raise ValueError(f"analysis {spec!r}: no such file {mod_name!r}")
        name = "_hep_advisor_analysis_" + os.path.splitext(os.path.basename(mod_name))[0]
        loader_spec = importlib.util.spec_from_file_location(name, mod_name)
        if loader_spec is None or loader_spec.loader is None:
            raise ValueError(f"analysis {spec!r}: cannot load {mod_name!r}")
        module = importlib.util.module_from_spec(loader_spec)
        try:
            loader_spec.loader.exec_module(module)
        except Exception as exc:
            raise ValueError(f"analysis {spec!r}: importing it failed: "
                             f"{type(exc).__name__}: {exc}") from None
        return module
    try:
        return _import_module(mod_name)
    except ModuleNotFoundError as exc:
        raise ValueError(f"analysis {spec!r}: no module named {exc.name or mod_name!r}") from None
    except Exception as exc:
        raise ValueError(f"analysis {spec!r}: importing {mod_name!r} failed: "
                         f"{type(exc).__name__}: {exc}") from None


def _import_module(mod_name: str) -> Any:
    """Import ``mod_name``; a module in the working directory is found too (a console script
    does not put it on ``sys.path``)."""
    try:
        return importlib.import_module(mod_name)
    except ModuleNotFoundError as exc:
        top = mod_name.split(".")[0]
        cwd = os.getcwd()
        if exc.name != top or cwd in sys.path or "" in sys.path:
            raise
        sys.path.insert(0, cwd)
        try:
            return importlib.import_module(mod_name)
        finally:
            if cwd in sys.path:
                sys.path.remove(cwd)


# -- reading ---------------------------------------------------------------------------------
def read_pass(
    plan: Plan,
    step_bytes: float = DEFAULT_STEP_BYTES,
    analysis: Analysis | None = None,
    deadline: float | None = None,
    check: Callable[[], None] | None = None,
    reader: ReaderSpec | None = None,
) -> PassResult:
    """Read the plan once, chunk by chunk; stop early at ``deadline`` (``time.perf_counter``
    seconds), keeping what was read.  Opening the files is not timed.  ``reader``: the
    program's uproot reader (:mod:`.readers`; default: ``iterate`` at ``step_bytes``)."""
    import uproot

    done: list[int] = []
    seconds = 0.0
    array_bytes = 0
    faults = 0
    largest = 0
    complete = True
    for part in plan.parts:
        if check is not None:
            check()
        if deadline is not None and time.perf_counter() >= deadline and done:
            complete = False
            break
        per_entry = part.uncompressed_bytes / part.tree_entries if part.tree_entries else 1.0
        step = max(1, int(step_bytes / max(per_entry, 1.0)))
        n = 0
        with uproot.open(part.path) as f:
            tree = f[plan.tree_name]
            f0 = minor_faults()
            t0 = time.perf_counter()
            for arrays in uproot_chunks(tree, reader, plan.branches, part.entries, step):
                if analysis is not None:
                    try:
                        analysis(arrays)
                    except Exception as exc:
                        from ..rootfile import one_line

                        name = getattr(analysis, "__qualname__", repr(analysis))
                        raise AnalysisError(f"the analysis {name} raised "
                                            f"{type(exc).__name__}: {one_line(exc)}") from exc
                if isinstance(arrays, dict):  # a reader with library="np"
                    n += len(next(iter(arrays.values()), ()))
                    chunk = sum(int(a.nbytes) for a in arrays.values())
                else:
                    n += len(arrays)
                    chunk = int(arrays.nbytes)
                array_bytes += chunk
                largest = max(largest, chunk)
                del arrays
                if check is not None:
                    check()
                if deadline is not None and time.perf_counter() >= deadline and n < part.entries:
                    complete = False
                    break
            seconds += time.perf_counter() - t0
            faults += minor_faults() - f0
        done.append(n)
        if not complete:
            break
    return PassResult(entries=tuple(done), seconds=seconds, array_bytes=array_bytes,
                      complete=complete, faulted_bytes=faults * PAGE_BYTES,
                      largest_step_bytes=largest)


@contextmanager
def no_full_collections() -> Iterator[None]:
    """Python's full (generation-2) garbage collections held off while the loop is timed,
    and one run untimed afterwards, so that the loop's time holds its reads, decompression
    and young collections only.  A program reading many small files pays full collections
    every few files, at a cost that grows with its heap: the collector test measures that
    in a fresh interpreter (:mod:`.collector`) and the model adds it per file, so a loop
    that also paid them in the advisor's own process (whose heap is not the program's)
    counted them twice.  Measured on 7 files of 1 MB and 300 branches, warm, alternate
    passes in one process: 14,061-18,302 events/s with full collections, 23,052-26,212
    without; the collector test gave 25-39 ms a file on the same data."""
    low, mid, high = gc.get_threshold()
    held = gc.isenabled()
    if held:
        gc.set_threshold(low, mid, 1 << 30)  # a full collection needs count[2] > threshold2
    try:
        yield
    finally:
        if held:
            gc.set_threshold(low, mid, high)
            gc.collect()  # what the pass left, freed before the next one


def minor_faults() -> int:
    """This process's minor page faults so far (every thread): pages it wrote or read for the
    first time since they were mapped."""
    import resource

    return int(resource.getrusage(resource.RUSAGE_SELF).ru_minflt)


def truncate(plan: Plan, result: PassResult) -> Plan:
    """The part of ``plan`` that ``result`` read (the same, when it read everything), its
    last part cut back to a cluster boundary where that keeps most of the entries
    (:func:`whole_baskets`): the samples after it read whole baskets."""
    if result.complete:
        return plan
    parts = whole_baskets([replace(p, entries=n) for p, n in
                           zip(plan.parts, result.entries, strict=False) if n > 0])
    return replace(plan, parts=tuple(parts)) if parts else plan


def cold_then_warm(session: Session, test: str, what: str, base: Conditions,
                   sample: Callable[[bool], float], pilot_rate: float, pass_s: float,
                   share: float, t0: float, evictions: list[Eviction] | None
                   ) -> tuple[Measurement | None, Measurement, Measurement]:
    """The event loop's samples once its pilot pass is done: cold ones (``sample(True)``
    evicts first; ``evictions`` collects what each eviction did, ``None`` for no cold
    samples), the pilot counted among them, in ``COLD_FRACTION`` of what is left of ``share``
    (keeping one pass for the warm samples), then warm ones (``sample(False)``) to the end of
    the share, and at least ``WARM_MIN_SAMPLES`` where they take at most ``WARM_GRACE_S``
    beyond it (or ``WARM_GRACE_FRACTION`` of the budget, where that much of it is left).
    Returns the cold and warm measurements and the top one: cold where eviction was
    confirmed, else warm."""
    clock = session.clock
    cold_m: Measurement | None = None
    if evictions is not None:
        cold_share = COLD_FRACTION * max(0.0, share - (clock() - t0) - pass_s)
        samples = [pilot_rate]
        if cold_share > pass_s:
            samples += session.repeat(lambda: sample(True), cold_share, test,
                                      f"{what}, cold", min_samples=2)
        why = eviction_note(evictions)
        note = f"{base.note}; {why}" if why else base.note
        cold_m = measurement(samples, "events/s",
                             replace(base, cache=cache_state(evictions), note=note))
    warm_share = max(0.0, share - (clock() - t0))
    t_warm = clock()
    warm_samples = session.repeat(lambda: sample(False), warm_share, test, f"{what}, warm")
    per = (clock() - t_warm) / len(warm_samples)
    grace = max(WARM_GRACE_S, min(WARM_GRACE_FRACTION * session.budget_s, session.remaining()))
    while (len(warm_samples) < WARM_MIN_SAMPLES
           and per * (WARM_MIN_SAMPLES - len(warm_samples)) <= grace):
        session.check()
        warm_samples.append(float(sample(False)))
    warm_m = measurement(warm_samples, "events/s", replace(base, cache="warm"))
    top = cold_m if cold_m is not None and cold_m.conditions.cache == "cold" else warm_m
    return cold_m, warm_m, top


def measure_event_loop(
    session: Session,
    files: Sequence[str],
    tree_name: str,
    branches: Sequence[str] | None = None,
    analysis: str | Analysis | None = None,
    share_s: float | None = None,
    cold: bool = True,
    max_bytes: float = DEFAULT_MAX_BYTES,
    step_bytes: float = DEFAULT_STEP_BYTES,
    reader: ReaderSpec | None = None,
) -> EventLoop:
    """Events/s and MB/s of reading ``branches`` (default: all) of ``tree_name`` with uproot.

    ``share_s`` is the time the test may take (default: its share of the session's budget).
    A pilot pass (cold where ``cold``) fixes how much is read per sample so that the samples
    fit the share; cold samples then evict the files before each read, warm samples follow at
    once.  The top-level figures are the cold ones where eviction was confirmed for every
    file, else the warm ones.  ``reader``: the program's uproot reader (:mod:`.readers`),
    named in the result.  Raises ``ValueError`` (one line) for a bad ``analysis`` or
    branch, :class:`AnalysisError` when the analysis raises, and
    :class:`~probes.readtests.runner.Cancelled` when cancelled.
    """
    func, analysis_name = resolve_analysis(analysis)
    share = session.begin(TEST) if share_s is None else float(share_s)
    step_bytes = min(step_bytes, max(1e6, STEP_BYTES_PER_S * share))
    clock = session.clock
    t0 = clock()
    session.check()
    session.report(TEST, 0.0, "planning the event loop")
    plan = plan_reads(files, tree_name, branches, max_bytes,
                      deadline=t0 + 0.1 * share, clock=clock)

    # warm-up: build uproot's interpretations and awkward's kernels on a few entries, so the
    # first timed pass does not pay one-time costs; the files are evicted afterwards anyway
    first = plan.parts[0]
    warm_up = replace(plan, parts=(replace(first, entries=min(first.entries, 100)),))
    read_pass(warm_up, step_bytes, func, check=session.check, reader=reader)

    evictions: list[Eviction] = []

    def evict_plan(p: Plan) -> None:
        evictions.extend(evict(path) for path in p.paths)

    # pilot: sizes the samples
    if cold:
        evict_plan(plan)
    p0 = clock()
    pilot_budget = PILOT_FRACTION * max(0.0, share - (p0 - t0))
    with no_full_collections():
        pilot = read_pass(plan, step_bytes, func, deadline=time.perf_counter() + pilot_budget,
                          check=session.check, reader=reader)
    pass_s = clock() - p0  # one pass, opening the files included
    plan = truncate(plan, pilot)
    session.bytes_read += int(plan.compressed_bytes)
    pilot_rate = pilot.total_entries / max(pilot.seconds, 1e-9)

    refaults: list[float] = []  # warm passes: MB faulted per uncompressed MB read
    steps: list[int] = []  # warm passes: the largest step's arrays (bytes)

    def sample(evict_first: bool) -> float:
        if evict_first:
            evict_plan(plan)
        with no_full_collections():
            r = read_pass(plan, step_bytes, func, check=session.check, reader=reader)
        session.bytes_read += int(plan.compressed_bytes)
        if not evict_first and plan.uncompressed_bytes > 0:
            refaults.append(r.faulted_bytes / plan.uncompressed_bytes)
            steps.append(r.largest_step_bytes)
        return r.total_entries / max(r.seconds, 1e-9)

    what = f"{'analysis ' + analysis_name if analysis_name else 'reading'} " \
           f"{len(plan.branches)} branches"
    base = Conditions(cache="unknown", workers=1, bytes_per_sample=int(plan.compressed_bytes),
                      note=f"{plan.entries} entries of {len(plan.parts)} file(s), library "
                      f"'ak'; file opening not timed"
                      + (f"; reader {reader.describe()}" if reader is not None else ""))
    cold_m, warm_m, top = cold_then_warm(session, TEST, what, base, sample, pilot_rate,
                                         pass_s, share, t0, evictions if cold else None)
    rate = top.median
    n = plan.entries
    per_event_c = plan.compressed_bytes / n if n else 0.0
    per_event_u = plan.uncompressed_bytes / n if n else 0.0
    session.report(TEST, 1.0, "event loop done",
                   figure=f"{rate:.0f} events/s" if rate is not None else None)
    loop = EventLoop.from_rate("uproot", len(plan.branches), rate, per_event_c, per_event_u,
                               cold_m, warm_m, analysis_name)
    over = plan.overread()
    if over is not None:
        loop = replace(loop, read_mb_factor=over[0], read_basket_factor=over[1])
    if refaults:
        loop = replace(loop, refault_per_mb=statistics.median(refaults),
                       step_mb=max(steps) / 1e6)
    loop = replace(loop, parts=tuple(LoopPart(p.path, p.entries) for p in plan.parts))
    return replace(loop, step_bytes=float(step_bytes)) if reader is None else \
        replace(loop, reader=reader.text)
