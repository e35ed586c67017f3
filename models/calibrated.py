"""A calibration fitted: the rate model and the baseline its scenarios start from."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from hep_advisor.probes.basketmap import BasketMap
from hep_advisor.probes.readtests.results import Calibration
from hep_advisor.probes.results import DatasetProfile, SiteProfile

from .calibration import model_from_calibration, straddle_branches
from .scenarios.baseline import Baseline, calibration_baseline, measured_compression
from .throughput import ThroughputModel


def calibrated_baseline(cal: Calibration, dataset: DatasetProfile, site: SiteProfile,
                        extra_X: np.ndarray | None = None,
                        extra_y: Sequence[float] | None = None,
                        access: Literal["sequential", "scattered"] | None = None,
                        maps: Sequence[BasketMap] = ()
                        ) -> tuple[ThroughputModel, Baseline]:
    """Fit the model to a calibration, and the baseline the scenarios start from.
    ``extra_X``/``extra_y``: further measured configurations and their rates fitted with the
    calibration's (a trial's before and after points); ``access`` overrides the access
    pattern guessed from the branch count; ``maps``: basket maps of some of the dataset's
    files, for the device I/Os of a file read whole, cold (``physics.FEATURES``'
    ``device_ios``; without them, its read-ahead windows)."""
    model, config, _ = model_from_calibration(cal, dataset, site, extra_X=extra_X,
                                              extra_y=extra_y, maps=maps)
    tree = dataset.main_tree
    loop = cal.event_loop
    events_per_mb = None
    if loop is not None and loop.events_per_s and loop.compressed_mb_per_s:
        events_per_mb = loop.events_per_s / loop.compressed_mb_per_s
    elif tree is not None and tree.compressed_bytes:
        events_per_mb = tree.entries / (tree.compressed_bytes / 1e6)
    branches = loop.branches if loop is not None else (tree.branches if tree else 0)
    algorithm = tree.compression.algorithm if tree else None
    measured, factors, recompressed = measured_compression(cal, algorithm)
    baseline = calibration_baseline(
        model, config, events_per_mb=events_per_mb,
        algorithm=tree.compression.algorithm if tree else None,
        compression_factor=tree.compression_factor if tree else None,
        mean_basket_bytes=tree.baskets.mean_compressed_bytes if tree else None,
        measured_decompress=measured, files=tree.files if tree else None,
        memory_gb=site.memory.total_bytes / 1e9,
        access=access or ("scattered" if branches > 100 else "sequential"),
        measured_factor=factors, recompressed=recompressed,
        straddle_branches=straddle_branches(cal, tree) if "straddles" in config else 0.0)
    return model, baseline
