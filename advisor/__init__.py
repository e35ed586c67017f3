"""hep-advisor: measure a site and its ROOT data, model the analysis' throughput, and advise.

``hep_advisor.advise(paths)`` is the entry point (see ``hep_advisor.pipeline.advise``); it returns
an ``Advice``. ``hep_advisor.demo_dataset()`` is the path of the demo's small files (written on
first use).

The public names of the lower layers are reachable from here too (``hep_advisor.probe_dataset``,
``hep_advisor.calibrate``, ``hep_advisor.ThroughputModel``, ...).  They are imported on first use,
so that ``import hep_advisor`` (and the CLI's ``--help``) stays fast: uproot, scikit-learn and the
rest load when a name that needs them is used.  Nothing here imports Rich or Textual.
"""

from __future__ import annotations

import importlib
from typing import Any

from hep_advisor._version import __version__

#: public name -> the module it comes from
_LAZY = {
    "NoUsableData": "hep_advisor.pipeline.advise",
    "demo_report": "hep_advisor.demo.report",
    "demo_dataset": "hep_advisor.demo.report",
    "calibrate_paths": "hep_advisor.pipeline.advise",
    "advise_from": "hep_advisor.pipeline.derive",
    "advise": "hep_advisor.pipeline.advise",
    "ClusterAdvice": "hep_advisor.findings.cluster",
    "ClusterProfile": "hep_advisor.probes",
    "probe_cluster": "hep_advisor.probes",
    "try_recommendation": "hep_advisor.pipeline.trial",
    "TrialResult": "hep_advisor.findings.trial",
    "make_plan": "hep_advisor.pipeline.apply",
    "apply_plan": "hep_advisor.pipeline.apply",
    "Verdict": "hep_advisor.findings.advice",
    "Report": "hep_advisor.findings.advice",
    "Recommendation": "hep_advisor.findings.advice",
    "Advice": "hep_advisor.findings.advice",
    "DEFAULT_SAMPLE": "hep_advisor.probes",
    "SCHEMA_VERSION": "hep_advisor.document.report",
    "BasketStats": "hep_advisor.probes",
    "BlockDevice": "hep_advisor.probes",
    "BranchProfile": "hep_advisor.probes",
    "Calibration": "hep_advisor.probes.readtests.results",
    "ClusterStats": "hep_advisor.probes",
    "Compression": "hep_advisor.probes",
    "CompressionShare": "hep_advisor.probes",
    "CpuInfo": "hep_advisor.probes",
    "DatasetProfile": "hep_advisor.probes",
    "Document": "hep_advisor.document.report",
    "MemoryInfo": "hep_advisor.probes",
    "ModelSummary": "hep_advisor.models",
    "ProbeError": "hep_advisor.probes",
    "RNTupleLayout": "hep_advisor.probes",
    "Sampling": "hep_advisor.probes",
    "Scenario": "hep_advisor.models",
    "SiteProfile": "hep_advisor.probes",
    "SizeStats": "hep_advisor.probes",
    "StorageInfo": "hep_advisor.probes",
    "ThroughputModel": "hep_advisor.models",
    "TimingStats": "hep_advisor.probes",
    "TreeProfile": "hep_advisor.probes",
    "calibrate": "hep_advisor.probes.readtests.calibrate",
    "calibrated_baseline": "hep_advisor.models",
    "discover": "hep_advisor.probes",
    "document_json": "hep_advisor.document.report",
    "load_site": "hep_advisor.models",
    "load_workload": "hep_advisor.models",
    "make_document": "hep_advisor.document.report",
    "model_from_calibration": "hep_advisor.models",
    "predict_scenarios": "hep_advisor.models",
    "probe_dataset": "hep_advisor.probes",
    "probe_site": "hep_advisor.probes",
    "probe_storage": "hep_advisor.probes",
    "sample_indices": "hep_advisor.probes",
    "storage_paths": "hep_advisor.probes",
    "summarize": "hep_advisor.models",
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
