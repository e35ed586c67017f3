"""Fit and predict: the throughput model and what-if scenarios.

May import ``probes``' result types; never ``advisor``, Rich or Textual.
"""

from .calibration import fit_inputs, model_from_calibration
from .physics import FEATURES, PARAMS, Cores, Params, config_matrix, rates
from .scenarios import (
    Baseline,
    ModelSummary,
    Scenario,
    calibrated_baseline,
    predict_scenarios,
    site_model,
    summarize,
)
from .sites import SiteSpec, SpecError, StorageSpec, WorkloadSpec, load_site, load_workload
from .throughput import ThroughputModel

__all__ = [
    "FEATURES",
    "PARAMS",
    "Baseline",
    "Cores",
    "ModelSummary",
    "Params",
    "Scenario",
    "SiteSpec",
    "SpecError",
    "StorageSpec",
    "ThroughputModel",
    "WorkloadSpec",
    "calibrated_baseline",
    "config_matrix",
    "fit_inputs",
    "load_site",
    "load_workload",
    "model_from_calibration",
    "predict_scenarios",
    "rates",
    "site_model",
    "summarize",
]
