"""Remote-data rules (``root://``, ``http(s)://``): stream, stage or cache (X001), the uproot
source (X002), parallel streams (X003) and ROOT's TTreeCache over the link (T001), from the
link the remote read tests measured (``Calibration.remote``) and the readers' requests replayed
through it (:mod:`hep_advisor.models.remote_reads`).

These rules need no fitted rate model.  The remote calibration measures the link and, on one
of the files fetched whole, the reader's CPU (``RemoteCalibration.cpu``: per file opened and
per compressed MB); each option's time is then the whole job's
(:func:`hep_advisor.models.remote_reads.job`: the link time plus the CPU, for uproot as for ROOT: on
the test bench uproot's work did not overlap its requests measurably), and the speed-up is of the
whole job.  Where the CPU was not measured for the reader in question the speed-up is of the time on
the link only, and the recommendation says so.  Where the calibration also read that file through
the reader's own client (``RemoteReaderCpu.clients``), what the client costs beyond the model's
round trips, transfer and local CPU is added (:class:`hep_advisor.models.link.ClientTerms`: per
round trip, per file, per basket, once per process).  The interval covers the link's measured spread
(round trip and bandwidth at their quartiles), the CPU passes' lowest and highest, the client's
fastest and slowest samples, and how much the same read through the client varied from pass to pass
(each way that much faster or slower: the run-to-run spread one prediction cannot remove).
"""

from __future__ import annotations

from collections.abc import Sequence

from hep_advisor.findings.recommendation import (
    MIN_SPEEDUP,
    Action,
    Evidence,
    Recommendation,
    severity_for,
    with_interval,
)
from hep_advisor.models.remote_reads import (
    ReaderCpu,
    RemoteLink,
    RemotePrediction,
    break_even_fraction,
    needed_bytes,
    root_rounds,
    treecache_remote,
    uproot_rounds,
)
from hep_advisor.models.replay.readers import root_cache_bytes
from hep_advisor.probes.basketmap import BasketMap
from hep_advisor.probes.readtests.remote_results import RemoteCalibration, RemoteSamples
from hep_advisor.probes.readtests.results import Calibration
from hep_advisor.probes.results import DatasetProfile
from hep_advisor.rules import link_terms, versions
from hep_advisor.rules.link_terms import (
    XRDCP_ROUND_TRIPS,
    XRDCP_START_S,
    cpu_corners,
    cpu_text,
    io_s,
    link_corners,
    reader_cpu,
    repeat_spread,
    scale,
    stage_s,
    stream_s,
    widened,
)
from hep_advisor.rules.rule import Rule

#: X003: parallel streams recommended when k streams measured at least this much faster
STREAMS_MIN_GAIN = 1.10


def link_rows(calibration: Calibration) -> list[tuple[str, str]]:
    """The remote read tests as (label, text) rows for the calibration views."""
    rc = calibration.remote
    if rc is None:
        return []

    def spread(s: RemoteSamples | None) -> str:
        return f" (spread {100 * s.spread:.1f}%)" if s is not None and s.spread else ""

    vec = rc.vector_reads
    rows = [
        ("remote", f"{rc.server}, {rc.scheme}:// — {rc.url}"),
        ("round trip", f"{rc.rtt_ms or 0:.2f} ms{spread(rc.rtt)}; a 1-byte read "
                       f"{rc.read_latency_ms or 0:.2f} ms"),
        ("bandwidth", f"{rc.bandwidth_mb_per_s or 0:.2f} MB/s one stream{spread(rc.bandwidth)}"),
        ("streams", ", ".join(f"{p.streams}: {p.aggregate_mb_per_s:.2f} MB/s"
                              for p in rc.parallel_streams) or "not measured"),
        ("vector reads", "not measured" if vec is None else (
            f"{vec.chunks} ranges of {vec.chunk_bytes} B in {1e3 * (vec.vector_s or 0):.1f} "
            f"ms; one range {1e3 * (vec.single_s or 0):.1f} ms" if vec.supported
            else f"not supported: {vec.reason}")),
        ("remote open", f"{1e3 * (rc.open_s or 0):.1f} ms (first {1e3 * (rc.first_open_s or 0):.1f}"
                        " ms)"),
        ("request sizes", " · ".join(f"{p.request_bytes // 1024} KiB {1e3 * p.seconds:.1f} ms"
                                     for p in rc.request_sweep) or "not measured"),
    ]
    if rc.fit_latency_ms is not None and rc.fit_bandwidth_mb_per_s is not None:
        rows.append(("sweep fit", f"{rc.fit_latency_ms:.2f} ms + bytes at "
                                  f"{rc.fit_bandwidth_mb_per_s:.2f} MB/s"))
    return rows


def link_notes(calibration: Calibration, dataset: DatasetProfile | None = None,
               maps: Sequence[BasketMap] = (), branches: Sequence[str] | None = None
               ) -> list[str]:
    """The remote calibration in a line or two, for the report's notes; with the dataset and
    its basket maps, also the choice between streaming and staging (link time, replayed),
    whether or not X001 recommends a change."""
    rc = calibration.remote
    if rc is None:
        return []
    choice = _choice_note(calibration, rc, dataset, maps, branches) if dataset else None
    vec = rc.vector_reads
    vtext = ("vector reads: not supported" if vec is None or not vec.supported else
             f"vector reads: {vec.chunks} ranges in {1e3 * (vec.vector_s or 0):.1f} ms, one "
             f"range {1e3 * (vec.single_s or 0):.1f} ms")
    streams = ", ".join(f"{p.streams}: {p.aggregate_mb_per_s:.1f}" for p in rc.parallel_streams)
    return [
        f"remote data ({rc.server}, {rc.scheme}://): round trip {rc.rtt_ms or 0:.2f} ms, "
        f"bandwidth {rc.bandwidth_mb_per_s or 0:.2f} MB/s one stream (streams -> MB/s: "
        f"{streams or 'not measured'}), open {1e3 * (rc.open_s or 0):.1f} ms, {vtext}",
        _cpu_note(rc),
        *([choice] if choice else []),
    ]


def _cpu_note(rc: RemoteCalibration) -> str:
    c = rc.cpu
    if c is None or c.mb_s is None:
        return ("no rate model: the remote calibration measured the link, not the reader's "
                "CPU; remote advice (X001-X003, T001) compares link time only")
    return (f"no rate model; the reader's CPU ({c.engine}) measured on {c.url} fetched whole "
            f"({c.file_bytes / 1e6:.1f} MB, {c.baskets} baskets): open "
            f"{1e3 * (c.open_s or 0):.1f} ms, {1e3 * c.mb_s:.1f} ms per compressed MB "
            f"({len(c.samples)} passes, spread {100 * (c.spread or 0):.0f}%); remote advice "
            "compares whole-job times")


def _choice_note(calibration: Calibration, rc: RemoteCalibration, dataset: DatasetProfile,
                 maps: Sequence[BasketMap], branches: Sequence[str] | None) -> str | None:
    links = link_terms.links(rc)
    if links is None or not maps:
        return None
    sel = list(branches) if branches else None
    try:
        rounds = (root_rounds(maps, sel, tree_cache=True) if calibration.engine == "root"
                  else uproot_rounds(maps, sel))
        need = needed_bytes(maps, sel)
    except (KeyError, ValueError):
        return None
    k = scale(dataset, maps)
    cpu = reader_cpu(rc, calibration.engine)
    sizes = [m.file_bytes for m in maps]
    s = stream_s(rounds, links.mid, len(maps), cpu) * k
    g = stage_s(sizes, rounds, links.mid, cpu, need) * k
    total = sum(sizes)
    per_byte = io_s(rounds, links.mid, len(maps)) / need if need else 0.0
    even = break_even_fraction(int(total / max(len(maps), 1)), links.mid, per_byte)
    best = "stream" if s <= g else "stage"
    reader = "ROOT with TTreeCache" if calibration.engine == "root" else "uproot"
    what = "link time" if cpu is None else "whole job"
    return (f"stream or stage ({reader}, {what} replayed on {len(maps)} file(s), scaled to "
            f"{dataset.files}): streaming {s:.2f} s ({len(rounds)} round trips per "
            f"{len(maps)} file(s)), staging {g:.2f} s; the program reads "
            f"{100 * need / total if total else 0:.0f}% of the bytes, break-even "
            f"{100 * (even or 0):.0f}%: {best} (a cache such as XCache serves later reads of "
            "the same files over the LAN)")


def remote_rules(dataset: DatasetProfile, calibration: Calibration | None,
                 maps: Sequence[BasketMap], branches: Sequence[str] | None = None,
                 engine: str = "uproot", label: str = "dataset") -> list[Recommendation]:
    """X001, X002, X003 and T001 where they apply (an empty list for local data), each's
    severity following its interval."""
    rc = calibration.remote if calibration is not None else None
    if rc is None:
        return []
    engine = calibration.engine if calibration is not None else engine
    out = [stage_rule(dataset, rc, maps, branches, engine, label),
           source_rule(dataset, rc, maps, branches, label),
           step_rule(dataset, rc, maps, branches, label),
           streams_rule(rc, label),
           treecache_rule(dataset, rc, maps, branches, label)]
    return [with_interval(r, r.speedup_low, r.speedup_high) for r in out if r is not None]


def stage_rule(dataset: DatasetProfile, rc: RemoteCalibration, maps: Sequence[BasketMap],
               branches: Sequence[str] | None, engine: str = "uproot",
               label: str = "dataset") -> Recommendation | None:
    """X001: stage whole files first where copying them beats streaming what is read."""
    links = link_terms.links(rc)
    if links is None or not maps:
        return None
    sel = list(branches) if branches else None
    try:  # the reader: uproot's arrays / iterate, or ROOT's loop with its default TTreeCache
        rounds = (root_rounds(maps, sel, tree_cache=True) if engine == "root"
                  else uproot_rounds(maps, sel))
        need = needed_bytes(maps, sel)
    except (KeyError, ValueError):
        return None
    k = scale(dataset, maps)
    sizes = [m.file_bytes for m in maps]
    total = sum(sizes)
    cpu = reader_cpu(rc, engine)

    def times(link: RemoteLink, c: ReaderCpu | None = cpu) -> tuple[float, float]:
        s = stream_s(rounds, link, len(maps), c) * k
        return s, stage_s(sizes, rounds, link, c, need) * k

    s_mid, g_mid = times(links.mid)
    speed = s_mid / g_mid if g_mid > 0 else 0.0
    ratios = [a / b for lk in (links.slow, links.fast) for c in cpu_corners(rc, cpu)
              for a, b in [times(lk, c)] if b > 0] or [speed]
    repeat = repeat_spread(rc, cpu)
    lo, hi = min(widened(ratios, repeat)), max(widened(ratios, repeat))
    fraction = need / total if total else None
    per_byte = io_s(rounds, links.mid, len(maps)) / need if need else 0.0
    even = break_even_fraction(int(total / max(len(maps), 1)), links.mid, per_byte)
    what = "link time" if cpu is None else "whole job"
    ev = [
        Evidence("round trip", round(rc.rtt_ms or 0, 2), "ms", "measured", rc.rtt.note
                 if rc.rtt else None),
        Evidence("bandwidth, one stream", round(links.mid.mb_per_s, 2), "MB/s", "measured"),
        Evidence("open", round(rc.open_s or 0, 4), "s", "measured"),
        Evidence("fraction of the bytes read", round(100 * fraction, 1) if fraction else "?",
                 "%", "derived", "basket bytes of the branches read / file sizes"),
        Evidence("break-even fraction", round(100 * even, 1) if even else "?", "%", "derived",
                 "above it, copying whole files costs less link time than streaming"),
        Evidence(f"streaming, {what}", round(s_mid, 2), "s", "derived",
                 f"{len(rounds)} round trips replayed on {len(maps)} file(s)"),
        Evidence(f"staging, {what}", round(g_mid, 2), "s", "derived",
                 f"whole files at the bandwidth; xrdcp's fixed cost each: {XRDCP_ROUND_TRIPS} "
                 f"round trips and {1e3 * XRDCP_START_S:.0f} ms" + (
                     "" if cpu is None else "; then the reader's CPU")),
    ]
    if speed < MIN_SPEEDUP:
        return None
    first = dataset.file_paths[0] if dataset.file_paths else "root://HOST//PATH/file.root"
    return Recommendation(
        code="X001", kind="remote", title="Stage the files to local disk before reading",
        severity=severity_for(speed), audience="analyst", predicted_speedup=round(speed, 3),
        speedup_low=round(lo, 3), speedup_high=round(hi, 3), workers=1,
        scenario="stage: copy whole files (xrdcp), then read locally",
        summary=(f"The analysis reads {100 * (fraction or 0):.0f}% of each file's bytes, above "
                 f"the break-even {100 * (even or 0):.0f}%: copying whole files and reading "
                 f"them takes {g_mid:.1f} s ({what}) against {s_mid:.1f} s streaming "
                 f"({len(rounds)} round trips of {rc.rtt_ms:.0f} ms in the replay)."),
        evidence=tuple(ev),
        actions=(
            Action.labelled("copy each file, then read the copy (with -r: a directory)",
                            f"xrdcp {first} /local/scratch/",
                            "the XRootD client (xrdcp); Debian: xrootd-client"),
            Action.labelled("or copy the next file while the current one is processed",
                            "a thread or process running xrdcp one file ahead",
                            "Python's concurrent.futures"),
        ),
        assumptions=(cpu_text(rc, cpu), f"xrdcp's fixed cost per file ({XRDCP_ROUND_TRIPS} "
                     f"round trips and {1e3 * XRDCP_START_S:.0f} ms to start) as measured on "
                     "the project's test bench", "the local disk writes and rereads the copies at "
                     "least as fast as the link (the copy is then read from the page cache)"),
        dataset=label)


def source_rule(dataset: DatasetProfile, rc: RemoteCalibration, maps: Sequence[BasketMap],
                branches: Sequence[str] | None, label: str = "dataset"
                ) -> Recommendation | None:
    """X002: uproot's XRootDSource (baskets as vector reads, no gaps) over root:// where the
    default source's range merging moves enough extra bytes to cost link time."""
    links = link_terms.links(rc)
    if links is None or not maps or rc.scheme != "root":
        return None
    if rc.vector_reads is None or not rc.vector_reads.supported:
        return None
    sel = list(branches) if branches else None
    try:
        fs = uproot_rounds(maps, sel, source="fsspec")
        xs = uproot_rounds(maps, sel, source="xrootd")
    except (KeyError, ValueError):
        return None
    cpu = reader_cpu(rc, "uproot")
    cpu_x = reader_cpu(rc, "uproot", "uproot XRootDSource")
    n = len(maps)
    t_fs = stream_s(fs, links.mid, n, cpu)
    t_x = stream_s(xs, links.mid, n, cpu_x)
    speed = t_fs / t_x if t_x > 0 else 0.0
    ratios = [stream_s(fs, lk, n, c) / stream_s(xs, lk, n, cx)
              for lk in (links.slow, links.fast)
              for c, cx in zip(cpu_corners(rc, cpu), cpu_corners(rc, cpu_x), strict=False)]
    if speed < MIN_SPEEDUP:
        return None
    b_fs = sum(r.nbytes for r in fs)
    b_x = sum(r.nbytes for r in xs)
    return Recommendation(
        code="X002", kind="remote", title="Read with uproot's XRootDSource",
        severity=severity_for(speed), audience="analyst", predicted_speedup=round(speed, 3),
        speedup_low=round(min(widened(ratios, repeat_spread(rc, cpu))), 3),
        speedup_high=round(max(widened(ratios, repeat_spread(rc, cpu))), 3), workers=1,
        scenario="uproot handler=XRootDSource (vector reads of the baskets only)",
        summary=(f"uproot's default source merges ranges with gaps up to 32 KiB and moves "
                 f"{b_fs / 1e6:.2f} MB where the baskets read hold {b_x / 1e6:.2f} MB "
                 f"(replayed on {len(maps)} file(s)); XRootDSource asks for the baskets alone "
                 "in vector reads."),
        evidence=(
            Evidence("bytes moved, default source", round(b_fs / 1e6, 3), "MB", "derived"),
            Evidence("bytes moved, XRootDSource", round(b_x / 1e6, 3), "MB", "derived"),
            Evidence("vector reads", "supported", "", "measured",
                     f"{rc.vector_reads.chunks} chunks in {rc.vector_reads.vector_s or 0:.3f} s"),
            Evidence("bandwidth, one stream", round(links.mid.mb_per_s, 2), "MB/s", "measured"),
        ),
        actions=(Action.labelled(
            "open the files with XRootDSource; iterate with an entry-count step (uproot 5.7.7's "
            "default memory-size step fails over root:// with the default source)",
            'uproot.iterate({"root://HOST//FILE.root": "TREE"}, step_size=100_000, '
            "handler=uproot.source.xrootd.XRootDSource)", versions.UPROOT),),
        assumptions=(cpu_text(rc, cpu),),
        dataset=label)


def step_rule(dataset: DatasetProfile, rc: RemoteCalibration, maps: Sequence[BasketMap],
              branches: Sequence[str] | None, label: str = "dataset"
              ) -> Recommendation | None:
    """X004: uproot's default ``iterate`` (a memory-size ``step_size``, ``"100 MB"``) first
    reads every selected basket's key, one synchronous request each: over a link, a round trip
    per basket.  An entry-count step reads no key.  Replayed through the link (both with the
    default source); where the calibration found the installed uproot's default failing over
    the link (``RemoteCalibration.default_iterate_error``), the recommendation says so."""
    from hep_advisor.models.replay.predict import cluster_step

    links = link_terms.links(rc)
    if links is None or not maps or (rc.cpu is not None and rc.cpu.engine != "uproot"):
        return None
    sel = list(branches) if branches else None
    try:
        step = cluster_step(maps, sel)
        keyed = uproot_rounds(maps, sel, step_bytes=100_000_000)
        stepped = uproot_rounds(maps, sel, step_entries=step)
    except (KeyError, ValueError):
        return None
    cpu = reader_cpu(rc, "uproot")
    n = len(maps)
    t_keyed = stream_s(keyed, links.mid, n, cpu)
    t_step = stream_s(stepped, links.mid, n, cpu)
    speed = t_keyed / t_step if t_step > 0 else 0.0
    error = rc.default_iterate_error
    if speed < MIN_SPEEDUP and error is None:
        return None
    ratios = [stream_s(keyed, lk, n, c) / stream_s(stepped, lk, n, c)
              for lk in (links.slow, links.fast) for c in cpu_corners(rc, cpu)]
    keys = sum(1 for r in keyed if r.ranges and r.baskets == 0 and r.nbytes <= 64) \
        - sum(1 for r in stepped if r.ranges and r.baskets == 0 and r.nbytes <= 64)
    k = scale(dataset, maps)
    fails = (f"uproot's default iterate fails over this link as installed here ({error}); "
             if error else "")
    title = ("Step uproot by entries over the link: its default iterate fails here" if error
             else f"Step uproot by entries over the link ({keys * k:,.0f} key round trips)")
    return Recommendation(
        code="X004", kind="remote", title=title,
        severity=severity_for(speed), audience="analyst", predicted_speedup=round(speed, 3),
        speedup_low=round(min(widened(ratios, repeat_spread(rc, cpu))), 3),
        speedup_high=round(max(widened(ratios, repeat_spread(rc, cpu))), 3), workers=1,
        scenario=f"uproot iterate: step_size='100 MB' -> {step:,} entries",
        summary=(f"{fails}uproot's default step_size ('100 MB', a memory size) first reads "
                 f"every basket's key, one request each: {keys * k:,.0f} round trips of "
                 f"{links.mid.rtt_s * 1e3:.1f} ms before the data "
                 f"({t_keyed * k:.1f} s replayed, against {t_step * k:.1f} s with an "
                 f"entry-count step of {step:,} entries, whole clusters)."),
        evidence=(
            Evidence("uproot's default iterate over the link",
                     "fails" if error else "reads", "", "measured",
                     error or "tried on the first basket of one branch"),
            Evidence("key round trips", round(keys * k), "", "derived",
                     f"one per selected basket (replayed on {n} file(s), scaled to "
                     f"{dataset.files})"),
            Evidence("round trip", round(links.mid.rtt_s * 1e3, 2), "ms", "measured"),
            Evidence("job, default step (replayed)", round(t_keyed * k, 2), "s", "derived"),
            Evidence("job, entry step (replayed)", round(t_step * k, 2), "s", "derived"),
        ),
        actions=(Action.labelled(
            "iterate with an entry-count step (whole clusters): no key pre-pass",
            f'uproot.iterate({{"root://HOST//FILE.root": "TREE"}}, step_size={step})',
            versions.UPROOT),),
        assumptions=(cpu_text(rc, cpu),),
        dataset=label)


def streams_rule(rc: RemoteCalibration, label: str = "dataset") -> Recommendation | None:
    """X003: read several files (or ranges) at once where parallel streams measured faster."""
    pts = {p.streams: p.aggregate_mb_per_s for p in rc.parallel_streams}
    one = pts.get(1)
    if not one:
        return None
    best = max(pts, key=lambda k: pts[k])
    gain = pts[best] / one
    if best <= 1 or gain < STREAMS_MIN_GAIN:
        return None
    samples = [v / one for p in rc.parallel_streams if p.streams == best for v in p.samples]
    return Recommendation(
        code="X003", kind="remote", title=f"Read {best} files at once over the link",
        severity=severity_for(gain), audience="analyst", predicted_speedup=round(gain, 3),
        speedup_low=round(min(samples, default=gain), 3),
        speedup_high=round(max(samples, default=gain), 3), workers=best,
        scenario=f"{best} parallel streams",
        summary=(f"{best} reads at once measured {pts[best]:.1f} MB/s against {one:.1f} MB/s "
                 "for one: one stream does not fill this link."),
        evidence=tuple(Evidence(f"{k} stream{'s' if k > 1 else ''}", round(v, 2), "MB/s",
                                "measured") for k, v in sorted(pts.items())),
        actions=(Action.labelled("one process per file (each its own stream)",
                                 f"concurrent.futures.ProcessPoolExecutor(max_workers={best})",
                                 versions.UPROOT_PROCESSES),),
        assumptions=("measured with large reads; a reader's smaller requests gain less",
                     "XRootD's client shares one connection per server between the files of "
                     "one process: separate processes open separate connections"),
        dataset=label)


def _cache_code(size: int, sel: list[str] | None, python: bool) -> str:
    """``SetCacheSize`` and ``AddBranchToCache`` for the branches read: ``"*"`` when the loop
    reads them all (with a selection, ``"*"`` would fill the cache with every branch)."""
    if python:
        calls = [f"tree.SetCacheSize({size})",
                 *(f'tree.AddBranchToCache("{n}", True)' for n in sel or ["*"])]
        return "; ".join(calls)
    calls = [f"tree->SetCacheSize({size});",
             *(f'tree->AddBranchToCache("{n}", true);' for n in sel or ["*"])]
    return " ".join(calls)


def treecache_rule(dataset: DatasetProfile, rc: RemoteCalibration, maps: Sequence[BasketMap],
                   branches: Sequence[str] | None, label: str = "dataset"
                   ) -> Recommendation | None:
    """T001 over the link: ROOT's ``GetEntry`` loop with a TTreeCache (one vector read per
    cache fill) against without one (one round trip per basket), replayed through the
    measured link; where the loop without the cache is at least 1.05x slower."""
    try:
        mid = RemoteLink.from_calibration(rc)
    except ValueError:
        return None
    if not maps:
        return None
    sel = list(branches) if branches else None
    cpu = reader_cpu(rc, "root")
    try:
        off, on = treecache_remote(maps, sel, mid, cpu)
        size = max(root_cache_bytes(m) for m in maps)
    except (KeyError, ValueError):
        return None
    if on.total_s <= 0 or off.total_s / on.total_s < MIN_SPEEDUP:
        return None
    speed = off.total_s / on.total_s
    corners, how = link_corners(rc, mid)
    ratios = [a.total_s / b.total_s for lk in corners for c in cpu_corners(rc, cpu)
              for a, b in [treecache_remote(maps, sel, lk, c)] if b.total_s > 0] or [speed]
    if cpu is not None:
        how += "; the reader's CPU at its lowest and highest timed pass"
    repeat = repeat_spread(rc, cpu)
    if repeat:
        ratios = widened(ratios, repeat)
        how += (f"; the same read through ROOT's client repeated: +-{100 * repeat:.0f}% pass to "
                "pass, for each way")
    k = scale(dataset, maps)

    def amp(p: RemotePrediction) -> float | str:
        return round(p.amplification, 2) if p.amplification is not None else "?"

    files = f"replayed on {len(maps)} file(s)"
    ev = (
        Evidence("round trip", round(rc.rtt_ms or 0, 2), "ms", "measured",
                 (rc.rtt.note or None) if rc.rtt else None),
        Evidence("bandwidth, one stream", round(mid.mb_per_s, 2), "MB/s", "measured"),
        Evidence("round trips without TTreeCache", off.round_trips, "", "derived",
                 f"one per basket, after the open's reads; {files}"),
        Evidence("round trips with TTreeCache", on.round_trips, "", "derived",
                 f"one vector read per cache fill, after the open's reads; {files}"),
        Evidence("bytes moved without / with", f"{off.bytes_moved / 1e6:.3f} / "
                 f"{on.bytes_moved / 1e6:.3f}", "MB", "derived", files),
        Evidence("read amplification without / with", f"{amp(off)} / {amp(on)}", "x",
                 "derived", "bytes moved / basket bytes of the branches read"),
        Evidence("link time without TTreeCache", round(off.io_s * k, 2), "s", "derived",
                 f"{files}, scaled to {dataset.files}"),
        Evidence("link time with TTreeCache", round(on.io_s * k, 2), "s", "derived",
                 f"{files}, scaled to {dataset.files}"),
        Evidence("cache size", round(size / 1e6, 2), "MB", "derived",
                 "ROOT's automatic size, the one replayed: 1.5x a cluster's compressed bytes "
                 "(the largest of the files replayed)"),
        *((Evidence("whole job without / with", f"{off.total_s * k:.2f} / "
                    f"{on.total_s * k:.2f}", "s", "derived",
                    f"link time and ROOT's CPU ({on.cpu_s * k:.2f} s, measured on one file "
                    "fetched whole); scaled"),) if cpu is not None else ()),
    )
    return Recommendation(
        code="T001", kind="treecache",
        title=f"Read through a {size / 1e6:.3g} MB TTreeCache over the remote link (ROOT)",
        severity=severity_for(speed), audience="analyst", predicted_speedup=round(speed, 3),
        speedup_low=round(min(ratios), 3), speedup_high=round(max(ratios), 3), workers=1,
        scenario="ROOT GetEntry loop over the link: TTreeCache off -> on",
        summary=(f"Without a TTreeCache, ROOT's loop asks the server for each basket in turn: "
                 f"{off.round_trips:,} round trips of {rc.rtt_ms or 0:.0f} ms, {off.io_s * k:.1f} "
                 f"s of link time; with it, one vector read per cache fill: {on.round_trips:,} "
                 f"round trips, {on.io_s * k:.1f} s ({files}). ROOT 6 turns the cache on by "
                 "default: this matters where a loop turns it off (SetCacheSize(0), "
                 "TTreeCache.Size 0) or reads without one."),
        evidence=ev,
        actions=(
            Action.labelled("ROOT (TTree loop, C++)", _cache_code(size, sel, False),
                            versions.ROOT_TTREE),
            Action.labelled("PyROOT (TTree loop)", _cache_code(size, sel, True),
                            versions.ROOT_TTREE),
            Action.labelled("RDataFrame and TTree::Draw use a TTreeCache by default; keep it on",
                            "ROOT.gEnv.SetValue('TTreeCache.Size', 1.0)  # x the cluster size",
                            versions.PYROOT),
        ),
        assumptions=(cpu_text(rc, cpu), f"the interval: {how}"),
        dataset=label)


__all__ = ["link_notes", "link_rows", "remote_rules", "source_rule", "stage_rule", "streams_rule",
           "treecache_rule"]


#: X001-X003 come from the link's read tests (:func:`remote_rules`); T001 over a link is the
#: storage family's rule, made here from the link.
_LINK = ("the readers' requests replayed as round trips through the link the remote read "
         "tests measured, plus the reader's CPU measured on one of the files")
X001 = Rule("X001", "remote", "remote", "Stream, stage or cache the files behind the link",
            trigger="another way of reading over the link (staging to local disk, XCache) is "
                    "predicted >= 1.05x faster than streaming",
            prediction=_LINK, measure="copy the files (the printed command), then time the "
                                      "analysis on the copies", source="link")
X002 = Rule("X002", "remote", "remote", "Read with uproot's XRootDSource",
            trigger="uproot's XRootDSource is predicted >= 1.05x faster than the default source",
            prediction=_LINK, measure="time the analysis twice through the cache (its first "
                                      "read, then again)", source="link")
X003 = Rule("X003", "remote", "remote", "Read several files at once over the link",
            trigger="parallel streams are predicted >= 1.10x faster",
            prediction=_LINK, measure="time the analysis once reading the recommended number of "
                                      "files at once", source="link")

X004 = Rule("X004", "remote", "remote", "Step uproot by entries over the link",
            trigger="uproot's default iterate (a memory-size step) reads every basket's key, "
                    "one round trip each: predicted >= 1.05x slower than an entry step (or "
                    "failing over the link as installed)",
            prediction=_LINK, measure="time the analysis once with the printed step_size",
            source="link")

RULES = (X001, X002, X003, X004)
