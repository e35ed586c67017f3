"""The model through its own data: its prediction for every configuration the calibration
measured, against the measurement.

A fitted model that misses a point it was fitted on says its other numbers are guesses: the
terms that point measures (the storage, the page cache, decompression, processing, the
per-file costs, the cores' parallel efficiency) do not describe what was measured.  Each
point passes where the prediction is within ``TOLERANCE`` (10%) of the measurement, or within
the measurement's own spread ((p75 - p25) / median of its samples) where that is larger; the
others are listed, each naming the term it tests, so that a report can say which part of the
model disagrees and by how much instead of showing a clean number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .calibration import FitInputs
    from .throughput import ThroughputModel

#: A point passes within 10% (or within its measurement's own spread, where larger).
TOLERANCE = 0.10
#: The conditions worth naming (``physics.FEATURES``), and MB per file below this only
#: (raw reads and in-memory rows use a huge "file": no per-file cost).
_CONDITIONS = ("workers", "request_bytes", "cached", "io", "decompress", "process", "opens",
               "file_mb", "baskets")
_BIG_FILE_MB = 1e5

#: The term of the model each read test's points measure (by the start of their label).
TERMS = (
    ("cold sequential", "storage (raw reads)"),
    ("concurrency", "storage under concurrent readers (devices)"),
    ("random", "storage access time (random requests)"),
    ("page cache", "page cache"),
    ("decompression", "decompression"),
    ("unpacking", "processing (unpacking)"),
    ("event loop, cold", "event loop from storage (storage + decompression + processing)"),
    ("event loop, warm", "event loop from the page cache (decompression + processing + "
                         "per-call costs)"),
    ("event loop per MB", "per-MB rate beyond the per-call cost"),
    ("parallel event loop", "parallel efficiency of the cores (and per-file costs)"),
)


@dataclass(frozen=True)
class SelfCheck:
    """One measured configuration: the read test (``test``) and the model's term it tests,
    its conditions, the measured and predicted rates (MB/s), ``ratio`` = predicted /
    measured, the tolerance it is held to (relative), and whether it passes."""

    test: str
    term: str
    conditions: dict[str, float]
    measured: float
    predicted: float
    ratio: float
    tolerance: float
    ok: bool


def term_of(label: str) -> str:
    for prefix, term in TERMS:
        if label.startswith(prefix):
            return term
    return "the model"


def self_check(model: ThroughputModel, inputs: FitInputs) -> tuple[SelfCheck, ...]:
    """The model's prediction for each of the calibration's points, against the measurement."""
    if not len(inputs.y):
        return ()
    pred = model.predict(inputs.X)
    spreads: Sequence[float | None] = inputs.spreads or (None,) * len(inputs.y)
    rows = inputs.rows or ({},) * len(inputs.y)
    out = []
    for label, row, y, p, spread in zip(inputs.labels, rows, inputs.y, pred, spreads,
                                        strict=True):
        tol = max(TOLERANCE, float(spread or 0.0))
        ratio = float(p) / float(y)
        cond = {k: float(row[k]) for k in _CONDITIONS
                if k in row and not (k == "file_mb" and row[k] >= _BIG_FILE_MB)}
        out.append(SelfCheck(label, term_of(label), cond, round(float(y), 4),
                             round(float(p), 4), round(ratio, 4), round(tol, 4),
                             max(ratio, 1 / ratio) <= 1 + tol))
    return tuple(out)


def failures(checks: Sequence[SelfCheck]) -> tuple[SelfCheck, ...]:
    return tuple(c for c in checks if not c.ok)


def describe(check: SelfCheck) -> str:
    """One line: which term disagrees and by how much."""
    way = "over" if check.ratio > 1 else "under"
    return (f"{check.test}: predicted {check.predicted:.3g} MB/s, measured "
            f"{check.measured:.3g} ({check.ratio:.2f}x, {way}-predicted; tolerance "
            f"±{100 * check.tolerance:.0f}%) — the {check.term} term disagrees")


def warning_line(checks: Sequence[SelfCheck]) -> str | None:
    """The report's warning where any point fails, else ``None``."""
    bad = failures(checks)
    if not bad:
        return None
    worst = max(bad, key=lambda c: max(c.ratio, 1 / c.ratio))
    return (f"the model misses {len(bad)} of the {len(checks)} configurations it was fitted "
            f"on (worst: {describe(worst)}): its predictions, and the speed-ups below, are "
            "not borne out by its own measurements")
