"""What the report's three skins (terminal, Markdown, HTML) share: the text of each figure,
the legend, the site and dataset summaries (the scaling data and its table are in
:mod:`hep_advisor.render.scaling`, number formats in :mod:`hep_advisor.render.fmt`).

Plain strings and dataclasses only (no Rich, no matplotlib), so that every view says the same
thing in the same words.
"""

from __future__ import annotations

import math

from hep_advisor.findings.advice import Advice, Report
from hep_advisor.findings.recommendation import (
    CRITICAL_SPEEDUP,
    MIN_SPEEDUP,
    TRUSTED_WIDTH,
    WARNING_SPEEDUP,
    Recommendation,
)
from hep_advisor.probes.results import DatasetProfile, SiteProfile
from hep_advisor.render import fmt
from hep_advisor.render.fmt import percent, times

SEVERITY_LABEL = {"critical": "CRITICAL", "warning": "WARNING", "uncertain": "UNCERTAIN",
                  "info": "INFO"}
SOURCE_NOTE = {
    "measured": "a read test on this data",
    "probed": "the site or the files' metadata",
    "derived": "computed from measured or probed figures",
    "fitted": "a parameter of the fitted model",
    "assumed": "an assumption (not measured here)",
    "threshold": "the threshold the rule compared with",
}


def level_of(report: Report) -> float:
    """The level of the intervals (the models'; 0.9 when no model was fitted)."""
    for a in report.advice:
        if a.model is not None:
            return a.model.level
    return 0.9


def counts_line(report: Report) -> str:
    """``6 recommendations: 1 critical, 2 warnings, 3 uncertain; 1 not recommended``: those
    marked not recommended (their own measurement says otherwise) counted apart."""
    recs = report.recommendations
    shown = [r for r in recs if r.contradicted is None]
    rejected = len(recs) - len(shown)
    by = {k: sum(1 for r in shown if r.severity == k)
          for k in ("critical", "warning", "uncertain", "info")}

    def plural(k: int, word: str) -> str:
        return f"{k} {word}{'' if k == 1 else 's'}"

    kinds = [f"{by['critical']} critical" if by["critical"] else "",
             plural(by["warning"], "warning") if by["warning"] else "",
             f"{by['uncertain']} uncertain" if by["uncertain"] else "",
             f"{by['info']} info" if by["info"] else ""]
    text = plural(len(shown), "recommendation")
    named = [k for k in kinds if k]
    if named:
        text += ": " + ", ".join(named)
    if rejected:
        text += f"; {rejected} not recommended"
    return text


def legend_lines(level: float) -> list[str]:
    return [
        f"Severity from the predicted speed-up: critical ≥ {times(CRITICAL_SPEEDUP)}, "
        f"warning ≥ {times(WARNING_SPEEDUP)}, each only where the interval's low end is at "
        f"least {times(WARNING_SPEEDUP)} and the interval no wider than "
        f"{times(TRUSTED_WIDTH)}; a gain the interval does not support is uncertain (try "
        f"it); info ≥ {times(MIN_SPEEDUP)}; a recommendation predicted below "
        f"{times(MIN_SPEEDUP)} does not apply and is not shown.",
        f"Speed-ups compare the time to read the same events with the analysis as it runs now; "
        "times come from one engine: your reader's requests replayed through the measured "
        "device, plus the CPU the calibration measured, spread over the workers; "
        f"intervals are {percent(level)} intervals from the inputs' measured run-to-run "
        "spreads, each input moved alone and the shifts added (before and after together); "
        "an input nothing measured spans its plausible range, labelled assumed.",
        "A recommendation whose own measurement points the other way beyond its interval is "
        "marked not recommended and counted apart. The model check counts the measured "
        "points the model passes within 10% (or the measurement's spread); a miss touches a "
        "recommendation where the term it tests carries 10% of the recommendation's time, "
        "before or after the change, and only then is it a warning.",
        "Evidence sources: " + "; ".join(f"{k}: {v}" for k, v in SOURCE_NOTE.items()) + ".",
        "MB = 10^6 bytes (KiB = 2^10 bytes, as Linux counts its read-ahead); MB/s are "
        "compressed MB read per second.",
    ]


def speedup_line(rec: Recommendation, level: float = 0.9) -> str:
    """``predicted speed-up 1.8× (90%: 1.5–2.1×)``, or for a recommendation its own
    measurement contradicts, ``not recommended: measured ...`` (not a gain)."""
    text = fmt.speedup_level(rec.predicted_speedup, rec.speedup_low, rec.speedup_high, level)
    if rec.contradicted:
        return f"not recommended: its own measurement says otherwise (the model alone " \
            f"predicted {text})"
    return f"predicted speed-up {text}"


def uncertain_why(rec: Recommendation) -> str:
    """Why a recommendation is uncertain: ``the interval 1.2–2.1× reaches below 1.25×``."""
    lo, hi = rec.speedup_low, rec.speedup_high
    why = []
    if lo < WARNING_SPEEDUP:
        why.append(f"reaches below {times(WARNING_SPEEDUP)}")
    if lo > 0 and hi / lo > TRUSTED_WIDTH:
        why.append(f"is wider than {times(TRUSTED_WIDTH)} (high over low)")
    interval = f"{times(lo)[:-1]}–{times(hi)}"
    return f"the interval {interval} {' and '.join(why) or 'does not support the gain'}"


def uncertain_text(rec: Recommendation) -> str:
    """Why an uncertain recommendation is so, and what measures it (``try`` where it can,
    else the rule's ``measure``)."""
    from hep_advisor.rules.registry import rule

    r = rule(rec.code)
    measure = r.measure if r is not None else "time the analysis once with the change applied"
    return f"{uncertain_why(rec)}; measure it first: {measure}"


def meta_line(rec: Recommendation) -> str:
    """``for the analyst · at 4 workers · dataset small files``."""
    workers = f"{rec.workers} worker{'s' if rec.workers != 1 else ''}"
    parts = [f"for the {rec.audience}", f"at {workers}"]
    if rec.dataset:
        parts.append(f"dataset {rec.dataset}")
    return " · ".join(parts)


def evidence_value(value: float | str, unit: str) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        text = fmt.UNKNOWN
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        text = fmt.plain(float(value))
    else:
        text = str(value)
    return f"{text} {unit}".strip() if unit else text


def command_language(command: str) -> str:
    """``python`` for a code snippet, ``bash`` for a command line (for highlighting)."""
    first = command.lstrip().splitlines()[0] if command.strip() else ""
    pythonish = ("import ", "from ", "ROOT.", "uproot.", "dask", "coffea", "with ", "for ",
                 "def ", "#", "TProof", "f = ", "tree")
    if first.startswith(pythonish) or ("(" in first and " -" not in first and "=" in first):
        return "python"
    return "bash"


# -- site and dataset summaries ----------------------------------------------------------------

def site_lines(site: SiteProfile) -> list[tuple[str, str]]:
    from hep_advisor.render.probe_view import storage_line

    cpu, mem = site.cpu, site.memory
    cores = (f"{fmt.text(cpu.physical_cores)} physical, {fmt.text(cpu.logical_cores)} logical"
             + (f" · {cpu.model}" if cpu.model else "") + f" · load {fmt.num(cpu.load_avg_1m, 2)}")
    out = [("host", f"{site.hostname} ({site.os})"), ("cores", cores),
           ("memory", f"{fmt.gb(mem.total_bytes)} total, {fmt.gb(mem.available_bytes)} "
                      "available")]
    out += [("storage", f"{s.path}: {storage_line(s)}") for s in site.storage]
    return out


def dataset_text(ds: DatasetProfile, open_s: float | None = None) -> str:
    """The dataset in one line; ``open_s``: the open cost per file the model uses (measured
    by the calibration), shown instead of the probe's own timing: one figure per fact."""
    from hep_advisor.render.probe_view import compression_text

    parts = [f"{ds.files:,} file{'s' if ds.files != 1 else ''}, {fmt.mb(ds.total_bytes)}"]
    if ds.sampling.method != "all":
        parts[0] += (f" ({ds.sampling.opened_files:,} of {ds.sampling.stated_files:,} opened, "
                     "totals extrapolated)")
    for tr in ds.trees:
        rntuple = tr.format == "rntuple"
        t = (f"{'RNTuple' if rntuple else 'tree'} {tr.name}: {tr.entries:,} entries, "
             f"{tr.branches} {'fields' if rntuple else 'branches'}, "
             f"{compression_text(tr.compression)} (factor {fmt.ratio(tr.compression_factor)}), "
             f"{'pages' if rntuple else 'baskets'} {fmt.kb(tr.baskets.mean_compressed_bytes)} mean")
        if tr.clusters is not None:
            t += f", clusters of {fmt.num(tr.clusters.mean_entries)} entries"
        if open_s is not None:
            t += f", open {fmt.ms(open_s)} per file (measured)"
        elif tr.open_s is not None:
            t += f", open {fmt.ms(tr.open_s.median_s)} per file (probed)"
        parts.append(t)
    if any(tr.format == "rntuple" for tr in ds.trees):
        parts.append("RNTuple: the per-call, per-basket and parallel-loop read tests are not made "
                     "for it yet (the model assumes their terms); T001 and R001 stay silent")
    if ds.errors:
        parts.append(f"{len(ds.errors)} unusable input{'s' if len(ds.errors) != 1 else ''}")
    return " · ".join(parts)


def calibration_text(advice: Advice, absolute: bool = False) -> str:
    """How the advice was calibrated; ``absolute``: its date and time (UTC) instead of its
    age (a page to share)."""
    cal = advice.calibration
    if cal is None:
        return "not calibrated"
    status = "partial (cancelled)" if cal.partial else "complete"
    text = (f"{status}: {cal.elapsed_s:.1f} s of a {cal.budget_s:.0f} s budget, "
            f"{fmt.mb(cal.bytes_read)} read from {cal.files_used} "
            f"file{'s' if cal.files_used != 1 else ''} with {cal.engine}")
    if advice.calibration_created and absolute:
        text += f" · measured {absolute_time(advice.calibration_created)}"
    elif advice.calibration_created:
        try:
            from hep_advisor.pipeline.cache import age_seconds, describe_age

            text += f" · measured {describe_age(age_seconds(advice.calibration_created))}"
        except (ImportError, ValueError):
            text += f" · measured {advice.calibration_created}"
    return text


def skipped_lines(advice: Advice) -> list[str]:
    """The read tests the calibration left out, each with its reason ("LABEL: reason")."""
    from hep_advisor.render.labels import TEST_LABELS

    cal = advice.calibration
    if cal is None:
        return []
    return [f"{TEST_LABELS.get(s.test, s.test.replace('_', ' '))}: {s.reason}"
            for s in cal.skipped]


def model_open_s(advice: Advice) -> float | None:
    """The open cost per file the fitted model uses (``None``: no model, or not measured)."""
    p = advice.model.parameters.get("open_s") if advice.model is not None else None
    return p.value if p is not None and p.source == "measured" and p.value > 0 else None


def absolute_time(iso: str) -> str:
    """``2026-12-07 04:31 UTC`` from an ISO time (as given where it cannot be read)."""
    import datetime as dt

    try:
        t = dt.datetime.fromisoformat(iso)
    except ValueError:
        return iso
    if t.tzinfo is not None:
        t = t.astimezone(dt.timezone.utc)
    return t.strftime("%Y-%m-%d %H:%M UTC")


def dataset_lines(advice: Advice, absolute: bool = False) -> list[tuple[str, str]]:
    out = [("data", dataset_text(advice.dataset, model_open_s(advice)))]
    if advice.inputs:
        out.insert(0, ("inputs", ", ".join(advice.inputs)))
    out.append(("calibration", calibration_text(advice, absolute)))
    out += [("not measured", skip) for skip in skipped_lines(advice)]
    out += [("note", n) for n in advice.notes]
    return out
