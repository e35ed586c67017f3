"""What every rule sees: the site, the dataset, the calibration and the fitted model, and the
one way rules get a predicted speed-up: a scenario through the model."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from models.scenarios import (
    Baseline,
    ModelSummary,
    PredictionPoint,
    Scenario,
    ScenarioResult,
    predict_scenarios,
)
from models.throughput import ThroughputModel
from probes.readtests.results import Calibration
from probes.results import DatasetProfile, SiteProfile, TreeProfile

from ..advice import (
    MIN_SPEEDUP,
    Action,
    Audience,
    Evidence,
    Option,
    Recommendation,
    Verdict,
    severity_for,
)


@dataclass(frozen=True)
class Context:
    site: SiteProfile
    dataset: DatasetProfile
    calibration: Calibration | None
    model: ThroughputModel
    baseline: Baseline
    summary: ModelSummary
    verdict: Verdict
    label: str = "dataset"
    inputs: tuple[str, ...] = ()
    branches: tuple[str, ...] = ()
    level: float = 0.9
    #: per context (``replace`` starts a new one): scenario -> its result
    _results: dict[Scenario, ScenarioResult] = field(default_factory=dict, init=False,
                                                     repr=False, compare=False)

    @property
    def tree(self) -> TreeProfile | None:
        trees = self.dataset.trees
        return max(trees, key=lambda t: t.compressed_bytes) if trees else None

    @property
    def workers_now(self) -> int:
        return self.baseline.workers

    @property
    def cores(self) -> int:
        return self.site.cpu.physical_cores or self.site.cpu.logical_cores or 1

    @property
    def logical(self) -> int:
        return self.site.cpu.logical_cores or self.cores

    def run(self, scenario: Scenario) -> ScenarioResult:
        """The scenario through the model, once per scenario (``make`` reuses the result)."""
        if scenario not in self._results:
            self._results[scenario] = predict_scenarios(self.model, self.baseline, [scenario],
                                                        level=self.level)[0]
        return self._results[scenario]

    def predict(self, scenario: Scenario) -> PredictionPoint:
        """The scenario at its own worker count (default: the analysis' as now), with the
        speed-up over the analysis as it runs now."""
        return self.run(scenario).predictions[0]

    def files_arg(self) -> str:
        """The inputs as a shell argument naming ROOT files (a directory becomes its
        ``*.root``), for commands such as ``hadd`` that take files."""
        import os
        import shlex

        if not self.inputs:
            return "FILES.root"
        out = []
        for p in self.inputs:
            out.append(f"{shlex.quote(p.rstrip('/'))}/*.root" if os.path.isdir(p)
                       else shlex.quote(p))
        return " ".join(out)

    def param(self, name: str) -> float:
        return float(getattr(self.baseline.params, name, 0.0))

    def param_evidence(self, name: str, label: str, scale: float = 1.0, unit: str = "",
                       digits: int = 3) -> Evidence:
        p = self.summary.parameters.get(name)
        source = "fitted"
        note = None
        if p is not None:
            source = {"measured": "measured", "fitted": "fitted", "assumed": "assumed",
                      "fixed": "assumed"}[p.source]
            if p.uncertainty is not None:
                note = f"± {_round(p.uncertainty * scale, digits)} (1σ)"
        return Evidence(label, _round(self.param(name) * scale, digits), unit or
                        (p.unit if p else ""), source, note)  # type: ignore[arg-type]

    def make(self, *, code: str, kind: str, title: str, audience: Audience,
             point: PredictionPoint, scenario: Scenario, summary: str,
             evidence: Sequence[Evidence], actions: Sequence[Action],
             options: Sequence[Option] = (), extra_assumptions: Sequence[str] = ()
             ) -> Recommendation | None:
        """The recommendation, or ``None`` when the predicted speed-up is below
        ``MIN_SPEEDUP`` (it does not apply)."""
        s = point.speedup
        if s is None or s < MIN_SPEEDUP:
            return None
        return Recommendation(
            code=code, kind=kind, title=title, severity=severity_for(s), audience=audience,
            predicted_speedup=round(s, 3), speedup_low=round(point.speedup_low or s, 3),
            speedup_high=round(point.speedup_high or s, 3), workers=point.workers,
            scenario=scenario.name, summary=summary, evidence=tuple(evidence),
            actions=tuple(actions),
            assumptions=tuple(dict.fromkeys((*self.run(scenario).assumptions,
                                             *extra_assumptions))),
            options=tuple(options), dataset=self.label)


def _round(x: float, digits: int) -> float:
    from math import floor, log10

    if x == 0 or x != x:
        return x
    return round(x, max(0, digits - 1 - floor(log10(abs(x)))))
