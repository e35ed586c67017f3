"""``ThroughputModel``: the rate equations of ``physics`` as a scikit-learn regressor.

``X`` holds configurations (columns ``physics.FEATURES``: workers, request size, MB per file,
flags for storage/cache/network, decompression, processing and per-file opening, and the read
calls, units of work and baskets per file), ``y`` the
aggregate compressed MB/s measured in them.  ``fit`` finds the physical parameters
(``physics.PARAMS``) by bounded least squares on log rates, so every point counts by its
relative error; ``priors`` add direct measurements of single parameters (the read tests' open
cost, decompression rate, ...) as Gaussian terms, which is how the calibration pins what the
configuration points alone cannot.  Every parameter gets an uncertainty (from the Jacobian,
scaled up by the fit's reduced chi-square when the points scatter more than ``noise`` says), and
every prediction an interval.  Parameters that neither the points nor the priors constrain stay
at their defaults, with no uncertainty, and are listed in ``unconstrained_``; those with a
physically plausible range (``PLAUSIBLE``) are instead assumed at its middle, with an
uncertainty that spans it, and listed in ``assumed_``.

Run-to-run spread.  ``fit``'s ``run_sd`` (and ``prior_run_sd``) give each point's (prior's)
relative spread from one calibration to the next, which may exceed the error its weight says
(the standard error of a median: samples taken within one run share that run's conditions).
The parameters' covariance then gains the sandwich ``A^-1 J^T (Q - 1) J A^-1`` (``A = J^T
J``, ``Q`` the ratio of the run-to-run variance to the fitted one): what the points' and
priors' excess spread moves the solution by, scaled up where the points scatter about the fit
more than their run-to-run spread says; so intervals cover what a repeat run would measure,
not only this run's noise, and are never narrower than without it.

``ThroughputModel.from_params`` makes a model of given parameters without a fit (a described
site, a what-if of a fitted model), with the covariance of their logs that its intervals carry.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import fields
from statistics import NormalDist

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import (
    _check_sample_weight,
    check_is_fitted,
    check_non_negative,
    validate_data,
)

from .gradients import log_rate_gradient
from .physics import FEATURES, N_FEATURES, PARAMS, Cores, Params, rates

#: Where the fit starts, and what unconstrained parameters stay at.
DEFAULTS = Params(
    storage_mb_per_s=150.0,
    access_ms=5.0,
    devices=1.0,
    decompress_mb_per_s=200.0,
    process_mb_per_s=1e6,
    open_s=0.01,
    cache_mb_per_s=5000.0,
    network_mb_per_s=1e6,
    latency_ms=0.0,
    call_s=0.001,
    parallel_efficiency=1.0,
    basket_s=1e-4,  # uproot's order of magnitude (ROOT's is tens of times less)
    io_overlap=0.5,  # the middle of its plausible range: where the fit can move it either way
    oversubscribed=0.85,  # likewise
)
#: Where the link's parameters start when remote points are fitted (a 1 Gb/s link, 1 ms).
REMOTE_START = {"network_mb_per_s": 110.0, "latency_ms": 1.0}
#: Bounds of each parameter (the fit works on their logarithms).
BOUNDS = {
    "storage_mb_per_s": (0.1, 1e6),
    "access_ms": (1e-4, 1e3),
    "storage_overlap": (1e-3, 1.0),
    "devices": (1.0, 1e3),
    "decompress_mb_per_s": (0.1, 1e7),
    "process_mb_per_s": (0.01, 1e7),
    "open_s": (1e-6, 1e3),
    "cache_mb_per_s": (1.0, 1e7),
    "network_mb_per_s": (0.01, 1e7),
    "latency_ms": (1e-4, 1e4),
    "call_s": (1e-6, 1e2),
    "parallel_efficiency": (0.2, 1.0),
    "basket_s": (1e-8, 1.0),
    "io_overlap": (1e-3, 1.0),
    "oversubscribed": (0.3, 1.0),
}
#: A parameter known to no better than a factor e**MAX_LOG_STD (one sigma) is unconstrained.
MAX_LOG_STD = 5.0
#: What is physically plausible for a parameter that nothing measured, where it still shapes
#: predictions: an unconstrained parameter listed here is *assumed* at the middle of its
#: range, with a log-normal uncertainty whose 90% interval reaches both ends of the range (and,
#: being symmetric in the log, beyond the nearer one), so that no prediction leaning on it is
#: narrower than the range allows.  Parallel efficiency: what one
#: core beyond the first adds to CPU work; 0.3 is a loop that serialises most of its work (the
#: GIL, a shared lock), 1.0 perfect scaling.
#: I/O overlap: the share of the shorter of a worker's I/O and CPU time that the longer hides;
#: 0.05 a reader that waits for nearly every read, 1.0 one whose reads all run behind its CPU.
#: Oversubscribed: the CPU work's rate with twice the logical cores' workers, as a share of
#: the logical cores' rate; 1.0 no loss, 0.7 a loss of 30% to context switches and caches
#: evicted by the other workers (the range where the parallel loop's run beyond the logical
#: cores did not run: on this project's 2-core machine 4 workers measured 0.76-0.96 of 2
#: workers' rate in held-out jobs, and 0.91-1.20 in the calibration's own run).
PLAUSIBLE = {"parallel_efficiency": (0.3, 1.0), "io_overlap": (0.05, 1.0),
             "oversubscribed": (0.7, 1.0)}
#: The 90% interval's z (the plausible ranges are 90% intervals).
_Z90 = 1.6448536269514722
Prior = tuple[float, float]  # (value, standard deviation), in the parameter's unit


class ThroughputModel(RegressorMixin, BaseEstimator):
    """Aggregate read throughput (compressed MB/s) of an analysis, from the rate equations.

    Parameters
    ----------
    cores, threads_per_core, ht_weight:
        The CPU: workers beyond ``cores`` run on hyper-threads worth ``ht_weight`` of a core;
        beyond ``cores * threads_per_core`` they add nothing (and cost the CPU work
        ``oversubscribed``).
    priors:
        ``{parameter: (value, std)}``: direct measurements of single parameters.
    noise:
        Relative error of one measured point (the read tests' spread); sets the points' weight
        against the priors and the width of prediction intervals.
    fixed:
        ``{parameter: value}`` held fixed, not fitted (a hypothetical site, a what-if).
    """

    def __init__(
        self,
        cores: int = 1,
        threads_per_core: int = 1,
        ht_weight: float = 0.3,
        priors: Mapping[str, Prior] | None = None,
        noise: float = 0.05,
        fixed: Mapping[str, float] | None = None,
    ) -> None:
        self.cores = cores
        self.threads_per_core = threads_per_core
        self.ht_weight = ht_weight
        self.priors = priors
        self.noise = noise
        self.fixed = fixed

    # -- fitting ---------------------------------------------------------------------------
    def _cpu(self) -> Cores:
        return Cores(int(self.cores), int(self.threads_per_core), float(self.ht_weight))

    def fit(self, X: np.ndarray, y: np.ndarray,
            sample_weight: np.ndarray | None = None, run_sd: np.ndarray | None = None,
            prior_run_sd: Mapping[str, float] | None = None) -> ThroughputModel:
        """Fit the parameters to the measured rates ``y`` of the configurations ``X``
        (see the module's notes); ``sample_weight`` scales each point's weight.  ``run_sd``:
        each point's relative run-to-run spread (one sigma of its log), and ``prior_run_sd``
        each prior's, where larger than their fitted errors: the covariance then covers it
        (see the module's notes)."""
        X, y, sigma, priors, fixed = self._check_fit_inputs(X, y, sample_weight)
        cpu = self._cpu()
        base, free = _starting_point(X, priors, fixed, cpu)
        if free:
            theta, jac, cov = self._least_squares(X, y, sigma, priors, base, free, cpu)
            weak = _unconstrained(jac, cov, free)
            if run_sd is not None or prior_run_sd:
                cov = cov + self._run_to_run(jac, sigma, priors, free, run_sd,
                                             prior_run_sd or {})
        else:
            theta, cov, weak = np.zeros(0), np.zeros((0, 0)), set()
            self.success_, self.message_, self.cost_, self.reduced_chi2_ = True, "fixed", 0.0, 0.0
        self._store(_full(base, free, theta), free, weak, cov, fixed)
        return self

    def _run_to_run(self, jac: np.ndarray, sigma: np.ndarray, priors: Mapping[str, Prior],
                    free: list[int], run_sd: np.ndarray | None,
                    prior_run_sd: Mapping[str, float]) -> np.ndarray:
        """What the run-to-run spread adds to the covariance of the log parameters beyond
        the fitted errors: the sandwich ``A^-1 J^T (Q - 1) J A^-1`` (see the module's notes),
        scaled by the reduced chi-square in run-to-run units where above 1."""
        n = len(sigma)
        run = np.asarray(sigma if run_sd is None else run_sd, dtype=float)
        if run.shape != (n,):
            raise ValueError(f"run_sd must have one value per point ({n}), got {run.shape}")
        ratio = [np.maximum(run, sigma) / sigma]
        for name, (v, s) in priors.items():
            if PARAMS.index(name) in free:
                rel = s / v
                ratio.append(np.array([max(prior_run_sd.get(name, rel), rel) / rel]))
        q = np.concatenate(ratio) ** 2
        a_inv = _log_covariance(jac)
        cov = a_inv @ (jac.T * (q - 1.0)) @ jac @ a_inv
        chi2 = float(np.sum(self._residuals_ ** 2 / q))
        dof = max(len(q) - len(free), 1)
        return cov * max(1.0, chi2 / dof)

    @classmethod
    def from_params(cls, params: Params, cores: Cores, names: Sequence[str] = (),
                    log_covariance: np.ndarray | None = None,
                    noise: float = 0.05) -> ThroughputModel:
        """A model of given parameters, with no fit: every parameter ``fixed`` at ``params``,
        and ``log_covariance`` the covariance of the logs of the parameters ``names`` (an
        assumed uncertainty, or a fitted one carried over to a what-if), which the prediction
        intervals propagate as a fit's would."""
        names = tuple(names)
        cov = np.zeros((0, 0)) if log_covariance is None else \
            np.asarray(log_covariance, dtype=float)
        if cov.shape != (len(names), len(names)):
            raise ValueError(f"the covariance must be {len(names)} x {len(names)}, "
                             f"got {'x'.join(map(str, cov.shape))}")
        unknown = set(names) - set(PARAMS)
        if unknown:
            raise ValueError(f"unknown parameters: {', '.join(sorted(unknown))}")
        values = {f.name: float(getattr(params, f.name)) for f in fields(params)}
        model = cls(cores=cores.cores, threads_per_core=cores.threads_per_core,
                    ht_weight=cores.ht_weight, noise=noise, fixed=values)
        model.success_, model.message_, model.cost_, model.reduced_chi2_ = True, "fixed", 0.0, 0.0
        model.params_ = dict(values)
        std: dict[str, float | None] = {name: None for name in PARAMS}
        for k, name in enumerate(names):
            std[name] = float(values[name] * math.sqrt(max(cov[k, k], 0.0)))
        model.params_std_ = std
        model.free_params_ = names
        model.assumed_ = ()
        model.unconstrained_ = ()
        model.log_covariance_ = cov
        model.n_features_in_ = N_FEATURES
        return model

    def _check_fit_inputs(self, X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Prior],
                                     dict[str, float]]:
        """The validated points, each point's log-error (``noise`` over the root of its weight),
        the priors and the fixed parameters."""
        X, y = validate_data(self, X, y, y_numeric=True, ensure_min_samples=1)
        check_non_negative(X, f"{type(self).__name__} (X)")
        if X.shape[1] != N_FEATURES:
            raise ValueError(f"X must have the {N_FEATURES} columns {', '.join(FEATURES)}; "
                             f"got {X.shape[1]}")
        y = np.asarray(y, dtype=float)
        if np.any(y <= 0):
            raise ValueError("measured rates must be positive")
        priors = dict(self.priors or {})
        fixed = dict(self.fixed or {})
        unknown = (set(priors) | set(fixed)) - set(PARAMS)
        if unknown:
            raise ValueError(f"unknown parameters: {', '.join(sorted(unknown))}")
        bad = [n for n, (v, s) in priors.items() if not (v > 0 and s > 0)]
        if bad:
            raise ValueError(f"priors need a positive value and std: {', '.join(sorted(bad))}")
        w = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        sigma = self.noise / np.sqrt(np.maximum(w, 1e-12))
        return X, y, sigma, priors, fixed

    def _least_squares(self, X: np.ndarray, y: np.ndarray, sigma: np.ndarray,
                       priors: Mapping[str, Prior], base: np.ndarray, free: list[int],
                       cpu: Cores) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Bounded least squares of the log rates (and the priors' terms) over the logs of the
        ``free`` parameters: the solution, the Jacobian there and the log-covariance, scaled
        up by the reduced chi-square where the points scatter more than ``noise`` says."""
        from scipy.optimize import least_squares  # imported on first fit: slow to import

        lo = np.log([BOUNDS[PARAMS[i]][0] for i in free])
        hi = np.log([BOUNDS[PARAMS[i]][1] for i in free])
        start = np.clip(np.log(np.maximum(base[free], 1e-12)), lo + 1e-9, hi - 1e-9)
        prior_terms = [(free.index(PARAMS.index(n)), np.log(v), s / v)
                       for n, (v, s) in priors.items() if PARAMS.index(n) in free]

        def residuals(theta: np.ndarray) -> np.ndarray:
            pred = rates(Params.from_vector(_full(base, free, theta)), X, cpu)
            r = (np.log(np.maximum(pred, 1e-300)) - np.log(y)) / sigma
            pr = [(theta[j] - mu) / max(s, 1e-9) for j, mu, s in prior_terms]
            return np.concatenate([r, np.asarray(pr, dtype=float)])

        try:
            result = least_squares(residuals, start, bounds=(lo, hi), method="trf",
                                   x_scale=1.0, max_nfev=2000)
        except ValueError as exc:
            if "LAPACK" not in str(exc):
                raise
            # SciPy's LAPACK workspace query fails in a process where ROOT has run an
            # RDataFrame ("Too large work array required ... 32-bit LAPACK": the libraries
            # its interpreter loaded answer for LAPACK): the iterative trust-region solver
            # needs no LAPACK call
            result = least_squares(residuals, start, bounds=(lo, hi), method="trf",
                                   x_scale=1.0, max_nfev=2000, tr_solver="lsmr")
        dof = max(len(result.fun) - len(free), 1)
        chi2 = float(result.fun @ result.fun)
        scale = max(1.0, chi2 / dof)
        self._residuals_ = np.asarray(result.fun, dtype=float)
        self.success_ = bool(result.success)
        self.message_ = str(result.message)
        self.cost_ = float(result.cost)
        self.reduced_chi2_ = chi2 / dof
        return result.x, result.jac, _log_covariance(result.jac) * scale

    def _store(self, vec: np.ndarray, free: list[int], weak: set[int], cov: np.ndarray,
               fixed: Mapping[str, float]) -> None:
        """The fitted attributes: the parameters, the uncertainties of the constrained ones,
        which those are, and their log-covariance."""
        self.params_ = dict(zip(PARAMS, (float(x) for x in vec), strict=True))
        std: dict[str, float | None] = {name: None for name in PARAMS}
        fitted = tuple(PARAMS[i] for i in free if i not in weak)
        keep = [k for k, i in enumerate(free) if i not in weak]
        cov = _capped(cov[np.ix_(keep, keep)] if free else cov, fitted)
        for k, name in enumerate(fitted):
            std[name] = float(self.params_[name] * np.sqrt(max(cov[k, k], 0.0)))
        # an unconstrained parameter with a plausible range: its middle, spanning the range
        assumed = tuple(n for n in PARAMS if n in PLAUSIBLE and n not in fitted
                        and n not in fixed)
        for name in assumed:
            lo, hi = PLAUSIBLE[name]
            mid = (lo + hi) / 2
            self.params_[name] = mid
            log_sd = max(math.log(mid / lo), math.log(hi / mid)) / _Z90
            std[name] = self.params_[name] * log_sd
            cov = np.pad(cov, ((0, 1), (0, 1)))
            cov[-1, -1] = log_sd**2
        self.params_std_ = std
        self.free_params_ = fitted + assumed
        self.assumed_ = assumed
        self.unconstrained_ = tuple(n for n in PARAMS if n not in self.free_params_
                                    and n not in fixed)
        self.log_covariance_ = cov
        self.n_features_in_ = N_FEATURES

    # -- prediction ------------------------------------------------------------------------
    def _check_X(self, X: np.ndarray) -> np.ndarray:
        check_is_fitted(self, "params_")
        X = validate_data(self, X, reset=False)
        check_non_negative(X, f"{type(self).__name__} (X)")
        return np.asarray(X, dtype=float)

    @property
    def physical_params_(self) -> Params:
        check_is_fitted(self, "params_")
        return Params(**self.params_)

    def predict(self, X: np.ndarray) -> np.ndarray:
        X = self._check_X(X)
        return rates(self.physical_params_, X, self._cpu())

    def predict_interval(self, X: np.ndarray, level: float = 0.9
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(prediction, low, high): the parameters' uncertainty propagated to each prediction
        (delta method on log rates) plus one point's measurement noise, at ``level``."""
        X = self._check_X(X)
        pred = rates(self.physical_params_, X, self._cpu())
        var = np.full(len(pred), self.noise**2)
        if self.free_params_:
            grads = log_rate_gradient(self.physical_params_, self._cpu(), X, self.free_params_)
            var = var + np.einsum("ij,jk,ik->i", grads, self.log_covariance_, grads)
        z = NormalDist().inv_cdf(0.5 + level / 2)
        spread = np.exp(z * np.sqrt(var))
        return pred, pred / spread, pred * spread

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.input_tags.positive_only = True  # counts, sizes and flags
        tags.target_tags.positive_only = True
        return tags


def _starting_point(X: np.ndarray, priors: Mapping[str, Prior], fixed: Mapping[str, float],
                    cpu: Cores) -> tuple[np.ndarray, list[int]]:
    """Where the fit starts (the defaults, the priors' values, the fixed values; the link's
    starting values where remote points are fitted), and the indices of the parameters to fit:
    those with a prior, those the points depend on, and the link's where points are remote."""
    base = DEFAULTS.vector()
    for name, (value, _) in priors.items():
        base[PARAMS.index(name)] = value
    for name, value in fixed.items():
        base[PARAMS.index(name)] = value
    remote = bool(np.any((X[:, FEATURES.index("remote")] > 0.5)
                         & (X[:, FEATURES.index("cached")] < 0.5)))
    if remote:  # the link's defaults (unlimited, no latency) are where no gradient is
        for name, start_value in REMOTE_START.items():
            if name not in priors and name not in fixed:
                base[PARAMS.index(name)] = start_value
    free = [i for i, name in enumerate(PARAMS)
            if name not in fixed and (name in priors or _sensitive(base, i, X, cpu)
                                      or (remote and name in REMOTE_START))]
    return base, free


def _capped(cov: np.ndarray, names: Sequence[str]) -> np.ndarray:
    """The covariance with the log-uncertainty of each parameter that has a plausible range
    (``PLAUSIBLE``) no larger than what spans its fit bounds at 90%: a parameter pinned at
    a bound has a Jacobian that says nothing of its spread, and a fitted value cannot stray
    beyond its bounds.  Rows and columns are scaled together, so it stays a covariance."""
    scale = np.ones(len(names))
    for k, name in enumerate(names):
        if name in PLAUSIBLE:
            lo, hi = BOUNDS[name]
            cap = math.log(hi / lo) / (2 * _Z90)
            sd = math.sqrt(max(float(cov[k, k]), 0.0))
            if sd > cap:
                scale[k] = cap / sd
    return cov * np.outer(scale, scale) if len(names) else cov


def _full(base: np.ndarray, free: list[int], theta: np.ndarray) -> np.ndarray:
    """Every parameter's value: ``base`` with the ``free`` ones at exp(``theta``)."""
    v = base.copy()
    v[free] = np.exp(theta)
    return v


def _unconstrained(jac: np.ndarray, cov: np.ndarray, free: list[int]) -> set[int]:
    """The free parameters the fit does not constrain: a parameter whose column of the
    Jacobian vanishes at the solution (the points do not depend on it there, e.g. a processing
    rate far above an I/O-bound rate), or that only enters in a combination with others (one
    file size cannot tell the open cost from the processing time).  They keep their value,
    with no uncertainty, and are listed as such."""
    col = np.linalg.norm(jac, axis=0)
    log_std = np.sqrt(np.maximum(np.diag(cov), 0.0))
    return {free[k] for k in range(len(free))
            if col[k] < 1e-3 * max(col.max(), 1e-12) or log_std[k] > MAX_LOG_STD}


def _log_covariance(jac: np.ndarray) -> np.ndarray:
    """(J^T J)^-1 of the log parameters, from the singular values of J.  A direction the
    points do not constrain (a vanishing singular value) gets a huge variance rather than the
    none that a pseudo-inverse would give it, so that its parameters show as unconstrained."""
    _, s, vt = np.linalg.svd(jac, full_matrices=False)
    floor = max(float(s.max(initial=0.0)) * 1e-12, 1e-100)  # variances stay finite
    return (vt.T / np.maximum(s, floor) ** 2) @ vt


def _sensitive(base: np.ndarray, i: int, X: np.ndarray, cpu: Cores) -> bool:
    """Whether the points in X depend on parameter i at all (else it cannot be fitted)."""
    up = base.copy()
    up[i] *= 1.5
    a = rates(Params.from_vector(base), X, cpu)
    b = rates(Params.from_vector(up), X, cpu)
    return bool(np.any(np.abs(np.log(b) - np.log(a)) > 1e-6))
