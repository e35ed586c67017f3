"""Where a reader's CPU work falls between its reads: the gaps a paced replay puts between the
requests of a stream (:meth:`.device.LocalDevice.paced_time`).

A reader that reads, then works on what it read, then reads again (uproot's ``iterate`` step
by step, ROOT's ``GetEntry`` basket by basket or cluster by cluster) spaces its reads by its
CPU work.  On a rate limiter that spacing decides whether the reads wait at all: a read that
comes after enough CPU finds the limiter's budget refilled.  The work is put where it
happens:

- opening a file (``open_s`` each): after the file's opening reads (its first run of
  metadata requests: the header, the directory, the tree's metadata), before its first basket
  or key read.  A traced uproot open reads all of those within 2 ms and then works: the
  ``interleaved`` file's seven opening reads came in 0.498–0.500 s and its first basket read at
  0.635 s;
- a memory-size step's key pre-pass (``key_s`` each): after each key read;
- the rest (decompression, interpretation, the user's own work): after each data request, in
  proportion to its bytes (the work on a basket follows its read; a step's reads are followed
  by the step's work).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .requests import Request


@dataclass(frozen=True)
class Pace:
    """Per request of a replayed stream: whether its file's open work follows it (the last of
    the file's opening metadata reads), whether it is a key read, and its data bytes."""

    opened: np.ndarray  # bool
    key: np.ndarray  # bool
    data: np.ndarray  # float: bytes of ``data`` requests, 0 for the others

    @classmethod
    def of(cls, requests: Sequence[Request]) -> Pace:
        opened = np.zeros(len(requests), dtype=bool)
        state: dict[str, int] = {}  # file -> index of its last opening read, -1 once done
        for i, r in enumerate(requests):
            last = state.get(r.file)
            if last is None:  # the file's first request: it opens the file
                state[r.file] = i
            elif last >= 0:  # still opening while its metadata reads come in a row
                if r.kind == "meta" and requests[i - 1].file == r.file:
                    state[r.file] = i
                else:
                    state[r.file] = -1
                    opened[last] = True
        for last in state.values():
            if last >= 0:
                opened[last] = True
        key = np.fromiter((r.kind == "key" for r in requests), dtype=bool, count=len(requests))
        data = np.fromiter((r.size if r.kind == "data" else 0 for r in requests), dtype=float,
                           count=len(requests))
        return cls(opened, key, data)

    def gaps(self, open_s: float, key_s: float, stream_s: float) -> np.ndarray:
        """The CPU seconds after each request: ``open_s`` per file, ``key_s`` per key read,
        ``stream_s`` in all over the data requests by their bytes (over every request alike
        where none carries data)."""
        n = len(self.opened)
        out = self.opened * float(open_s) + self.key * float(key_s)
        total = float(self.data.sum())
        if total > 0:
            out = out + self.data * (float(stream_s) / total)
        elif n:
            out = out + float(stream_s) / n
        return out


__all__ = ["Pace"]
