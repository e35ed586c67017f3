"""Remote data: a reader's requests through the link -> time and bytes moved; stream, stage or
cache.

The reader strategies of :mod:`hep_advisor.models.replay.readers` give the requests; here they
become *round trips*: what a reader sends and then waits for.

- uproot (both sources over ``root://``: the default fsspec-xrootd one and ``XRootDSource``)
  asks for a step's baskets at once, as vector reads in flight together: one round trip per
  step, after the open's metadata reads (one each).  The default source first merges ranges
  whose gap is at most 32 KiB (``CoalesceConfig``), so it also moves the gaps; ``XRootDSource``
  moves the baskets only.
- ROOT without TTreeCache: one synchronous read per basket, each a round trip.
- ROOT with TTreeCache: one vector read (``TNetXNGFile::ReadBuffers``) per cache fill.

A round trip costs the link's round-trip time, and the bytes flow at its bandwidth:
``time = rounds x rtt + bytes / bandwidth`` (plus the protocol open, measured).  Staging copies
whole files (``xrdcp``: its start, the open, the bytes at the bandwidth) and then reads them
locally; with ``overlap`` the next file is copied while the current one is read.  XCache (one
LAN hop from the client) fetches the blocks (``pfc.blocksize``) a request touches that it does
not hold: cold, each round trip pays the origin's round trip and moves whole blocks; warm,
nothing crosses the link.

The reader's CPU (:class:`ReaderCpu`: per file opened, per compressed MB of baskets, per
basket) comes from the remote calibration's measurement of the same reader on one of the files
(fetched whole) or from a local calibration's fitted terms; :func:`job` adds it to the link
time per round trip (or overlaps the two, for a reader that works while its requests are in
flight).

Every parameter is measured (:class:`~probes.readtests.remote_results.RemoteCalibration`) or
stated: the CPU time of the reader is an input (measured, or fitted), never a constant here.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from hep_advisor.probes.basketmap import BasketMap

from .link import ROOT_EXTRA_ROUNDS, XROOTD_SOURCE_EXTRA_ROUNDS, Range, ReaderCpu, RemoteLink, Round
from .replay.readers import (
    coalesce,
    root_getentry,
    root_open,
    uproot_open,
)

#: XrdPfc's default block size (``pfc.blocksize``), and the bench's
XCACHE_BLOCK_BYTES = 1 << 20
#: XRootD's default vector-read limits (``readv_iov_max``, ``readv_ior_max``)
MAX_CHUNKS = 1024
MAX_CHUNK_BYTES = 2_097_136


@dataclass(frozen=True)
class RemotePrediction:
    """One way to read the data: link time, CPU time (given), bytes over the link and the
    bytes the reader needs (baskets), round trips."""

    strategy: str
    io_s: float
    cpu_s: float
    bytes_moved: int
    bytes_needed: int
    round_trips: int
    detail: dict[str, float] = field(default_factory=dict)
    #: the part of the CPU time spent while the reader's requests are in flight (see
    #: :func:`job`): the whole job takes ``io_s + cpu_s - overlap_s``
    overlap_s: float = 0.0

    @property
    def total_s(self) -> float:
        return self.io_s + self.cpu_s - self.overlap_s

    @property
    def amplification(self) -> float | None:
        """Bytes moved / bytes needed (read amplification)."""
        return self.bytes_moved / self.bytes_needed if self.bytes_needed else None


# -- request streams as round trips ------------------------------------------------------------

def _meta_rounds(reqs: Iterable[object]) -> list[Round]:
    return [Round(r.file, ((r.offset, r.size),)) for r in reqs]  # type: ignore[attr-defined]


def needed_bytes(maps: Sequence[BasketMap], branches: Iterable[str] | None) -> int:
    names = list(branches) if branches is not None else None
    return sum(int(b.nbytes.sum()) for m in maps for b in m.select(names))


def uproot_rounds(maps: Sequence[BasketMap], branches: Iterable[str] | None = None, *,
                  step_entries: int | None = None, source: str = "fsspec",
                  streamers: bool = True, step_bytes: int | None = None) -> list[Round]:
    """uproot ``arrays`` / ``iterate(step_size=N entries)``: the open's metadata reads, one
    round trip each, then one round trip per step (``source``: ``fsspec``, the default, merges
    ranges with gaps of at most 32 KiB; ``xrootd``: ``XRootDSource``, baskets as they are).
    ``streamers``: the process has yet to build the class models (uproot then reads the
    streamers of the first file that needs them, once per process).  ``step_bytes``: a
    memory-size step (``iterate``'s default ``"100 MB"``): a pre-pass first reads every selected
    basket's key, one synchronous request each (one round trip), and the step's entries follow
    from the baskets' sizes."""
    from .replay.readers import UPROOT_KEY_BYTES, uproot_step_entries

    names = list(branches) if branches is not None else None
    out: list[Round] = []
    built = not streamers
    for m in maps:
        needs = m.uproot_streamers is not False and not built
        built = built or needs
        out += _meta_rounds(uproot_open(m, streamers=needs))
        chosen = m.select(names)
        step = max(1, step_entries or m.entries or 1)
        if step_bytes is not None:
            for b in chosen:
                for i in b.baskets_for(0, m.entries):
                    size = min(UPROOT_KEY_BYTES, max(m.file_bytes - int(b.seek[i]), 1))
                    out.append(Round(m.path, ((int(b.seek[i]), size),)))
            step = uproot_step_entries(m, chosen, 0, m.entries, int(step_bytes))
        seen: set[tuple[int, int]] = set()
        for lo in range(0, max(m.entries, 1), step):
            hi = min(lo + step, m.entries)
            ranges: list[tuple[int, int]] = []
            for b in chosen:
                for i in b.baskets_for(lo, hi):
                    key = (b.index, int(i))
                    if key in seen:
                        continue
                    seen.add(key)
                    ranges.append((int(b.seek[i]), int(b.seek[i]) + int(b.nbytes[i])))
            if not ranges:
                continue
            if source == "fsspec":
                merged = [(a, z - a) for req in coalesce(ranges) for a, z in req]
            else:
                merged = [(a, z - a) for a, z in sorted(ranges)]
            out.append(Round(m.path, tuple(merged), sum(z - a for a, z in ranges),
                             len(ranges)))
        if source == "xrootd":
            out += [Round(m.path, ())] * XROOTD_SOURCE_EXTRA_ROUNDS
    return out


def root_rounds(maps: Sequence[BasketMap], branches: Iterable[str] | None = None, *,
                tree_cache: bool = True) -> list[Round]:
    """ROOT's ``GetEntry`` loop over ``root://``: the open's reads, then without TTreeCache
    one round trip per basket, with it one per cache fill (a vector read of the fill's
    baskets, adjacent ones merged), the server query and the close."""
    names = list(branches) if branches is not None else None
    branches = names
    out: list[Round] = []
    for m in maps:
        out += _meta_rounds(root_open(m))
        reqs = root_getentry(m, branches, cache_bytes=None if tree_cache else 0,
                             open_file=False, readahead_bytes=0)
        if not tree_cache:
            out += _meta_rounds(reqs)
            out += [Round(m.path, ())] * ROOT_EXTRA_ROUNDS
            continue
        groups: dict[int, list[Range]] = {}
        order: list[int] = []
        for r in reqs:
            key = r.batch if r.batch >= 0 else -(len(order) + 2)
            if key not in groups:
                groups[key] = []
                order.append(key)
            groups[key].append((r.offset, r.size))
        out += [Round(m.path, tuple(groups[k])) for k in order]
        out += [Round(m.path, ())] * ROOT_EXTRA_ROUNDS
    return _with_entries(_with_baskets(out, maps, names), maps)


def _with_entries(rounds: list[Round], maps: Sequence[BasketMap]) -> list[Round]:
    """Each file's entries on its first round that brings baskets (ROOT loops over every
    entry of the tree, whatever the branches read)."""
    left = {m.path: m.entries for m in maps}
    out = []
    for r in rounds:
        if r.baskets and left.get(r.file):
            r = replace(r, entries=left.pop(r.file))
        out.append(r)
    return out


def _with_baskets(rounds: list[Round], maps: Sequence[BasketMap],
                  names: list[str] | None) -> list[Round]:
    """The baskets of the branches read that each round's ranges hold whole (counted in the
    round that first fetches them)."""
    starts: dict[str, list[tuple[int, int]]] = {}
    for m in maps:
        starts[m.path] = sorted((int(b.seek[i]), int(b.nbytes[i])) for b in m.select(names)
                                for i in range(len(b.seek)))
    seen: set[tuple[str, int]] = set()
    out = []
    for r in rounds:
        nb = n = 0
        baskets = starts.get(r.file, [])
        for off, size in r.ranges:
            lo = bisect.bisect_left(baskets, (off, -1))
            for seek, length in baskets[lo:]:
                if seek + length > off + size:  # not whole in this range
                    break
                if (r.file, seek) not in seen:
                    seen.add((r.file, seek))
                    nb += length
                    n += 1
        out.append(Round(r.file, r.ranges, nb, n))
    return out


def stream(name: str, rounds: Sequence[Round], link: RemoteLink, cpu_s: float,
           bytes_needed: int, files: int) -> RemotePrediction:
    """A reader streaming over the link: its round trips, plus the protocol open per file."""
    t, n, nbytes = link.time(rounds)
    return RemotePrediction(name, t + files * link.open_s, cpu_s, nbytes, bytes_needed, n,
                            {"rtt_s": n * link.rtt_s, "transfer_s": nbytes / (link.mb_per_s * 1e6),
                             "open_s": files * link.open_s})


def job(name: str, rounds: Sequence[Round], link: RemoteLink, cpu: ReaderCpu,
        bytes_needed: int, files: int, *, overlap: bool, fresh: bool = True
        ) -> RemotePrediction:
    """The whole job streaming over the link: link time and the reader's CPU time.

    Each file pays the protocol open and the CPU part of its open (``cpu.open_s``); each
    round trip pays the round-trip time, its bytes at the bandwidth (``x``) and the CPU of the
    baskets it brings (``c = cpu.of(...)``).  A reader that waits for a round's data and then
    works pays ``x + c`` (ROOT's ``GetEntry`` loop: a synchronous read per basket or per cache
    fill); one that interprets the baskets as they arrive while the rest of the round is in
    flight would pay ``max(x, c)`` (``overlap``)::

        T = files (open_link + open_cpu) + sum over rounds (rtt + x + c | rtt + max(x, c))

    uproot could overlap (its chunks are interpreted as their requests complete), but on the
    test bench it did not measurably (its default source gathers a merged request's ranges
    before any is handed on, and the receiving loop shares the interpreter): the advice uses
    ``x + c`` for every reader (benchmarks/validation/bench_remote_predict.py prints both).
    """
    t, n, nbytes = link.time(rounds)
    rate = link.mb_per_s * 1e6
    cpu_s = files * cpu.open_s
    hidden = 0.0
    for r in rounds:
        c = cpu.of_round(r)
        cpu_s += c
        if overlap:
            hidden += min(r.nbytes / rate, c)
    client = _client_s(rounds, cpu, files, lan=False, fresh=fresh)
    return RemotePrediction(name, t + files * link.open_s + client, cpu_s, nbytes,
                            bytes_needed, n,
                            {"rtt_s": n * link.rtt_s, "transfer_s": nbytes / rate,
                             "open_s": files * link.open_s, "client_s": client},
                            overlap_s=hidden)


def _client_s(rounds: Sequence[Round], cpu: ReaderCpu | None, files: int, *,
              lan: bool, fresh: bool = True) -> float:
    """The reader's client beyond the model (:class:`ClientTerms`): per round trip and per
    file (not over a LAN hop: both were measured through the link and hold its requests), per
    basket, and once per process (``fresh``: the job starts a process)."""
    k = cpu.client if cpu is not None else None
    if k is None:
        return 0.0
    link = 0.0 if lan else len(rounds) * k.request_s + files * k.file_s
    return link + sum(r.baskets for r in rounds) * k.basket_s + (k.process_s if fresh else 0.0)


def reader_cpu_s(rounds: Sequence[Round], cpu: ReaderCpu, files: int) -> float:
    """The reader's CPU time for ``rounds`` (a local read of the same baskets)."""
    return files * cpu.open_s + sum(cpu.of_round(r) for r in rounds)


def stage(file_bytes: Sequence[int], link: RemoteLink, read_s: Sequence[float] | float,
          bytes_needed: int, *, copy_start_s: float = 0.0, copy_rtts: int = 3,
          overlap: bool = False) -> RemotePrediction:
    """Copy each file whole (``xrdcp``: ``copy_start_s`` to start, ``copy_rtts`` round trips to
    log in and open, the bytes at the bandwidth), then read it locally (``read_s``: per file,
    or in all).  ``overlap``: the next file is copied while this one is read."""
    n = len(file_bytes)
    reads = list(read_s) if isinstance(read_s, Sequence) else [float(read_s) / max(n, 1)] * n
    copies = [copy_start_s + copy_rtts * link.rtt_s + b / (link.mb_per_s * 1e6)
              for b in file_bytes]
    if overlap and n:
        pairs = zip(copies[1:], reads[:-1], strict=True)
        total = copies[0] + sum(max(c, r) for c, r in pairs) + reads[-1]
        io = total - sum(reads)
    else:
        io = sum(copies)
    return RemotePrediction("stage" + (" (overlapped)" if overlap else ""), io, sum(reads),
                            int(sum(file_bytes)), bytes_needed, n * copy_rtts,
                            {"copy_s": sum(copies)})


def _blocks(r: Round, block: int) -> set[tuple[str, int]]:
    out = set()
    for off, size in r.ranges:
        for b in range(off // block, (off + max(size, 1) - 1) // block + 1):
            out.add((r.file, b))
    return out


def xcache(name: str, rounds: Sequence[Round], link: RemoteLink, cpu_s: float,
           bytes_needed: int, files: int, file_bytes: dict[str, int], *, warm: bool,
           block: int = XCACHE_BLOCK_BYTES, cpu: ReaderCpu | None = None,
           overlap: bool = False, fresh: bool = True) -> RemotePrediction:
    """The same rounds through an XCache: each round trip crosses the LAN
    (``link.lan_rtt_s``); cold, the blocks it touches that the cache lacks are fetched from
    the origin over the link (one round trip per round that misses, whole blocks).  With
    ``cpu`` the reader's CPU time is computed from the rounds (``cpu_s`` is then ignored), as
    in :func:`job`: with ``overlap`` each round's CPU overlaps its transfer (LAN and
    origin)."""
    held: set[tuple[str, int]] = set()
    origin_rounds = 0
    moved = 0
    lan_rate = link.lan_mb_per_s * 1e6 if link.lan_mb_per_s else None
    hidden = 0.0
    if cpu is not None:
        cpu_s = reader_cpu_s(rounds, cpu, files)
    for r in rounds:
        need = _blocks(r, block) - held
        fetched = 0
        if need and not warm:
            origin_rounds += 1
            for f, b in need:
                size = file_bytes.get(f, (b + 1) * block)
                fetched += max(0, min(block, size - b * block))
        moved += fetched
        held |= need
        if cpu is not None and overlap:
            x = fetched / (link.mb_per_s * 1e6) + (r.nbytes / lan_rate if lan_rate else 0.0)
            hidden += min(x, cpu.of_round(r))
    lan_bytes = sum(r.nbytes for r in rounds)
    lan = len(rounds) * link.lan_rtt_s + (lan_bytes / lan_rate if lan_rate else 0.0) \
        + _client_s(rounds, cpu, files, lan=True, fresh=fresh)
    origin = 0.0 if warm else origin_rounds * link.rtt_s + moved / (link.mb_per_s * 1e6) \
        + files * link.open_s
    return RemotePrediction(f"{name} via XCache ({'warm' if warm else 'cold'})", lan + origin,
                            cpu_s, moved, bytes_needed, origin_rounds,
                            {"lan_s": lan, "origin_s": origin}, overlap_s=hidden)


def treecache_remote(maps: Sequence[BasketMap], branches: Iterable[str] | None,
                     link: RemoteLink, cpu: ReaderCpu | None = None
                     ) -> tuple[RemotePrediction, RemotePrediction]:
    """ROOT's ``GetEntry`` loop over the link without and with TTreeCache: what T001 needs
    for remote data (round trips, bytes moved, read amplification); link time only, or with
    ``cpu`` the whole job (:func:`job`; ROOT reads synchronously: no overlap)."""
    names = list(branches) if branches is not None else None
    need = needed_bytes(maps, names)
    n = len(maps)
    both = []
    for label, on in (("ROOT, no TTreeCache", False), ("ROOT, TTreeCache", True)):
        rounds = root_rounds(maps, names, tree_cache=on)
        both.append(stream(label, rounds, link, 0.0, need, n) if cpu is None
                    else job(label, rounds, link, cpu, need, n, overlap=False))
    return both[0], both[1]


def break_even_fraction(file_bytes: int, link: RemoteLink, stream_s_per_byte: float,
                        copy_start_s: float = 0.0, copy_rtts: int = 3) -> float | None:
    """The fraction of a file's bytes above which staging it whole beats streaming what is
    read, given the streaming cost per byte read (round trips included, from a replay)."""
    if stream_s_per_byte <= 0 or file_bytes <= 0:
        return None
    copy = copy_start_s + copy_rtts * link.rtt_s + file_bytes / (link.mb_per_s * 1e6)
    return min(1.0, copy / (stream_s_per_byte * file_bytes))


__all__ = ["ReaderCpu", "RemoteLink", "RemotePrediction", "Round",
           "break_even_fraction", "job", "needed_bytes", "reader_cpu_s", "root_rounds", "stage",
           "stream", "treecache_remote", "uproot_rounds", "xcache"]
