"""hep-advisor: measure a site and its ROOT data, model the analysis' throughput, and advise.

The public names of the lower layers are reachable from here too (``advisor.probe_dataset``,
``advisor.DatasetProfile``, ...).  This module imports neither Rich nor Textual: the terminal
and TUI skins import them when they are used.
"""

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

from ._version import __version__
from .document import SCHEMA_VERSION, Document, document_json, make_document

__all__ = [
    "DEFAULT_SAMPLE",
    "SCHEMA_VERSION",
    "BasketStats",
    "BlockDevice",
    "BranchProfile",
    "ClusterStats",
    "Compression",
    "CompressionShare",
    "CpuInfo",
    "DatasetProfile",
    "Document",
    "MemoryInfo",
    "ProbeError",
    "Sampling",
    "SiteProfile",
    "SizeStats",
    "StorageInfo",
    "TimingStats",
    "TreeProfile",
    "__version__",
    "discover",
    "document_json",
    "make_document",
    "probe_dataset",
    "probe_site",
    "probe_storage",
    "sample_indices",
]
