"""The link and the reader on it: round trips (:class:`Round`), the link's measured figures
(:class:`RemoteLink`), the reader's CPU per file, MB and basket (:class:`ReaderCpu`) and its
client's costs beyond those (:class:`ClientTerms`).  :mod:`.remote_reads` turns a reader's
requests into round trips and predicts streaming, staging and XCache with these terms.

The client's terms: the calibration reads one file through the client (``RemoteClientCost``:
uproot's sources, ROOT in a child process), each pass beside the same pass on a local copy,
and what is left after the model's round trips, bytes and local CPU becomes a cost per round
trip, per file, per basket and once per process.  Each can be negative (the model then counts
too much); the per-round-trip term is its samples' mean (:func:`_expected`), the others count
only where their samples agree on a sign (:func:`_measured`).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hep_advisor.probes.readtests.remote_results import (
    RemoteCalibration,
    RemoteClientCost,
    RemoteReaderCpu,
)

from .replay.predict import CpuCosts

#: uproot 5.7.7's ``XRootDSource`` per file, beyond the open: ``get_server_config`` queries
#: the server (``readv_iov_max readv_ior_max``) for every file, and the file is closed
#: synchronously when the ``with`` block ends; the default fsspec-xrootd source keeps its
#: handles open and queries once per server (uproot/source/xrootd.py, fsspec_xrootd/xrootd.py)
XROOTD_SOURCE_EXTRA_ROUNDS = 2
#: ROOT over ``root://``, per file beyond the open and its metadata reads (seen in the XRootD
#: server's request trace, ``xrootd.trace all``, on the test bench): a ``kXR_query config``
#: for the vector-read limits (``readv_iov_max readv_ior_max``, with or without TTreeCache)
#: and a synchronous ``kXR_close`` when the file is closed
ROOT_EXTRA_ROUNDS = 2

Range = tuple[int, int]  # (offset, size)


@dataclass(frozen=True)
class Round:
    """What one round trip fetches: ``ranges`` of ``file`` (in one or more calls in flight);
    ``basket_bytes`` and ``baskets``: the baskets among them the reader then decompresses and
    interprets (0 for the open's metadata reads)."""

    file: str
    ranges: tuple[Range, ...]
    basket_bytes: int = 0
    baskets: int = 0
    #: entries the reader loops over once this round's data is in (ROOT's ``GetEntry``
    #: loop: each file's entries, on its first round that brings baskets; 0 for uproot,
    #: whose arrays have no cost per entry)
    entries: int = 0

    @property
    def nbytes(self) -> int:
        return sum(s for _, s in self.ranges)


@dataclass(frozen=True)
class ReaderCpu:
    """The reader's CPU terms: ``open_s`` per file opened (metadata, class models; from a
    measurement, also Python's full garbage collections amortized per file, which the
    median pass leaves out: ``RemoteReaderCpu.gc_s``),
    ``mb_s`` seconds per compressed MB of baskets read (decompression and interpretation),
    ``basket_s`` per basket, ``entry_s`` per entry looped over (ROOT's ``GetEntry`` loop,
    whatever the branches: a tenth of the branches costs more than a tenth of the CPU).  From
    the remote calibration's measurement of the reader on one of the files
    (:meth:`from_measured`) or from a local calibration's fitted terms (:meth:`from_costs`).

    ``client`` (with :meth:`from_measured` given the link): what the reader's own client
    costs through the link beyond the model's round trips, transfer and local CPU
    (:class:`ClientTerms`); :func:`job` and :func:`xcache` add it, a local read
    (:meth:`of`, staging) does not."""

    open_s: float = 0.0
    mb_s: float = 0.0
    basket_s: float = 0.0
    client: ClientTerms | None = None
    entry_s: float = 0.0

    def of(self, nbytes: int, baskets: int, entries: int = 0) -> float:
        """Seconds of CPU for ``nbytes`` of baskets in ``baskets`` baskets, and ``entries``
        entries looped over."""
        return nbytes / 1e6 * self.mb_s + baskets * self.basket_s + entries * self.entry_s

    def of_round(self, r: Round) -> float:
        """Seconds of CPU for what round ``r`` brings."""
        return self.of(r.basket_bytes, r.baskets, r.entries)

    @classmethod
    def from_costs(cls, costs: CpuCosts) -> ReaderCpu:
        """A local calibration's terms (``hep_advisor.models.replay.cpucosts.costs_from``): the
        open's CPU part, decompression + processing per MB, the cost per basket (per call: not a
        round trip's, so not used here)."""
        return cls(costs.open_s, costs.per_mb_s(), costs.basket_s)

    @classmethod
    def from_measured(cls, cpu: RemoteReaderCpu, link: RemoteLink | None = None,
                      client: str | None = None) -> ReaderCpu | None:
        """The remote calibration's measurement of the reader (``None`` where it has none);
        with ``link``, also its client's terms (``client``: ``uproot``, ``uproot
        XRootDSource`` or ``root``; the engine's own by default) where they were measured."""
        mb_s = cpu.bytes_mb_s
        if mb_s is None:
            return None
        entry_s = cpu.entry_s or 0.0
        base = cls(cpu.open_s or 0.0, mb_s, 0.0, entry_s=entry_s)
        # Python's full garbage collections, amortized per file (the median pass leaves them
        # out; a job of many files meets one every so many): per file opened
        open_s = base.open_s + (cpu.gc_s or 0.0)
        cost = cpu.client(client or cpu.engine)
        if link is None or cost is None:
            return cls(open_s, base.mb_s, 0.0, entry_s=entry_s)
        extra = (XROOTD_SOURCE_EXTRA_ROUNDS if cost.client == "uproot XRootDSource"
                 else ROOT_EXTRA_ROUNDS if cost.client == "root" else 0)
        # fsspec-xrootd keeps read-only handles open (``ReadonlyFileHandleCache``: 256 files,
        # 30 s): the calibration's passes after the first reopen the file without a protocol
        # open, which a job's first open of each file pays
        cached = cost.client == "uproot" and cpu.url.startswith("root://")
        return cls(open_s, base.mb_s, 0.0,
                   ClientTerms.derive(cost, link, base, cpu.basket_bytes, extra,
                                      protocol_open=not cached, entries=cpu.entries or 0),
                   entry_s)


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
class ClientTerms:
    """The reader's client through the link beyond what the model already counts (round trips
    at the ping's time, bytes at the bandwidth, the local CPU): ``request_s`` per round trip,
    ``file_s`` per file, ``basket_s`` per basket read.  Derived from the calibration's own
    read of one file through the client (:class:`RemoteClientCost`): each is the measured
    time less the model's, so it can be negative (the model then counts too much)."""

    request_s: float = 0.0
    file_s: float = 0.0
    basket_s: float = 0.0
    #: the basket reads' lowest and highest ``request_s`` (the interval's corners)
    request_range: tuple[float, float] = (0.0, 0.0)
    #: once per process: the first open and read of a file beyond the ones after it
    process_s: float = 0.0
    #: ``basket_s`` at the whole-file read's fastest and slowest pass (the interval's corners)
    basket_range: tuple[float, float] = (0.0, 0.0)

    @classmethod
    def derive(cls, cost: RemoteClientCost, link: RemoteLink, cpu: ReaderCpu,
               basket_bytes: int, extra_rounds: int, *, protocol_open: bool = True,
               entries: int = 0) -> ClientTerms:
        """``cost`` less the model: basket reads one at a time -> per round trip (never
        below the round trip alone; the samples' mean: :func:`_expected`); open + close -> per
        file (less the local open of the same pass, the protocol open, the reads the client
        counted and ``extra_rounds`` of the client's own); the whole read -> per basket (less
        the local read of the same pass and the rounds and bytes the client counted); the
        first open and read less a later one -> once per process (``protocol_open``: whether
        the passes pay the protocol open; a client that keeps its handles open does not).  A
        per-file, per-basket or per-process term counts only where its samples agree on its
        sign (:func:`_measured`): otherwise the model's figure stands (0)."""
        rate = link.mb_per_s * 1e6
        work = cpu.of(cost.request_bytes, 0) if cost.request_decoded else 0.0

        def per_request(ms: float) -> float:
            return max(ms / 1e3 - link.rtt_s - cost.request_bytes / rate - work,
                       -cost.request_bytes / rate)

        reqs = [per_request(x) for x in cost.request_samples] or (
            [per_request(cost.request_ms)] if cost.request_ms is not None else [])
        req, rng = _expected(reqs)
        open_link = (link.open_s * protocol_open + cost.open_requests * req
                     + (cost.open_requests + extra_rounds) * link.rtt_s + cost.open_bytes / rate)
        read_link = cost.read_requests * (link.rtt_s + req) + cost.read_bytes / rate
        n = len(cost.read_samples)
        if n and len(cost.local_read_samples) == n == len(cost.local_open_samples):
            # each remote pass less the local one right before it: the client's own cost
            opens = [o - lo - open_link for o, lo in zip(_opens(cost), cost.local_open_samples,
                                                         strict=True)]
            reads = [r - lr - read_link for r, lr in zip(cost.read_samples,
                                                         cost.local_read_samples, strict=True)]
        else:  # against the CPU test's passes (the whole file: every entry)
            local = cpu.of(basket_bytes, 0, entries)
            opens = [o - open_link - cpu.open_s for o in cost.open_samples or (
                [cost.open_s] if cost.open_s is not None else [])]
            reads = [max(r - read_link - local, -local) for r in cost.read_samples or (
                [cost.read_s] if cost.read_s is not None else [])]
        file_s, _ = _measured(opens)
        whole, (lo, hi) = _measured(reads)
        per = 1 / cost.baskets if cost.baskets else 0.0
        later = zip(_opens(cost), cost.read_samples, strict=True) if n else iter(())
        firsts = [cost.first_s - o - r for o, r in later] if cost.first_s is not None else []
        first, _ = _measured(firsts)
        return cls(req, file_s, whole * per, rng, max(first, 0.0), (lo * per, hi * per))

    def corner(self, high: bool) -> ClientTerms:
        """The terms at the calibration's fastest (``high`` False) or slowest samples: per
        round trip and per basket at their lowest or highest (an interval's corner)."""
        i = 1 if high else 0
        return ClientTerms(self.request_range[i], self.file_s, self.basket_range[i],
                           self.request_range, self.process_s, self.basket_range)


def _measured(values: Sequence[float]) -> tuple[float, tuple[float, float]]:
    """A measured difference and its corners: the median where at least two samples agree
    on its sign (all of up to four; the quartiles of more), else 0 (not told apart from the
    noise); the corners are the same samples' extremes (quartiles of more than four)."""
    v = sorted(values)
    if len(v) < 2:
        return 0.0, (v[0], v[0]) if v else (0.0, 0.0)
    lo, hi = (v[0], v[-1]) if len(v) <= 4 else (v[len(v) // 4], v[(3 * len(v)) // 4])
    if lo > 0 or hi < 0:
        return statistics.median(v), (lo, hi)
    return 0.0, (lo, hi)


def _expected(values: Sequence[float]) -> tuple[float, tuple[float, float]]:
    """A cost paid many times over and summed (per round trip: a job makes hundreds): the
    samples' mean, their expected value, where there are two or more (one is not told apart
    from the noise: 0); the corners as :func:`_measured`'s, widened to hold the mean.  Each
    sample is already a segment's average; the segments' spread is the machine's own (another
    process's turn on the cores, the client's threads waking late), which a job's many requests
    meet in the same proportion: the median leaves that tail out and predicted ROOT's reads
    without a cache 14-34% too fast at 1 ms, the mean 0-18% (benchmarks/RESULTS.md)."""
    _, (lo, hi) = _measured(values)
    if len(values) < 2:
        return 0.0, (lo, hi)
    m = statistics.fmean(values)
    return m, (min(lo, m), max(hi, m))


def _opens(cost: RemoteClientCost) -> list[float]:
    """The remote opens, one per pass (the median repeated where only it was kept)."""
    n = len(cost.read_samples)
    if len(cost.open_samples) == n:
        return list(cost.open_samples)
    return [cost.open_s or 0.0] * n


__all__ = ["ClientTerms"]
