"""``advise()``: the one UI-free entry point the report, the TUI and notebooks call.

probe the site and the dataset -> calibrate (or reuse a cached calibration) -> fit the model ->
the verdict and the recommendations.  :func:`advise_from` is the last two steps alone, a pure
function of (site, dataset, calibration): it runs in well under a second.
:func:`calibrate_paths` is the first three steps without the cache or the advice (``hep-advisor
calibrate``).  Nothing here writes demo data: ``hep_advisor.demo`` does, where it is asked for.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hep_advisor.probes.dataset import DEFAULT_SAMPLE
from hep_advisor.probes.readtests.pace import median_s, pace_line, with_reference
from hep_advisor.probes.readtests.results import Calibration
from hep_advisor.probes.readtests.runner import ProgressCallback, ProgressEvent
from hep_advisor.probes.results import DatasetProfile, SiteProfile, largest_tree

from .advice import Advice

if TYPE_CHECKING:
    from hep_advisor.models.replay.baseline import ReaderBaseline
    from hep_advisor.models.scenarios import ModelSummary
    from hep_advisor.probes.basketmap import BasketMap
    from hep_advisor.probes.readtests.readers import ReaderSpec

    from .cluster import ClusterAdvice

DEFAULT_BUDGET_S = 60.0

Paths = str | Path | Sequence[str | Path]


class NoUsableData(ValueError):
    """The inputs hold no usable ROOT file (the one-line reason is the message)."""


def advise(paths: Paths,
           budget_s: float = DEFAULT_BUDGET_S, engine: str = "uproot",
           site: SiteProfile | None = None, analysis: str | Callable[..., Any] | None = None,
           progress: ProgressCallback | None = None, *,
           branches: Sequence[str] | None = None, cancel: threading.Event | None = None,
           cache: bool = True, recalibrate: bool = False, label: str | None = None,
           sample: int | None = DEFAULT_SAMPLE, uses: Sequence[str] | None = None,
           replay_merge: bool = False, dask: Any = None, trace: Any = None,
           reader: Any = None) -> Advice:
    """Probe, calibrate within ``budget_s`` seconds, fit the model and advise.

    ``paths``: ROOT files, directories or globs (one dataset; the demo's are
    ``hep_advisor.demo.demo_dataset()``).  ``site``: an already probed site (default: probe
    this machine).  ``analysis``: the user's analysis (``"module:function"`` or a callable)
    timed in the event loop; ``branches``: the branches the program reads (default: every
    branch; the event loop reads these); ``uses``: the branches the analysis actually uses,
    when known (only then can B001 say it reads more than it needs).  ``progress`` receives
    ``ProgressEvent``s (the probe's as test ``"probe"``, then the read tests'); ``cancel``
    (a ``threading.Event``) stops the read tests early (the advice is then based on partial
    results, marked so).  With ``cache`` a calibration of the same unchanged files (same
    engine, branches read and analysis; ``uses`` changes the advice only) is reused;
    ``recalibrate`` forces a new one (and stores it).  ``replay_merge``: M001's speed-up from
    replaying the reads of the merged layout (off by default: see :func:`advise_from`).

    Raises :class:`NoUsableData` when no input is a usable ROOT file; bad inputs besides
    usable ones are listed in ``advice.dataset.errors``.  ``trace``: an
    ``hep_advisor.trace.Trace`` of the user's program (``hep-advisor trace``): its reader findings
    (U0xx) are added to ``advice.notes``.  ``dask``: a Dask scheduler address,
    ``local:N`` or a ``distributed.Client``: every node is probed too (``advice.cluster``,
    its advice D001-D003 among the recommendations; see ``hep_advisor.cluster``).  ``reader``:
    the program's reader (a spec such as ``"uproot.iterate"``, a trace JSON file, or a
    ``hep_advisor.probes.readtests.readers.ReaderSpec``): the event loop runs it and
    ``advice.reader_baseline`` is its replayed baseline (``ValueError`` for a bad spec).
    """
    from hep_advisor.probes import probe_site, storage_paths
    from hep_advisor.probes.readtests.calibrate import calibrate

    from . import cache as calcache

    started = time.monotonic()  # the budget counts from here: the probe's time comes out of it
    spec = _reader(reader)
    inputs = _inputs(paths)
    name = label or _label(inputs)
    analysis_key = analysis if isinstance(analysis, str) or analysis is None else \
        f"{getattr(analysis, '__module__', '?')}:{getattr(analysis, '__qualname__', '?')}"
    key = calcache.cache_key(inputs, _engine_key(engine, spec), branches, analysis_key,
                             sample=sample) if cache else None
    hit = None if recalibrate else calcache.load(key)
    if progress is not None:
        progress(ProgressEvent("probe", 0.0, "probing the site and the files"))
    if site is None:
        site = probe_site(storage_paths(inputs))
    if hit is not None:
        dataset, cal, created = hit.dataset, hit.calibration, hit.created
        if progress is not None:
            progress(ProgressEvent("probe", 1.0, "cached calibration reused",
                                   f"calibrated {calcache.describe_age(hit.age_s)}"))
    else:
        def on_file(done: int, total: int, message: str) -> None:
            if progress is not None and total:
                progress(ProgressEvent("probe", done / total, message))

        dataset = _usable(inputs, sample, on_file)
        if progress is not None:
            progress(ProgressEvent("probe", 1.0, "probed",
                                   f"{dataset.files} files, {dataset.total_bytes / 1e6:.1f} MB"))
        cal = calibrate(dataset, budget_s=_left(budget_s, started), engine=engine,
                        branches=branches, analysis=analysis, progress=progress, cancel=cancel,
                        reader=spec)
        if cal.machine is not None and cache:  # its pace against this host's earlier ones
            pace = with_reference(cal.machine, calcache.host_paces())
            cal = replace(cal, machine=pace)
            if not cal.partial:
                calcache.record_pace(median_s(pace))
        created = calcache.store(key, dataset, cal)
    advice = replace(advise_from(site, dataset, cal, label=name, inputs=tuple(inputs),
                                 calibration_created=created, branches=branches, uses=uses,
                                 replay_merge=replay_merge, reader=spec),
                     calibration_reused=hit is not None)
    from .trial_refit import with_stored_trials  # `try`'s measured trials of these files

    advice = with_stored_trials(advice, key, branches, uses)
    calcache.store_advice(key, advice, uses, replay_merge=replay_merge)
    if dask is not None:  # measured each time: not cached
        from .cluster import with_cluster

        advice = with_cluster(advice, dask, budget_s=budget_s, branches=branches,
                              analysis=analysis, progress=progress, cancel=cancel)
    if trace is not None:  # the user's own program, traced: its reader findings as notes
        from .trace import trace_notes

        advice = replace(advice, notes=advice.notes + trace_notes(trace), trace=trace)
    return advice


def cached_advice(paths: Paths, engine: str = "uproot", *,
                  branches: Sequence[str] | None = None, analysis: str | None = None,
                  uses: Sequence[str] | None = None, replay_merge: bool = False,
                  sample: int | None = DEFAULT_SAMPLE, reader: Any = None) -> Advice | None:
    """What the last ``advise`` of these unchanged files (with the same ``uses`` and
    ``replay_merge``) concluded,
    read from the cache without fitting the model (``None`` if there is none).  Its
    ``predict`` is not available: the fitted model is not stored.  It takes a fraction of a
    second, without scikit-learn."""
    from . import cache as calcache

    key = calcache.cache_key(_inputs(paths), _engine_key(engine, _reader(reader)), branches,
                             analysis, sample=sample)
    return calcache.load_advice(key, uses, replay_merge=replay_merge)


def advise_from(site: SiteProfile, dataset: DatasetProfile, calibration: Calibration | None,
                *, label: str = "dataset", inputs: Sequence[str] = (),
                calibration_created: str | None = None,
                branches: Sequence[str] | None = None, level: float = 0.9,
                uses: Sequence[str] | None = None, replay_merge: bool = False,
                basket_maps: Sequence[BasketMap] | None = None, reader: Any = None) -> Advice:
    """The verdict and the ranked recommendations from measurements already made.
    ``branches``: what the program reads (default: every branch); ``uses``: what the analysis
    uses, when known.  The basket maps of a few files (metadata only; ``basket_maps`` where
    given) are read for replays: M001 checks what the merged layout costs the readers users
    run and offers what removes scattered reads; T001 and A001 say what the replay predicts.
    ``replay_merge``: M001's own speed-up also comes from the replay (the event loop's reads
    of the merged layout through a model of the device, ``hep_advisor.models.replay``) instead of
    the rate model's merge scenario.  Off by default: on the validation data the replay was not
    closer to what the merge realised (benchmarks/bench_merge_replay.py)."""
    from hep_advisor.models.scenarios import calibrated_baseline, summarize

    from .recommend import Context, recommend
    from .recommend.data import selection_notes
    from .verdict import verdict

    notes: list[str] = list(selection_notes(dataset, branches, uses))
    spec = _reader(reader)
    sampled: tuple[BasketMap, ...] | None = None if basket_maps is None else tuple(basket_maps)

    def maps_once() -> tuple[BasketMap, ...]:  # read at most once, where a rule needs them
        nonlocal sampled
        if sampled is None:
            sampled = sample_basket_maps(dataset, inputs=inputs)
        return sampled

    model = baseline = summary = None
    if calibration is not None:
        try:  # a local file's device I/Os, read whole and cold, come from its basket map
            model, baseline = calibrated_baseline(calibration, dataset, site, maps=maps_once())
        except ValueError as exc:
            notes.append(f"no model: {exc}")
    if calibration is not None and calibration.partial:
        notes.append("the calibration was cancelled: the advice rests on partial results")
    if calibration is not None and calibration.machine is not None \
            and (calibration.machine.unsteady or calibration.machine.slow):
        notes.append(pace_line(calibration.machine))
    recs: tuple = ()
    v = None
    rb: ReaderBaseline | None = None
    rb_why: list[str] = []
    if model is not None and baseline is not None:
        logical = site.cpu.logical_cores or 1
        counts = list(range(1, 2 * logical + 1))
        summary = summarize(model, baseline, counts, level=level)
        v = verdict(baseline)
        maps = maps_once() if baseline.workers == 1 else ()  # the replay is of one worker
        if spec is not None:  # the program's reader, replayed once: W001 and the report
            rb, rb_why = _reader_baseline(spec, dataset, calibration, site, baseline,
                                          branches, maps_once())
        ctx = Context(site=site, dataset=dataset, calibration=calibration, model=model,
                      baseline=baseline, summary=summary, verdict=v, label=label,
                      inputs=tuple(inputs), branches=tuple(branches or ()), level=level,
                      uses=tuple(uses or ()), basket_maps=maps, replay_merge=replay_merge,
                      reader=spec, reader_baseline=rb)
        recs = tuple(recommend(ctx))
    if calibration is not None and calibration.remote is not None:  # X001-X003, T001: the link
        from .advice import rank_key, with_narrowing
        from .recommend.remote import link_notes, remote_rules

        rmaps = maps_once()
        remote = remote_rules(dataset, calibration, rmaps, branches, label=label)
        recs = tuple(sorted((*recs, *map(with_narrowing, remote)), key=rank_key))
        notes = [n for n in notes if not n.startswith("no model")] + link_notes(
            calibration, dataset, rmaps, branches)
    if spec is not None and baseline is not None:  # the program's reader, replayed above
        notes += rb_why if rb is None else [reader_note(rb)]
    return Advice(label=label, site=site, dataset=dataset, calibration=calibration,
                  model=summary, verdict=v, recommendations=recs, inputs=tuple(inputs),
                  calibration_created=calibration_created, notes=tuple(notes), fitted=model,
                  baseline=baseline, reader_baseline=rb)


#: Files whose basket maps a replay reads (spread evenly over the dataset).
REPLAY_MAPS = 8


def fit_maps(cal: Calibration, dataset: DatasetProfile) -> tuple[BasketMap, ...]:
    """The basket maps the model's fit reads a local file's cold device I/Os from
    (``hep_advisor.models.scenarios.calibrated_baseline``): none for remote data."""
    if cal.remote is not None:
        return ()
    return sample_basket_maps(dataset, inputs=dataset.inputs)


def sample_basket_maps(dataset: DatasetProfile, limit: int = REPLAY_MAPS, *,
                       inputs: Sequence[str] = ()) -> tuple[BasketMap, ...]:
    """Basket maps of the largest tree in up to ``limit`` of the dataset's files (evenly
    spread); none where they cannot be read.  The files are the probe's, or those found in
    ``inputs`` where the probe does not list them (a cached probe does not keep its paths)."""
    from hep_advisor.probes.basketmap import read_basket_map

    trees = [t for t in dataset.trees if t.format == "ttree"]
    paths = list(dataset.file_paths)
    if not paths and inputs:
        from hep_advisor.probes.files import discover

        bad = {e.path for e in dataset.errors}
        paths = [f.path for f in discover(inputs).files if f.path not in bad]
    if not trees or not paths:
        return ()
    tree = largest_tree(trees).name
    n = min(limit, len(paths))
    picked = [paths[round(i * (len(paths) - 1) / max(n - 1, 1))] for i in range(n)]
    try:
        return tuple(_basket_map(p, tree, read_basket_map) for p in dict.fromkeys(picked))
    except Exception:  # a replay is an extra: without maps the rules use the rate model
        return ()


#: Basket maps read in this process, by (path, tree, size, mtime): advising the same files
#: again (a report's formats, the TUI) does not read them again.
_MAPS: dict[tuple[str, str, int, int], BasketMap] = {}
_MAPS_KEPT = 64


def _basket_map(path: str, tree: str, read: Callable[[str, str], BasketMap]) -> BasketMap:
    import os

    if "://" in path:  # remote (root://, http(s)://): not kept, it cannot be stat'ed here
        return read(path, tree)
    st = os.stat(path)
    key = (os.path.abspath(path), tree, st.st_size, st.st_mtime_ns)
    if key not in _MAPS:
        if len(_MAPS) >= _MAPS_KEPT:
            _MAPS.pop(next(iter(_MAPS)))
        _MAPS[key] = read(path, tree)
    return _MAPS[key]


@dataclass(frozen=True)
class Calibrated:
    """What :func:`calibrate_paths` measured: the site and dataset probes, the read tests'
    calibration and the fitted model's predictions (``None`` when the calibration cannot be
    fitted; ``notes`` then says why, as ``"no model: ..."``)."""

    site: SiteProfile
    dataset: DatasetProfile
    calibration: Calibration
    model: ModelSummary | None
    notes: tuple[str, ...] = ()
    #: with ``dask``: every node of the cluster probed (``hep_advisor.cluster``)
    cluster: ClusterAdvice | None = None
    #: with ``reader``: the baseline as the program reads (``hep_advisor.models.replay.baseline``)
    reader_baseline: ReaderBaseline | None = None


def _left(budget_s: float, started: float) -> float:
    """What is left of ``budget_s`` for the read tests once the probe, started at ``started``
    (``time.monotonic()``), is done."""
    return max(0.0, budget_s - (time.monotonic() - started))


def calibrate_paths(paths: Paths, *, budget_s: float = DEFAULT_BUDGET_S,
                    workers: Sequence[int] | None = None, engine: str = "uproot",
                    branches: Sequence[str] | None = None,
                    analysis: str | Callable[..., Any] | None = None,
                    sample: int | None = DEFAULT_SAMPLE,
                    progress: ProgressCallback | None = None,
                    cancel: threading.Event | None = None,
                    on_probed: Callable[[DatasetProfile], None] | None = None,
                    uses: Sequence[str] | None = None, dask: Any = None,
                    reader: Any = None) -> Calibrated:
    """Probe the files and the site, run the read tests within ``budget_s`` seconds (the
    concurrency sweep at ``workers``, default the read tests' own) and fit the model: what
    ``hep-advisor calibrate`` does.  No cache is read or written.  ``on_probed`` is called
    with the dataset probe before the read tests start (to report unusable inputs at once);
    ``progress`` and ``cancel`` are the read tests' (a cancelled calibration is kept, marked
    partial).  ``sample=None`` opens every file.  ``branches`` are what the event loop reads
    (default: every branch); ``uses`` (the branches the analysis uses) changes no measurement:
    it is only checked against the tree, any mismatch said in ``notes``.

    Raises :class:`NoUsableData` when no input is a usable ROOT file."""
    from hep_advisor.probes import probe_site, storage_paths
    from hep_advisor.probes.readtests.calibrate import calibrate

    started = time.monotonic()  # the budget counts from here: the probe's time comes out of it
    spec = _reader(reader)  # ``reader``: as advise's
    inputs = _inputs(paths)
    dataset = _usable(inputs, sample, None, on_probed)
    site = probe_site(storage_paths(inputs, dataset.file_paths))
    extra = {} if workers is None else {"workers": tuple(workers)}
    cal = calibrate(dataset, budget_s=_left(budget_s, started), engine=engine, branches=branches,
                    analysis=analysis, progress=progress, cancel=cancel, reader=spec, **extra)
    from .recommend.data import selection_notes

    summary, baseline, notes = calibration_summary(cal, dataset, site, workers or ())
    cluster = None
    if dask is not None:  # ``dask``: as advise's
        from .cluster import calibrate_cluster

        cluster = calibrate_cluster(dask, dataset, budget_s=budget_s, branches=branches,
                                    analysis=analysis, progress=progress, cancel=cancel)
    rb = None
    if spec is not None and baseline is not None:
        rb, why = _reader_baseline(spec, dataset, cal, site, baseline, branches,
                                   sample_basket_maps(dataset, inputs=inputs))
        notes += tuple(why)
    return Calibrated(site, dataset, cal, summary,
                      selection_notes(dataset, branches, uses) + notes, cluster, rb)


def calibration_summary(cal: Calibration, dataset: DatasetProfile, site: SiteProfile,
                        workers: Sequence[int] = ()
                        ) -> tuple[ModelSummary | None, Any, tuple[str, ...]]:
    """The model fitted to ``cal``, its predictions for 1 .. 2 x the logical cores (and
    ``workers``) and the baseline it was fitted for; ``(None, None, ("no model: REASON",))``
    when the calibration cannot be fitted."""
    from hep_advisor.models.scenarios import calibrated_baseline, summarize

    try:
        model, baseline = calibrated_baseline(cal, dataset, site, maps=fit_maps(cal, dataset))
    except ValueError as exc:
        return None, None, (f"no model: {exc}",)
    logical = site.cpu.logical_cores or 1
    counts = sorted({*range(1, 2 * logical + 1), *workers})
    return summarize(model, baseline, counts), baseline, ()


def _reader(reader: Any) -> ReaderSpec | None:
    """A reader spec (text, a trace JSON file, or a ``ReaderSpec``) parsed; ``ValueError``
    (one line) for a bad one."""
    from hep_advisor.probes.readtests.readers import ReaderSpec, parse_reader

    if reader is None or isinstance(reader, ReaderSpec):
        return reader
    return parse_reader(str(reader))


def opening(rb: ReaderBaseline) -> str:
    """Whether the calibration's loop with ``rb``'s reader timed the files' opening."""
    from hep_advisor.probes.readtests.readers import parse_reader

    try:
        timed = parse_reader(rb.reader).opens_in_loop
    except ValueError:
        timed = False
    return "opening timed, as in a program" if timed else "opening not timed"


def reader_note(rb: ReaderBaseline) -> str:
    """The reader baseline in one line (the advice's notes: every view shows them)."""
    measured = "" if rb.measured_events_per_s is None else (
        f"; the calibration's loop with that reader measured "
        f"{rb.measured_events_per_s:,.0f} events/s ({rb.measured_cache}, {opening(rb)})"
        + ("" if rb.measured_baseline_events_per_s is None else
           f", {rb.measured_baseline_events_per_s:,.0f} with the cold open per file"))
    return (f"baseline as your program reads ({rb.description}): predicted "
            f"{rb.events_per_s:,.0f} events/s, 1 worker, cold, files opened (replayed I/O "
            f"{rb.io_s:.2f} s + fitted CPU {rb.cpu_s:.2f} s){measured}")


def _engine_key(engine: str, spec: ReaderSpec | None) -> str:
    """The cache key's engine: the event loop ran ``spec`` where given."""
    return engine if spec is None else f"{engine} reader={spec.text} " \
        f"branches={','.join(spec.branches or ())}"


def _reader_baseline(spec: ReaderSpec, dataset: DatasetProfile,
                     calibration: Calibration | None, site: SiteProfile, baseline: Any,
                     branches: Sequence[str] | None, maps: Sequence[BasketMap]
                     ) -> tuple[ReaderBaseline | None, list[str]]:
    """The program's reader replayed (``hep_advisor.models.replay.baseline``) on the sampled basket
    maps, or ``None`` and why."""
    from hep_advisor.models.replay.baseline import reader_baseline

    tree = dataset.main_tree
    if tree is not None and tree.format == "rntuple":
        return None, [f"reader {spec.text}: no baseline: the files hold an RNTuple ("
                      f"{tree.name!r}), and the reader replays model TTree readers"]
    if tree is None or not maps:
        return None, [f"reader {spec.text}: no baseline: no basket map of the files"]
    try:
        return reader_baseline(spec, maps, tree.files, calibration, site, baseline,
                               branches), []
    except ValueError as exc:
        return None, [f"reader {spec.text}: no baseline: {exc}"]


def _inputs(paths: Paths) -> list[str]:
    return [str(paths)] if isinstance(paths, (str, Path)) else [str(p) for p in paths]


def _usable(inputs: Sequence[str], sample: int | None,
            on_file: Callable[[int, int, str], None] | None,
            on_probed: Callable[[DatasetProfile], None] | None = None) -> DatasetProfile:
    """The dataset probe; :class:`NoUsableData` when it found no usable ROOT file."""
    from hep_advisor.probes import probe_dataset

    dataset = probe_dataset(list(inputs), sample=sample, progress=on_file)
    if on_probed is not None:
        on_probed(dataset)
    if not dataset.usable:
        causes = "; ".join(f"{e.path}: {e.error}" for e in dataset.errors[:3])
        raise NoUsableData(f"no usable ROOT file in {', '.join(inputs)}"
                           + (f" ({causes})" if causes else ""))
    return dataset


def _label(inputs: Sequence[str]) -> str:
    if len(inputs) == 1:
        return Path(inputs[0].rstrip("/")).name or inputs[0]
    return f"{Path(inputs[0]).name} and {len(inputs) - 1} more"
