"""Scenario layouts: the basket map a merge or a rewrite would write, from today's maps.

- :func:`fast_merge` -- ``hadd`` without ``-O`` (``TTreeCloner``): every input's baskets are
  copied as they are, input after input, each input's baskets in their order on disk (ROOT's
  default ``kSortBasketsByOffset``), packed one after the other from the end of the file
  header; entries and clusters are shifted by the entries before them (each input's clusters
  stay clusters).  The metadata (keys list, streamers, the TTree record) goes at the end; the
  TTree record grows by 12 bytes per basket (``fBasketSeek``, ``fBasketBytes`` and
  ``fBasketEntry`` entries): an approximation of its size.
- :func:`optimized_merge` -- ``hadd -O`` (no fast cloning) or a rewrite with ROOT's defaults:
  every entry is read and filled again into a new tree, by this rule (ROOT 6.40's
  ``TTree::Merge``, ``CloneTree``, ``CopyEntries``, ``Fill``, ``OptimizeBaskets`` in
  ``tree/tree/src/TTree.cxx`` and ``TBranch::Fill`` in ``tree/tree/src/TBranch.cxx``,
  https://github.com/root-project/root):

  1. The output tree is a copy of the first input's tree, emptied: it keeps that tree's
     ``fAutoFlush`` (entries if > 0; bytes if < 0, ROOT's default -30000000 where the input
     never reached 30 MB) and each branch's ``fBasketSize`` (the buffer the input's own
     writer ended with, not ROOT's 32,000).  The first input's entries are filled into it
     and the tree written (every branch's basket written at its last entry, no new cluster);
     then the other inputs' entries are filled after them, without a break.
  2. A branch's basket is written when its key, its entries, twice its offset table (4 bytes
     an entry, for entries of varying size) and one more entry reach ``fBasketSize``
     (:func:`entries_per_basket`), and at every flush.
  3. The first flush comes at ``fAutoFlush`` entries, or (negative) once the baskets written
     exceed that many compressed bytes; there ``OptimizeBaskets`` resizes every branch's
     buffer at once (:func:`optimize_baskets`: about the branch's share of the bytes written
     so far, scaled by its old buffer, plus the entry offsets of a cluster, rounded up to
     512), and ``fAutoFlush`` becomes the entries filled: a cluster every that many entries
     from the start.  A tree that never reaches its first flush keeps its buffers and one
     cluster (readers estimate its clusters from its size).
  4. Baskets are laid out in the order they are written (by the entry that closed them, then
     by branch order), each compressed at the branch's measured ratio plus its 64-bit key.

  Approximated: every entry of a branch holds its average bytes (entries of varying size
  are cut where their average would cut them), the first flush on bytes counts only full
  baskets, and the measured compression ratio is kept (larger baskets compress better: on
  ZLIB-1 floats the real file came out 13% smaller than the map says).  Not modelled: the
  TTree records ``AutoSave`` writes while the first input is filled, and ``hadd``'s batches
  when more files are open than it allows.

The maps returned are :class:`~probes.basketmap.BasketMap` like the ones read from files, so
every reader in :mod:`.readers` replays them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from hep_advisor.probes.basketmap import (
    DEFAULT_CACHE_BYTES,
    BasketMap,
    Region,
    basket_keylen,
)

#: ROOT's default basket buffer (``TTree::Branch`` bufsize), uncompressed bytes.
ROOT_BASKET_BYTES = 32_000
#: ROOT's default ``fAutoFlush``: a cluster per 30 MB of compressed baskets.
ROOT_AUTOFLUSH_BYTES = 30_000_000
#: Bytes per basket of a TTree record (``fBasketSeek`` 8, ``fBasketBytes`` 4, ``fBasketEntry`` 8,
#: less what ROOT compresses): an approximation of how the record grows with its baskets.
TREE_BYTES_PER_BASKET = 12


def _first_data(m: BasketMap) -> int:
    header = m.region("header")
    starts = [int(b.seek.min()) for b in m.branches if b.baskets]
    first = min(starts) if starts else m.file_bytes
    return min(first, header.stop) if header is not None else first


def _metadata(template: BasketMap, path: str, start: int, baskets: int
              ) -> tuple[tuple[Region, ...], int]:
    """The template's header, then its keys list, streamers and TTree record at ``start``
    (the TTree record grown by ``TREE_BYTES_PER_BASKET`` per basket beyond the template's)."""
    out: list[Region] = []
    header = template.region("header")
    if header is not None:
        out.append(header)
    pos = start
    tree_extra = max(baskets - template.baskets, 0) * TREE_BYTES_PER_BASKET
    for name in ("tree", "streamers", "keys"):  # ROOT writes the tree, then the keys, at close
        r = template.region(name)
        if r is None:
            continue
        size = r.size + (tree_extra if name == "tree" else 0)
        out.append(Region(name, pos, size))
        if name == "tree":
            keylen = template.region("tree_keylen")
            if keylen is not None:
                out.append(Region("tree_keylen", pos, keylen.size))
        if name == "streamers":
            keylen = template.region("streamers_keylen")
            if keylen is not None:
                out.append(Region("streamers_keylen", pos, keylen.size))
        pos += size
    return tuple(out), pos


def fast_merge(maps: Sequence[BasketMap], path: str = "<merged>") -> BasketMap:
    """The map of ``hadd`` (no ``-O``) merging ``maps`` in order (see the module's notes)."""
    if not maps:
        raise ValueError("nothing to merge")
    first = maps[0]
    keys = _keys(first)
    rows: dict[tuple[str, int], list[tuple[int, int, int, int]]] = {k: [] for k in keys}
    pos = _first_data(first)
    entry0 = 0
    bounds: list[int] = [0]
    for m in maps:
        flat = m.flat()
        by_index = {b.index: (b, key) for b, key in zip(m.branches, _keys(m), strict=True)}
        for bi, j, nbytes in zip(flat["branch"].tolist(), flat["basket"].tolist(),
                                 flat["nbytes"].tolist(), strict=True):
            b, key = by_index[bi]
            if key not in rows:
                continue  # a branch the first input lacks: hadd would refuse; skip it
            rows[key].append((pos, int(nbytes), entry0 + int(b.entries[j]),
                                 entry0 + int(b.entries[j + 1])))
            pos += int(nbytes)
        bounds.extend(int(c) + entry0 for c in m.clusters[1:])
        entry0 += m.entries
    if all(m.cluster_source != "ranges" and len(m.clusters) <= 2 for m in maps):
        # no input reached its first AutoFlush: no cluster ranges are recorded, and ROOT
        # estimates the clusters of the merged tree from its size (as it does for any tree)
        zipped = sum(b.compressed_bytes for m in maps for b in m.branches)
        size = max(1, entry0 * DEFAULT_CACHE_BYTES // zipped) if zipped > 0 else entry0
        bounds = sorted({*range(0, entry0, size), entry0})
    return _build(first, path, [rows[k] for k in keys], entry0,
                  np.asarray(bounds, dtype=np.int64), pos,
                  "merged")


#: ``TTree::OptimizeBaskets``' bounds on a buffer before its memory factor scales them, the
#: factor's cap, and the size above which a buffer falls back to the upper bound (ROOT 6.40).
OPT_MIN_BYTES = 512
OPT_MAX_BYTES = 256_000
OPT_MAX_FACTOR = 100.0
OPT_HARD_MIN = 8
OPT_HARD_MAX = 1 << 30
OPT_CAP_BYTES = 10_000_000
#: ``OptimizeBaskets`` rounds a buffer up to the next multiple of this (always adding one).
OPT_ROUND = 512
#: A branch of entries of varying size keeps two ``Int_t`` per entry of a cluster beside its
#: data while filling (the entry offsets; ``OptimizeBaskets`` adds them to its buffer).
OFFSET_BYTES = 8
#: ``hadd`` (ROOT 6.40) writes 64-bit keys everywhere in the files it writes.
HADD_BIG_KEYS = True


@dataclass(frozen=True)
class BranchFill:
    """What ``TTree::Fill`` needs to know of one branch to cut its baskets: the bytes an entry
    adds to the buffer (``payload``: no key, no entry offsets), the compressed over the
    uncompressed payload (``ratio``), the output key's length, the input's ``fBasketSize``,
    its ``fEntryOffsetLen`` (non-zero: entries of varying size), its leaves and sub-branches,
    and whether it holds any baskets at all (a split object's top branch may not)."""

    name: str
    payload: float
    ratio: float
    keylen: int
    basket_size: int
    offsets: int = 0
    leaves: int = 1
    subbranches: int = 0
    has_data: bool = True


def entries_per_basket(size: int, keylen: int, payload: float, offsets: int) -> int:
    """Entries ``TBranch::Fill`` puts in a basket of ``size`` bytes: it writes the basket
    once its key, its ``n`` entries, twice the offset table (4 bytes an entry, where entries
    vary in size) and one more entry would reach ``size``."""
    per = payload + (OFFSET_BYTES if offsets else 0)
    if per <= 0:
        return 1 << 62
    return max(1, math.ceil((size - keylen - payload) / per))


def optimize_baskets(fills: Sequence[BranchFill], tot: Sequence[float], entries: int,
                     autoflush: int) -> list[int]:
    """Each branch's new ``fBasketSize`` after ``TTree::OptimizeBaskets(GetTotBytes(), 1)``
    at the first AutoFlush (``entries`` filled, ``tot``: each branch's uncompressed bytes
    written so far, keys included; ``autoflush``: the tree's ``fAutoFlush`` at that moment).

    ROOT's two passes over the tree's leaves: each leaf branch's buffer becomes its old size
    times its share of the bytes over the average per leaf, times a memory factor that makes
    the buffers add up to the bytes written (at most 100); bounded by 512 B and 256 kB times
    that factor, then (second pass) grown by the entry offsets of a cluster, rounded up to
    the next multiple of 512 above, and at least one entry.  Branches with sub-branches keep
    their size; a branch is visited once per leaf (so several leaves compound)."""
    sizes = [f.basket_size for f in fills]
    tree = float(sum(tot))
    nleaves = sum(f.leaves for f in fills)
    if nleaves == 0 or tree <= 0:
        return sizes
    ave = tree / nleaves
    bmin, bmax, mem = float(OPT_MIN_BYTES), float(OPT_MAX_BYTES), 1.0
    for second in (False, True):
        newmem = 0
        for k, f in enumerate(fills):
            if f.subbranches:
                continue
            one = 1 + int(tot[k] / entries) if entries > 0 else int(ave)
            for _ in range(f.leaves):
                bsize = sizes[k] * (tot[k] / ave) * mem
                new = int(bmax if bsize < 0 or bsize > bmax else bsize)
                if second:
                    cluster = autoflush if autoflush > 0 else entries
                    if f.offsets:
                        new += cluster * OFFSET_BYTES
                    new = new - new % OPT_ROUND + OPT_ROUND
                new = max(new, one, int(bmin))
                if new > OPT_CAP_BYTES:
                    new = int(bmax)
                if second:  # TBranch::SetBasketSize's floor
                    sizes[k] = max(new, 100 + len(f.name) + f.offsets)
                newmem += new
        mem = min(tree / max(newmem, 1), OPT_MAX_FACTOR)
        lo, hi = OPT_MIN_BYTES * mem, OPT_MAX_BYTES * mem
        bmin = float(OPT_HARD_MAX if lo > OPT_HARD_MAX else max(lo, OPT_HARD_MIN))
        bmax = bmin if hi > OPT_HARD_MAX else float(int(hi))
    return sizes


def branch_fills(maps: Sequence[BasketMap], basket_bytes: int = ROOT_BASKET_BYTES
                 ) -> list[BranchFill]:
    """Each branch of the first map's tree, from the maps' totals: the payload an entry adds
    (uncompressed bytes less the keys and, where entries vary in size, the offset tables),
    the payload's compression ratio, and the writer's sizing (``basket_bytes`` where the map
    does not say)."""
    first = maps[0]
    entries = sum(m.entries for m in maps)
    by_key = [dict(zip(_keys(m), m.branches, strict=True)) for m in maps]
    out = []
    for key, b0 in zip(_keys(first), first.branches, strict=True):
        unc = zipped = 0.0
        baskets = 0
        for m, branches in zip(maps, by_key, strict=True):
            if key not in branches:
                continue
            b = branches[key]
            keys = int(b.keylen.sum())  # fTotBytes and fZipBytes count the keys
            offsets = 4 * m.entries + 8 * b.baskets if b.entry_offset_len else 0
            unc += max(b.uncompressed_bytes - keys - offsets, 0)
            zipped += max(b.compressed_bytes - keys, 0)
            baskets += b.baskets + b.embedded
        full = unc + (4 * entries + 8 * baskets if b0.entry_offset_len else 0)
        out.append(BranchFill(
            name=b0.name, payload=unc / max(entries, 1),
            ratio=zipped / full if full > 0 else 1.0,
            keylen=basket_keylen(b0.name, first.tree, 0, HADD_BIG_KEYS),
            basket_size=b0.basket_size or basket_bytes, offsets=b0.entry_offset_len,
            leaves=b0.leaves, subbranches=b0.subbranches, has_data=baskets > 0))
    return out


def _tree_autoflush(m: BasketMap) -> int:
    """The tree's ``fAutoFlush`` (from the map, else from its clusters, else ROOT's default)."""
    if m.autoflush is not None:
        return m.autoflush
    if m.cluster_source == "autoflush" and len(m.clusters) > 2:
        return int(m.clusters[1] - m.clusters[0])
    return -ROOT_AUTOFLUSH_BYTES


def _starts(lo: int, hi: int, per: int) -> range:
    return range(lo, hi, max(per, 1))


def _basket_bytes(f: BranchFill, n: int) -> float:
    """Uncompressed payload of a basket of ``n`` entries (with its offset table)."""
    return n * f.payload + (4 * n + 8 if f.offsets else 0)


def _first_flush(fills: Sequence[BranchFill], per: Sequence[int], entries: int,
                 autoflush: int) -> int | None:
    """The entry at which ``TTree::Fill`` first flushes (``None``: never): ``autoflush``
    entries, or (negative) once the baskets written exceed ``-autoflush`` compressed bytes."""
    if autoflush > 0:
        return autoflush if autoflush <= entries else None
    if autoflush == 0:
        return None
    full = np.array([f.keylen + f.ratio * _basket_bytes(f, n) if f.has_data else 0.0
                     for f, n in zip(fills, per, strict=True)])
    n_arr = np.asarray(per, dtype=np.int64)

    def written(e: int) -> float:
        return float(((e // n_arr) * full).sum())

    if written(entries) <= -autoflush:
        return None
    lo, hi = 1, entries
    while lo < hi:
        mid = (lo + hi) // 2
        if written(mid) > -autoflush:
            hi = mid
        else:
            lo = mid + 1
    return lo


#: ``hadd -j`` gives each process at least this many input files (ROOT's hadd.cxx: "each
#: process should handle at least 3 files for efficiency").
HADD_MIN_FILES_PER_PROCESS = 3


def hadd_step(inputs: int, jobs: int) -> int:
    """Input files per partial file of ``hadd -j jobs`` over ``inputs`` files, as ROOT's
    ``hadd`` splits them: ``ceil(inputs / jobs)``, at least
    :data:`HADD_MIN_FILES_PER_PROCESS` (the processes then fewer); ``inputs`` itself where
    that leaves one process (no partial files: hadd merges as without ``-j``)."""
    if jobs <= 1 or inputs <= 1:
        return max(inputs, 1)
    step = max(math.ceil(inputs / jobs), HADD_MIN_FILES_PER_PROCESS)
    return inputs if math.ceil(inputs / step) <= 1 else step


def optimized_merge(maps: Sequence[BasketMap], path: str = "<optimized>", *,
                    basket_bytes: int = ROOT_BASKET_BYTES,
                    autoflush: int | None = None, jobs: int = 1,
                    first_written: bool = True) -> BasketMap:
    """The map of ``hadd -O`` (or a rewrite with ROOT's defaults) of ``maps`` in order.

    ``autoflush``: the tree's ``fAutoFlush`` (default: the first input's, as ``hadd -O``
    keeps it); ``basket_bytes``: the buffer of a branch whose map does not give its
    ``fBasketSize``.  ``jobs``: ``hadd -j``: the inputs are split into runs of
    :func:`hadd_step` files, each merged with ``-O`` into a partial file, and the partial
    files are then merged fast (:func:`fast_merge`), as ROOT 6.40's ``hadd -j 2 -O`` was seen
    to lay them out (no basket cut at the end of a partial's first input: ``first_written``
    False; not checked further: on nano-like files the real partials held 6% more baskets
    than this); where that leaves one run, hadd merges in one process, as without ``-j``.
    See the module's notes for the rule and what is approximated.
    """
    if not maps:
        raise ValueError("nothing to merge")
    step = hadd_step(len(maps), jobs)
    if step < len(maps):
        partials = [optimized_merge(maps[i:i + step], f"{path} part {i // step}",
                                    basket_bytes=basket_bytes, autoflush=autoflush,
                                    first_written=False)
                    for i in range(0, len(maps), step)]
        return fast_merge(partials, path)
    first = maps[0]
    fills = branch_fills(maps, basket_bytes)
    entries = sum(m.entries for m in maps)
    af = _tree_autoflush(first) if autoflush is None else autoflush
    per0 = [entries_per_basket(f.basket_size, f.keylen, f.payload, f.offsets) for f in fills]
    flush = _first_flush(fills, per0, entries, af)
    # where every basket is written: the first input's end (CloneTree's tree written), the
    # first flush and every cluster after it (fAutoFlush becomes the entries at that flush)
    cuts = {first.entries if len(maps) > 1 and first_written else entries, entries}
    sizes = [f.basket_size for f in fills]
    per1 = per0
    if flush is not None:
        cuts |= set(range(flush, entries, flush))
        tot = []
        for f, n in zip(fills, per0, strict=True):
            lo_cuts = sorted({0, *(c for c in cuts if c < flush), flush})
            t = 0.0
            for lo, hi in itertools.pairwise(lo_cuts):
                for s in _starts(lo, hi, n):
                    k = min(s + n, hi) - s
                    t += (f.keylen + _basket_bytes(f, k)) if f.has_data else 0.0
            tot.append(t)
        sizes = optimize_baskets(fills, tot, flush, af)
        per1 = [entries_per_basket(sz, f.keylen, f.payload, f.offsets)
                for sz, f in zip(sizes, fills, strict=True)]
        clusters = sorted({*range(0, entries, flush), entries})
        source, tree_af = "autoflush", flush
    else:
        zipped = sum(f.ratio * _basket_bytes(f, entries) for f in fills if f.has_data)
        cache = -af if af < 0 else DEFAULT_CACHE_BYTES
        size = af if af > 0 else (max(1, int(entries * cache // zipped)) if zipped > 0
                                  else entries)
        clusters = sorted({*range(0, entries, size), entries})
        source, tree_af = ("autoflush" if af > 0 else "estimated"), af
    bounds = sorted({0, *cuts})
    # baskets as (entry that closes it, branch, start, stop)
    written: list[tuple[int, int, int, int]] = []
    for k, f in enumerate(fills):
        if not f.has_data:
            continue
        for lo, hi in itertools.pairwise(bounds):
            n = per0[k] if flush is None or hi <= flush else per1[k]
            for s in _starts(lo, hi, n):
                e = min(s + n, hi)
                written.append((e, k, s, e))
    written.sort()
    rows: list[list[tuple[int, int, int, int]]] = [[] for _ in fills]
    pos = _first_data(first)
    for _, k, s, e in written:
        f = fills[k]
        size = f.keylen + max(1, round(f.ratio * _basket_bytes(f, e - s)))
        rows[k].append((pos, size, s, e))
        pos += size
    for r in rows:  # entry order per branch
        r.sort(key=lambda x: x[2])
    return _build(first, path, rows, entries, np.asarray(clusters, dtype=np.int64), pos,
                  source, big=HADD_BIG_KEYS, sizes=sizes, autoflush=tree_af)


def _keys(m: BasketMap) -> list[tuple[str, int]]:
    """Each branch as (name, how many before it share the name): split objects repeat
    member names (``items`` in two objects), so a name alone does not tell branches apart."""
    seen: dict[str, int] = {}
    out = []
    for b in m.branches:
        out.append((b.name, seen.get(b.name, 0)))
        seen[b.name] = out[-1][1] + 1
    return out


def _build(template: BasketMap, path: str, rows: Sequence[list[tuple[int, int, int, int]]],
           entries: int, clusters: np.ndarray, data_end: int, source: str, *, big: bool = False,
           sizes: Sequence[int] | None = None, autoflush: int | None = None) -> BasketMap:
    branches = []
    total = 0
    for i, (old, r) in enumerate(zip(template.branches, rows, strict=True)):
        name = old.name
        seeks = np.asarray([x[0] for x in r], dtype=np.int64)
        sizes_ = np.asarray([x[1] for x in r], dtype=np.int32)
        ent = np.asarray([x[2] for x in r] + ([r[-1][3]] if r else [0]), dtype=np.int64)
        keylen = np.asarray([basket_keylen(name, template.tree, int(s), big) for s in seeks],
                            dtype=np.int16)
        zipped = int(sizes_.sum())  # fZipBytes and fTotBytes count the keys
        unc = round(zipped * old.uncompressed_per_compressed)
        branches.append(replace(old, index=i, seek=seeks, nbytes=sizes_, entries=ent,
                                keylen=keylen, compressed_bytes=zipped,
                                uncompressed_bytes=unc, embedded=0,
                                basket_size=old.basket_size if sizes is None else sizes[i]))
        total += len(r)
    regions, end = _metadata(template, path, data_end, total)
    return BasketMap(path=path, tree=template.tree, file_bytes=end, entries=entries,
                     branches=tuple(branches), clusters=clusters, regions=regions,
                     cluster_source=source, uproot_streamers=template.uproot_streamers,
                     autoflush=template.autoflush if autoflush is None else autoflush)


def groups(maps: Sequence[BasketMap], per_output: int, files: int | None = None
           ) -> list[list[BasketMap]]:
    """The inputs of each merged file when ``files`` files (default: the maps) are merged
    ``per_output`` at a time; with fewer maps than files (a sample), the maps stand in for the
    files in turn."""
    n = len(maps) if files is None else files
    k = max(1, per_output)
    if not maps or n <= 0:
        return []
    order = [maps[i % len(maps)] for i in range(n)]
    return [order[i:i + k] for i in range(0, n, k)]
