"""hep-advisor: measure a site and its ROOT data, model the analysis' throughput, and advise.

``advisor.advise(paths)`` is the entry point (see ``advisor.core``); it returns an ``Advice``.
``advisor.demo_dataset()`` is the path of the demo's small files (written on first use).

The public names of the lower layers are reachable from here too (``advisor.probe_dataset``,
``advisor.calibrate``, ``advisor.ThroughputModel``, ...).  They are imported on first use, so
that ``import advisor`` (and the CLI's ``--help``) stays fast: uproot, scikit-learn and the
rest load when a name that needs them is used.  Nothing here imports Rich or Textual.
"""

from __future__ import annotations

import importlib
from typing import Any

from ._version import __version__

#: public name -> the module it comes from
_LAZY = {
    "NoUsableData": "advisor.core",
    "demo_report": "advisor.demo.report",
    "demo_dataset": "advisor.demo.report",
    "calibrate_paths": "advisor.core",
    "advise_from": "advisor.core",
    "advise": "advisor.core",
    "ClusterAdvice": "advisor.cluster",
    "ClusterProfile": "probes",
    "probe_cluster": "probes",
    "try_recommendation": "advisor.trial",
    "TrialResult": "advisor.trial",
    "make_plan": "advisor.apply",
    "apply_plan": "advisor.apply",
    "Verdict": "advisor.advice",
    "Report": "advisor.advice",
    "Recommendation": "advisor.advice",
    "Advice": "advisor.advice",
    "DEFAULT_SAMPLE": "probes",
    "SCHEMA_VERSION": "advisor.document",
    "BasketStats": "probes",
    "BlockDevice": "probes",
    "BranchProfile": "probes",
    "Calibration": "probes.readtests.results",
    "ClusterStats": "probes",
    "Compression": "probes",
    "CompressionShare": "probes",
    "CpuInfo": "probes",
    "DatasetProfile": "probes",
    "Document": "advisor.document",
    "MemoryInfo": "probes",
    "ModelSummary": "models",
    "ProbeError": "probes",
    "RNTupleLayout": "probes",
    "Sampling": "probes",
    "Scenario": "models",
    "SiteProfile": "probes",
    "SizeStats": "probes",
    "StorageInfo": "probes",
    "ThroughputModel": "models",
    "TimingStats": "probes",
    "TreeProfile": "probes",
    "calibrate": "probes.readtests.calibrate",
    "calibrated_baseline": "models",
    "discover": "probes",
    "document_json": "advisor.document",
    "load_site": "models",
    "load_workload": "models",
    "make_document": "advisor.document",
    "model_from_calibration": "models",
    "predict_scenarios": "models",
    "probe_dataset": "probes",
    "probe_site": "probes",
    "probe_storage": "probes",
    "sample_indices": "probes",
    "storage_paths": "probes",
    "summarize": "models",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'advisor' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


__all__ = [
    "DEFAULT_SAMPLE",
    "SCHEMA_VERSION",
    "Advice",
    "BasketStats",
    "BlockDevice",
    "BranchProfile",
    "Calibration",
    "ClusterAdvice",
    "ClusterProfile",
    "ClusterStats",
    "Compression",
    "CompressionShare",
    "CpuInfo",
    "DatasetProfile",
    "Document",
    "MemoryInfo",
    "ModelSummary",
    "NoUsableData",
    "ProbeError",
    "RNTupleLayout",
    "Recommendation",
    "Report",
    "Sampling",
    "Scenario",
    "SiteProfile",
    "SizeStats",
    "StorageInfo",
    "ThroughputModel",
    "TimingStats",
    "TreeProfile",
    "TrialResult",
    "Verdict",
    "__version__",
    "advise",
    "advise_from",
    "apply_plan",
    "calibrate",
    "calibrate_paths",
    "calibrated_baseline",
    "demo_dataset",
    "demo_report",
    "discover",
    "document_json",
    "load_site",
    "load_workload",
    "make_document",
    "make_plan",
    "model_from_calibration",
    "predict_scenarios",
    "probe_cluster",
    "probe_dataset",
    "probe_site",
    "probe_storage",
    "sample_indices",
    "storage_paths",
    "summarize",
    "try_recommendation",
]
