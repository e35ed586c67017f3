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

from hep_advisor.findings.advice import Advice
from hep_advisor.pipeline.basketmaps import fit_maps, sample_basket_maps
from hep_advisor.pipeline.derive import (
    ADVISOR_LOOP,
    advise_from,
    fit,
    reader_baseline_of,
    reader_spec,
    with_cluster_advice,
    with_trace,
)
from hep_advisor.probes.dataset import DEFAULT_SAMPLE
from hep_advisor.probes.readtests.pace import median_s, with_reference
from hep_advisor.probes.readtests.results import Calibration
from hep_advisor.probes.readtests.runner import ProgressCallback, ProgressEvent
from hep_advisor.probes.results import DatasetProfile, SiteProfile

if TYPE_CHECKING:
    from hep_advisor.findings.cluster import ClusterAdvice
    from hep_advisor.models.reader_baseline import ReaderBaseline
    from hep_advisor.models.scenarios import ModelSummary
    from hep_advisor.probes.readtests.readers import ReaderSpec

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
           reader: Any = None,
           on_probed: Callable[[SiteProfile, DatasetProfile], None] | None = None) -> Advice:
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
    ``hep_advisor.findings.trace.Trace`` of the user's program (``hep-advisor trace``): its reader
    findings (U0xx) are added to ``advice.notes``.  ``dask``: a Dask scheduler address,
    ``local:N`` or a ``distributed.Client``: every node is probed too (``advice.cluster``,
    its advice D001-D003 among the recommendations; see
    ``hep_advisor.pipeline.cluster_calibration``).  ``reader``: the program's reader (a spec such as
    ``"uproot.iterate"``, a trace JSON file, or a
    ``hep_advisor.probes.readtests.readers.ReaderSpec``): the event loop runs it and
    ``advice.reader_baseline`` is its replayed baseline (``ValueError`` for a bad spec).
    ``on_probed(site, dataset)`` is called once both are known, before the read tests start
    (seconds into the budget; with a cached calibration, with the dataset probe stored with
    it), so that a view can show them while the calibration runs; it is not called when no
    input is usable.
    """
    from hep_advisor.pipeline import cache as calcache
    from hep_advisor.probes import probe_site, storage_paths
    from hep_advisor.probes.readtests.calibrate import calibrate

    started = time.monotonic()  # the budget counts from here: the probe's time comes out of it
    spec = reader_spec(reader, engine, analysis)
    inputs = _inputs(paths)
    name = label or _label(inputs)
    analysis_key = analysis if isinstance(analysis, str) or analysis is None else \
        f"{getattr(analysis, '__module__', '?')}:{getattr(analysis, '__qualname__', '?')}"
    key = calcache.cache_key(inputs, engine_key(engine, spec), branches, analysis_key,
                             sample=sample) if cache else None
    hit = None if recalibrate else calcache.load(key)
    if progress is not None:
        progress(ProgressEvent("probe", 0.0, "probing the site and the files"))
    if site is None:
        site = probe_site(storage_paths(inputs))
    if hit is not None:
        dataset, cal, created = hit.dataset, hit.calibration, hit.created
        if on_probed is not None:
            on_probed(site, dataset)
        if progress is not None:
            progress(ProgressEvent("probe", 1.0, "cached calibration reused",
                                   f"calibrated {calcache.describe_age(hit.age_s)}"))
    else:
        def on_file(done: int, total: int, message: str) -> None:
            if progress is not None and total:
                progress(ProgressEvent("probe", done / total, message))

        dataset = _usable(inputs, sample, on_file)
        if on_probed is not None:
            on_probed(site, dataset)
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
                                 replay_merge=replay_merge,
                                 reader=ADVISOR_LOOP if spec is None else spec),
                     calibration_reused=hit is not None)
    from hep_advisor.pipeline.trial_refit import (
        with_stored_trials,  # `try`'s measured trials of these files
    )

    advice = with_stored_trials(advice, key, branches, uses)
    calcache.store_advice(key, advice, uses, replay_merge=replay_merge)
    if dask is not None:  # measured each time: not cached
        from hep_advisor.pipeline.cluster_calibration import calibrate_cluster

        advice = with_cluster_advice(advice, calibrate_cluster(
            dask, advice.dataset, budget_s=budget_s, branches=branches, analysis=analysis,
            progress=progress, cancel=cancel, label=advice.label))
    if trace is not None:  # the user's own program, traced: its reader findings as notes
        advice = with_trace(advice, trace)
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
    from hep_advisor.pipeline import cache as calcache

    spec = reader_spec(reader, engine, analysis)
    key = calcache.cache_key(_inputs(paths), engine_key(engine, spec), branches,
                             analysis, sample=sample)
    return calcache.load_advice(key, uses, replay_merge=replay_merge)


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
    #: with ``dask``: every node of the cluster probed
    #: (``hep_advisor.pipeline.cluster_calibration``)
    cluster: ClusterAdvice | None = None
    #: with ``reader``: the baseline as the program reads (``hep_advisor.models.reader_baseline``)
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
    spec = reader_spec(reader, engine, analysis)  # ``reader``: as advise's
    inputs = _inputs(paths)
    dataset = _usable(inputs, sample, None, on_probed)
    site = probe_site(storage_paths(inputs, dataset.file_paths))
    extra = {} if workers is None else {"workers": tuple(workers)}
    cal = calibrate(dataset, budget_s=_left(budget_s, started), engine=engine, branches=branches,
                    analysis=analysis, progress=progress, cancel=cancel, reader=spec, **extra)
    from hep_advisor.rules.branches import selection_notes

    summary, baseline, notes = calibration_summary(cal, dataset, site, workers or ())
    cluster = None
    if dask is not None:  # ``dask``: as advise's
        from hep_advisor.pipeline.cluster_calibration import calibrate_cluster

        cluster = calibrate_cluster(dask, dataset, budget_s=budget_s, branches=branches,
                                    analysis=analysis, progress=progress, cancel=cancel)
    rb = None
    if spec is not None and baseline is not None:
        rb, why = reader_baseline_of(spec, dataset, cal, site, baseline, branches,
                                   sample_basket_maps(dataset, inputs=inputs))
        notes += tuple(why)
    return Calibrated(site, dataset, cal, summary,
                      selection_notes(dataset, branches, uses) + notes, cluster, rb)


def calibration_summary(cal: Calibration, dataset: DatasetProfile, site: SiteProfile,
                        workers: Sequence[int] = ()
                        ) -> tuple[ModelSummary | None, Any, tuple[str, ...]]:
    """The model fitted to ``cal`` (:func:`~.derive.fit`), its predictions for 1 .. 2 x the
    logical cores (and ``workers``) and the baseline it was fitted for; ``(None, None, ("no
    model: REASON",))`` when the calibration cannot be fitted."""
    try:
        fitted = fit(cal, dataset, site, maps=fit_maps(cal, dataset), workers=workers)
    except ValueError as exc:
        return None, None, (f"no model: {exc}",)
    return fitted.summary, fitted.baseline, ()


def engine_key(engine: str, spec: ReaderSpec | None) -> str:
    """The cache key's engine: the event loop ran ``spec`` where given."""
    return engine if spec is None else f"{engine} reader={spec.text} " \
        f"branches={','.join(spec.branches or ())}"


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
