"""Recompressed samples: the dataset's own baskets, decompressed in memory and compressed again
with another algorithm, as ROOT would write them.

A bounded part of the sampled baskets (at most ``RECOMPRESS_BYTES`` uncompressed, baskets
drawn in a fixed pseudo-random order, so that a part covers the branches evenly) is
decompressed into memory (:func:`basket_payloads`); each candidate (``CANDIDATES``: LZ4-4,
ZSTD-5, ZLIB-1, LZMA-7, ROOT's settings 404, 505, 101, 207) recompresses every basket into
ROOT's block format with uproot's own writer (``uproot.compression.compress``: 9-byte
headers, LZ4's XXH64 checksum, blocks of at most 2^24 - 1 bytes), LZ4 in the mode ROOT uses
at that level (:mod:`.rootcodec`) (:func:`recompress`).  A
basket the candidate cannot shrink is kept stored uncompressed, as ROOT keeps it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .decoders import inflater
from .rootblocks import Pool, split_blocks, stored_bytes
from .rootcodec import root_codec

#: Algorithms the dataset's baskets are recompressed with (where it does not use them already),
#: at ROOT's usual levels; in this order (the ones the advisor proposes first, the slowest to
#: compress last).
CANDIDATES: dict[str, int] = {"LZ4": 4, "ZSTD": 5, "ZLIB": 1, "LZMA": 7}
#: Uncompressed bytes of the dataset's baskets recompressed at most.
RECOMPRESS_BYTES = 8_000_000


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
    #: per basket tried, in order: (as the dataset stores it, as the candidate stores it)
    sizes: list[tuple[int, int]] = field(default_factory=list)

    @property
    def stored_bytes(self) -> int:
        return self.pool.compressed_bytes + self.raw_bytes

    @property
    def factor(self) -> float | None:
        return self.uncompressed_bytes / self.stored_bytes if self.stored_bytes else None

    @property
    def dataset_factor(self) -> float | None:
        return self.uncompressed_bytes / self.dataset_bytes if self.dataset_bytes else None

    @property
    def size_change_sd(self) -> float | None:
        """The relative standard error of the size change (stored bytes with the candidate
        over stored bytes now: a ratio of sums over the baskets tried), from the spread of
        the baskets' own changes about it (:func:`ratio_sd`); ``None`` under two baskets."""
        return ratio_sd(self.sizes)


def ratio_sd(pairs: Sequence[tuple[int, int]]) -> float | None:
    """The relative standard error of ``R = sum(y) / sum(x)`` over ``pairs`` of (x, y), a
    random sample of baskets (the ratio estimator's: ``sqrt(sum((y - R x)^2) / (n (n - 1)))
    / mean(x) / R``); ``None`` under two pairs or where ``R`` is not positive.  Baskets of one
    branch compress alike, so a sample of few branches can be further off than this says."""
    n = len(pairs)
    if n < 2:
        return None
    sx = sum(x for x, _ in pairs)
    sy = sum(y for _, y in pairs)
    if sx <= 0 or sy <= 0:
        return None
    r = sy / sx
    ss = sum((y - r * x) ** 2 for x, y in pairs)
    return float((ss / (n * (n - 1))) ** 0.5 / (sx / n) / r)


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
    """Compress each basket into ROOT's block format with ``algorithm`` (uproot's writer, with
    ROOT's LZ4 mode: :func:`.rootcodec.root_codec`), in order, until ``deadline`` passes (at
    least one basket)."""
    import uproot.compression as uc

    level = CANDIDATES.get(algorithm, 1) if level is None else int(level)
    codec = root_codec(algorithm, level)
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
            r.sizes.append((p.stored_bytes, len(p.data)))
            continue
        r.sizes.append((p.stored_bytes, len(out)))
        parsed = split_blocks(bytes(out))
        if parsed is None or parsed[0] != algorithm:
            raise ValueError(f"uproot wrote no {algorithm} blocks")
        r.pool.add(parsed[1], len(out), len(p.data))
    r.compress_s = clock() - t0
    return r

