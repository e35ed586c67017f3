"""Basket maps: where every basket of a TTree lies in its file, from metadata only.

For one file and one tree, per branch: each basket's offset (``fBasketSeek``), on-disk size with
its key (``fBasketBytes``), entry range (``fBasketEntry``) and the length of its key header
(derived from the key's layout: no basket is read); plus the file's metadata regions that a
reader fetches when it opens the tree (header, list of keys, streamer info, the TTree record).
No basket is read or decompressed.

Arrays are compact NumPy arrays (int64 offsets and entries, int32 sizes, int16 key lengths):
about 22 bytes per basket.  :meth:`BasketMap.summary` gives a JSON-friendly digest (counts, size
quantiles, how interleaved the branches are on disk) for results that must stay small; the full
map is for replaying a reader's requests while advising.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

#: Bytes of a TKey's fixed fields: 32-bit seeks (``>ihiIhhii``) and 64-bit seeks (``>ihiIhhqq``).
KEY_FIXED_SMALL = 26
KEY_FIXED_BIG = 34
#: A TKey switches to 64-bit seeks beyond 2 GiB.
BIG_KEY_SEEK = 2**31 - 1
#: A TBasket's own header inside its key: version, buffer size, NevBufSize, NevBuf, fLast, flag.
BASKET_HEADER = 19
#: ROOT's default TTreeCache size, which its cluster-size estimate uses (bytes).
DEFAULT_CACHE_BYTES = 30_000_000


@dataclass(frozen=True)
class Region:
    """A metadata byte range of the file: ``[offset, offset + size)``."""

    name: str
    offset: int
    size: int

    @property
    def stop(self) -> int:
        return self.offset + self.size


@dataclass(frozen=True, eq=False)
class BranchBaskets:
    """One branch's baskets (free baskets only: those with their own key on disk).

    ``entries`` has one more element than ``seek``: basket ``i`` holds entries
    ``[entries[i], entries[i + 1])``.  ``embedded`` counts baskets stored inside the TTree
    record itself (the last, unwritten basket of a tree saved without a final flush); they are
    read with the tree metadata.
    """

    name: str
    index: int  # position in the tree's depth-first branch order (uproot's and ROOT's)
    seek: np.ndarray  # int64
    nbytes: np.ndarray  # int32, key included
    entries: np.ndarray  # int64, len(seek) + 1
    keylen: np.ndarray  # int16
    compressed_bytes: int  # fZipBytes (all baskets, keys excluded)
    uncompressed_bytes: int  # fTotBytes
    embedded: int = 0
    #: How the writer sized the branch (``hadd -O`` starts from them): ``fBasketSize`` (0:
    #: unknown), ``fEntryOffsetLen`` (non-zero: entries of varying size), leaves, sub-branches.
    basket_size: int = 0
    entry_offset_len: int = 0
    leaves: int = 1
    subbranches: int = 0

    @property
    def baskets(self) -> int:
        return len(self.seek)

    def baskets_for(self, entry_start: int, entry_stop: int) -> np.ndarray:
        """Indices of the baskets holding any entry of ``[entry_start, entry_stop)``."""
        if self.baskets == 0 or entry_stop <= entry_start:
            return np.zeros(0, dtype=np.int64)
        starts = self.entries[:-1]
        stops = self.entries[1:]
        return np.nonzero((stops > entry_start) & (starts < entry_stop))[0]

    def basket_at(self, entry: int) -> int:
        """The basket holding ``entry`` (-1 when none of the free baskets does)."""
        if self.baskets == 0:
            return -1
        i = int(np.searchsorted(self.entries, entry, side="right")) - 1
        return i if 0 <= i < self.baskets else -1

    @property
    def uncompressed_per_compressed(self) -> float:
        if self.compressed_bytes <= 0:
            return 1.0
        return self.uncompressed_bytes / self.compressed_bytes


@dataclass(frozen=True, eq=False)
class BasketMap:
    """Every free basket of one tree in one file, and the file's metadata regions."""

    path: str
    tree: str
    file_bytes: int
    entries: int
    branches: tuple[BranchBaskets, ...]
    clusters: np.ndarray  # int64 entry boundaries: cluster i is [clusters[i], clusters[i + 1])
    regions: tuple[Region, ...] = ()
    cluster_source: str = "autoflush"
    #: Whether uproot needs the file's streamers to read the tree (class versions it does not
    #: predefine, e.g. ROOT 6.40's TAttMarker v3); uproot then reads them once per process.
    uproot_streamers: bool | None = None
    #: The tree's ``fAutoFlush`` (entries if > 0, compressed bytes if < 0; None: unknown).
    autoflush: int | None = None
    _by_name: dict[str, BranchBaskets] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._by_name.update({b.name: b for b in self.branches})

    def branch(self, name: str) -> BranchBaskets:
        return self._by_name[name]

    def select(self, names: Iterable[str] | None) -> list[BranchBaskets]:
        """The named branches in the tree's order (all when ``names`` is None)."""
        if names is None:
            return list(self.branches)
        wanted = set(names)
        missing = wanted - set(self._by_name)
        if missing:
            raise KeyError(f"no such branch(es) in {self.tree!r}: {sorted(missing)}")
        return [b for b in self.branches if b.name in wanted]

    def head(self, entries: int) -> BasketMap:
        """The map of a read of the tree's first ``entries`` entries: each branch's baskets
        that hold any of them (the last read whole, as a reader decompresses it), the tree
        ending at ``entries``; the file and its metadata as they are.  ``self`` where
        ``entries`` covers the tree."""
        if entries >= self.entries:
            return self
        stop = max(int(entries), 0)
        cut = []
        for b in self.branches:
            n = len(b.baskets_for(0, stop))
            kept = int(b.nbytes[:n].sum()) - int(b.keylen[:n].sum())
            ends = b.entries[: n + 1].copy()
            ends[-1] = min(int(ends[-1]), stop) if n else 0
            whole = b.compressed_bytes
            cut.append(replace(
                b, seek=b.seek[:n], nbytes=b.nbytes[:n], keylen=b.keylen[:n], entries=ends,
                compressed_bytes=kept,
                uncompressed_bytes=round(b.uncompressed_bytes * kept / whole) if whole else 0,
                embedded=b.embedded if n == b.baskets and stop > int(b.entries[-1]) else 0))
        clusters = np.append(self.clusters[self.clusters < stop], stop).astype(np.int64)
        return replace(self, entries=stop, branches=tuple(cut), clusters=clusters,
                       _by_name={})

    def region(self, name: str) -> Region | None:
        for r in self.regions:
            if r.name == name:
                return r
        return None

    @property
    def baskets(self) -> int:
        return sum(b.baskets for b in self.branches)

    @property
    def basket_bytes(self) -> int:
        return sum(int(b.nbytes.sum()) for b in self.branches)

    def flat(self) -> dict[str, np.ndarray]:
        """All baskets as parallel arrays sorted by offset: branch, basket, seek, nbytes."""
        if not self.branches:
            empty = np.zeros(0, dtype=np.int64)
            return {"branch": empty, "basket": empty, "seek": empty, "nbytes": empty}
        branch = np.concatenate(
            [np.full(b.baskets, b.index, dtype=np.int32) for b in self.branches]
        )
        basket = np.concatenate([np.arange(b.baskets, dtype=np.int32) for b in self.branches])
        seek = np.concatenate([b.seek for b in self.branches])
        nbytes = np.concatenate([b.nbytes for b in self.branches])
        order = np.argsort(seek, kind="stable")
        return {
            "branch": branch[order],
            "basket": basket[order],
            "seek": seek[order],
            "nbytes": nbytes[order],
        }

    def summary(self) -> dict[str, Any]:
        """A JSON-friendly digest: counts, basket-size quantiles, interleaving on disk."""
        flat = self.flat()
        sizes = flat["nbytes"]
        n = len(sizes)
        quantiles: dict[str, int] | None = None
        if n:
            qs = np.quantile(sizes, [0.0, 0.1, 0.5, 0.9, 1.0])
            quantiles = {
                k: round(float(v))
                for k, v in zip(("min", "p10", "p50", "p90", "max"), qs, strict=True)
            }
        same_branch: float | None = None
        contiguous: float | None = None
        if n > 1:
            same_branch = float(np.mean(flat["branch"][1:] == flat["branch"][:-1]))
            ends = flat["seek"][:-1] + flat["nbytes"][:-1]
            contiguous = float(np.mean(flat["seek"][1:] == ends))
        per_branch = [b.baskets for b in self.branches]
        return {
            "path": self.path,
            "tree": self.tree,
            "file_bytes": self.file_bytes,
            "entries": self.entries,
            "branches": len(self.branches),
            "baskets": n,
            "basket_bytes": int(sizes.sum()) if n else 0,
            "baskets_per_branch": {
                "min": min(per_branch) if per_branch else 0,
                "max": max(per_branch) if per_branch else 0,
                "mean": float(np.mean(per_branch)) if per_branch else 0.0,
            },
            "embedded_baskets": sum(b.embedded for b in self.branches),
            "basket_size_bytes": quantiles,
            "clusters": max(len(self.clusters) - 1, 0),
            "cluster_source": self.cluster_source,
            # In offset order: the fraction of neighbouring baskets from the same branch
            # (1.0: each branch stored in one run; about 1/branches: fully interleaved), and
            # the fraction that touch (no gap between them).
            "same_branch_neighbours": same_branch,
            "contiguous_neighbours": contiguous,
            "regions": {r.name: [r.offset, r.size] for r in self.regions},
            "uproot_streamers": self.uproot_streamers,
        }


# --------------------------------------------------------------------------------------------
# Reading a map with uproot (metadata only)


def _string_bytes(s: str) -> int:
    n = len(s.encode())
    return 1 + n if n < 255 else 5 + n


def basket_keylen(branch_name: str, tree_name: str, seek: int, big: bool = False) -> int:
    """A TBasket key's length, from its layout (no read).

    Fixed key fields, the strings ``TBasket``, the branch's name and the tree's name, then the
    basket's own 19-byte header.  The fixed part is 8 bytes longer for 64-bit keys: beyond
    2 GiB, or everywhere when the writer uses them throughout (``big``; ROOT 6.40 does).
    """
    fixed = KEY_FIXED_BIG if big or seek > BIG_KEY_SEEK else KEY_FIXED_SMALL
    strings = _string_bytes("TBasket") + _string_bytes(branch_name) + _string_bytes(tree_name)
    return fixed + strings + BASKET_HEADER


def cluster_boundaries(tree: Any, entries: int) -> tuple[np.ndarray, str]:
    """Entry boundaries of the tree's clusters, as ROOT's ``TClusterIterator`` walks them.

    Cluster ranges (``fClusterRangeEnd`` inclusive, ``fClusterSize``) first, then
    ``fAutoFlush``; where neither applies, ROOT's estimate ``entries * cache / fZipBytes``.
    """
    if entries <= 0:
        return np.zeros(1, dtype=np.int64), "autoflush"
    autoflush = int(tree.member("fAutoFlush"))
    zip_bytes = int(tree.member("fZipBytes"))
    if autoflush > 0:
        estimated = autoflush
    elif zip_bytes <= 0:
        estimated = entries
    else:
        cache = -autoflush if autoflush < 0 else DEFAULT_CACHE_BYTES
        estimated = max(1, entries * cache // zip_bytes)
    bounds = [0]

    def add(stop: int, size: int) -> None:
        start = bounds[-1]
        size = size if size > 0 else estimated
        while start < stop:
            start = min(start + size, stop)
            bounds.append(start)

    n_ranges = int(tree.member("fNClusterRange") or 0)
    source = "autoflush" if autoflush > 0 else "estimated"
    if n_ranges > 0:
        ends = np.asarray(tree.member("fClusterRangeEnd"))[:n_ranges]
        sizes = np.asarray(tree.member("fClusterSize"))[:n_ranges]
        for end, size in zip(ends, sizes, strict=True):
            add(min(int(end) + 1, entries), int(size))
        source = "ranges"
    add(entries, autoflush if autoflush > 0 else estimated)
    return np.asarray(bounds, dtype=np.int64), source


def _streamer_objlen(file: Any, seek_info: int) -> int | None:
    """The StreamerInfo key's ``fObjlen`` (bytes 6-10 of the key header), or None if unreadable."""
    try:
        raw = file.chunk(seek_info, seek_info + 10).raw_data.tobytes()
        return int.from_bytes(raw[6:10], "big")
    except Exception:  # unreadable: the replay then models a single streamer read
        return None


def _regions(f: Any, tree_key: Any) -> tuple[Region, ...]:
    """The metadata an opening reader fetches: header, keys list, streamer info, TTree."""
    out: list[Region] = []
    file = getattr(f, "file", f)
    begin = int(getattr(file, "fBEGIN", 100))
    out.append(Region("header", 0, begin + int(getattr(file, "fNbytesName", 0) or 0)))
    directory = getattr(file, "root_directory", None)
    seek_keys = getattr(directory, "_fSeekKeys", None)
    nbytes_keys = getattr(directory, "_fNbytesKeys", None)
    if seek_keys and nbytes_keys:
        out.append(Region("keys", int(seek_keys), int(nbytes_keys)))
    seek_info = int(getattr(file, "fSeekInfo", 0) or 0)
    nbytes_info = int(getattr(file, "fNbytesInfo", 0) or 0)
    if seek_info > 0 and nbytes_info > 0:
        out.append(Region("streamers", seek_info, nbytes_info))
        # The StreamerInfo key: class TList, name StreamerInfo, title "Doubly linked list".
        fixed = KEY_FIXED_BIG if seek_info > BIG_KEY_SEEK else KEY_FIXED_SMALL
        strings = sum(_string_bytes(s) for s in ("TList", "StreamerInfo", "Doubly linked list"))
        out.append(Region("streamers_keylen", seek_info, fixed + strings))
        objlen = _streamer_objlen(file, seek_info)
        if objlen is not None:  # fObjlen of the StreamerInfo key (== payload when uncompressed)
            out.append(Region("streamers_objlen", seek_info, objlen))
    if tree_key is not None:
        out.append(Region("tree", int(tree_key.fSeekKey), int(tree_key.fNbytes)))
        out.append(Region("tree_keylen", int(tree_key.fSeekKey), int(tree_key.fKeylen)))
    return tuple(out)


def uproot_needs_streamers(tree: Any) -> bool:
    """Whether uproot built any of the tree's metadata classes from the file's streamers.

    Such classes (a version uproot does not predefine) carry their ``class_streamer``; a fresh
    uproot process reads the file's streamers to build them.  Checked on the objects, so the
    answer holds even when an earlier file in this process already built the classes.
    """
    stack: list[Any] = [tree]
    for b in tree.itervalues(recursive=True):
        stack.append(b)
        stack.extend(b.member("fLeaves"))
    seen: set[int] = set()
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if getattr(type(obj), "class_streamer", None) is not None:
            return True
        stack.extend(getattr(obj, "bases", None) or [])
    return False


def _tree_key(f: Any, tree_name: str) -> Any:
    """The TTree's key in its directory (highest cycle), or None."""
    directory, _, name = tree_name.rpartition("/")
    try:
        d = f[directory] if directory else f
        return d.key(name)
    except Exception:  # the regions are a best-effort extra
        return None


def _writes_big_keys(tree: Any) -> bool:
    """Whether the writer used 64-bit basket keys below 2 GiB: one 34-byte read, one key."""
    for b in tree.itervalues(recursive=True):
        if int(b.member("fWriteBasket")) > 0:
            try:
                key = b.basket_key(0)
            except Exception:  # unknown: assume the compact form
                return False
            return bool(int(key.fVersion) > 1000)
    return False


def from_uproot_tree(
    tree: Any, path: str, file_bytes: int, tree_key: Any = None, read_one_key: bool = True
) -> BasketMap:
    """A basket map from an open uproot TTree.

    No further I/O beyond the tree metadata, except one 34-byte read of the first basket's key
    (``read_one_key``) that tells which key format the writer used, so that every basket's key
    length can be derived rather than read.
    """
    entries = int(tree.num_entries)
    tree_name = str(tree.member("fName"))
    big = _writes_big_keys(tree) if read_one_key else False
    branches: list[BranchBaskets] = []
    for i, b in enumerate(tree.itervalues(recursive=True)):
        n = int(b.member("fWriteBasket"))
        seek = np.asarray(b.member("fBasketSeek"), dtype=np.int64)[:n].copy()
        nbytes = np.asarray(b.member("fBasketBytes"), dtype=np.int32)[:n].copy()
        entry = np.asarray(b.member("fBasketEntry"), dtype=np.int64)[: n + 1].copy()
        if len(entry) < n + 1:  # defensive: a truncated array in a damaged record
            entry = np.append(entry, [entries] * (n + 1 - len(entry))).astype(np.int64)
        keylen = np.fromiter(
            (basket_keylen(b.name, tree_name, int(s), big) for s in seek), dtype=np.int16, count=n
        )
        embedded = max(int(b.num_baskets) - n, 0)
        branches.append(
            BranchBaskets(
                name=b.name,
                index=i,
                seek=seek,
                nbytes=nbytes,
                entries=entry,
                keylen=keylen,
                compressed_bytes=int(b.member("fZipBytes")),
                uncompressed_bytes=int(b.member("fTotBytes")),
                embedded=embedded,
                basket_size=int(b.member("fBasketSize")),
                entry_offset_len=int(b.member("fEntryOffsetLen")),
                leaves=len(b.member("fLeaves")),
                subbranches=len(b.branches),
            )
        )
    clusters, source = cluster_boundaries(tree, entries)
    regions = _regions(tree.file, tree_key) if tree_key is not None else ()
    return BasketMap(
        path=path,
        tree=tree_name,
        file_bytes=file_bytes,
        entries=entries,
        branches=tuple(branches),
        clusters=clusters,
        regions=regions,
        cluster_source=source,
        uproot_streamers=uproot_needs_streamers(tree),
        autoflush=int(tree.member("fAutoFlush")),
    )


def read_basket_map(path: str, tree: str | None = None) -> BasketMap:
    """Open ``path`` with uproot and map ``tree`` (the first TTree when None).

    Reads the file header, the list of keys, the TTree record and, when uproot needs them,
    the streamers: metadata only.
    """
    import uproot  # a heavy import, only where a map is read

    with uproot.open(path) as f:
        if tree is None:
            names = [k for k, c in f.classnames().items() if c in ("TTree", "TNtuple", "TNtupleD")]
            if not names:
                raise ValueError(f"{path}: no TTree")
            tree = names[0].split(";")[0]
        t = f[tree]
        key = _tree_key(f, tree)
        return from_uproot_tree(t, path, int(f.file.source.num_bytes), key)


def read_basket_maps(paths: Sequence[str], tree: str | None = None) -> list[BasketMap]:
    return [read_basket_map(p, tree) for p in paths]


# --------------------------------------------------------------------------------------------
# Synthetic maps (tests, and layouts that a scenario would write)


def synthetic_map(
    layout: Sequence[tuple[str, int, int, int, int]],
    *,
    entries: int,
    clusters: Sequence[int] | None = None,
    tree: str = "Events",
    file_bytes: int | None = None,
    regions: Sequence[Region] = (),
    path: str = "<synthetic>",
) -> BasketMap:
    """A map from ``(branch, seek, nbytes, entry_start, entry_stop)`` rows.

    Rows of one branch must be given in entry order; branches keep the order of their first row.
    """
    order: list[str] = []
    rows: dict[str, list[tuple[int, int, int, int]]] = {}
    for name, seek, nbytes, start, stop in layout:
        if name not in rows:
            order.append(name)
            rows[name] = []
        rows[name].append((seek, nbytes, start, stop))
    branches = []
    for i, name in enumerate(order):
        r = rows[name]
        seeks = np.asarray([x[0] for x in r], dtype=np.int64)
        sizes = np.asarray([x[1] for x in r], dtype=np.int32)
        ent = np.asarray([x[2] for x in r] + [r[-1][3]], dtype=np.int64)
        keylen = np.asarray([basket_keylen(name, tree, int(x)) for x in seeks], dtype=np.int16)
        total = int(sizes.sum())
        branches.append(BranchBaskets(name, i, seeks, sizes, ent, keylen, total, total))
    end = max((int(s + n) for _, s, n, _, _ in layout), default=0)
    bounds = np.asarray(clusters if clusters is not None else [0, entries], dtype=np.int64)
    return BasketMap(
        path=path,
        tree=tree,
        file_bytes=file_bytes if file_bytes is not None else end,
        entries=entries,
        branches=tuple(branches),
        clusters=bounds,
        regions=tuple(regions),
    )
