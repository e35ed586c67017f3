"""``hep-advisor explain``: one recommendation's full card (its evidence, assumptions and every
command), or the model check point by point, from an advice already made (the cache).

The card is the verbose report's (:func:`.advice_view.recommendation_view`); above it, which
dataset and which advice it comes from; under it, the one command the short report offers and
what measures the change.
"""

from __future__ import annotations

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from hep_advisor.findings.advice import Report
from hep_advisor.render import fmt, modelcheck, summary
from hep_advisor.render import report_parts as parts
from hep_advisor.render.advice_view import model_check_view, recommendation_view
from hep_advisor.render.short_view import CommandLine


def _source(report: Report, label: str) -> str:
    a = next((x for x in report.advice if x.label == label), None)
    if a is None or not a.calibration_created:
        return f"dataset {label}"
    return (f"dataset {label} · the advice of the calibration measured "
            f"{parts.absolute_time(a.calibration_created)}")


def explain_card(report: Report, code: str) -> RenderableType:
    """Every recommendation ``code`` of ``report`` (one per dataset it applies to), in full;
    where there is none, what the rule looks for."""
    from hep_advisor.rules.registry import rule

    code = code.upper()
    r = rule(code)
    recs = [(i, rec) for i, rec in enumerate(report.recommendations, 1) if rec.code == code]
    out: list[RenderableType] = []
    if not recs:
        names = ", ".join(a.label for a in report.advice) or "these files"
        out.append(Text(f"{code} is not among the recommendations for {names}.",
                        style="bold"))
        if r is not None:
            out += [Text(f"{code} ({r.family}): {r.title}"),
                    Text(f"when: {r.trigger}", style="dim"),
                    Text(f"predicted by: {r.prediction}", style="dim")]
        return Group(*out)
    for rank, rec in recs:
        out.append(Text(_source(report, rec.dataset), style="dim"))
        out.append(recommendation_view(rank, rec, parts.level_of(report)))
        act = summary.action(report, rec)
        out.append(CommandLine(act.lead, act.command, act.note, indent=0,
                               caution=act.caution))
        if r is not None:
            out.append(Text(f"what measures it: {r.measure}", style="dim"))
        out.append(Text(""))
    return Group(*out)


def _points_table(report: Report, label: str, rate_model: bool = False) -> RenderableType:
    """The engine's points of dataset ``label`` (``rate_model``: the fitted rate model's,
    kept where the replay is the engine)."""
    a = next(x for x in report.advice if x.label == label)
    checks = (a.model.rate_model_check if rate_model else a.model.self_check) \
        if a.model is not None else ()
    title = (f"{label}: {sum(1 for c in checks if c.ok)} of {len(checks)} points within "
             "tolerance")
    if rate_model:
        title = (f"{label}, the fitted rate model (what-ifs of other sites, fallbacks): "
                 f"{sum(1 for c in checks if c.ok)} of {len(checks)} points")
    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="dim",
              title=title, title_justify="left", title_style="bold")
    t.add_column("point")
    t.add_column("predicted", justify="right", no_wrap=True)
    t.add_column("measured", justify="right", no_wrap=True)
    t.add_column("ratio", justify="right", no_wrap=True)
    t.add_column("tolerance", justify="right", no_wrap=True)
    t.add_column("", no_wrap=True)
    for c in checks:
        t.add_row(modelcheck.point_label(c.test), fmt.sig(c.predicted), fmt.sig(c.measured),
                  f"{c.ratio:.2f}x", f"±{100 * c.tolerance:.0f}%",
                  Text("ok", style="green") if c.ok else Text("miss", style="bold yellow"))
    return t


def explain_model_check(report: Report) -> RenderableType:
    """The model check in full: every point of every dataset (MB/s), then each miss with the
    recommendations whose time its term carries."""
    out: list[RenderableType] = []
    for a in report.advice:
        if a.model is None:
            out.append(Text(f"{a.label}: no fitted model, nothing to check", style="yellow"))
            continue
        out += [_points_table(report, a.label), Text("")]
        if a.model.rate_model_check:
            out += [_points_table(report, a.label, rate_model=True), Text("")]
    out.append(Text("predicted and measured: compressed MB read per second; a point passes "
                    "within 10% or within twice its measurement's spread", style="dim"))
    out += [Text(""), model_check_view(report)]
    return Group(*out)
