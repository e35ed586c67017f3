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
  by the step's work);
- for ROOT's ``GetEntry`` loop, where the entry that issues each read is known
  (:func:`~.readers.root_getentry`'s ``at``), the loop's work per entry (``GetEntry`` filling
  every enabled branch, the user's code) goes after the read that starts those entries, up to
  the next read: where the baskets of many branches end at the same entries (a file's
  branches of one type written together), the reads come in bursts with all of a range's
  work after them, and on a rate limiter a burst waits for the budget the work before it did
  not leave.  Only the decompression (the fitted per-basket and per-MB terms) follows the
  bytes there.
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
    #: entries processed after each request before the next read (``None``: not known)
    span: np.ndarray | None = None

    @classmethod
    def of(cls, requests: Sequence[Request], at: Sequence[int] | None = None,
           stops: dict[str, int] | None = None) -> Pace:
        """``at``: the entry that issues each request; ``stops``: each file's entry stop
        (where its last request's entries end).  With both, :attr:`span` is set."""
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
        span = None
        if at is not None and stops is not None:
            if len(at) != len(requests):
                raise ValueError(f"{len(at)} entries for {len(requests)} requests")
            span = np.zeros(len(requests))
            for i, r in enumerate(requests):
                nxt = at[i + 1] if i + 1 < len(requests) and requests[i + 1].file == r.file \
                    else stops.get(r.file, at[i])
                span[i] = max(nxt - at[i], 0)
        return cls(opened, key, data, span)

    def gaps(self, open_s: float, key_s: float, stream_s: float,
             entry_s: float = 0.0) -> np.ndarray:
        """The CPU seconds after each request: ``open_s`` per file, ``key_s`` per key read,
        ``stream_s`` in all over the data requests by their bytes (over every request alike
        where none carries data), and ``entry_s`` in all by the entries each request starts
        (:attr:`span`; by bytes as ``stream_s`` where it is not known)."""
        n = len(self.opened)
        out = self.opened * float(open_s) + self.key * float(key_s)
        if self.span is not None and float(self.span.sum()) > 0:
            out = out + self.span * (float(entry_s) / float(self.span.sum()))
        else:
            stream_s += entry_s
        total = float(self.data.sum())
        if total > 0:
            out = out + self.data * (float(stream_s) / total)
        elif n:
            out = out + float(stream_s) / n
        return out


__all__ = ["Pace"]
