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

*Recompressed samples* (the algorithm that would read fastest here, and its size cost). Each
pool's baskets are put in a fixed pseudo-random order first (they were read in file order,
whole clusters: a part cut from the front would hold only the first branches). Before the
dataset's own algorithm (that of its largest tree, else the one holding most sampled bytes) is
timed, a bounded part of its sampled baskets (at most ``RECOMPRESS_BYTES`` uncompressed, drawn
from the whole pool, so that a part covers the branches evenly) is decompressed into memory,
and each candidate the dataset does not already use (``CANDIDATES``: LZ4-4, ZSTD-5, ZLIB-1,
LZMA-7, ROOT's settings 404, 505, 101, 207) recompresses every basket into ROOT's block format
with uproot's own writer (``uproot.compression.compress``: 9-byte headers, LZ4's XXH64
checksum, blocks of at most 2^24 - 1 bytes), as ROOT would write the basket. A basket the
candidate cannot shrink is kept stored uncompressed, as ROOT keeps it. The candidate's blocks
are then decompressed by the same decoders as above and timed in the same way. Each becomes a
:class:`~probes.readtests.results.DecompressionPoint` with ``source="recompressed"``, its
measured compression factor (uncompressed / stored bytes of the sample) and the dataset's own
factor on the very same baskets (``dataset_factor``): their ratio is the size change, measured,
with its standard error over the baskets (``size_change_sd``). These points take
``RECOMPRESS_FRACTION`` of the test's share (what the dataset's own algorithms leave unused
flows to them); compressing is slow for LZMA (about 2 MB/s), so each candidate compresses
baskets only while ``COMPRESS_FRACTION`` of its part (and at most ``MAX_COMPRESS_S``) lasts, at
least one basket; a candidate with no time left is skipped, with the reason, into ``skipped``.
Peak memory adds about twice ``RECOMPRESS_BYTES``.

The parts live beside this module: :mod:`.rootblocks` (ROOT's block format, collecting the
baskets), :mod:`.decoders` (uproot's codecs), :mod:`.recompress` (the recompressed samples)
and :mod:`.unpacking` (uproot's unpacking test, run in this test's share); their names are
importable from here too.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from ..results import DatasetProfile, largest_tree
from .blockcost import block_call_s
from .decoders import Decoder, decoder, decompress_all, inflater
from .recompress import (
    CANDIDATES,
    RECOMPRESS_BYTES,
    Payload,
    Recompressed,
    basket_payloads,
    recompress,
    shuffled_order,
)
from .results import Conditions, DecompressionPoint, Measurement, Skipped
from .rootblocks import (
    BLOCK_HEADER,
    DEFAULT_SAMPLE_BYTES,
    ORDER,
    BasketSample,
    Block,
    Pool,
    collect_baskets,
    parse_basket,
    split_blocks,
    stored_bytes,
)
from .runner import Session, measurement
from .unpacking import measure_unpacking

TEST = "decompression"

#: Fraction of the share that may go to reading baskets from the files.
SCAN_FRACTION = 0.3
#: Fraction of the test's share set aside for the recompressed candidates (when there are any).
RECOMPRESS_FRACTION = 0.4
#: Fraction of a candidate's part that may go to compressing, and at most this many seconds.
COMPRESS_FRACTION = 0.5
MAX_COMPRESS_S = 0.3
#: Seconds at most for each algorithm's fixed cost per basket (:mod:`.blockcost`), taken from
#: its share; uncompressed bytes of its baskets decompressed for it at most
BLOCK_COST_S = 0.3
BLOCK_COST_BYTES = 1_000_000


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
    levels: dict[str, int] = {}  # the dataset's level per algorithm, where the probe read it
    if isinstance(dataset, DatasetProfile):
        paths = list(files if files is not None else dataset.file_paths)
        trees = list(tree_names) if tree_names is not None else [t.name for t in dataset.trees]
        if dataset.trees:
            main = largest_tree(dataset.trees).compression.algorithm
        for t in dataset.trees:
            c = t.compression
            if c.algorithm and c.level is not None:
                levels.setdefault(str(c.algorithm), int(c.level))
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
        # the pool holds whole clusters in file order: spread it, so that the part the pilot
        # keeps (and the recompressed sample) covers the branches, not the first ones
        pool.reorder(shuffled_order(pool.baskets))
        if pool.algorithm == source and cands:
            # at most a quarter of the candidates' part goes to decompressing their input,
            # drawn from the whole pool before the pilot cuts it to what its timing needs
            payloads = basket_payloads(pool, RECOMPRESS_BYTES,
                                       deadline=clock() + 0.25 * (share - own_share),
                                       clock=clock)
            own_payloads = payloads
            alg_start = clock()
        else:
            own_payloads = basket_payloads(pool, BLOCK_COST_BYTES,
                                           deadline=clock() + 0.1 * alg_share, clock=clock)
        # the codec's fixed cost per basket, on the same baskets, in the algorithm's share
        call_s = block_call_s(own_payloads, pool.algorithm, levels.get(pool.algorithm),
                              deadline=clock() + min(BLOCK_COST_S, 0.25 * alg_share),
                              clock=clock)
        del own_payloads
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
        points.append(replace(_point(pool, library, m), basket_s=call_s))
        _report_point(session, points[-1], (k + 1) / steps)
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
        call_s = None
        if pool.baskets:
            _pilot(pool, decode, float("inf"), clock)  # checks every block, warms the codec
            call_s = block_call_s(payloads, alg, rec.level, deadline=clock() + min(
                BLOCK_COST_S, 0.25 * max(0.0, part - (clock() - start))), clock=clock)
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
            dataset_factor=rec.dataset_factor, size_change_sd=rec.size_change_sd,
            basket_s=call_s))
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



__all__ = [  # the parts this test is made of, importable from here as before the split
    "BLOCK_HEADER", "CANDIDATES", "DEFAULT_SAMPLE_BYTES", "ORDER", "RECOMPRESS_BYTES",
    "BasketSample", "Block", "Decoder", "Payload", "Pool", "Recompressed", "basket_payloads",
    "collect_baskets", "decoder", "decompress_all", "inflater", "measure_decompression",
    "measure_unpacking", "parse_basket", "recompress", "shuffled_order", "split_blocks",
    "stored_bytes",
]
