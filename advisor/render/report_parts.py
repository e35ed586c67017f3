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
    """``2 critical issues · 1 warning · 5 recommendations``."""
    c = report.counts()
    n = len(report.recommendations)

    def plural(k: int, word: str) -> str:
        return f"{k} {word}{'' if k == 1 else 's'}"

    return " · ".join((plural(c["critical"], "critical issue"), plural(c["warning"], "warning"),
                       plural(n, "recommendation")))


def legend_lines(level: float) -> list[str]:
    return [
        f"Severity from the predicted speed-up: critical ≥ {times(CRITICAL_SPEEDUP)}, "
        f"warning ≥ {times(WARNING_SPEEDUP)}, each only where the interval's low end is at "
        f"least {times(WARNING_SPEEDUP)} and the interval no wider than "
        f"{times(TRUSTED_WIDTH)}; a gain the interval does not support is uncertain (try "
        f"it); info ≥ {times(MIN_SPEEDUP)}; a recommendation predicted below "
        f"{times(MIN_SPEEDUP)} does not apply and is not shown.",
        f"Speed-ups compare the time to read the same events with the analysis as it runs now; "
        f"intervals are {percent(level)} intervals from the fitted model, including the "
        "calibration's run-to-run spread; a parameter nothing measured spans its plausible "
        "range.",
        "A recommendation whose own measurement points the other way beyond its interval is "
        "marked not recommended (info); the model's self-check lists any measured "
        "configuration it misses by more than 10% (or the measurement's spread).",
        "Evidence sources: " + "; ".join(f"{k}: {v}" for k, v in SOURCE_NOTE.items()) + ".",
        "MB = 10^6 bytes; MB/s are compressed bytes read per second.",
    ]


def self_check_warning(advice: Advice) -> str | None:
    """The warning where the fitted model misses a configuration its calibration measured
    (``hep_advisor.models.selfcheck``): which term disagrees and by how much; ``None`` where all
    pass."""
    from hep_advisor.models.selfcheck import warning_line

    checks = advice.model.self_check if advice.model is not None else ()
    line = warning_line(checks)
    return None if line is None else "Model self-check: " + line


def self_check_failures(advice: Advice, shown: int = 4) -> list[str]:
    """One line per configuration the model misses (the worst first), at most ``shown``."""
    from hep_advisor.models.selfcheck import describe, failures

    checks = advice.model.self_check if advice.model is not None else ()
    bad = sorted(failures(checks), key=lambda c: -max(c.ratio, 1 / c.ratio))
    out = [describe(c) for c in bad[:shown]]
    if len(bad) > shown:
        out.append(f"and {len(bad) - shown} more (the report's JSON lists every point under "
                   "model.self_check)")
    return out


def speedup_line(rec: Recommendation) -> str:
    """``predicted speed-up 1.8× (1.5–2.1×)``, or for a recommendation its own measurement
    contradicts, ``not recommended: measured ...`` (not a gain)."""
    text = fmt.speedup_text(rec.predicted_speedup, rec.speedup_low, rec.speedup_high)
    if rec.contradicted:
        return f"not recommended: its own measurement says otherwise (the model alone " \
            f"predicted {text})"
    return f"predicted speed-up {text}"


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
        text = f"{value:,g}" if abs(value) < 1e6 else f"{value:,.0f}"
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


def dataset_text(ds: DatasetProfile) -> str:
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
        if tr.open_s is not None:
            t += f", open {fmt.ms(tr.open_s.median_s)} per file"
        parts.append(t)
    if any(tr.format == "rntuple" for tr in ds.trees):
        parts.append("RNTuple: the per-call, per-basket and parallel-loop read tests are not made "
                     "for it yet (the model assumes their terms); T001 and R001 stay silent")
    if ds.errors:
        parts.append(f"{len(ds.errors)} unusable input{'s' if len(ds.errors) != 1 else ''}")
    return " · ".join(parts)


def calibration_text(advice: Advice) -> str:
    cal = advice.calibration
    if cal is None:
        return "not calibrated"
    status = "partial (cancelled)" if cal.partial else "complete"
    text = (f"{status}: {cal.elapsed_s:.1f} s of a {cal.budget_s:.0f} s budget, "
            f"{fmt.mb(cal.bytes_read)} read from {cal.files_used} "
            f"file{'s' if cal.files_used != 1 else ''} with {cal.engine}")
    if advice.calibration_created:
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


def dataset_lines(advice: Advice) -> list[tuple[str, str]]:
    out = [("data", dataset_text(advice.dataset))]
    if advice.inputs:
        out.insert(0, ("inputs", ", ".join(advice.inputs)))
    out.append(("calibration", calibration_text(advice)))
    out += [("not measured", skip) for skip in skipped_lines(advice)]
    out += [("note", n) for n in advice.notes]
    return out
