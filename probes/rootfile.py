"""Read one ROOT file's metadata: its trees, branches, baskets, clusters and compression.

Metadata only: the TTree and TBranch records (which list every basket's size and position) and,
per tree, the 9-byte compression header of one stored basket.  No basket is decompressed (a
branch whose baskets uproot cannot interpret is still probed: its type is then read from its
leaves).  RNTuples are read from their header, footer and page lists
(:mod:`hep_advisor.probes.rntuple`). The time to open the file and read its trees' metadata is
recorded: it is the per-file overhead.

Old TTree class versions lack members that newer ones have (version 5 has no fAutoFlush and no
cluster ranges).  A missing member is unknown, never a refusal: where ROOT reads such a tree it
keeps its constructor's default (fAutoFlush -30000000, no ranges), and so does this module, so
the clusters are ROOT's own estimate; the tree's ``notes`` say which members were missing.
"""

from __future__ import annotations

import os
import struct
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from .results import Algorithm, AlgorithmSource, ClusterSource, TreeFormat
from .rntuple import OLD_RNTUPLE_CLASSES, RNTUPLE_CLASS, RNTupleMeta, main_setting, read_rntuple
from .ttreemeta import FastTree, read_tree

TREE_CLASSES = ("TTree", "TNtuple", "TNtupleD")
#: ROOT's TTree constructor sets fAutoFlush to -30000000 (flush at 30 MB): what an old class
#: version without the member keeps when ROOT reads it.
DEFAULT_AUTOFLUSH = -30_000_000

#: ROOT's compression algorithm codes (setting // 100) and the 2-byte basket header tags.
ALGORITHM_CODES: dict[int, Algorithm] = {
    0: "ZLIB", 1: "ZLIB", 2: "LZMA", 3: "OLD", 4: "LZ4", 5: "ZSTD",
}
HEADER_TAGS: dict[bytes, Algorithm] = {
    b"ZL": "ZLIB", b"XZ": "LZMA", b"L4": "LZ4", b"ZS": "ZSTD", b"CS": "OLD",
}
#: ROOT's default TTreeCache size, which its cluster-size estimate uses.
DEFAULT_CACHE_BYTES = 30_000_000
#: How many of a tree's largest branches have one basket header read for the algorithm.
HEADER_PROBES = 8


class FileProblem(Exception):
    """A file that cannot be used; the message is the one-line cause."""


@dataclass(frozen=True)
class BranchMeta:
    name: str
    typename: str
    compressed_bytes: int
    uncompressed_bytes: int
    baskets: int
    basket_bytes: int  # on-disk bytes of the written baskets (keys included)
    fields: int | None = None  # RNTuple: this field and its subfields
    columns: int | None = None  # RNTuple: its physical columns and its subfields'


@dataclass(frozen=True)
class TreeMeta:
    name: str
    entries: int
    branches: tuple[BranchMeta, ...]
    compressed_bytes: int
    uncompressed_bytes: int
    cluster_sizes: tuple[tuple[int, int], ...]  # (entries per cluster, number of such clusters)
    cluster_source: ClusterSource
    algorithm: Algorithm | None
    algorithm_source: AlgorithmSource
    setting: int | None
    format: TreeFormat = "ttree"
    autoflush: int | None = None  # None: an RNTuple, or a class version without fAutoFlush
    notes: tuple[str, ...] = ()
    rntuple: RNTupleMeta | None = None


@dataclass(frozen=True)
class FileMeta:
    path: str
    size_bytes: int
    open_s: float | None  # None when the fast reader read a TTree (not uproot's open time)
    compression_setting: int | None
    trees: tuple[TreeMeta, ...]


def check_header(path: str, size_bytes: int) -> None:
    """Cheap checks that give precise causes before uproot gives a generic one."""
    if size_bytes == 0:
        raise FileProblem("empty file (0 bytes)")
    if "://" in path:  # a remote file (probes.remote_files): its first bytes over the link
        from .remote_files import read_head

        head = read_head(path, 64)
    else:
        with open(path, "rb") as fh:
            head = fh.read(64)
    if head[:4] != b"root":
        kind = "text" if _looks_like_text(head) else "binary data"
        raise FileProblem(f"not a ROOT file (no 'root' signature; looks like {kind})")
    if len(head) < 20:
        raise FileProblem(f"truncated: only {len(head)} bytes, shorter than a ROOT file header")
    version = struct.unpack(">i", head[4:8])[0]
    if version >= 1000000:
        end = struct.unpack(">q", head[12:20])[0]
    else:
        end = struct.unpack(">i", head[12:16])[0]
    if end > size_bytes:
        raise FileProblem(f"truncated: the header says {end} bytes, the file has {size_bytes}")


def _looks_like_text(data: bytes) -> bool:
    if not data:
        return False
    printable = sum(32 <= c < 127 or c in (9, 10, 13) for c in data)
    return printable / len(data) > 0.95


def one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = text[0].strip() if text else ""
    first = first or type(exc).__name__
    return first if len(first) <= 160 else first[:157] + "..."


def inspect_file(path: str, size_bytes: int | None = None, fast: bool = False) -> FileMeta:
    """Open ``path`` with uproot and read its trees' metadata.  Raises :class:`FileProblem`.

    ``fast``: read the TTree records with :mod:`hep_advisor.probes.ttreemeta` (the members the probe
    needs only; uproot's full reader where it does not know the layout).  The figures are the same;
    the branch types may be named more plainly, and the file's ``open_s`` is then ``None``, as
    it no longer measures what a reader's open costs.
    """
    import uproot  # heavy: imported where needed

    if size_bytes is None:
        size_bytes = os.stat(path).st_size
    check_header(path, size_bytes)
    t0 = time.perf_counter()
    try:
        f = uproot.open(path)
    except Exception as exc:
        raise FileProblem(f"cannot open as ROOT file: {one_line(exc)}") from None
    try:
        try:
            classes = f.classnames(cycle=False, recursive=True)
        except Exception as exc:
            raise FileProblem(f"damaged directory of keys: {one_line(exc)}") from None
        trees = []
        used_fast = False
        for name, classname in classes.items():
            if classname not in TREE_CLASSES and classname != RNTUPLE_CLASS:
                continue
            try:
                tree = _fast_tree(f, name) if fast and classname in TREE_CLASSES else None
                used_fast = used_fast or tree is not None
                trees.append((name, classname, tree if tree is not None else f[name]))
            except Exception as exc:
                kind = "RNTuple" if classname == RNTUPLE_CLASS else "TTree"
                raise FileProblem(f"damaged {kind} metadata in {name.split(';')[0]!r}: "
                                  f"{one_line(exc)}") from None
        # the open: the file, its keys and the TTree records; an RNTuple's header, footer and
        # page lists are read below, on first use, as a reader reads them, and are added
        open_s = time.perf_counter() - t0
        if not trees:
            raise FileProblem(_no_tree_cause(classes))
        setting = _int_or_none(getattr(f.file, "fCompress", None))
        metas = []
        for name, classname, tree in trees:
            kind = "RNTuple" if classname == RNTUPLE_CLASS else "TTree"
            try:
                if classname == RNTUPLE_CLASS:
                    t1 = time.perf_counter()
                    metas.append(_rntuple_meta(name, tree))
                    open_s += time.perf_counter() - t1
                else:
                    metas.append(_tree_meta(name, tree, path, setting))
            except FileProblem:
                raise
            except Exception as exc:
                raise FileProblem(f"damaged {kind} metadata in {name.split(';')[0]!r}: "
                                  f"{one_line(exc)}") from None
    finally:
        f.close()
    return FileMeta(
        path=path,
        size_bytes=size_bytes,
        open_s=None if used_fast else open_s,
        compression_setting=setting,
        trees=tuple(metas),
    )


def _fast_tree(f: Any, name: str) -> FastTree | None:
    """The TTree ``name`` read by the fast reader, or None where it does not know the layout."""
    try:
        key = f.key(name)
        chunk, cursor = key.get_uncompressed_chunk_cursor()
        data = chunk.get(cursor.index, cursor.index + key.fObjlen, cursor, {})
        return read_tree(bytes(data), int(key.fKeylen))
    except Exception:  # Unsupported, or anything odd: uproot's reader decides
        return None


def _no_tree_cause(names: dict[str, str]) -> str:
    classes = sorted(set(names.values()))
    if any(c in OLD_RNTUPLE_CLASSES for c in classes):
        return ("holds an RNTuple of the pre-release format (ROOT 6.22-6.32), which uproot "
                "cannot read; rewrite it with ROOT >= 6.34")
    if classes:
        shown = ", ".join(classes[:4]) + (", ..." if len(classes) > 4 else "")
        return f"no TTree or RNTuple in this file (it holds {shown})"
    return "no TTree or RNTuple in this file (it is empty)"


def _int_or_none(x: Any) -> int | None:
    try:
        return int(x)
    except (TypeError, ValueError):
        return None


def _member(obj: Any, name: str) -> Any:
    """A streamed member, or None where this class version does not have it."""
    return obj.member(name, none_if_missing=True)


#: Branch members the probe reads; an old class version may lack some.
_BRANCH_MEMBERS = ("fWriteBasket", "fBasketBytes", "fZipBytes", "fTotBytes")


def _tree_meta(name: str, tree: Any, path: str, file_setting: int | None) -> TreeMeta:
    entries = int(tree.num_entries)
    if entries < 0:
        raise FileProblem(f"damaged TTree metadata in {name!r}: negative entry count")
    notes: list[str] = []
    branches = []
    written: list[tuple[int, bool, Any]] = []
    missing_branch: set[str] = set()
    uninterpreted = 0
    embedded = 0
    for b in tree.itervalues(recursive=True):
        values = {m: _member(b, m) for m in _BRANCH_MEMBERS}
        missing_branch.update(m for m, v in values.items() if v is None)
        n = int(values["fWriteBasket"] or 0)
        basket_bytes = np.asarray(values["fBasketBytes"] if n else [], dtype=np.int64)[:n]
        zip_bytes = int(values["fZipBytes"] or 0)
        typename, interpreted = _typename(b)
        uninterpreted += not interpreted
        if n == 0 and _has_embedded_baskets(b):
            embedded += 1
        branches.append(
            BranchMeta(
                name=b.name,
                typename=typename,
                compressed_bytes=zip_bytes,
                uncompressed_bytes=int(values["fTotBytes"] or 0),
                baskets=n,
                basket_bytes=int(basket_bytes.sum()),
            )
        )
        if n > 0 and _member(b, "fBasketSeek") is not None:
            # a branch stored smaller than its content proves compression: probe those first
            shrunk = 0 < zip_bytes < int(values["fTotBytes"] or 0)
            written.append((zip_bytes, shrunk, b))
    version = getattr(tree, "class_version", None)
    of_version = f"TTree class version {version}" if version is not None else "this TTree"
    missing_tree = [m for m in ("fAutoFlush", "fNClusterRange") if not tree.has_member(m)]
    if missing_tree:
        notes.append(f"{of_version} has no {' or '.join(missing_tree)}: unknown (null); "
                     "clusters are ROOT's own estimate, as ROOT reads such a tree")
    if missing_branch:
        notes.append(f"its branches lack {', '.join(sorted(missing_branch))}: counted as 0")
    if uninterpreted:
        notes.append(f"{uninterpreted} branch(es) of a type uproot cannot interpret: probed from "
                     "metadata, type read from the leaves")
    if embedded:
        notes.append(f"{embedded} branch(es) keep their baskets inside the TTree record (never "
                     "flushed to their own keys): not in the tree's bytes, as ROOT counts them")
    sizes, source = cluster_layout(tree, entries)
    written.sort(key=lambda zb: (not zb[1], -zb[0]))
    algorithm, alg_source, setting = _compression(
        path, [b for _, _, b in written[:HEADER_PROBES]], file_setting
    )
    tree_zip = _member(tree, "fZipBytes")
    tree_tot = _member(tree, "fTotBytes")
    autoflush = _member(tree, "fAutoFlush")
    return TreeMeta(
        name=name.split(";")[0],
        entries=entries,
        branches=tuple(branches),
        compressed_bytes=int(tree_zip if tree_zip is not None else
                             sum(b.compressed_bytes for b in branches)),
        uncompressed_bytes=int(tree_tot if tree_tot is not None else
                               sum(b.uncompressed_bytes for b in branches)),
        cluster_sizes=sizes,
        cluster_source=source,
        algorithm=algorithm,
        algorithm_source=alg_source,
        setting=setting,
        format="ttree",
        autoflush=None if autoflush is None else int(autoflush),
        notes=tuple(notes),
    )


#: C++ types of TTree leaf classes, for branches whose type uproot cannot interpret.
_LEAF_TYPES = {
    "TLeafO": "bool", "TLeafB": "int8_t", "TLeafS": "int16_t", "TLeafI": "int32_t",
    "TLeafL": "int64_t", "TLeafF": "float", "TLeafD": "double", "TLeafC": "char*",
    "TLeafG": "long", "TLeafF16": "Float16_t", "TLeafD32": "Double32_t",
}


def _typename(branch: Any) -> tuple[str, bool]:
    """The branch's type as uproot interprets it, and whether it could; where it cannot, the
    type its metadata names (the class of a TBranchElement, or its first leaf's type)."""
    try:
        return str(branch.typename), True
    except Exception:
        pass
    for member in ("fClassName",):
        value = _member(branch, member)
        if value:
            return str(value), False
    try:
        leaves = branch.member("fLeaves")
        leaf = leaves[0] if len(leaves) else None
    except Exception:
        leaf = None
    if leaf is not None:
        typename = _member(leaf, "fTypeName")
        if typename:
            return str(typename), False
        return _LEAF_TYPES.get(type(leaf).__name__.split("_v")[0].replace("Model_", ""),
                               "unknown"), False
    return "unknown", False


def _has_embedded_baskets(branch: Any) -> bool:
    try:
        return bool(branch.embedded_baskets)
    except Exception:
        return False


def _rntuple_meta(name: str, ntuple: Any) -> TreeMeta:
    read = read_rntuple(ntuple)
    setting = main_setting(read.meta.settings)
    counts: dict[int, int] = {}
    for n in read.cluster_entries:
        counts[n] = counts.get(n, 0) + 1
    notes = []
    if len(read.meta.settings) > 1:
        shown = ", ".join(str(k) for k in sorted(read.meta.settings))
        notes.append(f"columns compressed with several settings ({shown}): the one of most "
                     "bytes is shown")
    return TreeMeta(
        name=name.split(";")[0],
        entries=read.entries,
        branches=tuple(
            BranchMeta(
                name=f.name,
                typename=f.typename,
                compressed_bytes=f.compressed_bytes,
                uncompressed_bytes=f.uncompressed_bytes,
                baskets=f.pages,
                basket_bytes=f.compressed_bytes,
                fields=f.fields,
                columns=f.columns,
            )
            for f in read.fields
        ),
        compressed_bytes=read.compressed_bytes,
        uncompressed_bytes=read.uncompressed_bytes,
        cluster_sizes=tuple(sorted(counts.items())),
        cluster_source="rntuple",
        algorithm=setting_algorithm(setting),
        algorithm_source="page-list",
        setting=setting,
        format="rntuple",
        autoflush=None,
        notes=tuple(notes),
        rntuple=read.meta,
    )


def cluster_layout(
    tree: Any, entries: int
) -> tuple[tuple[tuple[int, int], ...], ClusterSource]:
    """The tree's clusters as ``((entries_per_cluster, count), ...)`` and where they came from.

    Follows ROOT's ``TTree::TClusterIterator``: the ranges (``fClusterRangeEnd`` is the last
    entry of a range, inclusive; ``fClusterSize`` its cluster size) first, then ``fAutoFlush``
    for the rest of the tree.  Where neither applies (``fAutoFlush <= 0``: a tree that never
    reached its first flush, as small files and uproot-written trees are), ROOT estimates the
    cluster size as ``entries * cache / fZipBytes`` (``TTree::GetEstimatedClusterSize``), and so
    does this function (source ``estimated``).
    """
    if entries == 0:
        return (), "autoflush"
    counts: dict[int, int] = {}
    source: ClusterSource

    def add(start: int, stop: int, size: int) -> None:
        length = stop - start
        if length <= 0:
            return
        if size <= 0 or size >= length:
            counts[length] = counts.get(length, 0) + 1
            return
        full, rest = divmod(length, size)
        counts[size] = counts.get(size, 0) + full
        if rest:
            counts[rest] = counts.get(rest, 0) + 1

    raw_autoflush = _member(tree, "fAutoFlush")
    autoflush = DEFAULT_AUTOFLUSH if raw_autoflush is None else int(raw_autoflush)
    zip_bytes = int(_member(tree, "fZipBytes") or 0)
    estimated = _estimated_cluster_size(entries, autoflush, zip_bytes)
    n_ranges = int(_member(tree, "fNClusterRange") or 0)
    if n_ranges > 0:
        ends = np.asarray(tree.member("fClusterRangeEnd"))[:n_ranges]
        sizes = np.asarray(tree.member("fClusterSize"))[:n_ranges]
        start = 0
        for end, size in zip(ends, sizes, strict=True):
            stop = min(int(end) + 1, entries)
            add(start, stop, int(size) if int(size) > 0 else estimated)
            start = stop
        if start < entries:
            add(start, entries, autoflush if autoflush > 0 else estimated)
        source = "ranges"
    elif autoflush > 0:
        add(0, entries, autoflush)
        source = "autoflush"
    else:
        add(0, entries, estimated)
        source = "estimated"
    return tuple(sorted(counts.items())), source


def _estimated_cluster_size(entries: int, autoflush: int, zip_bytes: int) -> int:
    """ROOT's ``TTree::GetEstimatedClusterSize`` for a tree opened with its default cache.

    A positive fAutoFlush is the answer; otherwise ``entries * cache / fZipBytes``, where the
    cache ROOT sets up for the cluster iterator is ``-fAutoFlush`` bytes (30 MB by default);
    with fZipBytes 0 (baskets never written to their own keys) ROOT takes ``entries - 1``.
    ``fAutoFlush == 0`` (flushing disabled) makes ROOT size its cache from the cluster ranges;
    that rare case is approximated with the 30 MB default.
    """
    if autoflush > 0:
        return autoflush
    if zip_bytes <= 0:
        return max(entries - 1, 1)
    cache = -autoflush if autoflush < 0 else DEFAULT_CACHE_BYTES
    return max(1, entries * cache // zip_bytes)


def _compression(
    path: str, branches: list[Any], file_setting: int | None
) -> tuple[Algorithm | None, AlgorithmSource, int | None]:
    """The algorithm in the stored baskets, and the compression setting.

    Reads the header of the largest basket of each of the given branches (the caller puts
    first those stored smaller than their content, then the largest): the first compressed one
    names the algorithm.  ROOT and uproot store a basket uncompressed when
    compression would not shrink it, so one uncompressed basket proves little; only when all
    of them are stored uncompressed is the tree reported as ``none``.
    """
    setting = file_setting
    if branches:
        b_setting = _int_or_none(_member(branches[0], "fCompress"))
        if b_setting is not None and b_setting > 0:
            setting = b_setting
    from_setting = setting_algorithm(setting)
    uncompressed = 0
    try:
        with open(path, "rb") as fh:
            for branch in branches:
                tag = _basket_tag(fh, branch)
                if tag in HEADER_TAGS:
                    return HEADER_TAGS[tag], "basket-header", setting
                if tag == b"":
                    uncompressed += 1
    except OSError:
        pass
    if branches and uncompressed == len(branches):
        return "none", "basket-header", setting
    return from_setting, "file-setting", setting


def _basket_tag(fh: Any, branch: Any) -> bytes | None:
    """The 2-byte compression tag of the branch's largest basket; ``b""`` when that basket is
    stored uncompressed, ``None`` when it cannot be read."""
    n = int(branch.member("fWriteBasket"))
    sizes = np.asarray(branch.member("fBasketBytes"))[:n]
    if n == 0:
        return None
    i = int(np.argmax(sizes))
    fh.seek(int(np.asarray(branch.member("fBasketSeek"))[i]))
    head = fh.read(512)
    try:
        nbytes, _version, objlen = struct.unpack(">ihi", head[:10])
        keylen = struct.unpack(">h", head[14:16])[0]
    except struct.error:
        return None
    if nbytes - keylen == objlen:
        return b""
    tag = head[keylen : keylen + 2]
    return bytes(tag) if len(tag) == 2 else None


def setting_algorithm(setting: int | None) -> Algorithm | None:
    if setting is None or setting < 0:
        return None
    if setting % 100 == 0:
        return "none"
    return ALGORITHM_CODES.get(setting // 100)
