"""ROOT's stored baskets, read straight from the files: where they lie (``fBasketSeek``,
``fBasketBytes`` of the branch metadata), their TKey headers, and ROOT's compression blocks
(a 9-byte header per block: tag, method, compressed and uncompressed sizes; LZ4 blocks carry
an 8-byte XXH64 checksum after it).  :func:`collect_baskets` gathers a bounded sample of them
per compression algorithm into memory, for the decompression test.

Bounds: at most ``sample_bytes`` compressed per algorithm are held, at most ``scan_bytes``
more are read while looking for baskets, and at most ``MAX_FILES`` files are opened.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..rootfile import one_line

#: The ROOT compression-block header: tag, method, compressed size and uncompressed size (both
#: 3-byte little-endian).  LZ4 blocks carry an 8-byte XXH64 checksum after it, counted in the
#: compressed size.
BLOCK_HEADER = 9
LZ4_CHECKSUM = 8
TAGS: dict[bytes, str] = {b"ZL": "ZLIB", b"XZ": "LZMA", b"L4": "LZ4", b"ZS": "ZSTD", b"CS": "OLD"}
#: Reporting order (ROOT's algorithm codes: 1 ZLIB, 2 LZMA, 4 LZ4, 5 ZSTD would sort LZMA
#: second; this is the order a reader compares them in).
ORDER = ("ZLIB", "LZ4", "ZSTD", "LZMA")

DEFAULT_SAMPLE_BYTES = 32_000_000
#: How many consecutive baskets of one file may add nothing before the file is left.
IDLE_BASKETS = 64
#: At most this many files are opened while looking for baskets.
MAX_FILES = 64

_KEY_HEAD = struct.Struct(">ihi")  # fNbytes, fVersion, fObjlen
_KEYLEN = struct.Struct(">h")  # fKeylen, at byte 14 of the key


@dataclass(frozen=True)
class Block:
    """One compression block of a basket: the codec's input and its expected output size."""

    data: bytes
    uncompressed_bytes: int
    checksum: int | None = None  # LZ4 only


def stored_bytes(b: Block) -> int:
    """The bytes one block takes in the basket: header, LZ4 checksum and data."""
    return len(b.data) + BLOCK_HEADER + (LZ4_CHECKSUM if b.checksum is not None else 0)


@dataclass
class Pool:
    """The baskets of one algorithm held in memory."""

    algorithm: str
    blocks: list[Block] = field(default_factory=list)
    baskets: int = 0
    compressed_bytes: int = 0  # payload as stored: block headers and data (no TKey)
    uncompressed_bytes: int = 0
    basket_ends: list[int] = field(default_factory=list)  # block index after each basket

    def add(self, blocks: list[Block], compressed: int, uncompressed: int) -> None:
        self.blocks.extend(blocks)
        self.baskets += 1
        self.compressed_bytes += compressed
        self.uncompressed_bytes += uncompressed
        self.basket_ends.append(len(self.blocks))

    def reorder(self, order: Sequence[int]) -> None:
        """Put the baskets in ``order`` (a permutation of their indices): a pool cut short by
        :meth:`truncate` then keeps a spread of them, not the first branches of a file."""
        if sorted(order) != list(range(self.baskets)):
            raise ValueError("not a permutation of the pool's baskets")
        blocks: list[Block] = []
        ends: list[int] = []
        for i in order:
            start = self.basket_ends[i - 1] if i > 0 else 0
            blocks.extend(self.blocks[start : self.basket_ends[i]])
            ends.append(len(blocks))
        self.blocks, self.basket_ends = blocks, ends

    def truncate(self, baskets: int) -> None:
        """Keep the first ``baskets`` baskets (at least one)."""
        baskets = max(1, min(baskets, self.baskets))
        if baskets == self.baskets:
            return
        end = self.basket_ends[baskets - 1]
        dropped = self.blocks[end:]
        self.compressed_bytes -= sum(stored_bytes(b) for b in dropped)
        self.uncompressed_bytes -= sum(b.uncompressed_bytes for b in dropped)
        del self.blocks[end:]
        del self.basket_ends[baskets:]
        self.baskets = baskets


@dataclass(frozen=True)
class BasketSample:
    """What the scan of the files collected: one pool per algorithm, and what it skipped."""

    pools: dict[str, Pool]
    uncompressed_baskets: int
    skipped: tuple[str, ...]
    files_read: int
    bytes_read: int


# -- parsing --------------------------------------------------------------------------------------
def split_blocks(payload: bytes) -> tuple[str, list[Block]] | None:
    """Split a basket's payload (the bytes after its TKey) into compression blocks.

    Returns the algorithm and the blocks, or ``None`` when the payload does not start with a
    known compression header.  Raises ``ValueError`` when the blocks do not tile the payload
    or mix algorithms.
    """
    algorithm: str | None = None
    blocks: list[Block] = []
    pos = 0
    n = len(payload)
    while pos < n:
        head = payload[pos : pos + BLOCK_HEADER]
        if len(head) < BLOCK_HEADER:
            raise ValueError(f"truncated compression header at byte {pos}")
        alg = TAGS.get(bytes(head[:2]))
        if alg is None:
            if pos == 0:
                return None
            raise ValueError(f"unknown compression tag {bytes(head[:2])!r} at byte {pos}")
        if algorithm is None:
            algorithm = alg
        elif alg != algorithm:
            raise ValueError(f"basket mixes {algorithm} and {alg} blocks")
        c = head[3] | (head[4] << 8) | (head[5] << 16)
        u = head[6] | (head[7] << 8) | (head[8] << 16)
        start = pos + BLOCK_HEADER
        stop = start + c
        if stop > n:
            raise ValueError(f"block at byte {pos} runs past the basket ({stop} > {n})")
        if alg == "LZ4":
            if c < LZ4_CHECKSUM:
                raise ValueError(f"LZ4 block at byte {pos} shorter than its checksum")
            checksum = int.from_bytes(payload[start : start + LZ4_CHECKSUM], "big")
            blocks.append(Block(bytes(payload[start + LZ4_CHECKSUM : stop]), u, checksum))
        else:
            blocks.append(Block(bytes(payload[start:stop]), u))
        pos = stop
    if algorithm is None:
        return None
    return algorithm, blocks


def parse_basket(raw: bytes) -> tuple[int, int, bytes]:
    """(fKeylen, fObjlen, payload) of a basket read whole (TKey included) from the file."""
    if len(raw) < 18:
        raise ValueError("basket shorter than a TKey header")
    nbytes, _version, objlen = _KEY_HEAD.unpack_from(raw, 0)
    keylen = _KEYLEN.unpack_from(raw, 14)[0]
    if keylen <= 0 or keylen > len(raw):
        raise ValueError(f"implausible key length {keylen}")
    return keylen, objlen, raw[keylen : min(nbytes, len(raw))]


# -- collecting baskets ----------------------------------------------------------------------
def _spread_order(n: int) -> list[int]:
    """All of ``range(n)``, the first few spread evenly over it (first, last, middle, ...)."""
    from ..dataset import sample_indices

    head = sample_indices(n, min(n, 8))
    seen = set(head)
    return head + [i for i in range(n) if i not in seen]


def basket_locations(path: str, tree_names: Sequence[str] | None) -> list[tuple[int, int]]:
    """(seek, bytes) of every written basket of the chosen trees of one file, by position."""
    import numpy as np
    import uproot

    from ..rootfile import TREE_CLASSES

    out: list[tuple[int, int]] = []
    with uproot.open(path) as f:
        if tree_names is None:
            names = list(f.keys(filter_classname=list(TREE_CLASSES), cycle=False,
                                recursive=True))
        else:
            names = [t for t in tree_names if t in f]
        for name in names:
            tree = f[name]
            for b in tree.itervalues(recursive=True):
                n = int(b.member("fWriteBasket"))
                if n <= 0:
                    continue
                seeks = np.asarray(b.member("fBasketSeek"))[:n]
                sizes = np.asarray(b.member("fBasketBytes"))[:n]
                out.extend((int(s), int(z)) for s, z in zip(seeks, sizes, strict=True)
                           if s > 0 and z > 0)
    out.sort()
    return out


def collect_baskets(
    files: Sequence[str],
    tree_names: Sequence[str] | None = None,
    sample_bytes: int = DEFAULT_SAMPLE_BYTES,
    scan_bytes: int | None = None,
    deadline: float | None = None,
    check: Callable[[], None] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> BasketSample:
    """Read up to ``sample_bytes`` (compressed) of stored baskets per algorithm.

    Files are visited spread over the list (first, last, middle, ...), each file's baskets in
    file order (so a large file contributes its first clusters, with every branch in them).
    A file is left once ``IDLE_BASKETS`` of its baskets in a row added nothing; the scan ends
    when ``scan_bytes`` (default: two samples' worth) were read and not kept (baskets stored
    uncompressed, or of an algorithm whose pool is full), after ``MAX_FILES`` files, or at
    ``deadline``.  So at most about ``sample_bytes`` per algorithm plus ``scan_bytes`` are
    read, and only the pools stay in memory.
    """
    waste_limit = scan_bytes if scan_bytes is not None else 2 * sample_bytes
    pools: dict[str, Pool] = {}
    skipped: list[str] = []
    uncompressed = 0
    read = 0
    wasted = 0  # bytes read that no pool kept
    files_read = 0
    for i in _spread_order(len(files)):
        if files_read >= MAX_FILES or wasted >= waste_limit:
            break
        if deadline is not None and clock() >= deadline and pools:
            break
        if check is not None:
            check()
        path = files[i]
        try:
            locations = basket_locations(path, tree_names)
        except Exception as exc:  # a bad file is skipped, never a crash
            skipped.append(f"{path}: {one_line(exc)}")
            continue
        files_read += 1
        idle = 0
        try:
            with open(path, "rb") as fh:
                for seek, nbytes in locations:
                    if idle >= IDLE_BASKETS or wasted >= waste_limit:
                        break
                    fh.seek(seek)
                    raw = fh.read(nbytes)
                    read += len(raw)
                    added = _add_basket(raw, pools, sample_bytes)
                    if added is None:
                        uncompressed += 1
                    if added:
                        idle = 0
                    else:
                        idle += 1
                        wasted += len(raw)
        except (OSError, ValueError) as exc:
            skipped.append(f"{path}: {one_line(exc)}")
    return BasketSample(pools=pools, uncompressed_baskets=uncompressed,
                        skipped=tuple(skipped), files_read=files_read, bytes_read=read)


def _add_basket(raw: bytes, pools: dict[str, Pool], sample_bytes: int) -> bool | None:
    """Add one basket to its algorithm's pool.  True: added; False: pool full or unusable;
    None: stored uncompressed."""
    _keylen, objlen, payload = parse_basket(raw)
    if len(payload) == objlen:
        return None
    parsed = split_blocks(payload)
    if parsed is None:
        return False
    algorithm, blocks = parsed
    if algorithm == "OLD":
        return False
    pool = pools.setdefault(algorithm, Pool(algorithm))
    if pool.compressed_bytes >= sample_bytes:
        return False
    uncompressed = sum(b.uncompressed_bytes for b in blocks)
    pool.add(blocks, len(payload), uncompressed)
    return True

