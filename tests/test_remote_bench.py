"""The remote-data test bench: XRootD, XrdHttp and XCache behind an emulated wide-area link
(network namespace, TBF shaping, latency proxy).  The link gives the round trip and bandwidth it
was set to; uproot (default fsspec source and the explicit XRootDSource / HTTPSource) and ROOT
read a tiny file through every path; nothing is left behind, even when the body fails or the
process is killed.

Needs root, ``ip``/``tc``/``setpriv``, network namespaces with veth and TBF, and Debian's
``xrootd-server`` + ``xrootd-server-plugins`` (``.ci/run`` installs them); skipped with the
reason otherwise.  The client tests also need the ``remote`` extra (``xrootd``,
``fsspec-xrootd``, ``aiohttp``, ``requests``).
"""

from __future__ import annotations

import importlib.util
import json
import pwd
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from testbench.common import pid_alive
from testbench.remote import RemoteBench, RemoteBenchError, availability, cleanup_stale
from testbench.remote import netns as rnetns
from testbench.remote.bench import WORKDIR_PREFIX
from testbench.remote.latency_proxy import PROBE_HEADER

pytestmark = pytest.mark.remote

_OK, _REASON = availability()
if not _OK:
    pytest.skip(f"remote bench unavailable: {_REASON}", allow_module_level=True)

REPO = Path(__file__).resolve().parents[1]
N = 1000
TOL = 0.10  # the link's figures (measured: within 2%)
RTT_JITTER_MS = 0.25  # the proxy's path drifts this much on a busy machine (below)


def _within(value: float, target: float, tol: float = TOL) -> bool:
    return abs(value / target - 1) <= tol


def _needs(*modules: str) -> None:
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"the `remote` extra is not installed (missing {', '.join(missing)})")


def _write_tiny(path: Path) -> Path:
    import uproot

    with uproot.recreate(path) as f:
        f.mktree("t", {"x": np.int32, "y": np.float64})
        f["t"].extend({"x": np.arange(N, dtype=np.int32), "y": np.arange(N) * 0.5})
    return path


def _traces(tag: str) -> list[str]:
    """What a bench with ``tag`` left: namespaces, host veth ends, work directories."""
    pid, n = tag.split("-")
    out = [ns for ns in rnetns.namespaces() if ns.startswith(f"hep-advisor-{tag}-")]
    out += [p.name for p in Path("/sys/class/net").glob(f"hx{int(pid):x}x{n}*")]
    for root in (Path("/var/tmp"), Path("/tmp")):
        out += [str(p) for p in root.glob(f"{WORKDIR_PREFIX}{tag}-*")]
    return out


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RemoteBench]:
    cleanup_stale()
    tiny = _write_tiny(tmp_path_factory.mktemp("remote") / "tiny.root")
    with RemoteBench(rtt_ms=20, rate_mbit=100, xcache=True) as b:
        b.add_file(tiny)
        b.add_file(tiny, "sub/tiny2.root")
        yield b
    assert not _traces(b.tag)


# -- the link ---------------------------------------------------------------------------------

def _closest(measure: Callable[[], float], target: float, tries: int = 3) -> float:
    """The measurement closest to ``target`` of up to ``tries`` (stopping once within TOL): the
    two shared cores of a busy machine can slow the proxy's threads for a moment."""
    best = measure()
    for _ in range(tries - 1):
        if _within(best, target):
            break
        best = min(best, measure(), key=lambda v: abs(v / target - 1))
    return best


@pytest.mark.parametrize(("rtt_ms", "rate_mbit"), [(1, 1000), (80, 20), (20, 100)])
def test_link_round_trip_and_bandwidth(bench: RemoteBench, rtt_ms: float,
                                       rate_mbit: float) -> None:
    bench.set_rate(rate_mbit)
    bench.set_rtt(rtt_ms)
    nbytes = int(rate_mbit * 1e6 / 8 * 0.5)  # 0.5 s of traffic
    rtt = _closest(lambda: bench.measure_rtt(10), rtt_ms)
    down = _closest(lambda: bench.measure_bandwidth(nbytes), rate_mbit)
    # the proxy's own path (about 0.3 ms, two Python threads on two shared cores) drifts by
    # up to 0.2 ms between the calibration of the delay and the measurement: at 1 ms that is
    # 20% (measured 0.85, 0.89 and, in a full CI run, 0.79 ms), so the round trip gets that
    # much slack; a delay not applied (0.3 ms) still fails
    assert _within(rtt, rtt_ms) or abs(rtt - rtt_ms) <= RTT_JITTER_MS, \
        f"round trip {rtt:.3f} ms, set {rtt_ms}"
    assert _within(down, rate_mbit), f"download {down:.1f} Mbit/s, set {rate_mbit}"
    if rtt_ms == 20:
        up = _closest(lambda: bench.measure_bandwidth(nbytes, upload=True), rate_mbit)
        assert _within(up, rate_mbit), f"upload {up:.1f} Mbit/s, set {rate_mbit}"


def test_cap_per_connection(bench: RemoteBench) -> None:
    """``set_conn_rate``: one connection is held to the cap (as a TCP window holds one stream
    on a long link) while several at once share the link: the case where X003 should fire."""
    from hep_advisor.probes.readtests.link import measure_link

    bench.set_rate(100)
    bench.set_rtt(5)
    try:
        bench.set_conn_rate(16)
        one = _closest(lambda: bench.measure_bandwidth(1_000_000), 16)
        assert _within(one, 16, 0.15), f"one connection {one:.1f} Mbit/s, cap 16"
        assert bench.data_dir is not None
        blob = bench.data_dir / "blob.bin"  # 4 MB of data: the streams test's reads
        blob.write_bytes(np.random.default_rng(1).bytes(4_000_000))
        blob.chmod(0o644)
        rc = measure_link(bench.root_url("blob.bin"), 8, streams=(1, 2))
        pts = {p.streams: p.aggregate_mb_per_s for p in rc.parallel_streams}
        assert pts[2] >= 1.5 * pts[1], pts  # each stream on its own connection
        bench.set_conn_rate(None)
        assert _within(bench.measure_bandwidth(2_000_000), 100, 0.15)
    finally:
        bench.set_conn_rate(None)


def test_proxy_counts_bytes(bench: RemoteBench) -> None:
    before = bench.stats()["probe"]
    bench.measure_bandwidth(1_000_000)
    after = bench.stats()["probe"]
    assert after["down"] - before["down"] == 1_000_000
    assert after["up"] - before["up"] == PROBE_HEADER.size
    assert after["connections"] == before["connections"] + 1


def test_servers_run_as_nobody_inside_namespaces(bench: RemoteBench) -> None:
    for server in bench.servers:
        assert server.proc is not None and server.proc.poll() is None
        status = Path(f"/proc/{server.proc.pid}/status").read_text()
        uid = next(line.split()[1] for line in status.splitlines() if line.startswith("Uid:"))
        assert int(uid) == pwd.getpwnam("nobody").pw_uid, server.name
        assert server.proc.pid in rnetns.pids(server.ns)
    listening = subprocess.run(["ss", "-Hltn"], capture_output=True, text=True).stdout
    for line in listening.splitlines():  # here, only the proxy listens, and only on loopback
        local = line.split()[3]
        if local.rsplit(":", 1)[1] in {str(p) for p in bench.proxy.ports.values()}:  # type: ignore[union-attr]
            assert local.startswith("127.0.0.1:"), local


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="1g"):
        RemoteBench(xcache=True, xcache_ram="512m")
    with pytest.raises(ValueError):
        RemoteBench(rtt_ms=-1)
    with pytest.raises(RemoteBenchError, match="not set up"):
        RemoteBench().root_url("x.root")


# -- HTTP ranges ------------------------------------------------------------------------------

def test_http_single_and_multi_range(bench: RemoteBench) -> None:
    _needs("requests")
    import requests

    assert bench.data_dir is not None
    data = (bench.data_dir / "tiny.root").read_bytes()
    url = bench.http_url("tiny.root")
    r = requests.get(url, headers={"Range": "bytes=10-19"}, timeout=30)
    assert r.status_code == 206 and r.content == data[10:20]
    r = requests.get(url, headers={"Range": "bytes=0-3,100-109,400-449"}, timeout=30)
    assert r.status_code == 206
    assert r.headers["Content-Type"].startswith("multipart/byteranges")
    for start, stop in ((0, 4), (100, 110), (400, 450)):
        assert f"bytes {start}-{stop - 1}/{len(data)}".encode() in r.content
        assert data[start:stop] in r.content


# -- clients ----------------------------------------------------------------------------------

CLIENTS = [
    ("root", None), ("root", "XRootDSource"),
    ("http", None), ("http", "HTTPSource"),
    ("xcache", None), ("xcache", "XRootDSource"),
]


@pytest.mark.parametrize(("path", "handler"), CLIENTS)
def test_uproot_reads_through_the_link(bench: RemoteBench, path: str, handler: str | None) -> None:
    _needs("XRootD", "fsspec_xrootd", "aiohttp")
    import uproot

    url = {"root": bench.root_url, "http": bench.http_url, "xcache": bench.xcache_url}[path]
    options = {}
    if handler is not None:
        options["handler"] = getattr(uproot.source.xrootd if handler == "XRootDSource"
                                     else uproot.source.http, handler)
    with uproot.open(url("tiny.root"), **options) as f:
        source = f.file.source
        assert type(source).__name__ == (handler or "FSSpecSource")
        arrays = f["t"].arrays(["x", "y"], library="np")
        if handler == "HTTPSource":
            assert source._fallback is None, "XrdHttp multi-range GET was not accepted"
    assert (arrays["x"] == np.arange(N)).all()
    assert (arrays["y"] == np.arange(N) * 0.5).all()
    with uproot.open(url("sub/tiny2.root"), **options) as f:
        assert f["t"].num_entries == N


def test_xcache_serves_warm_reads_without_the_origin(bench: RemoteBench) -> None:
    _needs("XRootD")
    from XRootD import client

    assert bench.data_dir is not None
    data = (bench.data_dir / "tiny.root").read_bytes()

    def read_all() -> bytes:
        f = client.File()
        assert f.open(bench.xcache_url("tiny.root"))[0].ok
        try:
            status, got = f.read(0, len(data))
            assert status.ok
            return bytes(got)
        finally:
            f.close()

    assert read_all() == data
    before = bench.stats()["xcache-origin"]["down"]
    assert read_all() == data
    assert bench.stats()["xcache-origin"]["down"] == before
    assert (bench.xcache_dir() / "tiny.root.cinfo").exists()


@pytest.mark.root
def test_root_engine_reads_through_the_link(bench: RemoteBench) -> None:
    if importlib.util.find_spec("ROOT") is None:
        pytest.skip("ROOT is not installed (the `root` extra)")
    urls = [bench.root_url("tiny.root"), bench.xcache_url("tiny.root")]
    code = textwrap.dedent(f"""
        import json, warnings
        warnings.simplefilter("ignore")
        import ROOT
        for url in {urls!r}:
            f = ROOT.TFile.Open(url)
            t = f.Get("t")
            xs = ys = 0.0
            for entry in t:
                xs += entry.x
                ys += entry.y
            print(json.dumps([url, int(t.GetEntries()), xs, ys, f.GetBytesRead()]))
            f.Close()
    """)
    # A process of its own: ROOT's XRootD client and the `xrootd` wheel's must not share one.
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("[")]
    assert [line[0] for line in lines] == urls
    for _url, entries, xs, ys, nbytes in lines:
        assert (entries, xs, ys) == (N, N * (N - 1) / 2, N * (N - 1) / 4)
        assert nbytes > 0


# Client problems found with this bench (uproot 5.7.7, fsspec-xrootd 0.5.5, xrootd 6.2.1); not
# strict, so that a fixed release passes.
@pytest.mark.xfail(raises=TypeError, strict=False,
                   reason="uproot's default step size reads each basket's TKey and hands NumPy "
                   "integers to fsspec-xrootd, whose XRootD read wants a Python int")
def test_known_uproot_iterate_default_over_fsspec_xrootd(bench: RemoteBench) -> None:
    _needs("XRootD", "fsspec_xrootd")
    import uproot

    with uproot.open(bench.root_url("tiny.root")) as f:
        assert sum(len(c["x"]) for c in f["t"].iterate(library="np")) == N


@pytest.mark.xfail(raises=IndexError, strict=False,
                   reason="uproot's HTTPSource.chunks() indexes ranges[0] even when a step "
                   "needs no new ranges (its baskets were read by the previous step)")
def test_known_uproot_httpsource_iterate_in_one_basket(bench: RemoteBench) -> None:
    _needs("aiohttp")
    import uproot

    with uproot.open(bench.http_url("tiny.root"), handler=uproot.source.http.HTTPSource) as f:
        steps = f["t"].iterate(library="np", step_size=300)
        assert sum(len(c["x"]) for c in steps) == N


# -- clean-up ---------------------------------------------------------------------------------

def test_closes_on_exception() -> None:
    made = None
    with pytest.raises(RuntimeError, match="boom"), RemoteBench(rtt_ms=1, rate_mbit=None,
                                                               http=False) as b:
        made = b
        assert _traces(b.tag)
        raise RuntimeError("boom")
    assert made is not None and not _traces(made.tag)
    assert all(s.proc is not None and s.proc.poll() is not None for s in made.servers)


_CHILD = """
import signal
import sys
# a shell's background job starts with SIGINT ignored, and Python then keeps it ignored: make
# Ctrl-C reach the child however the tests were started
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.path.insert(0, {repo!r})
from testbench.remote import RemoteBench
with RemoteBench(rtt_ms=1, rate_mbit=None, http=False) as b:
    print(b.tag, b.proxy.proc.pid, b.servers[0].proc.pid, flush=True)
    import time
    time.sleep(60)
"""


def _start_child() -> tuple[subprocess.Popen[str], str, list[int]]:
    proc = subprocess.Popen([sys.executable, "-c", _CHILD.format(repo=str(REPO))],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline().split()
    if not line:
        proc.kill()
        pytest.fail(f"the child bench did not start: {proc.communicate()[1][-2000:]}")
    return proc, line[0], [int(p) for p in line[1:]]


def _gone(pids: list[int], timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not any(pid_alive(p) and "zombie" not in _state(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text().split("State:")[1].split("\n")[0]
    except (OSError, IndexError):
        return "gone"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_signal_cleans_up(signum: int) -> None:
    proc, tag, pids = _start_child()
    proc.send_signal(signum)
    err = proc.communicate(timeout=30)[1]
    if signum == signal.SIGTERM:
        assert proc.returncode == 128 + signal.SIGTERM, err[-2000:]
    else:
        assert "KeyboardInterrupt" in err, err[-2000:]
    assert not _traces(tag)
    assert _gone(pids)


def test_cleanup_stale_after_sigkill() -> None:
    proc, tag, pids = _start_child()
    proc.kill()
    proc.communicate(timeout=10)
    assert _gone(pids), "the servers and the proxy die with their parent (parent-death signal)"
    assert _traces(tag)
    removed = cleanup_stale()
    assert any(tag in line for line in removed), removed
    assert not _traces(tag)


def test_data_dir_must_be_readable_by_nobody(tmp_path: Path) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    private.chmod(0o700)
    bench = RemoteBench(rtt_ms=1, rate_mbit=None, http=False, data_dir=private)
    with pytest.raises(RemoteBenchError, match="nobody cannot"):
        bench.open()
    assert bench.tag and not _traces(bench.tag)
