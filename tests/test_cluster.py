"""Many machines: the cluster probe (probes.cluster_probe), its model (models.cluster_model), and
real LocalClusters of worker processes, unthrottled and on throttled emulated disks
(testbench.cluster).

The model's tests need nothing; those marked ``dask`` start LocalClusters (the ``dask`` extra);
those marked ``emulated`` also need root, cgroup v1 blkio and loop devices.  The emulated runs
are short (2 workers); the 2- and 4-worker figures: ``benchmarks/validation/bench_cluster.py``.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from hep_advisor.findings.jsonio import from_jsonable, to_jsonable
from hep_advisor.models.cluster_model import (
    ClusterModel,
    ClusterParameters,
    NodeRates,
    capacity_from,
    contended,
)
from hep_advisor.probes.cluster_probe import (
    ClusterError,
    ClusterNode,
    ClusterProfile,
    ConcurrentRead,
    NodeCalibration,
    NodeNetwork,
    WorkerInfo,
    WorkerRead,
    common_window,
    connect,
    group_nodes,
    network_interfaces,
    window_rates,
)
from hep_advisor.probes.readtests.results import Conditions, Measurement

# ---------------------------------------------------------------------------------------------
# helpers


def _m(*samples: float, workers: int = 1) -> Measurement:
    s = sorted(samples)
    return Measurement("MB/s", tuple(samples), s[len(s) // 2] if len(s) % 2 else
                       0.5 * (s[len(s) // 2 - 1] + s[len(s) // 2]), None,
                       Conditions("cold", workers=workers))


def _profile(rates: list[float], shared: float | None, *, workers_per_node: int = 1,
             together: float | None = None, link: float | None = None,
             samples: int = 1) -> ClusterProfile:
    nodes = []
    for i, r in enumerate(rates):
        ws = tuple(WorkerInfo(f"tcp://10.0.0.{i}:{9000 + k}", f"{i}-{k}", f"10.0.0.{i}")
                   for k in range(workers_per_node))
        m = _m(*([r * 0.98, r * 1.02] if samples > 1 else [r]))
        tog = None
        if together is not None:
            tog = ConcurrentRead(workers_per_node, 1, together,
                                 _m(together, workers=workers_per_node))
        cal = NodeCalibration(workers_per_node, r, (WorkerRead(ws[0].address, r, m),), tog, 1.0)
        net = NodeNetwork((), link)
        nodes.append(ClusterNode(f"node{i}", ws, None, net, cal))
    n_workers = len(rates) * workers_per_node
    sh = None if shared is None else ConcurrentRead(
        n_workers, len(rates), shared, _m(shared, workers=n_workers))
    return ClusterProfile("tcp://10.0.0.99:8786", "host", tuple(nodes), sh, 10.0)


# ---------------------------------------------------------------------------------------------
# the model


def test_contention_form_and_its_inverse() -> None:
    # N identical workers: N r / (1 + (N - 1) r / S)
    assert contended(4 * 50.0, 50.0, 100.0) == pytest.approx(200 / (1 + 3 * 50 / 100))
    assert contended(50.0, 50.0, 100.0) == pytest.approx(50.0)
    assert contended(200.0, 50.0, None) == 200.0
    s = capacity_from(contended(200.0, 50.0, 80.0), 200.0, 50.0)
    assert s == pytest.approx(80.0)
    assert capacity_from(195.0, 200.0, 50.0) is None  # within noise: not saturated


def test_separate_disks_scale_linearly() -> None:
    model = ClusterModel.from_profile(_profile([50.0, 50.0, 50.0, 50.0], 198.0))
    assert model.parameters.shared_capacity_mb_per_s is None
    assert model.parameters.shared_at_least_mb_per_s == 198.0
    for k in range(1, 5):
        p = model.predict(k, 1)
        assert p.aggregate_mb_per_s == pytest.approx(50.0 * k)
        assert p.limited_by == "workers"
        assert not p.extrapolated
    assert model.predict(8, 1).extrapolated


def test_shared_storage_caps_the_aggregate() -> None:
    model = ClusterModel.from_profile(_profile([50.0] * 4, 50.0))
    assert model.parameters.shared_capacity_mb_per_s == pytest.approx(50.0)
    for k in range(1, 5):
        assert model.predict(k, 1).aggregate_mb_per_s == pytest.approx(50.0)
    assert model.predict(3, 1).limited_by == "shared-storage"
    # twice the storage servers: twice the capacity
    bigger = model.what_if(storage_servers=2)
    assert bigger.predict(4, 1).aggregate_mb_per_s == pytest.approx(
        4 * 50 / (1 + 3 * 50 / 100))
    assert model.saturation() == 1


def test_intervals_where_measurable() -> None:
    one = ClusterModel.from_profile(_profile([50.0, 50.0], 60.0))
    assert one.predict(2, 1).low is None  # one sample each: no interval
    two = ClusterModel.from_profile(_profile([50.0, 50.0], 60.0, samples=2))
    p = two.predict(2, 1)
    assert p.low is not None and p.high is not None
    assert p.low <= p.aggregate_mb_per_s <= p.high


def test_node_capacity_network_and_workers_per_node() -> None:
    # 4 workers on a node give 120 where they would give 200: the node's disk
    prof = _profile([50.0, 50.0], None, workers_per_node=4, together=120.0, link=100.0)
    model = ClusterModel.from_profile(prof, remote=False)
    node = model.parameters.nodes[0]
    assert node.local_capacity_mb_per_s == pytest.approx(3 * 50 * 120 / (200 - 120))
    assert model.predict(1, 4).aggregate_mb_per_s == pytest.approx(120.0)
    assert model.predict(1, 4).limited_by == "node-storage"
    # the same read over each node's 100 MB/s link
    remote = ClusterModel.from_profile(prof, remote=True)
    p = remote.predict(2, 4)
    assert p.aggregate_mb_per_s == pytest.approx(200.0)
    assert p.limited_by == "network"
    faster = remote.what_if(network_mb_per_s=1250.0)
    assert faster.predict(2, 4).aggregate_mb_per_s == pytest.approx(240.0)
    assert model.predict(1, 8).extrapolated


def test_heterogeneous_nodes_and_events() -> None:
    model = ClusterModel.from_profile(_profile([50.0, 50.0, 20.0], None), mb_per_event=0.01)
    assert [n.name for n in model.slow_nodes()] == ["node2"]
    p = model.predict(3, 1)
    assert p.aggregate_mb_per_s == pytest.approx(120.0)
    assert p.events_per_s == pytest.approx(12_000.0)
    fast = NodeRates("big", 1, 200.0)
    assert model.what_if(add_nodes=[fast], drop_nodes=["node2"]).predict(3, 1) \
        .aggregate_mb_per_s == pytest.approx(300.0)
    # cores: CPU-bound workers beyond the cores add little
    cpu = ClusterModel(ClusterParameters((NodeRates("n", 1, 1000.0, cores=2),), None,
                                         cpu_mb_per_s=100.0))
    assert cpu.predict(1, 4).aggregate_mb_per_s < 1.2 * cpu.predict(1, 2).aggregate_mb_per_s
    assert cpu.predict(1, 4).limited_by == "cores"


def test_summary_serialises() -> None:
    model = ClusterModel.from_profile(_profile([50.0, 50.0], 50.0, samples=2))
    doc = to_jsonable(model.summary())
    text = json.dumps(doc, allow_nan=False)
    assert '"predictions"' in text
    first = doc["predictions"][0]
    assert {"nodes", "workers_per_node", "aggregate_mb_per_s", "low", "high",
            "events_per_s"} <= set(first)
    prof = json.loads(json.dumps(to_jsonable(_profile([50.0], None)), allow_nan=False))
    assert prof["nodes"][0]["calibration"]["worker_mb_per_s"] == 50.0


def test_json_round_trip() -> None:
    """Profile and model come back from their JSON as they were (a cached advice), and the
    model read back predicts the same."""
    profile = _profile([50.0, 40.0], 45.0, samples=2, workers_per_node=2, together=80.0)
    back = from_jsonable(ClusterProfile, json.loads(json.dumps(to_jsonable(profile))), "x",
                         "cluster")
    assert back == profile
    model = ClusterModel.from_profile(profile)
    params = from_jsonable(ClusterParameters, json.loads(json.dumps(
        to_jsonable(model.parameters), allow_nan=False)), "x", "model")
    assert params == model.parameters
    assert ClusterModel(params).predict(3, 2) == model.predict(3, 2)


def test_model_needs_a_measured_node() -> None:
    with pytest.raises(ValueError, match="no node"):
        ClusterModel.from_profile(ClusterProfile("x", "host", (), None, 0.0))


# ---------------------------------------------------------------------------------------------
# the probe's pieces


def test_common_window_and_rates() -> None:
    # two readers: 10 MB/s from t=0 to 10, 20 MB/s from t=2 to 8
    a = [(float(t), int(t * 10e6)) for t in range(11)]
    b = [(float(t), int((t - 2) * 20e6)) for t in range(2, 9)]
    assert common_window([a, b], warmup_s=0.0) == (2.0, 8.0)
    rates, window = window_rates([a, b], warmup_s=0.5) or ([], 0.0)
    assert window == pytest.approx(5.5)
    assert rates == pytest.approx([10.0, 20.0])
    assert common_window([a[:5], b[4:]]) is None  # no overlap


def test_grouping_and_network() -> None:
    ws = [WorkerInfo("tcp://a:1", "0", "a"), WorkerInfo("tcp://a:2", "1", "a"),
          WorkerInfo("tcp://b:1", "2", "b")]
    assert {k: len(v) for k, v in group_nodes(ws).items()} == {"a": 2, "b": 1}
    assert list(group_nodes(ws, "worker")) == ["a/0", "a/1", "b/2"]
    net = network_interfaces()
    assert all(i.name != "lo" for i in net.interfaces)
    assert net.link_mb_per_s is None or net.link_mb_per_s > 0


def test_connect_rejects_what_is_not_a_cluster() -> None:
    with pytest.raises(ClusterError), connect(42):
        pass
    pytest.importorskip("distributed")
    with pytest.raises(ClusterError, match="number"), connect("local:many"):
        pass


# ---------------------------------------------------------------------------------------------
# a real LocalCluster (processes), unthrottled


def _files(directory: Path, n: int, size: int) -> list[str]:
    out = []
    for i in range(n):
        p = directory / f"f{i}.bin"
        p.write_bytes(os.urandom(size))
        out.append(str(p))
    return out


@pytest.mark.dask
@pytest.mark.slow
def test_local_cluster_probe(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    from hep_advisor.probes.cluster_probe import probe_cluster
    from hep_advisor.probes.readtests.runner import ProgressEvent

    files = _files(tmp_path, 4, 4_000_000)
    events: list[ProgressEvent] = []
    profile = probe_cluster("local:2", files, alone_s=0.5, together_s=0.5, samples=1,
                            progress=events.append)
    assert profile.scheduler.startswith("tcp://")
    assert profile.workers == 2
    assert len(profile.nodes) == 1  # one host
    node = profile.nodes[0]
    assert node.site is not None and node.site.cpu.logical_cores
    cal = node.calibration
    assert cal is not None and cal.worker_mb_per_s and cal.worker_mb_per_s > 0
    assert cal.alone[0].worker in {w.address for w in node.workers}  # pinned to the worker
    assert cal.together is not None and cal.together.workers == 2
    # one node: its workers together are the shared test, not run twice
    assert profile.shared_storage is None and profile.skipped
    assert events and events[-1].fraction == 1.0
    json.dumps(to_jsonable(profile), allow_nan=False)
    model = ClusterModel.from_profile(profile)
    assert model.predict(1, 2).aggregate_mb_per_s > 0


# ---------------------------------------------------------------------------------------------
# emulated nodes: worker processes on throttled disks


def _emulated_ok() -> tuple[bool, str]:
    from testbench import availability

    return availability()


@pytest.mark.dask
@pytest.mark.emulated
@pytest.mark.slow
@pytest.mark.parametrize("mode", ["separate", "shared"])
def test_emulated_cluster_rates(mode: str) -> None:
    """Each worker stands for a node: alone, each reads at the set rate (within 10%); the
    aggregate of 1 and 2 workers reading at once is what the model predicts (within 15%):
    twice the rate on separate disks, the rate on the shared one."""
    pytest.importorskip("distributed")
    ok, reason = _emulated_ok()
    if not ok:
        pytest.skip(f"emulated disks unavailable: {reason}")
    from hep_advisor.probes.cluster_probe import concurrent_read, list_workers, probe_cluster
    from testbench.cluster import emulated_cluster

    rate = 50.0
    with emulated_cluster(2, mode, rate) as ec:  # type: ignore[arg-type]
        assert ec.throttled()
        profile = probe_cluster(ec.client, ec.files, group_by="worker",
                                before_read=ec.bench.reset_throttle)
        assert len(profile.nodes) == 2
        for node in profile.nodes:
            assert node.calibration is not None
            r = node.calibration.worker_mb_per_s
            assert r is not None and abs(r / rate - 1) <= 0.10, (node.name, r)
        shared = profile.shared_storage
        assert shared is not None and shared.aggregate_mb_per_s is not None
        expected = 2 * rate if mode == "separate" else rate
        assert abs(shared.aggregate_mb_per_s / expected - 1) <= 0.10
        model = ClusterModel.from_profile(profile)
        infos = list_workers(ec.client)
        node_of = {w.address: f"{w.host}/{w.name}" for w in infos}
        one = concurrent_read(ec.client, infos[:1], ec.files, node_of, samples=1,
                              before_sample=ec.bench.reset_throttle)
        assert one.aggregate_mb_per_s is not None
        for k, measured in ((1, one.aggregate_mb_per_s), (2, shared.aggregate_mb_per_s)):
            predicted = model.predict(k, 1).aggregate_mb_per_s
            assert abs(predicted / measured - 1) <= 0.15, (k, predicted, measured)
        if mode == "shared":
            cap = model.parameters.shared_capacity_mb_per_s
            assert cap is not None and math.isclose(cap, rate, rel_tol=0.15)
        else:
            assert model.parameters.shared_capacity_mb_per_s is None


@pytest.mark.dask
@pytest.mark.slow
def test_failures_are_reported_not_raised(tmp_path: Path) -> None:
    """Files a worker cannot read, and a task that hangs: each is one line in the results."""
    pytest.importorskip("distributed")
    from distributed import Client, LocalCluster

    from hep_advisor.probes.cluster_probe import _pin, _results, probe_cluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        missing = [str(tmp_path / "nowhere.bin")]
        profile = probe_cluster(client, missing, alone_s=0.2, together_s=0.2, samples=1)
        node = profile.nodes[0]
        assert node.site is not None  # the site probe still ran
        assert node.calibration is not None and node.calibration.worker_mb_per_s is None
        assert any("FileNotFoundError" in e for e in node.errors)
        together = node.calibration.together
        assert together is not None and "FileNotFoundError" in (together.error or "")
        import time

        worker = profile.nodes[0].workers[0]
        with pytest.raises(TimeoutError, match="still running"):
            _results(client, [_pin(client, time.sleep, worker, 1.5)], 0.3)
