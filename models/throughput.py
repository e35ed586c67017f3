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
at their defaults, with no uncertainty, and are listed in ``unconstrained_``.
"""

from __future__ import annotations

from collections.abc import Mapping
from statistics import NormalDist

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import (
    _check_sample_weight,
    check_is_fitted,
    check_non_negative,
    validate_data,
)

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
)
#: Where the link's parameters start when remote points are fitted (a 1 Gb/s link, 1 ms).
REMOTE_START = {"network_mb_per_s": 110.0, "latency_ms": 1.0}
#: Bounds of each parameter (the fit works on their logarithms).
BOUNDS = {
    "storage_mb_per_s": (0.1, 1e6),
    "access_ms": (1e-4, 1e3),
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
}
#: A parameter known to no better than a factor e**MAX_LOG_STD (one sigma) is unconstrained.
MAX_LOG_STD = 5.0
Prior = tuple[float, float]  # (value, standard deviation), in the parameter's unit


class ThroughputModel(RegressorMixin, BaseEstimator):
    """Aggregate read throughput (compressed MB/s) of an analysis, from the rate equations.

    Parameters
    ----------
    cores, threads_per_core, ht_weight:
        The CPU: workers beyond ``cores`` run on hyper-threads worth ``ht_weight`` of a core;
        beyond ``cores * threads_per_core`` they add nothing.
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
            sample_weight: np.ndarray | None = None) -> ThroughputModel:
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
        cpu = self._cpu()

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
        lo = np.log([BOUNDS[PARAMS[i]][0] for i in free])
        hi = np.log([BOUNDS[PARAMS[i]][1] for i in free])
        start = np.clip(np.log(np.maximum(base[free], 1e-12)), lo + 1e-9, hi - 1e-9)
        prior_terms = [(free.index(PARAMS.index(n)), np.log(v), s / v)
                       for n, (v, s) in priors.items() if PARAMS.index(n) in free]

        def full(theta: np.ndarray) -> np.ndarray:
            v = base.copy()
            v[free] = np.exp(theta)
            return v

        def residuals(theta: np.ndarray) -> np.ndarray:
            pred = rates(Params.from_vector(full(theta)), X, cpu)
            r = (np.log(np.maximum(pred, 1e-300)) - np.log(y)) / sigma
            pr = [(theta[j] - mu) / max(s, 1e-9) for j, mu, s in prior_terms]
            return np.concatenate([r, np.asarray(pr, dtype=float)])

        if free:
            from scipy.optimize import least_squares  # imported on first fit: slow to import

            result = least_squares(residuals, start, bounds=(lo, hi), method="trf",
                                   x_scale=1.0, max_nfev=2000)
            theta = result.x
            jac = result.jac
            dof = max(len(result.fun) - len(free), 1)
            chi2 = float(result.fun @ result.fun)
            scale = max(1.0, chi2 / dof)
            cov = _log_covariance(jac) * scale
            self.success_ = bool(result.success)
            self.message_ = str(result.message)
            self.cost_ = float(result.cost)
            self.reduced_chi2_ = chi2 / dof
        else:
            theta = np.zeros(0)
            cov = np.zeros((0, 0))
            self.success_, self.message_, self.cost_, self.reduced_chi2_ = True, "fixed", 0.0, 0.0

        vec = full(theta)
        self.params_ = dict(zip(PARAMS, (float(x) for x in vec), strict=True))
        # a parameter whose column of the Jacobian vanishes at the solution (the points do not
        # depend on it there, e.g. a processing rate far above an I/O-bound rate), or that only
        # enters in a combination with others (one file size cannot tell the open cost from the
        # processing time), is not constrained: it keeps its value, with no uncertainty, and is
        # listed as such
        weak = set()
        if free:
            col = np.linalg.norm(jac, axis=0)
            log_std = np.sqrt(np.maximum(np.diag(cov), 0.0))
            weak = {free[k] for k in range(len(free))
                    if col[k] < 1e-3 * max(col.max(), 1e-12) or log_std[k] > MAX_LOG_STD}
        std: dict[str, float | None] = {name: None for name in PARAMS}
        for k, i in enumerate(free):
            if i not in weak:
                std[PARAMS[i]] = float(vec[i] * np.sqrt(max(cov[k, k], 0.0)))
        self.params_std_ = std
        self.free_params_ = tuple(PARAMS[i] for i in free if i not in weak)
        self.unconstrained_ = tuple(n for n in PARAMS if n not in self.free_params_
                                    and n not in fixed)
        keep = [k for k, i in enumerate(free) if i not in weak]
        self.log_covariance_ = cov[np.ix_(keep, keep)] if free else cov
        self.n_features_in_ = N_FEATURES
        return self

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
        free = [PARAMS.index(n) for n in self.free_params_]
        if free:
            base = np.log(np.maximum(Params(**self.params_).vector(), 1e-300))
            grads = np.empty((len(pred), len(free)))
            h = 1e-4
            for k, i in enumerate(free):
                up, down = base.copy(), base.copy()
                up[i] += h
                down[i] -= h
                r_up = rates(Params.from_vector(np.exp(up)), X, self._cpu())
                r_down = rates(Params.from_vector(np.exp(down)), X, self._cpu())
                grads[:, k] = (np.log(r_up) - np.log(r_down)) / (2 * h)
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
