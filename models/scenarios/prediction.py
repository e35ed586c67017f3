"""Predictions of a baseline and its what-ifs, with intervals and speed-ups.

:func:`predict_scenarios` predicts each scenario at several worker counts, with an interval and
the speed-up over the baseline at the same worker count.

Uncertainty of a what-if.  The fitted model knows its parameters' covariance (of their logs).  A
transform either *scales* a parameter (more bytes per event, another algorithm's decompression
speed relative to the measured one): the parameter keeps its fitted log-uncertainty, now around
the new value; or it *replaces* it with a value that does not come from the fit (an assumed SSD,
a hypothetical site): the fitted uncertainty no longer applies and the parameter is held fixed at
the new value, with the relative uncertainty the assumption states (``Baseline.assumed_sd``) in
place of it.  The scenario's model is a model of the new parameters
(``ThroughputModel.from_params``) with the covariance of the parameters it did not replace
carried over unchanged (a marginal of the fit's Gaussian: no refit, since the measured points
belong to the old configuration), plus the assumptions' variances.  Speed-ups are ratios of two
predictions that share the untouched parameters: their interval comes from the same covariance,
so what both share cancels, and carries no measurement noise (it is a systematic ratio).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from statistics import NormalDist
from typing import TYPE_CHECKING, Literal

import numpy as np

from ..gradients import log_rate_gradient
from ..physics import PARAMS, Cores, config_matrix, rates
from ..selfcheck import SelfCheck
from ..sites import SiteSpec, WorkloadSpec
from .baseline import Baseline, Source, model_sources
from .transforms import Scenario

if TYPE_CHECKING:
    from ..throughput import ThroughputModel

UNITS = {
    "storage_mb_per_s": "MB/s per stream",
    "access_ms": "ms per request",
    "storage_overlap": "0: access + transfer; 1: the larger",
    "devices": "independent devices",
    "decompress_mb_per_s": "compressed MB/s per core",
    "process_mb_per_s": "compressed MB/s per core",
    "open_s": "s per file",
    "cache_mb_per_s": "MB/s per stream",
    "network_mb_per_s": "MB/s (link)",
    "latency_ms": "ms per request",
    "call_s": "s per read call",
    "parallel_efficiency": "of a core, per core beyond the first",
    "basket_s": "s per basket read",
    "io_overlap": "0: reads, then CPU; 1: the larger",
    "oversubscribed": "of the rate, at twice the logical cores' workers",
}


@dataclass(frozen=True)
class ParameterValue:
    """One model parameter: its value, one-sigma uncertainty (``None``: none known), unit, and
    where it comes from: measured (a read test), fitted, assumed, or fixed (given)."""

    value: float
    uncertainty: float | None
    unit: str
    source: Source


@dataclass(frozen=True)
class PredictionPoint:
    """Aggregate compressed MB/s of ``workers`` jobs with its interval (``low``, ``high`` at
    the summary's ``level``), events/s, and the speed-up over the baseline: how much sooner the
    same events are read (with its interval)."""

    workers: int
    aggregate_mb_per_s: float
    low: float
    high: float
    events_per_s: float | None = None
    speedup: float | None = None
    speedup_low: float | None = None
    speedup_high: float | None = None


@dataclass(frozen=True)
class ScenarioResult:
    name: str
    description: str
    assumptions: tuple[str, ...]
    predictions: tuple[PredictionPoint, ...]


@dataclass(frozen=True)
class ModelSummary:
    """The model block of a document: parameters with uncertainties, the baseline's
    predictions, and the what-if scenarios'."""

    source: Literal["calibration", "description"]
    level: float
    cores: int
    threads_per_core: int
    ht_weight: float
    parameters: dict[str, ParameterValue]
    predictions: tuple[PredictionPoint, ...]
    scenarios: tuple[ScenarioResult, ...] = ()
    assumptions: tuple[str, ...] = ()
    site: SiteSpec | None = None
    workload: WorkloadSpec | None = None
    #: the fitted model's prediction for each configuration its calibration measured
    #: (``hep_advisor.models.selfcheck``); empty for a described site
    self_check: tuple[SelfCheck, ...] = ()
    #: what gives ``predictions``: ``"replay"`` (the program's reader replayed through the
    #: calibrated device with the CPU it measured, spread over workers:
    #: ``hep_advisor.models.replay.engine``) or ``"rate model"`` (the fitted model: a described
    #: site, or the fallback where the replay cannot run); ``engine_note`` says how, or why
    #: the fallback
    engine: str = "rate model"
    engine_note: str | None = None
    #: where the replay is the engine, ``self_check`` is its own (the calibration's measured
    #: configurations it can replay) and the fitted rate model's points are kept here (it
    #: still gives the what-ifs of other sites)
    rate_model_check: tuple[SelfCheck, ...] = ()


def scenario_model(model: ThroughputModel, baseline: Baseline, new: Baseline
                   ) -> ThroughputModel:
    """A model of ``new``'s parameters (``ThroughputModel.from_params``), with the covariance
    of the parameters ``new`` did not replace carried over from ``model``, and ``new``'s
    assumed uncertainties added (see the module's notes)."""
    free = list(getattr(model, "free_params_", ()))
    kept = [n for n in free if n not in new.replaced and getattr(new.params, n) > 0]
    idx = [free.index(n) for n in kept]
    cov_model = np.asarray(getattr(model, "log_covariance_", np.zeros((0, 0))), dtype=float)
    extra = {n: s for n, s in new.assumed_sd.items() if s > 0 and getattr(new.params, n) > 0}
    names = kept + [n for n in extra if n not in kept]
    cov = np.zeros((len(names), len(names)))
    if idx:
        cov[: len(kept), : len(kept)] = cov_model[np.ix_(idx, idx)]
    for n, s in extra.items():
        j = names.index(n)
        cov[j, j] += s**2
    from ..throughput import ThroughputModel

    return ThroughputModel.from_params(new.params, new.cores, names, cov, model.noise)


def _speedup_log_sd(model: ThroughputModel, baseline: Baseline, new: Baseline,
                    Xb: np.ndarray, Xn: np.ndarray) -> np.ndarray:
    """Standard deviation of log(new / baseline) from the parameters both share (the model's
    covariance) and the ones ``new`` assumes."""
    free = list(getattr(model, "free_params_", ()))
    cov = np.asarray(getattr(model, "log_covariance_", np.zeros((0, 0))), dtype=float)
    var = np.zeros(len(Xb))
    if free:
        valid = [n for n in free if getattr(baseline.params, n) > 0]
        gb = log_rate_gradient(baseline.params, baseline.cores, Xb, valid)
        kept = [n for n in valid if n not in new.replaced and getattr(new.params, n) > 0]
        gn = log_rate_gradient(new.params, new.cores, Xn, kept)
        a = np.zeros((len(Xb), len(free)))
        for k, n in enumerate(valid):
            a[:, free.index(n)] -= gb[:, k]
        for k, n in enumerate(kept):
            a[:, free.index(n)] += gn[:, k]
        var += np.einsum("ij,jk,ik->i", a, cov, a)
    # assumptions: shared by both (unchanged), only the baseline's, only the scenario's
    fresh_replaced = new.replaced - baseline.replaced
    shared = {n: s for n, s in baseline.assumed_sd.items()
              if s > 0 and new.assumed_sd.get(n) == s and n not in fresh_replaced
              and getattr(baseline.params, n) > 0 and getattr(new.params, n) > 0}
    gone = {n: s for n, s in baseline.assumed_sd.items()
            if s > 0 and n not in shared and getattr(baseline.params, n) > 0}
    fresh = {n: s for n, s in new.assumed_sd.items()
             if s > 0 and n not in shared and getattr(new.params, n) > 0}
    for group, sign_b, sign_n in ((shared, -1.0, 1.0), (gone, -1.0, 0.0), (fresh, 0.0, 1.0)):
        if not group:
            continue
        names = list(group)
        g = np.zeros((len(Xb), len(names)))
        if sign_b:
            g += sign_b * log_rate_gradient(baseline.params, baseline.cores, Xb, names)
        if sign_n:
            g += sign_n * log_rate_gradient(new.params, new.cores, Xn, names)
        var += (g**2) @ np.array([group[n] ** 2 for n in names])
    return np.sqrt(np.maximum(var, 0.0))


def predict_baseline(model: ThroughputModel, baseline: Baseline, workers: Sequence[int],
                     level: float = 0.9) -> tuple[PredictionPoint, ...]:
    """The baseline at each worker count, with intervals."""
    clone = scenario_model(model, baseline, baseline)
    X = baseline.X(workers)
    pred, low, high = clone.predict_interval(X, level)
    return tuple(PredictionPoint(int(w), float(p), float(lo), float(hi),
                                 _events(baseline, p))
                 for w, p, lo, hi in zip(workers, pred, low, high, strict=True))


def predict_scenarios(model: ThroughputModel, baseline: Baseline,
                      scenarios: Sequence[Scenario], workers: Sequence[int] | None = None,
                      level: float = 0.9) -> list[ScenarioResult]:
    """Each scenario at each worker count (a scenario that pins the workers: at its own
    count), with intervals and the speed-up over the baseline at the same worker count (at
    the baseline's own count for a pinned scenario).  The speed-up is how much sooner the same
    events are read (the ratio of events/s, also where the bytes per event changed)."""
    counts = list(workers) if workers else [baseline.workers]
    z = NormalDist().inv_cdf(0.5 + level / 2)
    out = []
    for sc in scenarios:
        new = sc.apply(baseline)
        ws = [sc.workers] if sc.workers is not None else counts
        refs = [baseline.workers] * len(ws) if sc.workers is not None else ws
        clone = scenario_model(model, baseline, new)
        Xn, Xb = new.X(ws), baseline.X(refs)
        pred, low, high = clone.predict_interval(Xn, level)
        # the same events: MB/s over MB per event
        base = rates(baseline.params, Xb, baseline.cores) * new.mb_per_work / \
            baseline.mb_per_work
        spread = np.exp(z * _speedup_log_sd(model, baseline, new, Xb, Xn))
        points = []
        for k, w in enumerate(ws):
            s = float(pred[k] / base[k])
            points.append(PredictionPoint(int(w), float(pred[k]), float(low[k]), float(high[k]),
                                          _events(new, pred[k]), s, s / float(spread[k]),
                                          s * float(spread[k])))
        notes = tuple(n for n in new.notes if n not in baseline.notes)
        out.append(ScenarioResult(sc.name, sc.description, sc.assumptions + notes,
                                  tuple(points)))
    return out


def _events(b: Baseline, mb_per_s: float) -> float | None:
    return None if b.events_per_mb is None else float(mb_per_s * b.events_per_mb)


def parameter_table(model: ThroughputModel, baseline: Baseline) -> dict[str, ParameterValue]:
    std = getattr(model, "params_std_", {}) or {}
    sources = {**model_sources(model), **baseline.sources}
    return {n: ParameterValue(float(getattr(baseline.params, n)), std.get(n), UNITS[n],
                              sources[n]) for n in PARAMS}


def summarize(model: ThroughputModel, baseline: Baseline, workers: Sequence[int],
              scenarios: Sequence[Scenario] = (), level: float = 0.9,
              source: Literal["calibration", "description"] = "calibration") -> ModelSummary:
    """The model block: parameters, the baseline's predictions and the scenarios'."""
    return ModelSummary(
        source=source, level=level, cores=baseline.cores.cores,
        threads_per_core=baseline.cores.threads_per_core, ht_weight=baseline.cores.ht_weight,
        parameters=parameter_table(model, baseline),
        predictions=predict_baseline(model, baseline, workers, level),
        scenarios=tuple(predict_scenarios(model, baseline, scenarios, workers, level)),
        assumptions=baseline.notes, site=baseline.site, workload=baseline.workload,
        self_check=tuple(getattr(model, "self_check_", ())))


def raw_rate(baseline: Baseline, streams: int = 1) -> float:
    """Raw reading (no decompression, processing or opening: ``dd``, ``fio``) of ``streams``
    sequential readers placed at random on the devices, as the model predicts it."""
    row = {**baseline.row(streams), "decompress": 0.0, "process": 0.0, "opens": 0.0}
    return float(rates(baseline.params, config_matrix([row]), baseline.cores)[0])


def device_capacity(baseline: Baseline) -> float:
    """What the devices deliver together, each streaming one reader without interference
    (one ``dd`` per disk): devices x one stream's raw rate."""
    row = {**baseline.row(1), "workers": 1.0, "decompress": 0.0, "process": 0.0, "opens": 0.0}
    if baseline.interleave and baseline.access == "sequential":
        row["request_bytes"] = max(row["request_bytes"], row["file_mb"] * 1e6)
    one = float(rates(replace(baseline.params, devices=1.0), config_matrix([row]), Cores(1))[0])
    return one * baseline.params.devices
