"""Reader advice (codes ``U0xx``): one-line changes to the user's own reading code, from a trace.

Each rule looks for its pattern in the attributed trace of the user's program
(:mod:`hep_advisor.models.attribution`), replays the program's reads and the changed program's reads
(:mod:`hep_advisor.models.replay`) through a device whose bandwidth and access time come from the
trace's own cold reads, and predicts the changed program's wall time as

    T_after = T - saved - io + io x io_replayed(after) / io_replayed(before)

where ``T`` is the measured wall time less the tracer's estimated cost, ``io`` the measured
time in read calls less the CPU inside them and ``saved`` measured time the change removes
besides reads (U001: the pre-pass's main thread on a core, sampled, less the tracer's
estimated cost there): the measured I/O scaled by the replay's ratio.  The interval spans the
corners of the device's quartiles (where the access time is derived from the block counters,
each bandwidth with the access time derived at it), ``saved``'s range, ``T`` with and without
the tracer's cost, and the other form, ``T - saved - (io_replayed(before) -
io_replayed(after))``, never below ``T - saved - io``.
A rule whose prediction is below :data:`~hep_advisor.findings.recommendation.MIN_SPEEDUP` says
nothing.

====  ====================================================================================
code  when
====  ====================================================================================
U001  uproot read every basket's key before the data (a memory-size ``step_size``, the
      default ``"100 MB"``): an entry-count ``step_size`` does not
U002  the program read branches it does not use (known only where the user names the ones
      it uses: ``hep-advisor trace --uses A,B``): ``filter_name`` (uproot) or
      ``SetBranchStatus`` (ROOT) reads only those
U003  uproot's default local source opened the file again for every range (fsspec): a source
      that keeps it open (``handler=uproot.MultithreadedFileSource``) keeps the kernel's
      read-ahead
U004  decompression (RDataFrame: the event loop) took a large share of the wall time while
      cores were idle: threads (uproot ``decompression_executor``, with 1.5 or more cores
      idle; ``ROOT.EnableImplicitMT`` for RDataFrame only: a ``GetEntry`` loop without a
      cache ran 0.30x under it).  CPU, not I/O: the I/O is unchanged and the share that
      parallelises is an assumption, said so
U005  ROOT read one basket per request (``GetEntry`` without a TTreeCache): the cache reads
      a cluster's baskets in a few large requests
U006  ROOT's TTreeCache is smaller than a cluster of the branches read (its size inferred by
      replaying candidate sizes against the traced request count): ``SetCacheSize`` to hold
      one
====  ====================================================================================
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from hep_advisor.findings.recommendation import MIN_SPEEDUP, WIDE_INTERVAL, Evidence
from hep_advisor.findings.trace import ReaderFinding
from hep_advisor.models.attribution import Attribution, PhaseSpan, TracedDevice, TracedLink
from hep_advisor.models.replay import (
    Link,
    LocalDevice,
    python_buffered,
    root_cache_bytes,
    root_files,
    uproot_files,
    uproot_step_entries,
)
from hep_advisor.models.replay.requests import Request
from hep_advisor.probes.basketmap import BasketMap
from hep_advisor.probes.trace.sampler import on_core_between

#: A pre-pass is a key read for at least this share of the baskets read.
KEY_SHARE = 0.5
#: ... and at least this many of them.
MIN_KEYS = 16
#: U005: at least this many basket requests, this share of them exactly one basket.
MIN_BASKET_READS = 50
ONE_BASKET_SHARE = 0.8


@dataclass(frozen=True)
class TraceFacts:
    """What a rule needs: the attribution, the files' maps (read order), the measured wall
    time, the device seen in the trace."""

    attribution: Attribution
    maps: tuple[BasketMap, ...]
    wall_s: float
    device: TracedDevice | None
    read_ahead_kb: int = 128
    overhead: float = 0.0  # the tracer's estimated cost / the untraced wall time
    prepass_tracer_s: float = 0.0  # the tracer's estimated cost within the key pre-pass
    # measured: the main thread's seconds on a core within the key pre-pass, and the sampling
    # error bound (probes.trace.sampler.on_core_between: schedstat, sampled); None: not sampled
    prepass_on_core: tuple[float, float] | None = None
    reader: str = "uproot"  # "uproot" or "root": whose reads these are
    uses: tuple[str, ...] = ()  # the branches the user says the program uses (--uses)
    cpu_s: float = 0.0  # measured user + system time
    decompression_s: float | None = None  # derived (a timed sample of the baskets read)
    cores: int = 1
    rdataframe: bool = False  # the program's text builds an RDataFrame
    open_s: float | None = None  # measured seconds opening and closing the files per range
    link: TracedLink | None = None  # remote files: the link seen in the trace
    #: probed: the data's device is a cgroup block throttle for this process, whose fresh
    #: slice (seconds, the kernel's default: assumed) a job starting after idle gets at once
    #: (``LocalDevice.throttle_slice_s``); 0: no throttle found
    throttle_slice_s: float = 0.0
    #: the page cache reads ahead in large folios (kernel release and file system, probed)
    large_folios: bool = False
    #: the device's form and limits where they are known beyond the trace (a cached
    #: calibration of these files, or the cgroup's throttle limits): the replays' device takes
    #: them, with the bandwidth and access time of ``device``; None: a disk from the trace
    template: LocalDevice | None = None


def device_facts(path: str | None) -> dict[str, Any]:
    """The :class:`TraceFacts` fields probed from the storage under ``path`` (the first file
    read), in one storage probe: its device's read-ahead (128 KiB, the kernel's default, where
    unknown), the block throttle's slice where the calling process's cgroup throttles reads on
    that device, and whether the page cache reads ahead in large folios."""
    if path is None or "://" in path:
        return {"read_ahead_kb": 128}
    import platform

    from hep_advisor.models.replay.folios import large_folios
    from hep_advisor.probes.storage import probe_storage

    info = probe_storage(path)
    return {"read_ahead_kb": info.read_ahead_kb or 128,
            "throttle_slice_s": info.throttle.slice_s if info.throttle else 0.0,
            "large_folios": large_folios(platform.release(), info.fs_type),
            "throttle": info.throttle, "max_io_kb": info.max_sectors_kb or 0}


def _local(facts: TraceFacts, mb_per_s: float, access_s: float) -> LocalDevice:
    """A device for U0xx's replays with the probed throttle slice and page-cache folios (and
    the form and limits of ``facts.template`` where known)."""
    if facts.template is not None:
        return replace(facts.template, mb_per_s=mb_per_s, access_s=access_s,
                       read_ahead_kb=facts.read_ahead_kb, large_folios=facts.large_folios,
                       throttle_slice_s=facts.throttle_slice_s)
    return LocalDevice(mb_per_s, access_s, facts.read_ahead_kb, large_folios=facts.large_folios,
                       throttle_slice_s=facts.throttle_slice_s)


def _devices(d: TracedDevice, read_ahead_kb: int,
             template: LocalDevice | None = None) -> list[LocalDevice]:
    """The device seen in the trace, then its corners.  Where the access time was derived
    from the block counters (``device_reads``), it is (time in the reads - bytes / bandwidth)
    / reads: a function of the bandwidth, so each end of the bandwidth's range goes with the
    access time derived at it; the crossed pairs would replay the traced reads far from the
    time they were measured to take (a slower device with the longer access: more than the
    whole measured I/O)."""
    base = (LocalDevice(d.mb_per_s, d.access_s, read_ahead_kb) if template is None
            else replace(template, mb_per_s=d.mb_per_s, access_s=d.access_s))
    out = [base]
    pairs = (zip(d.mb_per_s_range, d.access_s_range, strict=True) if d.device_reads is not None
             else itertools.product(d.mb_per_s_range, d.access_s_range))
    for bw, acc in pairs:
        if bw > 0:
            out.append(replace(base, mb_per_s=bw, access_s=acc))
    if base.throttle_slice_s > 0:  # the slice is the kernel's default, assumed: also none
        out.append(replace(base, throttle_slice_s=0.0))
    return out


def per_replayed_access(facts: TraceFacts, reopen: bool) -> TracedDevice | None:
    """The device with its access time per access *the replay pays*: where the access time
    came from the block counters (per read the device served), scaled by the device's reads
    over the accesses the replay of the traced reads themselves pays (the kernel's read-ahead
    and request merging can serve several traced reads in one device read, or split one), so
    that replaying what the program did costs the access time it measured."""
    d = facts.device
    if d is None or d.device_reads is None:
        return d
    traced = [Request(c.read.file, c.read.offset, c.read.size)
              for c in sorted(facts.attribution.reads, key=lambda c: c.read.start_s)]
    sizes = {m.path: m.file_bytes for m in facts.maps}
    seeks = _local(facts, d.mb_per_s, d.access_s).replay(
        traced, sizes, reopen=reopen).seeks
    if seeks <= 0:
        return d
    k = d.device_reads / seeks
    return replace(d, access_s=d.access_s * k,
                   access_s_range=(d.access_s_range[0] * k, d.access_s_range[1] * k))


def _predict(facts: TraceFacts, before: list[Request], after: list[Request],
             reopen: bool | tuple[bool, bool],
             cpu_saved_s: float = 0.0, cpu_saved_range: tuple[float, float] | None = None
             ) -> tuple[float, float, float, float, float]:
    """(speed-up, low, high, replayed io before, after) at the traced device; the untraced
    wall time is the traced one less the tracer's estimated cost; ``cpu_saved_s``: measured
    time the change removes besides I/O, within ``cpu_saved_range``.  The interval: the
    corners of the device's quartiles (:func:`_devices`), the saved time's range, the
    tracer's cost (as estimated, or none), and both forms."""
    ro_b, ro_a = reopen if isinstance(reopen, tuple) else (reopen, reopen)
    sizes = {m.path: m.file_bytes for m in facts.maps}
    replays: list[tuple[float, float]] = []
    if facts.link is not None:  # a remote file: round trips and bandwidth
        lk = facts.link
        for rtt, bw in [(lk.rtt_s, lk.mb_per_s),
                        *itertools.product(lk.rtt_s_range, lk.mb_per_s_range)]:
            link = Link(rtt, max(bw, 1e-3))
            replays.append((link.replay(before).time_s, link.replay(after).time_s))
    else:
        device = per_replayed_access(facts, ro_b)
        assert device is not None
        for dev in _devices(device, facts.read_ahead_kb,
                            _local(facts, device.mb_per_s, device.access_s)):
            replays.append((dev.replay(before, sizes, reopen=ro_b).time_s,
                            dev.replay(after, sizes, reopen=ro_a).time_s))
    io = facts.attribution.io_s
    walls = (facts.wall_s / (1.0 + facts.overhead), facts.wall_s)
    saved = (cpu_saved_s, *(cpu_saved_range or ()))
    estimates: list[float] = []
    central = (1.0, 0.0, 0.0)
    for n, (b, a) in enumerate(replays):
        if b <= 0:
            continue
        for k, (wall, cpu) in enumerate(itertools.product(walls, saved)):
            rest = max(wall - io - cpu, 1e-3)
            scaled = rest + io * a / b
            # the replay's own difference, bounded by the I/O the trace measured
            absolute = max(wall - cpu - (b - a), rest)
            estimates += [wall / scaled, wall / absolute]
            if n == 0 and k == 0:
                central = (wall / scaled, b, a)
    if not estimates:
        return 1.0, 1.0, 1.0, 0.0, 0.0
    return central[0], min(estimates), max(estimates), central[1], central[2]


def _branches(facts: TraceFacts) -> list[str] | None:
    names: list[str] = []
    for f in facts.attribution.files:
        names.extend(n for n in f.branches_read if n not in names)
    return names or None


def _bandwidth_note(d: TracedDevice) -> str:
    if d.source == "calibration":
        return (f"the cold sequential read of a cached calibration of these files (range "
                f"{d.mb_per_s_range[0]:.1f}-{d.mb_per_s_range[1]:.1f})")
    if d.source == "throttle":
        return ("the cgroup's read limit on this device, as the site probe found it (the "
                f"device behind it may be slower: range {d.mb_per_s_range[0]:.1f}-"
                f"{d.mb_per_s_range[1]:.1f})")
    if d.large_reads and d.streamed:
        return (f"one cold sequential read of the first file after the run: only "
                f"{d.large_reads} cold read(s) of 256 KiB or more in the trace (such a read "
                "after a scattered pre-pass is served in pieces); range "
                f"{d.mb_per_s_range[0]:.1f}-{d.mb_per_s_range[1]:.1f} spans both")
    if d.large_reads:
        return (f"median of {d.large_reads} cold reads of 256 KiB or more; range "
                f"{d.mb_per_s_range[0]:.1f}-{d.mb_per_s_range[1]:.1f} (quartiles)")
    if d.streamed:
        return ("no large read reached the device in the trace: one cold sequential read of "
                "the first file after the run (the interval spans +-20%)")
    return "no large cold read: a lower bound, unconstrained above (the interval spans 10x)"


def _device_evidence(d: TracedDevice) -> tuple[Evidence, ...]:
    return (
        Evidence("device bandwidth", round(d.mb_per_s, 1), "MB/s",
                 "measured" if d.streamed or d.source == "calibration" else
                 "probed" if d.source == "throttle" else "derived", _bandwidth_note(d)),
        Evidence("access time seen in the trace" if d.source is None else
                 "access time (one request)", round(d.access_s * 1e3, 2), "ms",
                 "derived" if d.source is None else
                 "measured" if d.source == "calibration" else "probed", _access_note(d)),
    )


def _medium_evidence(facts: TraceFacts) -> tuple[Evidence, ...]:
    """The device's evidence, or for a remote file the link's."""
    lk = facts.link
    if lk is None:
        assert facts.device is not None
        return _device_evidence(facts.device)
    return (
        Evidence("round trip seen in the trace", round(lk.rtt_s * 1e3, 2), "ms", "derived",
                 f"median of {lk.small_reads} requests of 64 KiB or less; quartiles "
                 f"{lk.rtt_s_range[0] * 1e3:.2f}-{lk.rtt_s_range[1] * 1e3:.2f} ms"),
        Evidence("link bandwidth", round(lk.mb_per_s, 1), "MB/s", "derived",
                 f"{lk.large_reads} requests of 256 KiB or more, less one round trip; range "
                 f"{lk.mb_per_s_range[0]:.1f}-{lk.mb_per_s_range[1]:.1f}"
                 if lk.large_reads else "no large request: a lower bound (range 10x)"))


def _access_note(d: TracedDevice) -> str:
    span = f"{d.access_s_range[0] * 1e3:.2f}-{d.access_s_range[1] * 1e3:.2f} ms"
    if d.source == "calibration":
        return f"the request sweep of a cached calibration of these files ({span})"
    if d.source == "throttle":
        return f"one request slot at the cgroup's IOPS limit ({span})"
    if d.device_reads is not None:
        return (f"(time in the read calls - bytes the device served / bandwidth) / "
                f"{d.device_reads:,} reads counted in /sys/block during the run (other "
                f"programs' reads of that device count too); over the bandwidth's range "
                f"{span}; the replay pays it scaled by those reads over the accesses its "
                f"replay of the traced reads pays")
    return f"median of {d.small_reads} cold reads under 64 KiB; quartiles {span}"


def on_core_in(capture: Any, phase: PhaseSpan | None) -> tuple[float, float] | None:
    """The traced program's main thread's seconds on a core within ``phase`` and the
    sampling's edge bound (:func:`hep_advisor.probes.trace.sampler.on_core_between`); None where
    there is no such phase or the sampler did not see both its ends."""
    if phase is None or capture.pid is None or not capture.samples:
        return None
    got = on_core_between(capture.samples, capture.pid, phase.start_s, phase.end_s)
    return None if got is None else (got[0], got[2])


def _prepass_saved(facts: TraceFacts, measured: float, key_io: float
                   ) -> tuple[float, tuple[float, float], str]:
    """What U001 removes besides the device's time, its range and a note.  The I/O term of
    :func:`_predict` is the time in reads *less the CPU inside them*, so the pre-pass's own
    work is all its main thread's time on a core: uproot's per-key work between the reads
    and the CPU inside the key reads themselves (opening, seeking, copying each range: about
    0.1 ms a key).  Measured by the sampler (schedstat, every 10 ms) between the first and
    the last key read, less the tracer's estimated cost there; range: +- the sampling's
    edge bound.  Not sampled: the time between the key reads (none to all of it)."""
    between = max(measured - key_io, 0.0)
    tracer = facts.prepass_tracer_s
    if facts.prepass_on_core is None:
        return (max(between - tracer, 0.0), (0.0, between),
                "saved too: the per-request work of the pre-pass between its reads, less the "
                f"tracer's estimated {tracer:.2f} s in it")
    on, edge = facts.prepass_on_core
    saved = max(on - tracer, 0.0)
    return (saved, (max(saved - edge, 0.0), on + edge),
            f"saved too: the main thread's time on a core from the first to the last key read "
            f"(sampled schedstat, +-{edge:.2f} s; inside the key reads and between them), less "
            f"the tracer's estimated {tracer:.2f} s in it")


def step_rule(facts: TraceFacts) -> ReaderFinding | None:
    """U001: a memory-size ``step_size`` makes uproot read every basket's key first."""
    att = facts.attribution
    keys = sum(f.key_baskets for f in att.files)
    baskets = sum(max(f.baskets_read, f.key_baskets) for f in att.files)
    if keys < MIN_KEYS or keys < KEY_SHARE * baskets or not facts.maps or \
            (facts.device is None and facts.link is None):
        return None
    branches = _branches(facts)
    chosen_maps = [m for m in facts.maps if m.baskets]
    steps = []
    for m in chosen_maps:
        chosen = m.select(branches)
        n = uproot_step_entries(m, chosen, 0, m.entries, 100_000_000)
        bounds = m.clusters
        if len(bounds) > 2 and n >= int(bounds[1]):  # whole clusters: cut at a boundary
            n = int(bounds[bounds <= n][-1]) if (bounds <= n).any() else n
        steps.append(n)
    # the smallest (within the memory size in every file), at most the largest file's entries
    step = max(min(min(steps), max(m.entries for m in chosen_maps)), 1)
    sizes = {m.path: m.file_bytes for m in chosen_maps}
    before = uproot_files(chosen_maps, branches, step_size="100 MB")
    after = uproot_files(chosen_maps, branches, step_size=step)
    if facts.link is None:  # a local file: fsspec's buffered reads
        before = list(python_buffered(before, 4096, sizes))
        after = list(python_buffered(after, 4096, sizes))
    pre = att.phase("pre-pass")
    measured = pre.end_s - pre.start_s if pre is not None else att.kind_time_s("key")
    key_io = att.kind_time_s("key")
    cpu_pre, saved_range, saved_note = _prepass_saved(facts, measured, key_io)
    s, lo, hi, b, a = _predict(facts, before, after, reopen=True, cpu_saved_s=cpu_pre,
                               cpu_saved_range=saved_range)
    if s < MIN_SPEEDUP:
        return None
    return ReaderFinding(
        code="U001",
        title=f"an entry-count step_size skips the key pre-pass ({keys:,} key reads)",
        predicted_speedup=s, speedup_low=lo, speedup_high=hi,
        change=f"tree.iterate(..., step_size={step})  # or uproot.iterate(..., "
               f"step_size={step}): entries per step, not a memory size",
        argument="step_size", value=str(step),
        evidence=(
            Evidence("basket keys read alone before the data", keys, "requests", "measured",
                     "uproot turns a memory-size step_size into entries by reading every "
                     "basket's key header, one request each"),
            Evidence("pre-pass time (first to last key read)", round(measured, 3), "s",
                     "measured"),
            Evidence("of which in the key reads", round(key_io, 3), "s", "measured"),
            Evidence("pre-pass time on a core, untraced" if facts.prepass_on_core else
                     "pre-pass time besides the reads, untraced", round(cpu_pre, 3), "s",
                     "derived", saved_note),
            Evidence("pre-pass I/O replayed (before - after)", round(b - a, 3), "s", "derived"),
            Evidence("wall time", round(facts.wall_s, 3), "s", "measured"),
            Evidence("entries per step of the same memory size", step, "entries", "derived",
                     "uproot's own rule on the basket map, cut at a cluster boundary"),
            *_medium_evidence(facts), *_narrowing(facts, lo, hi)))


def _narrowing(facts: TraceFacts, lo: float, hi: float) -> tuple[Evidence, ...]:
    """Where the interval is wide, what spans it and what would narrow it."""
    if hi <= WIDE_INTERVAL * lo:
        return ()
    d, lk = facts.device, facts.link
    spans = (f"the device's bandwidth {d.mb_per_s_range[0]:.1f}-{d.mb_per_s_range[1]:.1f} MB/s"
             if d is not None else
             f"the link's {lk.mb_per_s_range[0]:.1f}-{lk.mb_per_s_range[1]:.1f} MB/s" if lk
             else "the medium's range")
    why = ("; its low end is the rate of the trace's own large reads, served in pieces "
           "between the pages the pre-pass cached, and the changed program reads without the "
           "pre-pass" if d is not None and d.streamed and d.large_reads else "")
    return (Evidence("what would narrow the interval", "time the changed program once, cold",
                     "", "derived",
                     f"{lo:.2f}-{hi:.2f}x spans {spans}{why}: one cold run of it "
                     "(hep-advisor trace --cold -- <the changed program>) measures its time"),)


def treecache_rule(facts: TraceFacts) -> ReaderFinding | None:
    """U005: ROOT reads one basket per request (no TTreeCache)."""
    att = facts.attribution
    if facts.device is None or not facts.maps:
        return None
    if any(f.opens > 2 for f in att.files):  # one open per file: ROOT, not fsspec
        return None
    exact = total = 0
    spans = {m.path: {(int(s), int(n)) for b in m.branches
                      for s, n in zip(b.seek, b.nbytes, strict=True)} for m in facts.maps}
    for c in att.reads:
        if c.kind != "basket":
            continue
        total += 1
        exact += (c.read.offset, c.read.size) in spans.get(c.read.file, set())
    if total < MIN_BASKET_READS or exact < ONE_BASKET_SHARE * total:
        return None
    branches = _branches(facts)
    maps = list(facts.maps)
    cache = max(root_cache_bytes(m) for m in maps)
    before = root_files(maps, branches, cache_bytes=0)
    after = root_files(maps, branches, cache_bytes=cache, learn_entries=0)  # as printed
    s, lo, hi, b, a = _predict(facts, before, after, reopen=False)
    if s < MIN_SPEEDUP:
        return None
    return ReaderFinding(
        code="U005",
        title=f"a TTreeCache reads each cluster in a few requests ({total:,} basket "
              "requests now, one basket each)",
        predicted_speedup=s, speedup_low=lo, speedup_high=hi,
        change=f"tree.SetCacheSize({cache})\ntree.AddBranchToCache(\"*\", True)",
        argument="SetCacheSize", value=str(cache),
        evidence=(
            Evidence("basket requests of exactly one basket", exact, "requests", "measured",
                     f"of {total}"),
            Evidence("cache size (ROOT's automatic rule on the basket map)", cache, "bytes",
                     "derived"),
            Evidence("I/O replayed without and with the cache", f"{b:.3f} s -> {a:.3f} s",
                     "", "derived"),
            Evidence("wall time", round(facts.wall_s, 3), "s", "measured"),
            *_device_evidence(facts.device)))


def maps_in_read_order(maps: Sequence[BasketMap], order: Sequence[str]) -> tuple[BasketMap, ...]:
    by_path = {m.path: m for m in maps}
    return tuple(by_path[p] for p in order if p in by_path)
