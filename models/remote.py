"""Remote data: a reader's requests through the link -> time and bytes moved; stream, stage or
cache.

The reader strategies of :mod:`models.replay.readers` give the requests; here they become
*round trips*: what a reader sends and then waits for.

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

Every parameter is measured (:class:`~probes.readtests.remote_results.RemoteCalibration`) or
stated: the CPU time of the reader is an input (measured on a local read, or fitted), never a
constant here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from probes.basketmap import BasketMap
from probes.readtests.remote_results import RemoteCalibration

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

#: uproot 5.7.7's ``XRootDSource`` per file, beyond the open: ``get_server_config`` queries
#: the server (``readv_iov_max readv_ior_max``) for every file, and the file is closed
#: synchronously when the ``with`` block ends; the default fsspec-xrootd source keeps its
#: handles open and queries once per server (uproot/source/xrootd.py, fsspec_xrootd/xrootd.py)
XROOTD_SOURCE_EXTRA_ROUNDS = 2

Range = tuple[int, int]  # (offset, size)


@dataclass(frozen=True)
class Round:
    """What one round trip fetches: ``ranges`` of ``file`` (in one or more calls in flight)."""

    file: str
    ranges: tuple[Range, ...]

    @property
    def nbytes(self) -> int:
        return sum(s for _, s in self.ranges)


@dataclass(frozen=True)
class RemoteLink:
    """The link's figures: round trip (s), bandwidth (MB/s, one stream), the protocol open
    (s), and XCache's LAN hop (round trip, bandwidth) where there is one."""

    rtt_s: float
    mb_per_s: float
    open_s: float = 0.0
    vector_reads: bool = True
    lan_rtt_s: float = 0.0
    lan_mb_per_s: float | None = None

    @classmethod
    def from_calibration(cls, rc: RemoteCalibration) -> RemoteLink:
        if rc.rtt_ms is None or not rc.bandwidth_mb_per_s:
            raise ValueError("the remote calibration has no round trip or bandwidth")
        vec = rc.vector_reads.supported if rc.vector_reads is not None else False
        return cls(rtt_s=rc.rtt_ms / 1e3, mb_per_s=rc.bandwidth_mb_per_s,
                   open_s=rc.open_s or 0.0, vector_reads=vec)

    def time(self, rounds: Iterable[Round]) -> tuple[float, int, int]:
        """(seconds, round trips, bytes) of ``rounds`` through the link, one after another."""
        n = nbytes = 0
        for r in rounds:
            n += 1
            nbytes += r.nbytes
        return n * self.rtt_s + nbytes / (self.mb_per_s * 1e6), n, nbytes


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

    @property
    def total_s(self) -> float:
        return self.io_s + self.cpu_s

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
                  streamers: bool = True) -> list[Round]:
    """uproot ``arrays`` / ``iterate(step_size=N entries)``: the open's metadata reads, one
    round trip each, then one round trip per step (``source``: ``fsspec``, the default, merges
    ranges with gaps of at most 32 KiB; ``xrootd``: ``XRootDSource``, baskets as they are).
    ``streamers``: the process has yet to build the class models (uproot then reads the
    streamers of the first file that needs them, once per process)."""
    names = list(branches) if branches is not None else None
    out: list[Round] = []
    built = not streamers
    for m in maps:
        needs = m.uproot_streamers is not False and not built
        built = built or needs
        out += _meta_rounds(uproot_open(m, streamers=needs))
        chosen = m.select(names)
        step = max(1, step_entries or m.entries or 1)
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
            out.append(Round(m.path, tuple(merged)))
        if source == "xrootd":
            out += [Round(m.path, ())] * XROOTD_SOURCE_EXTRA_ROUNDS
    return out


def root_rounds(maps: Sequence[BasketMap], branches: Iterable[str] | None = None, *,
                tree_cache: bool = True) -> list[Round]:
    """ROOT's ``GetEntry`` loop over ``root://``: the open's reads, then without TTreeCache
    one round trip per basket, with it one per cache fill (a vector read of the fill's
    baskets, adjacent ones merged)."""
    out: list[Round] = []
    for m in maps:
        out += _meta_rounds(root_open(m))
        reqs = root_getentry(m, branches, cache_bytes=None if tree_cache else 0,
                             open_file=False, readahead_bytes=0)
        if not tree_cache:
            out += _meta_rounds(reqs)
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
    return out


def stream(name: str, rounds: Sequence[Round], link: RemoteLink, cpu_s: float,
           bytes_needed: int, files: int) -> RemotePrediction:
    """A reader streaming over the link: its round trips, plus the protocol open per file."""
    t, n, nbytes = link.time(rounds)
    return RemotePrediction(name, t + files * link.open_s, cpu_s, nbytes, bytes_needed, n,
                            {"rtt_s": n * link.rtt_s, "transfer_s": nbytes / (link.mb_per_s * 1e6),
                             "open_s": files * link.open_s})


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
           block: int = XCACHE_BLOCK_BYTES) -> RemotePrediction:
    """The same rounds through an XCache: each round trip crosses the LAN
    (``link.lan_rtt_s``); cold, the blocks it touches that the cache lacks are fetched from
    the origin over the link (one round trip per round that misses, whole blocks)."""
    held: set[tuple[str, int]] = set()
    origin_rounds = 0
    moved = 0
    for r in rounds:
        need = _blocks(r, block) - held
        if need and not warm:
            origin_rounds += 1
            for f, b in need:
                size = file_bytes.get(f, (b + 1) * block)
                moved += max(0, min(block, size - b * block))
        held |= need
    lan_bytes = sum(r.nbytes for r in rounds)
    lan = len(rounds) * link.lan_rtt_s + (
        lan_bytes / (link.lan_mb_per_s * 1e6) if link.lan_mb_per_s else 0.0)
    origin = 0.0 if warm else origin_rounds * link.rtt_s + moved / (link.mb_per_s * 1e6) \
        + files * link.open_s
    return RemotePrediction(f"{name} via XCache ({'warm' if warm else 'cold'})", lan + origin,
                            cpu_s, moved, bytes_needed, origin_rounds,
                            {"lan_s": lan, "origin_s": origin})


def treecache_remote(maps: Sequence[BasketMap], branches: Iterable[str] | None,
                     link: RemoteLink) -> tuple[RemotePrediction, RemotePrediction]:
    """ROOT's ``GetEntry`` loop over the link without and with TTreeCache (link time only):
    what T001 needs for remote data (round trips, bytes moved, read amplification)."""
    names = list(branches) if branches is not None else None
    need = needed_bytes(maps, names)
    off = stream("ROOT, no TTreeCache", root_rounds(maps, names, tree_cache=False), link, 0.0,
                 need, len(maps))
    on = stream("ROOT, TTreeCache", root_rounds(maps, names, tree_cache=True), link, 0.0,
                need, len(maps))
    return off, on


def break_even_fraction(file_bytes: int, link: RemoteLink, stream_s_per_byte: float,
                        copy_start_s: float = 0.0, copy_rtts: int = 3) -> float | None:
    """The fraction of a file's bytes above which staging it whole beats streaming what is
    read, given the streaming cost per byte read (round trips included, from a replay)."""
    if stream_s_per_byte <= 0 or file_bytes <= 0:
        return None
    copy = copy_start_s + copy_rtts * link.rtt_s + file_bytes / (link.mb_per_s * 1e6)
    return min(1.0, copy / (stream_s_per_byte * file_bytes))


__all__ = ["RemoteLink", "RemotePrediction", "Round", "break_even_fraction", "needed_bytes",
           "root_rounds", "stage", "stream", "treecache_remote", "uproot_rounds", "xcache"]
