"""N001 (TTree -> RNTuple): it applies only where the converted sample read at least 1.05x as
fast (the cold gain where the reads were cold: a cold RNTuple read with uproot can be slower
than its TTree twin, and then it is silent), says when the sample was read warm, predicts the
dataset's speed-up through the model and prints ROOT's importer; and the TTree-only rules are
silent for an RNTuple dataset.  Driven from a stored calibration (tests/data), never a live
one."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from hep_advisor.findings.advice import Advice
from hep_advisor.findings.recommendation import Recommendation
from hep_advisor.probes.readtests.results import Conditions, ConversionPoint, Measurement
from hep_advisor.rules import Context, recommend
from hep_advisor.rules.rntuple import (
    MIN_GAIN,
    TTREE_ONLY,
    rntuple_rule,
    silence_ttree_rules,
    to_rntuple,
)
from hep_advisor.rules.verdict import verdict


@pytest.fixture(scope="module")
def stored() -> Advice:
    from tui_helpers import fixture_advice

    return fixture_advice(label="small")


def point(gain: float, warm: float | None = None, cache: str = "cold",
          pages: int = 40, baskets: int = 400, same_storage: bool = False) -> ConversionPoint:
    cond = Conditions(cache=cache, workers=1)  # type: ignore[arg-type]
    gains = (gain * 0.98, gain, gain * 1.02, gain)

    def m(unit: str, xs: tuple[float, ...]) -> Measurement:
        return Measurement(unit, xs, sorted(xs)[len(xs) // 2], 0.02, cond)

    return ConversionPoint(
        engine="uproot", converter="ROOT 6.40.00 TTree::CopyTree + RNTupleImporter",
        compression_setting=101, entries=50_000, branches=3, cache=cache,  # type: ignore[arg-type]
        gain=gain, warm_gain=warm if warm is not None else gain, ttree_bytes=4_000_000,
        rntuple_bytes=3_600_000, ttree_requests=baskets, rntuple_requests=pages,
        convert_s=0.5, measurement=m("x", gains), ttree=m("s", (0.2,) * 4),
        rntuple=m("s", (0.2 / gain,) * 4), note="test sample", same_storage=same_storage)


def ctx_with(a: Advice, conv: ConversionPoint | None, fmt: str = "ttree") -> Context:
    assert a.fitted is not None and a.baseline is not None and a.model is not None
    assert a.calibration is not None
    ds = a.dataset
    if fmt != "ttree":
        ds = replace(ds, trees=tuple(replace(t, format=fmt) for t in ds.trees))
    return Context(site=a.site, dataset=ds, calibration=replace(a.calibration, conversion=conv),
                   model=a.fitted, baseline=a.baseline, summary=a.model,
                   verdict=verdict(a.baseline), label=a.label, inputs=a.inputs)


def test_fires_on_a_measured_cold_gain(stored: Advice) -> None:
    rec = rntuple_rule(ctx_with(stored, point(2.0)))
    assert isinstance(rec, Recommendation) and rec.code == "N001" and rec.kind == "rntuple"
    assert rec.speedup_low <= rec.predicted_speedup <= rec.speedup_high
    assert 1.0 < rec.predicted_speedup <= 2.2
    ev = {e.name: e for e in rec.evidence}
    assert ev["read gain on the sample (cold)"].value == 2.0
    assert ev["read gain on the sample (cold)"].source == "measured"
    assert "warm" not in rec.summary.replace("(warm)", "")
    action, up = rec.actions
    assert up.command and "uproot.recreate" in up.command and "uproot.ZLIB(1)" in up.command
    assert action.command and "RNTupleImporter.Create" in action.command
    assert "SetCompression(101)" in action.command
    assert action.requires and "ROOT 6.40" in action.requires


def test_silent_when_the_cold_rntuple_read_is_slower(stored: Advice) -> None:
    # warm it reads faster, but uproot's one request per page makes it slower cold
    assert rntuple_rule(ctx_with(stored, point(0.7, warm=2.0))) is None
    assert rntuple_rule(ctx_with(stored, point(MIN_GAIN - 0.02))) is None


def test_says_when_the_sample_was_read_warm(stored: Advice) -> None:
    rec = rntuple_rule(ctx_with(stored, point(2.0, cache="warm")))
    assert rec is not None
    assert "read warm" in rec.summary
    assert any(e.name == "read gain on the sample (warm)" for e in rec.evidence)


def test_silent_without_a_measurement_or_for_rntuple(stored: Advice) -> None:
    assert rntuple_rule(ctx_with(stored, None)) is None
    assert rntuple_rule(ctx_with(stored, point(2.0), fmt="rntuple")) is None


def test_the_scenario_scales_the_cpu_terms_and_one_request_per_page(stored: Advice) -> None:
    b = stored.baseline
    assert b is not None
    conv = point(2.0, warm=2.5, pages=40)
    new = to_rntuple(conv, readahead_bytes=128 * 1024).apply(b)
    size = 3_600_000 / 4_000_000
    assert new.params.process_mb_per_s == pytest.approx(b.params.process_mb_per_s * 2.5 * size)
    assert new.params.decompress_mb_per_s == pytest.approx(
        b.params.decompress_mb_per_s * 2.5 * size)
    assert new.config["request_bytes"] == pytest.approx(max(3_600_000 / 40, 128 * 1024))
    assert new.mb_per_work == pytest.approx(b.mb_per_work * size)


def test_ttree_only_rules_are_silent_for_rntuple(stored: Advice) -> None:
    recs: list[Any] = [replace(r, code=c) for r, c in
                       zip([stored.recommendations[0]] * 3, ["T001", "R001", "M001"],
                           strict=True)] if stored.recommendations else []
    if not recs:
        pytest.skip("the stored advice has no recommendation to copy")
    kept = silence_ttree_rules(ctx_with(stored, None, fmt="rntuple"), recs)
    assert [r.code for r in kept] == ["M001"]
    assert set(TTREE_ONLY) == {"T001", "R001"}
    assert silence_ttree_rules(ctx_with(stored, None), recs) == recs


def test_recommend_ranks_n001_with_the_others(stored: Advice) -> None:
    recs = recommend(ctx_with(stored, point(3.0)))
    codes = [r.code for r in recs]
    assert "N001" in codes
    speedups = [r.predicted_speedup for r in recs]
    assert speedups == sorted(speedups, reverse=True)


def test_cold_on_the_datasets_device_scales_the_whole_read(stored: Advice) -> None:
    b = stored.baseline
    assert b is not None
    new = to_rntuple(point(2.0, warm=3.0, same_storage=True)).apply(b)
    size = 3_600_000 / 4_000_000
    assert new.params.storage_mb_per_s == pytest.approx(b.params.storage_mb_per_s * 2.0 * size)
    assert new.params.process_mb_per_s == pytest.approx(b.params.process_mb_per_s * 2.0 * size)
    assert new.params.access_ms == pytest.approx(b.params.access_ms / 2.0)
    assert new.config["request_bytes"] == b.config["request_bytes"]
    assert new.params.open_s == b.params.open_s
