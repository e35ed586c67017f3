"""Event loops that run through ROOT from Python, as a program does: ``RDataFrame``
(``--reader rdataframe``) and a PyROOT ``GetEntry`` loop (``--reader
root.getentry:loop=python``, ``root.ttreecache:...,loop=python``).

The compiled ``GetEntry`` loop of :mod:`.rootengine` leaves out what a Python loop pays per
call; these passes time what the program's own code would: an ``RDataFrame`` from its
construction to its results (the actions' just-in-time compilation and the file's opening
included), a PyROOT loop from each ``TFile::Open`` to its ``Close`` (the opening included, as
the program pays it: ROOT opens a file in about a millisecond where uproot takes tens, so
uproot's open cost stands for neither).  Cold samples evict the files first; the samples
follow :func:`~.eventloop.cold_then_warm`.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .readers import ReaderSpec

#: Entries between two checks of the deadline and of cancellation in a PyROOT loop.
CHECK_EVERY = 256
#: What an ``RDataFrame`` loop pays once before any entry, and cannot stop in: ROOT's
#: libraries loaded and its actions compiled (2.2-3.1 s measured here, whatever the number
#: of columns of one type: 1 to 500 ``Sum`` took 2.20-2.25 s; 3.4-4.2 s in a slower stretch
#: of the shared machine, when 3.0 s here let a 10 s calibration overrun by 1.1-1.8 s).  A
#: planning figure, shown nowhere: the loop is not started where less than this is left of
#: the budget.
RDF_SETUP_S = 4.5
#: The share's seconds left after the set-up pass for a second one (which tells the one-time
#: part from what every pass pays; 0.2-0.4 s measured here, cold): a planning figure.
RDF_AGAIN_S = 1.5


def import_root_quietly() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import ROOT

    ROOT.gROOT.SetBatch(True)
    return ROOT


@dataclass(frozen=True)
class LoopPass:
    entries: tuple[int, ...]
    seconds: float
    complete: bool = True

    @property
    def total_entries(self) -> int:
        return sum(self.entries)


Parts = Sequence[tuple[str, int]]  # (path, entries to read; -1: all)


def _fail(what: str, path: str, exc: Exception) -> ValueError:
    from ..rootfile import one_line

    return ValueError(f"{what} cannot read {path}: {one_line(exc)}")


def rdataframe_pass(parts: Parts, tree_name: str, branches: Sequence[str],
                    check: Callable[[], None] | None = None,
                    max_seconds: float | None = None) -> LoopPass:
    """The parts read with one ``RDataFrame`` over their files (one thread, as a program
    builds one over its dataset): a ``Histo1D`` of every branch, all booked before the one event
    loop runs; a part of a file is read up to the dataset's global range (the last part
    only, as planned: :func:`_frame`).
    ``max_seconds`` is not checked inside the loop: the plan bounds it."""
    ROOT = import_root_quietly()
    if check is not None:
        check()
    paths = [path for path, _ in parts]
    try:
        stop = None
        if parts and parts[-1][1] >= 0:  # the plan stops inside the last file
            # counting the entries before is not the program's: not timed
            stop = sum(_entries(ROOT, path, tree_name) for path, _ in parts[:-1]) \
                + int(parts[-1][1])
        t0 = time.perf_counter()
        df = _frame(ROOT, tree_name, paths, stop)
        columns = [str(c) for c in df.GetColumnNames()]
        names = _columns(branches, columns) or columns
        count = df.Count()
        # a histogram per branch, as an analysis fills them (its compilation is what a
        # program's RDataFrame pays; a Sum compiled 0.25 s faster for 10 branches here)
        sums = [df.Histo1D(b) for b in names]
        n = int(count.GetValue())
        for s in sums:
            s.GetValue()
    except Exception as exc:
        raise _fail("RDataFrame", parts[0][0] if len(parts) == 1 else
                    f"{len(parts)} files", exc) from None
    seconds = time.perf_counter() - t0
    # the entries per part: whole files, and the planned part of the last
    done = [stop if stop >= 0 else _entries(ROOT, path, tree_name) for path, stop in parts]
    if sum(done) != n:
        done = [n]  # (a file changed under the loop: the total is what was read)
    return LoopPass(tuple(done), seconds)


def _frame(root: Any, tree_name: str, paths: Sequence[str], stop: int | None) -> Any:
    """An ``RDataFrame`` over ``paths``, its first ``stop`` entries only where given.  The
    stop is the dataset's global range (``RDatasetSpec.WithGlobalRange``), not ``Range``:
    ROOT compiles an action for its place in the graph, and a ``Range`` node would make the
    loop's graph another than the program's, compiled again (measured here: 0.5-1 s more,
    paid in the first pass of the other shape).  ``Range`` where ROOT lacks the spec."""
    vec = root.std.vector["std::string"]()
    for path in paths:
        vec.push_back(path)
    if stop is None:
        return root.RDataFrame(tree_name, vec)
    try:
        exp = root.RDF.Experimental
        spec = exp.RDatasetSpec()
        spec.AddSample(exp.RSample("sample", tree_name, vec))
        spec.WithGlobalRange((0, int(stop)))
        return root.RDataFrame(spec)
    except AttributeError:  # an older ROOT
        return root.RDataFrame(tree_name, vec).Range(int(stop))


def _resolve(branches: Sequence[str], exists: Callable[[str], Any]) -> list[str]:
    """Each of uproot's branch names as ROOT has it (the first form ``exists`` knows: as
    given, ``/`` as ``.``, the last part), else as given."""
    out = []
    for b in branches:
        forms = (b, b.replace("/", "."), b.rsplit("/", 1)[-1])
        out.append(next((name for name in forms if exists(name)), b))
    return out


def root_branch_names(tree: Any, branches: Sequence[str]) -> list[str]:
    """ROOT's name for each branch as uproot names it: a split object's member
    ``evt/evt_f0`` is ``evt.evt_f0`` or ``evt_f0`` to ``TTree::GetBranch`` and
    ``SetBranchStatus`` (which know no ``/``: a loop enabling ``evt/evt_f0`` reads nothing);
    a name no branch matches is kept as given."""
    return _resolve(branches, lambda name: bool(tree.GetBranch(name)))


def _columns(branches: Sequence[str], columns: Sequence[str]) -> list[str]:
    """RDataFrame's column for each branch as uproot names it (``evt/evt_f0`` is the column
    ``evt.evt_f0``, or ``evt_f0`` where that is the column); names no column matches are
    kept as given (RDataFrame then says which it lacks)."""
    return _resolve(branches, set(columns).__contains__)


def _leaf_list_branches(root: Any, path: str, tree_name: str) -> set[str]:
    """The top-level branches of the tree whose one leaf is named otherwise (a leaf list,
    ``Photons_E[NPhoton]/F`` in branch ``Photon_E``): RDataFrame lists them as columns but its
    reader cannot read them (ROOT prints an error and the event loop fails), so a loop over
    every column leaves them out, as a program would."""
    f = root.TFile.Open(path, "READ")
    try:
        t = f.Get(tree_name) if f and not f.IsZombie() else None
        if not t:
            return set()
        out = set()
        for b in t.GetListOfBranches():
            leaves = list(b.GetListOfLeaves())
            if len(leaves) == 1 and str(leaves[0].GetName()) != str(b.GetName()):
                out.add(str(b.GetName()))
        return out
    finally:
        if f:
            f.Close()


def _entries(root: Any, path: str, tree_name: str) -> int:
    f = root.TFile.Open(path, "READ")
    try:
        return int(f.Get(tree_name).GetEntries())
    finally:
        f.Close()


def pyroot_pass(parts: Parts, tree_name: str, branches: Sequence[str], cache_bytes: int,
                check: Callable[[], None] | None = None,
                max_seconds: float | None = None) -> LoopPass:
    """Each part read with ``for i in range(n): tree.GetEntry(i)`` in Python, the selected
    branches enabled (``SetBranchStatus``; all where none), ``SetCacheSize(cache_bytes)``
    (0: no TTreeCache, -1: ROOT's automatic size).  Each file is timed from its
    ``TFile::Open`` to its ``Close``, as a program pays it."""
    ROOT = import_root_quietly()
    done: list[int] = []
    seconds = 0.0
    complete = True
    for path, stop in parts:
        if check is not None:
            check()
        if max_seconds is not None and done and seconds >= max_seconds:
            return LoopPass(tuple(done), seconds, False)
        t0 = time.perf_counter()
        f = ROOT.TFile.Open(path, "READ")
        if not f or f.IsZombie():
            raise ValueError(f"ROOT cannot open {path}")
        try:
            t = f.Get(tree_name)
            if not t:
                raise ValueError(f"no tree {tree_name!r} in {path}")
            if branches:
                t.SetBranchStatus("*", False)
                for b in root_branch_names(t, branches):
                    t.SetBranchStatus(b, True)
            t.SetCacheSize(cache_bytes)
            total = int(t.GetEntries())
            n = total if stop < 0 else min(stop, total)
            get = t.GetEntry
            i = 0
            while i < n:
                for j in range(i, min(i + CHECK_EVERY, n)):
                    get(j)
                i = min(i + CHECK_EVERY, n)
                if max_seconds is not None and i < n and \
                        seconds + time.perf_counter() - t0 >= max_seconds:
                    complete = False
                    break
            done.append(i)
        finally:
            f.Close()
            seconds += time.perf_counter() - t0
        if not complete:
            break
    return LoopPass(tuple(done), seconds, complete)


def python_root_event_loop(session: Any, files: Sequence[str], tree_name: str,
                           branches: Sequence[str] | None, share_s: float, spec: ReaderSpec,
                           max_bytes: float = 200e6) -> Any:
    """The event-loop test with ``spec`` (``rdataframe``, or a ``GetEntry`` reader with
    ``loop=python``): a set-up pass on a few entries, a cold pilot that sizes the samples,
    then cold and warm samples (:func:`~.eventloop.cold_then_warm`).  An ``RDataFrame`` pass
    cannot be stopped: its plan is held to ``STEP_BYTES_PER_S`` of the share, as uproot's
    steps are."""
    from .eventloop import PILOT_FRACTION, STEP_BYTES_PER_S, cold_then_warm
    from .pagecache import Eviction, evict
    from .readplan import plan_reads
    from .results import Conditions, EventLoop, LoopPart

    if spec.kind == "rdataframe":  # a pass it cannot stop: read no more than the share allows
        max_bytes = min(max_bytes, max(1e6, STEP_BYTES_PER_S * share_s))

    def run(ps: Parts, limit: float | None = None) -> LoopPass:
        if spec.kind == "rdataframe":
            return rdataframe_pass(ps, tree_name, plan.branches, session.check, limit)
        return pyroot_pass(ps, tree_name, plan.branches, spec.root_cache_bytes,
                           session.check, limit)

    clock = session.clock
    t0 = clock()
    session.check()
    plan = plan_reads(files, tree_name, branches, max_bytes, deadline=t0 + 0.1 * share_s,
                      clock=clock)
    parts = [(p.path, p.entries if p.entries < p.tree_entries else -1) for p in plan.parts]
    if spec.kind == "rdataframe":  # its set-up cannot be stopped: not begun past the budget
        session.need(RDF_SETUP_S, "RDataFrame's one-time set-up (ROOT's libraries, its "
                     "actions compiled)", deadline=session.start + session.budget_s)
    ROOT = import_root_quietly()
    ROOT.TFile, ROOT.TTree, ROOT.RDataFrame  # noqa: B018 (loading ROOT's libraries: not timed)
    if spec.kind == "rdataframe" and not branches:
        # every branch uproot reads, less those RDataFrame's reader cannot (a program over
        # this tree could not read them either)
        skip = _leaf_list_branches(ROOT, parts[0][0], tree_name)
        keep = [b for b in plan.branches if b not in skip]
        if keep and len(keep) < len(plan.branches):
            plan = plan_reads(files, tree_name, keep, max_bytes, deadline=clock() + 0.05 * share_s,
                              clock=clock)
            parts = [(p.path, p.entries if p.entries < p.tree_entries else -1)
                     for p in plan.parts]
    first = [(parts[0][0], min(16, plan.parts[0].tree_entries))]
    s0 = time.perf_counter()
    # the one-time set-up: RDataFrame compiles its actions here (a few entries, no more than
    # the file holds: ROOT warns of a range past its end)
    run(first)
    # the one-off set-up a program pays on its first file (ROOT's classes for the tree; an
    # RDataFrame's compilation): this pass less the same pass again
    setup_s = time.perf_counter() - s0
    evictions: list[Eviction] = []

    def evict_all() -> None:
        evictions.extend(evict(p) for p, _ in parts)

    evict_all()
    if session.left(t0 + share_s) >= RDF_AGAIN_S:
        # the same pass again, its pages evicted as before: the first one's excess over it is
        # paid once per program (ROOT's interpreter and the first compilation); the rest, its
        # cold reads, its open and each pass's own work, the timed passes and the replay
        # count.  Where the share has no room for it, the first pass stands (an overcount of
        # about 0.2-0.4 s here)
        s1 = time.perf_counter()
        run(first)
        setup_s = max(setup_s - (time.perf_counter() - s1), 0.0)
        evict_all()
    from .procs import report_partial

    report_partial("setup_s", setup_s)  # kept should the loop be ended before its rates
    p0 = clock()
    pilot = run(parts, PILOT_FRACTION * max(0.0, share_s - (p0 - t0)))
    pass_s = clock() - p0
    parts = [(p, n) for (p, _), n in zip(parts, pilot.entries, strict=False) if n > 0]
    frac = [n / max(fp.tree_entries, 1) for fp, n in zip(plan.parts, pilot.entries,
                                                        strict=False)]
    zipped = sum(fp.compressed_bytes * f for fp, f in zip(plan.parts, frac, strict=False))
    unzipped = sum(fp.uncompressed_bytes * f for fp, f in zip(plan.parts, frac, strict=False))
    session.bytes_read += int(zipped)

    def sample(evict_first: bool) -> float:
        if evict_first:
            evict_all()
        r = run(parts)
        session.bytes_read += int(zipped)
        return r.total_entries / max(r.seconds, 1e-9)

    n = pilot.total_entries
    how = ("RDataFrame, one thread, a Histo1D per branch; opening and JIT timed (as in a "
           "program)"
           if spec.kind == "rdataframe" else f"{spec.describe()}; opening timed (as in a "
           f"program)")
    base = Conditions(cache="unknown", workers=1, bytes_per_sample=int(zipped),
                      note=f"{n} entries of {len(parts)} file(s); {how}")
    what = f"{spec.describe()}, {len(plan.branches)} branches"
    cold_m, warm_m, top = cold_then_warm(session, "event_loop", what, base, sample,
                                         n / max(pilot.seconds, 1e-9), pass_s, share_s, t0,
                                         evictions)
    rate = top.median
    session.report("event_loop", 1.0, f"{spec.kind} event loop done",
                   figure=f"{rate:.0f} events/s" if rate is not None else None)
    loop = EventLoop.from_rate("root", len(plan.branches), rate, zipped / n if n else 0.0,
                               unzipped / n if n else 0.0, cold_m, warm_m)
    return replace(loop, setup_s=setup_s, parts=tuple(LoopPart(p, n) for p, n in parts))


__all__ = ["LoopPass", "import_root_quietly", "pyroot_pass", "python_root_event_loop",
           "rdataframe_pass", "root_branch_names"]
