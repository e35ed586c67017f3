"""Rich view of a ``ModelSummary``: the parameters with their sources, and the predictions of
the baseline and of each what-if, with intervals and speed-ups."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from hep_advisor.models.scenarios import ModelSummary, PredictionPoint
from hep_advisor.render import fmt

SOURCE_STYLE = {"measured": "green", "fitted": "cyan", "assumed": "yellow", "fixed": "white"}


def _value(x: float) -> str:
    if x >= 1e5:
        return f"{x:.3g}"
    return fmt.num(x, 0 if x >= 100 else 1 if x >= 10 else 2 if x >= 0.1 else 4)


def parameters_table(summary: ModelSummary) -> Table:
    t = Table(title="model parameters", title_justify="left")
    t.add_column("parameter")
    t.add_column("value", justify="right")
    t.add_column("± (1σ)", justify="right")
    t.add_column("unit")
    t.add_column("source")
    for name, p in summary.parameters.items():
        unc = fmt.UNKNOWN if p.uncertainty is None else _value(p.uncertainty)
        t.add_row(name, _value(p.value), unc, p.unit,
                  Text(p.source, style=SOURCE_STYLE.get(p.source, "")))
    return t


def predictions_table(title: str, points: Sequence[PredictionPoint], level: float) -> Table:
    speedups = any(p.speedup is not None for p in points)
    t = Table(title=title, title_justify="left")
    t.add_column("workers", justify="right")
    t.add_column("aggregate MB/s", justify="right")
    t.add_column(f"low ({100 * level:.0f}%)", justify="right")
    t.add_column("high", justify="right")
    t.add_column("events/s", justify="right")
    if speedups:
        t.add_column("speed-up", justify="right")
    for p in points:
        row = [str(p.workers), fmt.num(p.aggregate_mb_per_s, 1), fmt.num(p.low, 1),
               fmt.num(p.high, 1), fmt.num(p.events_per_s)]
        if speedups:
            row.append(_speedup(p))
        t.add_row(*row)
    return t


def _speedup(p: PredictionPoint) -> str:
    if p.speedup is None:
        return fmt.UNKNOWN
    text = f"{p.speedup:.2f}×"
    if p.speedup_low is not None and p.speedup_high is not None:
        text += f" [dim]({p.speedup_low:.2f}–{p.speedup_high:.2f})[/]"
    return text


def _assumptions(lines: Sequence[str]) -> list[Text]:
    if not lines:
        return []
    return [Text("assumptions:", style="yellow")] + [Text(f"  • {x}", style="yellow")
                                                     for x in lines]


def _self_check(summary: ModelSummary) -> list[Text]:
    """The self-check's warning and each configuration the model misses, where any does."""
    from hep_advisor.models.selfcheck import describe, failures, warning_line

    line = warning_line(summary.self_check)
    if line is None:
        return ([Text(f"self-check: the model passes through all {len(summary.self_check)} "
                      "measured configurations (within 10% or their spread)", style="dim")]
                if summary.self_check else [])
    return [Text(f"⚠ model self-check: {line}", style="bold red"),
            *(Text(f"  – {describe(c)}", style="red") for c in failures(summary.self_check))]


def model_view(summary: ModelSummary) -> RenderableType:
    parts: list[RenderableType] = []
    if summary.site is not None or summary.workload is not None:
        names = [x.name for x in (summary.site, summary.workload) if x is not None]
        parts.append(Text(" · ".join(names), style="bold"))
    parts.append(parameters_table(summary))
    cpu = f"{summary.cores} cores"
    if summary.threads_per_core > 1:
        cpu += (f", {summary.threads_per_core} hardware threads each (an extra thread worth "
                f"{summary.ht_weight:g} of a core)")
    parts.append(Text(cpu, style="dim"))
    parts.extend(_assumptions(summary.assumptions))
    parts.extend(_self_check(summary))
    parts.append(predictions_table("baseline", summary.predictions, summary.level))
    for sc in summary.scenarios:
        parts.append(predictions_table(f"what if: {sc.name}", sc.predictions, summary.level))
        parts.append(Text(sc.description, style="dim"))
        parts.extend(_assumptions(sc.assumptions))
    what = ("fitted to the calibration" if summary.source == "calibration"
            else "from the site and workload descriptions (not measured)")
    title = f"[bold]throughput model[/] — {what}"
    return Panel(Group(*parts), title=title, title_align="left")
