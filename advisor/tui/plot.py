"""The Scaling tab's plot: aggregate MB/s against workers, drawn in text cells.

Textual-free and Rich-free: the series, the axes, the marks and what is off the scale come
from :mod:`hep_advisor.render.scaling` (the same as the HTML report's and matplotlib's
plots); :func:`draw` lays them out on a grid of cells and returns rows of ``(text, style)``
runs, a style being the series' names joined by ``+`` (``"predicted+band"``: the curve's
colour on the interval's shade), which the widget turns into its component classes.

Made to be read at 80×24 in a few seconds, each thing in a look of its own:

- the interval is a **shaded band** (the cells' background; ``▀``/``▄`` where it covers half
  a cell), never a line;
- the prediction is the only **line**, in braille dots (2×4 a cell, two dots thick: ``⠶``)
  on the band;
- the measured points are whole-cell markers (``●`` the event loop, ``□`` raw reads);
- the knee and the cores are **vertical marks** (``┊``) labelled above the plot;
- the storage capacity is a dashed rule (``╌``); a series far above the curve is named in
  the legend with ``↑`` and its value, not drawn (nothing is drawn off the chart);
- the legend on top, MB/s on the y axis, the worker counts under it, and what a MB/s is.
"""

from __future__ import annotations

import math
from itertools import pairwise

from hep_advisor.render import fmt
from hep_advisor.render.scaling import (
    CAPACITY_LABEL,
    MEASURED_SHORT,
    RAW_SHORT,
    X_AXIS,
    Mark,
    PlotRange,
    ScalingData,
    nice_ceiling,
)

__all__ = ["SERIES", "Canvas", "draw", "nice_ceiling"]

#: Braille dot bits by (row 0..3, column 0..1) inside a cell.
_DOTS = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))
#: Every style a run can name (joined by ``+``); the widget has a component class for each.
SERIES = ("predicted", "band", "band-edge", "measured", "raw", "capacity", "mark", "axis",
          "label", "off")

Runs = list[tuple[str, str]]


def _tick(v: float) -> str:
    if v >= 100:
        return f"{v:,.0f}"
    if v >= 10:
        return f"{v:.1f}".rstrip("0").rstrip(".")
    return f"{v:.2f}".rstrip("0").rstrip(".")


class Canvas:
    """Cells, each with a character and its series, over the interval's shade.

    ``shade[y][x]``: 0 none, 1 the top half, 2 the bottom half, 3 the whole cell; ``line``:
    braille dots of the prediction; ``marks``: whole-cell characters, over the line."""

    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.shade = [[0] * width for _ in range(height)]
        self.line = [[0] * width for _ in range(height)]
        self.marks: dict[tuple[int, int], tuple[str, str]] = {}
        self.rules: dict[tuple[int, int], tuple[str, str]] = {}  # under the line and marks

    @property
    def px(self) -> tuple[int, int]:
        return 2 * self.width, 4 * self.height

    def dot(self, x: int, y: int) -> None:
        if 0 <= x < 2 * self.width and 0 <= y < 4 * self.height:
            self.line[y // 4][x // 2] |= _DOTS[y % 4][x % 2]

    def segment(self, x0: float, y0: float, x1: float, y1: float) -> None:
        """The prediction from pixel (x0, y0) to (x1, y1), two dots thick (it is the one line
        of the plot: it reads as a line, not as dots)."""
        steps = max(1, int(max(abs(x1 - x0), abs(y1 - y0)) * 2 + 0.5))
        for i in range(steps + 1):
            t = i / steps
            x, y = round(x0 + (x1 - x0) * t), y0 + (y1 - y0) * t
            self.dot(x, math.floor(y))
            self.dot(x, math.floor(y) + 1)

    def mark(self, cx: int, cy: int, ch: str, series: str) -> None:
        if 0 <= cx < self.width and 0 <= cy < self.height:
            self.marks[(cx, cy)] = (ch, series)

    def rule(self, cx: int, cy: int, ch: str, series: str) -> None:
        if 0 <= cx < self.width and 0 <= cy < self.height:
            self.rules[(cx, cy)] = (ch, series)

    def free(self, cx: int, cy: int) -> bool:
        """Whether nothing but a rule is drawn in the cell (words may cross a rule)."""
        return (0 <= cx < self.width and 0 <= cy < self.height and not self.shade[cy][cx]
                and not self.line[cy][cx] and (cx, cy) not in self.marks)

    def cell(self, cx: int, cy: int) -> tuple[str, str]:
        shade = self.shade[cy][cx]
        if (cx, cy) in self.marks:
            ch, s = self.marks[(cx, cy)]
        elif self.line[cy][cx]:
            ch, s = chr(0x2800 + self.line[cy][cx]), "predicted"
        elif (cx, cy) in self.rules:
            ch, s = self.rules[(cx, cy)]
        elif shade in (1, 2):  # half a cell of the interval, drawn as a half block
            return ("▀" if shade == 1 else "▄"), "band-edge"
        else:
            ch, s = " ", ""
        if shade:  # the interval's shade under whatever is drawn there
            return ch, f"{s}+band" if s else "band"
        return ch, s

    def rows(self) -> list[Runs]:
        out: list[Runs] = []
        for cy in range(self.height):
            runs: Runs = []
            for cx in range(self.width):
                ch, s = self.cell(cx, cy)
                if runs and runs[-1][1] == s:
                    runs[-1] = (runs[-1][0] + ch, s)
                else:
                    runs.append((ch, s))
            out.append(runs)
        return out


def _legend(data: ScalingData, r: PlotRange, width: int, capacity: bool) -> list[Runs]:
    """The legend items present, packed into as few rows of ``width`` as they need: the
    series drawn (the capacity with ``capacity``: where its rule has no room for its words),
    then what is off the scale (``↑``, with its value)."""
    items: list[tuple[str, str, str]] = []  # (sample, its style, words)
    if data.workers:
        items += [("⠶⠶⠶", "predicted", "predicted"),
                  ("  ", "band", f"{fmt.percent(data.level)} interval")]
    if data.measured:
        items.append(("●", "measured", MEASURED_SHORT))
    if data.raw_reads and r.raw_drawn:
        items.append(("□", "raw", RAW_SHORT))
    if data.capacity is not None and r.capacity_drawn and capacity:
        items.append(("╌╌", "capacity", f"{CAPACITY_LABEL} {fmt.mb_per_s(data.capacity)}"))
    items += [("↑", "off", f"{what}, off the scale") for what in r.off_scale]
    rows: list[Runs] = [[]]
    used = 0
    for sample, style, words in items:
        need = len(sample) + 1 + len(words)
        if used and used + 2 + need > width:
            rows.append([])
            used = 0
        row = rows[-1]
        if used:
            row.append(("  ", ""))
            used += 2
        row += [(sample, style), (" " + words, "label")]
        used += need
    return rows


def _title(x_name: str, width: int) -> str:
    """The x axis' title and what a MB/s is, as long as ``width`` allows."""
    axis = X_AXIS if x_name == "workers" else x_name
    for text in (f"{axis}  ·  MB/s: compressed MB read per second by all {x_name} together "
                 "(MB = 10⁶ bytes)",
                 f"{axis} · MB/s: compressed MB (10⁶ B) read per second, all {x_name}",
                 f"{x_name} · MB/s: compressed MB (10⁶ B) read per second, all {x_name}",
                 f"{x_name} · MB/s: compressed, all {x_name}", x_name):
        if len(text) <= width:
            return text
    return x_name[:width]


def draw(data: ScalingData, width: int, height: int, x_name: str = "workers") -> list[Runs]:
    """The plot in ``width`` x ``height`` cells: the legend, the marks' labels, the plot with
    its y axis (MB/s), the x axis with its worker counts, and the title line.  ``x_name``:
    what the x axis counts (the Cluster tab's counts nodes).  The storage capacity's rule
    carries its words where they cross nothing drawn, else they go to the legend."""
    return _draw(data, width, height, x_name, True) or \
        _draw(data, width, height, x_name, False) or []


def _draw(data: ScalingData, width: int, height: int, x_name: str,
          capacity_on_rule: bool) -> list[Runs] | None:
    r = data.plot_range()
    legend = _legend(data, r, width, capacity=not capacity_on_rule)
    labels = [_tick(v) for v in r.yticks]
    lw = max(4, *(len(s) for s in labels)) + 1  # room for "MB/s" over the tick labels
    pw = max(8, width - lw - 1)
    bottom = 3 if height - len(legend) - 1 - 3 >= 6 else 2  # the title line, where room
    ph = max(3, height - len(legend) - 1 - bottom)
    canvas = Canvas(pw, ph)
    w_px, h_px = canvas.px
    xmax = r.xmax

    def X(n: float) -> float:  # a cell's margin on either side
        return 2 + (n - 1) / (xmax - 1) * (w_px - 5)

    def col(n: float) -> int:
        return round(X(n)) // 2

    def Y(v: float) -> float:
        return (1 - v / r.ymax) * (h_px - 1)

    def row(v: float) -> int:
        return min(ph - 1, max(0, round(Y(v)) // 4))

    marks = data.marks()
    if data.workers:  # the interval, shaded by half cells
        last = max(data.workers)
        for cx in range(pw):
            n = 1 + (2 * cx + 1 - 2) / (w_px - 5) * (xmax - 1)
            if not data.workers[0] - 0.01 <= n <= last + 0.01:
                continue
            lo = _interp(data.workers, data.low, n)
            hi = _interp(data.workers, data.high, n)
            if lo is None or hi is None:
                continue
            top, bot = Y(hi), Y(lo)
            for cy in range(ph):
                upper = top <= 4 * cy + 0.5 <= bot
                lower = top <= 4 * cy + 2.5 <= bot
                canvas.shade[cy][cx] = (1 if upper else 0) | (2 if lower else 0)
    for m in marks:
        for cy in range(ph):
            canvas.rule(col(m.workers), cy, "┊", "mark")
    if data.capacity is not None and r.capacity_drawn:
        cy = row(data.capacity)
        for cx in range(pw):
            if (cx, cy) not in canvas.rules:
                canvas.rule(cx, cy, "╌", "capacity")
    pts = [(X(n), Y(v)) for n, v in zip(data.workers, data.predicted, strict=True)]
    if len(pts) == 1:
        canvas.dot(round(pts[0][0]), round(pts[0][1]))
    for (x0, y0), (x1, y1) in pairwise(pts):
        canvas.segment(x0, y0, x1, y1)
    if r.raw_drawn:
        for n, v in data.raw_reads:
            canvas.mark(col(n), row(v), "□", "raw")
    for n, v in data.measured:
        canvas.mark(col(n), row(v), "●", "measured")
    if capacity_on_rule and data.capacity is not None and r.capacity_drawn:
        words = f" {CAPACITY_LABEL} {fmt.mb_per_s(data.capacity)} "
        cy = row(data.capacity)
        starts = [pw - len(words) - 2, 2]
        free = [st for st in starts if st >= 0 and all(
            canvas.free(cx, cy) for cx in range(st, st + len(words)))]
        if not free:
            return None
        for i, ch in enumerate(words):
            canvas.mark(free[0] + i, cy, ch, "capacity")

    rows: list[Runs] = list(legend)
    rows.append(_marks_row(marks, [col(m.workers) for m in marks], lw, pw))
    tick_rows = {row(v): lab for v, lab in zip(r.yticks, labels, strict=True)}
    for cy, runs in enumerate(canvas.rows()):
        lab = tick_rows.get(cy, "")
        rows.append([(lab.rjust(lw - 1) + " " + ("┤" if cy in tick_rows else "│"), "axis"),
                     *runs])
    ticks = _ticks(xmax, pw, [m.workers for m in marks])
    axis = ["─"] * pw
    numbers = [" "] * (lw + 1 + pw)
    for n in ticks:
        c = col(n)
        s = str(n)
        start = min(max(lw + 1 + c - (len(s) - 1) // 2, lw + 1), len(numbers) - len(s))
        if all(ch == " " for ch in numbers[max(start - 1, 0):start + len(s) + 1]):
            numbers[start:start + len(s)] = list(s)
            axis[c] = "┬"
    rows.append([(" " * lw + "└" + "".join(axis), "axis")])
    rows.append([("".join(numbers), "axis")])
    if bottom == 3:
        title = _title(x_name, width - lw - 1)
        rows.append([(" " * (lw + 1) + title, "label")])
    return [_crop(runs, width) for runs in rows[:height]]


def _marks_row(marks: tuple[Mark, ...], cols: list[int], lw: int, pw: int) -> Runs:
    """"MB/s" over the tick labels, and each mark's words over its ``┊``, from its column
    (or ending there, near the right edge); words that would run into the previous ones
    follow them."""
    cells = [" "] * pw
    free = 0
    for m, c in zip(marks, cols, strict=True):
        text = m.label
        start = c if c + len(text) <= pw else c - len(text) + 1
        start = max(start, free, 0)
        if start + len(text) > pw:
            text = text[:max(0, pw - start)]
        cells[start:start + len(text)] = list(text)
        free = start + len(text) + 2
    return [("MB/s".rjust(lw - 1) + "  ", "axis"), ("".join(cells), "mark")]


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


def _ticks(xmax: int, width: int, first: list[int]) -> list[int]:
    """The worker counts labelled under the axis: the marks' first, then 1, every
    ``step``-th and the last, as room allows (the caller skips those that would touch)."""
    step = 1
    while xmax / step > max(width // 5, 1):
        step = {1: 2, 2: 4, 4: 8}.get(step, step * 2)
    ticks = list(range(step, xmax + 1, step)) if step > 1 else list(range(1, xmax + 1))
    rest = sorted({1, *ticks, xmax} - set(first))
    return [*first, *rest]
