"""Remote data (issue 13): the link calibration, and the stream / stage / cache predictions.

    flock /tmp/hep-bench.lock python -m benchmarks.validation.bench_remote link
        [--links 1:1000 20:100 80:20]
    flock /tmp/hep-bench.lock python -m benchmarks.validation.bench_remote predict [--links 20:100]
    flock /tmp/hep-bench.lock python -m benchmarks.validation.bench_remote streams [--caps none 25]

``link``: on the remote test bench (XRootD + XrdHttp in a network namespace behind TBF shaping
and a latency proxy, ``testbench.remote``), set each link in turn and run the remote read tests
(:func:`hep_advisor.probes.readtests.link.measure_link`, what ``hep-advisor calibrate root://...``
runs) ``--repeats`` times over ``root://`` and ``http://``; print the measured round trip and
bandwidth against the set ones (bandwidth as TCP payload, MB = 10^6 bytes).

``predict``: see ``benchmarks/validation/bench_remote_predict.py`` (run by this script).

``streams``: X003 (parallel streams) where it should fire and where not: the link capped per
connection by the latency proxy (what a TCP window does to one stream on a long link) or
not; see :func:`run_streams`.

Needs root, ``xrootd-server`` (+ plugins), ``xrootd-client`` (``xrdcp``, for staging and
the cache's warm-up) and the ``remote`` extra.  A few minutes per link.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path


def _link(text: str) -> tuple[float, float]:
    rtt, _, rate = text.partition(":")
    return float(rtt), float(rate)


def write_link_file(path: Path, mb: int = 64) -> Path:
    """A ROOT file of about ``mb`` MB (uncompressed random floats), written by uproot."""
    import numpy as np
    import uproot

    rng = np.random.default_rng(13)
    n = mb * 1_000_000 // (50 * 4)
    with uproot.recreate(path, compression=None) as f:
        f.mktree("Events", {f"f{i}": np.float32 for i in range(50)})
        for _ in range(4):
            f["Events"].extend({f"f{i}": rng.random(n // 4, dtype=np.float32)
                                for i in range(50)})
    return path


def run_link(links: list[tuple[float, float]], repeats: int, budget_s: float) -> int:
    from hep_advisor.probes.readtests.link import measure_link
    from testbench.remote import cleanup_stale, remote_bench

    cleanup_stale()
    scratch = Path(tempfile.mkdtemp(prefix="hep-bench-remote-", dir="/var/tmp"))
    scratch.chmod(0o755)
    misses = 0
    try:
        write_link_file(scratch / "link.root").chmod(0o644)
        with remote_bench(links[0][0], links[0][1], data_dir=scratch) as bench:
            for rtt_ms, mbit in links:
                bench.set_rate(mbit)
                bench.set_rtt(rtt_ms)
                for proto in ("root", "http"):
                    url = (bench.root_url if proto == "root" else bench.http_url)("link.root")
                    runs = [measure_link(url, budget_s) for _ in range(repeats)]
                    rtts = [r.rtt_ms for r in runs if r.rtt_ms]
                    bws = [r.bandwidth_mb_per_s for r in runs if r.bandwidth_mb_per_s]
                    set_mb = mbit / 8
                    rtt_err = statistics.median(rtts) / rtt_ms - 1
                    bw_err = statistics.median(bws) / set_mb - 1
                    ok = abs(rtt_err) <= 0.10 and abs(bw_err) <= 0.10
                    misses += not ok
                    print(json.dumps({
                        "set": {"rtt_ms": rtt_ms, "mbit": mbit, "mb_per_s": set_mb},
                        "protocol": proto,
                        "rtt_ms": [round(v, 3) for v in rtts],
                        "bandwidth_mb_per_s": [round(v, 3) for v in bws],
                        "rtt_error": round(rtt_err, 4), "bandwidth_error": round(bw_err, 4),
                        "fit_latency_ms": [round(r.fit_latency_ms or 0, 3) for r in runs],
                        "fit_bandwidth_mb_per_s": [round(r.fit_bandwidth_mb_per_s or 0, 3)
                                                   for r in runs],
                        "streams": [[p.streams, round(p.aggregate_mb_per_s, 2)]
                                    for p in runs[0].parallel_streams],
                        "vector": None if runs[0].vector_reads is None else {
                            "supported": runs[0].vector_reads.supported,
                            "vector_s": runs[0].vector_reads.vector_s,
                            "single_s": runs[0].vector_reads.single_s},
                        "open_s": runs[0].open_s,
                        "elapsed_s": None,
                        "within_10pct": ok,
                    }), flush=True)
    finally:
        for p in scratch.iterdir():
            p.unlink()
        os.rmdir(scratch)
    print(f"# {misses} of {len(links) * 2} link settings outside 10%", flush=True)
    return 0


def _read_one(url: str) -> float:
    """uproot ``arrays`` of one file (a worker process's job); seconds.  Over ``http(s)://``
    with ``HTTPSource`` (one connection; uproot's default fsspec source already spreads a
    step's ranges over several connections)."""
    import time

    import uproot

    opts = {"handler": uproot.source.http.HTTPSource} if url.startswith("http") else {}
    t0 = time.perf_counter()
    with uproot.open(url, **opts) as f:
        f["Events"].arrays()
    return time.perf_counter() - t0


def _warm(_: int) -> None:
    import uproot  # noqa: F401  (the worker's import, before the timing)


def run_streams(links: list[tuple[float, float]], caps: list[float | None], nfiles: int,
                mb: int) -> int:
    """X003 where it should fire and where not: the link capped per connection (as a TCP
    window caps one stream on a long link) or not, over ``http://`` and ``root://``.  The
    remote read tests measure the streams; the rule fires or not; then ``nfiles`` files are
    read one after another in one process and at once by ``nfiles`` processes (started and
    warmed before the timing): measured speed-up = one after another / at once."""
    import time
    from concurrent.futures import ProcessPoolExecutor

    from hep_advisor.probes.readtests.link import measure_link
    from hep_advisor.rules.remote import streams_rule
    from testbench.remote import cleanup_stale, remote_bench

    cleanup_stale()
    scratch = Path(tempfile.mkdtemp(prefix="hep-bench-remote-", dir="/var/tmp"))
    scratch.chmod(0o755)
    try:
        names = [f"s{k}.root" for k in range(nfiles)]
        for n in names:
            write_link_file(scratch / n, mb=mb).chmod(0o644)
        with ProcessPoolExecutor(nfiles) as pool:
            list(pool.map(_warm, range(nfiles)))
            for rtt_ms, mbit in links:
                for cap in caps:
                    with remote_bench(rtt_ms, mbit, data_dir=scratch,
                                      conn_rate_mbit=cap) as bench:
                        for proto in ("http", "root"):
                            url = (bench.http_url if proto == "http" else bench.root_url)
                            rc = measure_link(url(names[0]), 20)
                            rec = streams_rule(rc)
                            urls = [url(n) for n in names]
                            t0 = time.perf_counter()
                            for u in urls:
                                _read_one(u)
                            seq = time.perf_counter() - t0
                            t0 = time.perf_counter()
                            list(pool.map(_read_one, urls))
                            par = time.perf_counter() - t0
                            print(json.dumps({
                                "link": f"{rtt_ms:g} ms, {mbit:g} Mbit/s",
                                "per_connection_mbit": cap, "protocol": proto,
                                "streams_mb_per_s": [[p.streams, round(p.aggregate_mb_per_s, 2),
                                                      p.connections]
                                                     for p in rc.parallel_streams],
                                "X003": None if rec is None else [rec.predicted_speedup,
                                                                  rec.speedup_low,
                                                                  rec.speedup_high,
                                                                  rec.workers],
                                "connections": bench.stats()[proto]["connections"],
                                "one_after_another_s": round(seq, 3),
                                "at_once_s": round(par, 3),
                                "measured_speedup": round(seq / par, 3)}), flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["link", "predict", "streams"])
    parser.add_argument("--links", nargs="+", type=_link, metavar="RTT_MS:MBIT")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--budget", type=float, default=30.0)
    parser.add_argument("--datasets", default="a,b,c",
                        help="predict: which (a, b, c, d: small clusters)")
    parser.add_argument("--max-case", type=float, default=None, metavar="S",
                        help="predict: skip a case predicted to take longer (default 30 s)")
    parser.add_argument("--caps", nargs="+", default=["none", "25"], metavar="MBIT",
                        help="streams: per-connection caps to try (none: no cap)")
    parser.add_argument("--files", type=int, default=4, help="streams: files read at once")
    parser.add_argument("--mb", type=int, default=6, help="streams: MB per file")
    args = parser.parse_args()
    if args.what == "link":
        return run_link(args.links or [(1, 1000), (20, 100), (80, 20)], args.repeats,
                        args.budget)
    if args.what == "streams":
        caps = [None if c == "none" else float(c) for c in args.caps]
        return run_streams(args.links or [(20, 100)], caps, args.files, args.mb)
    from benchmarks.validation.bench_remote_predict import run_predict

    return run_predict(args.links or [(20, 100)], args.repeats, args.datasets.split(","),
                       args.max_case)


if __name__ == "__main__":
    sys.exit(main())
