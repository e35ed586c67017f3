"""The Scaling tab's plot: aggregate MB/s against workers, drawn in text cells.

Textual-free and Rich-free: the series, the knee and the ceiling come from
:mod:`hep_advisor.render.scaling` (the same as the report's); :func:`draw` lays them out on a grid
of cells and returns rows of ``(text, series)`` runs that the widget colours by series.

Made to be read at 80×24: the interval is only its two edges, drawn as light dotted lines;
lines are Unicode braille (2×4 dots a cell), and a cell shows one series only, the one drawn
last (the curve over the ideal line over the interval), so that lines never blur into each
other; the measured points and the knee are whole-cell markers on top of everything.  A
ceiling far above the curve is not drawn to scale (it would flatten the curve) but named with
an arrow at the top.
"""

from __future__ import annotations

import math
from itertools import pairwise

from hep_advisor.render import fmt
from hep_advisor.render.scaling import CAPACITY_LABEL, KNEE_FRACTION, ScalingData

__all__ = ["LEGEND", "PRIORITY", "Canvas", "draw", "nice_ceiling"]

#: Braille dot bits by (row 0..3, column 0..1) inside a cell.
_DOTS = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))
#: Which line series a cell shows when several pass through it (later wins).
PRIORITY = ("band", "cores", "ideal", "capacity", "predicted")
#: The legend: (series, sample, words); ``{level}`` and ``{knee}`` filled in by :func:`draw`.
LEGEND = (("predicted", "━━", "predicted"), ("band", "⠒⠒", "{level} interval"),
          ("measured", "●", "measured"), ("knee", "◆", "knee ({knee})"),
          ("ideal", "╌╌", "ideal linear"), ("capacity", "┄┄", CAPACITY_LABEL))
#: A ceiling above this many times the highest other figure is named, not drawn to scale.
OFF_SCALE = 1.5

Runs = list[tuple[str, str]]


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


def _tick(v: float) -> str:
    if v >= 100:
        return f"{v:,.0f}"
    if v >= 10:
        return f"{v:.1f}".rstrip("0").rstrip(".")
    return f"{v:.2f}".rstrip("0").rstrip(".")


class Canvas:
    """Braille pixels (2 x 4 per cell) kept per series, and whole-cell markers.

    A cell shows the dots of one series only: the highest in :data:`PRIORITY` that passes
    through it; a marker replaces the cell."""

    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.bits: list[list[dict[str, int]]] = [[{} for _ in range(width)]
                                                  for _ in range(height)]
        self.marks: dict[tuple[int, int], tuple[str, str]] = {}

    @property
    def px(self) -> tuple[int, int]:
        return 2 * self.width, 4 * self.height

    def dot(self, x: int, y: int, series: str) -> None:
        if not (0 <= x < 2 * self.width and 0 <= y < 4 * self.height):
            return
        cell = self.bits[y // 4][x // 2]
        cell[series] = cell.get(series, 0) | _DOTS[y % 4][x % 2]

    def line(self, x0: float, y0: float, x1: float, y1: float, series: str,
             dash: int = 0) -> None:
        steps = max(1, int(max(abs(x1 - x0), abs(y1 - y0)) + 0.5))
        for i in range(steps + 1):
            if dash and (i // dash) % 2:
                continue
            t = i / steps
            self.dot(round(x0 + (x1 - x0) * t), round(y0 + (y1 - y0) * t), series)

    def mark(self, cx: int, cy: int, text: str, series: str) -> None:
        """``text`` from cell (``cx``, ``cy``) on, over whatever is there."""
        for i, ch in enumerate(text):
            if 0 <= cx + i < self.width and 0 <= cy < self.height:
                self.marks[(cx + i, cy)] = (ch, series)

    def rows(self) -> list[Runs]:
        out: list[Runs] = []
        for cy in range(self.height):
            runs: Runs = []
            for cx in range(self.width):
                cell = self.bits[cy][cx]
                if (cx, cy) in self.marks:
                    ch, s = self.marks[(cx, cy)]
                elif cell:
                    s = max(cell, key=PRIORITY.index)
                    ch = chr(0x2800 + cell[s])
                else:
                    ch, s = " ", ""
                if runs and runs[-1][1] == s:
                    runs[-1] = (runs[-1][0] + ch, s)
                else:
                    runs.append((ch, s))
            out.append(runs)
        return out


def _legend(data: ScalingData, capacity_drawn: bool, width: int) -> list[Runs]:
    """The legend items present, packed into as few rows of ``width`` as they need."""
    present = {"predicted", "band", "ideal"} if data.workers else set()
    if data.measured:
        present.add("measured")
    if data.knee is not None:
        present.add("knee")
    if capacity_drawn:
        present.add("capacity")
    rows: list[Runs] = [[]]
    used = 0
    for series, sample, words in LEGEND:
        if series not in present or (series == "ideal" and not data.ideal):
            continue
        text = words.format(level=fmt.percent(data.level), knee=fmt.percent(KNEE_FRACTION))
        if series == "capacity" and data.capacity is not None:
            text += f" {fmt.mb_per_s(data.capacity)}"
        need = len(sample) + 1 + len(text) + (2 if used else 0)
        if used and used + need > width - 1:
            rows.append([])
            used, need = 0, need - 2
        row = rows[-1]
        row.append(("  " if used else " ", ""))
        row += [(sample, series), (" " + text, "label")]
        used += need + (0 if used else 1)
    return rows


def draw(data: ScalingData, width: int, height: int) -> list[Runs]:
    """The plot in ``width`` x ``height`` cells: the legend, the plot with its y axis, the x
    axis with tick labels and the axis title."""
    measured = [(n, v) for n, v in data.measured if n <= max(data.workers, default=0)]
    top = max([*data.high, *data.predicted, *(v for _, v in measured), 0.0])
    cap = data.capacity
    capacity_drawn = cap is not None and (top <= 0 or cap <= OFF_SCALE * top)
    if capacity_drawn and cap is not None:
        top = max(top, cap)
    ymax = 4 * nice_ceiling(top * 1.08 / 4)
    labels = [_tick(ymax * k / 4) for k in range(4, -1, -1)]
    lw = max(len(s) for s in labels) + 1
    legend = _legend(data, capacity_drawn, width)
    pw, ph = max(8, width - lw - 1), max(4, height - 3 - len(legend))
    canvas = Canvas(pw, ph)
    w_px, h_px = canvas.px
    xmax = max(max(data.workers, default=1), 2)

    def X(n: float) -> float:
        return (n - 1) / (xmax - 1) * (w_px - 1)

    def Y(v: float) -> float:
        return (1 - v / ymax) * (h_px - 1)

    if data.workers:
        # the interval: its two edges, dotted (every other pixel)
        for edge in (data.low, data.high):
            for x in range(0, w_px, 2):
                v = _interp(data.workers, edge, 1 + x / (w_px - 1) * (xmax - 1))
                if v is not None:
                    canvas.dot(x, round(Y(v)), "band")
    if data.cores and 1 < data.cores < xmax:
        canvas.line(X(data.cores), 0, X(data.cores), h_px - 1, "cores", dash=1)
    if capacity_drawn and cap is not None:
        canvas.line(0, Y(cap), w_px - 1, Y(cap), "capacity", dash=2)
    for (n0, v0), (n1, v1) in pairwise(zip(data.workers, data.ideal, strict=True)):
        canvas.line(X(n0), Y(v0), X(n1), Y(v1), "ideal", dash=3)
    pts = list(zip(data.workers, data.predicted, strict=True))
    if len(pts) == 1:
        canvas.dot(round(X(pts[0][0])), round(Y(pts[0][1])), "predicted")
    for (n0, v0), (n1, v1) in pairwise(pts):
        canvas.line(X(n0), Y(v0), X(n1), Y(v1), "predicted")
    knee = data.knee
    if knee is not None:
        canvas.mark(round(X(knee)) // 2, round(Y(data.predicted_at(knee) or 0.0)) // 4, "◆",
                    "knee")
    for n, v in measured:
        canvas.mark(round(X(n)) // 2, round(Y(v)) // 4, "●", "measured")
    if cap is not None and not capacity_drawn:
        text = f"↑ {CAPACITY_LABEL} {fmt.mb_per_s(cap)}"
        canvas.mark(max(pw - len(text), 0), 0, text, "capacity")

    rows: list[Runs] = list(legend)
    label_at = {round(k * (ph - 1) / 4): labels[k] for k in range(5)}
    for cy, runs in enumerate(canvas.rows()):
        lab = label_at.get(cy, "")
        tick = "┤" if cy in label_at else "│"
        rows.append([(lab.rjust(lw - 1) + " " + tick, "axis"), *runs])
    rows.append([(" " * lw + "└" + "─" * pw, "axis")])
    line = [" "] * (lw + 1 + pw)
    for n in _ticks(xmax, pw):
        pos = lw + 1 + round(X(n) / 2)
        s = str(n)
        start = min(max(pos - len(s) // 2, lw + 1), len(line) - len(s))
        if all(c == " " for c in line[max(start - 1, 0):start + len(s) + 1]):
            line[start:start + len(s)] = list(s)
    rows.append([("".join(line), "axis")])
    title = "workers   (aggregate MB/s, compressed)"
    if data.cores:
        title += f"  ┊ {data.cores} cores"
    rows.append([(" " * lw + " " + title, "label")])
    return [_crop(runs, width) for runs in rows[:height]]


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
