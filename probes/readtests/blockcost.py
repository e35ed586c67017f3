"""A codec's fixed CPU cost per basket decompressed, apart from its cost per byte.

A decompression rate measured on a dataset's baskets holds at their size: each call of a codec
pays a fixed part (setting up its context and buffers) besides its bytes, and larger blocks
also decompress faster per byte.  Measured here as below: ZSTD about 9 µs per 3 kB basket (half
the time of such a basket), ZLIB 2-6 µs, LZ4 2-3 µs; the same ZSTD bytes in baskets five times
larger decompress twice as fast (195 against 414 compressed MB/s on the baskets of 120 small
files and of the two files ``hadd -O`` merged them into).  A merge or a rewrite that changes
the baskets' size changes the decompression time by more than its bytes; the figure is the
slope between the two sizes measured, not a constant.

*How.*  A bounded part of the dataset's own baskets, decompressed in memory (``payloads``),
is compressed again with the same algorithm twice with uproot's writer: basket by basket, and
in blocks of ``JOIN`` baskets' bytes joined.  Both are decompressed by uproot's own decoders,
alternately, ``REPEATS`` times, in CPU seconds of the thread; the same bytes in fewer calls
take less time by the calls saved:

    t_small - t_big = (n_small - n_big) * basket_s

(scaled to the same uncompressed bytes: a basket the codec does not shrink is stored, not
decompressed).  ``None`` where the sample cannot tell (one block, or no time).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence

from .decoders import decoder, decompress_all
from .recompress import Payload, recompress

#: baskets whose bytes are joined into one block of the "few calls" form
JOIN = 8
#: repetitions of each form (alternating); the median difference is kept
REPEATS = 5
#: uncompressed bytes of the sample at most (LZMA, slow to compress, a quarter of it)
MAX_BYTES = 1_000_000


def block_call_s(payloads: Sequence[Payload], algorithm: str, level: int | None = None, *,
                 deadline: float | None = None,
                 clock: Callable[[], float] = time.perf_counter) -> float | None:
    """The codec's CPU seconds per basket decompressed beyond its bytes (see the module's
    notes), never below 0; ``None`` where it could not be measured."""
    limit = MAX_BYTES // 4 if algorithm == "LZMA" else MAX_BYTES
    part: list[Payload] = []
    total = 0
    for p in payloads:
        if part and total + len(p.data) > limit:
            break
        part.append(p)
        total += len(p.data)
    if len(part) < 2 * JOIN:
        return None
    joined = [Payload(b"".join(p.data for p in part[i:i + JOIN]),
                      sum(p.stored_bytes for p in part[i:i + JOIN]))
              for i in range(0, len(part), JOIN)]
    small = recompress(part, algorithm, level, deadline=deadline, clock=clock)
    if deadline is not None and clock() >= deadline:
        return None
    big = recompress(joined, algorithm, level, deadline=deadline, clock=clock)
    if small.baskets < len(part) or big.baskets < len(joined):  # cut short by the deadline
        return None
    ps, pb = small.pool, big.pool
    if not ps.blocks or not pb.blocks or not pb.uncompressed_bytes:
        return None
    scale = ps.uncompressed_bytes / pb.uncompressed_bytes
    calls = len(ps.blocks) - len(pb.blocks) * scale
    if calls <= 0:
        return None
    decode, _ = decoder(algorithm)
    decompress_all(ps.blocks, decode)  # warm the codec
    diffs: list[float] = []
    for _ in range(REPEATS):
        if deadline is not None and clock() >= deadline and diffs:
            break
        t0 = time.thread_time()
        decompress_all(ps.blocks, decode)
        t1 = time.thread_time()
        decompress_all(pb.blocks, decode)
        t2 = time.thread_time()
        diffs.append((t1 - t0) - (t2 - t1) * scale)
    return max(0.0, statistics.median(diffs) / calls)


__all__ = ["JOIN", "MAX_BYTES", "block_call_s"]
