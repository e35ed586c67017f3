"""The requests of a trace, kept for its picture (offset against time, coloured by kind).

The ``trace.picture`` block of the JSON: each request's file, start, duration, offset, size and
kind, so that a saved trace (``hep-advisor trace --json -o FILE``) can be drawn again by
``report --trace FILE`` and ``tui --trace FILE``.  At most :data:`MAX_REQUESTS` are kept: when
the program made more, requests that would fall on the same spot of a :data:`GRID`
(time x offset) with the same kind are kept once (the picture drawn at that resolution is the
same), then every n-th of each kind; ``total`` says how many there were.
UI-free.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: The most requests kept for the picture.
MAX_REQUESTS = 3000
#: Time x offset cells within which requests of one kind are kept once (when there are more
#: than :data:`MAX_REQUESTS`): finer than the SVG's plot area (560 x 260 px).
GRID = (720, 360)


@dataclass(frozen=True)
class PictureRequest:
    """One read request: ``file`` indexes :attr:`RequestPicture.files`; seconds from the
    program's start; bytes."""

    file: int
    start_s: float
    duration_s: float
    offset: int
    size: int
    kind: str  # basket, key, metadata or other


@dataclass(frozen=True)
class RequestPicture:
    """The requests to draw (all of them, or a thinned set when ``total`` is larger than
    their number), the files in the order first read and how far into each the reads went
    (bytes: the files are stacked along the offset axis)."""

    files: tuple[str, ...]
    extents: tuple[int, ...]
    requests: tuple[PictureRequest, ...]
    total: int
    wall_s: float

    @property
    def thinned(self) -> bool:
        return self.total > len(self.requests)

    def bases(self) -> tuple[int, ...]:
        """Each file's start on the stacked offset axis."""
        out, at = [], 0
        for n in self.extents:
            out.append(at)
            at += n
        return tuple(out)

    @property
    def span(self) -> int:
        return max(sum(self.extents), 1)

    @property
    def t_max(self) -> float:
        ends = (r.start_s + r.duration_s for r in self.requests)
        return max(self.wall_s, max(ends, default=0.0), 1e-6)


def request_picture(reads: Sequence[Any], wall_s: float,
                    limit: int = MAX_REQUESTS) -> RequestPicture:
    """``reads``: ``hep_advisor.models.attribution.Classified`` records (``.read``: file, offset,
    size, start_s, duration_s; ``.kind``)."""
    files: dict[str, int] = {}
    extents: list[int] = []
    for c in reads:
        r = c.read
        i = files.setdefault(r.file, len(files))
        if i == len(extents):
            extents.append(0)
        extents[i] = max(extents[i], int(r.offset) + int(r.size))
    pic = RequestPicture(tuple(files), tuple(extents), (), len(reads), float(wall_s))
    ordered = sorted(reads, key=lambda c: c.read.start_s)
    if len(ordered) > limit:
        ordered = _thin(ordered, pic, limit)
    requests = tuple(PictureRequest(files[c.read.file], round(float(c.read.start_s), 6),
                                    round(float(c.read.duration_s), 6), int(c.read.offset),
                                    int(c.read.size), str(c.kind)) for c in ordered)
    return RequestPicture(pic.files, pic.extents, requests, len(reads), pic.wall_s)


def _thin(reads: list[Any], pic: RequestPicture, limit: int) -> list[Any]:
    t_max = max(pic.wall_s, max(c.read.start_s for c in reads), 1e-6)
    bases, span = pic.bases(), pic.span
    index = {f: i for i, f in enumerate(pic.files)}
    seen: set[tuple[int, int, str]] = set()
    kept = []
    for c in reads:
        x = int(GRID[0] * c.read.start_s / t_max)
        y = int(GRID[1] * (bases[index[c.read.file]] + c.read.offset) / span)
        if (x, y, c.kind) not in seen:
            seen.add((x, y, c.kind))
            kept.append(c)
    step = -(-len(kept) // limit)
    if step == 1:
        return kept
    # every n-th of each kind (a rare kind keeps at least one), in time order
    out = []
    for kind in dict.fromkeys(c.kind for c in kept):
        out += [c for c in kept if c.kind == kind][::step]
    return sorted(out, key=lambda c: c.read.start_s)


__all__ = ["MAX_REQUESTS", "PictureRequest", "RequestPicture", "request_picture"]
