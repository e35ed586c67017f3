"""What a calibration gives the rate model's fit (:mod:`.calibration` gathers it, the fit and
the self-check (:mod:`.selfcheck`) read it)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hep_advisor.probes.readtests.results import Measurement

from .throughput import Prior


@dataclass(frozen=True)
class FitInputs:
    """The points, their weights, the priors and the baseline that a calibration yields."""

    X: np.ndarray
    y: np.ndarray
    weight: np.ndarray
    labels: tuple[str, ...]
    priors: dict[str, Prior]
    baseline: dict[str, float]
    cores: int
    threads_per_core: int
    #: each point's configuration (``physics.FEATURES``), as the gatherer wrote it
    rows: tuple[dict[str, float], ...] = ()
    #: each point's measured spread ((p75 - p25) / median; ``None``: fewer than 3 samples)
    spreads: tuple[float | None, ...] = ()
    #: each point's (and each prior's) run-to-run spread: one sigma of its log (see
    #: ``pointnoise.run_sd``)
    run_sd: tuple[float, ...] = ()
    prior_run_sd: dict[str, float] = field(default_factory=dict)
    #: each point's measurement (its samples; ``None`` where the point has none)
    measurements: tuple[Measurement | None, ...] = ()
    #: each point's uncertainty (relative, one sigma) set by what it measures, beyond its
    #: samples (the unpacking row's ``UNPACK_SD``); ``None`` for the others
    floors: tuple[float | None, ...] = ()
