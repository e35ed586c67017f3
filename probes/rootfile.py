"""Read one ROOT file's metadata: its trees, branches, baskets, clusters and compression.

Metadata only: the TTree and TBranch records (which list every basket's size and position) and,
per tree, the 9-byte compression header of one stored basket.  No basket is decompressed.  The
time to open the file and read its trees' metadata is recorded: it is the per-file overhead.
"""

from __future__ import annotations

import os
import struct
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from .results import Algorithm, AlgorithmSource, ClusterSource

TREE_CLASSES = ("TTree", "TNtuple", "TNtupleD")

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


@dataclass(frozen=True)
class FileMeta:
    path: str
    size_bytes: int
    open_s: float
    compression_setting: int | None
    trees: tuple[TreeMeta, ...]


def check_header(path: str, size_bytes: int) -> None:
    """Cheap checks that give precise causes before uproot gives a generic one."""
    if size_bytes == 0:
        raise FileProblem("empty file (0 bytes)")
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


def inspect_file(path: str, size_bytes: int | None = None) -> FileMeta:
    """Open ``path`` with uproot and read its trees' metadata.  Raises :class:`FileProblem`."""
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
            names = f.keys(filter_classname=list(TREE_CLASSES), cycle=False, recursive=True)
            trees = [(name, f[name]) for name in names]
        except Exception as exc:
            raise FileProblem(f"damaged TTree metadata: {one_line(exc)}") from None
        open_s = time.perf_counter() - t0
        if not trees:
            raise FileProblem(_no_tree_cause(f))
        setting = _int_or_none(getattr(f.file, "fCompress", None))
        metas = []
        for name, tree in trees:
            try:
                metas.append(_tree_meta(name, tree, path, setting))
            except FileProblem:
                raise
            except Exception as exc:
                raise FileProblem(f"damaged TTree metadata in {name!r}: {one_line(exc)}") from None
    finally:
        f.close()
    return FileMeta(
        path=path,
        size_bytes=size_bytes,
        open_s=open_s,
        compression_setting=setting,
        trees=tuple(metas),
    )


def _no_tree_cause(f: Any) -> str:
    try:
        classes = sorted(set(f.classnames(cycle=False, recursive=True).values()))
    except Exception:
        classes = []
    if any("RNTuple" in c for c in classes):
        return "holds an RNTuple, not a TTree (RNTuple is not probed yet)"
    if classes:
        shown = ", ".join(classes[:4]) + (", ..." if len(classes) > 4 else "")
        return f"no TTree in this file (it holds {shown})"
    return "no TTree in this file (it is empty)"


def _int_or_none(x: Any) -> int | None:
    try:
        return int(x)
    except (TypeError, ValueError):
        return None


def _tree_meta(name: str, tree: Any, path: str, file_setting: int | None) -> TreeMeta:
    entries = int(tree.num_entries)
    branches = []
    written: list[tuple[int, Any]] = []
    for b in tree.itervalues(recursive=True):
        n = int(b.member("fWriteBasket"))
        basket_bytes = np.asarray(b.member("fBasketBytes"))[:n]
        zip_bytes = int(b.member("fZipBytes"))
        branches.append(
            BranchMeta(
                name=b.name,
                typename=str(b.typename),
                compressed_bytes=zip_bytes,
                uncompressed_bytes=int(b.member("fTotBytes")),
                baskets=n,
                basket_bytes=int(basket_bytes.sum()),
            )
        )
        if n > 0:
            written.append((zip_bytes, b))
    if entries < 0:
        raise FileProblem(f"damaged TTree metadata in {name!r}: negative entry count")
    sizes, source = cluster_layout(tree, entries)
    written.sort(key=lambda zb: -zb[0])
    algorithm, alg_source, setting = _compression(
        path, [b for _, b in written[:HEADER_PROBES]], file_setting
    )
    return TreeMeta(
        name=name.split(";")[0],
        entries=entries,
        branches=tuple(branches),
        compressed_bytes=int(tree.member("fZipBytes")),
        uncompressed_bytes=int(tree.member("fTotBytes")),
        cluster_sizes=sizes,
        cluster_source=source,
        algorithm=algorithm,
        algorithm_source=alg_source,
        setting=setting,
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

    autoflush = int(tree.member("fAutoFlush"))
    zip_bytes = int(tree.member("fZipBytes"))
    estimated = _estimated_cluster_size(entries, autoflush, zip_bytes)
    n_ranges = int(tree.member("fNClusterRange") or 0)
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
    cache ROOT sets up for the cluster iterator is ``-fAutoFlush`` bytes (30 MB by default).
    ``fAutoFlush == 0`` (flushing disabled) makes ROOT size its cache from the cluster ranges;
    that rare case is approximated with the 30 MB default.
    """
    if autoflush > 0:
        return autoflush
    if zip_bytes <= 0:
        return max(entries, 1)
    cache = -autoflush if autoflush < 0 else DEFAULT_CACHE_BYTES
    return max(1, entries * cache // zip_bytes)


def _compression(
    path: str, branches: list[Any], file_setting: int | None
) -> tuple[Algorithm | None, AlgorithmSource, int | None]:
    """The algorithm in the stored baskets, and the compression setting.

    Reads the header of the largest basket of each of the given (largest) branches: the first
    compressed one names the algorithm.  ROOT and uproot store a basket uncompressed when
    compression would not shrink it, so one uncompressed basket proves little; only when all
    of them are stored uncompressed is the tree reported as ``none``.
    """
    setting = file_setting
    if branches:
        b_setting = _int_or_none(branches[0].member("fCompress"))
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
