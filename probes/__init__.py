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

#: Loaded on first use (the Dask cluster probe: ``--dask``), so that ``import hep_advisor.probes``
#: stays as fast as it was.
_LAZY = {"probe_cluster": ".cluster_probe", "ClusterProfile": ".cluster_probe"}


def __getattr__(name: str) -> object:
    if name not in _LAZY:
        raise AttributeError(f"module 'probes' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "DEFAULT_SAMPLE",
    "BasketStats",
    "BlockDevice",
    "BranchProfile",
    "ClusterProfile",
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
    "probe_cluster",
    "probe_dataset",
    "probe_site",
    "probe_storage",
    "sample_indices",
    "storage_paths",
]
