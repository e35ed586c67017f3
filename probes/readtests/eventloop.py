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
from dataclasses import dataclass, field, replace
from typing import Any

from .pagecache import Eviction, evict
from .raw import cache_state, eviction_note
from .readers import ReaderSpec, uproot_chunks
from .results import Conditions, EventLoop, Measurement
from .runner import Session, measurement

TEST = "event_loop"
DEFAULT_MAX_BYTES = 200_000_000
#: Uncompressed bytes per step of ``iterate`` (arrays in memory are about this size, at most a
#: few times it with awkward's offsets and uproot's basket buffers).
DEFAULT_STEP_BYTES = 50_000_000
#: ... and at most this many per second of the test's share: a step is read whole (cold, on a
#: slow disk, a 50 MB step takes seconds), so a short share reads in smaller steps.
STEP_BYTES_PER_S = 1_000_000
#: bytes per page of memory (a minor page fault touches one)
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
#: A plan cut inside a file ends at the last cluster boundary before its cut (or with the
#: files before it) where that keeps at least this fraction of its entries
#: (:func:`whole_baskets`).
SNAP_KEEP = 0.5
#: A planned file's baskets are kept (16 bytes each, to count what a part of it reads) up to
#: this many; beyond, what its part reads beyond its share is not counted.
MAX_TOUCH_BASKETS = 200_000
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
class BasketTouch:
    """Where the selected branches' baskets begin (entries, sorted) and their bytes on disk
    (cumulative, in that order): what a read of entries [0, n) decompresses."""

    starts: Any  # numpy int64
    cum_bytes: Any  # numpy float64, cumulative over ``starts``

    @classmethod
    def of(cls, tree: Any, branches: Sequence[str]) -> BasketTouch | None:
        """The baskets of ``branches``; ``None`` beyond ``MAX_TOUCH_BASKETS`` of them."""
        import numpy as np

        if sum(int(tree[b].member("fWriteBasket")) for b in branches) > MAX_TOUCH_BASKETS:
            return None
        starts, sizes = [], []
        for b in branches:
            branch = tree[b]
            n = int(branch.member("fWriteBasket"))
            starts.append(np.asarray(branch.member("fBasketEntry"))[:n].astype(np.int64))
            sizes.append(np.asarray(branch.member("fBasketBytes"))[:n].astype(np.float64))
        s = np.concatenate(starts) if starts else np.zeros(0, np.int64)
        order = np.argsort(s, kind="stable")
        z = np.concatenate(sizes)[order] if sizes else np.zeros(0)
        return cls(s[order], np.cumsum(z))

    def read(self, entries: int) -> tuple[int, float]:
        """(baskets, bytes) that a read of entries [0, ``entries``) decompresses."""
        import numpy as np

        i = int(np.searchsorted(self.starts, entries, side="left"))
        return i, float(self.cum_bytes[i - 1]) if i > 0 else 0.0

    @property
    def total(self) -> tuple[int, float]:
        return len(self.starts), float(self.cum_bytes[-1]) if len(self.cum_bytes) else 0.0


@dataclass(frozen=True)
class FilePart:
    """The part of one file a sample reads: ``entries`` from the start of the tree."""

    path: str
    entries: int
    tree_entries: int
    compressed_bytes: int  # of the selected branches, whole tree
    uncompressed_bytes: int
    #: entries where every selected branch starts a new basket (cluster boundaries), the
    #: tree's end included; empty: not known
    boundaries: tuple[int, ...] = ()
    #: the selected branches' baskets, to count what the part's reads decompress
    touch: BasketTouch | None = field(default=None, compare=False, repr=False)

    @property
    def fraction(self) -> float:
        return self.entries / self.tree_entries if self.tree_entries else 0.0


class PartTotals:
    """Totals over a plan's ``parts`` (each with path, entries, compressed and uncompressed
    bytes, and the fraction of them read)."""

    parts: tuple[Any, ...]

    @property
    def entries(self) -> int:
        return sum(p.entries for p in self.parts)

    @property
    def compressed_bytes(self) -> float:
        return sum(p.compressed_bytes * p.fraction for p in self.parts)

    @property
    def uncompressed_bytes(self) -> float:
        return sum(p.uncompressed_bytes * p.fraction for p in self.parts)

    @property
    def paths(self) -> list[str]:
        return [p.path for p in self.parts]


@dataclass(frozen=True)
class Plan(PartTotals):
    tree_name: str
    branches: tuple[str, ...]
    parts: tuple[FilePart, ...]
    skipped: tuple[str, ...] = ()

    def overread(self) -> tuple[float, float] | None:
        """What a pass over the plan decompresses against its share of the files' baskets:
        (bytes, baskets), each the ratio of the baskets that begin before each part's end to
        the part's fraction of all of them (1 for whole files, more for a part that ends
        inside baskets: :func:`whole_baskets`); ``None`` where a part's baskets are not
        known."""
        got_b = got_n = share_b = share_n = 0.0
        for p in self.parts:
            if p.touch is None:
                return None
            n, b = p.touch.read(p.entries)
            all_n, all_b = p.touch.total
            got_n, got_b = got_n + n, got_b + b
            share_n, share_b = share_n + all_n * p.fraction, share_b + all_b * p.fraction
        if share_b <= 0 or share_n <= 0:
            return None
        return got_b / share_b, got_n / share_n


def whole_baskets(parts: Sequence[FilePart]) -> tuple[FilePart, ...]:
    """``parts`` with the last one, where it ends inside its file, cut back to the last
    boundary where every branch starts a new basket (:attr:`FilePart.boundaries`), or left
    out where the parts before it are whole, wherever that keeps at least ``SNAP_KEEP`` of the
    entries; else as they are.  A read of entries [0, n) decompresses every basket that
    begins before n, so a part ending inside baskets reads more than its share of the file's
    bytes.  On 1,200 branches of 8 KB baskets (LZ4, clusters of 1,980 entries), 2,247 of a
    file's 5,000 entries read 2,640 baskets and 17.6 MB where their share is 1,726 baskets and
    10.0 MB, and the event loop's rate, scaled to whole files, predicted them read at 9.4 MB/s
    where a job read them at 17.2; on files of 12,000 entries in clusters of 10,000, a
    loop over two files and 3,582 entries of a third read 34,000 entries' baskets
    (benchmarks/RESULTS.md, stop 46)."""
    if not parts or parts[-1].entries >= parts[-1].tree_entries:
        return tuple(parts)
    last = parts[-1]
    total = sum(p.entries for p in parts)
    before = total - last.entries
    cuts = [b for b in last.boundaries if b <= last.entries] + ([0] if before > 0 else [])
    if not cuts or before + max(cuts) < SNAP_KEEP * total:
        return tuple(parts)
    cut = max(cuts)
    return (*parts[:-1], replace(last, entries=cut)) if cut > 0 else tuple(parts[:-1])


def common_boundaries(tree: Any, branches: Sequence[str]) -> tuple[int, ...]:
    """Entries (sorted, the tree's end included) where every one of ``branches`` starts a new
    basket: the clusters' boundaries, for a tree written with ROOT's AutoFlush."""
    import numpy as np

    common: set[int] | None = None
    for b in branches:
        branch = tree[b]
        n = int(branch.member("fWriteBasket"))
        entry = {int(x) for x in np.asarray(branch.member("fBasketEntry"))[1:n]}
        common = entry if common is None else common & entry
        if not common:
            break
    return (*sorted(common or set()), int(tree.num_entries))


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


# -- planning --------------------------------------------------------------------------------
def leaf_branches(tree: Any) -> list[str]:
    """Every branch uproot can read into an array (sub-branches, not their parents)."""
    from uproot.interpretation.identify import UnknownInterpretation

    out = []
    for name, b in tree.iteritems(recursive=True):
        if len(b.branches) > 0:
            continue
        try:
            interp = b.interpretation
        except Exception:
            continue
        if isinstance(interp, UnknownInterpretation):
            continue
        out.append(name)
    return out


def plan_reads(
    files: Sequence[str],
    tree_name: str,
    branches: Sequence[str] | None = None,
    max_bytes: float = DEFAULT_MAX_BYTES,
    deadline: float | None = None,
    clock: Callable[[], float] = time.perf_counter,
    max_files: int | None = None,
) -> Plan:
    """Which files (and how many entries of the last) to read: files in order until the
    selected branches reach ``max_bytes`` compressed (or ``max_files`` are planned).  Files
    without the tree (or that cannot be opened) are skipped and named in ``skipped``.  Raises
    ``ValueError`` when a requested branch does not exist, or when no file can be read."""
    import uproot

    parts: list[FilePart] = []
    skipped: list[str] = []
    selected: tuple[str, ...] | None = tuple(branches) if branches else None
    total = 0.0
    for path in files:
        if total >= max_bytes or (deadline is not None and parts and clock() >= deadline) \
                or (max_files is not None and len(parts) >= max_files):
            break
        try:
            with uproot.open(path) as f:
                if tree_name not in f:
                    skipped.append(f"{path}: no tree {tree_name!r}")
                    continue
                tree = f[tree_name]
                if selected is None:
                    selected = tuple(leaf_branches(tree))
                missing = [b for b in selected if b not in tree]
                if missing:
                    shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
                    raise ValueError(f"no branch {shown} in tree {tree_name!r} of {path}")
                zipped = sum(int(tree[b].member("fZipBytes")) for b in selected)
                unzipped = sum(int(tree[b].member("fTotBytes")) for b in selected)
                n = int(tree.num_entries)
                bounds = common_boundaries(tree, selected) if selected else ()
                touch = BasketTouch.of(tree, selected) if selected else None
        except ValueError:
            raise
        except Exception as exc:
            from ..rootfile import one_line

            skipped.append(f"{path}: {one_line(exc)}")
            continue
        if n <= 0:
            continue
        entries = n
        if zipped > 0 and total + zipped > max_bytes:
            entries = max(1, min(n, int(n * (max_bytes - total) / zipped)))
        parts.append(FilePart(path, entries, n, zipped, unzipped, bounds, touch))
        total += zipped * entries / n
        if entries < n:  # the bound falls inside this file
            break
    if not parts:
        why = "; ".join(skipped[:3]) if skipped else "no entries"
        raise ValueError(f"no readable tree {tree_name!r} in the files ({why})")
    return Plan(tree_name, selected or (), whole_baskets(parts), tuple(skipped))


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
            chunks = tree.iterate(list(plan.branches), step_size=step, entry_stop=part.entries,
                                  library="ak") if reader is None else \
                uproot_chunks(tree, reader, plan.branches, part.entries, step)
            for arrays in chunks:
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
    return replace(loop, step_bytes=float(step_bytes)) if reader is None else \
        replace(loop, reader=reader.text)
