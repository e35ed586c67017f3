"""``advise()``: the one UI-free entry point the report, the TUI and notebooks call.

probe the site and the dataset -> calibrate (or reuse a cached calibration) -> fit the model ->
the verdict and the recommendations.  :func:`advise_from` is the last two steps alone, a pure
function of (site, dataset, calibration): it runs in well under a second.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from probes.dataset import DEFAULT_SAMPLE
from probes.readtests.results import Calibration
from probes.readtests.runner import ProgressCallback, ProgressEvent
from probes.results import DatasetProfile, SiteProfile

from .advice import Advice, Report

DEFAULT_BUDGET_S = 60.0
#: The demo datasets a report covers when it is given no path: (label, path under the demo).
DEMO_DATASETS = (("small files", "small_files"), ("plain merge", "merged"),
                 ("LZMA file", "flat/pythia_lzma7.root"))


class NoUsableData(ValueError):
    """The inputs hold no usable ROOT file (the one-line reason is the message)."""


def advise(paths: str | Path | Sequence[str | Path] | None = None,
           budget_s: float = DEFAULT_BUDGET_S, engine: str = "uproot",
           site: SiteProfile | None = None, analysis: str | Callable[..., Any] | None = None,
           progress: ProgressCallback | None = None, *,
           branches: Sequence[str] | None = None, cancel: threading.Event | None = None,
           cache: bool = True, recalibrate: bool = False, label: str | None = None,
           sample: int | None = DEFAULT_SAMPLE) -> Advice:
    """Probe, calibrate within ``budget_s`` seconds, fit the model and advise.

    ``paths``: ROOT files, directories or globs (one dataset; default: the demo's small
    files).  ``site``: an already probed site (default: probe this machine).  ``analysis``:
    the user's analysis (``"module:function"`` or a callable) timed in the event loop;
    ``branches``: the branches it reads.  ``progress`` receives ``ProgressEvent``s (the
    probe's as test ``"probe"``, then the read tests'); ``cancel`` (a ``threading.Event``)
    stops the read tests early (the advice is then based on partial results, marked so).
    With ``cache`` a calibration of the same unchanged files (same engine, branches and
    analysis) is reused; ``recalibrate`` forces a new one (and stores it).

    Raises :class:`NoUsableData` when no input is a usable ROOT file; bad inputs besides
    usable ones are listed in ``advice.dataset.errors``.
    """
    from probes import probe_dataset, probe_site, storage_paths
    from probes.readtests.calibrate import calibrate

    from . import cache as calcache

    if paths is None:
        from .demo import ensure_demo

        paths = [str(ensure_demo() / "small_files")]
        label = label or "small files"
    inputs = [str(paths)] if isinstance(paths, (str, Path)) else [str(p) for p in paths]
    name = label or _label(inputs)
    analysis_key = analysis if isinstance(analysis, str) or analysis is None else \
        f"{getattr(analysis, '__module__', '?')}:{getattr(analysis, '__qualname__', '?')}"
    key = calcache.cache_key(inputs, engine, branches, analysis_key) if cache else None
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

        dataset = probe_dataset(inputs, sample=sample, progress=on_file)
        if not dataset.usable:
            causes = "; ".join(f"{e.path}: {e.error}" for e in dataset.errors[:3])
            raise NoUsableData(f"no usable ROOT file in {', '.join(inputs)}"
                               + (f" ({causes})" if causes else ""))
        if progress is not None:
            progress(ProgressEvent("probe", 1.0, "probed",
                                   f"{dataset.files} files, {dataset.total_bytes / 1e6:.1f} MB"))
        cal = calibrate(dataset, budget_s=budget_s, engine=engine, branches=branches,
                        analysis=analysis, progress=progress, cancel=cancel)
        created = calcache.store(key, dataset, cal)
    advice = replace(advise_from(site, dataset, cal, label=name, inputs=tuple(inputs),
                                 calibration_created=created, branches=branches),
                     calibration_reused=hit is not None)
    calcache.store_advice(key, advice)
    return advice


def cached_advice(paths: str | Path | Sequence[str | Path], engine: str = "uproot", *,
                  branches: Sequence[str] | None = None, analysis: str | None = None
                  ) -> Advice | None:
    """What the last ``advise`` of these unchanged files concluded, read from the cache
    without fitting the model (``None`` if there is none).  Its ``predict`` is not available:
    the fitted model is not stored.  It takes a fraction of a second, without scikit-learn."""
    from . import cache as calcache

    inputs = [str(paths)] if isinstance(paths, (str, Path)) else [str(p) for p in paths]
    return calcache.load_advice(calcache.cache_key(inputs, engine, branches, analysis))


def advise_from(site: SiteProfile, dataset: DatasetProfile, calibration: Calibration | None,
                *, label: str = "dataset", inputs: Sequence[str] = (),
                calibration_created: str | None = None,
                branches: Sequence[str] | None = None, level: float = 0.9) -> Advice:
    """The verdict and the ranked recommendations from measurements already made."""
    from models.scenarios import calibrated_baseline, summarize

    from .recommend import Context, recommend
    from .verdict import verdict

    notes: list[str] = []
    model = baseline = summary = None
    if calibration is not None:
        try:
            model, baseline = calibrated_baseline(calibration, dataset, site)
        except ValueError as exc:
            notes.append(f"no model: {exc}")
    if calibration is not None and calibration.partial:
        notes.append("the calibration was cancelled: the advice rests on partial results")
    recs: tuple = ()
    v = None
    if model is not None and baseline is not None:
        logical = site.cpu.logical_cores or 1
        counts = list(range(1, 2 * logical + 1))
        summary = summarize(model, baseline, counts, level=level)
        v = verdict(baseline)
        ctx = Context(site=site, dataset=dataset, calibration=calibration, model=model,
                      baseline=baseline, summary=summary, verdict=v, label=label,
                      inputs=tuple(inputs), branches=tuple(branches or ()), level=level)
        recs = tuple(recommend(ctx))
    return Advice(label=label, site=site, dataset=dataset, calibration=calibration,
                  model=summary, verdict=v, recommendations=recs, inputs=tuple(inputs),
                  calibration_created=calibration_created, notes=tuple(notes), fitted=model,
                  baseline=baseline)


def demo_report(budget_s: float = DEFAULT_BUDGET_S, progress: ProgressCallback | None = None,
                cancel: threading.Event | None = None, cache: bool = True,
                recalibrate: bool = False, engine: str = "uproot",
                demo_dir: str | Path | None = None) -> Report:
    """The report on the demo datasets (small files, their plain merge, the LZMA file),
    sharing ``budget_s`` between them."""
    from probes import probe_site

    from .demo import ensure_demo

    root = Path(demo_dir) if demo_dir is not None else ensure_demo()
    site = probe_site([str(root)])
    each = budget_s / len(DEMO_DATASETS)
    advice = []
    for label, rel in DEMO_DATASETS:
        if cancel is not None and cancel.is_set():
            break
        advice.append(advise([str(root / rel)], budget_s=each, engine=engine, site=site,
                             progress=progress, cancel=cancel, cache=cache,
                             recalibrate=recalibrate, label=label))
    return Report(site=site, advice=tuple(advice))


def _label(inputs: Sequence[str]) -> str:
    if len(inputs) == 1:
        return Path(inputs[0].rstrip("/")).name or inputs[0]
    return f"{Path(inputs[0]).name} and {len(inputs) - 1} more"
