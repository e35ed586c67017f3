"""The scaling of one dataset as every view shows it (terminal, Markdown, HTML, matplotlib and
the TUI): the predicted curve with its interval, the measured points, the knee, the cores and
the ceiling, and the rows of the scaling table.

Plain data and strings only (no Rich, no Textual, no matplotlib), so that every view draws the
same series and says the same numbers in the same words:

- the **knee** is W001's (:func:`hep_advisor.models.knee.knee`): the fewest workers whose
  predicted rate reaches :data:`KNEE_FRACTION` of the best predicted rate;
- the **ceiling** is the storage's capacity for the program's reader: its job's compressed MB
  over the replayed device time (the rate model's
  :func:`hep_advisor.models.scenarios.device_capacity`, every device streaming, where the
  replay is not the engine), labelled :data:`CAPACITY_LABEL` everywhere.

The three plots (the TUI's, the HTML report's SVG and matplotlib's) draw the same things on
the same axes, decided here: the prediction as a line in its shaded interval, the measured
points, a vertical mark at the knee and at the site's cores (:meth:`ScalingData.marks`), a
linear y axis from 0 to :meth:`ScalingData.plot_range`'s top, and a series far above the
prediction (raw reads of the page cache, a distant ceiling) named with its value, not drawn:
nothing is drawn off the chart.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hep_advisor.models.knee import KNEE_FRACTION, knee
from hep_advisor.render import fmt

if TYPE_CHECKING:
    from hep_advisor.findings.advice import Advice

__all__ = ["CAPACITY_LABEL", "CAPACITY_NOTE", "KNEE_FRACTION", "KNEE_LABEL",
           "MAX_SCALING_ROWS", "MEASURED_LABEL", "MEASURED_SHORT", "OFF_SCALE", "RAW_LABEL",
           "RAW_SHORT", "UNITS_NOTE", "X_AXIS", "Y_AXIS", "Mark", "PlotRange", "ScalingData",
           "ScalingRow", "nice_ceiling", "now_workers", "scaling_data", "scaling_rows",
           "summary_parts", "summary_text"]

MEASURED_LABEL = "measured: event loop in parallel (warm)"
RAW_LABEL = "measured: raw reads, cold (no decompression)"
CAPACITY_LABEL = "storage capacity (model)"
CAPACITY_NOTE = "every device streaming, this access pattern"
KNEE_LABEL = f"knee ({fmt.percent(KNEE_FRACTION)} of the best predicted rate)"
#: The legend's words where room is short (the TUI's)
MEASURED_SHORT = "measured (warm)"
RAW_SHORT = "raw reads (cold)"
#: The axes, and what a MB/s is
X_AXIS = "workers (jobs in parallel)"
Y_AXIS = "MB/s, all workers together"
UNITS_NOTE = "MB/s: compressed MB read per second by all workers together (MB = 10⁶ bytes)"
#: A series (raw reads, the ceiling) above this many times the prediction's interval and the
#: measured points is named with its value, not drawn to scale (it would flatten the curve).
OFF_SCALE = 1.5
#: The scaling table shows every worker count up to this many rows, then a selection.
MAX_SCALING_ROWS = 12


def now_workers(advice: Advice) -> int:
    """The analysis' worker count now (1 without a verdict)."""
    return advice.verdict.workers if advice.verdict is not None else 1


def nice_ceiling(x: float) -> float:
    """A round number (1, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power of ten), at least
    ``x``."""
    if x <= 0 or not math.isfinite(x):
        return 1.0
    p = 10 ** math.floor(math.log10(x))
    for m in (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if m * p >= x * (1 - 1e-9):
            return m * p
    return 10 * p


@dataclass(frozen=True)
class Mark:
    """A vertical mark on the plot: the knee, the cores (several at one worker count share
    one mark, their words joined)."""

    workers: int
    label: str


@dataclass(frozen=True)
class PlotRange:
    """The plot's axes: workers 1 .. ``xmax``, MB/s 0 .. ``ymax`` (a round number, four
    equal steps: ``ymax / 4`` each); what is drawn to scale, and what is named instead, with
    its value (``off_scale``: one line each, such as ``raw reads (cold): 620–666 MB/s``)."""

    xmax: int
    ymax: float
    raw_drawn: bool
    capacity_drawn: bool
    off_scale: tuple[str, ...] = field(default=())

    @property
    def yticks(self) -> tuple[float, ...]:
        return tuple(self.ymax * k / 4 for k in range(5))

    def xticks(self, most: int = 12) -> tuple[int, ...]:
        """1, then every 2nd, 4th, 8th ... worker count: at most about ``most`` of them."""
        step = 1
        while self.xmax / step > most:
            step *= 2
        return tuple(sorted({1, *range(step, self.xmax + 1, step)}))


@dataclass(frozen=True)
class ScalingData:
    """What the scaling plot draws for one dataset (MB/s are aggregate compressed MB/s)."""

    label: str
    level: float
    workers: tuple[int, ...]
    predicted: tuple[float, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]
    measured: tuple[tuple[int, float], ...]  # the event loop in parallel (warm, whole files)
    raw_reads: tuple[tuple[int, float], ...]  # raw reads of the storage (cold, no decompression)
    capacity: float | None  # the ceiling: what the storage delivers, every device streaming
    now: int
    cores: int | None = None  # physical cores of the site

    @property
    def empty(self) -> bool:
        return not self.workers and not self.measured and not self.raw_reads

    @property
    def knee(self) -> int | None:
        """The fewest workers reaching ``KNEE_FRACTION`` of the best predicted rate (W001's)."""
        if not self.workers:
            return None
        return knee(list(zip(self.workers, self.predicted, strict=True)))

    @property
    def best(self) -> float | None:
        return max(self.predicted) if self.predicted else None

    def predicted_at(self, workers: int | None) -> float | None:
        return dict(zip(self.workers, self.predicted, strict=True)).get(workers or 0)

    def values(self) -> list[float]:
        vals = [*self.low, *self.high, *self.predicted, *(y for _, y in self.measured),
                *(y for _, y in self.raw_reads)]
        if self.capacity is not None:
            vals.append(self.capacity)
        return [v for v in vals if v > 0 and math.isfinite(v)]

    def log_scale(self) -> bool:
        """Whether the figures span more than 30× (raw reads of the page cache beside a slow
        analysis).  The plots stay linear: :meth:`plot_range` names such a series instead."""
        vals = self.values()
        return bool(vals) and max(vals) / min(vals) > 30

    def marks(self) -> tuple[Mark, ...]:
        """The vertical marks, left to right: the knee, the site's physical cores, and the
        analysis' workers now when more than one (within the plotted worker counts)."""
        xmax = self.plot_range().xmax
        words: dict[int, list[str]] = {}
        if self.knee is not None:
            words.setdefault(self.knee, []).append("knee")
        if self.cores and 1 <= self.cores <= xmax:
            words.setdefault(self.cores, []).append(
                f"{self.cores} core{'s' if self.cores != 1 else ''}")
        if self.workers and 1 < self.now <= xmax:
            words.setdefault(self.now, []).append("now")
        return tuple(Mark(w, " · ".join(ws)) for w, ws in sorted(words.items()))

    def plot_range(self) -> PlotRange:
        """The axes every plot of this data uses (linear, from 0), and what is drawn to scale:
        the prediction, its interval and the measured points always; the raw reads and the
        ceiling when within :data:`OFF_SCALE` times those, else named in ``off_scale``."""
        core = [*self.high, *self.predicted, *(y for _, y in self.measured)]
        core = [v for v in core if v > 0 and math.isfinite(v)]
        raw = [y for _, y in self.raw_reads if y > 0 and math.isfinite(y)]
        base = max(core) if core else max(raw, default=0.0)
        raw_drawn = bool(raw) and max(raw) <= OFF_SCALE * base
        cap = self.capacity
        capacity_drawn = cap is not None and (base <= 0 or cap <= OFF_SCALE * base)
        top = max([base, *(raw if raw_drawn else ()),
                   *((cap,) if capacity_drawn and cap is not None else ())])
        off: list[str] = []
        if raw and not raw_drawn:
            lo, hi = min(raw), max(raw)
            span = fmt.mb_per_s(hi) if fmt.rate(lo) == fmt.rate(hi) else \
                f"{fmt.rate(lo)}–{fmt.mb_per_s(hi)}"
            off.append(f"{RAW_SHORT}: {span}")
        if cap is not None and not capacity_drawn:
            off.append(f"{CAPACITY_LABEL}: {fmt.mb_per_s(cap)}")
        xs = [*self.workers, *(w for w, _ in self.measured),
              *(w for w, _ in self.raw_reads if raw_drawn)]
        return PlotRange(xmax=max(max(xs, default=2), 2),
                         ymax=4 * nice_ceiling(top * 1.05 / 4) if top > 0 else 1.0,
                         raw_drawn=raw_drawn, capacity_drawn=capacity_drawn,
                         off_scale=tuple(off))


def scaling_data(advice: Advice) -> ScalingData:
    """The series of ``advice`` (no worker counts without a fitted model)."""
    level = advice.model.level if advice.model is not None else 0.9
    preds = sorted(advice.model.predictions if advice.model is not None else (),
                   key=lambda p: p.workers)
    cal = advice.calibration
    measured = tuple((p.workers, p.aggregate_mb_per_s) for p in (cal.parallel_loop if cal else ())
                     if p.aggregate_mb_per_s)
    raw = tuple((p.workers, p.aggregate_mb_per_s) for p in (cal.concurrency if cal else ())
                if p.aggregate_mb_per_s)
    return ScalingData(
        label=advice.label, level=level,
        workers=tuple(p.workers for p in preds),
        predicted=tuple(p.aggregate_mb_per_s for p in preds),
        low=tuple(p.low for p in preds), high=tuple(p.high for p in preds),
        measured=measured, raw_reads=raw, capacity=_capacity(advice), now=now_workers(advice),
        cores=advice.site.cpu.physical_cores)


def _capacity(advice: Advice) -> float | None:
    """Where the replay is the engine: the compressed MB of the program's reader's job over its
    replayed device time (the floor no number of workers reads below); else the rate model's
    devices, each streaming."""
    rb = advice.reader_baseline
    if advice.model is not None and advice.model.engine == "replay" and rb is not None \
            and rb.io_s > 0 and rb.compressed_mb > 0:
        return rb.compressed_mb / rb.io_s
    if advice.baseline is None:
        return None
    from hep_advisor.models.scenarios import device_capacity

    try:
        capacity = device_capacity(advice.baseline)
    except (ValueError, ArithmeticError):
        return None
    return capacity if capacity is not None and math.isfinite(capacity) and capacity > 0 \
        else None


# -- the same sentence in every view -----------------------------------------------------------

def _workers(n: int) -> str:
    return f"{n} worker{'s' if n != 1 else ''}"


def summary_parts(d: ScalingData) -> list[tuple[str, str]]:
    """``(name, value)`` pairs: the rate now, the knee, the ceiling (what the views print under
    the scaling table or the plot, each in its own markup)."""
    out: list[tuple[str, str]] = []
    now = d.predicted_at(d.now)
    if now is not None:
        out.append((f"now ({_workers(d.now)})", fmt.mb_per_s(now)))
    k = d.knee
    if k is not None:
        out.append((KNEE_LABEL, f"{_workers(k)}, {fmt.mb_per_s(d.predicted_at(k))}"))
    if d.capacity is not None:
        out.append((CAPACITY_LABEL, fmt.mb_per_s(d.capacity)))
    return out


def summary_text(d: ScalingData) -> str:
    """``now (1 worker): 1.11 MB/s · knee (90% of the best predicted rate): 2 workers, 1.33 MB/s
    · storage capacity (model): 5.26 MB/s``."""
    return " · ".join(f"{k}: {v}" for k, v in summary_parts(d))


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
    of two, the cores, the analysis' worker count, the knee and the recommended ones)."""
    if advice.model is None:
        return []
    points = advice.model.predictions
    now = now_workers(advice)
    ref = next((p for p in points if p.workers == now), None)
    cores = advice.site.cpu
    keep = [now, cores.physical_cores or 0, cores.logical_cores or 0,
            *(r.workers for r in advice.recommendations)]
    if points:
        keep.append(knee([(p.workers, p.aggregate_mb_per_s) for p in points]))
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
