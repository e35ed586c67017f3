"""Replay: basket map -> reader strategy -> request stream -> device or link -> time, bytes.

Predicts the I/O of a layout or a reader that has not been measured from what the reader
would ask for, rather than by rescaling rates measured on today's files:

- :mod:`.requests`: the :class:`Request` type and stream statistics;
- :mod:`.readers`: uproot ``iterate``/``arrays`` (with its coalescing and key pre-pass) and
  ROOT ``GetEntry`` without and with TTreeCache, as request streams;
- :mod:`.device`: a local block device (bandwidth, access time, read-ahead, page cache) and a
  network link (round trips, bandwidth, vector reads);
- :mod:`.layouts`: the basket map a scenario would write (``hadd``, ``hadd -O``/``-j``);
- :mod:`.predict`: a layout's time for one worker (replayed I/O plus the fitted CPU terms) and
  a merge's speed-up.

The basket maps come from :mod:`hep_advisor.probes.basketmap`.
"""

from __future__ import annotations

from .cpucosts import CpuCosts
from .device import Link, LocalDevice, Transfer
from .layouts import fast_merge, optimized_merge
from .predict import (
    LayoutTime,
    MergePrediction,
    Reader,
    cluster_step,
    layout_time,
    merge_prediction,
    reader_change,
)
from .readers import (
    CoalesceConfig,
    coalesce,
    root_cache_bytes,
    root_files,
    root_getentry,
    root_open,
    uproot_arrays,
    uproot_files,
    uproot_iterate,
    uproot_open,
    uproot_step_entries,
)
from .requests import Request, StreamStats, merge_runs, python_buffered, renumber, stats

__all__ = [
    "CoalesceConfig",
    "CpuCosts",
    "LayoutTime",
    "Link",
    "LocalDevice",
    "MergePrediction",
    "Reader",
    "Request",
    "StreamStats",
    "Transfer",
    "cluster_step",
    "coalesce",
    "fast_merge",
    "layout_time",
    "merge_prediction",
    "merge_runs",
    "optimized_merge",
    "python_buffered",
    "reader_change",
    "renumber",
    "root_cache_bytes",
    "root_files",
    "root_getentry",
    "root_open",
    "stats",
    "uproot_arrays",
    "uproot_files",
    "uproot_iterate",
    "uproot_open",
    "uproot_step_entries",
]
