"""What the report's three skins (terminal, Markdown, HTML) and the plots share: the text of
each figure, the rows of the scaling table, the legend and the series of the scaling plot.

Plain strings and dataclasses only (no Rich, no matplotlib), so that every view says the same
thing in the same words.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from probes.results import DatasetProfile, SiteProfile

from ..advice import (
    CRITICAL_SPEEDUP,
    MIN_SPEEDUP,
    WARNING_SPEEDUP,
    Advice,
    Recommendation,
    Report,
)
from . import fmt

SEVERITY_LABEL = {"critical": "CRITICAL", "warning": "WARNING", "info": "INFO"}
SOURCE_NOTE = {
    "measured": "a read test on this data",
    "probed": "the site or the files' metadata",
    "derived": "computed from measured or probed figures",
    "fitted": "a parameter of the fitted model",
    "assumed": "an assumption (not measured here)",
    "threshold": "the threshold the rule compared with",
}
#: The scaling table shows every worker count up to this many rows, then a selection.
MAX_SCALING_ROWS = 12


def times(x: float) -> str:
    """A speed-up: ``1.8×``, ``1.05×``, ``2.0×``, ``12×``."""
    if x >= 10:
        return f"{x:.0f}×"
    text = f"{x:.2f}"
    if text.endswith("0"):
        text = text[:-1]
    return text + "×"


def speedup_text(s: float, low: float | None, high: float | None) -> str:
    """``1.8× (1.5–2.1×)``: the predicted speed-up with its interval."""
    if low is None or high is None:
        return times(s)
    return f"{times(s)} ({times(low)[:-1]}–{times(high)})"


def rate(x: float | None) -> str:
    if x is None:
        return fmt.UNKNOWN
    return fmt.num(x, 2 if x < 10 else 1 if x < 1000 else 0)


def rate_interval(mb: float, low: float | None, high: float | None) -> str:
    """``3.3 (2.1–5.1)``."""
    if low is None or high is None:
        return rate(mb)
    return f"{rate(mb)} ({rate(low)}–{rate(high)})"


def level_of(report: Report) -> float:
    """The level of the intervals (the models'; 0.9 when no model was fitted)."""
    for a in report.advice:
        if a.model is not None:
            return a.model.level
    return 0.9


def percent(level: float) -> str:
    return f"{100 * level:.0f}%"


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
        f"warning ≥ {times(WARNING_SPEEDUP)}, info ≥ {times(MIN_SPEEDUP)}; a recommendation "
        f"predicted below {times(MIN_SPEEDUP)} does not apply and is not shown.",
        f"Speed-ups compare the time to read the same events with the analysis as it runs now; "
        f"intervals are {percent(level)} intervals from the fitted model.",
        "Evidence sources: " + "; ".join(f"{k}: {v}" for k, v in SOURCE_NOTE.items()) + ".",
        "MB = 10^6 bytes; MB/s are compressed bytes read per second.",
    ]


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


# -- the scaling table -------------------------------------------------------------------------

@dataclass(frozen=True)
class ScalingRow:
    workers: int
    mb_per_s: float
    low: float
    high: float
    events_per_s: float | None
    speedup: float | None  # over the prediction at the analysis' worker count now
    now: bool


def now_workers(advice: Advice) -> int:
    return advice.verdict.workers if advice.verdict is not None else 1


def _selection(counts: Sequence[int], keep: Sequence[int]) -> set[int]:
    if len(counts) <= MAX_SCALING_ROWS:
        return set(counts)
    top = max(counts)
    chosen = {c for c in counts if c & (c - 1) == 0}  # powers of two
    chosen |= {c for c in keep if c in counts}
    chosen.add(top)
    return chosen


def scaling_rows(advice: Advice) -> list[ScalingRow]:
    """The baseline's predictions (a selection when there are many worker counts: the powers
    of two, the cores, the analysis' worker count and the recommended ones)."""
    if advice.model is None:
        return []
    points = advice.model.predictions
    now = now_workers(advice)
    ref = next((p for p in points if p.workers == now), None)
    cores = advice.site.cpu
    keep = [now, cores.physical_cores or 0, cores.logical_cores or 0,
            *(r.workers for r in advice.recommendations)]
    chosen = _selection([p.workers for p in points], keep)
    rows = []
    for p in points:
        if p.workers not in chosen:
            continue
        s = None if ref is None or not ref.aggregate_mb_per_s else \
            p.aggregate_mb_per_s / ref.aggregate_mb_per_s
        rows.append(ScalingRow(p.workers, p.aggregate_mb_per_s, p.low, p.high,
                               p.events_per_s, s, p.workers == now))
    return rows


# -- site and dataset summaries ----------------------------------------------------------------

def site_lines(site: SiteProfile) -> list[tuple[str, str]]:
    from .probe_view import storage_line

    cpu, mem = site.cpu, site.memory
    cores = (f"{fmt.text(cpu.physical_cores)} physical, {fmt.text(cpu.logical_cores)} logical"
             + (f" · {cpu.model}" if cpu.model else "") + f" · load {fmt.num(cpu.load_avg_1m, 2)}")
    out = [("host", f"{site.hostname} ({site.os})"), ("cores", cores),
           ("memory", f"{fmt.gb(mem.total_bytes)} total, {fmt.gb(mem.available_bytes)} "
                      "available")]
    out += [("storage", f"{s.path}: {storage_line(s)}") for s in site.storage]
    return out


def dataset_text(ds: DatasetProfile) -> str:
    from .probe_view import compression_text

    parts = [f"{ds.files:,} file{'s' if ds.files != 1 else ''}, {fmt.mb(ds.total_bytes)}"]
    if ds.sampling.method != "all":
        parts[0] += (f" ({ds.sampling.opened_files:,} of {ds.sampling.stated_files:,} opened, "
                     "totals extrapolated)")
    for tr in ds.trees:
        t = (f"tree {tr.name}: {tr.entries:,} entries, {tr.branches} branches, "
             f"{compression_text(tr.compression)} (factor {fmt.ratio(tr.compression_factor)}), "
             f"baskets {fmt.kb(tr.baskets.mean_compressed_bytes)} mean")
        if tr.clusters is not None:
            t += f", clusters of {fmt.num(tr.clusters.mean_entries)} entries"
        if tr.open_s is not None:
            t += f", open {fmt.ms(tr.open_s.median_s)} per file"
        parts.append(t)
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
            from ..cache import age_seconds, describe_age

            text += f" · measured {describe_age(age_seconds(advice.calibration_created))}"
        except (ImportError, ValueError):
            text += f" · measured {advice.calibration_created}"
    return text


def dataset_lines(advice: Advice) -> list[tuple[str, str]]:
    out = [("data", dataset_text(advice.dataset))]
    if advice.inputs:
        out.insert(0, ("inputs", ", ".join(advice.inputs)))
    out.append(("calibration", calibration_text(advice)))
    out += [("note", n) for n in advice.notes]
    return out


# -- the scaling plot's series -----------------------------------------------------------------

@dataclass(frozen=True)
class ScalingData:
    """What the scaling plot draws for one dataset (MB/s are aggregate compressed MB/s)."""

    label: str
    level: float
    workers: tuple[int, ...]
    predicted: tuple[float, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]
    ideal: tuple[float, ...]  # linear scaling of the 1-worker prediction
    measured: tuple[tuple[int, float], ...]  # the event loop in parallel (warm, whole files)
    raw_reads: tuple[tuple[int, float], ...]  # raw reads of the storage (cold, no decompression)
    capacity: float | None  # what the storage delivers, every device streaming
    now: int

    @property
    def empty(self) -> bool:
        return not self.workers and not self.measured and not self.raw_reads

    def values(self) -> list[float]:
        vals = [*self.low, *self.high, *self.predicted, *(y for _, y in self.measured),
                *(y for _, y in self.raw_reads)]
        if self.capacity is not None:
            vals.append(self.capacity)
        return [v for v in vals if v > 0 and math.isfinite(v)]

    def log_scale(self) -> bool:
        """A log axis when the figures span more than 30×: raw reads of the page cache and a
        slow analysis on one linear axis would flatten the curve."""
        vals = self.values()
        return bool(vals) and max(vals) / min(vals) > 30


MEASURED_LABEL = "measured: event loop in parallel (warm)"
RAW_LABEL = "measured: raw reads, cold (no decompression)"
IDEAL_LABEL = "ideal linear scaling"
CAPACITY_LABEL = "storage capacity (model)"
CAPACITY_NOTE = "every device streaming, this access pattern"


def scaling_data(advice: Advice) -> ScalingData:
    level = advice.model.level if advice.model is not None else 0.9
    preds = advice.model.predictions if advice.model is not None else ()
    one = next((p.aggregate_mb_per_s for p in preds if p.workers == 1), None)
    cal = advice.calibration
    measured = tuple((p.workers, p.aggregate_mb_per_s) for p in (cal.parallel_loop if cal else ())
                     if p.aggregate_mb_per_s)
    raw = tuple((p.workers, p.aggregate_mb_per_s) for p in (cal.concurrency if cal else ())
                if p.aggregate_mb_per_s)
    capacity = None
    if advice.baseline is not None:
        try:
            from models.scenarios import device_capacity

            capacity = device_capacity(advice.baseline)
        except (ValueError, ArithmeticError):
            capacity = None
        if capacity is not None and not (math.isfinite(capacity) and capacity > 0):
            capacity = None
    return ScalingData(
        label=advice.label, level=level,
        workers=tuple(p.workers for p in preds),
        predicted=tuple(p.aggregate_mb_per_s for p in preds),
        low=tuple(p.low for p in preds), high=tuple(p.high for p in preds),
        ideal=tuple(one * p.workers for p in preds) if one else (),
        measured=measured, raw_reads=raw, capacity=capacity, now=now_workers(advice))
