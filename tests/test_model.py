"""The throughput model: sklearn conformance, parameter recovery from synthetic data generated
with known parameters, interval coverage, priors and fixed values, errors, and the rate
equations themselves against hand-computed values."""

from __future__ import annotations

import pickle
from collections.abc import Callable

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import parametrize_with_checks

from hep_advisor.models import (
    FEATURES,
    PARAMS,
    Cores,
    Params,
    ThroughputModel,
    config_matrix,
    rates,
)
from hep_advisor.models.throughput import DEFAULTS

KiB = 1024
MiB = 1 << 20
BIG = 1e6  # MB per "file" of the raw reads: no per-file cost
NOISE = 0.025  # relative (log-normal) noise of a synthetic measurement
CORES = 4

# -- sklearn conformance ---------------------------------------------------------------------

_COLUMNS = "random X with {} columns; the model needs the " \
    f"{len(FEATURES)} FEATURES columns"
#: The generic checks that cannot apply to a physical model: each feeds X with a column count
#: other than the configuration columns (``FEATURES``), so fit rejects it before the
#: behaviour under test.
#: What they would check is checked below on valid configurations (``test_conventions_*``).
NOT_APPLICABLE = {
    "check_fit_score_takes_y": _COLUMNS.format(3),
    "check_estimators_overwrite_params": _COLUMNS.format(2),
    "check_dont_overwrite_parameters": _COLUMNS.format(3),
    "check_estimators_fit_returns_self": _COLUMNS.format(2),
    "check_readonly_memmap_input": _COLUMNS.format(2),
    "check_n_features_in_after_fitting": _COLUMNS.format(4),
    "check_estimators_dtypes": _COLUMNS.format(5),
    "check_sample_weights_not_an_array": _COLUMNS.format(2),
    "check_sample_weights_list": _COLUMNS.format(3),
    "check_all_zero_sample_weights_error": _COLUMNS.format(20) + " (checked before weights)",
    "check_sample_weights_shape": _COLUMNS.format(2),
    "check_sample_weights_not_overwritten": _COLUMNS.format(2),
    "check_sample_weight_equivalence_on_dense_data": _COLUMNS.format(30),
    "check_dtype_object": _COLUMNS.format(10),
    "check_pipeline_consistency": _COLUMNS.format(3),
    "check_estimators_nan_inf": _COLUMNS.format(3),
    "check_estimators_pickle": _COLUMNS.format(3),
    "check_f_contiguous_array_estimator": _COLUMNS.format(3),
    "check_regressors_train": _COLUMNS.format(10),
    "check_regressor_data_not_an_array": _COLUMNS.format(10),
    "check_regressors_no_decision_function": _COLUMNS.format(4),
    "check_supervised_y_2d": _COLUMNS.format(3),
    "check_regressors_int": _COLUMNS.format(10),
    "check_methods_sample_order_invariance": _COLUMNS.format(3),
    "check_methods_subset_invariance": _COLUMNS.format(3),
    "check_fit2d_1sample": _COLUMNS.format(10) + " (checked before the sample count)",
    "check_fit2d_1feature": f"one column: refused, naming the {len(FEATURES)} columns, not in "
                            "sklearn's words",
    "check_dict_unchanged": _COLUMNS.format(3),
    "check_fit_idempotent": _COLUMNS.format(2),
    "check_fit_check_is_fitted": _COLUMNS.format(2),
    "check_n_features_in": _COLUMNS.format(2),
    "check_fit2d_predict1d": _COLUMNS.format(3),
}


def _not_applicable(estimator: ThroughputModel) -> dict[str, str]:
    return NOT_APPLICABLE


# with the project's strict xfail, a listed check that starts passing fails: the list stays exact
@parametrize_with_checks([ThroughputModel(cores=CORES)], expected_failed_checks=_not_applicable)
def test_sklearn_conventions(estimator: ThroughputModel, check: Callable) -> None:
    check(estimator)


# -- synthetic calibrations ------------------------------------------------------------------


def calibration_design(loop_cached: bool = False, file_sizes: tuple[float, ...] = (1.0, 30.0),
                       opens: bool = True) -> np.ndarray:
    """Configurations like a calibration's: the concurrency sweep (raw 1 MiB reads by 1, 2, 4,
    8 workers), the random-request sweep (4 KiB..8 MiB), decompression in memory, a cached raw
    read, and the event loop (decompress, process, open each file) at 1, 2, 4 workers."""
    rows: list[dict[str, float]] = []
    rows += [{"workers": n, "request_bytes": MiB, "file_mb": BIG} for n in (1, 2, 4, 8)]
    rows += [{"request_bytes": r * KiB, "file_mb": BIG} for r in (4, 16, 64, 256, 1024, 4096,
                                                                 8192)]
    rows.append({"io": 0, "decompress": 1, "file_mb": BIG})
    rows.append({"cached": 1, "file_mb": BIG})
    rows += [{"workers": n, "request_bytes": 256 * KiB, "file_mb": f, "cached": float(loop_cached),
              "decompress": 1, "process": 1, "opens": float(opens)}
             for n in (1, 2, 4) for f in file_sizes]
    return config_matrix(rows)


def measure(p: Params, X: np.ndarray, seed: int, noise: float = NOISE,
            cores: int = CORES) -> np.ndarray:
    """The rates ``p`` gives, with log-normal measurement noise."""
    rng = np.random.default_rng(seed)
    return rates(p, X, Cores(cores)) * np.exp(rng.normal(0.0, noise, len(X)))


def hdd(devices: float) -> Params:
    return Params(storage_mb_per_s=120.0, access_ms=8.0, devices=devices,
                  decompress_mb_per_s=300.0, process_mb_per_s=400.0, open_s=0.05,
                  cache_mb_per_s=3000.0)


CPU_BOUND = Params(storage_mb_per_s=500.0, access_ms=0.1, devices=2.0, decompress_mb_per_s=150.0,
                   process_mb_per_s=80.0, open_s=0.02, cache_mb_per_s=8000.0)
CACHED = Params(storage_mb_per_s=120.0, access_ms=8.0, devices=2.0, decompress_mb_per_s=200.0,
                process_mb_per_s=100.0, open_s=0.03, cache_mb_per_s=3000.0)
LOCAL = {"storage_mb_per_s", "access_ms", "devices", "decompress_mb_per_s", "process_mb_per_s",
         "open_s", "cache_mb_per_s"}
#: multi-worker event-loop points also constrain the cores' parallel efficiency (truth 1.0, at
#: its upper bound, so loosely)
FITTABLE = LOCAL | {"parallel_efficiency"}
#: (truth, event loop in the page cache, parameters expected within a few percent)
REGIMES = {
    # I/O-bound: 256 KiB reads give 25 MB/s, behind which the processing rate (400 MB/s) is
    # loosely constrained (30-170%), the open cost to 5-7%
    "hdd-1": (hdd(1.0), False, LOCAL - {"process_mb_per_s", "open_s"}),
    "hdd-2": (hdd(2.0), False, LOCAL - {"process_mb_per_s", "open_s"}),
    # 4 devices: only the 8-worker reads queue on them (physics.shared_devices), so the
    # device count is loosely constrained
    "hdd-4": (hdd(4.0), False, LOCAL - {"process_mb_per_s", "open_s", "devices"}),
    "cpu-bound": (CPU_BOUND, False, LOCAL),
    "cached": (CACHED, True, LOCAL),
}


def fitted(X: np.ndarray, y: np.ndarray, **kwargs: object) -> ThroughputModel:
    """The model fitted to (X, y), with the I/O overlap given (the truths' 0, as for ROOT's
    reader) unless ``fixed`` says otherwise: ``calibration_design`` runs the event loop either
    cold or warm, never both, and then what of its reads hide behind its CPU cannot be told
    from its processing rate (``test_the_io_overlap_is_fitted_from_cold_and_warm_loops``)."""
    kwargs["fixed"] = {"io_overlap": 0.0, **(kwargs.get("fixed") or {})}  # type: ignore[dict-item]
    model = ThroughputModel(cores=CORES, noise=NOISE, **kwargs)  # type: ignore[arg-type]
    model.fit(X, y)
    assert model.success_, model.message_
    return model


def assert_recovered(model: ThroughputModel, truth: Params, sharp: set[str]) -> None:
    true = dict(zip(PARAMS, truth.vector(), strict=True))
    for name in model.free_params_:
        value, std = model.params_[name], model.params_std_[name]
        assert std is not None and std > 0, name
        assert abs(value - true[name]) < 4 * std, (name, value, std, true[name])
        if std < 0.06 * value:
            assert value == pytest.approx(true[name], rel=0.15), name
    for name in sharp:
        std = model.params_std_[name]
        # 8%: the cores' parallel efficiency, free too, correlates with the device count and
        # the open cost through the multi-worker points
        assert std is not None and 0.001 < std / model.params_[name] < 0.08, (name, std)


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("regime", list(REGIMES))
def test_parameter_recovery(regime: str, seed: int) -> None:
    truth, loop_cached, sharp = REGIMES[regime]
    X = calibration_design(loop_cached=loop_cached)
    model = fitted(X, measure(truth, X, seed))
    assert sharp <= set(model.free_params_) <= FITTABLE | {"oversubscribed"}
    # no point runs more workers than cores: the loss beyond them is assumed over its range
    assert "oversubscribed" in model.assumed_
    # local data: nothing says anything about a network link
    assert set(model.unconstrained_) == set(PARAMS) - set(model.free_params_) - {"io_overlap"}
    assert {"network_mb_per_s", "latency_ms"} <= set(model.unconstrained_)
    assert model.params_std_["network_mb_per_s"] is None
    assert model.params_["network_mb_per_s"] == 1e6  # left where it was
    assert_recovered(model, truth, sharp)
    assert 0.1 < model.reduced_chi2_ < 3.0
    n = len(model.free_params_)
    assert model.log_covariance_.shape == (n, n)


def test_raw_reads_alone_leave_the_analysis_unconstrained() -> None:
    truth = hdd(2.0)
    X = calibration_design()[:11]  # the concurrency and request sweeps only
    model = fitted(X, measure(truth, X, seed=4))
    # (and the parallel efficiency, assumed over its plausible range: models.throughput)
    assert set(model.free_params_) - set(model.assumed_) == {"storage_mb_per_s", "access_ms",
                                                             "devices"}
    assert set(model.unconstrained_) == set(PARAMS) - set(model.free_params_) - {"io_overlap"}
    assert_recovered(model, truth, {"storage_mb_per_s", "access_ms", "devices"})


def test_one_file_size_cannot_separate_open_cost_from_processing() -> None:
    # with one file size, t_open + file_mb / R_proc is all the event loop sees: the two are
    # degenerate, and reported as unconstrained rather than with a pseudo-inverse's tiny error
    X = calibration_design(file_sizes=(20.0,))
    model = fitted(X, measure(CPU_BOUND, X, seed=5))
    assert {"open_s", "process_mb_per_s"} <= set(model.unconstrained_)
    assert model.params_std_["open_s"] is None
    assert_recovered(model, CPU_BOUND, LOCAL - {"open_s", "process_mb_per_s"})


def test_the_basket_cost_is_told_from_the_per_mb_rates_by_two_basket_densities() -> None:
    """Event loops over files with tiny baskets (a plain merge: 4 kB, 250 per MB) and with
    large ones (its ``hadd -O`` rewrite: 17 kB, 57 per MB), at two file sizes: the fixed cost
    per basket separates from the per-MB rates and from the per-file open cost."""
    truth = with_(CPU_BOUND, basket_s=80e-6)
    rows = [dict(zip(FEATURES, x, strict=True)) for x in calibration_design(file_sizes=())]
    rows += [{"workers": n, "cached": 1, "file_mb": f, "decompress": 1, "process": 1,
              "opens": 1, "baskets": density * f}
             for n in (1, 2, 4) for f in (1.0, 30.0) for density in (250.0, 57.0)]
    X = config_matrix(rows)
    for seed in (11, 12, 13):
        model = fitted(X, measure(truth, X, seed))
        assert "basket_s" in model.free_params_ and "basket_s" not in model.unconstrained_
        std = model.params_std_["basket_s"]
        assert std is not None and std < 0.1 * model.params_["basket_s"]
        assert model.params_["basket_s"] == pytest.approx(80e-6, rel=0.15)
        assert_recovered(model, truth, {"decompress_mb_per_s", "basket_s"})


def test_without_baskets_in_the_points_the_basket_cost_is_unconstrained() -> None:
    X = calibration_design()
    model = fitted(X, measure(CPU_BOUND, X, seed=14))
    assert "basket_s" in model.unconstrained_
    assert model.params_["basket_s"] == DEFAULTS.basket_s and model.params_std_["basket_s"] is None
    # and a prior alone sets it
    model = fitted(X, measure(CPU_BOUND, X, seed=14), priors={"basket_s": (7e-5, 7e-6)})
    assert model.params_["basket_s"] == pytest.approx(7e-5, rel=1e-3)


# -- intervals -------------------------------------------------------------------------------


def test_prediction_intervals_cover_at_their_stated_rate() -> None:
    """100 fits of a small design, each predicting configurations outside it (more workers,
    other file sizes) at 90%; the interval is for one new measurement (it includes a point's
    noise), so new measurements fall in it about 90% of the time, the noiseless truth more."""
    truth = Params(storage_mb_per_s=120.0, access_ms=8.0, devices=2.0, decompress_mb_per_s=150.0,
                   process_mb_per_s=100.0, open_s=0.05, cache_mb_per_s=3000.0)
    cores = 8
    loop = {"request_bytes": 256 * KiB, "decompress": 1, "process": 1, "opens": 1}
    rows: list[dict[str, float]] = []
    rows += [{"workers": n, "request_bytes": MiB, "file_mb": BIG} for n in (1, 2, 4)]
    rows += [{"request_bytes": r, "file_mb": BIG} for r in (4 * KiB, 64 * KiB, 8 * MiB)]
    rows.append({"io": 0, "decompress": 1, "file_mb": BIG})
    rows += [{"workers": n, "file_mb": f, **loop} for n in (1, 2) for f in (3.0, 30.0)]
    X = config_matrix(rows)
    held_out = config_matrix([{"workers": n, "file_mb": f, **loop}
                              for n in (4, 8) for f in (10.0, 100.0)]
                             + [{"workers": 8, "request_bytes": MiB, "file_mb": BIG}])
    true_rate = rates(truth, held_out, Cores(cores))
    rng = np.random.default_rng(20240611)
    new_inside, truth_inside, z_storage = [], [], []
    for _ in range(100):
        y = rates(truth, X, Cores(cores)) * np.exp(rng.normal(0.0, NOISE, len(X)))
        model = ThroughputModel(cores=cores, noise=NOISE).fit(X, y)
        assert model.success_
        pred, low, high = model.predict_interval(held_out, level=0.9)
        assert np.all((low < pred) & (pred < high))
        new = true_rate * np.exp(rng.normal(0.0, NOISE, len(held_out)))
        new_inside.append((low <= new) & (new <= high))
        truth_inside.append((low <= true_rate) & (true_rate <= high))
        std = model.params_std_["storage_mb_per_s"]
        assert std is not None
        z_storage.append((model.params_["storage_mb_per_s"] - truth.storage_mb_per_s) / std)
    # 500 intervals (100 fits x 5 points; binomial sd about 0.013 at 0.9, more since the
    # points of one fit share its errors).  The fit's reduced chi-square only ever widens
    # (never below 1), so the intervals lean wide: with numpy 2.4 and scipy 1.17 this seed
    # gives 0.962 and seeds 1-7 gave 0.954-0.974; too wide would be 0.98 and more
    coverage = float(np.mean(new_inside))
    assert 0.85 <= coverage <= 0.98, coverage
    assert np.all(np.mean(new_inside, axis=0) >= 0.8)  # no configuration far off
    assert float(np.mean(truth_inside)) >= 0.9
    # a parameter's standard error is about right too: |z| < 1.645 about 90% of the time
    assert 0.8 <= float(np.mean(np.abs(z_storage) < 1.645)) <= 0.98


def test_interval_widens_with_the_level_and_brackets_predict() -> None:
    X = calibration_design()
    model = fitted(X, measure(CPU_BOUND, X, seed=6))
    pred, low50, high50 = model.predict_interval(X, level=0.5)
    _, low99, high99 = model.predict_interval(X, level=0.99)
    np.testing.assert_allclose(pred, model.predict(X))
    assert np.all((low99 < low50) & (low50 < pred) & (pred < high50) & (high50 < high99))


# -- priors and fixed values -----------------------------------------------------------------


def test_a_prior_pins_what_the_points_cannot() -> None:
    # one file size (as the calibration's event loop): the open-cost read test's prior lifts the
    # degeneracy, and the processing rate then follows from the points
    X = calibration_design(file_sizes=(20.0,))
    y = measure(CPU_BOUND, X, seed=7)
    model = fitted(X, y, priors={"open_s": (0.021, 0.001)})
    assert "open_s" in model.free_params_
    assert model.params_["open_s"] == pytest.approx(0.021, abs=2 * 0.001)
    std = model.params_std_["open_s"]
    assert std is not None and std <= 0.0011
    assert model.params_["process_mb_per_s"] == pytest.approx(80.0, rel=0.15)
    assert_recovered(model, CPU_BOUND, LOCAL - {"open_s"})


def test_a_prior_alone_sets_a_parameter_the_points_ignore() -> None:
    X = calibration_design()[:11]  # raw reads only: no event loop, no opens
    model = fitted(X, measure(CPU_BOUND, X, seed=8), priors={"open_s": (0.04, 0.004)})
    assert model.params_["open_s"] == pytest.approx(0.04, rel=1e-3)
    # the prior's spread, scaled (like every uncertainty) by the fit's reduced chi-square
    inflation = np.sqrt(max(1.0, model.reduced_chi2_))
    assert model.params_std_["open_s"] == pytest.approx(0.004 * inflation, rel=0.02)


def test_a_fixed_value_is_kept_exactly() -> None:
    X = calibration_design()
    y = measure(CPU_BOUND, X, seed=9)
    model = fitted(X, y, fixed={"devices": 2.0, "access_ms": 0.1})
    assert model.params_["devices"] == 2.0
    assert model.params_["access_ms"] == 0.1
    assert "devices" not in model.free_params_ and "devices" not in model.unconstrained_
    assert model.params_std_["devices"] is None
    assert model.log_covariance_.shape == (len(model.free_params_),) * 2
    assert_recovered(model, CPU_BOUND, LOCAL - {"devices", "access_ms"})
    # a wrong fixed value stays wrong: fixed means not fitted
    assert fitted(X, y, fixed={"devices": 3.0}).params_["devices"] == 3.0


def test_everything_fixed_fits_nothing() -> None:
    X = calibration_design()
    fixed = dict(zip(PARAMS, CPU_BOUND.vector(), strict=True))
    model = fitted(X, rates(CPU_BOUND, X, Cores(CORES)), fixed=fixed)
    assert model.free_params_ == () and model.unconstrained_ == ()
    np.testing.assert_allclose(model.predict(X), rates(CPU_BOUND, X, Cores(CORES)))


# -- conventions on valid data (what the inapplicable generic checks would test) ------------


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray]:
    # the event loops cold and warm, as a calibration runs them: every parameter is told apart
    X = np.vstack([calibration_design(), calibration_design(loop_cached=True)[-6:]])
    return X, measure(CPU_BOUND, X, seed=10)


def test_conventions_fit_returns_self_and_is_idempotent(data: tuple) -> None:
    X, y = data
    model = ThroughputModel(cores=CORES, priors={"open_s": (0.02, 0.002)})
    before = model.get_params()
    assert model.fit(X, y) is model
    assert model.get_params() == before  # fit leaves the parameters alone
    assert model.n_features_in_ == len(FEATURES)
    first = model.predict(X)
    np.testing.assert_allclose(model.fit(X, y).predict(X), first)
    np.testing.assert_allclose(clone(model).fit(X, y).predict(X), first)
    assert not hasattr(clone(model), "params_")
    np.testing.assert_allclose(pickle.loads(pickle.dumps(model)).predict(X), first)


def test_conventions_inputs(data: tuple) -> None:
    X, y = data
    expected = ThroughputModel(cores=CORES).fit(X, y).predict(X)
    model = ThroughputModel(cores=CORES).fit(X.tolist(), y.tolist())
    np.testing.assert_allclose(model.predict(X.tolist()), expected)
    np.testing.assert_allclose(model.predict(X.astype(np.float32)), expected, rtol=1e-6)
    readonly = X.copy()
    readonly.flags.writeable = False
    np.testing.assert_allclose(model.predict(readonly), expected)
    order = np.random.default_rng(0).permutation(len(X))
    np.testing.assert_allclose(model.predict(X[order]), expected[order])
    np.testing.assert_allclose(model.predict(X[:3]), expected[:3])
    with pytest.raises(ValueError, match="Expected 2D array"):
        model.predict(X[0])
    with pytest.raises(ValueError, match=f"{len(FEATURES)} features"):
        model.predict(X[:, :5])
    with pytest.raises(ValueError, match="NaN"):
        ThroughputModel().fit(np.where(X == BIG, np.nan, X), y)
    with pytest.raises(ValueError, match="Negative values"):
        model.predict(-X)


def test_conventions_sample_weight(data: tuple) -> None:
    X, y = data
    plain = ThroughputModel(cores=CORES).fit(X, y)
    ones = ThroughputModel(cores=CORES).fit(X, y, sample_weight=np.ones(len(y)).tolist())
    np.testing.assert_allclose(ones.predict(X), plain.predict(X))
    twice = np.r_[0:len(y), 0:3]
    doubled = ThroughputModel(cores=CORES).fit(X[twice], y[twice])
    weight = np.ones(len(y))
    weight[:3] = 2.0
    weighted = ThroughputModel(cores=CORES).fit(X, y, sample_weight=weight)
    np.testing.assert_allclose(weighted.predict(X), doubled.predict(X), rtol=1e-5)
    np.testing.assert_array_equal(weight[:3], 2.0)  # not overwritten
    with pytest.raises(ValueError, match="zero"):
        ThroughputModel().fit(X, y, sample_weight=np.zeros(len(y)))
    with pytest.raises(ValueError, match=r"[Nn]egative"):
        ThroughputModel().fit(X, y, sample_weight=-np.ones(len(y)))
    with pytest.raises(ValueError):
        ThroughputModel().fit(X, y, sample_weight=np.ones(len(y) + 1))


# -- errors ----------------------------------------------------------------------------------


def test_wrong_column_count_names_the_columns(data: tuple) -> None:
    X, y = data
    with pytest.raises(ValueError, match="workers, request_bytes, file_mb, io") as info:
        ThroughputModel().fit(X[:, :8], y)
    assert "got 8" in str(info.value)


@pytest.mark.parametrize("bad", [0.0, -1.0])
def test_non_positive_rates_are_refused(data: tuple, bad: float) -> None:
    X, y = data
    y = y.copy()
    y[2] = bad
    with pytest.raises(ValueError, match="positive"):
        ThroughputModel().fit(X, y)


@pytest.mark.parametrize("where", ["priors", "fixed"])
def test_unknown_parameter_names_are_refused(data: tuple, where: str) -> None:
    X, y = data
    value = (1.0, 0.1) if where == "priors" else 1.0
    with pytest.raises(ValueError, match="unknown parameters: disk_speed"):
        ThroughputModel(**{where: {"disk_speed": value}}).fit(X, y)  # type: ignore[arg-type]


@pytest.mark.parametrize("prior", [(0.0, 0.01), (0.02, 0.0), (-1.0, 0.1)])
def test_priors_need_a_positive_value_and_spread(data: tuple, prior: tuple) -> None:
    X, y = data
    with pytest.raises(ValueError, match="open_s"):
        ThroughputModel(priors={"open_s": prior}).fit(X, y)


def test_predict_before_fit_raises_not_fitted(data: tuple) -> None:
    X, _ = data
    model = ThroughputModel()
    for call in (model.predict, model.predict_interval):
        with pytest.raises(NotFittedError):
            call(X)
    with pytest.raises(NotFittedError):
        _ = model.physical_params_


# -- the rate equations ----------------------------------------------------------------------

IO_ONLY = Params(storage_mb_per_s=100.0, access_ms=0.0, devices=1.0, decompress_mb_per_s=1e9,
                 process_mb_per_s=1e9, open_s=0.5, cache_mb_per_s=2000.0,
                 network_mb_per_s=100.0, latency_ms=0.0)


def with_(p: Params, **changes: float) -> Params:
    return Params(**{**dict(zip(PARAMS, p.vector(), strict=True)), **changes})


def raw(workers: float, **extra: float) -> dict[str, float]:
    return {"workers": workers, "file_mb": BIG, **extra}


def test_one_device_is_flat_in_workers() -> None:
    X = config_matrix([raw(n) for n in (1, 2, 3, 4, 8)])
    np.testing.assert_allclose(rates(IO_ONLY, X, Cores(8)), 100.0)


def test_shared_devices_at_four_workers_on_four_and_one_devices() -> None:
    # R_io = 100, R_dec = 100: R = 50.  One worker per device: no queue, 4 R.  Four on one
    # device (physics.shared_devices): S = Z = 0.01 s/MB, n = 4: 2n / (Z + nS + sqrt((Z - nS)^2
    # + 4 Z S)) = 8 / (0.05 + sqrt(0.0013)); the exact mean-value analysis gives 98.5, Ganis'
    # form 4 R / (1 + 3 R / R_io) = 80
    p = with_(IO_ONLY, devices=4.0, decompress_mb_per_s=100.0)
    X = config_matrix([raw(1, decompress=1), raw(4, decompress=1), raw(4)])
    np.testing.assert_allclose(rates(p, X, Cores(4)), [50.0, 200.0, 400.0])
    one = with_(p, devices=1.0)
    np.testing.assert_allclose(rates(one, X, Cores(4)),
                               [50.0, 8.0 / (0.05 + np.sqrt(0.0013)), 100.0])


def test_access_time_makes_small_requests_slow() -> None:
    # 64 KiB at 100 MB/s with 5 ms per request: 0.065536 / (0.005 + 0.00065536)
    p = with_(IO_ONLY, access_ms=5.0)
    X = config_matrix([raw(1, request_bytes=65536)])
    np.testing.assert_allclose(rates(p, X, Cores(1)), 0.065536 / 0.00565536)


def test_hyper_threads_count_less_and_beyond_logical_cores_nothing() -> None:
    # 2 cores x 2 threads, an extra thread worth 0.3: 4 CPU-bound workers give 2 + 2 x 0.3
    p = with_(IO_ONLY, decompress_mb_per_s=100.0)
    X = config_matrix([{"workers": n, "io": 0, "decompress": 1, "file_mb": BIG}
                       for n in (1, 2, 3, 4, 6, 16)])
    got = rates(p, X, Cores(cores=2, threads_per_core=2, ht_weight=0.3))
    np.testing.assert_allclose(got, [100.0, 200.0, 230.0, 260.0, 260.0, 260.0])
    np.testing.assert_allclose(rates(p, X[:1], Cores(1)) * 2.6, got[3])


def test_cached_data_is_not_contended() -> None:
    X = config_matrix([raw(n, cached=1) for n in (1, 4)])
    np.testing.assert_allclose(rates(IO_ONLY, X, Cores(4)), [2000.0, 8000.0])


def test_remote_data_is_capped_by_the_link() -> None:
    # each stream at the link's 100 MB/s, on 8 "devices": 8 streams would give
    # 800 / (1 + 7/8) = 427 MB/s, 4 streams 400 / (1 + 3/8) = 291 MB/s; the link caps both
    p = with_(IO_ONLY, devices=8.0, network_mb_per_s=100.0)
    X = config_matrix([raw(8, remote=1), raw(4, remote=1), raw(1, remote=1)])
    far, past_twice, alone = rates(p, X, Cores(8))
    assert 99.99 < far <= 100.0
    assert 99.0 < past_twice <= 100.0  # within 1% of the link past twice its rate
    # one stream at the link's own rate: the smooth minimum of two equal rates, 2^(-1/8) below
    assert alone == pytest.approx(100.0 * 2 ** (-1 / 8))
    # cached remote data does not cross the link
    assert rates(p, config_matrix([raw(8, remote=1, cached=1)]), Cores(8))[0] == 8 * 2000.0
    # per-request latency over the link: 1 MiB in 1 ms + 1 MiB / (1000 MB/s), far below the link
    p3 = with_(IO_ONLY, network_mb_per_s=1e5, latency_ms=1.0)
    stream = 1.048576 / (0.001 + 1.048576 / 1e5)
    assert rates(p3, X[2:], Cores(8))[0] == pytest.approx(stream, rel=1e-6)


def test_the_open_cost_is_amortised_over_the_file() -> None:
    # 10 MB files at 100 MB/s with 0.5 s to open each: 10 / (0.5 + 0.1)
    X = config_matrix([{"file_mb": 10.0, "opens": 1}, {"file_mb": 10.0}])
    np.testing.assert_allclose(rates(IO_ONLY, X, Cores(1)), [10.0 / 0.6, 100.0])


def test_every_basket_read_costs_a_fixed_time() -> None:
    # 10 MB files at 100 MB/s holding 2000 baskets of 100 us each: 10 / (0.2 + 0.1); none
    # without baskets, and the old 11 columns' meaning is kept (no basket cost by default)
    p = with_(IO_ONLY, basket_s=1e-4)
    X = config_matrix([{"file_mb": 10.0, "baskets": 2000}, {"file_mb": 10.0}])
    np.testing.assert_allclose(rates(p, X, Cores(1)), [10.0 / 0.3, 100.0])
    np.testing.assert_allclose(rates(IO_ONLY, X, Cores(1)), [100.0, 100.0])
    assert Params(1, 1, 1, 1, 1, 1, 1).basket_s == 0.0 and "basket_s" in PARAMS
    assert FEATURES[-3:] == ("baskets", "straddles", "device_ios")  # later columns last
    # reading baskets is CPU work: the cores' parallel efficiency applies to it
    q = with_(p, parallel_efficiency=0.5)
    cached = config_matrix([{"workers": 3, "cached": 1, "file_mb": 10.0, "baskets": 2000}])
    one = 10.0 / (0.2 + 10.0 / 2000.0)
    np.testing.assert_allclose(rates(q, cached, Cores(4)), (1 + 0.5 * 2) * one)


def test_io_overlap_hides_the_shorter_of_a_files_reads_and_cpu_work() -> None:
    # 10 MB at 100 MB/s from the device (0.1 s), decompressed at 50 MB/s (0.2 s) with 50 read
    # calls of 2 ms (0.1 s): 0.4 s in all, one after the other (ROOT's GetEntry); with every
    # read behind the CPU, 0.3 s; half of them, 0.35 s.  The open (0.5 s) is never hidden,
    # and without I/O (cached data) there is nothing to hide: the default keeps the old sum.
    p = with_(IO_ONLY, decompress_mb_per_s=50.0, call_s=0.002)
    X = config_matrix([{"file_mb": 10.0, "decompress": 1, "calls": 50},
                       {"file_mb": 10.0, "decompress": 1, "calls": 50, "opens": 1},
                       {"file_mb": 10.0, "decompress": 1, "calls": 50, "io": 0}])
    np.testing.assert_allclose(rates(p, X, Cores(1)), [10 / 0.4, 10 / 0.9, 10 / 0.3])
    np.testing.assert_allclose(rates(with_(p, io_overlap=1.0), X, Cores(1)),
                               [10 / 0.3, 10 / 0.8, 10 / 0.3])
    np.testing.assert_allclose(rates(with_(p, io_overlap=0.5), X, Cores(1)),
                               [10 / 0.35, 10 / 0.85, 10 / 0.3])
    # reads longer than the CPU work: the reads bind
    slow = with_(p, io_overlap=1.0, storage_mb_per_s=20.0)
    np.testing.assert_allclose(rates(slow, X[:1], Cores(1)), [10 / 0.5])
    assert Params(1, 1, 1, 1, 1, 1, 1).io_overlap == 0.0


def test_the_io_overlap_is_fitted_from_cold_and_warm_loops() -> None:
    """A cold loop as fast as the warm one, with the device's rate known from raw reads: the
    reads hide behind the CPU, and the fit finds the overlap near 1; one that pays for every
    read finds it near its lower bound."""
    truth = with_(CPU_BOUND, storage_mb_per_s=60.0, access_ms=5.0, call_s=0.01)
    rows = [raw(1, request_bytes=r) for r in (4 * KiB, 64 * KiB, MiB, 4 * MiB)]
    rows += [{"workers": 1, "io": 0, "decompress": 1, "file_mb": BIG}, raw(1, cached=1)]
    loop = {"decompress": 1, "process": 1, "request_bytes": 2 * MiB}
    rows += [{**loop, "file_mb": f, "calls": f, "cached": c} for c in (0, 1) for f in (5, 20)]
    X = config_matrix(rows)
    for phi, near in ((1.0, 1.0), (0.0, 0.001)):
        # the per-call cost's prior, as the calibration's per-call test gives it
        model = ThroughputModel(cores=CORES, noise=NOISE, priors={"call_s": (0.01, 0.0005)})
        model.fit(X, measure(with_(truth, io_overlap=phi), X, seed=7))
        assert "io_overlap" in model.free_params_ and "io_overlap" not in model.assumed_
        assert model.params_["io_overlap"] == pytest.approx(near, abs=0.15), phi


def test_workers_beyond_the_logical_cores_cost_the_cpu_work() -> None:
    # CPU-bound work on 2 cores: 2 workers run at twice one's rate; at 4 (twice the logical
    # cores) the rate is ``oversubscribed`` of 2's, linearly between, and no less beyond; raw
    # reads (no CPU work) are not touched; the default keeps the old plateau
    p = with_(IO_ONLY, decompress_mb_per_s=50.0, oversubscribed=0.8)
    cpu = config_matrix([{"workers": w, "file_mb": 10.0, "decompress": 1, "io": 0}
                         for w in (1, 2, 3, 4, 6)])
    r = rates(p, cpu, Cores(2))
    np.testing.assert_allclose(r / r[1], [0.5, 1.0, 0.9, 0.8, 0.8])
    r_plain = rates(with_(p, oversubscribed=1.0), cpu, Cores(2))
    np.testing.assert_allclose(r_plain / r_plain[1], [0.5, 1.0, 1.0, 1.0, 1.0])
    reads = config_matrix([{"workers": w, "file_mb": BIG, "cached": 1} for w in (2, 4)])
    np.testing.assert_allclose(rates(p, reads, Cores(2)), rates(with_(p, oversubscribed=1.0),
                                                                reads, Cores(2)))
    # hyper-threads count as logical cores: 4 workers on 2 cores x 2 threads lose nothing
    np.testing.assert_allclose(rates(p, cpu[3:4], Cores(2, 2)),
                               rates(with_(p, oversubscribed=1.0), cpu[3:4], Cores(2, 2)))
    assert Params(1, 1, 1, 1, 1, 1, 1).oversubscribed == 1.0


def test_oversubscription_is_fitted_where_points_run_more_workers_than_cores() -> None:
    truth = with_(CPU_BOUND, oversubscribed=0.8)
    loop = {"decompress": 1, "process": 1, "cached": 1, "file_mb": 50.0}
    X = config_matrix([{**loop, "workers": w} for w in (1, 2, 3, 4, 6, 8)])
    model = fitted(X, measure(truth, X, seed=3))
    assert "oversubscribed" in model.free_params_ and "oversubscribed" not in model.assumed_
    assert model.params_["oversubscribed"] == pytest.approx(0.8, abs=0.06)


def test_remote_link_is_fitted_from_remote_points() -> None:
    """The link's defaults (unlimited, no latency) give no gradient; remote points still fit."""
    from hep_advisor.models.physics import Cores, Params, config_matrix, rates

    true = Params(storage_mb_per_s=500, access_ms=0.1, devices=4, decompress_mb_per_s=300,
                  process_mb_per_s=1e4, open_s=0.01, cache_mb_per_s=6000,
                  network_mb_per_s=110, latency_ms=2.0)
    rows = [dict(workers=k, request_bytes=s, remote=1, file_mb=1e6)
            for k in (1, 2, 4, 8) for s in (4096, 65536, 1 << 20, 8 << 20)]
    X = config_matrix(rows)
    y = rates(true, X, Cores(8)) * np.exp(np.random.default_rng(1).normal(0, 0.02, len(X)))
    m = ThroughputModel(cores=8).fit(X, y)
    assert m.params_["network_mb_per_s"] == pytest.approx(110, rel=0.05)
    assert m.params_["latency_ms"] == pytest.approx(2.0, rel=0.10)
    assert "latency_ms" not in m.unconstrained_


# -- a model of given parameters, and the log-rate gradient ----------------------------------


def test_from_params_is_the_fixed_fit_with_a_given_covariance() -> None:
    """``from_params`` gives what fitting with every parameter fixed gives, plus the
    covariance it is handed: the stds, the free parameters and the intervals follow from it."""
    X = calibration_design()
    cov = np.array([[0.04, 0.01], [0.01, 0.09]])
    model = ThroughputModel.from_params(CPU_BOUND, Cores(CORES, 2), ["open_s", "access_ms"],
                                        cov, noise=0.03)
    fixed = dict(zip(PARAMS, CPU_BOUND.vector(), strict=True))
    refit = ThroughputModel(cores=CORES, threads_per_core=2, noise=0.03,
                            fixed=fixed).fit(config_matrix([{}]), np.ones(1))
    assert model.params_ == refit.params_ and model.fixed == refit.fixed
    np.testing.assert_array_equal(model.predict(X), refit.predict(X))
    assert model.free_params_ == ("open_s", "access_ms") and model.unconstrained_ == ()
    assert model.params_std_["open_s"] == pytest.approx(CPU_BOUND.open_s * 0.2)
    assert model.params_std_["access_ms"] == pytest.approx(CPU_BOUND.access_ms * 0.3)
    assert model.params_std_["devices"] is None
    # the covariance widens the intervals beyond the noise alone
    _, lo, hi = model.predict_interval(X)
    _, lo0, hi0 = refit.predict_interval(X)
    assert np.all(hi / lo >= hi0 / lo0) and np.any(hi / lo > 1.01 * hi0 / lo0)
    # an estimator like any other: cloned and refitted, it keeps its fixed parameters
    np.testing.assert_array_equal(clone(model).fit(X, np.ones(len(X))).predict(X),
                                  model.predict(X))
    with pytest.raises(ValueError, match="2 x 2"):
        ThroughputModel.from_params(CPU_BOUND, Cores(CORES), ["open_s", "access_ms"],
                                    np.eye(3))
    with pytest.raises(ValueError, match="unknown parameters: nope"):
        ThroughputModel.from_params(CPU_BOUND, Cores(CORES), ["nope"], np.eye(1))


def test_log_rate_gradient_gives_each_time_share_for_one_worker() -> None:
    """For one worker the rate is one over a sum of times per MB, so the elasticity of each
    rate is its share of the time (and the elasticities of rate parameters sum to one)."""
    from hep_advisor.models.gradients import log_rate_gradient

    p = Params(storage_mb_per_s=100.0, access_ms=1.0, devices=1.0, decompress_mb_per_s=50.0,
               process_mb_per_s=200.0, open_s=0.0, cache_mb_per_s=5000.0)
    X = config_matrix([{"io": 0.0, "decompress": 1.0, "process": 1.0, "file_mb": 1e6},
                       {"io": 0.0, "decompress": 1.0, "file_mb": 1e6}])
    g = log_rate_gradient(p, Cores(1), X, ["decompress_mb_per_s", "process_mb_per_s", "devices"])
    t_dec, t_proc = 1 / 50.0, 1 / 200.0
    np.testing.assert_allclose(g[0], [t_dec / (t_dec + t_proc), t_proc / (t_dec + t_proc), 0.0],
                               atol=1e-6)
    np.testing.assert_allclose(g[1], [1.0, 0.0, 0.0], atol=1e-6)
