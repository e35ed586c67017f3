"""The Scaling tab's plot: aggregate MB/s against workers, drawn with Unicode braille.

Textual-free and Rich-free: :func:`scaling_data` gathers the series from an ``Advice`` (the
model's predicted curve with its interval, the measured points, ideal linear scaling from one
worker, and the hardware limit: the model's rate for many more workers than there are cores,
where the cores and the devices cap it); :func:`draw` lays them out on a grid of cells and
returns rows of ``(text, series)`` runs that the widget colours by series.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..advice import Advice

#: Braille dot bits by (row 0..3, column 0..1) inside a cell.
_DOTS = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))
#: Which series wins a cell that several share (later wins).
PRIORITY = ("band", "cores", "ideal", "limit", "predicted", "measured")
LEGEND = (("predicted", "━ predicted"), ("band", "░ interval"), ("measured", "● measured"),
          ("ideal", "╌ ideal linear"), ("limit", "┄ hardware limit"))

Runs = list[tuple[str, str]]


@dataclass(frozen=True)
class ScalingData:
    workers: tuple[int, ...]
    predicted: tuple[float, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]
    ideal: tuple[float, ...]
    measured: tuple[tuple[int, float], ...]
    limit: float | None
    cores: int | None
    now_workers: int
    level: float

    @property
    def knee(self) -> int:
        """The fewest workers reaching 95% of the best predicted rate."""
        best = max(self.predicted)
        for n, v in zip(self.workers, self.predicted, strict=True):
            if v >= 0.95 * best:
                return n
        return self.workers[-1]


def scaling_data(advice: Advice) -> ScalingData | None:
    """The plot's series, or ``None`` without a fitted model."""
    summary = advice.model
    if summary is None or not summary.predictions:
        return None
    pts = sorted(summary.predictions, key=lambda p: p.workers)
    workers = tuple(p.workers for p in pts)
    one = pts[0].aggregate_mb_per_s / max(pts[0].workers, 1)
    measured: list[tuple[int, float]] = []
    cal = advice.calibration
    if cal is not None:
        measured = [(p.workers, p.aggregate_mb_per_s) for p in cal.parallel_loop
                    if p.aggregate_mb_per_s]
        if not measured and cal.event_loop is not None and cal.event_loop.compressed_mb_per_s:
            measured = [(1, cal.event_loop.compressed_mb_per_s)]
    limit = None
    if advice.fitted is not None and advice.baseline is not None:
        try:
            far = max(64, 8 * (advice.site.cpu.logical_cores or 1))
            limit = advice.predict(workers=far)[0].aggregate_mb_per_s
        except (ValueError, ArithmeticError):
            limit = None
    return ScalingData(
        workers=workers, predicted=tuple(p.aggregate_mb_per_s for p in pts),
        low=tuple(p.low for p in pts), high=tuple(p.high for p in pts),
        ideal=tuple(one * n for n in workers), measured=tuple(measured), limit=limit,
        cores=advice.site.cpu.physical_cores,
        now_workers=advice.verdict.workers if advice.verdict else 1, level=summary.level)


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


def _fmt(v: float) -> str:
    if v >= 100:
        return f"{v:,.0f}"
    if v >= 10:
        return f"{v:.1f}".rstrip("0").rstrip(".")
    return f"{v:.2f}".rstrip("0").rstrip(".")


class Canvas:
    """Braille pixels (2 x 4 per cell) with one series per cell, and whole-cell markers."""

    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.bits = [[0] * width for _ in range(height)]
        self.series: list[list[str | None]] = [[None] * width for _ in range(height)]
        self.marks: dict[tuple[int, int], tuple[str, str]] = {}

    @property
    def px(self) -> tuple[int, int]:
        return 2 * self.width, 4 * self.height

    def dot(self, x: int, y: int, series: str) -> None:
        if not (0 <= x < 2 * self.width and 0 <= y < 4 * self.height):
            return
        cx, cy = x // 2, y // 4
        self.bits[cy][cx] |= _DOTS[y % 4][x % 2]
        cur = self.series[cy][cx]
        if cur is None or PRIORITY.index(series) >= PRIORITY.index(cur):
            self.series[cy][cx] = series

    def line(self, x0: float, y0: float, x1: float, y1: float, series: str,
             dash: int = 0) -> None:
        steps = max(1, int(max(abs(x1 - x0), abs(y1 - y0)) + 0.5))
        for i in range(steps + 1):
            if dash and (i // dash) % 2:
                continue
            t = i / steps
            self.dot(round(x0 + (x1 - x0) * t), round(y0 + (y1 - y0) * t), series)

    def mark(self, x: int, y: int, char: str, series: str) -> None:
        cx, cy = x // 2, y // 4
        if 0 <= cx < self.width and 0 <= cy < self.height:
            self.marks[(cx, cy)] = (char, series)

    def rows(self) -> list[Runs]:
        out: list[Runs] = []
        for cy in range(self.height):
            runs: Runs = []
            for cx in range(self.width):
                if (cx, cy) in self.marks:
                    ch, s = self.marks[(cx, cy)]
                elif self.bits[cy][cx]:
                    ch, s = chr(0x2800 + self.bits[cy][cx]), self.series[cy][cx] or ""
                else:
                    ch, s = " ", ""
                if runs and runs[-1][1] == s:
                    runs[-1] = (runs[-1][0] + ch, s)
                else:
                    runs.append((ch, s))
            out.append(runs)
        return out


def draw(data: ScalingData, width: int, height: int) -> list[Runs]:
    """The plot in ``width`` x ``height`` cells: a legend line, the plot with its y axis, the
    x axis with tick labels and the axis title."""
    top = max([*data.high, *(v for _, v in data.measured), data.limit or 0.0,
               *data.predicted]) * 1.08
    ymax = 4 * nice_ceiling(top / 4)
    labels = [_fmt(ymax * k / 4) for k in range(4, -1, -1)]
    lw = max(len(s) for s in labels) + 1
    pw, ph = max(8, width - lw - 1), max(4, height - 4)
    canvas = Canvas(pw, ph)
    w_px, h_px = canvas.px
    xmax = max(data.workers[-1], 2)

    def X(n: float) -> float:
        return (n - 1) / (xmax - 1) * (w_px - 1)

    def Y(v: float) -> float:
        return (1 - min(max(v / ymax, 0.0), 1.2)) * (h_px - 1)

    # the interval: its edges, and a sparse fill between them
    for x in range(w_px):
        n = 1 + x / (w_px - 1) * (xmax - 1)
        lo, hi = _interp(data.workers, data.low, n), _interp(data.workers, data.high, n)
        if lo is None or hi is None:
            continue
        top_y, bottom_y = round(Y(hi)), round(Y(lo))
        for y in range(top_y, bottom_y + 1):
            if y in (top_y, bottom_y) or (x % 2 == 0 and y % 4 == 2):
                canvas.dot(x, y, "band")
    if data.cores and 1 < data.cores < xmax:
        canvas.line(X(data.cores), 0, X(data.cores), h_px - 1, "cores", dash=1)
    if data.limit is not None:
        canvas.line(0, Y(data.limit), w_px - 1, Y(data.limit), "limit", dash=2)
    for (n0, v0), (n1, v1) in pairwise(zip(data.workers, data.ideal, strict=True)):
        if v0 <= ymax * 1.2:
            canvas.line(X(n0), Y(v0), X(n1), Y(v1), "ideal", dash=3)
    pts = list(zip(data.workers, data.predicted, strict=True))
    if len(pts) == 1:
        canvas.dot(round(X(pts[0][0])), round(Y(pts[0][1])), "predicted")
    for (n0, v0), (n1, v1) in pairwise(pts):
        canvas.line(X(n0), Y(v0), X(n1), Y(v1), "predicted")
    for n, v in data.measured:
        if n <= xmax:
            canvas.mark(round(X(n)), round(Y(v)), "●", "measured")

    rows: list[Runs] = []
    legend: Runs = []
    for series, text in LEGEND:
        if series == "measured" and not data.measured:
            continue
        if series == "limit" and data.limit is None:
            continue
        if legend:
            legend.append(("  ", ""))
        legend.append((text, series))
    rows.append(legend)
    label_at = {round(k * (ph - 1) / 4): labels[k] for k in range(5)}
    for cy, runs in enumerate(canvas.rows()):
        lab = label_at.get(cy, "")
        tick = "┤" if cy in label_at else "│"
        rows.append([(lab.rjust(lw - 1) + " " + tick, "axis"), *runs])
    rows.append([(" " * lw + "└" + "─" * pw, "axis")])
    ticks = _ticks(xmax, pw)
    line = [" "] * (lw + 1 + pw)
    for n in ticks:
        pos = lw + 1 + round(X(n) / 2)
        s = str(n)
        start = min(max(pos - len(s) // 2, lw + 1), len(line) - len(s))
        if all(c == " " for c in line[max(start - 1, 0):start + len(s) + 1]):
            line[start:start + len(s)] = list(s)
    rows.append([("".join(line), "axis")])
    title = f"workers  (MB/s compressed, interval {data.level:.0%})"
    if data.cores:
        title += f"  ┊ {data.cores} cores"
    rows.append([(" " * lw + " " + title, "label")])
    return [_crop(runs, width) for runs in rows]


def _crop(runs: Runs, width: int) -> Runs:
    out: Runs = []
    left = width
    for text, series in runs:
        if left <= 0:
            break
        out.append((text[:left], series))
        left -= len(text[:left])
    return out


def _interp(xs: tuple[int, ...], ys: tuple[float, ...], x: float) -> float | None:
    if not xs:
        return None
    if x <= xs[0]:
        return ys[0]
    for (x0, y0), (x1, y1) in pairwise(zip(xs, ys, strict=True)):
        if x0 <= x <= x1:
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0) if x1 != x0 else y1
    return ys[-1]


def _ticks(xmax: int, width: int) -> list[int]:
    step = 1
    while xmax / step > max(width // 6, 1):
        step = {1: 2, 2: 4, 4: 8}.get(step, step * 2)
    ticks = list(range(step, xmax + 1, step)) if step > 1 else list(range(1, xmax + 1))
    return sorted({1, *ticks})
