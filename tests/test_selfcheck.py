"""The model through its own data (issue 19): the self-check of every measured configuration,
intervals that carry the run-to-run spread and span what an assumed parameter allows, and
recommendations that their own measurements contradict."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from tui_helpers import DATA

from hep_advisor.findings.advice import Advice
from hep_advisor.findings.jsonio import from_jsonable
from hep_advisor.findings.recommendation import Recommendation, with_rank_notes
from hep_advisor.models.calibration import fit_inputs, model_from_calibration
from hep_advisor.models.physics import rates
from hep_advisor.models.selfcheck import TOLERANCE, self_check, warning_line
from hep_advisor.models.throughput import PLAUSIBLE, ThroughputModel
from hep_advisor.pipeline.derive import advise_from
from hep_advisor.probes.readtests.results import Calibration, Measurement
from hep_advisor.probes.results import DatasetProfile, SiteProfile
from hep_advisor.render.markdown import report_markdown


def _stored(name: str = "tui_small_files.json"
            ) -> tuple[SiteProfile, DatasetProfile, Calibration]:
    doc = json.loads((Path(DATA) / name).read_text())
    return (from_jsonable(SiteProfile, doc["site"], name, "site"),
            from_jsonable(DatasetProfile, doc["dataset"], name, "dataset"),
            from_jsonable(Calibration, doc["calibration"], name, "calibration"))


def _scaled(m: Measurement, factor: float) -> Measurement:
    return replace(m, samples=tuple(x * factor for x in m.samples),
                   median=None if m.median is None else m.median * factor)


def _advise(cal: Calibration) -> Advice:
    site, dataset, _ = _stored()
    return advise_from(site, dataset, cal, label="small", inputs=("demo/small_files",))


def _parallel(cal: Calibration, ratio: float) -> Calibration:
    """The parallel loop's 2-worker point at ``ratio`` times the 1-worker point."""
    one = next(p for p in cal.parallel_loop if p.workers == 1)
    two = next(p for p in cal.parallel_loop if p.workers == 2)
    assert one.aggregate_mb_per_s and two.aggregate_mb_per_s
    rate = one.aggregate_mb_per_s * ratio
    two = replace(two, aggregate_mb_per_s=rate,
                  measurement=_scaled(two.measurement, rate / two.aggregate_mb_per_s))
    return replace(cal, parallel_loop=(one, two))


def test_a_point_the_model_misses_is_flagged_and_named_in_the_report() -> None:
    site, dataset, cal = _stored()
    loop = cal.event_loop
    assert loop is not None and loop.cold is not None
    bad = replace(cal, event_loop=replace(loop, cold=_scaled(loop.cold, 4.0)))
    model, _, _ = model_from_calibration(bad, dataset, site)
    checks = {c.test: c for c in model.self_check_}
    cold = checks["event loop, cold"]
    assert not cold.ok and cold.ratio < 1 / (1 + TOLERANCE)
    assert cold.conditions["workers"] == 1.0 and cold.conditions.get("cached", 0.0) == 0.0
    assert "storage" in cold.term
    advice = _advise(bad)
    assert advice.model is not None and advice.model.self_check == model.self_check_
    text = report_markdown(advice.report(), verbose=True)
    assert "Model check" in text and "event loop, cold" in text
    # the miss touches the storage, decompression and processing terms: where they carry
    # 10% of a recommendation's time, the short report names it
    from hep_advisor.render import modelcheck

    mc = modelcheck.model_check([advice])
    touched = {t.code for m in mc.warnings for t in m.touches}
    assert touched, mc
    short = report_markdown(advice.report())
    warned = [line for line in short.splitlines() if "⚠" in line]
    assert warned and all(any(code in line for line in warned) for code in touched)
    doc = advice.to_json()
    entry = next(c for c in doc["datasets"][0]["model"]["self_check"]
                 if c["test"] == "event loop, cold")
    assert {"test", "conditions", "measured", "predicted", "ratio", "ok"} <= set(entry)
    assert entry["ok"] is False


def test_a_consistent_calibration_is_not_flagged() -> None:
    """The stored calibration's points replaced by what its fitted model predicts (every
    measurement as the model says it should be): refitted, the model passes through all."""
    site, dataset, cal = _stored()
    model, _, inputs = model_from_calibration(cal, dataset, site)
    priors = {n: (model.params_[n], sd) for n, (_, sd) in inputs.priors.items()}
    consistent = replace(inputs, y=model.predict(inputs.X), priors=priors)
    refit = ThroughputModel(cores=inputs.cores, threads_per_core=inputs.threads_per_core,
                            priors=priors).fit(consistent.X, consistent.y,
                                                      sample_weight=consistent.weight)
    checks = self_check(refit, consistent)
    assert len(checks) == len(inputs.y) and all(c.ok for c in checks), \
        [c for c in checks if not c.ok]
    assert warning_line(checks) is None
    # ... while a point measured tightly, that the others constrain, moved by 30% is flagged
    # (and only that one)
    label = "random 65536 B"
    tight = {c.test: c for c in checks}[label]
    assert tight.spread_source == "2 samples" and tight.tolerance < 0.2
    y = consistent.y.copy()
    y[consistent.labels.index(label)] *= 1.3
    moved = replace(consistent, y=y)
    refit.fit(moved.X, moved.y, sample_weight=moved.weight)
    bad = [c.test for c in self_check(refit, moved) if not c.ok]
    assert bad == [label]
    assert label in (warning_line(self_check(refit, moved)) or "")


def test_run_to_run_spread_widens_the_intervals() -> None:
    site, dataset, cal = _stored()
    inputs = fit_inputs(cal, dataset, site)
    assert len(inputs.run_sd) == len(inputs.y)
    assert all(r >= 0.05 for r in inputs.run_sd)

    def fit(**kw: object) -> ThroughputModel:
        m = ThroughputModel(cores=inputs.cores, threads_per_core=inputs.threads_per_core,
                            priors=inputs.priors)
        return m.fit(inputs.X, inputs.y, sample_weight=inputs.weight, **kw)  # type: ignore

    within = fit()
    across = fit(run_sd=np.asarray(inputs.run_sd), prior_run_sd=inputs.prior_run_sd)
    assert within.free_params_ == across.free_params_
    var_w, var_a = np.diag(within.log_covariance_), np.diag(across.log_covariance_)
    assert np.all(var_a >= var_w * (1 - 1e-9)) and np.any(var_a > 1.5 * var_w)
    with pytest.raises(ValueError, match="one value per point"):
        fit(run_sd=np.ones(2))


def test_an_unmeasured_parallel_efficiency_spans_its_plausible_range() -> None:
    _, _, cal = _stored()
    one_worker = replace(cal, parallel_loop=tuple(p for p in cal.parallel_loop
                                                  if p.workers == 1))
    advice = _advise(one_worker)
    assert advice.model is not None and advice.fitted is not None
    p = advice.model.parameters["parallel_efficiency"]
    lo, hi = PLAUSIBLE["parallel_efficiency"]
    assert p.source == "assumed" and p.value == pytest.approx((lo + hi) / 2)
    assert p.uncertainty is not None and p.uncertainty > 0
    assert "parallel_efficiency" in advice.fitted.assumed_
    # the 2-worker speed-up's interval covers both ends of the range
    point = advice.predict(workers=2)[0]
    b = advice.baseline
    assert b is not None and point.speedup_low is not None and point.speedup_high is not None
    one = rates(b.params, b.X([1]), b.cores)[0]
    ends = [rates(replace(b.params, parallel_efficiency=e), b.X([2]), b.cores)[0] / one
            for e in (lo, hi)]
    assert point.speedup_low <= min(ends) and point.speedup_high >= max(ends)
    w = advice.recommendation("W001")
    if w is not None:
        assert w.speedup_high / w.speedup_low > 1.2


def test_workers_contradicted_by_the_measured_loop_are_not_a_gain() -> None:
    _, _, cal = _stored()
    advice = _advise(_parallel(cal, 0.5))  # 2 workers measured at half the 1-worker rate
    w = advice.recommendation("W001")
    assert w is not None and w.contradicted is not None
    assert w.severity == "info" and w.title.startswith("Not recommended")
    assert "0.50x" in w.contradicted
    assert advice.report().recommendations[-1].code == "W001"
    text = report_markdown(advice.report(), verbose=True)
    assert "Not recommended: its own measurement says otherwise" in text
    short = report_markdown(advice.report())
    assert "1 not recommended" in short and "its own measurement says otherwise (1)" in short
    # measured scaling that agrees with the model: no contradiction
    agreeing = _advise(_parallel(cal, 1.9))
    w2 = agreeing.recommendation("W001")
    assert w2 is None or w2.contradicted is None


def test_a_run_of_fewer_units_than_workers_does_not_contradict_the_workers() -> None:
    """One unit keeps one of two workers busy: the run's 1.0x says nothing of two workers'
    scaling (wide on the slow disk: 1.01x measured so, 1.54x realised by two processes)."""
    _, _, cal = _stored()
    slow = _parallel(cal, 0.5)
    one_unit = replace(slow, parallel_loop=tuple(replace(p, units=1)
                                                 for p in slow.parallel_loop))
    assert [p.units for p in one_unit.parallel_loop] == [1, 1]
    w = _advise(one_unit).recommendation("W001")
    assert w is not None and w.contradicted is None


def _rec(code: str, s: float, lo: float, hi: float) -> Recommendation:
    return Recommendation(code=code, kind=code, title=code, severity="warning",
                          audience="analyst", predicted_speedup=s, speedup_low=lo,
                          speedup_high=hi, workers=1, scenario=code, summary="")


def test_rankings_that_may_flip_say_so() -> None:
    recs = with_rank_notes((_rec("M001", 2.5, 2.2, 2.9), _rec("C001", 2.0, 1.6, 2.3),
                            _rec("A001", 1.2, 1.1, 1.3)))
    assert recs[0].rank_note is not None and "C001" in recs[0].rank_note
    assert recs[1].rank_note is not None and "M001" in recs[1].rank_note
    assert recs[2].rank_note is None


def _m(samples: tuple[float, ...], part_spread: float | None = None) -> Measurement:
    from hep_advisor.probes.readtests.results import Conditions
    from hep_advisor.probes.readtests.runner import measurement

    m = measurement(list(samples), "MB/s", Conditions(cache="cold"))
    return replace(m, part_spread=part_spread)


def test_each_point_is_held_to_its_own_spread() -> None:
    from hep_advisor.models.pointnoise import D2, IQR_TO_SIGMA, SINGLE_SAMPLE_RUN_SD, point_sd

    five = _m((90.0, 95.0, 100.0, 105.0, 110.0))
    sd, source = point_sd(five)
    assert source == "samples" and sd == pytest.approx(0.10 / IQR_TO_SIGMA)
    sd, source = point_sd(_m((90.0, 110.0)))
    assert source == "2 samples" and sd == pytest.approx(0.2 / D2)
    sd, source = point_sd(_m((100.0,), part_spread=0.4))
    assert source == "parts of a sample" and sd == pytest.approx(0.4 / IQR_TO_SIGMA)
    assert point_sd(_m((100.0,))) == (None, None)

    # through the self-check: a steady single sample is held to 10%, an unsteady one to its
    # parts' spread, one that tells nothing to the assumed spread (labelled so)
    site, dataset, cal = _stored()
    model, _, inputs = model_from_calibration(cal, dataset, site)
    n = len(inputs.y)
    y = model.predict(inputs.X) * 1.25  # every point 25% above the model
    for ms, source, ok in (((_m((1.0,), 0.01),) * n, "parts of a sample", False),
                           ((_m((1.0,), 0.5),) * n, "parts of a sample", True),
                           ((_m((1.0,)),) * n, "assumed", True)):
        checks = self_check(model, replace(inputs, y=y, measurements=ms))
        # points of one configuration measured twice are held to their disagreement instead
        alone = [c for c in checks if c.spread_source != "same configuration measured twice"]
        assert alone and all(c.spread_source == source and c.ok is ok for c in alone), alone
        if source == "assumed":
            assert alone[0].tolerance == pytest.approx(np.expm1(2 * SINGLE_SAMPLE_RUN_SD),
                                                       abs=1e-3)


def test_each_miss_names_its_cause() -> None:
    """A point beyond its spread that another reading of the same configuration contradicts
    (on the other side of the prediction) is a comparison the model cannot make; a point
    beyond its spread alone is the fit."""
    from hep_advisor.models.selfcheck import CAUSES, describe

    site, dataset, cal = _stored()
    model, _, inputs = model_from_calibration(cal, dataset, site)
    a, b = inputs.labels.index("cold sequential"), inputs.labels.index("random 1048576 B")
    assert np.array_equal(inputs.X[a], inputs.X[b])
    y = model.predict(inputs.X)
    y[a] *= 2.0   # the two readings of one configuration 4x apart, either side of the model
    y[b] *= 0.5
    k = inputs.labels.index("random 65536 B")
    y[k] *= 1.6   # a point alone, beyond its spread
    checks = {c.test: c for c in self_check(model, replace(inputs, y=y))}
    for label in ("cold sequential", "random 1048576 B"):
        c = checks[label]
        assert not c.ok and c.cause == CAUSES[2], c
        assert "the model does not tell those reads apart" in describe(c)
    assert "random 1048576 B" in checks["cold sequential"].same_as
    assert checks["random 65536 B"].cause == CAUSES[3] and not checks["random 65536 B"].ok
    assert "term disagrees" in describe(checks["random 65536 B"])
    assert all(c.cause in CAUSES[:2] for c in checks.values() if c.ok)
    line = warning_line(tuple(checks.values())) or ""
    assert "readings of one configuration disagree" in line


def test_a_timed_sample_is_cut_into_parts() -> None:
    from hep_advisor.probes.readtests.raw import MIN_PART_S, PARTS, WARMUP_S, Marks

    def timed(size: object, reads: int, dt: float) -> Marks:
        marks = Marks()
        marks.t0 = 0.0
        marks.points = [(0.0, 0, 0)]
        for i in range(1, reads + 1):
            _, b, r = marks.points[-1]
            marks.points.append((i * dt, b + size(i), r + 1))  # type: ignore[operator]
        return marks

    # 1,600 reads over 3.2 s: 8 stretches of 0.35 s after the warm-up
    parts = timed(lambda i: 1000, 1600, 0.002).parts()
    assert len(parts) == PARTS and max(parts) / min(parts) == pytest.approx(1.0, rel=0.15)
    uneven = timed(lambda i: 4000 if (i * 0.002) % 0.8 < 0.4 else 10, 1600, 0.002).parts()
    assert len(uneven) == PARTS and max(uneven) / min(uneven) > 10
    # a short sample: fewer stretches, none shorter than MIN_PART_S (throttle slices)
    short = timed(lambda i: 1000, 500, 0.002)  # 1 s, the first WARMUP_S left out
    assert len(short.parts()) == int((1.0 - WARMUP_S) / MIN_PART_S) == 3
    assert timed(lambda i: 1000, 300, 0.002).parts() == []  # 0.6 s: two stretches only
    assert timed(lambda i: 1000, 4, 0.5).parts() == []  # 2 s but 4 reads


def test_the_concurrency_sweep_is_taken_relative_to_its_single_reader() -> None:
    site, dataset, cal = _stored()
    inputs = fit_inputs(cal, dataset, site)
    assert "concurrency 1" not in inputs.labels
    assert cal.raw_read is not None and cal.raw_read.cold_mb_per_s
    one = next(c for c in cal.concurrency if c.workers == 1).aggregate_mb_per_s
    for c in cal.concurrency:
        if c.workers > 1:
            y = inputs.y[inputs.labels.index(f"concurrency {c.workers}")]
            assert c.aggregate_mb_per_s and one
            assert y == pytest.approx(c.aggregate_mb_per_s / one * cal.raw_read.cold_mb_per_s)
    # without the sequential read, the sweep stays as measured
    alone = fit_inputs(replace(cal, raw_read=None), dataset, site)
    assert "concurrency 1" in alone.labels


def test_a_partial_measurement_is_held_to_the_trust_the_fit_gives_it() -> None:
    from hep_advisor.models.calibration import UNPACK_SD

    site, dataset, cal = _stored()
    model, _, inputs = model_from_calibration(cal, dataset, site)
    k = inputs.labels.index("decompression ZLIB")
    y = model.predict(inputs.X)
    y[k] *= 1.5
    floors = [None] * len(y)
    for f, want in ((None, False), (UNPACK_SD, True)):
        floors[k] = f
        c = self_check(model, replace(inputs, y=y, floors=tuple(floors)))[k]
        assert c.ok is want, c
    assert c.spread_source is not None and "trusts" in c.spread_source
    assert c.tolerance == pytest.approx(np.expm1(2 * UNPACK_SD), abs=1e-3)
