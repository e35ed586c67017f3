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
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hep_advisor.findings.trial import TrialPoint

if TYPE_CHECKING:
    from hep_advisor.findings.advice import Advice
    from hep_advisor.findings.trial import TrialResult
    from hep_advisor.models.scenarios import Scenario

#: Trials kept per dataset (the latest of each code, at most this many in all).
MAX_STORED = 6
TRIALS_FORMAT = 1


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
    """``advice`` derived again (:func:`~hep_advisor.pipeline.derive.advise_from`, with the
    options it was derived with: branches, uses, reader, basket maps, replays) from a model
    fitted with ``points`` too; each tried recommendation carries a ``measured trial``
    evidence line.  ``stored``: the points came from the cache (said in the note);
    ``branches``/``uses`` override the advice's own.  Its cluster and trace parts are kept.
    Raises ``ValueError`` when the advice has no calibration or fitted baseline."""
    from hep_advisor.pipeline.derive import advise_from, with_cluster_advice, with_trace

    if advice.calibration is None or advice.baseline is None:
        raise ValueError("no calibration or fitted model to refit")
    if not points:
        return advice
    o = advice.options
    again = advise_from(
        advice.site, advice.dataset, advice.calibration, label=advice.label,
        inputs=advice.inputs, calibration_created=advice.calibration_created,
        branches=o.branches if branches is None else branches,
        uses=o.uses if uses is None else uses, level=o.level, replay_merge=o.replay_merge,
        basket_maps=o.basket_maps, reader=o.reader, trials=tuple(points),
        trials_stored=stored, access=advice.baseline.access)
    if advice.cluster is not None:
        again = with_cluster_advice(again, advice.cluster)
    if advice.trace is not None:
        again = with_trace(again, advice.trace)
    return replace(again, calibration_reused=advice.calibration_reused)


def refit_advice(advice: Advice, result: TrialResult, scenario: Scenario) -> Advice:
    """``advice`` refitted with ``result``'s two points (see :func:`refit_with`)."""
    return refit_with(advice, [trial_point(advice, result, scenario)])


# -- the points kept with the cached advice --------------------------------------------------
def trials_path(key: str) -> Path:
    from hep_advisor.pipeline.cache import cache_dir

    return cache_dir() / f"{key}.trials.json"


def load_trials(key: str | None) -> tuple[TrialPoint, ...]:
    """The trials stored under ``key`` (none where there are none or they cannot be read)."""
    from hep_advisor.findings.jsonio import JsonInputError, from_jsonable

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
    from hep_advisor.findings.jsonio import to_jsonable
    from hep_advisor.pipeline.fileio import write_atomically

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
