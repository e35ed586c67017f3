"""The requests-over-time picture in character cells, for the terminal (the TUI's Trace tab and
``hep-advisor trace``'s view): offset up, time to the right, one character per cell coloured
by the kind of the requests in it, the phases named under the time axis.

UI-free: :func:`draw` returns rows of ``(text, style)`` runs; the style is a kind
(``basket``, ``key``, ``metadata``, ``other``), ``axis``, ``label`` or ``phase``, which the
caller maps onto its own colours.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hep_advisor.findings.trace_picture import RequestPicture

#: When several kinds share a cell, the first of these is drawn (the rarer, smaller reads stay
#: visible next to large basket reads).
PRIORITY = ("key", "metadata", "other", "basket")
#: A cell a read as large (or as long) as a cell covers; a smaller read, by kind (so that the
#: kinds differ without colour too).
FILL = "█"
POINT = {"basket": "▪", "key": "•", "metadata": "◆", "other": "·"}
LEFT = 10  # the offset axis' labels and its line

Runs = list[tuple[str, str]]


def _rank(kind: str) -> int:
    return PRIORITY.index(kind) if kind in PRIORITY else len(PRIORITY) - 1


def cells(picture: RequestPicture, cols: int, rows: int) -> list[list[tuple[str, str] | None]]:
    """``rows`` x ``cols`` cells (top row: the highest offsets), each ``(char, kind)`` or
    ``None`` (no request)."""
    grid: list[list[tuple[str, str] | None]] = [[None] * cols for _ in range(rows)]
    if cols <= 0 or rows <= 0:
        return grid
    t_max, span, bases = picture.t_max, picture.span, picture.bases()

    def col(t: float) -> int:
        return min(max(int(cols * t / t_max), 0), cols - 1)

    def row(pos: float) -> int:
        return min(max(rows - 1 - int(rows * pos / span), 0), rows - 1)

    cell_bytes, cell_s = span / rows, t_max / cols
    for r in picture.requests:
        base = bases[r.file] if r.file < len(bases) else 0
        c1, c2 = col(r.start_s), col(r.start_s + r.duration_s)
        top, bottom = row(base + r.offset + max(r.size - 1, 0)), row(base + r.offset)
        # a read as large as a cell, or as long, fills the cells it covers; a smaller one is
        # a point (in each cell it touches, when it straddles two)
        char = FILL if (r.size >= cell_bytes or r.duration_s >= cell_s) else \
            POINT.get(r.kind, "·")
        for y in range(top, bottom + 1):
            for x in range(c1, c2 + 1):
                here = grid[y][x]
                if here is None or _rank(r.kind) < _rank(here[1]) or \
                        (here[1] == r.kind and char == FILL):
                    grid[y][x] = (char, r.kind)
    return grid


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def _mb(n: float) -> str:
    """An offset for the axis: MB, or kB under 0.1 MB (a small file's axis said "0.0 MB")."""
    v = n / 1e6
    if v < 0.1:
        return f"{n / 1e3:.0f} kB"
    return f"{v:,.0f} MB" if v >= 10 else f"{v:.1f} MB"


def phase_row(phases: Sequence[Any], t_max: float, cols: int) -> Runs:
    """The phases as ``├─name─┤`` spans under the time axis (a name that does not fit is cut,
    a span too narrow for any of it is a ``│``)."""
    line = [" "] * cols
    # the wide phases first: a narrow one drawn after them stays visible as a │
    for p in sorted(phases, key=lambda p: p.start_s - p.end_s):
        if p.end_s < p.start_s:
            continue
        a = min(max(int(cols * p.start_s / t_max), 0), cols - 1)
        b = min(max(int(cols * p.end_s / t_max), a), cols - 1)
        n = b - a + 1
        if n >= 3:
            body = _fit(p.name, n - 2).center(n - 2, "─")
            seg = "├" + body + "┤"
        else:
            seg = "│" * n
        line[a:b + 1] = list(seg)
    return [("".join(line), "phase")]


def draw(picture: RequestPicture, phases: Sequence[Any], width: int, height: int) -> list[Runs]:
    """The whole picture in ``width`` x ``height`` cells: the plot with the offset axis on the
    left, the time axis, its labels and the phases under them (one row, or more where phases
    overlap: see :func:`phase_lanes`)."""
    lanes = phase_lanes(phases)
    cols, rows = max(width - LEFT, 4), max(height - 2 - len(lanes), 2)
    grid = cells(picture, cols, rows)
    span, t_max = picture.span, picture.t_max
    labels = {0: _mb(span), rows - 1: "0 kB" if span < 1e5 else "0 MB"}
    if rows >= 7:
        labels[(rows - 1) // 2] = _mb(span * (rows - 1 - (rows - 1) // 2) / rows)
    out: list[Runs] = []
    for y in range(rows):
        runs: Runs = [(labels.get(y, "").rjust(LEFT - 1) + ("┤" if y in labels else "│"),
                       "axis")]
        for cell in grid[y]:
            text, style = cell if cell is not None else (" ", "axis")
            if runs and runs[-1][1] == style:
                runs[-1] = (runs[-1][0] + text, style)
            else:
                runs.append((text, style))
        out.append(runs)
    out.append([(" " * (LEFT - 1) + "└" + "─" * cols, "axis")])
    ticks = [" "] * cols
    for frac in (1.0, 0.0, 0.5, 0.25, 0.75):  # the ends first: a label that would touch
        # one already there is left out
        label = f"{t_max * frac:.2f} s" if frac == 1.0 else f"{t_max * frac:.2f}"
        at = min(int(cols * frac), cols - len(label))
        if all(c == " " for c in ticks[max(at - 1, 0):at + len(label) + 1]):
            ticks[at:at + len(label)] = list(label)
    out.append([(" " * LEFT + "".join(ticks), "label")])
    out += [[(" " * LEFT, "axis"), *phase_row(lane, t_max, cols)] for lane in lanes]
    return out


def phase_lanes(phases: Sequence[Any]) -> list[list[Any]]:
    """The phases in rows where none overlaps another (a pre-pass per file between the reads
    of many files overlaps the reading): each in the first row it fits."""
    lanes: list[list[Any]] = []
    for p in sorted((p for p in phases if p.end_s >= p.start_s), key=lambda p: p.start_s):
        lane = next((ln for ln in lanes if ln[-1].end_s <= p.start_s), None)
        if lane is None:
            lanes.append([p])
        else:
            lane.append(p)
    return lanes or [[]]


def phase_legend(phases: Sequence[Any]) -> Runs:
    """``phases: opening 0.60–0.73 s · pre-pass ...``: each phase with its times."""
    items = [f"{p.name} {p.start_s:.2f}–{p.end_s:.2f} s" for p in phases]
    return [("phases: ", "label"), (" · ".join(items), "phase")] if items else []


def legend(counts: dict[str, int]) -> Runs:
    """``▪ basket 2   • key 1,200 ...``: each kind's mark with its request count, then the
    mark of a large read."""
    runs: Runs = []
    for kind in ("basket", "key", "metadata", "other"):
        runs += [(POINT[kind] + " ", kind), (f"{kind} {counts.get(kind, 0):,}  ", "label")]
    return [*runs, (f"{FILL} a large read", "label")]


__all__ = ["draw", "legend", "phase_legend", "phase_row"]
