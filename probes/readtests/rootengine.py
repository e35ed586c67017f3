"""The event-loop and open-cost tests through ROOT itself (PyROOT), for ``--engine root``.

The loop runs in C++ (``rootengine.cxx``, beside this module, declared once with
``gInterpreter.Declare``): open the file, enable the selected branches, set the TTreeCache
(ROOT's default size, ``SetCacheSize(-1)``, or off, ``SetCacheSize(0)``), and call
``GetEntry(i)`` for every entry, checking a deadline every few entries.  Only the loop is
timed; opening is the open-cost test.  A ``TTreePerfStats`` is attached to two passes: the
first (pilot) pass with the TTreeCache on and the pass with it off; the repeated samples run
without it (its constructor alone costs about 5 ms per file, as it runs ``uname -a``), their
read calls and bytes taken from the file's own counters.

``TTreePerfStats`` (ROOT 6.40) counts the read calls and bytes of its file in ``FileReadEvent``
from its creation on, so the figures count the event loop alone (not the reads made while
opening the file and its tree); with the TTreeCache on, bytes read can exceed the branches'
compressed bytes, since the cache's sorted, merged reads also fetch the gaps between baskets.
Disk and unzip times are ROOT's own (summed over ``FileReadEvent`` and ``UnzipEvent``), CPU
and real time those of its stopwatch (started when the perf stats are attached; CPU time has
10 ms resolution).  Uncompressed bytes are what ``GetEntry``
returns (bytes of the entries' branch buffers).

``import ROOT`` is done lazily, with its alpha-stage warning silenced; ROOT's one-time set-up
(about 155 ms on the first ``TFile::Open``) is paid before anything is timed.  What a
program's ``GetEntry`` loop pays once per run (its first call, ROOT's first open of such a
file) is measured in a fresh process (:func:`fresh_setup_s`), since this one has opened the
files with ROOT before.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from importlib import resources
from typing import Any

from .pagecache import Eviction, evict
from .raw import cache_state, eviction_note
from .readers import ReaderSpec
from .results import (
    CacheState,
    Conditions,
    EventLoop,
    LoopPart,
    Measurement,
    OpenOverhead,
    RootPerfStats,
)
from .runner import Session, measurement

TEST = "event_loop"
OPEN_TEST = "open_cost"
DEFAULT_MAX_BYTES = 200_000_000
PILOT_FRACTION = 0.25
COLD_FRACTION = 0.5
#: Share of what is left after the cache-on cold samples that goes to the one cache-off pass.
CACHE_OFF_FRACTION = 0.3

#: The C++ helpers, beside this module (package data).
CXX_FILE = "rootengine.cxx"


def cpp_source() -> str:
    """The C++ of the event-loop and open-cost helpers."""
    return resources.files(__package__).joinpath(CXX_FILE).read_text(encoding="utf-8")

_ROOT: Any = None
_DECLARED: set[str] = set()


def import_root() -> Any:
    """``import ROOT`` (batch mode, its alpha-stage warning silenced) and declare the C++
    helpers once.  Raises ``ImportError`` when ROOT is not installed."""
    global _ROOT
    if _ROOT is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import ROOT

        ROOT.gROOT.SetBatch(True)
        _ROOT = ROOT
    return declare_once(_ROOT, cpp_source(), "the event-loop helpers")


def declare_once(root: Any, code: str, what: str) -> Any:
    """``root`` with the C++ ``code`` declared to its interpreter (once per process; ``what``
    names it in the ``ImportError`` raised when it does not compile)."""
    if code not in _DECLARED:
        if not root.gInterpreter.Declare(code):
            raise ImportError(f"ROOT could not compile {what}")
        _DECLARED.add(code)
    return root


def root_available() -> bool:
    try:
        import_root()
    except Exception:
        return False
    return True


@dataclass(frozen=True)
class RootEventLoop:
    """The ROOT engine's event loop (TTreeCache on, ROOT's default) and ROOT's perf-stats
    figures of one pass with the cache on (the pilot: cold where possible) and one with it off
    (after the pilot; cold where possible, and cut short where it would take too long)."""

    event_loop: EventLoop
    cache_on: RootPerfStats | None
    cache_off: RootPerfStats | None


@dataclass(frozen=True)
class _Part:
    path: str
    stop: int  # -1: every entry


@dataclass
class _Pass:
    entries: list[int]
    files: int = 0
    unzipped: int = 0
    read_calls: int = 0
    bytes_read: int = 0
    disk: float = 0.0
    unzip: float = 0.0
    cpu: float = 0.0
    real: float = 0.0
    wall: float = 0.0
    cache_bytes: int = 0
    branches: int = 0
    complete: bool = True

    @property
    def total_entries(self) -> int:
        return sum(self.entries)

    def stats(self, tree_cache: bool, cache: CacheState) -> RootPerfStats:
        n = self.total_entries
        return RootPerfStats(
            tree_cache=tree_cache,
            cache_bytes=self.cache_bytes,
            cache=cache,
            files=self.files,
            entries=n,
            read_calls=self.read_calls,
            bytes_read=self.bytes_read,
            mean_read_bytes=self.bytes_read / self.read_calls if self.read_calls else None,
            unzipped_bytes=self.unzipped,
            disk_time_s=self.disk,
            unzip_time_s=self.unzip,
            cpu_time_s=self.cpu,
            real_time_s=self.real,
            loop_s=self.wall,
            events_per_s=n / self.wall if self.wall > 0 else None,
        )


def _root_names(ROOT: Any, parts: Sequence[_Part], tree_name: str,
                branches: Sequence[str]) -> list[str]:
    """``branches`` (uproot's names) as ROOT names them, from the first file's tree
    (:func:`.pyloops.root_branch_names`); as given where it cannot be read."""
    from .pyloops import root_branch_names

    if not branches or not parts:
        return list(branches)
    f = ROOT.TFile.Open(parts[0].path, "READ")
    try:
        t = f.Get(tree_name) if f and not f.IsZombie() else None
        return root_branch_names(t, branches) if t else list(branches)
    finally:
        if f:
            f.Close()


#: The most a fresh process's set-up (:func:`fresh_setup_s`) may take, its ``import ROOT``
#: included (about 0.7 s on this project's machine), the least worth starting it, and the
#: share of the loop's test it may take at most.
FRESH_SETUP_MAX_S = 6.0
FRESH_SETUP_MIN_S = 1.0
FRESH_SETUP_SHARE = 0.3
#: The child of :func:`fresh_setup_s`: ``import ROOT`` and the loop's C++ declared (not timed:
#: a compiled program has them done), then three passes over the first entries of one file,
#: each timed: open, enable the branches, set the TTreeCache, ``GetEntry``, close.  The loop
#: is a program's, not ``read_pass`` (``rootengine.cxx``): its first call's code generation is
#: part of what is measured, and ``read_pass``'s larger code (deadline checks, perf stats) put
#: the one-time cost at 0.16-0.22 s on files where this loop found 0.07-0.08 s and the
#: program paid about 0.11 s.
_FRESH_CXX = r"""
#include <algorithm>
#include <string>
#include <vector>
#include "TFile.h"
#include "TTree.h"
namespace hep_advisor_fresh {
long long first_pass(const std::string &path, const std::string &tree,
                     const std::vector<std::string> &branches, long long entries,
                     long long cache) {
  TFile *f = TFile::Open(path.c_str(), "READ");
  if (!f || f->IsZombie()) { delete f; return -1; }
  TTree *t = nullptr;
  f->GetObject(tree.c_str(), t);
  if (!t) { delete f; return -2; }
  if (!branches.empty()) {
    t->SetBranchStatus("*", false);
    for (const auto &b : branches) t->SetBranchStatus(b.c_str(), true);
  }
  t->SetCacheSize(cache);
  long long stop = std::min(entries, t->GetEntries());
  for (long long i = 0; i < stop; ++i) t->GetEntry(i);
  f->Close();
  delete f;
  return stop;
}
}
"""
_FRESH_CHILD = """
import json, sys, time, warnings
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import ROOT
ROOT.gROOT.SetBatch(True)
ok = ROOT.gInterpreter.Declare(sys.argv[1])
path, tree, entries, cache = sys.argv[2], sys.argv[3], int(sys.argv[5]), int(sys.argv[6])
names = ROOT.std.vector["std::string"]()
for b in (sys.argv[4].split(",") if sys.argv[4] else []):
    names.push_back(b)
out = []
for _ in range(3):
    t0 = time.perf_counter()
    n = int(ROOT.hep_advisor_fresh.first_pass(path, tree, names, entries, cache)) if ok else -3
    out.append(time.perf_counter() - t0)
    if n < 0:
        print(json.dumps({"error": n}))
        sys.exit(0)
print(json.dumps({"seconds": out}))
"""


def fresh_setup_s(path: str, tree_name: str, branches: Sequence[str], entries: int,
                  cache_bytes: int, timeout_s: float) -> float | None:
    """What a ``GetEntry`` program pays once per run, measured in a fresh process: its first
    pass over ``entries`` entries of ``path`` (the loop's code generated at its first call,
    ROOT's first ``TFile::Open`` of such a file: its classes' dictionaries and streamers) less
    the median of the two passes after it, ROOT imported and the loop declared beforehand (as
    a compiled program has them).  On this project's machine, a file of 173 uproot-written
    branches: a first pass of 115 ms where a later one took 7 ms; the calibration's own
    process, which had opened files with ROOT before, found 46 ms.  It reads the first
    entries' pages, cached by the passes before it.  ``None`` where ``timeout_s`` is below
    ``FRESH_SETUP_MIN_S``, a branch name holds a comma, or the child fails or outlasts
    ``timeout_s`` (the caller keeps its own figure)."""
    if timeout_s < FRESH_SETUP_MIN_S or any("," in b for b in branches):
        return None
    argv = [sys.executable, "-c", _FRESH_CHILD, _FRESH_CXX, path, tree_name,
            ",".join(branches), str(int(entries)), str(int(cache_bytes))]
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s,
                           check=False)
        lines = r.stdout.strip().splitlines()
        got = json.loads(lines[-1]) if lines else {}
    except (subprocess.TimeoutExpired, OSError, ValueError):
        return None
    seconds = got.get("seconds") if isinstance(got, dict) else None
    if not isinstance(seconds, list) or len(seconds) < 3:
        return None
    return max(float(seconds[0]) - statistics.median(float(x) for x in seconds[1:]), 0.0)


def _run_pass(
    parts: Sequence[_Part], tree_name: str, branches: Sequence[str], cache_bytes: int,
    max_seconds: float | None = None, check: Callable[[], None] | None = None,
    perf: bool = False,
) -> _Pass:
    ROOT = import_root()
    names = ROOT.std.vector["std::string"]()
    for b in branches:
        names.push_back(b)
    result = _Pass(entries=[])
    start = time.perf_counter()
    for part in parts:
        if check is not None:
            check()
        # the cap is on real time (opening files included), the figures on the loops alone
        left = 1e30 if max_seconds is None else max_seconds - (time.perf_counter() - start)
        if result.files and left <= 0:
            result.complete = False
            break
        out = [float(x) for x in ROOT.hep_advisor_root.read_pass(
            part.path, tree_name, names, part.stop, cache_bytes, max(left, 0.0), perf)]
        status = int(out[0])
        if status == 1:
            raise ValueError(f"ROOT cannot open {part.path}")
        if status == 2:
            raise ValueError(f"no tree {tree_name!r} in {part.path}")
        if status == 3:
            raise ValueError(f"no branch {branches[int(out[1])]} in tree {tree_name!r} of "
                             f"{part.path}")
        done, tree_entries = int(out[1]), int(out[11])
        stop = tree_entries if part.stop < 0 else min(part.stop, tree_entries)
        result.entries.append(done)
        result.files += 1
        result.unzipped += int(out[2])
        result.read_calls += int(out[3])
        result.bytes_read += int(out[4])
        result.disk += out[5]
        result.unzip += out[6]
        result.cpu += out[7]
        result.real += out[8]
        result.wall += out[9]
        result.cache_bytes = max(result.cache_bytes, int(out[10]))
        result.branches = int(out[12])
        if done < stop:
            result.complete = False
            break
    return result


#: A file (and the entries to read of it; -1: all) for :func:`run_pass`.
RootPart = _Part
run_pass = _run_pass


def root_names(parts: Sequence[_Part], tree_name: str, branches: Sequence[str]) -> list[str]:
    """``branches`` (uproot's names) as ROOT names them in the first part's tree."""
    return _root_names(import_root(), parts, tree_name, branches)


def _plan(files: Sequence[str], max_bytes: float) -> list[_Part]:
    """Files in order until their sizes reach ``max_bytes``; every entry of each (the time
    cap of the pilot pass bounds the rest)."""
    parts: list[_Part] = []
    total = 0
    for path in files:
        if total >= max_bytes:
            break
        try:
            size = os.stat(path).st_size
        except OSError:
            continue
        parts.append(_Part(path, -1))
        total += size
    return parts


def measure_root_event_loop(
    session: Session,
    files: Sequence[str],
    tree_name: str,
    branches: Sequence[str] | None = None,
    share_s: float | None = None,
    cold: bool = True,
    max_bytes: float = DEFAULT_MAX_BYTES,
    reader: ReaderSpec | None = None,
) -> RootEventLoop:
    """The event loop through ROOT: ``GetEntry`` over every entry of ``tree_name`` with the
    selected branches enabled (default: all), TTreeCache on (ROOT's default size) for the
    event-loop figures, cold and warm, and one pass with it off for the perf-stats comparison.

    A pilot pass (cold where ``cold``) fixes how many entries a sample reads so the samples
    fit ``share_s`` (default: the session's share for the event loop).  ``reader``: the
    program's ``GetEntry`` reader (:mod:`.readers`: ``root.getentry`` times the loop without
    TTreeCache, ``root.ttreecache`` with its size), named in the result.  Raises ``ImportError``
    without ROOT, ``ValueError`` for a missing tree or branch, and ``Cancelled``.
    """
    import_root()
    cache = -1 if reader is None else reader.root_cache_bytes  # the timed passes' TTreeCache
    share = session.begin(TEST) if share_s is None else float(share_s)
    clock = session.clock
    t0 = clock()
    session.check()
    parts = _plan(files, max_bytes)
    if not parts:
        raise ValueError("no readable file for the ROOT event loop")
    # uproot's branch names as ROOT knows them, once (from the first file)
    selected = tuple(_root_names(import_root(), parts, tree_name, branches or ()))

    # ROOT's one-time set-up (first TFile::Open, TTreeCache classes, JIT of the helper) is
    # paid on a few entries of the first file, before anything is timed; for the program's
    # reader, that pass less the same pass again (both cold) is what a program pays once on
    # its first file (a 600-branch tree: 70 ms, where the loop then took 42 ms a pass)
    first = [_Part(parts[0].path, 16)]
    if reader is not None:
        evict(parts[0].path)
    s0 = time.perf_counter()
    _run_pass(first, tree_name, selected, -1, check=session.check)
    setup_s: float | None = None
    if reader is not None:
        first_s = time.perf_counter() - s0
        # this process opened the file with ROOT before the pass above (the branch names),
        # so a second pass here misses ROOT's first open, which a fresh program pays: a
        # fresh process measures it, and the second pass is the fallback where it cannot
        setup_s = fresh_setup_s(parts[0].path, tree_name, selected, first[0].stop, cache,
                                timeout_s=min(FRESH_SETUP_MAX_S, FRESH_SETUP_SHARE
                                              * max(0.0, share - (clock() - t0))))
        if setup_s is None:
            evict(parts[0].path)
            s1 = time.perf_counter()
            _run_pass(first, tree_name, selected, -1, check=session.check)
            setup_s = max(first_s - (time.perf_counter() - s1), 0.0)

    evictions: list[Eviction] = []

    def evict_parts(ps: Sequence[_Part]) -> list[Eviction]:
        ev = [evict(p.path) for p in ps]
        evictions.extend(ev)
        return ev

    # pilot (cold where possible, TTreeCache on, perf stats attached): sizes the samples
    if cold:
        evict_parts(parts)
    p0 = clock()
    pilot = _run_pass(parts, tree_name, selected, cache,
                      max_seconds=PILOT_FRACTION * max(0.0, share - (p0 - t0)),
                      check=session.check, perf=True)
    pass_s = clock() - p0  # one pass, opening the files included
    parts = [_Part(p.path, n) for p, n in zip(parts, pilot.entries, strict=False) if n > 0]
    nbranches = pilot.branches
    session.bytes_read += pilot.bytes_read
    on_state: CacheState = cache_state(evictions) if cold else "warm"

    # TTreeCache off: one pass with perf stats, cold where possible, capped in time
    session.check()
    off_budget = CACHE_OFF_FRACTION * max(0.0, share - (clock() - t0) - pass_s)
    off_ev = evict_parts(parts) if cold else []
    off = _run_pass(parts, tree_name, selected, 0, max_seconds=max(off_budget, 1e-3),
                    check=session.check, perf=True)
    session.bytes_read += off.bytes_read
    off_state: CacheState = cache_state(off_ev) if cold else "warm"  # the pilot read it

    last: dict[str, _Pass] = {}

    def sample(evict_first: bool, key: str) -> float:
        if evict_first:
            evict_parts(parts)
        r = _run_pass(parts, tree_name, selected, cache, check=session.check)
        last[key] = r
        session.bytes_read += r.bytes_read
        return r.total_entries / max(r.wall, 1e-9)

    note = f"{pilot.total_entries} entries of {len(parts)} file(s); " + (
        "TTreeCache on (ROOT's default size)" if reader is None else reader.describe()) \
        + "; file opening not timed"
    base = Conditions(cache="unknown", workers=1, bytes_per_sample=None, note=note)
    what = f"ROOT GetEntry loop, {nbranches} branches"
    cold_m: Measurement | None = None
    if cold:
        samples = [pilot.total_entries / max(pilot.wall, 1e-9)]
        last["cold"] = pilot
        # keep one pass for the warm samples
        cold_share = COLD_FRACTION * max(0.0, share - (clock() - t0) - pass_s)
        if cold_share > pass_s:
            samples += session.repeat(lambda: sample(True, "cold"), cold_share, TEST,
                                      f"{what}, cold", min_samples=2)
        state = cache_state(evictions)
        why = eviction_note(evictions)
        cold_m = measurement(samples, "events/s", replace(
            base, cache=state, bytes_per_sample=last["cold"].bytes_read,
            note=f"{note}; {why}" if why else note))

    # warm: re-read at once (the last cold sample read every part)
    if cold and last["cold"] is pilot and not off.complete:
        sample(False, "warm")  # the cache-off pass left part of the files evicted
    warm_share = max(0.0, share - (clock() - t0))
    warm_samples = session.repeat(lambda: sample(False, "warm"), warm_share, TEST,
                                  f"{what}, warm")
    warm_m = measurement(warm_samples, "events/s", replace(
        base, cache="warm", bytes_per_sample=last["warm"].bytes_read))

    use_cold = cold_m is not None and cold_m.conditions.cache == "cold"
    top = cold_m if use_cold and cold_m is not None else warm_m
    ref = last["cold"] if use_cold else last["warm"]
    rate = top.median
    n = ref.total_entries
    per_c = ref.bytes_read / n if n else 0.0
    per_u = ref.unzipped / n if n else 0.0
    on_stats = pilot.stats(cache != 0, on_state)
    session.report(TEST, 1.0, "ROOT event loop done",
                   figure=f"{rate:.0f} events/s" if rate is not None else None)
    return RootEventLoop(
        event_loop=replace(EventLoop.from_rate("root", nbranches, rate, per_c, per_u, cold_m,
                                               warm_m),
                           reader=reader.text if reader is not None else None,
                           setup_s=setup_s,
                           parts=tuple(LoopPart(p.path, p.stop) for p in parts if p.stop >= 0)),
        cache_on=on_stats,
        cache_off=off.stats(False, off_state),
    )


def _tree_vector(tree_names: str | Sequence[str] | None) -> Any:
    ROOT = import_root()
    names = ROOT.std.vector["std::string"]()
    for name in [tree_names] if isinstance(tree_names, str) else (tree_names or ()):
        names.push_back(name)
    return names


def measure_root_open_cost(
    files: Sequence[str],
    tree_names: str | Sequence[str] | None = None,
    max_files: int = 50,
    deadline_s: float | None = None,
    check: Callable[[], None] | None = None,
    evictions: list[Eviction] | None = None,
) -> tuple[list[float], list[float]]:
    """Seconds to ``TFile::Open`` a file and read its trees' metadata (``tree_names``, or the
    first TTree), cold and warm: each of up to ``max_files`` files is evicted and opened
    (cold), then opened again at once (warm); one pair per file.  The evictions are appended
    to ``evictions`` where given (a cold sample is cold only where its eviction was).  ROOT's
    one-time set-up is paid on the first file before any timing; ``deadline_s`` (seconds from
    the call) stops early, after at least three files.  Raises ``ImportError`` without ROOT and
    ``ValueError`` when a file cannot be opened or lacks a tree."""
    ROOT = import_root()
    names = _tree_vector(tree_names)
    chosen = list(files)[:max_files]
    cold: list[float] = []
    warm: list[float] = []
    if not chosen:
        return cold, warm
    ROOT.hep_advisor_root.open_cost(chosen[0], names)  # one-time set-up, not timed
    start = time.perf_counter()
    for path in chosen:
        if check is not None:
            check()
        if deadline_s is not None and time.perf_counter() - start >= deadline_s \
                and len(warm) >= 3:
            break
        ev = evict(path)
        c = float(ROOT.hep_advisor_root.open_cost(path, names))
        w = float(ROOT.hep_advisor_root.open_cost(path, names))
        if c < 0 or w < 0:
            what = f"tree(s) {', '.join(str(n) for n in names)}" if len(names) else "a TTree"
            raise ValueError(f"ROOT cannot open {path} with {what}")
        if evictions is not None:
            evictions.append(ev)
        cold.append(c)
        warm.append(w)
    return cold, warm


def reader_open_overhead(files: Sequence[str], tree_name: str, seconds: float,
                         check: Callable[[], None] | None = None) -> OpenOverhead | None:
    """A ROOT reader's own open per file (:func:`measure_root_open_cost` on up to 8 files,
    about ``seconds``), for the replays of that reader where the open test measured uproot's;
    ``None`` where no file could be timed."""
    evictions: list[Eviction] = []
    try:
        cold, warm = measure_root_open_cost(files, tree_name, max_files=8, deadline_s=seconds,
                                            check=check, evictions=evictions)
    except ValueError:
        return None
    if not warm:
        return None
    return _open_overhead(cold, warm, evictions, "the reader's own; ")


def _open_overhead(cold: list[float], warm: list[float], evictions: list[Eviction],
                   what: str = "") -> OpenOverhead:
    """ROOT's timed opens (:func:`measure_root_open_cost`) as an :class:`OpenOverhead`, the
    cold samples' cache state from their evictions."""
    note = f"ROOT TFile::Open + reading the tree metadata; {what}{len(warm)} file(s)"
    why = eviction_note(evictions)
    cold_m = measurement(cold, "s", Conditions(cache=cache_state(evictions),
                                               note=f"{note}; {why}" if why else note))
    warm_m = measurement(warm, "s", Conditions(cache="warm", note=note))
    return OpenOverhead(cold=cold_m.median, warm=warm_m.median, cold_measurement=cold_m,
                        warm_measurement=warm_m)


def root_open_overhead(session: Session, files: Sequence[str],
                       tree_names: Sequence[str] | None, share_s: float | None = None
                       ) -> OpenOverhead:
    """The open-cost test through ROOT, as an :class:`OpenOverhead` (the same shape as the
    uproot test's): one cold and one warm open per file until ``share_s`` is spent."""
    share = session.begin(OPEN_TEST) if share_s is None else float(share_s)
    session.check()
    session.report(OPEN_TEST, 0.0, "opening files with ROOT")
    evictions: list[Eviction] = []
    cold, warm = measure_root_open_cost(files, tree_names, max_files=len(files),
                                        deadline_s=share, check=session.check,
                                        evictions=evictions)
    opened = _open_overhead(cold, warm, evictions)
    session.report(OPEN_TEST, 1.0, "open cost (ROOT)",
                   f"{1e3 * (opened.cold or 0):.2f} ms cold, "
                   f"{1e3 * (opened.warm or 0):.2f} ms warm")
    return opened
