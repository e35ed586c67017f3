"""What-if scenarios: each transform alone, their purity, and how a fitted model's uncertainty
carries over to a scenario and its speed-up."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hep_advisor.models.physics import Cores, Params, config_matrix, rates
from hep_advisor.models.scenarios import (
    PRESET_SD,
    RATIO_SD,
    Baseline,
    Scenario,
    branches,
    cached,
    calibration_baseline,
    combine,
    compression,
    device_spec,
    devices,
    merge,
    parse_storage,
    predict_baseline,
    predict_scenarios,
    prestaged,
    read_ahead,
    rebasket,
    request_size,
    scenario_model,
    site,
    site_baseline,
    site_model,
    summarize,
    workers,
)
from hep_advisor.models.sites import KIB, SiteSpec, StorageSpec, WorkloadSpec
from hep_advisor.models.throughput import ThroughputModel

HDD = StorageSpec("hdd", 1, "single", 70.0, 120.0, 128.0)
TRUTH = Params(storage_mb_per_s=70.0, access_ms=8.0, devices=1.0, decompress_mb_per_s=60.0,
               process_mb_per_s=150.0, open_s=0.05, cache_mb_per_s=3000.0)
CORES = Cores(4, 2)
BASE_CONFIG = {"workers": 1.0, "request_bytes": 128.0 * KIB, "file_mb": 3.0, "io": 1.0,
               "cached": 0.0, "remote": 0.0, "decompress": 1.0, "process": 1.0, "opens": 1.0}


def gsi_like(layout: str = "raid5", count: int = 4, ra_kb: float = 128.0) -> SiteSpec:
    storage = StorageSpec("data", count, layout, 70.0, 120.0, ra_kb)  # type: ignore[arg-type]
    return SiteSpec("gsi", 8, 16.0, (storage,), threads_per_core=2, network_gbps=1.0)


def workload(**changes: object) -> WorkloadSpec:
    w = WorkloadSpec(name="w", files=100, file_mb=3.3, events_per_file=100,
                     compression_factor=3.5, algorithm="ZLIB", branches=406,
                     decompress_mb_per_s=160.0, process_mb_per_s=160.0, open_s=0.056,
                     mean_basket_kb=8.0, request_kb=512.0)
    return dataclasses.replace(w, **changes)  # type: ignore[arg-type]


PYTHIA = workload(branches=22, file_mb=500.0, events_per_file=50_000, compression_factor=2.5,
                  request_kb=None, mean_basket_kb=12.5, open_s=0.01)


@pytest.fixture(scope="module")
def fitted() -> ThroughputModel:
    """A model fitted to noise-free synthetic calibration points of ``TRUTH``."""
    rows = [{"workers": w, "request_bytes": 1 << 20, "file_mb": 1e6} for w in (1, 2, 4)]
    rows += [{"workers": 1, "request_bytes": r, "file_mb": 1e6} for r in (4096, 65536, 1 << 20)]
    rows += [{"cached": 1, "file_mb": 1e6}, {"io": 0, "decompress": 1, "file_mb": 1e6}]
    rows += [{"request_bytes": 128 * KIB, "file_mb": f, "decompress": 1, "process": 1,
              "opens": 1} for f in (1.0, 3.0, 30.0)]
    X = config_matrix(rows)
    y = rates(TRUTH, X, CORES) * np.exp(np.random.default_rng(1).normal(0, 0.02, len(X)))
    # TRUTH reads, then computes (no I/O overlap), which cold event loops alone cannot tell
    # from its processing rate: given, as for ROOT's engine
    return ThroughputModel(cores=4, threads_per_core=2, noise=0.05,
                           fixed={"io_overlap": 0.0}).fit(X, y)


@pytest.fixture
def cal_base(fitted: ThroughputModel) -> Baseline:
    return calibration_baseline(fitted, BASE_CONFIG, events_per_mb=30.0, algorithm="ZLIB",
                                compression_factor=3.5, mean_basket_bytes=8000.0,
                                measured_decompress={"ZLIB": 60.0, "LZ4": 900.0},
                                files=1000, memory_gb=8.0, access="scattered")


def mb(b: Baseline, n: int = 1) -> float:
    return float(rates(b.params, b.X([n]), b.cores)[0])


# ---------------------------------------------------------------------------------------------
# Each transform


def test_workers_pins_the_count(cal_base: Baseline, fitted: ThroughputModel) -> None:
    (r,) = predict_scenarios(fitted, cal_base, [workers(4)], [1, 2, 8])
    assert [p.workers for p in r.predictions] == [4]
    p = r.predictions[0]
    assert p.speedup == pytest.approx(p.aggregate_mb_per_s / mb(cal_base, 1))
    with pytest.raises(ValueError):
        workers(0)


def test_merge_amortises_the_open_cost(cal_base: Baseline) -> None:
    b = merge(30).apply(cal_base)
    assert b.config["file_mb"] == pytest.approx(30.0) and b.file_size_mb == 30
    assert b.files == 100
    assert b.params == cal_base.params and b.events_per_mb == cal_base.events_per_mb
    assert mb(b) > mb(cal_base)
    assert mb(merge(3.0).apply(cal_base)) == pytest.approx(mb(cal_base))


def test_merge_scales_what_is_read_when_only_part_is(cal_base: Baseline) -> None:
    b = merge(30).apply(branches(0.5).apply(cal_base))
    assert b.config["file_mb"] == pytest.approx(15.0)


def with_baskets(b: Baseline, basket_s: float, basket_bytes: float = 4300.0,
                 calls: float = 1.0) -> Baseline:
    """``b`` reading its 3 MB files in baskets of ``basket_bytes``, each costing ``basket_s``."""
    config = {**b.config, "baskets": b.config["file_mb"] * 1e6 / basket_bytes, "calls": calls}
    return dataclasses.replace(b, params=dataclasses.replace(b.params, basket_s=basket_s,
                                                             call_s=0.01),
                               config=config, mean_basket_bytes=basket_bytes)


def test_merge_scales_the_baskets_and_recomputes_the_read_calls(cal_base: Baseline) -> None:
    base = with_baskets(cal_base, 1e-4)
    b = merge(300).apply(base)
    assert b.config["baskets"] == pytest.approx(base.config["baskets"] * 100)
    # 300 MB x 3.5 = 1050 MB of arrays: one read call per 50 MB
    assert b.config["calls"] == 21
    assert merge(3.0).apply(base).config["calls"] == 1  # 10.5 MB: one call
    unknown = merge(300).apply(dataclasses.replace(base, compression_factor=None))
    assert unknown.config["calls"] == 1 and any("calls" in n for n in unknown.notes)
    # without baskets in the configuration, none appear
    assert "baskets" not in merge(300).apply(cal_base).config


def test_rebasket_pays_the_basket_cost_less_often(cal_base: Baseline,
                                                  fitted: ThroughputModel) -> None:
    base = with_baskets(cal_base, 1e-4)
    b = rebasket(17_600).apply(base)
    assert b.config["baskets"] == pytest.approx(3e6 / 17_600)
    assert b.mean_basket_bytes == 17_600 and b.config["file_mb"] == base.config["file_mb"]
    assert b.config["calls"] == base.config["calls"] and b.params == base.params
    (r,) = predict_scenarios(fitted, base, [rebasket(17_600)], [1, 4])
    for p in r.predictions:  # at 4 workers the device queue hides part of the CPU saved
        assert p.speedup is not None and p.speedup > (1.05 if p.workers == 1 else 1.02)
        assert p.speedup_low is not None and p.speedup_low <= p.speedup
    assert r.predictions[1].speedup < r.predictions[0].speedup
    # the speed-up is the model's: the per-file time without the baskets it no longer reads
    t_file = 3.0 / mb(base)
    saved = (base.config["baskets"] - b.config["baskets"]) * 1e-4
    assert r.predictions[0].speedup == pytest.approx(t_file / (t_file - saved))
    # no per-basket cost, no gain (the scattered requests here are already larger)
    free = with_baskets(cal_base, 0.0)
    (r0,) = predict_scenarios(fitted, free, [rebasket(17_600)], [1, 4])
    assert all(p.speedup == pytest.approx(1.0) for p in r0.predictions)


def test_rebasket_never_adds_baskets_and_grows_the_requests_they_set(cal_base: Baseline) -> None:
    base = with_baskets(cal_base, 1e-4)
    smaller = rebasket(1000).apply(base)
    assert smaller.config["baskets"] == base.config["baskets"]
    assert smaller.mean_basket_bytes == 4300 and any("already larger" in n
                                                     for n in smaller.notes)
    # scattered reads of a described site are one basket each: larger baskets, larger reads
    site_base = site_baseline(gsi_like("single", 1), workload(request_kb=None))
    assert site_base.config["request_bytes"] == 8 * KIB
    big = rebasket(64 * KIB).apply(site_base)
    assert big.config["request_bytes"] == 64 * KIB and mb(big) > 2 * mb(site_base)
    # sequential reads set by the read-ahead stay as they are
    seq = site_baseline(gsi_like("single", 1), PYTHIA)
    assert rebasket(64 * KIB).apply(seq).config["request_bytes"] == seq.config["request_bytes"]
    # a fixed request size (a TTreeCache) is kept
    fixed = site_baseline(gsi_like("single", 1), workload())
    assert rebasket(1 << 20).apply(fixed).config["request_bytes"] == 512 * KIB
    with pytest.raises(ValueError):
        rebasket(0)


def test_branches_and_compression_keep_the_baskets_consistent(cal_base: Baseline) -> None:
    base = with_baskets(cal_base, 1e-4)
    assert branches(0.25).apply(base).config["baskets"] == pytest.approx(
        base.config["baskets"] / 4)
    lz4 = compression("LZ4").apply(base)
    assert lz4.config["baskets"] == base.config["baskets"]
    assert lz4.mean_basket_bytes == pytest.approx(4300 * 3.5 / 2.8)


def test_request_size_without_a_layout_changes_only_the_request(cal_base: Baseline) -> None:
    b = request_size(8 << 20).apply(cal_base)
    assert b.config["request_bytes"] == 8 << 20 and b.params == cal_base.params
    assert b.request_fixed and mb(b) > mb(cal_base)


def test_request_size_stripes_over_a_raid(cal_base: Baseline) -> None:
    base = site_baseline(gsi_like(), workload())
    assert base.params.storage_mb_per_s == 70 and base.params.devices == 3
    big = request_size(8 << 20).apply(base)
    assert big.params.storage_mb_per_s == 210 and big.params.devices == 1


def test_read_ahead_changes_sequential_reads_only(cal_base: Baseline) -> None:
    scattered = read_ahead(8192).apply(cal_base)
    assert scattered.config == cal_base.config
    assert any("does not change" in n for n in scattered.notes)
    seq = read_ahead(8192).apply(dataclasses.replace(cal_base, access="sequential"))
    assert seq.config["request_bytes"] == 8192 * KIB
    # on a described RAID5, sequential reads stripe once the read-ahead spans the disks
    base = site_baseline(gsi_like(), PYTHIA)
    lifted = read_ahead(8192).apply(base)
    assert lifted.storage is not None and lifted.storage.read_ahead_kb == 8192
    assert lifted.params.storage_mb_per_s == 210 and mb(lifted, 4) > 1.5 * mb(base, 4)


def test_cached_reads_from_memory_and_says_when_the_data_do_not_fit(cal_base: Baseline) -> None:
    b = cached().apply(cal_base)
    assert b.config["cached"] == 1.0 and mb(b, 4) > mb(cal_base, 4)
    assert not b.notes  # 1000 x 3 MB fit in 8 GB
    big = cached().apply(dataclasses.replace(cal_base, files=5000))
    assert any("do not fit" in n for n in big.notes)


def test_devices_replace_the_storage(cal_base: Baseline) -> None:
    spec, statement = device_spec("nvme")
    assert "NVMe" in statement and spec.mb_per_s == 3000 and spec.access_ms == 0.02
    b = devices(spec, PRESET_SD, (statement,)).apply(cal_base)
    assert b.params.storage_mb_per_s == 3000 and b.params.access_ms == pytest.approx(0.02)
    assert {"storage_mb_per_s", "access_ms", "devices"} <= b.replaced
    assert b.assumed_sd["storage_mb_per_s"] == PRESET_SD
    assert mb(b) > mb(cal_base)
    pre = prestaged(spec).apply(dataclasses.replace(cal_base, config={**BASE_CONFIG,
                                                                      "remote": 1.0}))
    assert pre.config["remote"] == 0.0 and pre.storage == spec


def test_separate_disks_take_more_jobs(cal_base: Baseline) -> None:
    base = site_baseline(gsi_like("single", 1), workload())
    spec, sd, _ = parse_storage("separate:4", base)
    assert spec.count == 4 and spec.layout == "separate" and spec.mb_per_s == 70 and sd
    four = devices(spec, sd).apply(base)
    assert four.params.devices == 4
    assert mb(four, 8) > 2 * mb(base, 8) and mb(four, 1) == pytest.approx(mb(base, 1))


@pytest.mark.parametrize(("text", "layout", "count", "mb_per_s"), [
    ("nvme", "single", 1, 3000), ("raid5:4:hdd", "raid5", 4, 70), ("raid0:2:ssd", "raid0", 2, 500),
    ("raid1", "raid1", 2, None), ("separate:3", "separate", 3, None),
])
def test_parse_storage(cal_base: Baseline, text: str, layout: str, count: int,
                       mb_per_s: float | None) -> None:
    spec, sd, statement = parse_storage(text, cal_base)
    assert (spec.layout, spec.count) == (layout, count)
    if mb_per_s is None:  # the calibrated devices: their fitted uncertainty carries over
        assert sd is None and spec.mb_per_s == pytest.approx(cal_base.params.storage_mb_per_s)
        assert "calibrated" in statement
    else:
        assert spec.mb_per_s == mb_per_s and sd == PRESET_SD


@pytest.mark.parametrize(("text", "message"), [
    ("raid7:4", "expected LAYOUT"), ("raid5:2", "at least 3"), ("single:2", "exactly 1"),
    ("separate:x", "whole number"), ("separate:4:floppy", "unknown device kind"),
])
def test_parse_storage_errors(cal_base: Baseline, text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_storage(text, cal_base)


def test_compression_scales_bytes_and_takes_measured_rates(cal_base: Baseline) -> None:
    lz4 = compression("lz4").apply(cal_base)
    f_new = 3.5 * 0.8
    scale = 3.5 / f_new
    assert lz4.algorithm == "LZ4" and lz4.compression_factor == pytest.approx(f_new)
    assert lz4.config["file_mb"] == pytest.approx(3.0 * scale)
    assert lz4.events_per_mb == pytest.approx(30.0 / scale)
    assert lz4.params.process_mb_per_s == pytest.approx(cal_base.params.process_mb_per_s * scale)
    assert lz4.params.decompress_mb_per_s == 900.0  # measured by the calibration
    assert "decompress_mb_per_s" in lz4.replaced
    assert lz4.config["request_bytes"] == pytest.approx(cal_base.config["request_bytes"] * scale)
    assert lz4.mb_per_work == pytest.approx(scale)


def test_compression_takes_the_factor_measured_on_a_recompressed_sample(
    cal_base: Baseline,
) -> None:
    base = dataclasses.replace(cal_base, measured_factor={"ZLIB": 1.0, "LZ4": 0.7,
                                                          "ZSTD": 1.15},
                               measured_decompress={"ZLIB": 60.0, "LZ4": 900.0, "ZSTD": 200.0},
                               recompressed={"LZ4": 40, "ZSTD": 40})
    lz4 = compression("LZ4").apply(base)
    assert lz4.compression_factor == pytest.approx(3.5 * 0.7)  # not FACTOR_VS_ZLIB's 0.8
    assert lz4.mb_per_work == pytest.approx(1 / 0.7)
    assert lz4.params.decompress_mb_per_s == 900.0 and "decompress_mb_per_s" in lz4.replaced
    assert any("measured on a recompressed sample of the dataset's baskets: 40 baskets" in n
               for n in lz4.notes)
    assert not any("typical of ROOT" in n for n in lz4.notes)
    # chained: relative to the algorithm the data has by then
    zstd = compression("ZSTD").apply(lz4)
    assert zstd.compression_factor == pytest.approx(3.5 * 1.15)
    # not measured: assumed as before
    lzma = compression("LZMA").apply(base)
    assert lzma.compression_factor == pytest.approx(3.5 * 1.3)
    assert any("typical of ROOT" in n for n in lzma.notes)


def test_compression_assumes_relative_speeds_where_not_measured(cal_base: Baseline) -> None:
    zstd = compression("ZSTD").apply(cal_base)
    f_new = 3.5 * 1.1
    # the same uncompressed output at twice ZLIB's speed, counted in compressed MB
    expected = cal_base.params.decompress_mb_per_s * 3.5 / f_new * 2.0
    assert zstd.params.decompress_mb_per_s == pytest.approx(expected)
    assert zstd.assumed_sd["decompress_mb_per_s"] == RATIO_SD
    assert "decompress_mb_per_s" not in zstd.replaced  # scaled: keeps its fitted uncertainty
    assert any("ZSTD-5 2x" in n and "development machine" in n for n in zstd.notes)
    given = compression("ZSTD", factor=5.0, decompress_mb_per_s=400).apply(cal_base)
    assert given.compression_factor == 5.0 and given.params.decompress_mb_per_s == 400


def test_uncompressed_reads_more_bytes_and_skips_decompression(cal_base: Baseline) -> None:
    none = compression("none").apply(cal_base)
    assert none.config["decompress"] == 0.0 and none.compression_factor == 1.0
    assert none.config["file_mb"] == pytest.approx(3.0 * 3.5)
    with pytest.raises(ValueError, match="unknown compression"):
        compression("zip")
    with pytest.raises(ValueError, match="compression factor is unknown"):
        compression("LZ4").apply(dataclasses.replace(cal_base, compression_factor=None))


def test_branches_read_part_of_the_bytes(cal_base: Baseline, fitted: ThroughputModel) -> None:
    b = branches(0.25).apply(cal_base)
    assert b.config["file_mb"] == pytest.approx(0.75) and b.events_per_mb == pytest.approx(120)
    (r,) = predict_scenarios(fitted, cal_base, [branches(0.25)], [1])
    p = r.predictions[0]
    # the same events, a quarter of the bytes: faster, though the opens stay
    assert p.speedup is not None and 1.5 < p.speedup < 4
    assert p.events_per_s == pytest.approx(p.aggregate_mb_per_s * 120)
    with pytest.raises(ValueError):
        branches(0)


def test_site_replaces_cpu_storage_and_network(cal_base: Baseline) -> None:
    b = site(gsi_like("separate", 4)).apply(cal_base)
    assert b.cores == Cores(8, 2) and b.params.devices == 4 and b.memory_gb == 16
    assert b.params.network_mb_per_s == pytest.approx(110)
    assert b.params.decompress_mb_per_s == cal_base.params.decompress_mb_per_s


def test_transforms_are_pure(cal_base: Baseline) -> None:
    before = dataclasses.replace(cal_base)
    config = dict(cal_base.config)
    for s in (merge(30), request_size(1 << 20), read_ahead(8192), cached(), branches(0.5),
              compression("LZ4"), devices(device_spec("ssd")[0]), site(gsi_like()), workers(3),
              rebasket(64_000)):
        s.apply(cal_base)
    assert cal_base == before and dict(cal_base.config) == config


def test_combine_applies_in_order_and_names_the_parts(cal_base: Baseline) -> None:
    both = combine(merge(30), cached(), workers(4))
    assert both.name == "merge to 30 MB + page cache + 4 workers" and both.workers == 4
    b = both.apply(cal_base)
    assert b.config["file_mb"] == 30 and b.config["cached"] == 1 and b.workers == 4
    assert len(both.assumptions) == len(merge(30).assumptions) + len(cached().assumptions)


# ---------------------------------------------------------------------------------------------
# Uncertainty


def test_scenario_model_keeps_the_untouched_covariance(fitted: ThroughputModel,
                                                       cal_base: Baseline) -> None:
    spec, _ = device_spec("ssd")
    new = devices(spec, PRESET_SD).apply(cal_base)
    clone = scenario_model(fitted, cal_base, new)
    kept = [n for n in fitted.free_params_ if n not in new.replaced]
    assert kept and set(kept) <= set(clone.free_params_)
    i = [fitted.free_params_.index(n) for n in kept]
    j = [clone.free_params_.index(n) for n in kept]
    np.testing.assert_allclose(clone.log_covariance_[np.ix_(j, j)],
                               fitted.log_covariance_[np.ix_(i, i)])
    k = clone.free_params_.index("storage_mb_per_s")
    assert clone.log_covariance_[k, k] == pytest.approx(PRESET_SD**2)
    assert clone.params_["storage_mb_per_s"] == 500 and clone.fixed is not None


def test_identity_scenario_has_speedup_one_exactly(fitted: ThroughputModel,
                                                   cal_base: Baseline) -> None:
    same = Scenario("same", "nothing changes", lambda b: b)
    (r,) = predict_scenarios(fitted, cal_base, [same], [1, 4])
    base = predict_baseline(fitted, cal_base, [1, 4])
    for p, q in zip(r.predictions, base, strict=True):
        assert p.speedup == pytest.approx(1.0)
        assert p.speedup_low == pytest.approx(1.0) and p.speedup_high == pytest.approx(1.0)
        assert (p.aggregate_mb_per_s, p.low, p.high) == pytest.approx((q.aggregate_mb_per_s,
                                                                       q.low, q.high))


def test_shared_uncertainty_cancels_in_the_speedup() -> None:
    model, base = site_model(gsi_like(), workload())
    (r,) = predict_scenarios(model, base, [merge(26)], [1, 8])
    for p in r.predictions:
        assert p.speedup_low is not None and p.speedup_high is not None and p.speedup
        ratio_width = p.speedup_high / p.speedup_low
        absolute_width = p.high / p.low
        assert ratio_width < absolute_width


def test_fitted_baseline_predicts_the_truth(fitted: ThroughputModel, cal_base: Baseline) -> None:
    points = predict_baseline(fitted, cal_base, [1, 2, 4])
    truth = rates(TRUTH, cal_base.X([1, 2, 4]), CORES)
    for p, t in zip(points, truth, strict=True):
        assert p.low < t < p.high
        assert p.events_per_s == pytest.approx(p.aggregate_mb_per_s * 30)


def test_summary_sources_and_units(fitted: ThroughputModel, cal_base: Baseline) -> None:
    s = summarize(fitted, cal_base, [1, 2], [cached()])
    assert s.parameters["storage_mb_per_s"].source == "fitted"
    assert s.parameters["storage_mb_per_s"].uncertainty is not None
    assert s.parameters["open_s"].unit == "s per file"
    assert [p.workers for p in s.predictions] == [1, 2]
    described, base = site_model(gsi_like(), workload())
    d = summarize(described, base, [1], source="description")
    assert d.parameters["decompress_mb_per_s"].source == "fixed"
    assert d.parameters["decompress_mb_per_s"].uncertainty == pytest.approx(0.2 * 160)
    assert d.parameters["cache_mb_per_s"].source == "assumed"
    assert d.parameters["devices"].uncertainty is None


def test_summary_has_a_json_schema() -> None:
    from hep_advisor.findings.jsonio import schema_for, to_jsonable
    from hep_advisor.models.scenarios import ModelSummary

    jsonschema = pytest.importorskip("jsonschema")
    model, base = site_model(gsi_like(), workload())
    doc = to_jsonable(summarize(model, base, [1, 4], [merge(26)], source="description"))
    jsonschema.validate(doc, schema_for(ModelSummary, "model", "urn:model"))
    assert doc["site"]["storage"][0]["layout"] == "raid5"


def test_models_import_neither_rich_nor_the_advisor() -> None:
    code = ("import sys, models.scenarios, models.sites; "
            "bad = [m for m in ('rich', 'textual', 'advisor') if m in sys.modules]; "
            "sys.exit(1 if bad else 0)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=Path(__file__).resolve().parent.parent, timeout=60)
    assert r.returncode == 0, r.stderr


# ---------------------------------------------------------------------------------------------
# The unpacking test's row: processing where decompression hides it


def test_unpacking_constrains_processing_where_decompression_dominates() -> None:
    from test_basket_cost import _calibration, _m

    from hep_advisor.models.calibration import fit_inputs, model_from_calibration
    from hep_advisor.models.physics import FEATURES
    from hep_advisor.probes.readtests.results import DecompressionPoint, Unpacking

    cal, ds, site = _calibration(1e-4)
    # decompression (32 MB/s) takes nearly all of the loop's time (30 MB/s)
    slow = dataclasses.replace(cal, decompression=(DecompressionPoint(
        "ZLIB", 32.0, 112.0, "cramjam", 100, _m(32.0, unit="MB/s")),))
    up = Unpacking(1500.0, 5250.0, 1200.0, None, None, 22, 40, _m(1200.0, unit="MB/s"))
    label = "unpacking (uproot, in memory)"
    inputs = fit_inputs(dataclasses.replace(slow, unpacking=up), ds, site)
    k = inputs.labels.index(label)
    row = dict(zip(FEATURES, inputs.X[k], strict=True))
    assert row["process"] == 1 and row["io"] == 0 and row["decompress"] == 0
    assert row["baskets"] == 0 and row["calls"] == 0 and inputs.y[k] == 1500.0
    without, _, _ = model_from_calibration(slow, ds, site)
    assert "process_mb_per_s" in without.unconstrained_
    with_row, _, _ = model_from_calibration(dataclasses.replace(slow, unpacking=up), ds, site)
    assert "process_mb_per_s" in with_row.free_params_
    assert with_row.params_["process_mb_per_s"] == pytest.approx(1500.0, rel=0.5)
    # a user's analysis does work the unpacking test does not see: no row then
    mine = dataclasses.replace(slow, unpacking=up, event_loop=dataclasses.replace(
        slow.event_loop, analysis="mine:analysis"))
    assert label not in fit_inputs(mine, ds, site).labels


def test_the_io_overlap_is_held_at_zero_for_roots_engine() -> None:
    """uproot's reads can run behind its CPU: with no cold event loop to tell, the overlap is
    assumed over its plausible range; ROOT's engine reads in the loop's thread: held at 0."""
    from test_basket_cost import _calibration

    from hep_advisor.models.calibration import model_from_calibration

    cal, ds, site = _calibration(1e-4)  # warm: nothing constrains the overlap
    up, _, _ = model_from_calibration(cal, ds, site)
    assert "io_overlap" in up.assumed_ and up.params_["io_overlap"] == pytest.approx(0.525)
    root, _, _ = model_from_calibration(dataclasses.replace(cal, engine="root"), ds, site)
    assert root.params_["io_overlap"] == 0.0
    assert "io_overlap" not in root.free_params_ and "io_overlap" not in root.unconstrained_


def test_small_files_take_the_per_call_cost_from_the_event_loop() -> None:
    """One basket per branch and call: the warm loop's time per file less its MB at the
    measured decompression rate is the per-call cost; the per-call test's per-MB row and the
    unpacking row (fixed costs not separated) would count per-branch costs per MB."""
    from test_basket_cost import _calibration, _m

    from hep_advisor.models.calcosts import loop_call_costs
    from hep_advisor.models.calibration import fit_inputs
    from hep_advisor.models.physics import FEATURES
    from hep_advisor.probes.readtests.results import BasketCost, Unpacking

    cal, ds, site = _calibration(None)
    tree = ds.trees[0]
    # 22 baskets per file: one per branch (the helper's 40 is 1.8 per branch: the test's rows)
    small = dataclasses.replace(ds, trees=(dataclasses.replace(
        tree, baskets=dataclasses.replace(tree.baskets, count=2200)),))
    up = Unpacking(1500.0, 5250.0, 1200.0, None, None, 22, 22, _m(1200.0, unit="MB/s"))
    cal = dataclasses.replace(cal, unpacking=up)
    costs = loop_call_costs(cal, small.trees[0])
    # 100 entries per file at 1000 events/s: 0.1 s; 3 MB at 60 MB/s: 0.05 s
    assert costs is not None and costs.call_s == pytest.approx(0.05)
    inputs = fit_inputs(cal, small, site)
    assert inputs.priors["call_s"][0] == pytest.approx(0.05)
    assert "event loop per MB" not in inputs.labels
    assert "unpacking (uproot, in memory)" not in inputs.labels
    # the unpacking test separated its fixed costs: its rate is per MB, kept
    apart = dataclasses.replace(cal, unpacking=dataclasses.replace(up, branch_call_s=1e-4))
    assert "unpacking (uproot, in memory)" in fit_inputs(apart, small, site).labels
    assert loop_call_costs(apart, small.trees[0]).process_mb_per_s == 1500.0  # type: ignore[union-attr]
    # with the per-basket cost measured, the rows count every basket at it (22 per file
    # here), so the rate model's prior leaves out the first basket of each branch that the
    # loop's per-call cost holds (the replay's per-call cost keeps it: it counts only the
    # baskets beyond those)
    timed = dataclasses.replace(cal, basket_cost=BasketCost(2e-4, 80.0, 600, _m(2e-4)))
    assert loop_call_costs(timed, small.trees[0]).call_s == pytest.approx(0.05)  # type: ignore[union-attr]
    timed_inputs = fit_inputs(timed, small, site)
    assert timed_inputs.priors["call_s"][0] == pytest.approx(0.05 - 22 * 2e-4)
    k = timed_inputs.labels.index("event loop, warm")
    assert timed_inputs.X[k][FEATURES.index("baskets")] == pytest.approx(22.0)
    # several baskets per branch and call: the per-call test's figures, as before
    assert loop_call_costs(cal, tree) is None
    # ... also where a short share's loop read them in smaller steps (10.5 MB of arrays per
    # file in 1 MB steps: 11 calls of under one basket per branch): the files are not small
    stepped = dataclasses.replace(cal, event_loop=dataclasses.replace(cal.event_loop,
                                                                      step_bytes=1e6))
    assert loop_call_costs(stepped, tree) is None
    # small files read in two steps each: the per-call cost is the loop's time over its calls
    two = dataclasses.replace(cal, event_loop=dataclasses.replace(
        cal.event_loop, step_bytes=tree.uncompressed_bytes / tree.files / 2))
    assert loop_call_costs(two, small.trees[0]).call_s == pytest.approx(0.025)  # type: ignore[union-attr]
    assert fit_inputs(cal, ds, site).priors["call_s"][0] == pytest.approx(0.004)
    # a user's analysis in the loop: its work is not a read call's
    assert cal.event_loop is not None
    mine = dataclasses.replace(cal, event_loop=dataclasses.replace(cal.event_loop,
                                                                   analysis="m:f"))
    assert loop_call_costs(mine, small.trees[0]) is None


def test_branches_scale_the_read_calls_by_the_share_of_branches() -> None:
    from hep_advisor.models.scenarios.transforms import branches

    base = Baseline(params=TRUTH, cores=Cores(4), config={
        "workers": 1.0, "file_mb": 10.0, "calls": 2.0, "baskets": 100.0, "opens": 1.0},
        events_per_mb=100.0)
    by_branches = branches(0.2, 0.5).apply(base).config
    assert by_branches["file_mb"] == pytest.approx(2.0)
    assert by_branches["baskets"] == pytest.approx(20.0)
    assert by_branches["calls"] == pytest.approx(1.0)  # half the branches: half the calls' cost
    assert branches(0.2).apply(base).config["calls"] == pytest.approx(0.4)  # with the bytes
    assert branches(0.2, 0.5).name != branches(0.2).name
    with pytest.raises(ValueError):
        branches(0.2, 0.0)


def test_a_key_prepass_loop_leaves_its_cold_row_out_of_the_fit() -> None:
    """uproot's memory-size step reads every basket's key cold, one request each, which the
    rate model has no term for (it would charge them to the cost per read call): the cold
    loop row is left out for such a reader, kept for an entry step; the warm row stays."""
    from test_basket_cost import _calibration, _m

    from hep_advisor.models.calibration import _key_prepass, fit_inputs

    assert _key_prepass("uproot.iterate:step_size=100 MB")
    assert _key_prepass("uproot.iterate")  # uproot's default step is a memory size
    assert not _key_prepass("uproot.iterate:step_size=5000")
    assert not _key_prepass("uproot.arrays") and not _key_prepass(None)
    assert not _key_prepass("no such reader")
    cal, ds, site = _calibration(1e-4)
    assert cal.event_loop is not None
    cal = dataclasses.replace(cal, event_loop=dataclasses.replace(
        cal.event_loop, cold=_m(800.0, "cold", "events/s")))
    plain = fit_inputs(cal, ds, site).labels
    assert "event loop, cold" in plain and "event loop, warm" in plain
    for reader, cold in (("uproot.iterate:step_size=100 MB", False),
                         ("uproot.iterate:step_size=1000", True)):
        assert cal.event_loop is not None
        loop = dataclasses.replace(cal.event_loop, reader=reader)
        labels = fit_inputs(dataclasses.replace(cal, event_loop=loop), ds, site).labels
        assert ("event loop, cold" in labels) is cold and "event loop, warm" in labels
