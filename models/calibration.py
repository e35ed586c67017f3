"""From a calibration to a fitted ``ThroughputModel``.

The read tests become configuration points (rows of ``X``, measured rates ``y``) and priors:

========================  =====================================================================
read test                 becomes
========================  =====================================================================
cold sequential, and the  raw reads (no decompression, no processing) by k workers: storage
concurrency sweep         rate B and the number of independent devices N_io
random-request sweep      one worker's raw reads of each request size: access time and B
page cache                a cached raw read: the page-cache rate
decompression             an in-memory row (no I/O): the decompression rate per core (of the
                          dataset's own algorithm; its recompressed samples of other
                          algorithms feed the compression what-if instead)
event loop, cold/warm     the whole pipeline (I/O, decompression, processing) on the data's
                          files: the processing rate
unpacking (uproot)        an in-memory row (no I/O, no decompression): the processing rate
                          per compressed MB (plain uproot loop only; see below)
open cost                 a prior on ``open_s`` (median, with its spread)
per-call cost             a prior on ``call_s``, and the warm per-MB rate beyond it
per-basket cost           a prior on ``basket_s``
parallel event loop       1 and k workers: the cores' parallel efficiency
========================  =====================================================================

Baskets.  Where the per-basket read test measured ``basket_s``, the event-loop rows (single,
per-MB and parallel) and the baseline carry the baskets they read per file: the probe's
baskets per compressed MB of the branches read (all of the tree's baskets over its bytes; for
a subset of the branches, scaled by the share of the branches over the share of the bytes)
times the row's MB per file, and for the per-call test's per-MB row the baskets per MB it
counted in the part it read.  Every row then pays the per-basket cost at its own density, and
the fitted per-MB rates are those beyond it.  Without that measurement the rows carry no
baskets: the points alone cannot tell the per-basket cost from the per-MB rates, which keep it
(as before the test existed), and ``basket_s`` stays unconstrained.

Processing.  Where decompression takes most of the event loop's time (LZMA), the loop's rows
alone cannot tell the processing rate from the noise on the decompression rate (a fit gave
192 ± 943 MB/s, and the compression what-if a 90% interval of 0.08x to 765x).  For uproot's
plain event loop (no ``--analysis``: a user's analysis does work that is not measured here),
the unpacking test times what uproot does per MB once a basket is decompressed
(``basket_array`` and ``final_array``, with the fixed costs per basket and per branch taken
out where they can be told apart: the model counts those in ``basket_s`` and ``call_s``); it
becomes a row with processing alone, trusted to ``UNPACK_SD`` at least, since it leaves out
the read loop's own Python and awkward's grouping of the branches.

Each point's weight comes from the standard error of its median (from its spread, (p75 - p25)
/ median, and its number of samples), no smaller than the model's ``noise``.  The baseline
configuration is the analysis as the calibration saw it: one worker reading the largest tree's
files from storage, decompressing and processing them, opening each file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from probes.readtests.overhead import calls_per_file
from probes.readtests.results import Calibration, EventLoop, Measurement
from probes.results import DatasetProfile, SiteProfile, TreeProfile

from .physics import FEATURES, config_matrix
from .throughput import Prior, ThroughputModel

#: IQR / 1.349 is a normal distribution's standard deviation.
IQR_TO_SIGMA = 1.349
#: Relative uncertainty (one sigma) of the unpacking row at least: it times a part of the
#: plain event loop's processing alone (see the module's notes).
UNPACK_SD = 0.3
#: Request size assumed for uproot's event loop when the device's read-ahead is unknown.
DEFAULT_READAHEAD_BYTES = 128 * 1024


@dataclass(frozen=True)
class FitInputs:
    """The points, their weights, the priors and the baseline that a calibration yields."""

    X: np.ndarray
    y: np.ndarray
    weight: np.ndarray
    labels: tuple[str, ...]
    priors: dict[str, Prior]
    baseline: dict[str, float]
    cores: int
    threads_per_core: int


def _sigma(m: Measurement | None, floor: float) -> float:
    """Relative standard error of a measurement's median (1.253 sigma / sqrt(n)), no smaller
    than ``floor`` (what the model itself is trusted to)."""
    if m is None or m.spread is None or len(m.samples) < 3:
        return floor
    return max(floor, 1.2533 * m.spread / IQR_TO_SIGMA / np.sqrt(len(m.samples)))


def fit_inputs(cal: Calibration, dataset: DatasetProfile, site: SiteProfile,
               noise: float = 0.05) -> FitInputs:
    """Turn a calibration into configuration points, priors and the baseline."""
    rows: list[dict[str, float]] = []
    y: list[float] = []
    sig: list[float] = []
    labels: list[str] = []

    def add(label: str, row: dict[str, float], rate: float | None,
            m: Measurement | None, floor: float = noise) -> None:
        if rate is None or not np.isfinite(rate) or rate <= 0:
            return
        rows.append(row)
        y.append(float(rate))
        sig.append(_sigma(m, max(noise, floor)))
        labels.append(label)

    raw = cal.raw_read
    big = 1e6  # MB per "file" for raw reads: no per-file cost
    if raw is not None and raw.cold is not None:
        req = raw.cold.conditions.request_bytes or (1 << 20)
        add("cold sequential", {"workers": 1, "request_bytes": req, "file_mb": big},
            raw.cold_mb_per_s, raw.cold)
    for c in cal.concurrency:
        req = c.measurement.conditions.request_bytes or (1 << 20)
        add(f"concurrency {c.workers}", {"workers": c.workers, "request_bytes": req,
                                         "file_mb": big}, c.aggregate_mb_per_s, c.measurement)
    for p in cal.request_sweep:
        if p.pattern == "random":
            add(f"random {p.request_bytes} B", {"workers": 1, "request_bytes": p.request_bytes,
                                               "file_mb": big}, p.mb_per_s, p.measurement)
    if raw is not None and raw.warm is not None:
        add("page cache", {"workers": 1, "cached": 1, "file_mb": big}, raw.warm_mb_per_s,
            raw.warm)
    tree = max(dataset.trees, key=lambda t: t.compressed_bytes) if dataset.trees else None
    main_alg = tree.compression.algorithm if tree is not None else None
    for d in cal.decompression:
        # the dataset's own algorithm only: recompressed samples are for the what-ifs
        if d.algorithm == main_alg and d.source == "dataset":
            add(f"decompression {d.algorithm}", {"io": 0, "decompress": 1, "file_mb": big},
                d.compressed_mb_per_s, d.measurement)

    readahead = _readahead_bytes(site)
    file_mb = (tree.compressed_bytes / max(tree.files, 1) / 1e6) if tree is not None else 1.0
    basket = (tree.baskets.mean_compressed_bytes or readahead) if tree is not None else readahead
    loop_request = max(basket, readahead)
    decompress = 0 if main_alg in (None, "none") else 1
    unc_per_file = (tree.uncompressed_bytes / max(tree.files, 1)) if tree is not None else 0.0
    calls = calls_per_file(unc_per_file)
    loop = cal.event_loop
    bc = cal.basket_cost
    # baskets per compressed MB read: only where the per-basket cost was measured
    density = None
    if bc is not None and bc.basket_s is not None and bc.basket_s > 0 and tree is not None:
        density = basket_density(tree, loop)

    def baskets(mb: float, per_mb: float | None = None) -> dict[str, float]:
        d = per_mb if per_mb is not None else density
        return {"baskets": float(mb * d)} if density is not None and d is not None else {}

    if loop is not None:
        # the event loop reads whole files but its timing leaves the opening out
        cold_rate = _rate(loop.cold, loop)
        warm_rate = _rate(loop.warm, loop)
        if loop.cold is not None and loop.cold.conditions.cache == "cold":
            add("event loop, cold", {"workers": 1, "request_bytes": loop_request,
                                     "file_mb": file_mb, "decompress": decompress,
                                     "process": 1, "calls": calls, **baskets(file_mb)},
                cold_rate, loop.cold)
        add("event loop, warm", {"workers": 1, "cached": 1, "file_mb": file_mb,
                                 "decompress": decompress, "process": 1, "calls": calls,
                                 **baskets(file_mb)}, warm_rate, loop.warm)
    up = cal.unpacking
    if (up is not None and cal.engine == "uproot"
            and (loop is None or loop.analysis is None)):
        # processing alone, per compressed MB: no I/O, no decompression, no fixed costs
        add("unpacking (uproot, in memory)", {"workers": 1, "io": 0, "file_mb": big,
                                              "process": 1},
            up.compressed_mb_per_s, up.measurement, UNPACK_SD)
    cc = cal.call_cost
    if cc is not None and cc.mb_per_s:
        # beyond the per-call cost: the warm rate per MB of decompressing and processing (and
        # of the baskets, at the density of the part it read)
        add("event loop per MB", {"workers": 1, "cached": 1, "file_mb": big,
                                  "decompress": decompress, "process": 1,
                                  **baskets(big, cc.baskets_per_mb)}, cc.mb_per_s,
            cc.measurement)
    for pp in cal.parallel_loop:
        add(f"parallel event loop {pp.workers}",
            {"workers": pp.workers, "cached": 1, "file_mb": pp.file_mb,
             "decompress": decompress, "process": 1, "opens": 1,
             "calls": pp.calls_per_file, "units": pp.units, **baskets(pp.file_mb)},
            pp.aggregate_mb_per_s, pp.measurement)

    priors: dict[str, Prior] = {}
    o = cal.open_overhead_s
    if o is not None and o.cold is not None and o.cold > 0:
        priors["open_s"] = (o.cold, o.cold * _sigma(o.cold_measurement, noise))
    if cc is not None and cc.call_s is not None and cc.call_s > 0:
        priors["call_s"] = (cc.call_s, cc.call_s * _sigma(cc.measurement, noise))
    if density is not None and bc is not None and bc.basket_s is not None:
        priors["basket_s"] = (bc.basket_s, bc.basket_s * _sigma(bc.measurement, noise))

    physical = site.cpu.physical_cores or site.cpu.logical_cores or 1
    logical = site.cpu.logical_cores or physical
    units = max(tree.files, tree.clusters.count if tree.clusters else 0) if tree else 0
    baseline = {"workers": 1.0, "request_bytes": float(loop_request), "file_mb": file_mb,
                "io": 1.0, "cached": 0.0, "remote": 0.0, "decompress": float(decompress),
                "process": 1.0, "opens": 1.0, "calls": calls, "units": float(units),
                "baskets": float(file_mb * density) if density is not None else 0.0}
    sigma = np.asarray(sig)
    return FitInputs(
        X=config_matrix(rows) if rows else np.zeros((0, len(FEATURES))),
        y=np.asarray(y, dtype=float),
        weight=(noise / sigma) ** 2 if len(sigma) else sigma,
        labels=tuple(labels),
        priors=priors,
        baseline=baseline,
        cores=int(physical),
        threads_per_core=max(1, int(logical) // int(physical)),
    )


def basket_density(tree: TreeProfile, loop: EventLoop | None = None) -> float | None:
    """Baskets per compressed MB of the branches the event loop reads: the tree's baskets
    over its bytes; where the loop read a subset of the branches, scaled by the share of the
    branches (with data) it read over the share of the bytes.  ``None`` where unknown."""
    if not tree.baskets.count or not tree.compressed_bytes:
        return None
    with_data = sum(1 for b in tree.branch_profiles if b.baskets.count > 0) or tree.branches
    share = 1.0
    if loop is not None and with_data and 0 < loop.branches < with_data:
        per_event = _compressed_per_event(loop)
        if per_event and tree.entries:
            bytes_share = min(1.0, max(per_event / (tree.compressed_bytes / tree.entries), 1e-3))
            share = (loop.branches / with_data) / bytes_share
    return tree.baskets.count * share / (tree.compressed_bytes / 1e6)


def _rate(m: Measurement | None, loop: object) -> float | None:
    """Compressed MB/s of an event-loop measurement (its samples are events/s)."""
    if m is None or m.median is None:
        return None
    per_event = _compressed_per_event(loop)
    return m.median * per_event / 1e6 if per_event else None


def _compressed_per_event(loop: object) -> float | None:
    events = getattr(loop, "events_per_s", None)
    mb = getattr(loop, "compressed_mb_per_s", None)
    if not events or not mb:
        return None
    return float(mb) * 1e6 / float(events)


def _readahead_bytes(site: SiteProfile) -> int:
    kbs = [s.read_ahead_kb for s in site.storage if s.read_ahead_kb]
    return int(kbs[0]) * 1024 if kbs else DEFAULT_READAHEAD_BYTES


def model_from_calibration(cal: Calibration, dataset: DatasetProfile, site: SiteProfile,
                           noise: float = 0.05, extra_X: np.ndarray | None = None,
                           extra_y: Sequence[float] | None = None,
                           ) -> tuple[ThroughputModel, dict[str, float], FitInputs]:
    """Fit the model to a calibration (and, optionally, further measured configurations).

    Returns the fitted model, the baseline configuration, and the fit's inputs."""
    inputs = fit_inputs(cal, dataset, site, noise)
    X, y, w = inputs.X, inputs.y, inputs.weight
    if extra_X is not None and extra_y is not None and len(extra_y):
        X = np.vstack([X, np.asarray(extra_X, dtype=float)])
        y = np.concatenate([y, np.asarray(extra_y, dtype=float)])
        w = np.concatenate([w, np.ones(len(extra_y))])
    if len(y) == 0:
        raise ValueError("the calibration has no measured point to fit the model to")
    model = ThroughputModel(cores=inputs.cores, threads_per_core=inputs.threads_per_core,
                            priors=inputs.priors, noise=noise)
    model.fit(X, y, sample_weight=w)
    return model, inputs.baseline, inputs
