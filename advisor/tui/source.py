"""Where the TUI's advice comes from: a dataset to advise on (``AdviceSource``), or an
``Advice`` made elsewhere (``FixedAdvice``, for notebooks and tests).

Textual-free: a loader is called in a worker thread with the progress callback, the cancel
event and whether to recalibrate, and returns the ``Advice`` with how old its calibration is.
A loader whose call also takes ``on_probed`` (:func:`takes_on_probed`; ``AdviceSource`` does)
is given a callback for the site and dataset probes (:class:`Probed`), which it calls as soon
as they are known, seconds into a calibration that takes a minute.
Heavy modules (the core, uproot, scikit-learn) are imported here, inside the call, so that the
app draws its first screen before they load.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from hep_advisor.findings.advice import Advice
    from hep_advisor.probes.readtests.runner import ProgressCallback
    from hep_advisor.probes.results import DatasetProfile, SiteProfile


@dataclass(frozen=True)
class Loaded:
    """A loader's result: the advice, and the age of a reused (cached) calibration in seconds
    (``None``: calibrated just now, or not known)."""

    advice: Advice
    cached_age_s: float | None = None


@dataclass(frozen=True)
class Probed:
    """What the probes found, before the read tests: the site, the dataset and its name (as
    the advice will name it)."""

    site: SiteProfile
    dataset: DatasetProfile
    label: str


OnProbed = Callable[[Probed], None]


def takes_on_probed(loader: object) -> bool:
    """Whether ``loader``'s call takes the ``on_probed`` keyword."""
    try:
        return "on_probed" in inspect.signature(loader).parameters  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def dataset_label(paths: Sequence[str]) -> str:
    """The dataset's name when none is given: as ``advise`` names it."""
    if len(paths) == 1:
        return Path(paths[0].rstrip("/")).name or paths[0]
    return f"{Path(paths[0]).name} and {len(paths) - 1} more"


class Loader(Protocol):
    @property
    def description(self) -> str:
        """One line for the status bar and the Calibrate tab: what is advised on."""

    @property
    def can_recalibrate(self) -> bool:
        """Whether ``r`` can re-run the read tests."""

    def __call__(self, progress: ProgressCallback, cancel: threading.Event,
                 recalibrate: bool) -> Loaded: ...


@dataclass(frozen=True)
class AdviceSource:
    """Advise on ``paths`` (``None``: the demo's small files), as ``hep-advisor tui`` does."""

    paths: tuple[str, ...] | None = None
    budget_s: float = 60.0
    engine: str = "uproot"
    branches: tuple[str, ...] | None = None
    analysis: str | None = None
    label: str | None = None
    can_recalibrate: bool = True
    #: the branches the analysis uses (``--uses``)
    uses: tuple[str, ...] | None = None
    #: ``--dask``: a Dask scheduler address or ``local:N`` (the Cluster tab)
    dask: str | None = None
    #: ``--trace FILE``: the user's program, traced (``hep_advisor.findings.trace.Trace``; the Trace
    #: tab)
    trace: Any = None
    #: ``--reader SPEC``: the program's reader (``hep_advisor.probes.readtests.readers.ReaderSpec``)
    reader: Any = None

    @property
    def description(self) -> str:
        if self.paths is None:
            return "the demo's small files"
        if len(self.paths) == 1:
            return self.paths[0]
        return f"{self.paths[0]} and {len(self.paths) - 1} more"

    def __call__(self, progress: ProgressCallback, cancel: threading.Event,
                 recalibrate: bool, on_probed: OnProbed | None = None) -> Loaded:
        from hep_advisor.pipeline import cache
        from hep_advisor.pipeline.advise import advise

        paths = list(self.paths) if self.paths is not None else None
        label = self.label
        if paths is None:
            from hep_advisor.demo import ensure_demo
            from hep_advisor.probes.readtests.runner import ProgressEvent

            def writing(done: int, total: int, name: str) -> None:
                progress(ProgressEvent("probe", done / max(total, 1),
                                       f"writing the demo data (first use): {name}"))

            demo = ensure_demo(progress=writing)
            paths, label = [str(demo / "small_files")], label or "small files"
        branches = list(self.branches) if self.branches else None
        name = label or dataset_label(paths)

        def probed(site: SiteProfile, dataset: DatasetProfile) -> None:
            if on_probed is not None:
                on_probed(Probed(site, dataset, name))

        advice = advise(paths, budget_s=self.budget_s, engine=self.engine, progress=progress,
                        branches=branches, analysis=self.analysis, cancel=cancel,
                        recalibrate=recalibrate, label=label, uses=self.uses, dask=self.dask,
                        trace=self.trace, reader=self.reader, on_probed=probed)
        created = advice.calibration_created
        reused = advice.calibration_reused and created is not None
        return Loaded(advice, cache.age_seconds(created) if reused and created else None)

    def quick(self) -> Loaded | None:
        """The advice the cache holds for these unchanged files, read without fitting the
        model (no scikit-learn, no SciPy): shown at once, until the full advice replaces it.
        ``None`` when there is none (or the demo data are not written yet)."""
        from hep_advisor.pipeline import cache
        from hep_advisor.pipeline.advise import cached_advice

        paths = list(self.paths) if self.paths is not None else None
        if paths is None:
            from hep_advisor.demo.datasets import MANIFEST, default_demo_dir

            demo = default_demo_dir()
            if not (demo / MANIFEST).exists():
                return None
            paths = [str(demo / "small_files")]
        branches = list(self.branches) if self.branches else None
        advice = cached_advice(paths, self.engine, branches=branches, analysis=self.analysis,
                               uses=self.uses, reader=self.reader)
        created = advice.calibration_created if advice is not None else None
        if advice is None or created is None:
            return None
        if self.label is not None or self.paths is None:
            from dataclasses import replace

            advice = replace(advice, label=self.label or "small files")
        if self.trace is not None:  # as advise(..., trace=...) adds it
            from dataclasses import replace

            from hep_advisor.findings.trace import trace_notes

            advice = replace(advice, notes=advice.notes + trace_notes(self.trace),
                             trace=self.trace)
        return Loaded(advice, cache.age_seconds(created))


@dataclass(frozen=True)
class FixedAdvice:
    """An ``Advice`` already made: shown as it is (``r`` has nothing to re-run)."""

    advice: Advice
    cached_age_s: float | None = None
    description: str = "advice given by the caller"
    can_recalibrate: bool = False

    def __call__(self, progress: ProgressCallback, cancel: threading.Event,
                 recalibrate: bool) -> Loaded:
        return Loaded(self.advice, self.cached_age_s)
