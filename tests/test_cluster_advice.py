"""The cluster's advice (``--dask``): the D001-D003 rules on profiles made by hand (each rule
triggered and absent), the cluster block in the report's JSON (schema), text, Markdown and
HTML; then, marked ``dask``, ``advise(..., dask="local:2")`` and ``hep-advisor report --dask
local:2`` on a real LocalCluster of worker processes with tiny files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest

from helpers import write_flat
from hep_advisor.document.schema import generate_schema
from hep_advisor.findings.advice import Report
from hep_advisor.findings.cluster import ClusterAdvice
from hep_advisor.pipeline.cluster_calibration import cluster_advice, cpu_and_event_size
from hep_advisor.probes import CpuInfo, SiteProfile, probe_site
from hep_advisor.probes.cluster_probe import (
    ClusterNode,
    ClusterProfile,
    ConcurrentRead,
    NodeCalibration,
    NodeNetwork,
    WorkerInfo,
    WorkerRead,
)
from hep_advisor.probes.readtests.results import Conditions, EventLoop, Measurement
from hep_advisor.render.formats import render_report

ROOT = Path(__file__).resolve().parents[1]


def _m(*samples: float, unit: str = "MB/s", cache: str = "cold") -> Measurement:
    s = sorted(samples)
    median = s[len(s) // 2] if len(s) % 2 else 0.5 * (s[len(s) // 2 - 1] + s[len(s) // 2])
    return Measurement(unit, tuple(samples), median, None,
                       Conditions(cache, workers=1))  # type: ignore[arg-type]


_SITE: list[SiteProfile] = []


def _site(cores: int) -> SiteProfile:
    if not _SITE:
        _SITE.append(probe_site([]))
    return replace(_SITE[0], cpu=CpuInfo(cores, cores))


def _loop(cpu_mb_per_s: float, per_event_bytes: float = 1000.0) -> EventLoop:
    """An event loop whose warm rate is ``cpu_mb_per_s`` (compressed)."""
    warm = cpu_mb_per_s * 1e6 / per_event_bytes
    return EventLoop.from_rate("uproot", 3, warm * 0.8, per_event_bytes, 3 * per_event_bytes,
                               _m(warm * 0.8, unit="events/s"),
                               _m(warm * 0.98, warm * 1.02, unit="events/s", cache="warm"))


def profile(rates: list[float], *, shared: float | None = None, workers_per_node: int = 1,
            cores: int = 8, cpu: float | None = None, failed: int = 0) -> ClusterProfile:
    """Nodes with one worker's cold rate each (two samples, +-2%), ``workers_per_node``
    workers, ``cores`` cores, an event loop at ``cpu`` MB/s warm; ``failed`` nodes more with
    no read rate; every node at once read ``shared`` MB/s."""
    nodes = []
    for i, r in enumerate([*rates, *([None] * failed)]):
        ws = tuple(WorkerInfo(f"tcp://10.0.0.{i}:{9000 + k}", f"{i}-{k}", f"10.0.0.{i}",
                              1, 4_000_000_000) for k in range(workers_per_node))
        if r is None:
            cal = NodeCalibration(workers_per_node, None, (WorkerRead(
                ws[0].address, None, None, "FileNotFoundError: /data/f0.root"),), None, 1.0)
            nodes.append(ClusterNode(f"node{i}", ws, _site(cores), NodeNetwork((), None), cal,
                                     ("read test on 0-0: FileNotFoundError: /data/f0.root",)))
            continue
        m = _m(r * 0.98, r * 1.02)
        cal = NodeCalibration(workers_per_node, r, (WorkerRead(ws[0].address, r, m),), None,
                              1.0, event_loop=_loop(cpu) if cpu else None)
        nodes.append(ClusterNode(f"node{i}", ws, _site(cores), NodeNetwork((), None), cal))
    n = len(rates) * workers_per_node
    sh = None if shared is None else ConcurrentRead(n, len(rates), shared,
                                                    _m(shared * 0.99, shared * 1.01))
    return ClusterProfile("tcp://10.0.0.99:8786", "host", tuple(nodes), sh, 10.0)


def codes(cl: ClusterAdvice) -> list[str]:
    return [r.code for r in cl.recommendations]


# ---------------------------------------------------------------------------------------------
# the rules


def test_d002_shared_storage_saturates_and_is_absent_when_it_does_not() -> None:
    # four nodes of 100 MB/s that got 150 MB/s together: the storage saturates
    cl = cluster_advice(profile([100.0] * 4, shared=150.0))
    rec = next(r for r in cl.recommendations if r.code == "D002")
    assert rec.audience == "site admin"
    assert rec.speedup_low <= rec.predicted_speedup <= rec.speedup_high
    assert rec.predicted_speedup > 1.2  # twice the servers, against a saturated storage
    assert cl.saturates_at_nodes is not None and cl.saturates_at_nodes <= 4
    assert cl.fitted is not None and cl.fitted.parameters.shared_capacity_mb_per_s
    # the same nodes at 390 MB/s together: no saturation, no D002, no saturation point
    free = cluster_advice(profile([100.0] * 4, shared=390.0))
    assert "D002" not in codes(free)
    assert free.saturates_at_nodes is None


def test_d003_slow_node_flagged_and_absent_on_an_even_cluster() -> None:
    cl = cluster_advice(profile([100.0, 100.0, 40.0, 100.0], shared=330.0))
    slow = [r for r in cl.recommendations if r.code == "D003"]
    assert len(slow) == 1 and "node2" in slow[0].title and "40%" in slow[0].title
    assert slow[0].predicted_speedup > 1.05
    assert "D003" not in codes(cluster_advice(profile([100.0, 95.0, 105.0], shared=295.0)))


def test_d003_failed_node_is_misconfigured() -> None:
    cl = cluster_advice(profile([100.0, 100.0], shared=195.0, failed=1))
    rec = next(r for r in cl.recommendations if r.kind == "misconfigured-node")
    assert "node2" in rec.title and "FileNotFoundError" in rec.summary


def test_d001_workers_per_node_needs_the_cpu_rate() -> None:
    # storage at 200 MB/s per worker, CPU at 50: one worker per node leaves 7 cores idle
    cl = cluster_advice(profile([200.0, 200.0], shared=390.0, cpu=50.0))
    rec = next(r for r in cl.recommendations if r.code == "D001")
    assert rec.title.startswith("Run 8 workers per node")
    assert rec.predicted_speedup > 2
    commands = " ".join(a.command or "" for a in rec.actions)
    assert "--nworkers 8" in commands and "npartitions=" in commands
    assert "HTCondorCluster(cores=8" in commands
    assert all(a.requires for a in rec.actions)  # every command labelled with what it needs
    # without the event loop the CPU rate is unknown: workers per node are left as they are
    assert "D001" not in codes(cluster_advice(profile([200.0, 200.0], shared=390.0)))


def test_events_per_s_from_the_workers_event_loop() -> None:
    p = profile([100.0, 100.0], shared=195.0, cpu=50.0)
    cpu, per_event = cpu_and_event_size(p)
    assert cpu == pytest.approx(50.0, rel=1e-6) and per_event == pytest.approx(1e-3)
    cl = cluster_advice(p)
    assert cl.model is not None
    pred = next(q for q in cl.model.predictions if q.nodes == 2 and q.workers_per_node == 1)
    # 1 / (1/100 + 1/50) MB/s per worker, two nodes, 1 kB per event
    assert pred.aggregate_mb_per_s == pytest.approx(2 / (1 / 100 + 1 / 50), rel=0.01)
    assert pred.events_per_s == pytest.approx(pred.aggregate_mb_per_s / 1e-3)


def test_no_measured_node_is_an_error_not_an_exception() -> None:
    cl = cluster_advice(profile([], failed=2))
    assert cl.error and "no cluster model" in cl.error and "FileNotFoundError" in cl.error
    assert cl.recommendations == ()


# ---------------------------------------------------------------------------------------------
# the report's views


def _report(cl: ClusterAdvice) -> Report:
    return Report(site=_site(8), advice=(), cluster=cl)


def test_json_has_the_cluster_block_and_follows_the_schema() -> None:
    cl = cluster_advice(profile([100.0, 100.0, 40.0], shared=150.0, cpu=50.0))
    doc = json.loads(render_report(_report(cl), "json"))
    jsonschema.validate(doc, generate_schema())
    block = doc["cluster"]
    assert block["scheduler"] == "tcp://10.0.0.99:8786"
    assert [n["name"] for n in block["nodes"]] == ["node0", "node1", "node2"]
    assert block["nodes"][0]["calibration"]["event_loop"]["events_per_s"] > 0
    assert block["nodes"][0]["site"]["cpu"]["physical_cores"] == 8
    assert block["shared_storage"]["aggregate_mb_per_s"] == 150.0
    pred = block["model"]["predictions"][0]
    assert set(pred) >= {"nodes", "workers_per_node", "aggregate_mb_per_s", "low", "high",
                         "events_per_s"}
    assert "parameters" in block["model"]


def test_text_markdown_and_html_show_nodes_and_the_scaling_plot() -> None:
    cl = cluster_advice(profile([100.0, 100.0, 40.0], shared=150.0, cpu=50.0))
    text = render_report(_report(cl), "text", width=160)
    assert "cluster (Dask)" in text and "node2" in text and "slow" in text
    md = render_report(_report(cl), "md")
    assert "## Cluster" in md and "| node2 |" in md and "per node MB/s" in md
    page = render_report(_report(cl), "html")
    ET.fromstring(page.split("\n", 1)[1])  # well-formed
    assert "cluster: aggregate MB/s against nodes" in page and "<svg" in page
    assert "shared storage capacity (fitted)" in page
    # a cluster that could not be used: its error, no table
    bad = ClusterAdvice("tcp://nowhere:8786", error="cannot reach the Dask scheduler")
    assert "cannot reach" in render_report(_report(bad), "md")


# ---------------------------------------------------------------------------------------------
# a real LocalCluster


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    d = tmp_path / "data"
    d.mkdir()
    for i in range(3):
        write_flat(d / f"f{i}.root", entries=5000, branches=3)
    return d


@pytest.mark.dask
@pytest.mark.slow
def test_advise_with_a_local_cluster(tiny: Path) -> None:
    pytest.importorskip("distributed")
    from hep_advisor.pipeline.advise import advise

    before = sorted(os.listdir(tiny))
    a = advise([str(tiny)], budget_s=4, cache=False, dask="local:2")
    cl = a.cluster
    assert cl is not None and cl.error is None, cl and cl.error
    assert cl.scheduler.startswith("tcp://") and cl.workers == 2
    node = cl.nodes[0]
    assert node.calibration is not None and node.calibration.worker_mb_per_s
    loop = node.calibration.event_loop
    assert loop is not None and loop.events_per_s and loop.events_per_s > 0
    assert cl.model is not None and cl.model.predictions
    assert all(p.events_per_s for p in cl.model.predictions)
    jsonschema.validate(a.to_json(), generate_schema())
    assert sorted(os.listdir(tiny)) == before  # nothing written beside the data
    # a bad address: one line in the cluster block, the rest of the advice stands
    bad = advise([str(tiny)], budget_s=2, cache=False, dask="local:zero")
    assert bad.cluster is not None and "local:N" in (bad.cluster.error or "")
    assert bad.verdict is not None
    assert any(n.startswith("cluster: ") for n in bad.notes)


@pytest.mark.dask
@pytest.mark.slow
def test_report_command_with_dask_local(tiny: Path) -> None:
    pytest.importorskip("distributed")
    r = subprocess.run([sys.executable, "-m", "hep_advisor", "report", str(tiny), "--budget", "4",
                        "--no-cache", "--dask", "local:2", "--format", "json"],
                       capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-2000:]
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, generate_schema())
    assert doc["cluster"]["workers"] == 2 and doc["cluster"]["nodes"]
    assert "Traceback" not in r.stderr


@pytest.mark.dask
@pytest.mark.emulated
@pytest.mark.slow
def test_emulated_slow_node_and_saturated_storage_advice() -> None:
    """Real throttled disks: a node on a disk at a third of the others' rate is flagged
    (D003) and no storage saturates; two nodes on one shared disk give D002."""
    pytest.importorskip("distributed")
    from testbench import availability

    ok, reason = availability()
    if not ok:
        pytest.skip(f"emulated disks unavailable: {reason}")
    from hep_advisor.probes.cluster_probe import probe_cluster
    from testbench.cluster import emulated_cluster

    with emulated_cluster(2, "separate", [60.0, 20.0]) as ec:
        prof = probe_cluster(ec.client, ec.files, group_by="worker", alone_s=4.0,
                             samples=1, before_read=ec.bench.reset_throttle)
    cl = cluster_advice(prof)
    slow = [r for r in cl.recommendations if r.kind == "slow-node"]
    assert len(slow) == 1 and slow[0].title.startswith(f"Node {prof.nodes[1].name} ")
    assert "D002" not in codes(cl)
    with emulated_cluster(2, "shared", 40.0) as ec:
        prof = probe_cluster(ec.client, ec.files, group_by="worker", alone_s=4.0,
                             samples=1, before_read=ec.bench.reset_throttle)
    cl = cluster_advice(prof)
    assert "D002" in codes(cl) and "D003" not in codes(cl)


@pytest.mark.dask
@pytest.mark.slow
def test_calibrate_command_with_a_bad_dask_address(tiny: Path) -> None:
    """One line naming the option and the cause; the calibration is still written; exit 1."""
    pytest.importorskip("distributed")
    r = subprocess.run([sys.executable, "-m", "hep_advisor", "calibrate", str(tiny), "--budget",
                        "3", "--dask", "local:zero", "--json"],
                       capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert r.returncode == 1, r.stderr[-2000:]
    doc = json.loads(r.stdout)
    assert doc["calibration"] is not None and "local:N" in doc["cluster"]["error"]
    lines = [ln for ln in r.stderr.splitlines() if "--dask" in ln]
    assert len(lines) == 1 and "local:zero" in lines[0] and "Traceback" not in r.stderr
