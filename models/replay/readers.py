"""Reader strategies: (basket map, reader, branches, entry range) -> the reads it issues, in order.

Each function follows one reader's code path, checked against traces of real runs:

- :func:`uproot_iterate` -- uproot 5 ``TTree.iterate`` / ``arrays`` (``arrays`` is one step over
  the whole range).  Per step, the baskets that overlap the step and were not read in the
  previous step (uproot keeps those) are gathered, sorted by offset, merged when the gap is at
  most 32 KiB, and sent as coalesced requests (uproot's ``CoalesceConfig``: at most 1,024
  ranges or 10 MiB per request, the first request closed at 32 KiB).  With a memory-size step
  (the default ``"100 MB"``) a pre-pass first reads every selected basket's key, one 34-byte
  request each, to learn the uncompressed sizes.
- :func:`uproot_open` -- what ``uproot.open(path)[tree]`` reads: header, keys, the TTree, the
  streamers.
- The system calls under uproot's default source for a local path (fsspec's local file system:
  every merged range opens the file and reads it with a buffered reader) come from
  :func:`~models.replay.requests.python_buffered`.
- :func:`root_getentry` -- ROOT's ``TTree::GetEntry`` loop: without a TTreeCache one read per
  basket, as entries advance, branches in tree order; with one, a learning phase (by default
  the first 100 entries, which prefetches those entries' baskets of every enabled branch)
  then, per cluster, the used branches' baskets sorted by offset, adjacent ones merged, and read
  with ``TFile::ReadBuffers`` (blocks whose span stays under the 256 kB read-ahead buffer are
  read in one call, gaps included).  The learning phase's prefetch covers every enabled branch
  (``SetBranchStatus``), used or not.  A loop that adds its branches to the cache itself
  (``AddBranchToCache``, ``learn_entries=0``) has no learning phase: its first fill reads
  the cluster whole (traced: ROOT 6.40, one ``read`` of 182,527 bytes where the learning
  phase's fills read 91,202 and 182,952).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from hep_advisor.probes.basketmap import BasketMap, BranchBaskets

from .requests import Request, renumber

#: uproot reads this many bytes of a basket's TKey in the memory-size pre-pass.
UPROOT_KEY_BYTES = 34
#: uproot's first read of a file.
UPROOT_BEGIN_CHUNK = 403
#: ROOT's first read of a file (``TFile::Init``).
ROOT_BEGIN_CHUNK = 300
#: ``TFile::fgReadaheadSize``: the span that one ``ReadBuffers`` call covers in one read.
ROOT_READAHEAD_BYTES = 256_000
#: ``TTreeCache::fgLearnEntries``.
ROOT_LEARN_ENTRIES = 100


@dataclass(frozen=True)
class CoalesceConfig:
    """uproot's ``uproot.source.coalesce.CoalesceConfig`` defaults (uproot 5.x)."""

    max_range_gap: int = 32 * 1024
    max_request_ranges: int = 1024
    max_request_bytes: int = 10 * 1024 * 1024
    min_first_request_bytes: int = 32 * 1024


def _memory_size(text: str) -> int:
    units = {"kb": 10**3, "mb": 10**6, "gb": 10**9, "kib": 2**10, "mib": 2**20, "gib": 2**30}
    t = text.strip().lower().replace(" ", "")
    for unit in sorted(units, key=len, reverse=True):
        if t.endswith(unit):
            return int(float(t[: -len(unit)]) * units[unit])
    if t.endswith("b"):
        return int(float(t[:-1]))
    return int(float(t))


# ---------------------------------------------------------------------------------------------
# uproot


def uproot_open(
    m: BasketMap, *, streamers: bool = True, begin_chunk: int = UPROOT_BEGIN_CHUNK
) -> list[Request]:
    """The metadata requests of ``uproot.open(path)[tree]``, in order."""
    out = [Request(m.path, 0, min(begin_chunk, m.file_bytes), "meta")]
    keys = m.region("keys")
    if keys is not None:
        stop = min(keys.offset + keys.size + 8, m.file_bytes)
        out.append(Request(m.path, keys.offset, stop - keys.offset, "meta"))
    tree, tree_keylen = m.region("tree"), m.region("tree_keylen")
    if tree is not None and tree_keylen is not None:
        start = tree.offset + tree_keylen.size
        out.append(Request(m.path, start, tree.stop - start, "meta"))
    info, info_keylen = m.region("streamers"), m.region("streamers_keylen")
    if streamers and info is not None and info_keylen is not None:
        key_stop = min(info.offset + UPROOT_KEY_BYTES, m.file_bytes)
        out.append(Request(m.path, info.offset, key_stop - info.offset, "meta"))
        start = info.offset + info_keylen.size
        out.append(Request(m.path, start, info.stop - start, "meta"))
    return out


def coalesce(
    ranges: Iterable[tuple[int, int]], config: CoalesceConfig | None = None
) -> list[list[tuple[int, int]]]:
    """uproot's range coalescing: a list of requests, each a list of merged (start, stop)."""
    cfg = config or CoalesceConfig()
    merged: list[list[int]] = []
    for start, stop in sorted(ranges):
        if merged and start - merged[-1][1] <= cfg.max_range_gap:
            merged[-1][1] = max(merged[-1][1], stop)
        else:
            merged.append([start, stop])
    requests: list[list[tuple[int, int]]] = []
    current: list[tuple[int, int]] = []
    nbytes = 0
    first = True
    for start, stop in merged:
        size = stop - start
        if current and (
            len(current) >= cfg.max_request_ranges
            or nbytes + size >= cfg.max_request_bytes
            or (first and nbytes >= cfg.min_first_request_bytes)
        ):
            requests.append(current)
            current, nbytes, first = [], 0, False
        current.append((start, stop))
        nbytes += size
    if current:
        requests.append(current)
    return requests


def _entry_range(m: BasketMap, entry_start: int | None, entry_stop: int | None) -> tuple[int, int]:
    start = 0 if entry_start is None else max(0, min(entry_start, m.entries))
    stop = m.entries if entry_stop is None else max(start, min(entry_stop, m.entries))
    return start, stop


def uproot_step_entries(
    m: BasketMap, branches: Sequence[BranchBaskets], start: int, stop: int, step_bytes: int
) -> int:
    """uproot's entries per step for a memory-size step (``_hasbranches_num_entries_for``).

    uproot sums each selected basket's uncompressed size with its key length (read from the
    keys); the map scales each basket's on-disk size by the branch's ``fTotBytes / fZipBytes``
    (both count the keys), which is exact for a branch's total.
    """
    total = 0.0
    for b in branches:
        idx = b.baskets_for(start, stop)
        if len(idx) == 0:
            continue
        total += float(np.sum(b.nbytes[idx], dtype=np.float64)) * b.uncompressed_per_compressed
    if total <= 0:
        return 1
    n = round(step_bytes * (stop - start) / total)
    return max(int(n), 1)


def uproot_iterate(
    m: BasketMap,
    branches: Iterable[str] | None = None,
    *,
    step_size: int | str = "100 MB",
    entry_start: int | None = None,
    entry_stop: int | None = None,
    coalesce_config: CoalesceConfig | None = None,
    open_file: bool = True,
    streamers: bool = True,
) -> list[Request]:
    """The requests of ``tree.iterate(branches, step_size=...)`` (uproot's own ranges).

    The batches are uproot's coalesced requests; each merged range in one is read with its own
    call by fsspec's local file system (see :func:`~models.replay.requests.python_buffered`).
    Each step is one ``call``: its batches are read at once, each in a thread.
    """
    chosen = m.select(branches)
    start, stop = _entry_range(m, entry_start, entry_stop)
    out: list[Request] = uproot_open(m, streamers=streamers) if open_file else []
    if isinstance(step_size, str):
        for b in chosen:
            for i in b.baskets_for(start, stop):
                seek = int(b.seek[i])
                size = min(UPROOT_KEY_BYTES, m.file_bytes - seek) if m.file_bytes else 34
                out.append(Request(m.path, seek, size, "key"))
        step = uproot_step_entries(m, chosen, start, stop, _memory_size(step_size))
    else:
        step = max(int(step_size), 1)
    batch = 0
    for call, ranges in enumerate(step_ranges(chosen, start, stop, step)):
        for request in coalesce(ranges, coalesce_config):  # each in a thread of its own
            for lo, hi in request:
                out.append(Request(m.path, lo, hi - lo, "data", batch, call))
            batch += 1
    return out


def step_ranges(chosen: Sequence[BranchBaskets], start: int, stop: int,
                step: int) -> Iterator[list[tuple[int, int]]]:
    """The byte ranges each step of ``iterate`` asks for (before coalescing): the baskets of
    ``chosen`` overlapping the step's entries, less those the step before already read (uproot
    keeps a basket that spans the step boundary)."""
    previous: set[tuple[int, int]] = set()
    for sub_start in range(start, stop, step):
        sub_stop = min(sub_start + step, stop)
        ranges: list[tuple[int, int]] = []
        current: set[tuple[int, int]] = set()
        for b in chosen:
            for i in b.baskets_for(sub_start, sub_stop):
                key = (b.index, int(i))
                current.add(key)
                if key not in previous:
                    seek = int(b.seek[i])
                    ranges.append((seek, seek + int(b.nbytes[i])))
        previous = current
        yield ranges


def uproot_arrays(
    m: BasketMap,
    branches: Iterable[str] | None = None,
    *,
    entry_start: int | None = None,
    entry_stop: int | None = None,
    coalesce_config: CoalesceConfig | None = None,
    open_file: bool = True,
    streamers: bool = True,
) -> list[Request]:
    """``tree.arrays(branches)``: one step over the whole range."""
    start, stop = _entry_range(m, entry_start, entry_stop)
    return uproot_iterate(
        m,
        branches,
        step_size=max(stop - start, 1),
        entry_start=start,
        entry_stop=stop,
        coalesce_config=coalesce_config,
        open_file=open_file,
        streamers=streamers,
    )


def uproot_files(
    maps: Sequence[BasketMap],
    branches: Iterable[str] | None = None,
    *,
    step_size: int | str = "100 MB",
    coalesce_config: CoalesceConfig | None = None,
) -> list[Request]:
    """``uproot.iterate`` over files in one process, one after another.

    uproot builds the class models it lacks from a file's streamers once per process: the
    streamers are read from the first file that needs them (``BasketMap.uproot_streamers``;
    unknown counts as needed) and from no later one.
    """
    streams = []
    built = False
    for m in maps:
        needs = m.uproot_streamers is not False and not built
        built = built or needs
        streams.append(
            uproot_iterate(
                m,
                branches,
                step_size=step_size,
                coalesce_config=coalesce_config,
                streamers=needs,
            )
        )
    return renumber(streams)


# ---------------------------------------------------------------------------------------------
# ROOT


def root_streamers_uncompressed(m: BasketMap) -> bool:
    """Whether the file stores its StreamerInfo record uncompressed (key ``fObjlen`` equal to
    ``fNbytes - fKeylen``; uproot writes it so, ROOT compresses it).  False when unknown."""
    info, objlen = m.region("streamers"), m.region("streamers_objlen")
    keylen = m.region("streamers_keylen")
    if info is None or objlen is None or keylen is None:
        return False
    return objlen.size == info.size - keylen.size


def root_open(m: BasketMap, *, begin_chunk: int = ROOT_BEGIN_CHUNK) -> list[Request]:
    """The metadata reads of ``TFile::Open`` + ``Get(tree)``: header, keys, streamers, TTree.

    ``TFile::GetStreamerInfoListImpl`` reads the StreamerInfo record (``fSeekInfo``,
    ``fNbytesInfo``) into a buffer and hands it to ``TKey::ReadObjWithBuffer``; when the record
    is stored uncompressed that function reads the key again from the file (``TKey::ReadFile``),
    so such a file's streamer record is read twice (seen in strace of ROOT 6.40).
    """
    out = [Request(m.path, 0, min(begin_chunk, m.file_bytes), "meta")]
    for name in ("keys", "streamers", "tree"):
        r = m.region(name)
        if r is not None:
            out.append(Request(m.path, r.offset, r.size, "meta"))
            if name == "streamers" and root_streamers_uncompressed(m):
                out.append(Request(m.path, r.offset, r.size, "meta"))
    return out


def root_cache_bytes(m: BasketMap, autoflush: int | None = None, factor: float = 1.0) -> int:
    """ROOT's automatic TTreeCache size (``TTree::GetCacheAutoSize``).

    ``fAutoFlush < 0``: ``-fAutoFlush`` bytes (30 MB by default); otherwise 1.5 times the
    compressed size of a cluster (median cluster when the tree has cluster ranges).
    """
    zip_bytes = sum(b.compressed_bytes for b in m.branches)
    if autoflush is not None and autoflush < 0:
        size = -factor * autoflush
    else:
        if autoflush is None or autoflush == 0:
            sizes = np.diff(m.clusters)
            cluster = float(np.median(sizes)) if len(sizes) else float(m.entries)
        else:
            cluster = float(autoflush)
        size = factor * 1.5 * cluster * zip_bytes / (m.entries + 1)
    return int(min(size, 2**31 // 4))


def _read_buffers(
    m: BasketMap, blocks: list[tuple[int, int]], batch: int, readahead: int
) -> list[Request]:
    """``TFile::ReadBuffers`` on local files: sort, merge adjacent, group spans < readahead."""
    merged: list[list[int]] = []
    for seek, size in sorted(blocks):
        if merged and merged[-1][0] + merged[-1][1] == seek:
            merged[-1][1] += size
        else:
            merged.append([seek, size])
    out: list[Request] = []
    i, n = 0, len(merged)
    while i < n:
        begin = merged[i][0]
        j = i
        while j < n and merged[j][0] + merged[j][1] - begin < readahead:
            j += 1
        if j == i:  # a block at least as large as the read-ahead buffer: read it alone
            out.append(Request(m.path, begin, merged[i][1], "data", batch))
            i += 1
        else:
            end = merged[j - 1][0] + merged[j - 1][1]
            out.append(Request(m.path, begin, end - begin, "data", batch))
            i = j
    return out


def root_getentry(
    m: BasketMap,
    branches: Iterable[str] | None = None,
    *,
    cache_bytes: int | None = 0,
    entry_start: int | None = None,
    entry_stop: int | None = None,
    learn_entries: int = ROOT_LEARN_ENTRIES,
    prefill: bool = True,
    readahead_bytes: int = ROOT_READAHEAD_BYTES,
    autoflush: int | None = None,
    open_file: bool = True,
    enabled: Iterable[str] | None = None,
    at: list[int] | None = None,
) -> list[Request]:
    """The reads of ``for i in range(n): tree.GetEntry(i)`` reading ``branches``.

    ``cache_bytes=0``: no TTreeCache (``SetCacheSize(0)``); ``None``: ROOT's automatic size
    (:func:`root_cache_bytes`, with the tree's ``autoflush`` when known); a number: that size.
    ``enabled``: the branches not disabled by ``SetBranchStatus`` (default: those read); the
    learning phase prefetches all of them.  ``at``: where given, it gets, for each request
    returned, the entry whose ``GetEntry`` issues it (the opening reads: the first entry), so
    that the loop's work per entry can be placed between the reads (:mod:`.pacing`).
    """
    chosen = m.select(branches)
    allowed = m.select(enabled) if enabled is not None else chosen
    start, stop = _entry_range(m, entry_start, entry_stop)
    out: list[Request] = root_open(m) if open_file else []
    if start >= stop or not chosen:
        if at is not None:
            at.extend([start] * len(out))
        return out
    if cache_bytes is None:
        cache_bytes = root_cache_bytes(m, autoflush)

    # Every needed basket, keyed by the first entry that needs it.
    need: list[tuple[int, int, int, int, int]] = []  # (entry, branch order, basket, seek, size)
    for b in chosen:
        for i in b.baskets_for(start, stop):
            first = max(int(b.entries[i]), start)
            need.append((first, b.index, int(i), int(b.seek[i]), int(b.nbytes[i])))
    need.sort()
    if cache_bytes <= 0:
        out.extend(Request(m.path, s, n, "data") for _, _, _, s, n in need)
        if at is not None:
            at.extend([start] * (len(out) - len(need)) + [e for e, *_ in need])
        return out

    cache = _TreeCache(m, chosen, start, stop, cache_bytes, readahead_bytes)
    reads = cache.run(need, learn_entries, prefill, allowed)
    if at is not None:
        at.extend([start] * len(out) + cache.at)
    return out + reads


class _TreeCache:
    """ROOT's ``TTreeCache`` on a forward ``GetEntry`` loop (``TTreeCache::FillBuffer``).

    Modelled: the learning phase (``LearnPrefill``: every enabled branch's baskets for the
    learning entries, then misses read one by one until the first miss past them); a fill at
    each miss outside the filled entry range, which discards the previous buffer and registers,
    cluster by cluster from the one holding the entry, the used branches' baskets not in memory
    and not already cached in this cluster range; a fill goes on to the next cluster while one more
    cluster of the average size so far fits in the cache; a basket that would overflow the
    cache in a later cluster is left out (its branch is skipped, the others go on) and the next
    fill starts at that cluster, where baskets cached but not used by then are vetoed (read on
    their own if needed); baskets larger than the cache are never cached.  Simplified:
    the first cluster of a fill is cut at twice the cache size; no event lists, no reverse
    reading, no miss cache.
    """

    def __init__(
        self,
        m: BasketMap,
        chosen: Sequence[BranchBaskets],
        start: int,
        stop: int,
        cache_bytes: int,
        readahead: int,
    ) -> None:
        self.m, self.chosen, self.start, self.stop = m, chosen, start, stop
        self.size, self.readahead = cache_bytes, readahead
        self.buffer: set[tuple[int, int]] = set()
        self.flags: set[tuple[int, int]] = set()  # in cache or used, this cluster range
        self.used: set[tuple[int, int]] = set()
        self.vetoed: set[tuple[int, int]] = set()
        self.memory: dict[int, int] = {}  # branch -> basket held in memory
        self.window = (start, start)  # [fEntryCurrent, fEntryNext)
        self.cluster_set = (-1, -1)
        self.batch = 0
        self.out: list[Request] = []
        self.at: list[int] = []  # the entry that issued each request of ``out``

    def cluster(self, entry: int) -> tuple[int, int]:
        bounds = self.m.clusters
        c = int(np.searchsorted(bounds, entry, side="right")) - 1
        c = min(max(c, 0), max(len(bounds) - 2, 0))
        lo = int(bounds[c]) if len(bounds) else 0
        hi = int(bounds[c + 1]) if c + 1 < len(bounds) else self.stop
        return lo, hi

    def fill(self, entry: int, branches: Sequence[BranchBaskets], entry_max: int) -> None:
        lo, hi = self.cluster(entry)
        if not (self.cluster_set[0] <= entry < self.cluster_set[1]):
            # A new cluster range: forget the flags, but veto what was cached and not used
            # (ROOT bets that it will not be used; if it is, it is read on its own).
            self.vetoed = self.flags - self.used
            self.flags.clear()
            self.used.clear()
            self.cluster_set = (lo, hi)
        self.buffer = set()
        blocks: list[tuple[int, int]] = []
        ntot = 0
        k = 0
        next_entry = min(hi, entry_max)
        min_entry = lo
        max_read = lo
        while True:
            c_hi = min(hi, entry_max)
            candidates = []
            for b in branches:
                for j in b.baskets_for(max(min_entry, self.start), c_hi):
                    key = (b.index, int(j))
                    if self.memory.get(b.index) == int(j):
                        self.flags.add(key)
                        self.used.add(key)
                        continue
                    if key in self.flags or key in self.vetoed or int(b.nbytes[j]) > self.size:
                        continue
                    candidates.append((int(b.entries[j]), b.index, int(j), b))
            candidates.sort(key=lambda x: (x[0], x[1]))
            full = False
            skipped: set[int] = set()
            seen: set[int] = set()
            for _, bi, j, b in candidates:
                if bi in skipped:
                    continue
                n = int(b.nbytes[j])
                if ntot + n > self.size:
                    limit = 0 if k > 0 else (4 if bi not in seen else 2) * self.size
                    if ntot + n > limit:
                        full = True
                        skipped.add(bi)
                        continue
                seen.add(bi)
                blocks.append((int(b.seek[j]), n))
                self.buffer.add((bi, j))
                self.flags.add((bi, j))
                ntot += n
                max_read = max(max_read, int(b.entries[j + 1]))
            k += 1
            if full:
                next_entry = min_entry if k > 1 else max(max_read, entry + 1)
                break
            lo, hi = hi, self.cluster(hi)[1]
            fits = self.size > ntot * (k + 1) / k
            if not (fits and lo < entry_max and candidates):
                break
            min_entry = lo
            next_entry = min(hi, entry_max)
        self.window = (self.cluster(entry)[0], next_entry)
        reads = _read_buffers(self.m, blocks, self.batch, self.readahead)
        self.out.extend(reads)
        self.at.extend([entry] * len(reads))
        self.batch += 1

    def run(
        self,
        need: list[tuple[int, int, int, int, int]],
        learn_entries: int,
        prefill: bool,
        enabled: Sequence[BranchBaskets],
    ) -> list[Request]:
        learning = learn_entries > 0
        learn_stop = min(self.start + max(learn_entries, 0), self.stop)
        if learning and prefill:  # LearnPrefill: enabled branches, the learning entries only
            self.fill(self.start, enabled, learn_stop)
            self.window = (self.start, learn_stop)
            self.cluster_set = (-1, -1)
        elif learning:
            self.window = (self.start, learn_stop)
        for entry, bi, j, seek, size in need:
            key = (bi, j)
            hit = key in self.buffer
            if not hit and not (self.window[0] <= entry < self.window[1]):
                if learning and entry >= learn_stop:
                    learning = False
                if not learning:
                    self.fill(entry, self.chosen, self.stop)
                    hit = key in self.buffer
            if not hit:
                self.out.append(Request(self.m.path, seek, size, "data"))
                self.at.append(entry)
            self.flags.add(key)
            self.used.add(key)
            self.memory[bi] = j
        return self.out


def root_files(
    maps: Sequence[BasketMap],
    branches: Iterable[str] | None = None,
    *,
    cache_bytes: int | None = 0,
    autoflush: Sequence[int | None] | None = None,
    learn_entries: int = ROOT_LEARN_ENTRIES,
) -> list[Request]:
    """A ``GetEntry`` loop over files one after another (a TChain, or a loop of TFiles).
    ``learn_entries=0``: the loop adds its branches to the cache itself
    (``AddBranchToCache``): no learning phase."""
    flush = list(autoflush) if autoflush is not None else [None] * len(maps)
    return renumber(
        [
            root_getentry(m, branches, cache_bytes=cache_bytes, autoflush=a,
                          learn_entries=learn_entries)
            for m, a in zip(maps, flush, strict=True)
        ]
    )
