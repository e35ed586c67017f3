"""What-ifs from keywords: the scenarios of ``models.scenarios`` built from plain values, as
``Advice.predict`` and the TUI's what-if controls give them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from models import scenarios as sc
from models.scenarios import Baseline, PredictionPoint, Scenario
from models.throughput import ThroughputModel

#: The keywords :func:`scenario_from` understands.
KEYWORDS = ("merge_mb", "read_ahead_kb", "request_bytes", "cached", "storage", "compression",
            "branches")


def scenario_from(baseline: Baseline, **kw: Any) -> Scenario | None:
    """One scenario from keywords (``None``: no change).  Unknown keywords and bad values
    raise ``ValueError`` with one line naming the keyword."""
    unknown = set(kw) - set(KEYWORDS)
    if unknown:
        raise ValueError(f"unknown what-if keyword(s): {', '.join(sorted(unknown))}; expected "
                         f"{', '.join(KEYWORDS)}")
    parts: list[Scenario] = []
    if kw.get("merge_mb"):
        parts.append(sc.merge(float(kw["merge_mb"])))
    if kw.get("compression"):
        parts.append(sc.compression(str(kw["compression"])))
    if kw.get("branches") is not None and float(kw["branches"]) < 1.0:
        parts.append(sc.branches(float(kw["branches"])))
    if kw.get("request_bytes"):
        parts.append(sc.request_size(float(kw["request_bytes"])))
    if kw.get("read_ahead_kb"):
        parts.append(sc.read_ahead(float(kw["read_ahead_kb"])))
    if kw.get("storage"):
        spec, sd, statement = sc.parse_storage(str(kw["storage"]), baseline)
        parts.append(sc.devices(spec, sd, (statement,)))
    if kw.get("cached"):
        parts.append(sc.cached())
    if not parts:
        return None
    return sc.combine(*parts)


def predict(model: ThroughputModel, baseline: Baseline,
            workers: int | Sequence[int] | None = None, level: float = 0.9,
            **kw: Any) -> list[PredictionPoint]:
    """Predictions at each worker count (default: the baseline's) with the what-if applied,
    and the speed-up over the baseline at the baseline's own worker count."""
    counts = [workers] if isinstance(workers, int) else list(workers or [baseline.workers])
    scenario = scenario_from(baseline, **kw) or Scenario("as now", "no change", lambda b: b)
    out: list[PredictionPoint] = []
    for n in counts:
        pinned = sc.combine(scenario, sc.workers(int(n)), name=scenario.name)
        out.extend(sc.predict_scenarios(model, baseline, [pinned], level=level)[0].predictions)
    return out
