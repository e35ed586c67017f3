"""Feeding a trial back into the model: the sample's before and after reads become two more
measured configuration points, the model is fitted again to the calibration and them, and the
recommendations are ranked again with the refitted model.

The before point is the analysis as it runs now (the baseline's configuration at one worker,
its rate the sample's compressed MB over the median cold time, opening included); the after
point is the scenario that ``try`` predicted the sample with, applied to that configuration
(its rate: the changed sample's MB over its median time).  Both weigh as much as a read test
measured to the model's noise level.  The refitted advice is returned, not cached: the next
``advise()`` starts from the calibration again.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from models.scenarios import Scenario

    from .advice import Advice
    from .trial import TrialResult


def refit_advice(advice: Advice, result: TrialResult, scenario: Scenario) -> Advice:
    """``advice`` with the model fitted again including ``result``'s two points, and its
    verdict and recommendations derived again.  Raises ``ValueError`` when the advice has no
    calibration or fitted baseline."""
    from models.physics import FEATURES, config_matrix
    from models.scenarios import summarize
    from models.scenarios.baseline import calibrated_baseline

    from .recommend import Context, recommend
    from .verdict import verdict

    cal, dataset, site, base = advice.calibration, advice.dataset, advice.site, advice.baseline
    if cal is None or base is None:
        raise ValueError("no calibration or fitted model to refit")
    s = result.sample
    before = {k: v for k, v in base.row(1).items() if k in FEATURES}
    after = {k: v for k, v in scenario.apply(base).row(1).items() if k in FEATURES}
    y = [s.bytes / 1e6 / result.before.seconds, s.output_bytes / 1e6 / result.after.seconds]
    model, baseline = calibrated_baseline(cal, dataset, site,
                                          extra_X=config_matrix([before, after]), extra_y=y,
                                          access=base.access)
    logical = site.cpu.logical_cores or 1
    summary = summarize(model, baseline, list(range(1, 2 * logical + 1)))
    v = verdict(baseline)
    ctx = Context(site=site, dataset=dataset, calibration=cal, model=model, baseline=baseline,
                  summary=summary, verdict=v, label=advice.label, inputs=advice.inputs,
                  level=0.9)
    recs = tuple(recommend(ctx))
    note = (f"refitted with try {result.code}'s before and after points (realised "
            f"{result.realised_speedup:.2f}x on {s.files} file(s), {s.bytes / 1e6:,.1f} MB)")
    return replace(advice, model=summary, verdict=v, recommendations=recs, fitted=model,
                   baseline=baseline, notes=(*advice.notes, note))
