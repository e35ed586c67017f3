"""Sensitivities of the predicted rate: d log(rate) / d log(parameter), by central differences.

One function for every place that needs them: the prediction intervals of ``ThroughputModel``
(the delta method), the uncertainty of a what-if's speed-up, and the verdict's shares of the
time (elasticities).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .physics import PARAMS, Cores, Params, rates

#: Step of the central difference, in log units of the parameter.
LOG_STEP = 1e-4


def log_rate_gradient(params: Params, cores: Cores, X: np.ndarray, names: Sequence[str],
                      h: float = LOG_STEP) -> np.ndarray:
    """d log(rate) / d log(parameter) of each configuration row of ``X`` (columns: ``names``,
    parameters of ``physics.PARAMS``), by central differences of step ``h`` in log units."""
    base = np.log(np.maximum(params.vector(), 1e-300))
    out = np.zeros((len(X), len(names)))
    for k, name in enumerate(names):
        i = PARAMS.index(name)
        up, down = base.copy(), base.copy()
        up[i] += h
        down[i] -= h
        r_up = rates(Params.from_vector(np.exp(up)), X, cores)
        r_down = rates(Params.from_vector(np.exp(down)), X, cores)
        out[:, k] = (np.log(r_up) - np.log(r_down)) / (2 * h)
    return out
