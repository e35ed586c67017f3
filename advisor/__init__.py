"""hep-advisor: measure a site and its ROOT data, model the analysis' throughput, and advise.

The public names of the lower layers are reachable from here too (``advisor.probe_dataset``,
``advisor.calibrate``, ``advisor.ThroughputModel``, ...).  This module imports neither Rich
nor Textual: the terminal and TUI skins import them when they are used.
"""

from models import (
    ModelSummary,
    Scenario,
    ThroughputModel,
    calibrated_baseline,
    load_site,
    load_workload,
    model_from_calibration,
    predict_scenarios,
    summarize,
)
from probes import (
    DEFAULT_SAMPLE,
    BasketStats,
    BlockDevice,
    BranchProfile,
    ClusterStats,
    Compression,
    CompressionShare,
    CpuInfo,
    DatasetProfile,
    MemoryInfo,
    ProbeError,
    Sampling,
    SiteProfile,
    SizeStats,
    StorageInfo,
    TimingStats,
    TreeProfile,
    discover,
    probe_dataset,
    probe_site,
    probe_storage,
    sample_indices,
)
from probes.readtests.calibrate import calibrate
from probes.readtests.results import Calibration

from ._version import __version__
from .document import SCHEMA_VERSION, Document, document_json, make_document

__all__ = [
    "DEFAULT_SAMPLE",
    "SCHEMA_VERSION",
    "BasketStats",
    "BlockDevice",
    "BranchProfile",
    "Calibration",
    "ClusterStats",
    "Compression",
    "CompressionShare",
    "CpuInfo",
    "DatasetProfile",
    "Document",
    "MemoryInfo",
    "ModelSummary",
    "ProbeError",
    "Sampling",
    "Scenario",
    "SiteProfile",
    "SizeStats",
    "StorageInfo",
    "ThroughputModel",
    "TimingStats",
    "TreeProfile",
    "__version__",
    "calibrate",
    "calibrated_baseline",
    "discover",
    "document_json",
    "load_site",
    "load_workload",
    "make_document",
    "model_from_calibration",
    "predict_scenarios",
    "probe_dataset",
    "probe_site",
    "probe_storage",
    "sample_indices",
    "summarize",
]
