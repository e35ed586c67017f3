"""Scenario layouts: the basket map a merge or a rewrite would write, from today's maps.

- :func:`fast_merge` -- ``hadd`` without ``-O`` (``TTreeCloner``): every input's baskets are
  copied as they are, input after input, each input's baskets in their order on disk (ROOT's
  default ``kSortBasketsByOffset``), packed one after the other from the end of the file
  header; entries and clusters are shifted by the entries before them (each input's clusters
  stay clusters).  The metadata (keys list, streamers, the TTree record) goes at the end; the
  TTree record grows by 12 bytes per basket (``fBasketSeek``, ``fBasketBytes`` and
  ``fBasketEntry`` entries): an approximation of its size.
- :func:`optimized_merge` -- ``hadd -O`` or a rewrite with ROOT's defaults: the entries are
  filled again into a new tree.  Approximated: clusters close at ROOT's default AutoFlush
  (30 MB of compressed baskets, ``-30000000``) or at ``autoflush`` entries; within a cluster a
  branch's basket is written when its buffer (``basket_bytes`` uncompressed, ROOT's default
  32,000) fills, and every branch's last basket when the cluster closes; baskets are laid out
  in the order they are written (by the entry that closed them, then by branch order), each
  compressed at the branch's measured ratio plus its key.  ``hadd -O`` clones the first
  input's tree, so that input's baskets come first, copied as they are, and the refill starts
  after its entries.  Not modelled: ``OptimizeBaskets`` resizing the buffers at the first flush,
  and larger baskets compressing better (the measured ratio is kept: on ZLIB-1 floats the
  real file came out 13% smaller than the map says).

The maps returned are :class:`~probes.basketmap.BasketMap` like the ones read from files, so
every reader in :mod:`.readers` replays them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from probes.basketmap import (
    DEFAULT_CACHE_BYTES,
    BasketMap,
    BranchBaskets,
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
    names = [b.name for b in first.branches]
    rows: dict[str, list[tuple[int, int, int, int]]] = {n: [] for n in names}
    pos = _first_data(first)
    entry0 = 0
    bounds: list[int] = [0]
    for m in maps:
        flat = m.flat()
        by_index = {b.index: b for b in m.branches}
        for bi, j, nbytes in zip(flat["branch"].tolist(), flat["basket"].tolist(),
                                 flat["nbytes"].tolist(), strict=True):
            b = by_index[bi]
            if b.name not in rows:
                continue  # a branch the first input lacks: hadd would refuse; skip it
            rows[b.name].append((pos, int(nbytes), entry0 + int(b.entries[j]),
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
    return _build(first, path, names, rows, entry0, np.asarray(bounds, dtype=np.int64), pos,
                  "merged")


def optimized_merge(maps: Sequence[BasketMap], path: str = "<optimized>", *,
                    basket_bytes: int = ROOT_BASKET_BYTES,
                    autoflush: int | None = None, jobs: int = 1,
                    clone_first: bool = True) -> BasketMap:
    """The map of ``hadd -O`` (or a rewrite with ROOT's defaults) of ``maps`` in order.

    ``autoflush``: entries per cluster (default: ROOT's 30 MB rule on the compressed bytes).
    ``jobs``: ``hadd -j``: the inputs are split into ``jobs`` even runs, each merged with
    ``-O`` into a partial file (no input cloned: every basket refilled), and the partial files
    are then merged fast (:func:`fast_merge`), as ROOT 6.40's ``hadd -j 2 -O`` was seen to
    lay them out.  ``clone_first``: the first input's baskets copied as they are (``hadd -O``
    without ``-j``).  See the module's notes for what is approximated.
    """
    if not maps:
        raise ValueError("nothing to merge")
    if jobs > 1 and len(maps) > 1:
        per = math.ceil(len(maps) / min(jobs, len(maps)))
        partials = [optimized_merge(maps[i:i + per], f"{path} part {i // per}",
                                    basket_bytes=basket_bytes, autoflush=autoflush,
                                    clone_first=False)
                    for i in range(0, len(maps), per)]
        return fast_merge(partials, path)
    first = maps[0]
    names = [b.name for b in first.branches]
    entries = sum(m.entries for m in maps)
    # per branch: uncompressed and on-disk (keys excluded) bytes per entry, over the inputs
    unc = np.zeros(len(names))
    zipped = np.zeros(len(names))
    for m in maps:
        for k, name in enumerate(names):
            try:
                b = m.branch(name)
            except KeyError:
                continue
            keys = int(b.keylen.sum())  # fTotBytes and fZipBytes count the keys
            unc[k] += max(b.uncompressed_bytes - keys, 0)
            zipped[k] += max(b.compressed_bytes - keys, 0)
    per_entry_unc = unc / max(entries, 1)
    ratio = np.where(unc > 0, zipped / np.maximum(unc, 1), 1.0)
    if autoflush is None or autoflush <= 0:
        per_entry_zip = float(zipped.sum()) / max(entries, 1)
        autoflush = max(1, math.ceil(ROOT_AUTOFLUSH_BYTES / per_entry_zip)) \
            if per_entry_zip > 0 else entries
    # hadd -O clones the first input's tree: its baskets are copied as they are, first
    copied = fast_merge([first])
    rows: dict[str, list[tuple[int, int, int, int]]] = {
        b.name: [(int(s), int(n), int(e0), int(e1)) for s, n, e0, e1 in
                 zip(b.seek, b.nbytes, b.entries[:-1], b.entries[1:], strict=True)]
        for b in copied.branches}
    pos = max((r[0] + r[1] for v in rows.values() for r in v), default=_first_data(first))
    start = first.entries if len(maps) > 1 and clone_first else 0
    if start == 0:
        rows = {n: [] for n in names}
        pos = _first_data(first)
    clusters = sorted({*range(0, entries, autoflush), entries})
    bounds = sorted({*clusters, start})  # the copied input's baskets end at ``start``
    # baskets as (entry that closes it, branch, start, stop)
    written: list[tuple[int, int, int, int]] = []
    for k in range(len(names)):
        per = max(1, int(basket_bytes // per_entry_unc[k])) if per_entry_unc[k] > 0 else entries
        for lo, hi in itertools.pairwise(bounds):
            if hi <= start:
                continue
            for s in range(max(lo, start), hi, per):
                e = min(s + per, hi)
                written.append((e, k, s, e))
    written.sort()
    for _, k, s, e in written:
        keylen = basket_keylen(names[k], first.tree, pos)
        size = round((e - s) * per_entry_unc[k] * ratio[k]) + keylen
        rows[names[k]].append((pos, size, s, e))
        pos += size
    for k in range(len(names)):  # entry order per branch
        rows[names[k]].sort(key=lambda r: r[2])
    return _build(first, path, names, rows, entries, np.asarray(clusters, dtype=np.int64), pos,
                  "optimized")


def _build(template: BasketMap, path: str, names: Sequence[str],
           rows: dict[str, list[tuple[int, int, int, int]]], entries: int,
           clusters: np.ndarray, data_end: int, source: str) -> BasketMap:
    branches = []
    total = 0
    for i, name in enumerate(names):
        r = rows[name]
        seeks = np.asarray([x[0] for x in r], dtype=np.int64)
        sizes = np.asarray([x[1] for x in r], dtype=np.int32)
        ent = np.asarray([x[2] for x in r] + ([r[-1][3]] if r else [0]), dtype=np.int64)
        keylen = np.asarray([basket_keylen(name, template.tree, int(s)) for s in seeks],
                            dtype=np.int16)
        zipped = int(sizes.sum())  # fZipBytes and fTotBytes count the keys
        old = template.branch(name)
        unc = round(zipped * old.uncompressed_per_compressed)
        branches.append(BranchBaskets(name, i, seeks, sizes, ent, keylen, zipped, unc))
        total += len(r)
    regions, end = _metadata(template, path, data_end, total)
    return BasketMap(path=path, tree=template.tree, file_bytes=end, entries=entries,
                     branches=tuple(branches), clusters=clusters, regions=regions,
                     cluster_source=source, uproot_streamers=template.uproot_streamers)


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
