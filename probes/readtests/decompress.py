"""Decompression per core, on the dataset's own baskets held in memory.

For each compression algorithm found in the dataset, a bounded sample of stored baskets is read
from the files (positions and sizes from the branch metadata: ``fBasketSeek``,
``fBasketBytes``), stripped of their TKey headers and split into ROOT compression blocks, and
held in memory.  Then one core decompresses them all, repeatedly, through the very decompressor
objects uproot uses (``uproot.compression._decompress_ZLIB`` and friends, so a switch of
``uproot.compression._DecompressZLIB.library`` to ``isal`` or ``deflate`` is measured too).
For LZ4 the XXH64 checksum of each block is verified, as uproot (and ROOT) do when reading.

Rates are in MB/s (MB = 10^6 bytes): *compressed* counts the stored payload (block headers
included, TKey headers not), *uncompressed* the bytes that come out.  Baskets stored
uncompressed (no compression header) are skipped; the obsolete ``CS`` algorithm, which uproot
cannot read, is skipped too.

Bounds: at most ``sample_bytes`` compressed per algorithm are held (32 MB by default, so peak
memory stays near the number of algorithms times that), at most ``scan_bytes`` more are read
while looking for baskets, and the time one repetition takes is cut to fit the share of the budget.
"""

from __future__ import annotations

import os
import struct
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from ..results import DatasetProfile
from ..rootfile import one_line
from .results import Conditions, DecompressionPoint
from .runner import Session, measurement

TEST = "decompression"

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
#: Fraction of the share that may go to reading baskets from the files.
SCAN_FRACTION = 0.3

_KEY_HEAD = struct.Struct(">ihi")  # fNbytes, fVersion, fObjlen
_KEYLEN = struct.Struct(">h")  # fKeylen, at byte 14 of the key


@dataclass(frozen=True)
class Block:
    """One compression block of a basket: the codec's input and its expected output size."""

    data: bytes
    uncompressed_bytes: int
    checksum: int | None = None  # LZ4 only


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

    def truncate(self, baskets: int) -> None:
        """Keep the first ``baskets`` baskets (at least one)."""
        baskets = max(1, min(baskets, self.baskets))
        if baskets == self.baskets:
            return
        end = self.basket_ends[baskets - 1]
        dropped = self.blocks[end:]
        self.compressed_bytes -= sum(len(b.data) + BLOCK_HEADER + (LZ4_CHECKSUM if
                                     b.checksum is not None else 0) for b in dropped)
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


# -- parsing -------------------------------------------------------------------------------
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


# -- the codecs uproot uses ------------------------------------------------------------------
Decoder = Callable[[Block], int]


def decoder(algorithm: str) -> tuple[Decoder, str]:
    """A function decompressing one block (returning the bytes produced) through uproot's own
    decompressor for ``algorithm``, and the library behind it."""
    import cramjam
    import uproot.compression as uc

    if algorithm == "ZLIB":
        z = uc._decompress_ZLIB
        lib = str(getattr(type(z), "library", "zlib"))

        def dz(b: Block) -> int:
            return len(z.decompress(b.data, b.uncompressed_bytes))

        return dz, "zlib (stdlib)" if lib == "zlib" else lib
    if algorithm == "LZMA":
        x = uc._decompress_LZMA
        lib = "cramjam.xz" if getattr(cramjam, "xz", None) is not None else "lzma (stdlib)"

        def dx(b: Block) -> int:
            return len(x.decompress(b.data, b.uncompressed_bytes))

        return dx, lib
    if algorithm == "LZ4":
        import xxhash

        l4 = uc._decompress_LZ4

        def dl(b: Block) -> int:
            if xxhash.xxh64(b.data).intdigest() != b.checksum:
                raise ValueError("LZ4 block checksum mismatch")
            return len(l4.decompress(b.data, b.uncompressed_bytes))

        return dl, "cramjam.lz4 + xxhash"
    if algorithm == "ZSTD":
        zs = uc._decompress_ZSTD

        def dzs(b: Block) -> int:
            return len(zs.decompress(b.data, b.uncompressed_bytes))

        return dzs, "cramjam.zstd"
    raise ValueError(f"no decompressor for {algorithm}")


# -- collecting baskets ----------------------------------------------------------------------
def _spread_order(n: int) -> list[int]:
    """All of ``range(n)``, the first few spread evenly over it (first, last, middle, ...)."""
    from ..dataset import sample_indices

    head = sample_indices(n, min(n, 8))
    seen = set(head)
    return head + [i for i in range(n) if i not in seen]


def _basket_locations(path: str, tree_names: Sequence[str] | None) -> list[tuple[int, int]]:
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
            locations = _basket_locations(path, tree_names)
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


# -- timing ----------------------------------------------------------------------------------
def decompress_all(blocks: Iterable[Block], decode: Decoder) -> int:
    """Decompress every block; return the bytes produced."""
    total = 0
    for b in blocks:
        total += decode(b)
    return total


def _pilot(pool: Pool, decode: Decoder, target_s: float,
           clock: Callable[[], float]) -> None:
    """Decompress the pool once (warming the codec); cut the pool to the baskets that fit in
    ``target_s``, so that every repetition takes about that long at most."""
    t0 = clock()
    done = 0
    start = 0
    for end in pool.basket_ends:
        for b in pool.blocks[start:end]:
            n = decode(b)
            if n != b.uncompressed_bytes:
                raise ValueError(f"{pool.algorithm} block gave {n} bytes, "
                                 f"expected {b.uncompressed_bytes}")
        start = end
        done += 1
        if clock() - t0 > target_s:
            break
    pool.truncate(done)


def measure_decompression(
    session: Session,
    dataset: DatasetProfile | Sequence[str],
    files: Sequence[str] | None = None,
    share_s: float | None = None,
    *,
    tree_names: Sequence[str] | None = None,
    sample_bytes: int = DEFAULT_SAMPLE_BYTES,
) -> tuple[DecompressionPoint, ...]:
    """Decompression rate per core for every algorithm in the dataset's stored baskets.

    ``dataset`` is the probe's :class:`~probes.results.DatasetProfile` (its trees' baskets are
    sampled, from ``files`` or else its ``file_paths``) or simply a list of local paths (every
    TTree's baskets).  ``tree_names`` overrides the trees.  ``share_s`` is the time this test
    may take (default: its share of the session's budget, from ``session.begin``).  One point
    per algorithm found, in the order ZLIB, LZ4, ZSTD, LZMA; uncompressed baskets are skipped.
    Raises :class:`~probes.readtests.runner.Cancelled` when the session is cancelled.
    """
    trees: list[str] | None
    if isinstance(dataset, DatasetProfile):
        paths = list(files if files is not None else dataset.file_paths)
        trees = list(tree_names) if tree_names is not None else [t.name for t in dataset.trees]
    else:
        paths = list(files if files is not None else dataset)
        trees = list(tree_names) if tree_names is not None else None
    share = session.begin(TEST) if share_s is None else float(share_s)
    clock = session.clock
    t0 = clock()
    session.check()
    session.report(TEST, 0.0, "reading baskets")
    local = [f for f in paths if os.path.isfile(f)]
    sample = collect_baskets(local, trees, sample_bytes=sample_bytes,
                             deadline=t0 + SCAN_FRACTION * share, check=session.check,
                             clock=clock)
    session.bytes_read += sample.bytes_read
    pools = [sample.pools[a] for a in ORDER if a in sample.pools]
    pools += [p for a, p in sample.pools.items() if a not in ORDER]
    points: list[DecompressionPoint] = []
    for k, pool in enumerate(pools):
        session.check()
        alg_start = clock()
        alg_share = max(0.0, share - (alg_start - t0)) / (len(pools) - k)
        decode, library = decoder(pool.algorithm)
        # the pilot pass sizes the pool so that three repetitions fit the algorithm's share
        _pilot(pool, decode, max(alg_share / 4, 1e-3), clock)
        blocks = pool.blocks
        nbytes = pool.compressed_bytes

        def sample_rate(blocks: list[Block] = blocks, decode: Decoder = decode,
                        nbytes: int = nbytes) -> float:
            s = time.perf_counter()
            decompress_all(blocks, decode)
            return nbytes / 1e6 / max(time.perf_counter() - s, 1e-9)

        left = max(0.0, alg_share - (clock() - alg_start))
        samples = session.repeat(sample_rate, left, TEST,
                                 f"decompressing {pool.algorithm} ({pool.baskets} baskets)")
        ratio = pool.uncompressed_bytes / pool.compressed_bytes
        m = measurement(samples, "MB/s", Conditions(
            cache="warm", workers=1, bytes_per_sample=nbytes,
            note=(f"{pool.baskets} baskets of the dataset held in memory; one core; "
                  f"compressed MB = stored payload (block headers, no TKey); "
                  f"uncompressed/compressed = {ratio:.3f}"),
        ))
        med = m.median
        points.append(DecompressionPoint(
            algorithm=pool.algorithm,
            compressed_mb_per_s=med,
            uncompressed_mb_per_s=None if med is None else med * ratio,
            library=library,
            baskets=pool.baskets,
            measurement=m,
        ))
        session.report(TEST, (k + 1) / len(pools), f"{pool.algorithm} done",
                       figure=f"{pool.algorithm}: {med * ratio:.0f} MB/s uncompressed"
                       if med is not None else None)
        pool.blocks = []  # free the memory before the next algorithm
    return tuple(points)

