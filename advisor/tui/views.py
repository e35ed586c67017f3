"""What the panes show, as Textual ``Content`` (theme colours by variable, so that the light
and the dark theme both read well).  Pure functions of the advice's objects."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content

from hep_advisor.render import fmt
from hep_advisor.render.report_parts import speedup_line

if TYPE_CHECKING:
    from hep_advisor.findings.advice import Verdict
    from hep_advisor.findings.recommendation import Recommendation
    from hep_advisor.models.scenarios import PredictionPoint
    from hep_advisor.probes.results import DatasetProfile, SiteProfile, StorageInfo

SEVERITY_STYLE = {"critical": "bold $text-error", "warning": "bold $text-warning",
                  "uncertain": "bold $text-accent", "info": "bold $text-primary"}
SEVERITY_BADGE = {"critical": "▲▲", "warning": "▲ ", "uncertain": "? ", "info": "● "}
_EIGHTHS = " ▏▎▍▌▋▊▉"


def bar(fraction: float, width: int) -> str:
    """A horizontal bar of ``width`` cells, filled to ``fraction`` in eighths of a cell."""
    eighths = round(max(0.0, min(1.0, fraction)) * width * 8)
    full, part = divmod(eighths, 8)
    s = "█" * full + (_EIGHTHS[part] if part else "")
    return s + " " * (width - len(s))


def verdict_content(v: Verdict, width: int = 30) -> Content:
    """The headline, then one bar per limit: its share of the time."""
    parts: list[Content | tuple[str, str] | str] = [(v.headline, "bold"), "\n"]
    label_w = max(len(s.limit) for s in v.shares) if v.shares else 10
    for s in v.shares:
        style = "$text-error" if s is v.shares[0] else "$text-primary"
        parts += [f"{s.limit:<{label_w}} ", (bar(s.share, width), style),
                  f" {100 * s.share:3.0f}%", "\n"]
    return Content.assemble(*parts).rstrip()


def rec_line(i: int, r: Recommendation, width: int | None = None) -> Content:
    title = r.title
    if width is not None and len(title) > width:
        title = title[: width - 1] + "…"
    return Content.assemble(
        (f"{i:>2} ", "$text-muted"), (SEVERITY_BADGE[r.severity], SEVERITY_STYLE[r.severity]),
        ("  not" if r.contradicted else fmt.times(r.predicted_speedup).rjust(5),
         "$text-error" if r.contradicted else "bold"), " ", title)


def top_recommendations(recs: tuple[Recommendation, ...], n: int = 3) -> Content:
    if not recs:
        return Content.styled("No recommendation applies: nothing predicted to gain 5% or more.",
                              "$text-muted")
    lines = []
    for i, r in enumerate(recs[:n], 1):
        lines.append(Content.assemble(
            rec_line(i, r), (f"  ({_interval(r.speedup_low, r.speedup_high)}, "
                             f"{_jobs(r.workers)})", "$text-muted")))
    if len(recs) > n:
        lines.append(Content.styled(f"   … and {len(recs) - n} more on the Advice tab (5)",
                                    "$text-muted"))
    return Content("\n").join(lines)


def storage_short(s: StorageInfo) -> str:
    """One short line: file system, device, kind, read-ahead."""
    if s.fs_class == "remote":
        return f"remote ({fmt.text(s.fs_type)})"
    parts = [f"{fmt.text(s.fs_type)} on {fmt.text(s.device)}"]
    if s.rotational is not None:
        parts.append("HDD" if s.rotational else "SSD")
    if len(s.physical_devices) > 1:
        parts.append(f"{len(s.physical_devices)} disks")
    if s.read_ahead_kb is not None:
        parts.append(f"RA {s.read_ahead_kb} kB")
    return " · ".join(parts)


def site_card(site: SiteProfile) -> Content:
    cpu, mem = site.cpu, site.memory
    lines = [Content.assemble((site.hostname, "bold"), (f" · {site.os}", "$text-muted"))]
    cores = f"{fmt.text(cpu.physical_cores)} cores, {fmt.text(cpu.logical_cores)} threads"
    lines.append(Content(cores + (f" · {cpu.model}" if cpu.model else "")))
    lines.append(Content(f"RAM {fmt.gb(mem.total_bytes)} ({fmt.gb(mem.available_bytes)} free)"))
    for s in site.storage[:2]:
        lines.append(Content.styled(storage_short(s), "$text-muted"))
    return Content("\n").join(lines)


def dataset_card(label: str, ds: DatasetProfile) -> Content:
    from hep_advisor.render.probe_view import compression_text

    lines = [Content.assemble((label, "bold"),
                              f" · {ds.files} file{'s' if ds.files != 1 else ''}"
                              f" · {fmt.mb(ds.total_bytes)}")]
    for t in ds.trees[:2]:
        rntuple = t.format == "rntuple"
        lines.append(Content(f"{'RNTuple ' if rntuple else ''}{t.name}: {t.entries:,} entries, "
                             f"{t.branches} {'fields' if rntuple else 'branches'}"))
        basket = fmt.kb(t.baskets.mean_compressed_bytes)
        open_ms = f" · open {fmt.ms(t.open_s.median_s)}" if t.open_s else ""
        lines.append(Content.styled(
            f"{compression_text(t.compression)} {fmt.ratio(t.compression_factor)} · "
            f"{'pages' if rntuple else 'baskets'} {basket}{open_ms}", "$text-muted"))
    if len(ds.trees) > 2:
        lines.append(Content.styled(f"… {len(ds.trees) - 2} more trees", "$text-muted"))
    if ds.sampling.method == "sampled":
        lines.append(Content.styled(
            f"sampled: {ds.sampling.opened_files} of {ds.sampling.stated_files} files opened",
            "$text-warning"))
    if ds.errors:
        lines.append(Content.styled(f"{len(ds.errors)} unreadable input(s)", "$text-error"))
    return Content("\n").join(lines)


def recommendation_detail(r: Recommendation) -> Content:
    """Title, gain, summary, evidence, options and assumptions (the actions are a list of
    their own, to select and copy)."""
    jobs = f"{r.workers} job{'s' if r.workers != 1 else ''}"
    parts: list[Content] = [
        Content.assemble((r.title, "bold"), "\n",
                         (f"{r.severity} · {r.kind} ({r.code}) · for the {r.audience}",
                          SEVERITY_STYLE[r.severity])),
        (Content.styled(speedup_line(r), "bold $text-error") if r.contradicted else
         Content.assemble("Predicted: ",
                          (fmt.speedup_text(r.predicted_speedup), "bold $text-success"),
                          f" faster (interval {_interval(r.speedup_low, r.speedup_high)})"
                          f" at {jobs}; scenario: {r.scenario}")),
        Content(r.summary),
    ]
    if r.rank_note:
        parts.append(Content.styled(r.rank_note, "$text-warning"))
    if r.evidence:
        rows = [Content.styled("Evidence", "bold underline")]
        for e in r.evidence:
            value = f"{e.value:,.4g}" if isinstance(e.value, float) else str(e.value)
            rows.append(Content.assemble(
                f"• {e.name}: ", (f"{value}{' ' + e.unit if e.unit else ''}", "bold"),
                (f"  [{e.source}]", "$text-muted"),
                *([(f" {e.note}", "$text-muted")] if e.note else [])))
        parts.append(Content("\n").join(rows))
    if r.options:
        rows = [Content.styled("Options", "bold underline")]
        for o in r.options:
            rows.append(Content.assemble(
                f"• {o.name}: ",
                (fmt.speedup_text(o.predicted_speedup, o.speedup_low, o.speedup_high), "bold"),
                *([(f" ({o.caveat})", "$text-muted")] if o.caveat else [])))
        parts.append(Content("\n").join(rows))
    if r.assumptions:
        rows = [Content.styled("Assumptions", "bold underline")]
        rows += [Content.styled(f"• {a}", "$text-muted") for a in r.assumptions]
        parts.append(Content("\n").join(rows))
    return Content("\n\n").join(parts)


def prediction_content(now: PredictionPoint | None, new: PredictionPoint,
                       level: float) -> Content:
    """The what-if's prediction against the analysis as it runs now."""
    lines: list[Content] = []
    if now is not None:
        lines.append(Content.assemble(("Now      ", "$text-muted"),
                                      (fmt.mb_per_s(now.aggregate_mb_per_s), "bold"),
                                      f" · {_jobs(now.workers)}"))
    lines.append(Content.assemble(("What-if  ", "$text-muted"),
                                  (fmt.mb_per_s(new.aggregate_mb_per_s), "bold $text-accent"),
                                  f" · {_jobs(new.workers)}"))
    lines.append(Content.assemble(("Interval ", "$text-muted"),
                                  f"{fmt.rate(new.low)}–{fmt.mb_per_s(new.high)} "
                                  f"({fmt.percent(level)})"))
    if new.events_per_s is not None:
        lines.append(Content.assemble(("Events   ", "$text-muted"),
                                      f"{fmt.num(new.events_per_s)}/s"))
    if new.speedup is not None:
        style = "bold $text-success" if new.speedup >= 1.05 else \
            "bold $text-error" if new.speedup < 0.95 else "bold"
        low, high = new.speedup_low, new.speedup_high
        interval = f" ({_interval(low, high)})" if low and high else ""
        lines.append(Content.assemble(("Speed-up ", "$text-muted"),
                                      (fmt.speedup_text(new.speedup), style),
                                      (interval, "$text-muted")))
    if now is not None and now.aggregate_mb_per_s > 0:
        top = max(now.aggregate_mb_per_s, new.aggregate_mb_per_s)
        lines.append(Content.assemble(("now      ", "$text-muted"),
                                      (bar(now.aggregate_mb_per_s / top, 20), "$text-primary")))
        lines.append(Content.assemble(("what-if  ", "$text-muted"),
                                      (bar(new.aggregate_mb_per_s / top, 20), "$text-accent")))
    return Content("\n").join(lines)


def _interval(low: float, high: float) -> str:
    """``2.35–2.84×``: a speed-up's interval, as the report prints it."""
    return f"{fmt.times(low)[:-1]}–{fmt.times(high)}"


def _jobs(n: int) -> str:
    return f"{n} job{'s' if n != 1 else ''}"
