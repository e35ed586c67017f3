"""Measure, never judge: the site, its storage, and ROOT datasets.

``probes`` imports neither ``models`` nor ``advisor``, and nothing here imports Rich or Textual.
"""

from .dataset import DEFAULT_SAMPLE, probe_dataset, sample_indices
from .files import discover
from .results import (
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
    RNTupleLayout,
    Sampling,
    SiteProfile,
    SizeStats,
    StorageInfo,
    TimingStats,
    TreeProfile,
)
from .site import probe_site, storage_paths
from .storage import probe_storage

__all__ = [
    "DEFAULT_SAMPLE",
    "BasketStats",
    "BlockDevice",
    "BranchProfile",
    "ClusterStats",
    "Compression",
    "CompressionShare",
    "CpuInfo",
    "DatasetProfile",
    "MemoryInfo",
    "ProbeError",
    "RNTupleLayout",
    "Sampling",
    "SiteProfile",
    "SizeStats",
    "StorageInfo",
    "TimingStats",
    "TreeProfile",
    "discover",
    "probe_dataset",
    "probe_site",
    "probe_storage",
    "sample_indices",
    "storage_paths",
]
