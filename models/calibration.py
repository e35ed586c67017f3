"""From a calibration to a fitted ``ThroughputModel``.

The read tests become configuration points (rows of ``X``, measured rates ``y``) and priors:

========================  =====================================================================
read test                 becomes
========================  =====================================================================
cold sequential, and the  raw reads (no decompression, no processing) by k workers: storage
concurrency sweep         rate B and the number of independent devices N_io (the sweep
                          relative to its own single reader, at the sequential read's level)
random-request sweep      one worker's raw reads of each request size: access time and B
page cache                a cached raw read: the page-cache rate
decompression             an in-memory row (no I/O): the decompression rate per core (of the
                          dataset's own algorithm; its recompressed samples of other
                          algorithms feed the compression what-if instead)
event loop, cold/warm     the whole pipeline (I/O, decompression, processing) on the data's
                          files: the processing rate
unpacking (uproot)        an in-memory row (no I/O, no decompression): the processing rate
                          per compressed MB (plain uproot loop only; see below)
open cost                 a prior on ``open_s`` (median, with its spread), plus a file's first
                          read call beyond a later one (the per-call test's) and, with
                          uproot, the collector test's full collections per file
per-call cost             a prior on ``call_s``, and the warm per-MB rate beyond it; a file's
                          first call's extra goes to ``open_s`` (the event loop's rows,
                          which open no file, run at a later call's pace)
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

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from hep_advisor.probes.basketmap import BasketMap
from hep_advisor.probes.readtests.overhead import calls_per_file
from hep_advisor.probes.readtests.readers import parse_reader
from hep_advisor.probes.readtests.registry import READ_TESTS
from hep_advisor.probes.readtests.results import Calibration, Measurement, ParallelPoint
from hep_advisor.probes.results import DatasetProfile, SiteProfile, TreeProfile

from .calcosts import (
    basket_cost,
    basket_density,
    branches_with_data,
    collector_per_file,
    compressed_per_event,
    first_call_extra,
    loop_branches,
    loop_call_costs,
    loop_calls_per_file,
    loop_read_factors,
)
from .deviceform import device_form
from .fitinputs import FitInputs
from .physics import FEATURES, Cores, config_matrix
from .pointnoise import run_sd, sigma
from .throughput import DEFAULTS, Prior, ThroughputModel
from .unitpace import efficiency_prior, oversubscription_prior

#: Relative uncertainty (one sigma) of the per-basket test's cost where it ran fewer than three
#: repetitions (its spread unmeasured).  Each repetition is a difference of two short reads
#: (a few ms apart in 20-30 ms): five of them on one file of 1,200 branches of small baskets
#: gave 73-207 us per basket, and a calibration's single one 825 us, where the whole job
#: read at about 300 us a basket (benchmarks/RESULTS.md, stop 46).
BASKET_FEW_SD = 0.5
#: Relative uncertainty (one sigma) of the unpacking row at least: it times a part of the
#: plain event loop's processing alone (see the module's notes).
UNPACK_SD = 0.3
#: Request size assumed for uproot's event loop when the device's read-ahead is unknown.
DEFAULT_READAHEAD_BYTES = 128 * 1024


@dataclass
class _Inputs:
    """The rows, rates, weights and priors being gathered, and what every row needs to know
    of the dataset (its largest tree, the request size, the files' MB, the basket density)."""

    cal: Calibration
    noise: float
    tree: TreeProfile | None
    main_alg: str | None
    file_mb: float
    loop_request: float
    decompress: int
    calls: float
    density: float | None
    #: uncompressed bytes per file of the tree (0 where unknown)
    unc_per_file: float = 0.0
    rows: list[dict[str, float]] = field(default_factory=list)
    y: list[float] = field(default_factory=list)
    sig: list[float] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    priors: dict[str, Prior] = field(default_factory=dict)
    spreads: list[float | None] = field(default_factory=list)
    run_sd: list[float] = field(default_factory=list)
    prior_run_sd: dict[str, float] = field(default_factory=dict)
    measurements: list[Measurement | None] = field(default_factory=list)
    floors: list[float | None] = field(default_factory=list)
    #: the site's CPU (as the model counts it), where known
    cores: Cores | None = None
    #: what a file's first read call costs beyond a later one (uproot's, measured by the
    #: per-call test; 0 where not): counted with the opening, out of the per-call cost
    first_call: float = 0.0
    #: the branches a read call's step cuts a basket of (uproot's event loop, where the
    #: per-basket cost was measured; 0 otherwise): see :func:`straddle_branches`
    straddle_branches: float = 0.0

    def straddles(self, calls: float) -> dict[str, float]:
        """The baskets a file read in ``calls`` calls interprets again (none in one call)."""
        return straddles(calls, self.straddle_branches)

    @property
    def cores_logical(self) -> int:
        """The logical cores (0 where the CPU is not known)."""
        return 0 if self.cores is None else self.cores.cores * max(self.cores.threads_per_core, 1)

    def add(self, label: str, row: dict[str, float], rate: float | None,
            m: Measurement | None, floor: float | None = None) -> None:
        if rate is None or not np.isfinite(rate) or rate <= 0:
            return
        self.rows.append(row)
        self.y.append(float(rate))
        self.sig.append(sigma(m, max(self.noise, floor if floor is not None else self.noise)))
        self.labels.append(label)
        self.spreads.append(m.spread if m is not None and len(m.samples) >= 3 else None)
        self.run_sd.append(run_sd(m, self.sig[-1]))
        self.measurements.append(m)
        self.floors.append(floor)

    def prior(self, name: str, value: float, m: Measurement | None) -> None:
        self.priors[name] = (value, value * sigma(m, self.noise))
        self.prior_run_sd[name] = run_sd(m, sigma(m, self.noise))

    def baskets(self, mb: float, per_mb: float | None = None) -> dict[str, float]:
        """The baskets a row reads (only where the per-basket cost was measured)."""
        d = per_mb if per_mb is not None else self.density
        return {"baskets": float(mb * d)} if self.density is not None and d is not None else {}


#: MB per "file" for raw reads: no per-file cost.
_BIG = 1e6


def _raw_read_rows(x: _Inputs) -> None:
    raw = x.cal.raw_read
    if raw is not None and raw.cold is not None:
        req = raw.cold.conditions.request_bytes or (1 << 20)
        x.add("cold sequential", {"workers": 1, "request_bytes": req, "file_mb": _BIG},
              raw.cold_mb_per_s, raw.cold)


def _concurrency_rows(x: _Inputs) -> None:
    """The sweep's k readers.  Where the cold sequential read and the sweep's single reader
    both exist, the sweep tells how k readers share the devices (``N_io``), not the storage
    rate: its points are taken relative to its own single reader, at the cold sequential
    read's level (the single reader itself is then that read again, and left out).  Its
    samples are shorter and start k processes at a barrier, and on a fast disk read at half
    or twice the sequential read's rate: taken as they are, the fit split the difference and
    missed both (``hep_advisor.models.selfcheck``)."""
    raw = x.cal.raw_read
    seq = raw.cold_mb_per_s if raw is not None and raw.cold is not None else None
    one = next((c.aggregate_mb_per_s for c in x.cal.concurrency if c.workers == 1), None)
    scale = seq / one if seq and one else None
    for c in x.cal.concurrency:
        if scale is not None and c.workers == 1:
            continue
        req = c.measurement.conditions.request_bytes or (1 << 20)
        rate = c.aggregate_mb_per_s
        x.add(f"concurrency {c.workers}", {"workers": c.workers, "request_bytes": req,
                                           "file_mb": _BIG},
              rate * scale if rate is not None and scale is not None else rate, c.measurement)


def _request_sweep_rows(x: _Inputs) -> None:
    for p in x.cal.request_sweep:
        if p.pattern == "random":
            x.add(f"random {p.request_bytes} B", {"workers": 1, "request_bytes": p.request_bytes,
                                                 "file_mb": _BIG}, p.mb_per_s, p.measurement)


def _page_cache_rows(x: _Inputs) -> None:
    raw = x.cal.raw_read
    if raw is not None and raw.warm is not None:
        x.add("page cache", {"workers": 1, "cached": 1, "file_mb": _BIG}, raw.warm_mb_per_s,
              raw.warm)


def _decompression_rows(x: _Inputs) -> None:
    for d in x.cal.decompression:
        # the dataset's own algorithm only: recompressed samples are for the what-ifs
        if d.algorithm == x.main_alg and d.source == "dataset":
            x.add(f"decompression {d.algorithm}", {"io": 0, "decompress": 1, "file_mb": _BIG},
                  d.compressed_mb_per_s, d.measurement)


def _key_prepass(reader: str | None) -> bool:
    """Whether the event loop's reader is uproot's ``iterate`` with a memory-size step: a
    pre-pass that reads every basket's key, one request each, before any data."""
    if not reader:
        return False
    try:
        return parse_reader(reader).key_prepass
    except ValueError:
        return False


def _event_loop_rows(x: _Inputs) -> None:
    loop = x.cal.event_loop
    if loop is not None:
        # the event loop reads whole files but its timing leaves the opening out; its read
        # calls are its own steps' (a short share reads in steps smaller than a job's)
        calls = loop_calls_per_file(loop, x.unc_per_file)
        # a pass ending inside baskets decompressed them whole: per file of its pace, the
        # bytes and baskets it read are those of its share times the factors it recorded
        # (1 for whole files), so the row's file holds them (its rate scaled alike: the
        # same seconds per file)
        mb_f, bk_f = loop_read_factors(loop)
        file_mb = x.file_mb * mb_f
        basket_row = x.baskets(x.file_mb)
        if basket_row:
            basket_row = {"baskets": basket_row["baskets"] * bk_f}
        common = {"file_mb": file_mb, "decompress": x.decompress, "process": 1,
                  "calls": calls, **basket_row, **(x.straddles(calls) if basket_row else {})}

        def later(rate: float | None) -> float | None:
            """The loop's rate with each file's first call at a later call's cost: its rows
            open no file, and the model counts that extra with the opening."""
            if rate is None or rate <= 0:
                return rate
            rate = rate * mb_f
            if x.first_call <= 0:
                return rate
            t = file_mb / rate
            return file_mb / (t - x.first_call) if t - x.first_call >= t / 2 else rate

        # cold, a key pre-pass is a request per basket, which the rate model has no term
        # for (it would charge them to the cost per read call): the replay of that reader
        # (``--reader``) predicts it; warm, the pre-pass costs CPU per key only
        if loop.cold is not None and loop.cold.conditions.cache == "cold" \
                and not _key_prepass(loop.reader):
            x.add("event loop, cold", {"workers": 1, "request_bytes": x.loop_request, **common},
                  later(_rate(loop.cold, loop)), loop.cold)
        x.add("event loop, warm", {"workers": 1, "cached": 1, **common},
              later(_rate(loop.warm, loop)), loop.warm)


def _unpacking_rows(x: _Inputs) -> None:
    up, loop = x.cal.unpacking, x.cal.event_loop
    if up is not None and up.basket_call_s is None and up.branch_call_s is None \
            and loop_call_costs(x.cal, x.tree) is not None:
        return  # its rate holds the per-branch costs, which the loop's per-call cost holds
    if up is not None and x.cal.engine == "uproot" and (loop is None or loop.analysis is None):
        # processing alone, per compressed MB: no I/O, no decompression, no fixed costs
        x.add("unpacking (uproot, in memory)", {"workers": 1, "io": 0, "file_mb": _BIG,
                                                "process": 1},
              up.compressed_mb_per_s, up.measurement, UNPACK_SD)


def _open_cost_inputs(x: _Inputs) -> None:
    o = x.cal.open_overhead_s
    if o is not None and o.cold is not None and o.cold > 0:
        # with each file's first read call beyond a later one (a cost per file), and with
        # uproot Python's full collections per file (the collector test's: the event loop's
        # rows are timed without them, the open test's median leaves them out)
        gc_s = collector_per_file(x.cal) if x.cal.engine == "uproot" else 0.0
        x.prior("open_s", o.cold + x.first_call + gc_s, o.cold_measurement)


def _call_cost_inputs(x: _Inputs) -> None:
    loop = loop_call_costs(x.cal, x.tree, assume_baskets=False)
    if loop is not None and x.cal.event_loop is not None:
        # the calls hold about one basket per branch: the per-call cost from the warm loop
        # itself (see ``loop_call_costs``); the test's per-MB rate would count the baskets'
        # and branches' fixed costs per MB.  That cost holds the first basket of each branch
        # read; the rows here count every basket at ``basket_s`` (where measured), so the
        # prior leaves those out (counted twice, the held-out merged file's 24 calls cost
        # about 0.3 s too much); where they would leave less than half of it, the per-basket
        # test and the loop disagree, and the loop's figure stays
        call_s = loop.call_s
        if x.density is not None and loop.basket_s > 0 and x.tree is not None:
            first = loop_branches(x.cal.event_loop, x.tree) * loop.basket_s
            call_s = call_s - first if call_s > 2 * first else call_s
        x.prior("call_s", call_s, x.cal.event_loop.warm)
        return
    cc = x.cal.call_cost
    if cc is None:
        return
    if cc.mb_per_s:
        # beyond the per-call cost: the warm rate per MB of decompressing and processing (and
        # of the baskets, at the density of the part it read)
        x.add("event loop per MB", {"workers": 1, "cached": 1, "file_mb": _BIG,
                                    "decompress": x.decompress, "process": 1,
                                    **x.baskets(_BIG, cc.baskets_per_mb)}, cc.mb_per_s,
              cc.measurement)
    if cc.call_s is not None and cc.call_s > 0:
        x.prior("call_s", cc.call_s, cc.measurement)


def _basket_cost_inputs(x: _Inputs) -> None:
    bc = basket_cost(x.cal, x.main_alg)
    if x.density is not None and bc is not None and bc.basket_s is not None:
        x.prior("basket_s", bc.basket_s, bc.measurement)
        if bc.measurement is None or len(bc.measurement.samples) < 3:
            x.priors["basket_s"] = (bc.basket_s, bc.basket_s * BASKET_FEW_SD)


def _parallel_rows(x: _Inputs) -> None:
    """The parallel event loop: its scaling up to the logical cores a prior on the parallel
    efficiency (:func:`_efficiency_prior`), its one-worker run a row (warm, whole files
    opened: the per-file costs at a loop's pace), and runs beyond the logical cores rows
    (oversubscription).  Where no prior can be formed, every run is a row, as before."""
    ratio = _efficiency_prior(x)
    over = _oversubscription_prior(x)
    for pp in x.cal.parallel_loop:
        if (ratio and 1 < pp.workers <= x.cores_logical) or (over and pp.workers > x.cores_logical):
            continue  # its scaling is the prior; as a row it would count again
        x.add(f"parallel event loop {pp.workers}",
              {"workers": pp.workers, "cached": 1, "file_mb": pp.file_mb,
               "decompress": x.decompress, "process": 1, "opens": 1,
               "calls": pp.calls_per_file, "units": pp.units, **x.baskets(pp.file_mb),
               # packets end on cluster boundaries: their calls cut no basket (taken as one
               # call each)
               **(x.straddles(pp.calls_per_file) if pp.whole_files and x.baskets(1.0)
                  else {})},
              _steady_rate(pp), pp.measurement)


def _oversubscription_prior(x: _Inputs) -> bool:
    """Workers beyond the logical cores, measured side by side with the run at them
    (:func:`~models.unitpace.oversubscription_prior`), a prior on ``oversubscribed``."""
    from .throughput import BOUNDS

    e = x.priors.get("parallel_efficiency", (DEFAULTS.parallel_efficiency, 0.0))[0]
    return _measured_prior(x, "oversubscribed", oversubscription_prior(
        x.cal.parallel_loop, x.cores, e, x.noise, BOUNDS["oversubscribed"])
        if x.cores is not None else None)


def _measured_prior(x: _Inputs, name: str, found: tuple[float, float, float] | None) -> bool:
    """``found`` (value, sd, run-to-run sd relative) as the prior on ``name``; whether set."""
    if found is None:
        return False
    value, sd, run = found
    x.priors[name] = (value, sd)
    x.prior_run_sd[name] = run
    return True


def _steady_rate(pp: ParallelPoint) -> float | None:
    """The run's rate, or, for one worker over whole files that read more than one, the pace
    of the files after its first: a job of many files pays a fresh process's once-only costs
    once (a short run pays them on a third to a half of its files: on 6 files of 0.3 MB one
    worker's run read at 0.6 of a 120-file job's rate, on 2 files of 19 MB at 0.7)."""
    if pp.workers == 1 and pp.whole_files and pp.later_s_per_mb and pp.later_s_per_mb > 0:
        return 1.0 / pp.later_s_per_mb
    return pp.aggregate_mb_per_s


def _efficiency_prior(x: _Inputs) -> bool:
    """The parallel efficiency from the parallel loop's runs side by side
    (:func:`~models.unitpace.efficiency_prior`), a prior on ``parallel_efficiency``; whether
    one was set."""
    from .throughput import BOUNDS

    return _measured_prior(x, "parallel_efficiency", efficiency_prior(
        x.cal.parallel_loop, x.cores, x.noise, BOUNDS["parallel_efficiency"])
        if x.cores is not None else None)


#: What each read test (by its registry name) gives the fit; the fit takes them in the order
#: the tests run.  A test not listed gives the model nothing.
INPUTS: dict[str, tuple[Callable[[_Inputs], None], ...]] = {
    "raw_read": (_raw_read_rows,),
    "request_sweep": (_request_sweep_rows,),
    "concurrency": (_concurrency_rows,),
    "open_cost": (_open_cost_inputs,),
    "decompression": (_decompression_rows, _unpacking_rows),
    "event_loop": (_event_loop_rows,),
    "call_cost": (_call_cost_inputs,),
    "basket_cost": (_basket_cost_inputs,),
    "parallel_loop": (_parallel_rows,),
    "page_cache": (_page_cache_rows,),
}


def fit_inputs(cal: Calibration, dataset: DatasetProfile, site: SiteProfile,
               noise: float = 0.05, maps: Sequence[BasketMap] = ()) -> FitInputs:
    """Turn a calibration into configuration points, priors and the baseline.  ``maps``:
    basket maps of some of the dataset's files (its largest tree), for the device I/Os of
    a file opened and read whole, cold (the baseline's ``device_ios``:
    :func:`hep_advisor.models.replay.fileios.cold_file_ios`); without them, its read-ahead
    windows."""
    from .replay.fileios import device_ios_column

    tree = dataset.main_tree
    main_alg = tree.compression.algorithm if tree is not None else None
    readahead = _readahead_bytes(site)
    file_mb = (tree.compressed_bytes / max(tree.files, 1) / 1e6) if tree is not None else 1.0
    basket = (tree.baskets.mean_compressed_bytes or readahead) if tree is not None else readahead
    loop_request = max(basket, readahead)
    unc_per_file = (tree.uncompressed_bytes / max(tree.files, 1)) if tree is not None else 0.0
    bc = basket_cost(cal, main_alg)
    # baskets per compressed MB read: only where the per-basket cost was measured
    density = None
    if bc is not None and bc.basket_s is not None and bc.basket_s > 0 and tree is not None:
        density = basket_density(tree, cal.event_loop)
    physical = site.cpu.physical_cores or site.cpu.logical_cores or 1
    logical = site.cpu.logical_cores or physical
    x = _Inputs(cal=cal, noise=noise, tree=tree, main_alg=main_alg, file_mb=file_mb,
                loop_request=loop_request, decompress=0 if main_alg in (None, "none") else 1,
                calls=calls_per_file(unc_per_file), density=density, unc_per_file=unc_per_file,
                cores=Cores(int(physical), max(1, int(logical) // int(physical))),
                first_call=first_call_extra(cal) if cal.engine == "uproot" else 0.0,
                straddle_branches=straddle_branches(cal, tree) if density is not None else 0.0)
    for test in READ_TESTS:
        for gather in INPUTS.get(test.name, ()):
            gather(x)

    units = max(tree.files, tree.clusters.count if tree.clusters else 0) if tree else 0
    baseline = {"workers": 1.0, "request_bytes": float(loop_request), "file_mb": file_mb,
                "io": 1.0, "cached": 0.0, "remote": 0.0, "decompress": float(x.decompress),
                "process": 1.0, "opens": 1.0, "calls": x.calls, "units": float(units),
                "baskets": float(file_mb * density) if density is not None else 0.0,
                **x.straddles(x.calls), **device_ios_column(maps, site, cal, x.calls)}
    sig = np.asarray(x.sig)
    return FitInputs(
        X=config_matrix(x.rows) if x.rows else np.zeros((0, len(FEATURES))),
        y=np.asarray(x.y, dtype=float),
        weight=(noise / sig) ** 2 if len(sig) else sig,
        labels=tuple(x.labels),
        priors=x.priors,
        baseline=baseline,
        cores=int(physical),
        threads_per_core=max(1, int(logical) // int(physical)),
        rows=tuple(x.rows),
        spreads=tuple(x.spreads),
        run_sd=tuple(x.run_sd),
        prior_run_sd=dict(x.prior_run_sd),
        measurements=tuple(x.measurements),
        floors=tuple(x.floors),
    )


def straddle_branches(cal: Calibration, tree: TreeProfile | None) -> float:
    """The branches (with data) whose basket a read call's step ends inside, for each call
    after a file's first: those uproot's event loop reads (``iterate`` steps count entries,
    not baskets, so a step's end falls inside a basket of nearly every branch; the next step
    interprets that basket again).  0 for another engine, or where the tree is not known."""
    if cal.engine != "uproot" or tree is None:
        return 0.0
    loop = cal.event_loop
    return float(loop_branches(loop, tree) if loop is not None else branches_with_data(tree))


def straddles(calls: float, branches: float) -> dict[str, float]:
    """The ``straddles`` column of a file read in ``calls`` calls over ``branches`` branches:
    one basket again per branch and call after the first (empty where ``branches`` is 0)."""
    if branches <= 0:
        return {}
    return {"straddles": max(float(calls) - 1.0, 0.0) * float(branches)}


def _rate(m: Measurement | None, loop: object) -> float | None:
    """Compressed MB/s of an event-loop measurement (its samples are events/s)."""
    if m is None or m.median is None:
        return None
    per_event = compressed_per_event(loop)
    return m.median * per_event / 1e6 if per_event else None


def _readahead_bytes(site: SiteProfile) -> int:
    kbs = [s.read_ahead_kb for s in site.storage if s.read_ahead_kb]
    return int(kbs[0]) * 1024 if kbs else DEFAULT_READAHEAD_BYTES


def model_from_calibration(cal: Calibration, dataset: DatasetProfile, site: SiteProfile,
                           noise: float = 0.05, extra_X: np.ndarray | None = None,
                           extra_y: Sequence[float] | None = None,
                           maps: Sequence[BasketMap] = (),
                           ) -> tuple[ThroughputModel, dict[str, float], FitInputs]:
    """Fit the model to a calibration (and, optionally, further measured configurations).

    The model's intervals carry the calibration's run-to-run spread (``FitInputs.run_sd``),
    and ``model.self_check_`` holds its prediction for every measured configuration against
    the measurement (:mod:`hep_advisor.models.selfcheck`).  Returns the fitted model, the baseline
    configuration, and the fit's inputs."""
    from .selfcheck import self_check

    inputs = fit_inputs(cal, dataset, site, noise, maps)
    X, y, w = inputs.X, inputs.y, inputs.weight
    run = np.asarray(inputs.run_sd, dtype=float) if len(inputs.run_sd) == len(y) else \
        np.full(len(y), noise)
    if extra_X is not None and extra_y is not None and len(extra_y):
        X = np.vstack([X, np.asarray(extra_X, dtype=float)])
        y = np.concatenate([y, np.asarray(extra_y, dtype=float)])
        w = np.concatenate([w, np.ones(len(extra_y))])
        run = np.concatenate([run, np.full(len(extra_y), noise)])
    if len(y) == 0:
        raise ValueError("the calibration has no measured point to fit the model to")
    # the device's form, held fixed: a binding cgroup throttle the site probe recorded, else
    # the request sweep's choice (:func:`.deviceform.device_form`)
    limit = device_form(cal.raw_read, site)
    fixed = {} if limit is None else {"storage_overlap": 1.0 if limit == "max" else 0.0}
    if cal.engine != "uproot":
        # ROOT reads each basket in the loop's own thread when the loop needs it: no read
        # runs behind the CPU (uproot's threads can: its overlap is fitted, or assumed)
        fixed["io_overlap"] = 0.0
    if "page cache" not in inputs.labels:
        # no page-cache read (the test left out for time): the warm rows alone would make
        # the cache's rate a free knob (a fit put it at 27 MB/s where the test measured
        # 11,000), so it is held at the model's default, an assumption
        fixed["cache_mb_per_s"] = DEFAULTS.cache_mb_per_s
    model = ThroughputModel(cores=inputs.cores, threads_per_core=inputs.threads_per_core,
                            priors=inputs.priors, noise=noise, fixed=fixed or None)
    model.fit(X, y, sample_weight=w, run_sd=run, prior_run_sd=inputs.prior_run_sd)
    model.self_check_ = self_check(model, inputs)
    return model, inputs.baseline, inputs
