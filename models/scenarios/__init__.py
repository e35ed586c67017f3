"""What-if scenarios: transforms of a baseline, and predictions with intervals and speed-ups.

The package in four parts:

* ``assumptions``: what a what-if assumes where nothing was measured (device presets, the
  compression algorithms' relative factors and speeds) and the uncertainty of each;
* ``baseline``: the :class:`Baseline` the model predicts from, built from a described site and
  workload or from a fitted calibration;
* ``transforms`` and ``storage``: the :class:`Scenario` transforms (merged files, larger
  baskets, the page cache, another compression, fewer branches; request sizes, read-ahead,
  other devices, layouts or sites);
* ``prediction``: each scenario predicted at several worker counts, with an interval and the
  speed-up over the baseline (see its notes on how the uncertainty carries over).

Every public name is importable from here (``from models import scenarios as sc``).
"""

from __future__ import annotations

from .assumptions import (
    DEVICE_PRESETS,
    FACTOR_SOURCE,
    FACTOR_VS_ZLIB,
    LOOSE_SD,
    PRESET_SD,
    RATIO_SD,
    SPEC_SD,
    SPEED_SOURCE,
    SPEED_VS_ZLIB,
)
from .baseline import (
    Access,
    Baseline,
    Source,
    calibration_baseline,
    fixed_model,
    measured_compression,
    model_sources,
    site_baseline,
    site_model,
    site_sd,
)
from .prediction import (
    UNITS,
    ModelSummary,
    ParameterValue,
    PredictionPoint,
    ScenarioResult,
    device_capacity,
    parameter_table,
    predict_baseline,
    predict_scenarios,
    raw_rate,
    scenario_model,
    summarize,
)
from .storage import device_spec, devices, parse_storage, prestaged, read_ahead, request_size, site
from .transforms import (
    Scenario,
    branches,
    cached,
    combine,
    compression,
    merge,
    rebasket,
    workers,
)

__all__ = [
    "DEVICE_PRESETS",
    "FACTOR_SOURCE",
    "FACTOR_VS_ZLIB",
    "LOOSE_SD",
    "PRESET_SD",
    "RATIO_SD",
    "SPEC_SD",
    "SPEED_SOURCE",
    "SPEED_VS_ZLIB",
    "UNITS",
    "Access",
    "Baseline",
    "ModelSummary",
    "ParameterValue",
    "PredictionPoint",
    "Scenario",
    "ScenarioResult",
    "Source",
    "branches",
    "cached",
    "calibration_baseline",
    "combine",
    "compression",
    "device_capacity",
    "device_spec",
    "devices",
    "fixed_model",
    "measured_compression",
    "merge",
    "model_sources",
    "parameter_table",
    "parse_storage",
    "predict_baseline",
    "predict_scenarios",
    "prestaged",
    "raw_rate",
    "read_ahead",
    "rebasket",
    "request_size",
    "scenario_model",
    "site",
    "site_baseline",
    "site_model",
    "site_sd",
    "summarize",
    "workers",
]
