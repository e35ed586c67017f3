"""The reader's own client through the link, beyond what :mod:`hep_advisor.models.remote` counts:
the calibration reads one file through the client (``RemoteClientCost``: uproot's sources, ROOT in a
child process), each pass beside the same pass on a local copy, and what is left after the
model's round trips, bytes and local CPU becomes a cost per round trip, per file, per basket
and once per process (:class:`ClientTerms`).  Each can be negative (the model then counts too
much); the per-round-trip term is its samples' mean (:func:`_expected`), the others count only
where their samples agree on a sign (:func:`_measured`).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hep_advisor.probes.readtests.remote_results import RemoteClientCost

if TYPE_CHECKING:
    from .remote import ReaderCpu, RemoteLink


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
