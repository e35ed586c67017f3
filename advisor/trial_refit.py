"""Feeding trials back into the model: a sample's before and after reads become two more
measured configuration points, the model is fitted again to the calibration and them, and the
recommendations are ranked again with the refitted model.

The before point is the analysis as it runs now (the baseline's configuration at one worker,
its rate the sample's compressed MB over the median cold time, opening included); the after
point is the scenario that ``try`` predicted the sample with, applied to that configuration
(its rate: the changed sample's MB over its median time).  Both weigh as much as a read test
measured to the model's noise level.

The points are kept (:func:`store_trial`) beside the dataset's cached calibration and advice,
``KEY.trials.json`` in the cache directory, under the same key (the files' paths, sizes and
modification times, the engine, branches and analysis): a changed file is a new key, so
trials of other data are never used.  ``advise()`` refits with them (:func:`with_stored_trials`):
later ``report`` and ``tui`` runs rank with the measured trials, each labelled as one (an
evidence line ``measured trial`` on the tried recommendation, and a note).
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hep_advisor.models.scenarios import Scenario

    from .advice import Advice
    from .trial_result import TrialResult

#: Trials kept per dataset (the latest of each code, at most this many in all).
MAX_STORED = 6
TRIALS_FORMAT = 1


@dataclass(frozen=True)
class TrialPoint:
    """One trial's two measured configurations (feature rows of the model) and their rates."""

    code: str
    created: str
    realised_speedup: float
    sample_files: int
    sample_bytes: int
    before: dict[str, float]
    after: dict[str, float]
    before_mb_per_s: float
    after_mb_per_s: float

    def label(self) -> str:
        return (f"{self.code} realised {self.realised_speedup:.2f}x on {self.sample_files} "
                f"file(s), {self.sample_bytes / 1e6:,.1f} MB ({self.created[:10]})")


def trial_point(advice: Advice, result: TrialResult, scenario: Scenario) -> TrialPoint:
    """``result``'s two points as configurations of ``advice``'s fitted baseline.  Raises
    ``ValueError`` when the advice has no fitted baseline."""
    from hep_advisor.models.physics import FEATURES

    base = advice.baseline
    if base is None:
        raise ValueError("no fitted model to refit")
    s = result.sample
    before = {k: float(v) for k, v in base.row(1).items() if k in FEATURES}
    after = {k: float(v) for k, v in scenario.apply(base).row(1).items() if k in FEATURES}
    return TrialPoint(
        code=result.code,
        created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        realised_speedup=result.realised_speedup, sample_files=s.files, sample_bytes=s.bytes,
        before=before, after=after,
        before_mb_per_s=s.bytes / 1e6 / result.before.seconds,
        after_mb_per_s=s.output_bytes / 1e6 / result.after.seconds)


def refit_with(advice: Advice, points: Sequence[TrialPoint], *, stored: bool = False,
               branches: Sequence[str] | None = None, uses: Sequence[str] | None = None
               ) -> Advice:
    """``advice`` with the model fitted again including ``points``, its verdict and
    recommendations derived again, each tried recommendation carrying a ``measured trial``
    evidence line.  ``stored``: the points came from the cache (said in the note).  Raises
    ``ValueError`` when the advice has no calibration or fitted baseline."""
    from hep_advisor.models.physics import config_matrix
    from hep_advisor.models.scenarios import summarize
    from hep_advisor.models.scenarios.baseline import calibrated_baseline

    from .advice import Evidence
    from .core import fit_maps
    from .recommend import Context, recommend
    from .verdict import verdict

    cal, dataset, site, base = advice.calibration, advice.dataset, advice.site, advice.baseline
    if cal is None or base is None:
        raise ValueError("no calibration or fitted model to refit")
    if not points:
        return advice
    rows = [r for p in points for r in (p.before, p.after)]
    y = [v for p in points for v in (p.before_mb_per_s, p.after_mb_per_s)]
    model, baseline = calibrated_baseline(cal, dataset, site, extra_X=config_matrix(rows),
                                          extra_y=y, access=base.access,
                                          maps=fit_maps(cal, dataset))
    logical = site.cpu.logical_cores or 1
    summary = summarize(model, baseline, list(range(1, 2 * logical + 1)))
    v = verdict(baseline)
    ctx = Context(site=site, dataset=dataset, calibration=cal, model=model, baseline=baseline,
                  summary=summary, verdict=v, label=advice.label, inputs=advice.inputs,
                  branches=tuple(branches or ()), uses=tuple(uses or ()), level=0.9)
    latest = {p.code: p for p in points}
    recs = []
    for r in recommend(ctx):
        p = latest.get(r.code)
        if p is not None:
            r = replace(r, evidence=(*r.evidence, Evidence(
                "measured trial", round(p.realised_speedup, 3), "x", "measured",
                f"hep-advisor try on {p.sample_files} file(s), {p.sample_bytes / 1e6:,.1f} "
                f"MB ({p.created[:10]}); the model was refitted with its before and after "
                "reads")))
        recs.append(r)
    where = "stored with the cached advice" if stored else "of this run"
    note = (f"refitted with {len(points)} measured trial(s) {where}: "
            + "; ".join(p.label() for p in points))
    return replace(advice, model=summary, verdict=v, recommendations=tuple(recs),
                   fitted=model, baseline=baseline, notes=(*advice.notes, note))


def refit_advice(advice: Advice, result: TrialResult, scenario: Scenario) -> Advice:
    """``advice`` refitted with ``result``'s two points (see :func:`refit_with`)."""
    return refit_with(advice, [trial_point(advice, result, scenario)])


# -- the points kept with the cached advice --------------------------------------------------
def trials_path(key: str) -> Path:
    from .cache import cache_dir

    return cache_dir() / f"{key}.trials.json"


def load_trials(key: str | None) -> tuple[TrialPoint, ...]:
    """The trials stored under ``key`` (none where there are none or they cannot be read)."""
    from .jsonio import JsonInputError, from_jsonable

    if key is None:
        return ()
    path = trials_path(key)
    try:
        doc = json.loads(path.read_text())
        if doc.get("format") != TRIALS_FORMAT:
            return ()
        return tuple(from_jsonable(tuple[TrialPoint, ...], doc["trials"], str(path), "trials"))
    except (OSError, ValueError, KeyError, TypeError, AttributeError, JsonInputError):
        return ()


def store_trial(key: str | None, point: TrialPoint) -> Path | None:
    """Keep ``point`` under ``key`` (replacing an earlier trial of the same code); the path,
    or ``None`` where nothing could be written (no key, a read-only cache)."""
    from .fileio import write_atomically
    from .jsonio import to_jsonable

    if key is None:
        return None
    kept = [p for p in load_trials(key) if p.code != point.code][-(MAX_STORED - 1):]
    doc: dict[str, Any] = {"format": TRIALS_FORMAT, "trials": to_jsonable([*kept, point])}
    path = trials_path(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, json.dumps(doc))
    except OSError:
        return None
    return path


def with_stored_trials(advice: Advice, key: str | None,
                       branches: Sequence[str] | None = None,
                       uses: Sequence[str] | None = None) -> Advice:
    """``advice`` refitted with the trials stored under ``key``; unchanged where there are
    none, or the refit fails (said in a note)."""
    points = load_trials(key)
    if not points or advice.baseline is None or advice.calibration is None:
        return advice
    try:
        return refit_with(advice, points, stored=True, branches=branches, uses=uses)
    except ValueError as exc:
        return replace(advice, notes=(*advice.notes, f"stored trials not used: {exc}"))
