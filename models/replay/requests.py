"""Requests and request streams: the reads a reader issues, in order.

A :class:`Request` is one read of ``size`` bytes at ``offset`` in ``file``.  ``kind`` says what
it fetches (``data``: baskets, ``key``: a basket's key header, ``meta``: file and tree
metadata).  ``batch`` groups the requests issued together in one call (one vector read, one
coalesced request): a link pays one round trip per batch; ``-1`` means a request of its own.
``call`` groups the batches a reader issues at once and reads concurrently (uproot's
``source.chunks`` of one step: each coalesced request runs in a thread of its own, its ranges
one after another); ``-1``: not concurrent with any other batch.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

Kind = Literal["data", "key", "meta"]


class Request(NamedTuple):
    file: str
    offset: int
    size: int
    kind: Kind = "data"
    batch: int = -1
    call: int = -1

    @property
    def stop(self) -> int:
        return self.offset + self.size


@dataclass(frozen=True)
class StreamStats:
    """Counts of a request stream: requests, bytes, and the non-contiguous ones."""

    requests: int
    bytes: int
    runs: int  # requests that do not start where the previous one (same file) ended
    batches: int  # calls: requests sharing a batch id count once
    by_kind: dict[str, tuple[int, int]]  # kind -> (requests, bytes)

    def as_dict(self) -> dict[str, object]:
        return {
            "requests": self.requests,
            "bytes": self.bytes,
            "runs": self.runs,
            "batches": self.batches,
            "by_kind": {k: list(v) for k, v in self.by_kind.items()},
        }


def stats(requests: Iterable[Request]) -> StreamStats:
    n = total = runs = batches = 0
    by_kind: dict[str, list[int]] = {}
    last_end: dict[str, int] = {}
    last_batch: tuple[str, int] | None = None
    for r in requests:
        n += 1
        total += r.size
        if last_end.get(r.file) != r.offset:
            runs += 1
        last_end[r.file] = r.stop
        key = (r.file, r.batch)
        if r.batch < 0 or key != last_batch:
            batches += 1
        last_batch = key
        k = by_kind.setdefault(r.kind, [0, 0])
        k[0] += 1
        k[1] += r.size
    return StreamStats(n, total, runs, batches, {k: (v[0], v[1]) for k, v in by_kind.items()})


def merge_runs(requests: Iterable[Request]) -> list[Request]:
    """Consecutive requests that continue one another (same file, no gap) as one request."""
    out: list[Request] = []
    for r in requests:
        if out and out[-1].file == r.file and out[-1].stop == r.offset and r.size > 0:
            last = out[-1]
            out[-1] = last._replace(size=last.size + r.size)
        else:
            out.append(r)
    return out


def python_buffered(
    requests: Iterable[Request], buffer_bytes: int = 4096, file_bytes: dict[str, int] | None = None
) -> Iterator[Request]:
    """The read system calls of Python's ``BufferedReader`` for reads on a fresh file object.

    fsspec's local files read each range with a newly opened, buffered file: a read of ``n``
    bytes fetches the whole blocks directly (one call of ``n - n % buffer`` bytes) and fills
    the buffer once for the remainder (one call of ``buffer`` bytes, cut at the end of file).
    """
    sizes = file_bytes or {}
    for r in requests:
        whole = r.size - r.size % buffer_bytes
        if whole:
            yield r._replace(size=whole)
        if r.size % buffer_bytes:
            start = r.offset + whole
            end = start + buffer_bytes
            if r.file in sizes:
                end = min(end, sizes[r.file])
            yield r._replace(offset=start, size=max(end - start, 0))


def calls(requests: Iterable[Request]) -> Iterator[list[Request]]:
    """``requests`` in order, those of one ``call`` (and one file) together; a request of no
    call alone."""
    group: list[Request] = []
    for r in requests:
        if group and (r.call < 0 or r.call != group[0].call or r.file != group[0].file):
            yield group
            group = []
        group.append(r)
        if r.call < 0:
            yield group
            group = []
    if group:
        yield group


def take_turns(threads: Iterable[Iterator[None]]) -> None:
    """Run generator "threads" round-robin, one step each in turn, until all are done."""
    active = list(threads)
    while active:
        for t in list(active):
            try:
                next(t)
            except StopIteration:
                active.remove(t)


def renumber(streams: Sequence[Sequence[Request]]) -> list[Request]:
    """Concatenate streams, keeping their batches (and calls) distinct."""
    out: list[Request] = []
    base = calls = 0
    for stream in streams:
        top = top_call = -1
        for r in stream:
            if r.batch >= 0 or r.call >= 0:
                out.append(r._replace(batch=r.batch + base if r.batch >= 0 else -1,
                                      call=r.call + calls if r.call >= 0 else -1))
                top, top_call = max(top, r.batch), max(top_call, r.call)
            else:
                out.append(r)
        base += top + 1
        calls += top_call + 1
    return out
