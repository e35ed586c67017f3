"""Two event-loop figures the rate model needs beyond one pass: the fixed cost of one read
call, and how the event loop scales on the cores.

*Per-call cost.*  Reading a range of entries costs a fixed time per call (for uproot, per
branch: finding the baskets, setting up and building the arrays) plus a time per MB.  A
file with several baskets per branch is read twice, warm, with uproot's array cache off: the
entries of its first basket range, then all of it; the two times give the cost per call and
the rate per MB (which includes the fixed cost of the baskets read beyond the first range:
their number per MB is recorded, ``CallCost.baskets_per_mb``, so that the model can take that
cost out; see ``readtests.baskets``).  Before those pairs, the file is opened afresh and its
first range read (once, twice where the share allows): a file's first read call costs
more than a later one (uproot finds each branch's baskets the first time), a cost per file
the model counts with the opening (``CallCost.first_call_s``).  A file with one basket per
branch (small files) cannot be split without decompressing its baskets again, so then a few
of the files are merged into a temporary file (one basket per input, as a plain merge leaves
them) in the system's temporary directory, measured, and removed: the data itself is never
written.

*Parallel event loop.*  The same files read warm by 1 and by k worker processes (k = the
logical cores, at least 2, at most 4), pull-based over the files: how the analysis' CPU work
scales here (shared caches, memory bandwidth, other users).
"""

from __future__ import annotations

import math
import os
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np

from .readplan import Plan, common_boundaries, plan_reads
from .results import CallCost, Conditions, ParallelPoint
from .runner import OutOfTime, Session, measurement

#: The largest files searched for one with several baskets per branch.
CANDIDATES = 8
#: Files merged into the temporary file when the data's files hold one basket per branch.
MERGE_INPUTS = 2
#: A merge of the inputs takes about this many times opening them (reading every branch).
MERGE_OPENS = 4
#: MB of arrays (uncompressed) per second uproot's writer compresses with LZMA, about: two
#: NanoAOD-like files of 592 branches (LZMA-9) took 23 s to merge here, over a 28 s budget
#: (a budget estimate, not a figure the advice shows)
LZMA_WRITE_MB_PER_S = 1.0
#: Samples of a file's first read call the per-call test takes at most (each opens the file;
#: one always, the others where they fit its share).
FIRST_CALLS = 2
#: The relative scatter of one warm read's time here (one sigma): what the split calls'
#: difference of three reads is resolved against.  This machine's repeated CPU kernels and
#: warm event loops scattered by 1-2% (the calibration's run-to-run spread); on a 1.5 GB
#: LZMA file, four split calls of 2.7 s reads gave -90 to +6 ms (42 ms one sigma, 1.5%).
SPLIT_NOISE = 0.02
#: The split calls' median counts where above this many sigmas of its noise, else 0: one
#: split of those LZMA reads said 94 ms, where 50 branches' calls cost about 3 ms.
SPLIT_RESOLVED = 2.0
#: Compressed bytes the per-call test reads in its long read at most.
SPLIT_BYTES = 16e6
#: ... and at most this many per second of the share left when the reads start.
SPLIT_BYTES_PER_S = 4e6
#: Compressed bytes the parallel test reads per pass at most (within its share, about a
#: quarter of it per single-worker run: long enough that the processes' start, ``START_S``,
#: and the first file's set-up are a small part of the run; 8 MB runs of 0.1 s measured the
#: start more than the efficiency).
PARALLEL_BYTES = 64e6
#: Seconds to start a parallel run's processes and their imports, about.
START_S = 0.3
#: The k workers' run takes at most this share of the single worker's (an efficiency of 1/3
#: or more at k = 2): what the parallel test plans for before starting it.
K_RUN_SHARE = 0.75
#: The run beyond the logical cores (twice the k workers, where k is every logical core) takes
#: at most this share of the k workers' run (its processes start beside each other, and twice
#: the workers at 0.7 of the k workers' rate, the low end of what this project measured).
OVER_RUN_SHARE = 1.5
#: what a deadline moved out for a run adds, so that the run's own check just after passes
ROOM_MARGIN_S = 0.05
#: Bytes (uncompressed) one read call of the event loop covers (eventloop's default step).
STEP_BYTES = 50e6


def calls_per_file(uncompressed_bytes_per_file: float, step_bytes: float = STEP_BYTES) -> float:
    """Read calls the event loop makes per file (one per ``step_bytes`` of arrays)."""
    return float(max(1, math.ceil(uncompressed_bytes_per_file / step_bytes)))


def _boundaries(tree: Any, branches: Sequence[str]) -> list[int]:
    """Entries (sorted, the end included) where every selected branch starts a new basket."""
    return list(common_boundaries(tree, branches))


def _baskets_before(tree: Any, branches: Sequence[str], stop: int) -> int:
    """Baskets of ``branches`` that reading entries [0, stop) fetches."""
    n = 0
    for b in branches:
        starts = np.asarray(tree[b].entry_offsets)[:-1]
        n += int(np.searchsorted(starts, stop, side="left"))
    return n


class _Reads(NamedTuple):
    """What :func:`_timed_reads` measured."""

    costs: list[float]  # the intercepts (seconds per call) of the two ranges' times
    rate: float  # compressed MB/s of the part beyond the first range (nan: none fitted)
    mb_first: float  # compressed MB of the first range
    density: float | None  # baskets per MB of the part beyond it
    firsts: list[float]  # a file's first call beyond a later one, seconds
    later_s: float  # the first range's call on the open file (the median)
    splits: list[float]  # two calls over the baskets of one, less that one (seconds)
    split_sd: float  # their median's noise, about (seconds, one sigma)


def _timed_reads(path: str, tree_name: str, branches: Sequence[str], first: int,
                 session: Session, deadline: float, open_s: float = 0.0) -> _Reads:
    """Per-call seconds (samples), the per-MB rate, the compressed MB of the first range, the
    baskets per MB of the part read beyond it (what the per-MB rate pays per basket), what a
    file's first read call costs beyond a later one (samples: the file opened again and its
    first range read, once and again where it fits the share, each less the median of that
    range's calls on the open file; ``open_s``: opening it, about), that median, and the
    split calls: the first range and the rest read in two calls, less the whole read in one
    (the same baskets decompressed and the same entries built, once each: what one more
    call costs, its branches' set-up and array building included).

    The long read stops at the last common basket boundary within ``SPLIT_BYTES``, so memory
    stays bounded whatever the file's size."""
    import uproot

    with uproot.open(path, array_cache=None) as f:
        tree = f[tree_name]
        n = int(tree.num_entries)
        zipped = sum(int(tree[b].member("fZipBytes")) for b in branches) / 1e6
        stops = [e for e in _boundaries(tree, branches) if e > first]
        # a short share reads less (cold, on a slow disk, many branches' baskets take seconds)
        split = min(SPLIT_BYTES, max(1e6, SPLIT_BYTES_PER_S * session.left(deadline)))
        within = [e for e in stops if zipped * e / n <= split / 1e6]
        stop = within[-1] if within else stops[0]
        mb_first, mb_all = zipped * first / n, zipped * stop / n
        extra = _baskets_before(tree, branches, stop) - _baskets_before(tree, branches, first)
        density = extra / (mb_all - mb_first) if mb_all > mb_first else None
        # the set-up is done: past the share, the reads may take what the tests after it
        # do not need
        if session.clock() >= deadline and session.spare() <= 0:
            raise OutOfTime("no time left for its reads: the tests after it need theirs")
        t_w = time.perf_counter()
        tree.arrays(list(branches), entry_stop=first, library="ak")  # warm up
        warm_s = time.perf_counter() - t_w
        if session.clock() >= deadline and session.spare() <= 0:
            raise OutOfTime("no time left for its reads after the warm-up: the tests after it "
                            "need theirs")
        # the same first call on the file opened afresh (its bytes are in the page cache, the
        # process's one-time costs paid): the part of a file's first call that a later one
        # does not pay (on 300 branches, 12 ms of 74).  Before the pairs, so that a short
        # share has one (taken after them, a slow machine's share left none); a second where
        # it fits
        fresh_s: list[float] = []
        while not fresh_s or (len(fresh_s) < FIRST_CALLS
                              and session.clock() + open_s + 2 * warm_s <= deadline):
            session.check()
            with uproot.open(path, array_cache=None) as again:
                fresh = again[tree_name]
                t3 = time.perf_counter()
                fresh.arrays(list(branches), entry_stop=first, library="ak")
                fresh_s.append(time.perf_counter() - t3)
        costs: list[float] = []
        rates: list[float] = []
        later: list[float] = []  # the first range's calls on the open file
        splits: list[float] = []  # the two calls less the one over the same baskets
        scales: list[float] = []  # the root of the three reads' squared times (the noise's)
        for _ in range(8):
            session.check()
            t0 = time.perf_counter()
            tree.arrays(list(branches), entry_stop=first, library="ak")
            t1 = time.perf_counter()
            tree.arrays(list(branches), entry_stop=stop, library="ak")
            t2 = time.perf_counter()
            tree.arrays(list(branches), entry_start=first, entry_stop=stop, library="ak")
            t3 = time.perf_counter()
            a, b, c = t1 - t0, t2 - t1, t3 - t2
            later.append(a)
            splits.append(a + c - b)
            scales.append(math.sqrt(a * a + b * b + c * c))
            if b > a and mb_all > mb_first:
                per_mb = (b - a) / (mb_all - mb_first)
                costs.append(max(a - mb_first * per_mb, 0.0))
                rates.append(1.0 / per_mb)
            # three where they fit (the difference of two reads is noisy), at most five, and
            # never one that does not fit the share
            if len(splits) >= 5 or (splits and session.clock() + (t3 - t0) > deadline):
                break
    # each fresh first call against the median of the same call on the open file
    a = float(np.median(later))
    firsts = [f - a for f in fresh_s]
    # what the split calls resolve: the reads' times scatter by SPLIT_NOISE each
    noise = SPLIT_NOISE * float(np.median(scales)) / math.sqrt(len(scales))
    return _Reads(costs, float(np.median(rates)) if rates else math.nan, mb_first, density,
                  firsts, a, splits, noise)


def _merged_copy(files: Sequence[str], tree_name: str, branches: Sequence[str],
                 directory: str) -> tuple[str, int]:
    """A temporary plain merge of the first files (one extend per input), compressed as the
    first input is (its per-MB rate is the dataset's: uproot's default, ZLIB-1, decompresses
    several times faster than LZMA); its path and the entries of the first input."""
    import awkward as ak
    import uproot

    out = os.path.join(directory, "merged.root")
    first = 0
    with uproot.open(files[0]) as f:
        compression = getattr(f.file, "compression", None)
    with uproot.recreate(out, compression=compression) as w:
        for i, path in enumerate(files):
            with uproot.open(path) as f:
                arrays = f[tree_name].arrays(list(branches), library="ak")
            data = {b: arrays[b] for b in branches}
            if i == 0:
                first = len(arrays)
                w.mktree(tree_name, {b: ak.type(data[b]).content for b in branches})
            w[tree_name].extend(data)
    return out, first


def measure_call_cost(session: Session, files: Sequence[str], tree_name: str,
                      branches: Sequence[str] | None, share_s: float,
                      several_baskets: bool = True) -> CallCost:
    """The fixed cost per read call and the rate per MB beyond it (see the module's notes).
    ``several_baskets=False`` (the probe found one basket per branch in each file) skips the
    search for a file with several and merges two files."""
    import uproot

    test = "call_cost"
    session.report(test, 0.0, "finding a file with several baskets per branch")
    clock = session.clock
    deadline = clock() + share_s
    # only the largest files are candidates: planning opens each file it looks at (a quarter
    # of the share at most, at least one file)
    largest = sorted(files, key=os.path.getsize, reverse=True)[:CANDIDATES]
    t_plan = clock()
    plan = plan_reads(largest, tree_name, branches, max_bytes=1e12,
                      deadline=t_plan + share_s / 4, clock=clock)
    open_s = (clock() - t_plan) / max(len(plan.parts), 1)  # opening one file, about
    selected = list(plan.branches)
    best = None
    for part in plan.parts if several_baskets else ():
        session.check()
        with uproot.open(part.path) as f:
            bounds = _boundaries(f[tree_name], selected)
        if len(bounds) >= 2:
            best = (part.path, bounds[0])
            break
    with tempfile.TemporaryDirectory(prefix="hep-advisor-calls-") as tmp:
        if best is None:
            parts = list(plan.parts[:MERGE_INPUTS])
            if len(parts) < 2:
                # the first plan stopped at its deadline after one file: plan the inputs again
                # only where that and the merge fit (without a deadline it opened up to
                # CANDIDATES files)
                session.need((1 + MERGE_OPENS) * MERGE_INPUTS * open_s,
                             f"opening and merging {MERGE_INPUTS} files into a temporary "
                             "file (the files hold one basket per branch)", deadline)
                parts = list(plan_reads(largest[:MERGE_INPUTS], tree_name, branches,
                                        max_bytes=1e12).parts)
            inputs = [p.path for p in parts]
            if len(inputs) < 2:
                raise ValueError("one file with one basket per branch: no per-call cost")
            # reading the inputs whole and writing them takes a few times opening them, and
            # LZMA's compression on top (the copy is compressed as the data is)
            with uproot.open(inputs[0]) as f:
                lzma = type(getattr(f.file, "compression", None)).__name__ == "LZMA"
            write_s = sum(p.uncompressed_bytes for p in parts) / 1e6 / LZMA_WRITE_MB_PER_S \
                if lzma else 0.0
            session.need(MERGE_OPENS * open_s * len(inputs) + write_s,
                         f"merging {len(inputs)} files into a temporary file (the files hold "
                         "one basket per branch)" + (", LZMA-compressed" if lzma else ""),
                         deadline)
            session.report(test, 0.2, f"merging {len(inputs)} files into a temporary file")
            path, first = _merged_copy(inputs, tree_name, selected, tmp)
            source = f"a temporary merge of {len(inputs)} files (removed)"
        else:
            path, first = best
            source = os.path.basename(path)
        reads = _timed_reads(path, tree_name, selected, first, session, deadline, open_s)
    costs, rate, density, firsts = reads.costs, reads.rate, reads.density, reads.firsts
    m = measurement(costs, "s", Conditions(cache="warm", note=f"on {source}, "
                                           "array cache off"))
    resolved = float(np.median(reads.splits)) > SPLIT_RESOLVED * reads.split_sd
    split = measurement(reads.splits, "s", Conditions(
        cache="warm", note=f"on {source}, array cache off: entries [0, {first}) and the rest in "
        "two calls, less all of them in one" + ("" if resolved else (
            f"; below what its reads resolve (±{1e3 * reads.split_sd:.1f} ms, one sigma): "
            "taken as 0"))))
    call_s = m.median if m.median is not None and m.median > 0 else None  # noise: unmeasured
    session.report(test, 1.0, "per read call",
                   f"{1e3 * call_s:.1f} ms per call" if call_s is not None else None)
    # a negative median is noise around nothing: no extra cost for a file's first call
    first_call_s = max(float(np.median(firsts)), 0.0) if firsts else None
    return CallCost(call_s=call_s,
                    mb_per_s=rate if call_s is not None and math.isfinite(rate) else None,
                    branches=len(selected), measurement=m, baskets_per_mb=density,
                    first_call_s=first_call_s, later_call_s=reads.later_s,
                    later_entries=first, later_whole_file=best is None,
                    split_call_s=min(max(float(split.median or 0.0), 0.0), reads.later_s)
                    if resolved else 0.0,
                    split=split)


def _fitting(paths: Sequence[str], plan: Plan, rate_mb_per_s: float, open_s: float,
             target_s: float, k: int) -> list[str]:
    """The first of ``paths`` whose single-worker run (start, opening and reading each
    file) fits ``target_s``, at least ``k`` of them (or all where there are fewer)."""
    mb = {p.path: p.compressed_bytes / 1e6 for p in plan.parts}
    t, kept = START_S, list[str]()
    for path in paths:
        step = mb.get(path, 0.0) / rate_mb_per_s + open_s
        if len(kept) >= k and t + step > target_s:
            break
        kept.append(path)
        t += step
    return kept


def _single_run_s(paths: Sequence[str], plan: Plan, rate_mb_per_s: float,
                  open_s: float) -> float:
    """The single worker's run over ``paths`` (whole files of ``plan``), about: the processes'
    start, and each file's opening and reading."""
    mb = {p.path: p.compressed_bytes / 1e6 for p in plan.parts}
    return START_S + sum(mb.get(path, 0.0) / rate_mb_per_s + open_s for path in paths)


def _two_per_worker(plan: Plan, files: Sequence[str], tree_name: str,
                    branches: Sequence[str] | None, k: int, rate_mb_per_s: float,
                    open_s: float, share_s: float) -> tuple[Plan, list[str]] | None:
    """A plan of ``2 k`` whole files, where the first planned files are whole but fewer, more
    files are there, and one run of each (the k workers' at ``K_RUN_SHARE`` of the single
    worker's) fits ``share_s``; else ``None``.  Each worker then reads a file after its first:
    a file of one cluster is one unit, which packets do not split (24 files of 1 MB, 300
    branches, one cluster each: two files read by two workers compared first units only,
    1.45-2.3x over runs where the jobs scaled 2.0-2.2x; their later units 1.6-2.6x, 2.1 in
    the mean)."""
    whole = [p for p in plan.parts if p.entries == p.tree_entries]
    if not whole or len(files) < 2 * k:
        return None
    mean_mb = sum(p.compressed_bytes for p in whole) / len(whole) / 1e6
    if (START_S + 2 * k * (mean_mb / rate_mb_per_s + open_s)) * (1 + K_RUN_SHARE) > share_s:
        return None
    parts, skipped = whole[:2 * k], plan.skipped
    if len(parts) < 2 * k:
        # the planned bytes ended first: the files after the whole ones, up to the bytes of
        # the files missing (half as much again: files differ in size), whole ones only
        rest = list(files)[list(files).index(whole[-1].path) + 1:] \
            if whole[-1].path in files else []
        try:
            more = plan_reads(rest, tree_name, branches,
                              max_bytes=1.5 * (2 * k - len(whole)) * mean_mb * 1e6,
                              max_files=2 * k - len(whole))
        except ValueError:  # none of them holds the tree
            return None
        parts = (parts + [p for p in more.parts if p.entries == p.tree_entries])[:2 * k]
        skipped += more.skipped
        if len(parts) < 2 * k:
            return None
    out = replace(plan, parts=tuple(parts), skipped=skipped)
    paths = [p.path for p in parts]
    if _single_run_s(paths, out, rate_mb_per_s, open_s) * (1 + K_RUN_SHARE) > share_s:
        return None
    return out, paths


def measure_parallel_loop(session: Session, files: Sequence[str], tree_name: str,
                          branches: Sequence[str] | None, share_s: float,
                          workers: int | None = None,
                          rate_mb_per_s: float | None = None,
                          open_s: float | None = None,
                          oversubscribe: bool | None = None) -> tuple[ParallelPoint, ...]:
    """The event loop (files opened and read whole, warm) by 1 and by k worker processes;
    with fewer than 2k files, split in packets of entries (as PROOF's packetizer does).
    ``oversubscribe``: a third run by 2k workers where k is every logical core (``None``:
    where ``workers`` is not given and k is the machine's logical cores), over the same units,
    where it fits the time left; its point carries its speed-up over the k workers' run
    (``ParallelPoint.speedup_over_cores``), the measurement of workers beyond the cores.

    ``rate_mb_per_s`` (the single event loop's rate, when known) sizes the data so that the
    runs fit ``share_s``: about three single-worker passes' worth of time; ``open_s`` (the
    open-cost test's seconds per file, when known) counts each file's opening in that time,
    keeping at least k files where there are (the single loop's timing leaves the opening
    out: on 24 files of 1 MB and 300 branches, at --budget 30, a run sized without it took
    twice its time and left no room for the k workers' run, and the parallel efficiency went
    unmeasured); where that leaves fewer than two files per worker, one run of each over
    two whole files per worker is preferred where it fits (:func:`_two_per_worker`).  A run
    is started
    only where it fits the time left (the k workers' run is left out where it does not);
    raises :class:`~probes.readtests.runner.OutOfTime` where not even the single worker's
    run fits."""
    from .parallel import JobResult, measure_job, over_cores, unit_pace

    test = "parallel_loop"
    deadline = session.clock() + share_s
    budget_bytes = PARALLEL_BYTES
    if rate_mb_per_s:
        budget_bytes = min(PARALLEL_BYTES, max(1e6, rate_mb_per_s * 1e6 * share_s / 4))
    k = workers or max(2, min(os.cpu_count() or 2, 4))
    if oversubscribe is None:
        oversubscribe = workers is None and k == (os.cpu_count() or 0)
    counts = (1, k, 2 * k) if oversubscribe else (1, k)
    repeats = 1 if share_s < 4 else 2
    # planning opens each file: in a short share, beyond 2 k files (two per worker) that costs
    # the test more than more files add (the planned bytes of 24 files of 1 MB and 300
    # branches reached seven files at --budget 30: 0.5 s of a 2 s share)
    most = 2 * k if repeats == 1 else None
    plan = plan_reads(files, tree_name, branches, max_bytes=budget_bytes, max_files=most)
    whole = [p.path for p in plan.parts if p.entries == p.tree_entries]
    paths = whole or [plan.parts[0].path]
    # not even one file whole within the bytes planned: the planned part of the first file
    # only (a 41 MB file read whole by the single worker left no time for the k workers)
    stop = None if whole else max(plan.parts[0].entries, 1)
    if rate_mb_per_s and open_s and whole:
        paths = _fitting(paths, plan, rate_mb_per_s, open_s, share_s / 4, k)
        if len(paths) < 2 * k:
            # two whole files per worker where one run of each fits, rather than two runs of
            # one file per worker: the paces of units after the first compare
            two = _two_per_worker(plan, files, tree_name, branches, k, rate_mb_per_s,
                                  open_s, share_s)
            if two is not None:
                plan, paths = two
    # fewer than two files per worker: the workers pull packets of entries (on cluster
    # boundaries), about 4 per worker, so that k of them can be busy and each reads units
    # after its first (both runs alike): a worker's first unit pays a fresh process's
    # once-only costs, and with one file each only first units compare (two 19 MB files:
    # 1.55x, where jobs of eight scaled 1.8x)
    packets = None
    if len(paths) < 2 * k:
        entries = stop or sum(p.tree_entries for p in plan.parts if p.path in paths)
        packets = max(1, entries // (4 * k))
    out: list[ParallelPoint] = []
    results: list[JobResult] = []
    # one run: the processes' start, and the data at the single loop's rate where known
    mb = sum(p.compressed_bytes * (p.fraction if stop else 1.0)
             for p in plan.parts if p.path in paths) / 1e6
    run_s = START_S + (mb / rate_mb_per_s if rate_mb_per_s else 0.0) + len(paths) * (open_s or 0.0)
    from .conversion import MIN_BUDGET_S as CONVERSION_MIN_BUDGET_S

    # the later tests' time is free where the one that needs it (the TTree -> RNTuple
    # conversion) will not run: a budget too short for it (it skips itself), or not listed
    free = "conversion" not in session.pending or session.budget_s < CONVERSION_MIN_BUDGET_S

    def room(seconds: float, first: bool = False) -> float:
        """Seconds available for a run: this test's share, or beyond it (where ``free``, or
        for a ``first`` run: the single worker's, and the first of k workers) the time the
        later tests need no part of for their minimums (``Session.spare``), the deadline
        moved out where that is what fits.
        Two runs are worth more than one run's point alone: at --budget 30, ten calibrations
        of five datasets left the k workers' run out six times (and the whole test four
        times), and ended 2-7 s under their budget, the conversion's share unused.  The k
        workers' run is worth more than the conversion (every prediction beyond one worker
        rests on it, N001 alone on the conversion): on 10 files of 2.8 MB, 592 branches,
        LZMA, the emulated disk, at --budget 30, it was left out in five calibrations of five
        (one timed: 6 s of the budget were left)."""
        nonlocal deadline
        left = session.left(deadline)
        if not free and not first:
            return left
        if left < seconds <= session.spare() - ROOM_MARGIN_S:
            deadline = session.clock() + seconds + ROOM_MARGIN_S  # checked again at once
            session.extend(seconds + ROOM_MARGIN_S)
            return seconds
        return max(left, session.spare() - ROOM_MARGIN_S)

    for i, n in enumerate(counts):
        session.check()
        reps = repeats
        if i == 2:
            # beyond the cores: one run, where it fits (the two points before are kept)
            over_run_s = START_S + (run_s - START_S) * OVER_RUN_SHARE
            if room(over_run_s) < over_run_s:
                session.report(test, 1.0, f"no time left for {n} workers (beyond the cores)")
                break
            reps = 1
        elif i == 0:
            if room(repeats * run_s) < repeats * run_s:
                reps = 1
                # the spare time too, as for the k workers' first run: on a loaded machine the
                # planning took 0.72 s of a 1 s share, and the test was lost whole
                room(run_s, first=True)
            session.need(reps * run_s, f"{n} worker process reading {mb:.1f} MB", deadline)
        else:
            # k workers take at most K_RUN_SHARE of the single worker's time (an efficiency
            # of 1/3 or more); one run of them where two do not fit
            k_run_s = START_S + (run_s - START_S) * K_RUN_SHARE
            if room(repeats * k_run_s) < repeats * k_run_s:
                if room(k_run_s, first=True) < k_run_s:
                    break  # the single worker's point is kept; the k workers' did not fit
                reps = 1
        t0 = session.clock()
        result, m = measure_job(paths, tree_name, n, repeats=reps, cold=False,
                                branches=list(branches) if branches else None,
                                packet_entries=packets, entry_stop=stop)
        run_s = (session.clock() - t0) / reps
        opens = len({(r.worker, r.path) for r in result.per_file}) or max(result.files, 1)
        # each packet is a read call of its own (one per step within it)
        parts = max(len(result.per_file), opens) if packets else opens
        calls = parts / opens * calls_per_file(result.uncompressed_bytes / parts)
        first, later = unit_pace(result)
        results.append(result)
        out.append(ParallelPoint(workers=n, aggregate_mb_per_s=m.median,
                                 file_mb=result.compressed_bytes / opens / 1e6,
                                 calls_per_file=calls,
                                 units=result.units if packets else len(paths),
                                 measurement=m, first_s_per_mb=first, later_s_per_mb=later,
                                 whole_files=not packets))
        session.report(test, (i + 1) / len(counts), f"{n} workers",
                       f"{m.median:,.1f} MB/s" if m.median is not None else None)
    if len(results) >= 2:
        # both runs: the paces of the units each read at the same place in a worker's
        # sequence as the other did (see ``unit_pace``)
        for j, (r, other) in enumerate(zip(results[:2], results[1::-1], strict=True)):
            first, later = unit_pace(r, like=other)
            out[j] = replace(out[j], first_s_per_mb=first, later_s_per_mb=later)
    if len(results) == 3:
        # beyond the cores, against the k workers' run: its paces like against like
        first, later = unit_pace(results[2], like=results[1])
        out[2] = replace(out[2], first_s_per_mb=first, later_s_per_mb=later,
                         speedup_over_cores=over_cores(results[1], results[2]))
    if len(out) < 2:
        session.report(test, 1.0, f"no time left for {k} workers")
    return tuple(out)
