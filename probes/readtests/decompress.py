"""Decompression per core, on the dataset's own baskets held in memory.

For each compression algorithm found in the dataset, a bounded sample of stored baskets is read
from the files (positions and sizes from the branch metadata: ``fBasketSeek``,
``fBasketBytes``), stripped of their TKey headers and split into ROOT compression blocks, and
held in memory.  Then one core decompresses them all, repeatedly, through the very decompressor
objects uproot uses (``uproot.compression._decompress_ZLIB`` and friends, so a switch of
``uproot.compression._DecompressZLIB.library`` to ``isal`` or ``deflate`` is measured too).
For LZ4 the XXH64 checksum of each block is verified, as uproot (and ROOT) do when reading.

Each pass is timed in CPU seconds of the thread that runs it (``time.thread_time``): the codecs
run on that thread alone and wait for nothing, so that is the time they take on an idle core,
and neither other users' processes nor the other threads of this one (a TUI drawing progress)
inflate it (wall-clock passes of a few ms scatter by tens of per cent on a busy machine).

Rates are in MB/s (MB = 10^6 bytes): *compressed* counts the stored payload (block headers
included, TKey headers not), *uncompressed* the bytes that come out.  Baskets stored
uncompressed (no compression header) are skipped; the obsolete ``CS`` algorithm, which uproot
cannot read, is skipped too.

Bounds: at most ``sample_bytes`` compressed per algorithm are held (32 MB by default, so peak
memory stays near the number of algorithms times that), at most ``scan_bytes`` more are read
while looking for baskets, and the time one repetition takes is cut to fit the share of the budget.

*Recompressed samples* (the algorithm that would read fastest here, and its size cost).  After
the dataset's own algorithm (that of its largest tree, else the one holding most sampled bytes)
is timed, a bounded part of its sampled baskets (at most ``RECOMPRESS_BYTES`` uncompressed,
baskets drawn in a fixed pseudo-random order, so that a part covers the branches evenly) is
decompressed into memory, and each candidate the dataset does not already use
(``CANDIDATES``: LZ4-4, ZSTD-5, ZLIB-1, LZMA-7, ROOT's settings 404, 505, 101, 207)
recompresses every basket into ROOT's block format with uproot's own writer
(``uproot.compression.compress``: 9-byte headers, LZ4's XXH64 checksum, blocks of at most
2^24 - 1 bytes), as ROOT would write the basket.  A basket the candidate cannot shrink is kept
stored uncompressed, as ROOT keeps it.  The candidate's blocks are then decompressed by the
same decoders as above and timed in the same way.  Each becomes a
:class:`~probes.readtests.results.DecompressionPoint` with ``source="recompressed"``, its
measured compression factor (uncompressed / stored bytes of the sample) and the dataset's own
factor on the very same baskets (``dataset_factor``): their ratio is the size change,
measured.  These points take ``RECOMPRESS_FRACTION`` of the test's share (what the dataset's
own algorithms leave unused flows to them); compressing is slow for LZMA (about 2 MB/s), so
each candidate compresses baskets only while ``COMPRESS_FRACTION`` of its part (and at most
``MAX_COMPRESS_S``) lasts, at least one basket; a candidate with no time left is skipped, with
the reason, into ``skipped``.  Peak memory adds about twice ``RECOMPRESS_BYTES``.
"""

from __future__ import annotations

import os
import struct
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..results import DatasetProfile
from ..rootfile import one_line
from .results import Conditions, DecompressionPoint, Measurement, Skipped, Unpacking
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

#: Algorithms the dataset's baskets are recompressed with (where it does not use them already),
#: at ROOT's usual levels; in this order (the ones the advisor proposes first, the slowest to
#: compress last).
CANDIDATES: dict[str, int] = {"LZ4": 4, "ZSTD": 5, "ZLIB": 1, "LZMA": 7}
#: Uncompressed bytes of the dataset's baskets recompressed at most.
RECOMPRESS_BYTES = 8_000_000
#: Fraction of the test's share set aside for the recompressed candidates (when there are any).
RECOMPRESS_FRACTION = 0.4
#: Fraction of a candidate's part that may go to compressing, and at most this many seconds.
COMPRESS_FRACTION = 0.5
MAX_COMPRESS_S = 0.3

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


def inflater(algorithm: str) -> Callable[[Block], bytes]:
    """A function returning the bytes one block decompresses to (uproot's decompressor)."""
    import uproot.compression as uc

    codecs = {"ZLIB": uc._decompress_ZLIB, "LZMA": uc._decompress_LZMA,
              "LZ4": uc._decompress_LZ4, "ZSTD": uc._decompress_ZSTD}
    if algorithm not in codecs:
        raise ValueError(f"no decompressor for {algorithm}")
    codec = codecs[algorithm]

    def inflate(b: Block) -> bytes:
        return bytes(codec.decompress(b.data, b.uncompressed_bytes))

    return inflate


# -- recompressing ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Payload:
    """One basket of the dataset decompressed: its bytes, and what it takes stored."""

    data: bytes
    stored_bytes: int


@dataclass
class Recompressed:
    """Baskets recompressed with one algorithm: the blocks of those it shrank (``pool``), and
    the totals over every basket tried."""

    pool: Pool
    level: int
    baskets: int = 0  # tried
    raw_baskets: int = 0  # kept stored uncompressed: the algorithm did not shrink them
    raw_bytes: int = 0
    uncompressed_bytes: int = 0  # of every basket tried
    dataset_bytes: int = 0  # the same baskets as the dataset stores them
    compress_s: float = 0.0

    @property
    def stored_bytes(self) -> int:
        return self.pool.compressed_bytes + self.raw_bytes

    @property
    def factor(self) -> float | None:
        return self.uncompressed_bytes / self.stored_bytes if self.stored_bytes else None

    @property
    def dataset_factor(self) -> float | None:
        return self.uncompressed_bytes / self.dataset_bytes if self.dataset_bytes else None


def shuffled_order(n: int, seed: int = 0) -> list[int]:
    """All of ``range(n)`` in a fixed pseudo-random order: a sample cut short is spread over
    the range without following the period of the branches in the file's basket order."""
    import numpy as np

    return [int(i) for i in np.random.default_rng(seed).permutation(n)]


def basket_payloads(pool: Pool, max_bytes: int = RECOMPRESS_BYTES,
                    deadline: float | None = None,
                    clock: Callable[[], float] = time.perf_counter) -> list[Payload]:
    """Decompress baskets of ``pool`` (in a fixed shuffled order) until ``max_bytes``
    uncompressed are held or ``deadline`` passes; at least one."""
    inflate = inflater(pool.algorithm)
    out: list[Payload] = []
    total = 0
    for i in shuffled_order(pool.baskets):
        if out and (total >= max_bytes or (deadline is not None and clock() >= deadline)):
            break
        start = pool.basket_ends[i - 1] if i > 0 else 0
        blocks = pool.blocks[start : pool.basket_ends[i]]
        data = b"".join(inflate(b) for b in blocks)
        out.append(Payload(data, sum(stored_bytes(b) for b in blocks)))
        total += len(data)
    return out


def recompress(payloads: Sequence[Payload], algorithm: str, level: int | None = None,
               deadline: float | None = None,
               clock: Callable[[], float] = time.perf_counter) -> Recompressed:
    """Compress each basket into ROOT's block format with ``algorithm`` (uproot's writer),
    in order, until ``deadline`` passes (at least one basket)."""
    import uproot
    import uproot.compression as uc

    level = CANDIDATES.get(algorithm, 1) if level is None else int(level)
    codec = {"ZLIB": uproot.ZLIB, "LZMA": uproot.LZMA, "LZ4": uproot.LZ4,
             "ZSTD": uproot.ZSTD}[algorithm](level)
    r = Recompressed(Pool(algorithm), level)
    t0 = clock()
    for p in payloads:
        if r.baskets and deadline is not None and clock() >= deadline:
            break
        out = uc.compress(p.data, codec)
        r.baskets += 1
        r.uncompressed_bytes += len(p.data)
        r.dataset_bytes += p.stored_bytes
        if len(out) >= len(p.data):  # not shrunk: ROOT stores such a basket uncompressed
            r.raw_baskets += 1
            r.raw_bytes += len(p.data)
            continue
        parsed = split_blocks(bytes(out))
        if parsed is None or parsed[0] != algorithm:
            raise ValueError(f"uproot wrote no {algorithm} blocks")
        r.pool.add(parsed[1], len(out), len(p.data))
    r.compress_s = clock() - t0
    return r


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
    candidates: Sequence[str] | None = None,
    skipped: list[Skipped] | None = None,
) -> tuple[DecompressionPoint, ...]:
    """Decompression rate per core for every algorithm in the dataset's stored baskets, and
    for the candidates (``CANDIDATES`` by default; ``()`` for none) on a recompressed sample of
    them.

    ``dataset`` is the probe's :class:`~probes.results.DatasetProfile` (its trees' baskets are
    sampled, from ``files`` or else its ``file_paths``) or simply a list of local paths (every
    TTree's baskets).  ``tree_names`` overrides the trees.  ``share_s`` is the time this test
    may take (default: its share of the session's budget, from ``session.begin``).  One point
    per algorithm found, in the order ZLIB, LZ4, ZSTD, LZMA (uncompressed baskets are
    skipped), then one per candidate recompressed, in the same order; a candidate left out
    for want of time is appended to ``skipped``.  Raises
    :class:`~probes.readtests.runner.Cancelled` when the session is cancelled.
    """
    trees: list[str] | None
    main: str | None = None
    if isinstance(dataset, DatasetProfile):
        paths = list(files if files is not None else dataset.file_paths)
        trees = list(tree_names) if tree_names is not None else [t.name for t in dataset.trees]
        if dataset.trees:
            main = max(dataset.trees, key=lambda t: t.compressed_bytes).compression.algorithm
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
    # the algorithm recompressed from: the dataset's own, else the one holding most bytes
    source = main if main in sample.pools else max(
        pools, key=lambda p: p.compressed_bytes).algorithm if pools else None
    wanted = CANDIDATES if candidates is None else candidates
    cands = [a for a in wanted if a in CANDIDATES and a not in sample.pools] if source else []
    own_share = share * (1.0 - RECOMPRESS_FRACTION) if cands else share
    steps = len(pools) + len(cands)
    points: list[DecompressionPoint] = []
    payloads: list[Payload] = []
    for k, pool in enumerate(pools):
        session.check()
        alg_start = clock()
        alg_share = max(0.0, own_share - (alg_start - t0)) / (len(pools) - k)
        decode, library = decoder(pool.algorithm)
        # the pilot pass sizes the pool so that three repetitions fit the algorithm's share
        _pilot(pool, decode, max(alg_share / 4, 1e-3), clock)
        left = max(0.0, alg_share - (clock() - alg_start))
        m = _time_pool(session, pool, decode, left, Conditions(
            cache="warm", workers=1, bytes_per_sample=pool.compressed_bytes,
            note=(f"{pool.baskets} baskets of the dataset held in memory; one core; "
                  f"compressed MB = stored payload (block headers, no TKey); "
                  f"uncompressed/compressed = "
                  f"{pool.uncompressed_bytes / pool.compressed_bytes:.3f}"),
        ), f"decompressing {pool.algorithm} ({pool.baskets} baskets)")
        points.append(_point(pool, library, m))
        _report_point(session, points[-1], (k + 1) / steps)
        if pool.algorithm == source and cands:
            payloads = basket_payloads(pool, RECOMPRESS_BYTES)
        pool.blocks = []  # free the memory before the next algorithm
    recompressed: list[DecompressionPoint] = []
    for k, alg in enumerate(cands):
        session.check()
        start = clock()
        left = share - (start - t0)
        if left <= 0 or not payloads:
            if skipped is not None:
                skipped.append(Skipped(f"{TEST} {alg} (recompressed)",
                                       "no time left in the test's share of the budget"
                                       if payloads else "no basket to recompress"))
            continue
        part = left / (len(cands) - k)
        rec = recompress(payloads, alg, deadline=start + min(COMPRESS_FRACTION * part,
                                                             MAX_COMPRESS_S), clock=clock)
        pool = rec.pool
        decode, library = decoder(alg)
        if pool.baskets:
            _pilot(pool, decode, float("inf"), clock)  # checks every block, warms the codec
            m = _time_pool(session, pool, decode, max(0.0, part - (clock() - start)),
                           Conditions(cache="warm", workers=1,
                                      bytes_per_sample=pool.compressed_bytes,
                                      note=_recompressed_note(rec, source or "")),
                           f"decompressing {alg} ({pool.baskets} baskets recompressed)")
        else:  # nothing shrank: nothing to decompress
            m = measurement([], "MB/s", Conditions(cache="warm", workers=1, bytes_per_sample=0,
                                                   note=_recompressed_note(rec, source or "")))
        recompressed.append(replace(
            _point(pool, library, m), baskets=rec.baskets, source="recompressed",
            compression_factor=rec.factor, level=rec.level, recompressed_from=source,
            dataset_factor=rec.dataset_factor))
        _report_point(session, recompressed[-1], (len(pools) + k + 1) / steps)
    recompressed.sort(key=lambda p: ORDER.index(p.algorithm))
    return tuple(points + recompressed)


def _time_pool(session: Session, pool: Pool, decode: Decoder, share_s: float,
               conditions: Conditions, message: str) -> Measurement:
    """Decompress the whole pool repeatedly within ``share_s``: compressed MB/s samples."""
    blocks = pool.blocks
    nbytes = pool.compressed_bytes

    def sample_rate() -> float:
        s = time.thread_time()
        decompress_all(blocks, decode)
        return nbytes / 1e6 / max(time.thread_time() - s, 1e-9)

    samples = session.repeat(sample_rate, share_s, TEST, message)
    return measurement(samples, "MB/s", conditions)


def _point(pool: Pool, library: str, m: Measurement) -> DecompressionPoint:
    ratio = pool.uncompressed_bytes / pool.compressed_bytes if pool.compressed_bytes else None
    med = m.median
    return DecompressionPoint(
        algorithm=pool.algorithm,
        compressed_mb_per_s=med,
        uncompressed_mb_per_s=None if med is None or ratio is None else med * ratio,
        library=library,
        baskets=pool.baskets,
        measurement=m,
        compression_factor=ratio,
    )


def _report_point(session: Session, p: DecompressionPoint, fraction: float) -> None:
    what = f"{p.algorithm} (recompressed)" if p.source == "recompressed" else p.algorithm
    rate = p.uncompressed_mb_per_s
    session.report(TEST, fraction, f"{what} done",
                   figure=f"{what}: {rate:.0f} MB/s uncompressed" if rate is not None else None)


def _recompressed_note(rec: Recompressed, source: str) -> str:
    raw = (f", {rec.raw_baskets} not shrunk (kept uncompressed, not timed)"
           if rec.raw_baskets else "")
    factor = f"{rec.factor:.3f}" if rec.factor else "n/a"
    own = f"{rec.dataset_factor:.3f}" if rec.dataset_factor else "n/a"
    return (f"{rec.baskets} baskets of the dataset's {source} sample, decompressed and "
            f"recompressed in memory with {rec.pool.algorithm}-{rec.level} (uproot's writer, "
            f"{rec.compress_s:.2f} s){raw}; one core; compressed MB = stored payload (block "
            f"headers, no TKey); uncompressed/compressed = {factor} ({source}: {own} on the "
            "same baskets)")


# -- unpacking (uproot's processing per MB, without decompression) -----------------------------
#: Uncompressed bytes of baskets held for the unpacking test at most.
UNPACK_BYTES = 8_000_000
#: Fraction of its share the unpacking test may spend reading and decompressing its baskets.
UNPACK_COLLECT_FRACTION = 0.4
#: Fixed costs are separated from the cost per byte only where the calls' sizes differ this much.
UNPACK_SIZE_RATIO = 2.0
#: Largest files tried for the tree.
UNPACK_FILES = 4


@dataclass
class _Unpack:
    branch: Any
    interpretation: Any
    baskets: list[Any] = field(default_factory=list)

    @property
    def stop(self) -> int:
        return int(self.branch.entry_offsets[len(self.baskets)])


def measure_unpacking(
    session: Session,
    files: Sequence[str],
    tree_name: str,
    branches: Sequence[str] | None = None,
    share_s: float | None = None,
    *,
    max_bytes: int = UNPACK_BYTES,
) -> Unpacking | None:
    """uproot's per-MB processing of the plain event loop, without I/O or decompression.

    *Why.*  Where decompression takes most of the event loop's time (LZMA), the loop's rows
    cannot tell the processing rate from the noise on the decompression rate, and every
    what-if that changes the decompression (recompress, C001) inherits that: a speed-up of
    8x with a 90% interval of 0.08x to 765x.  This measures the processing directly.

    *How.*  From one of the largest files, the first baskets of each branch the loop reads
    (or of every branch) are read and decompressed by uproot (``TBranch.basket``), round-robin
    over the branches, until ``max_bytes`` uncompressed are held.  Then one core runs what
    uproot runs on each decompressed basket when it reads arrays (``interpretation.basket_array``
    for every basket, then ``final_array`` per branch, library ``ak``), repeatedly, timed in CPU
    seconds of the thread (``time.thread_time``).  Two more passes time every call: the fixed
    cost per ``basket_array`` call (beyond its bytes) and per ``final_array`` call are fitted by
    non-negative least squares (where the calls' sizes differ at least ``UNPACK_SIZE_RATIO``
    fold) and taken out, since the model counts them in its per-basket and per-call costs; what
    is left, per compressed MB as stored, is the rate.  Not included: the user's analysis (a
    timed ``--analysis`` adds its own work), awkward's grouping of the branches into records,
    and the Python of the read loop itself.  Returns ``None`` where no file holds the tree."""
    import threading

    import numpy as np
    import uproot
    from uproot.interpretation.library import _regularize_library

    share = session.begin("unpacking") if share_s is None else float(share_s)
    clock = session.clock
    t0 = clock()
    session.check()
    session.report(TEST, 0.0, "unpacking baskets (uproot)")
    local = sorted((f for f in files if os.path.isfile(f)), key=os.path.getsize,
                   reverse=True)[:UNPACK_FILES]
    library = _regularize_library("ak")
    options = {"ak_add_doc": False}
    for path in local:
        try:
            fh = uproot.open(path)
        except Exception:
            continue
        with fh:
            if tree_name not in fh:
                continue
            tree = fh[tree_name]
            if branches:
                chosen = [tree[n] for n in branches if n in tree]
            else:
                chosen = list(tree.itervalues(recursive=True))
            items = []
            for b in chosen:
                if b.num_baskets <= 0:
                    continue
                try:
                    interp = b.interpretation
                except Exception:
                    continue
                if isinstance(interp, uproot.interpretation.identify.UnknownInterpretation):
                    continue
                items.append(_Unpack(b, interp))
            if not items:
                continue
            # the first baskets of each branch, round-robin, within the bytes and the time
            held = 0
            deadline = t0 + UNPACK_COLLECT_FRACTION * share
            i = 0
            while held < max_bytes:
                added = False
                for it in items:
                    if i >= it.branch.num_baskets or held >= max_bytes:
                        continue
                    if held and clock() >= deadline:
                        break
                    session.check()
                    bk = it.branch.basket(i)
                    it.baskets.append(bk)
                    held += int(bk.uncompressed_bytes)
                    added = True
                if not added or (held and clock() >= deadline):
                    break
                i += 1
            session.bytes_read += sum(int(bk.member("fNbytes")) for it in items
                                      for bk in it.baskets)
            return _time_unpacking(session, [it for it in items if it.baskets], library,
                                   options, share - (clock() - t0), np, threading)
    return None


def _time_unpacking(session: Session, items: list[_Unpack], library: Any,
                    options: dict[str, Any], share_s: float, np: Any,
                    threading: Any) -> Unpacking | None:
    calls: list[tuple[int, int, float]] = []  # (kind: 0 basket, 1 final; bytes; seconds)

    def unpack(it: _Unpack, record: bool) -> None:
        context = dict(it.branch.context)
        context["forth"] = threading.local()
        arrays = {}
        for bk in it.baskets:
            s = time.thread_time()
            arrays[bk.basket_num] = it.interpretation.basket_array(
                bk.data, bk.byte_offsets, bk, it.branch, context, bk.member("fKeylen"),
                library, options)
            if record:
                calls.append((0, int(bk.uncompressed_bytes), time.thread_time() - s))
        s = time.thread_time()
        it.interpretation.final_array(arrays, 0, it.stop, it.branch.entry_offsets, library,
                                      it.branch, options)
        if record:
            calls.append((1, sum(int(bk.uncompressed_bytes) for bk in it.baskets),
                          time.thread_time() - s))

    # a first pass warms uproot up and drops the branches it cannot unpack; the branches
    # kept are those that unpack within a quarter of the share
    t0 = session.clock()
    kept: list[_Unpack] = []
    for it in items:
        session.check()
        try:
            unpack(it, False)
        except Exception:
            continue
        kept.append(it)
        if session.clock() - t0 > share_s / 4:
            break
    if not kept:
        return None
    compressed = sum(int(bk.member("fNbytes")) for it in kept for bk in it.baskets)
    uncompressed = sum(int(bk.uncompressed_bytes) for it in kept for bk in it.baskets)
    n_baskets = sum(len(it.baskets) for it in kept)

    def sample_rate() -> float:
        s = time.thread_time()
        for it in kept:
            unpack(it, False)
        return compressed / 1e6 / max(time.thread_time() - s, 1e-9)

    left = max(0.0, share_s - (session.clock() - t0))
    samples = session.repeat(sample_rate, left * 0.7, TEST,
                             f"unpacking {n_baskets} baskets of {len(kept)} branches (uproot)")
    for _ in range(2):  # every call timed: the fixed costs per call
        session.check()
        for it in kept:
            unpack(it, True)
    basket_s = _fixed_cost([(b, t) for k, b, t in calls if k == 0], np)
    branch_s = _fixed_cost([(b, t) for k, b, t in calls if k == 1], np)
    m = measurement(samples, "MB/s", Conditions(
        cache="warm", workers=1, bytes_per_sample=compressed,
        note=(f"uproot basket_array + final_array (library ak) on {n_baskets} decompressed "
              f"baskets of {len(kept)} branches held in memory; one core, CPU time; "
              f"compressed MB = baskets as stored (keys included); fixed costs per basket "
              f"call {_us(basket_s)}, per branch {_us(branch_s)}")))
    total = m.median
    beyond = None
    if total:
        t = compressed / 1e6 / total
        fixed = n_baskets * (basket_s or 0.0) + len(kept) * (branch_s or 0.0)
        beyond = compressed / 1e6 / max(t - fixed, 0.1 * t)
    session.report(TEST, 1.0, "unpacking done",
                   figure=f"unpacking: {beyond:.0f} MB/s compressed" if beyond else None)
    return Unpacking(
        compressed_mb_per_s=beyond,
        uncompressed_mb_per_s=None if beyond is None else beyond * uncompressed / compressed,
        total_mb_per_s=total, basket_call_s=basket_s, branch_call_s=branch_s,
        branches=len(kept), baskets=n_baskets, measurement=m)


def _fixed_cost(calls: list[tuple[int, float]], np: Any) -> float | None:
    """The fixed seconds per call of t = fixed + bytes / rate (non-negative least squares on
    the fastest of each call's timings), or ``None`` where the sizes differ too little."""
    from scipy.optimize import nnls

    if len(calls) < 4:
        return None
    sizes = np.array([b for b, _ in calls], dtype=float)
    if sizes.min() <= 0 or sizes.max() / sizes.min() < UNPACK_SIZE_RATIO:
        return None
    # the fastest timing of each call (they come in passes of equal length)
    half = len(calls) // 2
    times = np.minimum(np.array([t for _, t in calls[:half]]),
                       np.array([t for _, t in calls[half: 2 * half]]))
    a = np.c_[np.ones(half), sizes[:half] / 1e6]
    scale = np.maximum(a.max(axis=0), 1e-12)
    x, _ = nnls(a / scale, times)
    return float(x[0] / scale[0])


def _us(seconds: float | None) -> str:
    return "not separated" if seconds is None else f"{seconds * 1e6:.1f} us"
