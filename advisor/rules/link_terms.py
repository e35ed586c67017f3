"""The link terms the remote-data rules share (:mod:`hep_advisor.rules.remote`): the measured
link at the middle and the corners of its spread, the reader's CPU and its client's costs through
the link, and the stream and stage times built from them (link time replayed, plus the reader's
CPU where the calibration measured it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hep_advisor.models.remote_reads import (
    ReaderCpu,
    RemoteLink,
    Round,
    job,
    reader_cpu_s,
    stage,
    stream,
)
from hep_advisor.probes.basketmap import BasketMap
from hep_advisor.probes.readtests.remote_results import RemoteCalibration
from hep_advisor.probes.results import DatasetProfile

#: X001: ``xrdcp``'s fixed cost per file, fitted to the test bench's measurements
#: (benchmarks/validation/bench_remote.py predict: a 32 MB copy less its bytes at the bandwidth took
#: 0.02-0.05 s at a 1 ms round trip, 0.10-0.20 s at 20 ms, 0.43 s at 80 ms): its start
#: (process, client library) and the round trips it makes (handshake, log in, stat, open,
#: close), counting the open
XRDCP_START_S = 0.02
XRDCP_ROUND_TRIPS = 5
#: T001 over the link: the round trip and bandwidth are varied by this fraction where the
#: calibration kept no samples to take their spread from (an assumption, stated)
NO_SPREAD = 0.10
IO_ONLY = ("the speed-up is of the time on the link (round trips and transfer, replayed); "
           "decompression and processing take the same time either way, so the whole job "
           "gains less")


@dataclass(frozen=True)
class Links:
    mid: RemoteLink
    fast: RemoteLink
    slow: RemoteLink


WITH_CPU = ("the whole job: link time (replayed) and the reader's CPU measured on one of the "
            "files fetched whole ({what}), scaled by the compressed MB read and, for ROOT's "
            "loop, the entries it visits")


def reader_cpu(rc: RemoteCalibration, engine: str, client: str | None = None
               ) -> ReaderCpu | None:
    """The reader's CPU terms where the calibration measured them for ``engine``, with its
    client's terms through the link (``client``: the engine's own by default) where
    measured."""
    if rc.cpu is None or rc.cpu.engine != engine:
        return None
    try:
        link: RemoteLink | None = RemoteLink.from_calibration(rc)
    except ValueError:
        link = None
    return ReaderCpu.from_measured(rc.cpu, link, client)


def cpu_corners(rc: RemoteCalibration, cpu: ReaderCpu | None) -> list[ReaderCpu | None]:
    """The CPU terms at the lowest and highest timed pass, each with the client's terms at
    their fastest and slowest samples (``[cpu]`` without samples)."""
    if cpu is None or rc.cpu is None or not rc.cpu.samples or not rc.cpu.loop_s:
        return [cpu]
    clients = [None] if cpu.client is None else [cpu.client.corner(h) for h in (False, True)]
    return [ReaderCpu(cpu.open_s, cpu.mb_s * v / rc.cpu.loop_s, cpu.basket_s, k,
                      cpu.entry_s * v / rc.cpu.loop_s)
            for v in (min(rc.cpu.samples), max(rc.cpu.samples)) for k in clients]


def cpu_text(rc: RemoteCalibration, cpu: ReaderCpu | None) -> str:
    if cpu is None or rc.cpu is None:
        return IO_ONLY
    per_entry = f", {1e6 * cpu.entry_s:.2f} us per entry" if cpu.entry_s else ""
    text = WITH_CPU.format(what=f"{rc.cpu.engine}: {1e3 * cpu.mb_s:.1f} ms per compressed MB"
                                f"{per_entry}, open {1e3 * cpu.open_s:.1f} ms")
    k = cpu.client
    if k is None:
        return text + ("; the reader's own client through the link was not measured (its "
                       "costs beyond the round trips are not counted)")
    return text + (f"; the reader's client read the same file through the link: "
                   f"{1e3 * k.request_s:+.2f} ms per round trip, {1e3 * k.file_s:+.1f} ms per "
                   f"file, {1e6 * k.basket_s:+.0f} us per basket and {1e3 * k.process_s:.0f} ms "
                   "once per process beyond the model's round trips, transfer and local CPU "
                   "(measured less modelled)")


def repeat_spread(rc: RemoteCalibration, cpu: ReaderCpu | None) -> float:
    """How much the same read through the reader's client varied from pass to pass in the
    calibration (half its range over its median; 0 where not measured): the run-to-run
    spread a prediction of one run cannot remove."""
    if cpu is None or cpu.client is None or rc.cpu is None:
        return 0.0
    cost = rc.cpu.client(rc.cpu.engine)
    if cost is None or len(cost.read_samples) < 2 or not cost.read_s:
        return 0.0
    return (max(cost.read_samples) - min(cost.read_samples)) / 2 / cost.read_s


def widened(ratios: Sequence[float], spread: float) -> list[float]:
    """The speed-ups' corners with each of the two ways ``spread`` faster or slower."""
    f = (1 + spread) / max(1 - spread, 1e-3)
    return [min(ratios) / f, max(ratios) * f]


def quartiles(samples: Sequence[float]) -> tuple[float, float]:
    s = sorted(samples)
    if not s:
        return 0.0, 0.0
    return s[len(s) // 4], s[(3 * len(s)) // 4]


def links(rc: RemoteCalibration) -> Links | None:
    try:
        mid = RemoteLink.from_calibration(rc)
    except ValueError:
        return None
    rtt_lo, rtt_hi = quartiles(rc.rtt.samples if rc.rtt else ())
    bw_lo, bw_hi = quartiles(rc.bandwidth.samples if rc.bandwidth else ())
    fast = RemoteLink((rtt_lo or rc.rtt_ms or 0) / 1e3, bw_hi or mid.mb_per_s, mid.open_s,
                      mid.vector_reads)
    slow = RemoteLink((rtt_hi or rc.rtt_ms or 0) / 1e3, bw_lo or mid.mb_per_s, mid.open_s,
                      mid.vector_reads)
    return Links(mid, fast, slow)


def scale(dataset: DatasetProfile, maps: Sequence[BasketMap]) -> float:
    """The replay covers ``maps`` (a sample of the files): times scale to the whole dataset."""
    return max(dataset.files, 1) / max(len(maps), 1)


def io_s(rounds: list[Round], link: RemoteLink, files: int) -> float:
    return stream("", rounds, link, 0.0, 0, files).io_s


def stream_s(rounds: list[Round], link: RemoteLink, files: int, cpu: ReaderCpu | None
              ) -> float:
    """Streaming: link time, or the whole job with the reader's CPU."""
    if cpu is None:
        return io_s(rounds, link, files)
    return job("", rounds, link, cpu, 0, files, overlap=False).total_s


def stage_s(sizes: list[int], rounds: list[Round], link: RemoteLink, cpu: ReaderCpu | None,
             need: int) -> float:
    """Staging: the copies (``xrdcp``'s start, its round trips besides the open, the protocol
    open, the bytes at the bandwidth), then the local read's CPU where measured (the copy is
    read back from the page cache)."""
    n = len(sizes)
    read = reader_cpu_s(rounds, cpu, n) if cpu is not None else 0.0
    return stage(sizes, link, read, need, copy_start_s=XRDCP_START_S,
                 copy_rtts=XRDCP_ROUND_TRIPS - 1).total_s + link.open_s * n


def link_corners(rc: RemoteCalibration, mid: RemoteLink) -> tuple[list[RemoteLink], str]:
    """The link at the corners of its measured spread (round trip and bandwidth at their
    quartiles), or at +-10% of both where the calibration kept no samples; and how."""
    rtt = rc.rtt.samples if rc.rtt else ()
    bw = rc.bandwidth.samples if rc.bandwidth else ()
    if rtt and bw:
        (r_lo, r_hi), (b_lo, b_hi) = quartiles(rtt), quartiles(bw)
        r_lo, r_hi = r_lo / 1e3, r_hi / 1e3
        how = "the link's measured spread (round trip and bandwidth at their quartiles)"
    else:
        r_lo, r_hi = mid.rtt_s * (1 - NO_SPREAD), mid.rtt_s * (1 + NO_SPREAD)
        b_lo, b_hi = mid.mb_per_s * (1 - NO_SPREAD), mid.mb_per_s * (1 + NO_SPREAD)
        how = (f"assumed: round trip and bandwidth +-{100 * NO_SPREAD:.0f}% (the calibration "
               "kept no samples to take their spread from)")
    return [RemoteLink(r, b or mid.mb_per_s, mid.open_s, mid.vector_reads)
            for r in (r_lo, r_hi) for b in (b_lo, b_hi)], how
