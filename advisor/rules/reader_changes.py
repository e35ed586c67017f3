"""Reader rules U002, U003, U004 and U006 (the table is in :mod:`.reader`).

U002, U003 and U006 replay the program's reads and the changed program's reads through the
device seen in the trace (:func:`.reader._predict`); U004 changes CPU time only, and says
which part of its prediction is an assumption.
"""

from __future__ import annotations

import json

import numpy as np

from hep_advisor.findings.recommendation import MIN_SPEEDUP, Evidence
from hep_advisor.findings.trace import ReaderFinding
from hep_advisor.models.replay import python_buffered, root_cache_bytes, root_files, uproot_files
from hep_advisor.models.replay.requests import Request
from hep_advisor.rules.branches import root_name
from hep_advisor.rules.reader import (
    MIN_KEYS,
    TraceFacts,
    _branches,
    _device_evidence,
    _predict,
    step_rule,
    treecache_rule,
)
from hep_advisor.rules.rule import Rule

#: U002: the baskets of branches read but not used hold at least this share of those read.
UNUSED_SHARE = 0.2
#: U003: at least this many opens of one file, about one per request.
MIN_OPENS = 16
#: U004: the work that threads would share is at least this share of the wall time ...
PARALLEL_SHARE = 0.15
#: ... and at most this many threads are proposed.
MAX_THREADS = 8
#: uproot: at least this many cores idle (its executor costs per basket; on 2 cores, one
#: measured case ran 0.91x with 2 threads against 1.14x predicted)
MIN_IDLE_UPROOT = 1.5
#: U006: candidate TTreeCache sizes (bytes) the traced request count is matched against.
CACHE_CANDIDATES = (256_000, 1_000_000, 2_000_000, 5_000_000, 10_000_000, 20_000_000,
                    30_000_000, 50_000_000, 100_000_000)


def _uproot_step(facts: TraceFacts) -> int | str:
    """The traced program's step: the memory-size default where it read the keys first,
    otherwise one step per file (the ratio of two replays barely depends on it)."""
    keys = sum(f.key_baskets for f in facts.attribution.files)
    return "100 MB" if keys >= MIN_KEYS else max(m.entries for m in facts.maps)


def _stream(facts: TraceFacts, branches: list[str], cache: int | None = None) -> list[Request]:
    maps = [m for m in facts.maps if m.baskets]
    if facts.reader == "root":
        size = cache if cache is not None else max(root_cache_bytes(m) for m in maps)
        return root_files(maps, branches, cache_bytes=size)
    sizes = {m.path: m.file_bytes for m in maps}
    return list(python_buffered(uproot_files(maps, branches, step_size=_uproot_step(facts)),
                                4096, sizes))


def _branch_bytes(facts: TraceFacts) -> dict[str, int]:
    out: dict[str, int] = {}
    for m in facts.maps:
        for b in m.branches:
            out[b.name] = out.get(b.name, 0) + int(np.sum(b.nbytes))
    return out


def _mostly_read(facts: TraceFacts) -> list[str]:
    """Branches with a basket read at least half (a buffered read that spills a few kB into
    the next branch's basket does not make that branch read)."""
    maps = {m.path: m for m in facts.maps}
    covered: dict[tuple[str, int, int], int] = {}
    for c in facts.attribution.reads:
        m = maps.get(c.read.file)
        if c.kind != "basket" or m is None:
            continue
        for bi, j in c.baskets:
            lo, n = int(m.branches[bi].seek[j]), int(m.branches[bi].nbytes[j])
            got = max(0, min(c.read.stop, lo + n) - max(c.read.offset, lo))
            key = (c.read.file, bi, j)
            covered[key] = covered.get(key, 0) + got
    names: list[str] = []
    for (path, bi, j), got in covered.items():
        b = maps[path].branches[bi]
        if got >= 0.5 * int(b.nbytes[j]) and b.name not in names:
            names.append(b.name)
    order = _branches(facts) or []
    return [n for n in order if n in names]


def branches_rule(facts: TraceFacts) -> ReaderFinding | None:
    """U002: branches read that the program does not use (the user names those it uses)."""
    if not facts.uses or facts.device is None or not facts.maps:
        return None
    read = _mostly_read(facts)
    uses = set(facts.uses)
    used = [b for b in read if b in uses]
    unused = [b for b in read if b not in uses]
    if not used or not unused:
        return None
    nbytes = _branch_bytes(facts)
    total = sum(nbytes.get(b, 0) for b in read)
    share = sum(nbytes.get(b, 0) for b in unused) / total if total else 0.0
    if share < UNUSED_SHARE:
        return None
    cache = _inferred_cache(facts)[0] if facts.reader == "root" else None
    before, after = _stream(facts, read, cache), _stream(facts, used, cache)
    saved = (facts.decompression_s or 0.0) * share
    s, lo, hi, b, a = _predict(facts, before, after, reopen=facts.reader == "uproot",
                               cpu_saved_s=saved, cpu_saved_range=(0.0, saved))
    if s < MIN_SPEEDUP:
        return None
    if facts.reader == "root":
        names = [root_name(n) for n in used]  # ROOT knows no "/" in a branch's name
        change = (f'tree.SetBranchStatus("*", False)\nfor name in {names!r}:\n'
                  '    tree.SetBranchStatus(name, True)')
        argument = value = None
    else:
        change = f"tree.iterate(..., filter_name={used!r})  # or tree.arrays(filter_name=...)"
        argument, value = "filter_name", json.dumps(used)
    return ReaderFinding(
        code="U002",
        title=f"read only the {len(used)} branches used ({len(unused)} more are read now, "
              f"{share:.0%} of the bytes)",
        predicted_speedup=s, speedup_low=lo, speedup_high=hi, change=change,
        argument=argument, value=value,
        evidence=(
            Evidence("branches read", len(read), "branches", "measured"),
            Evidence("of them used", len(used), "branches", "measured",
                     "as named with --uses: the trace cannot see which arrays the program "
                     "touches"),
            Evidence("share of the bytes in branches not used", round(share, 3), "", "derived",
                     "on-disk basket bytes, from the basket maps"),
            Evidence("decompression saved", round(saved, 3), "s", "derived",
                     "the timed decompression times that share (the interval: none to all)"),
            Evidence("I/O replayed before and after", f"{b:.3f} s -> {a:.3f} s", "",
                     "derived"),
            *_device_evidence(facts.device)))


def source_rule(facts: TraceFacts) -> ReaderFinding | None:
    """U003: uproot's default local source (fsspec) opens the file for every range."""
    att = facts.attribution
    if facts.reader != "uproot" or facts.device is None or not facts.maps:
        return None
    worst = max(att.files, key=lambda f: f.opens, default=None)
    if worst is None or worst.opens < MIN_OPENS or worst.opens < 0.5 * worst.requests:
        return None
    traced = [Request(c.read.file, c.read.offset, c.read.size)
              for c in sorted(att.reads, key=lambda c: c.read.start_s)]
    opened = facts.open_s or 0.0  # kept open: paid once per file, not per range
    s, lo, hi, b, a = _predict(facts, traced, traced, reopen=(True, False),
                               cpu_saved_s=opened, cpu_saved_range=(0.0, opened))
    if s < MIN_SPEEDUP:
        return None
    opens = sum(f.opens for f in att.files)
    return ReaderFinding(
        code="U003",
        title=f"keep the file open between reads ({opens:,} opens for "
              f"{att.requests:,} requests: each starts the kernel's read-ahead afresh)",
        predicted_speedup=s, speedup_low=lo, speedup_high=hi,
        change="uproot.open(path, handler=uproot.MultithreadedFileSource)  # also "
               "uproot.iterate(..., handler=uproot.MultithreadedFileSource)",
        argument="handler", value="uproot.MultithreadedFileSource",
        evidence=(
            Evidence("opens of the ROOT files", opens, "opens", "measured"),
            Evidence("requests", att.requests, "requests", "measured"),
            Evidence("time opening and closing the files", round(opened, 3), "s",
                     "measured" if facts.open_s is not None else "derived",
                     "inside the program (the Python recorder); saved by a source that "
                     "keeps them open" if facts.open_s is not None else
                     "not measured under strace: counted as none"),
            Evidence("the traced reads replayed, reopened and kept open",
                     f"{b:.3f} s -> {a:.3f} s", "", "derived",
                     "the same requests (that source does not merge nearby ranges: the "
                     "kernel's read-ahead serves them)"),
            *_device_evidence(facts.device)))


def threads_rule(facts: TraceFacts) -> ReaderFinding | None:
    """U004: decompression (RDataFrame: the event loop) on threads where cores are idle."""
    d = facts.decompression_s
    if not d or facts.wall_s <= 0 or facts.cores < 2:
        return None
    wall = facts.wall_s / (1.0 + facts.overhead)
    idle = facts.cores - facts.cpu_s / wall
    user = max(facts.cpu_s - d, 0.0)
    par = d + (user if facts.rdataframe else 0.0)
    if idle < (1.0 if facts.reader == "root" else MIN_IDLE_UPROOT) or \
            par < PARALLEL_SHARE * wall:
        return None
    if facts.reader == "root" and not facts.rdataframe:  # measured: GetEntry without a cache
        return None  # under EnableImplicitMT(2) ran 0.30x (its branches read concurrently)
    threads = min(facts.cores, MAX_THREADS)
    likely = min(threads, 1.0 + idle)

    def speedup(k: float) -> float:
        return wall / max(wall - par + par / k, 1e-3)

    s, hi = speedup(likely), speedup(threads)
    if s < MIN_SPEEDUP:
        return None
    if facts.reader == "root":
        change = (f"ROOT.EnableImplicitMT({threads})  # first, before opening the file or "
                  "building the RDataFrame")
        argument, value = "EnableImplicitMT", str(threads)
        what = "the event loop"
    else:
        change = (f"tree.iterate(..., decompression_executor=uproot.ThreadPoolExecutor("
                  f"max_workers={threads}))")
        argument, value = "decompression_executor", \
            f"uproot.ThreadPoolExecutor(max_workers={threads})"
        what = "decompression"
    return ReaderFinding(
        code="U004",
        title=f"run {what} on {threads} threads ({idle:.1f} of {facts.cores} cores idle on "
              "average)",
        predicted_speedup=s, speedup_low=1.0, speedup_high=hi, change=change,
        argument=argument, value=value,
        evidence=(
            Evidence("decompression", round(d, 3), "s", "derived",
                     "a timed sample of the baskets read, times the bytes read"),
            Evidence("work that threads share", round(par, 3), "s", "derived",
                     "decompression, plus the program's own work for RDataFrame"),
            Evidence("cores idle on average", round(idle, 2), "cores", "derived",
                     "cores less CPU time / wall time"),
            Evidence("parallel share", "all of it, on min(threads, 1 + idle cores)", "",
                     "assumed", "the interval spans no gain (1.0x: e.g. work that holds "
                     f"the GIL) to all {threads} threads; the I/O is unchanged")))


def _cluster_bytes(facts: TraceFacts, branches: list[str] | None) -> int:
    """The on-disk bytes of the largest cluster of the branches read."""
    best = 0
    for m in facts.maps:
        bounds = np.asarray(list(m.clusters) if len(m.clusters) > 1 else [0, m.entries])
        sums = np.zeros(len(bounds) + 1)
        for b in m.select(branches):
            starts = np.asarray(b.entries[: len(b.nbytes)])
            per = np.searchsorted(bounds[1:], starts, side="right")
            sums += np.bincount(per, weights=np.asarray(b.nbytes), minlength=len(sums))
        best = max(best, int(sums.max()) if len(sums) else 0)
    return best


def _inferred_cache(facts: TraceFacts) -> tuple[int, int, int]:
    """(cache bytes, its replayed data requests, the traced basket requests): the candidate
    size whose replay makes the request count closest to the traced one (0: no cache)."""
    branches = _branches(facts)
    maps = [m for m in facts.maps if m.baskets]
    traced = sum(1 for c in facts.attribution.reads if c.kind == "basket")
    best = (0, 0, traced)
    err = float("inf")
    for size in (0, *CACHE_CANDIDATES):
        n = sum(1 for r in root_files(maps, branches, cache_bytes=size) if r.kind == "data")
        e = abs(np.log(max(n, 1) / max(traced, 1)))
        if e < err - 1e-9:
            best, err = (size, n, traced), e
    return best


def cache_size_rule(facts: TraceFacts) -> ReaderFinding | None:
    """U006: ROOT's TTreeCache is on but smaller than a cluster of the branches read."""
    att = facts.attribution
    if facts.reader != "root" or facts.device is None or not facts.maps:
        return None
    if any(f.opens > 2 for f in att.files):
        return None
    cache, replayed, traced = _inferred_cache(facts)
    branches = _branches(facts)
    target = int(_cluster_bytes(facts, branches) * 1.1)
    if cache == 0 or traced == 0 or target <= cache:
        return None
    maps = [m for m in facts.maps if m.baskets]
    before = root_files(maps, branches, cache_bytes=cache)
    after = root_files(maps, branches, cache_bytes=target)
    s, lo, hi, b, a = _predict(facts, before, after, reopen=False)
    if s < MIN_SPEEDUP:
        return None
    return ReaderFinding(
        code="U006",
        title=f"a TTreeCache that holds a cluster ({target / 1e6:.1f} MB; about "
              f"{cache / 1e6:.2g} MB now)",
        predicted_speedup=s, speedup_low=lo, speedup_high=hi,
        change=f"tree.SetCacheSize({target})\ntree.AddBranchToCache(\"*\", True)  # or only the "
               "branches used\n# reading part of the tree: tree.SetCacheEntryRange(first, last)",
        argument="SetCacheSize", value=str(target),
        evidence=(
            Evidence("basket requests", traced, "requests", "measured"),
            Evidence("cache size now (inferred)", cache, "bytes", "derived",
                     f"the candidate whose replay makes {replayed} requests, the closest to "
                     "the traced count"),
            Evidence("largest cluster of the branches read", target, "bytes", "derived",
                     "on-disk basket bytes from the basket map, plus 10%"),
            Evidence("I/O replayed before and after", f"{b:.3f} s -> {a:.3f} s", "",
                     "derived"),
            *_device_evidence(facts.device)))


def reader_rules(facts: TraceFacts) -> list[ReaderFinding]:
    """Every reader finding that applies, by predicted speed-up."""
    found = [step_rule(facts), branches_rule(facts), source_rule(facts), threads_rule(facts),
             treecache_rule(facts), cache_size_rule(facts)]
    return sorted((f for f in found if f is not None), key=lambda f: -f.predicted_speedup)


_TRACE = ("a trace of the program (hep-advisor trace): its reads replayed before and after the "
          "change through the device seen in the trace")
U001 = Rule("U001", "reader", "reader", "Step uproot by entries, not bytes",
            trigger="uproot read every basket's key before the data (a memory-size step_size, the "
                    "default \"100 MB\")",
            prediction=_TRACE, measure="run the program once with the printed step_size",
            source="trace")
U002 = Rule("U002", "reader", "reader", "Read only the branches used",
            trigger="the program read branches it does not use (hep-advisor trace --uses A,B)",
            prediction=_TRACE, measure="run the program once reading only the used branches",
            source="trace")
U003 = Rule("U003", "reader", "reader", "Keep the file open between reads",
            trigger="uproot's default local source opened the file again for every range",
            prediction=_TRACE, measure="run the program once with the printed source",
            source="trace")
U004 = Rule("U004", "reader", "reader", "Decompress on more threads",
            trigger="decompression (RDataFrame: the event loop) took a large share of the wall "
                    "time while cores were idle",
            prediction="the traced CPU time's parallel share on the idle cores (an assumption, "
                       "said so); the I/O unchanged",
            measure="run the program once with the printed threads", source="trace")
U005 = Rule("U005", "reader", "reader", "Read through ROOT's TTreeCache",
            trigger="ROOT read one basket per request (GetEntry without a TTreeCache)",
            prediction=_TRACE, measure="run the program once with the cache", source="trace")
U006 = Rule("U006", "reader", "reader", "Size ROOT's TTreeCache to hold a cluster",
            trigger="ROOT's TTreeCache is smaller than a cluster of the branches read",
            prediction=_TRACE, measure="run the program once with the printed cache size",
            source="trace")

RULES = (U001, U002, U003, U004, U005, U006)
