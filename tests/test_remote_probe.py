"""Remote files through the real bench (XRootD, XrdHttp behind an emulated 20 ms, 100 Mbit/s
link): discovery of ``root://`` files, directories and globs and ``http://`` files, the remote
probe, the remote read tests (``calibration.remote``), and ``hep-advisor calibrate`` on a URL.
Tiny files; one link setting.  Skipped where the bench cannot run (see test_remote_bench.py).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from testbench.remote import RemoteBench, availability, cleanup_stale

pytestmark = pytest.mark.remote

_OK, _REASON = availability()
if not _OK:
    pytest.skip(f"remote bench unavailable: {_REASON}", allow_module_level=True)
if any(importlib.util.find_spec(m) is None for m in ("XRootD", "fsspec_xrootd", "requests")):
    pytest.skip("the `remote` extra is not installed", allow_module_level=True)

RTT_MS, MBIT = 20.0, 100.0
N = 20_000


def _write(path: Path) -> Path:
    import uproot

    rng = np.random.default_rng(5)
    with uproot.recreate(path, compression=None) as f:
        f.mktree("Events", {"x": np.float32, "y": np.float64})
        for _ in range(4):
            f["Events"].extend({"x": rng.random(N // 4, dtype=np.float32),
                                "y": rng.random(N // 4)})
    return path


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RemoteBench]:
    cleanup_stale()
    src = _write(tmp_path_factory.mktemp("remote") / "small.root")
    with RemoteBench(rtt_ms=RTT_MS, rate_mbit=MBIT) as b:
        b.add_file(src)
        b.add_file(src, "sub/one.root")
        b.add_file(src, "sub/two.root")
        (b.data_dir / "sub" / "notes.txt").write_text("not ROOT")  # type: ignore[operator]
        yield b


def test_discover_root_files_dirs_and_globs(bench: RemoteBench) -> None:
    from hep_advisor.probes.files import discover

    one = discover([bench.root_url("small.root")])
    assert [f.path for f in one.files] == [bench.root_url("small.root")]
    assert one.files[0].size_bytes == (bench.data_dir / "small.root").stat().st_size  # type: ignore[operator]
    tree = discover([bench.root_url("")])
    assert len(tree.files) == 3 and not tree.errors
    glob = discover([bench.root_url("sub/t*.root")])
    assert [Path(f.path).name for f in glob.files] == ["two.root"]
    http = discover([bench.http_url("small.root")])
    assert len(http.files) == 1 and not http.errors


def test_discover_bad_urls_are_one_line(bench: RemoteBench) -> None:
    from hep_advisor.probes.files import discover

    found = discover([bench.root_url("nope.root"), bench.http_url("nope.root"),
                      bench.http_url("*.root"), "s3://bucket/x.root",
                      bench.root_url("sub/none*.root"), bench.root_url("small.root"),
                      "root://127.0.0.1:1//down.root"])
    assert len(found.files) == 1
    causes = [e.error for e in found.errors]
    assert len(causes) == 6 and all("\n" not in c for c in causes)
    assert any("cannot connect to 127.0.0.1:1" in c for c in causes)
    assert any("no such file" in c.lower() or "unable to locate" in c.lower() for c in causes)
    assert any("404" in c for c in causes)
    assert any("no directory listing" in c for c in causes)
    assert any("unsupported URL scheme" in c for c in causes)
    assert any("matches nothing" in c for c in causes)


def test_probe_remote_and_dataset(bench: RemoteBench) -> None:
    from hep_advisor.probes.dataset import probe_dataset
    from hep_advisor.probes.remote_files import probe_remote

    for url, kind in ((bench.root_url("small.root"), "root"),
                      (bench.http_url("small.root"), "http")):
        p = probe_remote(url, opens=2)
        assert p.scheme == kind and "xrootd" in p.server.lower()
        assert p.size_bytes > 100_000
        assert p.open_s >= 0.9 * RTT_MS / 1e3  # an open is at least one round trip
    ds = probe_dataset([bench.root_url("sub")])
    assert ds.files == 2 and not ds.errors
    assert ds.trees[0].entries == 2 * N


def test_measure_link_finds_round_trip_and_bandwidth(bench: RemoteBench) -> None:
    from hep_advisor.probes.readtests.link import measure_link

    for url in (bench.root_url("small.root"), bench.http_url("small.root")):
        rc = measure_link(url, 10)
        assert rc.rtt_ms is not None and abs(rc.rtt_ms / RTT_MS - 1) <= 0.10, (url, rc.rtt_ms)
        # the file is small (0.24 MB): the bandwidth is a rough figure here, checked loosely;
        # benchmarks/validation/bench_remote.py checks it within 10% on larger transfers
        assert rc.bandwidth_mb_per_s is not None
        assert 0.5 * MBIT / 8 <= rc.bandwidth_mb_per_s <= 1.2 * MBIT / 8
        assert rc.vector_reads is not None and rc.vector_reads.supported
        assert [p.streams for p in rc.parallel_streams][:1] == [1]
        assert rc.request_sweep and rc.open_s is not None


def test_calibrate_cli_on_a_url(bench: RemoteBench) -> None:
    url = bench.root_url("small.root")
    r = subprocess.run([sys.executable, "-m", "hep_advisor", "calibrate", url, "--budget", "10",
                        "--json"], capture_output=True, text=True, timeout=120)
    assert "Traceback" not in r.stderr
    doc = json.loads(r.stdout)
    cal = doc.get("calibration") or doc
    remote = cal["remote"]
    assert remote["url"] == url and abs(remote["rtt_ms"] / RTT_MS - 1) <= 0.10
    assert {"rtt_ms", "bandwidth_mb_per_s", "parallel_streams", "vector_reads",
            "open_s"} <= set(remote)
    assert any("remote data" in s["reason"] for s in cal["skipped"])
    # the reader's CPU, on the file fetched whole: what the link time is combined with
    cpu = remote["cpu"]
    assert cpu["engine"] == "uproot" and cpu["url"] == url
    assert cpu["file_bytes"] == (bench.data_dir / "small.root").stat().st_size  # type: ignore
    assert cpu["baskets"] >= 8 and cpu["mb_s"] > 0 and len(cpu["samples"]) >= 1


def test_t001_fires_on_the_measured_link(bench: RemoteBench) -> None:
    """Remote T001 from the link measured on the bench (20 ms) and the file's real baskets:
    without TTreeCache, one round trip per basket; with it, one per cache fill."""
    from hep_advisor.probes.basketmap import read_basket_map
    from hep_advisor.probes.dataset import probe_dataset
    from hep_advisor.probes.readtests.link import measure_link
    from hep_advisor.rules.remote import treecache_rule

    url = bench.root_url("small.root")
    rc = measure_link(url, 10)
    m = read_basket_map(str(bench.data_dir / "small.root"), "Events")  # type: ignore[operator]
    rec = treecache_rule(probe_dataset([url]), rc, [m], None)
    assert rec is not None and rec.code == "T001" and rec.kind == "treecache"
    assert rec.speedup_low <= rec.predicted_speedup <= rec.speedup_high
    trips = {e.name: float(e.value) for e in rec.evidence if e.name.startswith("round trips")}
    assert trips["round trips with TTreeCache"] < trips["round trips without TTreeCache"]
