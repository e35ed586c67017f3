"""The reader's own client through the link (``RemoteClientCost`` -> ``hep_advisor.models.link.
ClientTerms``): the arithmetic on constructed figures, where the terms enter the job, XCache
and T001's interval; then the measurement itself through the real bench (uproot's two sources
and ROOT's client, a tiny file at 20 ms), skipped where the bench cannot run."""

from __future__ import annotations

import importlib.util
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from hep_advisor.models.link import ClientTerms
from hep_advisor.models.remote_reads import (
    ReaderCpu,
    RemoteLink,
    Round,
    job,
    root_rounds,
    treecache_remote,
    xcache,
)
from hep_advisor.probes.basketmap import BasketMap, read_basket_map
from hep_advisor.probes.readtests.remote_results import (
    RemoteCalibration,
    RemoteClientCost,
    RemoteReaderCpu,
    RemoteSamples,
    VectorReads,
)

LINK = RemoteLink(rtt_s=0.010, mb_per_s=10.0, open_s=0.010)
CPU = ReaderCpu(open_s=0.005, mb_s=0.1)


def _cost(client: str = "root", **kw: object) -> RemoteClientCost:
    base: dict[str, object] = dict(
        client=client, request_ms=12.0, request_bytes=10_000,
        request_samples=(11.5, 12.0, 13.0), open_s=0.0583, open_requests=3, open_bytes=3000,
        open_samples=(0.057, 0.0583, 0.06),
        read_s=0.5, read_requests=2, read_bytes=2_000_000, read_samples=(0.45, 0.5, 0.6),
        baskets=100)
    base.update(kw)
    return RemoteClientCost(**base)  # type: ignore[arg-type]


def test_terms_are_measured_less_modelled() -> None:
    # one request: 12 ms = 10 ms round trip + 1 ms of bytes + 1 ms of the client
    k = ClientTerms.derive(_cost(), LINK, CPU, basket_bytes=2_000_000, extra_rounds=0)
    # per round trip: the samples' mean (0.5, 1, 2 ms beyond the model): a job sums hundreds
    req = 3.5e-3 / 3
    assert k.request_s == pytest.approx(req)
    # open + close: protocol open 10 + 3 reads x (10 + 1 + req) + 0.3 of bytes + 5 of CPU
    assert k.file_s == pytest.approx(0.0583 - 0.0483 - 3 * (req - 1e-3))
    # the read: 2 x (11 ms + req) + 200 ms of bytes + 200 ms of local CPU; per basket
    read = 0.422 + 2 * (req - 1e-3)
    assert k.basket_s == pytest.approx((0.5 - read) / 100)
    assert k.request_range == pytest.approx((0.5e-3, 2e-3))
    assert k.basket_range == pytest.approx(((0.45 - read) / 100, (0.6 - read) / 100))
    assert k.process_s == 0.0
    # the client's own round trips (XRootDSource, ROOT: a query and the close) are the model's
    assert ClientTerms.derive(_cost(), LINK, CPU, 2_000_000, 2).file_s == pytest.approx(
        0.0583 - 0.0683 - 3 * (req - 1e-3))
    # timed with the decompression in it (ROOT's loop): the local CPU of the bytes comes off
    dec = ClientTerms.derive(_cost(request_decoded=True), LINK, CPU, 2_000_000, 0)
    assert dec.request_s == pytest.approx((-0.5e-3 + 0 + 1e-3) / 3)  # 1 ms of CPU a request
    # once per process: the first open and read beyond a later one
    first = ClientTerms.derive(_cost(first_s=0.7583), LINK, CPU, 2_000_000, 0)
    assert first.process_s == pytest.approx(0.2)


def test_a_term_the_samples_disagree_on_is_not_counted() -> None:
    """Paired passes (remote less local) that straddle zero leave the model's figure (0)."""
    agree = _cost(open_samples=(0.07, 0.08, 0.075), local_open_samples=(0.01, 0.012, 0.011),
                  read_samples=(0.5, 0.52, 0.55), local_read_samples=(0.2, 0.21, 0.2))
    k = ClientTerms.derive(agree, LINK, CPU, 2_000_000, 0)
    # open: 10 + 3 x 11 + 0.3 ms modelled; 64 ms remote less local (median)
    assert k.file_s == pytest.approx(0.064 - 0.0433 - 3 * (3.5e-3 / 3 - 1e-3))
    # read: 2 x 11 + 200 ms modelled; (0.5 - 0.2), (0.52 - 0.21), (0.55 - 0.2) less it
    assert k.basket_s == pytest.approx((0.31 - 0.222 - 2 * (3.5e-3 / 3 - 1e-3)) / 100)
    noisy = replace(agree, read_samples=(0.40, 0.45, 0.48), local_read_samples=(0.2, 0.21, 0.2),
                    open_samples=(0.04, 0.07, 0.05))
    n = ClientTerms.derive(noisy, LINK, CPU, 2_000_000, 0)
    assert n.basket_s == 0.0 and n.file_s == 0.0  # -0.022..+0.058 s: not told apart
    assert n.basket_range[0] < 0 < n.basket_range[1]


def test_the_request_term_is_the_mean_even_where_the_samples_straddle_zero() -> None:
    """A job's time sums its requests: one slow segment in eight moves it as it moves the
    mean, which the median would leave out (the per-file and per-basket terms keep the sign
    rule above)."""
    k = ClientTerms.derive(_cost(request_samples=(10.5, 11.0, 10.8, 11.1, 10.9, 11.2, 10.6,
                                                  15.0)), LINK, CPU, 2_000_000, 0)
    # beyond the model's 11 ms: -0.5, 0, -0.2, 0.1, -0.1, 0.2, -0.4 and 4 ms
    assert k.request_s == pytest.approx(3.1e-3 / 8, rel=1e-6)
    lo, hi = k.request_range
    assert lo < 0 < k.request_s <= hi


def test_one_sample_is_not_told_apart_from_the_noise() -> None:
    k = ClientTerms.derive(_cost(request_samples=(30.0,)), LINK, CPU, 2_000_000, 0)
    assert k.request_s == 0.0 and k.request_range == pytest.approx((0.019, 0.019))


def test_a_request_never_costs_less_than_the_round_trip() -> None:
    k = ClientTerms.derive(_cost(request_ms=5.0, request_samples=(5.0, 5.0)), LINK, CPU,
                           2_000_000, 0)
    assert k.request_s == pytest.approx(-1e-3)  # the bytes' time at most comes off
    fast = ClientTerms.derive(_cost(read_s=0.0, read_samples=(0.0, 0.0)), LINK, CPU,
                              2_000_000, 0)
    assert fast.basket_s == pytest.approx(-0.2 / 100)  # never below minus the local CPU


def _rounds() -> list[Round]:
    return [Round("f", ((0, 100),)), Round("f", ((100, 50_000),), 50_000, 10),
            Round("f", ((60_000, 50_000),), 50_000, 10), Round("f", ())]


def test_the_job_adds_the_client_per_round_file_basket_and_process() -> None:
    k = ClientTerms(request_s=1e-3, file_s=0.02, basket_s=1e-4, process_s=0.05)
    rounds = _rounds()
    plain = job("x", rounds, LINK, CPU, 100_000, 1, overlap=False)
    with_k = job("x", rounds, LINK, replace(CPU, client=k), 100_000, 1, overlap=False)
    extra = 4 * 1e-3 + 0.02 + 20 * 1e-4 + 0.05
    assert with_k.total_s - plain.total_s == pytest.approx(extra)
    assert with_k.detail["client_s"] == pytest.approx(extra)
    warm = job("x", rounds, LINK, replace(CPU, client=k), 100_000, 1, overlap=False,
               fresh=False)
    assert with_k.total_s - warm.total_s == pytest.approx(0.05)
    # through an XCache: the LAN hop has no per-request or per-file term (measured on the link)
    lan = replace(LINK, lan_rtt_s=1e-4, lan_mb_per_s=1000.0)
    x0 = xcache("u", rounds, lan, 0.0, 1, 1, {"f": 200_000}, warm=True, cpu=CPU)
    x1 = xcache("u", rounds, lan, 0.0, 1, 1, {"f": 200_000}, warm=True,
                cpu=replace(CPU, client=k))
    assert x1.total_s - x0.total_s == pytest.approx(20 * 1e-4 + 0.05)


def _reader(engine: str, clients: tuple[RemoteClientCost, ...]) -> RemoteReaderCpu:
    return RemoteReaderCpu(engine, "root://h//f.root", 2_500_000, 2_000_000, 100, 0.005, 0.2,
                           0.1, (0.18, 0.2, 0.22), 0.1, clients=clients)


def test_from_measured_picks_the_client() -> None:
    cpu = _reader("uproot", (_cost("uproot", request_ms=11.0, request_samples=(11.0,) * 3),
                             _cost("uproot XRootDSource", request_ms=14.0,
                                   request_samples=(13.8, 14.0, 14.3))))
    assert ReaderCpu.from_measured(cpu) == ReaderCpu(0.005, 0.1)  # no link: no client terms
    own = ReaderCpu.from_measured(cpu, LINK)
    xs = ReaderCpu.from_measured(cpu, LINK, "uproot XRootDSource")
    assert own is not None and own.client is not None
    assert xs is not None and xs.client is not None
    assert own.client.request_s == pytest.approx(0.0, abs=1e-12)
    req = (2.8e-3 + 3e-3 + 3.3e-3) / 3  # the samples' mean beyond the model's 11 ms
    assert xs.client.request_s == pytest.approx(req)
    # XRootDSource's own query and close are the model's round trips, not the client's; the
    # default source's passes reuse fsspec-xrootd's open handle: no protocol open in them
    assert xs.client.file_s == pytest.approx(own.client.file_s - 2 * LINK.rtt_s - 3 * req
                                             - LINK.open_s, rel=1e-6)
    assert ReaderCpu.from_measured(cpu, LINK, "root") == ReaderCpu(0.005, 0.1)


@pytest.fixture(scope="module")
def bmap(tmp_path_factory: pytest.TempPathFactory) -> BasketMap:
    import uproot

    path = tmp_path_factory.mktemp("remote_client") / "t.root"
    rng = np.random.default_rng(4)
    with uproot.recreate(path, compression=None) as f:
        f.mktree("Events", {f"b{i}": np.float32 for i in range(6)})
        for _ in range(6):
            f["Events"].extend({f"b{i}": rng.random(2000, dtype=np.float32) for i in range(6)})
    return read_basket_map(str(path), "Events")


def _calibration(cpu: RemoteReaderCpu) -> RemoteCalibration:
    return RemoteCalibration(
        url="root://h//f.root", scheme="root", server="h", rtt_ms=1.0, bandwidth_mb_per_s=125.0,
        parallel_streams=(), vector_reads=VectorReads(True, 64, 4096, 0.002, 0.001, 0.0),
        open_s=0.001, first_open_s=0.003, request_sweep=(), fit_latency_ms=None,
        fit_bandwidth_mb_per_s=None, rtt=RemoteSamples("ms", (0.98, 1.0, 1.02), 1.0, 0.02),
        bandwidth=RemoteSamples("MB/s", (124.0, 125.0, 126.0), 125.0, 0.01), cpu=cpu)


def test_t001_counts_roots_request_cost_and_widens_its_interval(bmap: BasketMap) -> None:
    """ROOT's reads beyond the ping (1.6-2.0 ms a basket against a 1.07 ms ping on the bench)
    make the loop without a cache slower still: T001's speed-up grows with them, and the
    client's sampled spread widens the interval."""
    from hep_advisor.probes.results import DatasetProfile
    from hep_advisor.rules.remote import treecache_rule

    ds = DatasetProfile(files=1, total_bytes=bmap.file_bytes, errors=(), trees=(),
                        sampling=None, file_paths=("root://h//f.root",))  # type: ignore[arg-type]
    slow = _cost("root", request_ms=2.0, request_bytes=8000, request_samples=(1.8, 2.0, 2.3),
                 open_s=0.01, open_samples=(0.0095, 0.01, 0.011), read_s=0.25,
                 read_samples=(0.24, 0.25, 0.28))
    without = treecache_rule(ds, _calibration(_reader("root", ())), [bmap], None)
    with_k = treecache_rule(ds, _calibration(_reader("root", (slow,))), [bmap], None)
    assert without is not None and with_k is not None
    assert with_k.predicted_speedup > without.predicted_speedup
    width = with_k.speedup_high / with_k.speedup_low
    assert width > without.speedup_high / without.speedup_low
    assert with_k.speedup_low < with_k.predicted_speedup < with_k.speedup_high
    assert any("per round trip" in a for a in with_k.assumptions)
    # the same read repeated varied +-8% (0.24..0.28 s around 0.25 s): each way that much
    assert width >= (1.08 / 0.92) ** 2 * 0.999
    assert any("+-8% pass to pass" in a for a in with_k.assumptions)
    # and the rounds: one per basket without the cache, so the term counts that many times
    off, on = treecache_remote([bmap], None, LINK, replace(CPU, client=ClientTerms(1e-3)))
    off0, on0 = treecache_remote([bmap], None, LINK, CPU)
    assert off.total_s - off0.total_s == pytest.approx(1e-3 * off.round_trips)
    assert off.round_trips == len(root_rounds([bmap], tree_cache=False))
    assert on.total_s - on0.total_s == pytest.approx(1e-3 * on.round_trips)


def test_garbage_collection_is_paid_per_file() -> None:
    """The amortized full collections (``gc_s``) enter the CPU per file opened, with or
    without the link, and leave the client's terms as they were."""
    plain = _reader("uproot", (_cost("uproot", request_ms=11.0, request_samples=(11.0,) * 3),))
    with_gc = replace(plain, gc_pause_s=0.08, gc_gen0_per_pass=6.0, gc_s=0.004)
    alone = ReaderCpu.from_measured(with_gc)
    assert alone is not None and alone.open_s == pytest.approx(0.009) and alone.mb_s == 0.1
    a, b = ReaderCpu.from_measured(plain, LINK), ReaderCpu.from_measured(with_gc, LINK)
    assert a is not None and b is not None
    assert b.open_s == pytest.approx(a.open_s + 0.004) and b.client == a.client
    rounds = [Round("f", ((0, 100_000),), 100_000, 10)]
    two = job("x", rounds * 2, LINK, b, 200_000, 2, overlap=False).total_s \
        - job("x", rounds * 2, LINK, a, 200_000, 2, overlap=False).total_s
    assert two == pytest.approx(0.008)


# the timed full collection finalizes whatever earlier tests left behind (unclosed files, a
# child process): their ResourceWarnings are not this test's
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_cpu_passes_time_a_full_collection(bmap: BasketMap) -> None:
    """The uproot passes count young collections and time one full collection; the
    amortized cost follows CPython's thresholds; with the collector off nothing is claimed."""
    import gc

    from hep_advisor.probes.readtests.remote_cpu import _uproot_passes

    got: dict[str, float | None] = {}
    opens, loops = _uproot_passes(bmap.path, "Events", 5.0, None, got)
    assert loops and len(opens) == len(loops)
    pause, gen0, per = got["pause_s"], got["gen0"], got["per_pass_s"]
    assert pause is not None and gen0 is not None and per is not None
    assert pause > 0 and gen0 >= 0
    _, t1, t2 = gc.get_threshold()
    assert per == pytest.approx(pause * gen0 / ((t1 + 1) * (t2 + 1)))
    off: dict[str, float | None] = {}
    gc.disable()
    try:
        _uproot_passes(bmap.path, "Events", 5.0, None, off)
    finally:
        gc.enable()
    assert off == {}


# -- through the real bench -----------------------------------------------------------------------

def _bench_ok() -> tuple[bool, str]:
    if any(importlib.util.find_spec(m) is None for m in ("XRootD", "fsspec_xrootd")):
        return False, "the `remote` extra is not installed"
    from testbench.remote import availability

    return availability()


@pytest.mark.remote
def test_clients_measured_through_the_link(tmp_path: Path, bmap: BasketMap) -> None:
    ok, why = _bench_ok()
    if not ok:
        pytest.skip(f"remote bench unavailable: {why}")
    from hep_advisor.probes.readtests.remote_cpu import measure_reader_cpu
    from testbench.remote import RemoteBench, cleanup_stale

    cleanup_stale()
    engines = ["uproot"] + (["root"] if importlib.util.find_spec("ROOT") else [])
    with RemoteBench(rtt_ms=20.0, rate_mbit=100.0) as bench:
        bench.add_file(bmap.path, "t.root")
        url = bench.root_url("t.root")
        size = Path(bmap.path).stat().st_size
        for engine in engines:
            cpu = measure_reader_cpu(url, size, "Events", engine, 20.0)
            names = [c.client for c in cpu.clients]
            assert names == (["uproot", "uproot XRootDSource"] if engine == "uproot"
                             else ["root"]), cpu.note
            for c in cpu.clients:
                # through a 20 ms link: each read at least a round trip, the open some reads
                assert c.request_ms is not None and c.request_ms >= 18.0
                assert c.open_requests >= 1 and c.read_requests >= 1
                assert c.read_bytes >= 0.9 * cpu.basket_bytes
                assert c.read_s is not None and c.read_s >= 0.018
                assert c.first_s is not None and c.baskets == 36
            # ROOT: the same entries read locally are taken off each segment
            assert not cpu.clients[0].request_decoded
            assert cpu.entries == bmap.entries
            # ROOT's loop also timed on one branch alone (its cost per entry, where told
            # apart); uproot has none
            assert ("alone" in cpu.note) == (engine == "root")
            assert engine == "root" or cpu.entry_s is None
    assert not list(tmp_path.iterdir())  # nothing written beside


def test_clients_left_out_for_lack_of_budget_are_listed(bmap: BasketMap) -> None:
    """A client test that does not fit the time left is not run and says so, uproot's
    alternative source (XRootDSource) before its default; ROOT's counts its process' start.
    Nothing is read through the link here (the URL is never opened)."""
    from hep_advisor.probes.readtests.remote_client import measure_clients

    url, local = "root://127.0.0.1:1//nowhere.root", bmap.path
    skipped: list[tuple[str, str]] = []
    # about 3 passes of 1 s a client: 2 s fit neither (both 6 s, then the default's 3 s)
    assert measure_clients(url, "Events", local, "uproot", 2.0, one_pass_s=1.0,
                           skipped=skipped) == ()
    assert [s[0] for s in skipped] == ["remote reader's client: uproot XRootDSource",
                                       "remote reader's client: uproot"]
    assert "2.0 s of the budget left, about 6.0 s needed" in skipped[0][1]
    assert "about 3.0 s needed" in skipped[1][1]
    skipped.clear()
    assert measure_clients(url, "Events", local, "root", 4.0, one_pass_s=1.0, start_s=2.0,
                           skipped=skipped) == ()
    assert [s[0] for s in skipped] == ["remote reader's client: root"]


def test_the_reader_tests_reserve_grows_with_the_link_and_with_root() -> None:
    """The time kept for the reader's tests while the link's optional steps run: more on a
    slower link, more for ROOT (its process start), none where nothing fits."""
    from hep_advisor.probes.readtests.link import _cpu_need

    pairs = [("root://h//a.root", 4_000_000), ("root://h//b.root", 5_000_000)]
    fast = _cpu_need(pairs, "uproot", 0.001, 125.0, 10.0)
    slow = _cpu_need(pairs, "uproot", 0.020, 12.5, 10.0)
    assert 0 < fast < slow
    assert _cpu_need(pairs, "root", 0.020, 12.5, 10.0) > slow
    assert _cpu_need(pairs, "uproot", 0.080, 0.001, 10.0) == 0.0  # no file fits: no test
