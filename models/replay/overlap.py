"""uproot's overlap of a read call's I/O with its CPU work, from the call's own requests.

What it rests on (uproot 5.7, ``uproot/behaviors/TBranch.py`` ``_ranges_or_baskets_to_arrays``
and ``uproot/source/fsspec.py``, ``uproot/source/coalesce.py``):

* one ``arrays`` call (one ``iterate`` step) asks for all its byte ranges at once
  (``source.chunks``), coalesced into requests (``CoalesceConfig``: ranges at most 32 KiB
  apart merged, at most 10 MiB and 1,024 ranges a request, the first one cut at 32 KiB);
* the fsspec source runs each request in a thread of its own (``asyncio.to_thread``): the
  call's requests are read concurrently, and a request's baskets are handed over only when
  the whole request is read;
* the calling thread decompresses and interprets baskets as their requests arrive, and the
  call returns when every array is built; ``iterate`` starts the next call's reads only then,
  so no read of call ``k + 1`` hides behind call ``k``'s CPU work.

So, within a call of ``r`` requests sharing the device evenly (processor sharing), request
``i`` (by size, ascending) is read after ``T (s_1 + ... + s_(i-1) + (r - i + 1) s_i) / S``
(``T``: the call's streamed I/O time, ``s``: request bytes, ``S`` their sum), and its CPU
(the call's CPU ``C`` in proportion to its bytes) runs once it is read and the CPU before it
is done.  The call takes that schedule's end; the hidden time is ``T + C`` less it.  A call of
one request hides nothing.  The calls' ``T`` and ``C`` are the layout's streamed I/O and CPU
in proportion to the calls' bytes.

Checked (``benchmarks/RESULTS.md``): ``iterate`` at an entry step, one or two 20-22 MB calls
per file, on the emulated 70 MB/s, 120 IOPS disk: cold minus warm 0.42-0.50 s for 42-45 MB
(0.59-0.64 s of transfer alone): little hides, as this schedule says.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hep_advisor.probes.basketmap import BasketMap

from .readers import _memory_size, coalesce, step_ranges, uproot_step_entries


@dataclass(frozen=True)
class CallShapes:
    """The read calls of a layout: each distinct shape as (its share of the streamed bytes,
    its requests' shares of its bytes, ascending)."""

    shapes: tuple[tuple[float, tuple[float, ...]], ...] = ()

    def hidden_s(self, io_s: float, cpu_s: float) -> float:
        """The I/O time that hides behind the calls' CPU (see the module's notes), for the
        layout's streamed I/O ``io_s`` and the read calls' CPU ``cpu_s``."""
        if io_s <= 0 or cpu_s <= 0:
            return 0.0
        hidden = 0.0
        for weight, parts in self.shapes:
            t, c = io_s * weight, cpu_s * weight
            done = before = 0.0
            r = len(parts)
            for i, s in enumerate(parts):
                read = t * (before + (r - i) * s)
                done = max(done, read) + c * s
                before += s
            hidden += max(t + c - done, 0.0)
        return min(hidden, io_s, cpu_s)


def call_shapes(maps: Sequence[BasketMap], branches: Iterable[str] | None,
                steps: Sequence[int | str]) -> CallShapes:
    """The read calls of ``iterate`` over ``maps`` (``steps``: each file's ``step_size``), as
    uproot forms them (the baskets of each step not read by the step before, coalesced)."""
    tally: dict[tuple[float, ...], float] = {}
    total = 0.0
    names = list(branches) if branches is not None else None
    for m, step_size in zip(maps, steps, strict=True):
        chosen = m.select(names)
        if not m.entries:
            continue
        if isinstance(step_size, str):
            step = uproot_step_entries(m, chosen, 0, m.entries, _memory_size(step_size))
        else:
            step = max(int(step_size), 1)
        for ranges in step_ranges(chosen, 0, m.entries, step):
            sizes = sorted(float(sum(hi - lo for lo, hi in req)) for req in coalesce(ranges))
            call = sum(sizes)
            if call <= 0:
                continue
            shape = tuple(round(s / call, 3) for s in sizes)
            tally[shape] = tally.get(shape, 0.0) + call
            total += call
    if total <= 0 or not math.isfinite(total):
        return CallShapes()
    return CallShapes(tuple((w / total, shape) for shape, w in sorted(tally.items())))


__all__ = ["CallShapes", "call_shapes"]
