"""Fit and predict: the throughput model and what-if scenarios.

May import ``probes``' result types; never ``advisor``, Rich or Textual.
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> the module it comes from, imported on first use: scikit-learn and SciPy (the
#: fitting) load only when a name that needs them is used, so that reading results (a cached
#: advice, the report's types) stays fast.
_LAZY = {
    "fit_inputs": "calibration", "model_from_calibration": "calibration",
    "FEATURES": "physics", "PARAMS": "physics", "Cores": "physics", "Params": "physics",
    "config_matrix": "physics", "rates": "physics",
    "Baseline": "scenarios", "ModelSummary": "scenarios", "Scenario": "scenarios",
    "calibrated_baseline": "calibrated", "predict_scenarios": "scenarios",
    "site_model": "scenarios", "summarize": "scenarios",
    "SiteSpec": "sites", "SpecError": "sites", "StorageSpec": "sites", "WorkloadSpec": "sites",
    "load_site": "sites", "load_workload": "sites",
    "ThroughputModel": "throughput",
    "ClusterModel": "cluster_model", "ClusterModelSummary": "cluster_model",
    "ClusterParameters": "cluster_model", "ClusterPrediction": "cluster_model",
    "NodeRates": "cluster_model",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'models' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


__all__ = [
    "FEATURES",
    "PARAMS",
    "Baseline",
    "ClusterModel",
    "ClusterModelSummary",
    "ClusterParameters",
    "ClusterPrediction",
    "Cores",
    "ModelSummary",
    "NodeRates",
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
