"""The model through its own data: its prediction for every configuration the calibration
measured, against the measurement.

A fitted model that misses a point it was fitted on says its other numbers are guesses: the
terms that point measures (the storage, the page cache, decompression, processing, the
per-file costs, the cores' parallel efficiency) do not describe what was measured.

Each point is held to its own spread: ``Z`` (2) standard deviations of its measurement, never
less than ``TOLERANCE`` (10%).  The standard deviation (relative, of one sample) comes from

* its samples, where there are three or more: (p75 - p25) / median / 1.349;
* two samples: |a - b| / median / 1.128 (the mean range of two normal draws is 1.128 sigma);
* the parts of its samples (the raw reads time each sample in ``PARTS`` stretches;
  ``Measurement.part_spread``): how steady the device was within the one sample there is;

the largest of those that exist, and ``SINGLE_SAMPLE_RUN_SD`` (15%, labelled "assumed") where
none does; a point that measures only a part of what the model describes is held to the
uncertainty the fit gives it (the unpacking row: 30%, ``calibration.UNPACK_SD``).  Each point
says why it passes or misses (``CAUSES``): within 10%; within its
spread (the measurement's noise); the calibration's readings of one configuration (for the
model: the cold sequential read, the concurrency sweep's single worker and the 1 MiB random
reads are one row) disagree beyond their spreads on both sides of the prediction, so that no
value of the terms passes through both (a comparison the model cannot make, not a wrong
term); or the fit (the term named disagrees).  A report lists the misses, each naming the
term and by how much, instead of showing a clean number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from hep_advisor.probes.readtests.results import Measurement

from .pointnoise import SINGLE_SAMPLE_RUN_SD, point_sd

if TYPE_CHECKING:
    from .fitinputs import FitInputs
    from .throughput import ThroughputModel

#: A point passes within 10% (or within ``Z`` of its measurement's own standard deviations).
TOLERANCE = 0.10
#: Standard deviations of its measurement a point may be from the model (about 95%).
Z = 2.0
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
class LoopSample:
    """The loop's sample replayed: its compressed MB per second as the loop timed them
    (replayed, and measured: the loop's cold events per second over the sample's MB), the
    sample's size, how many parts stood on another file's map, and the device's share of the
    replayed time."""

    replayed_mb_per_s: float
    measured_mb_per_s: float
    entries: int
    files: int
    stand_ins: int
    io_share: float


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
    #: one sample's standard deviation (relative) the tolerance was drawn from
    sd: float | None = None
    #: where ``sd`` came from: "samples", "2 samples", "parts of a sample", or "assumed"
    #: (see the module's notes)
    spread_source: str | None = None
    #: how many samples the measurement has
    samples: int | None = None
    #: why the point passes or misses: ``CAUSES``
    cause: str | None = None
    #: the other tests that measured the same configuration (for the model), where any
    same_as: tuple[str, ...] = ()


#: ``SelfCheck.cause``: within 10%; within its own spread (beyond 10%: the measurement's
#: noise); the calibration measured the same configuration (for the model) differently beyond
#: their spreads, on both sides of the prediction, so that no value of the model's terms can
#: pass through both (the model lacks what tells them apart: a wrong comparison, not a wrong
#: term); beyond its spread otherwise (the fit: the term named disagrees).
CAUSES = ("within 10%", "within its spread", "readings of one configuration disagree",
          "the fit")


def term_of(label: str) -> str:
    for prefix, term in TERMS:
        if label.startswith(prefix):
            return term
    return "the model"


def _same_configuration(X: np.ndarray) -> list[list[int]]:
    """For each point, the other points of exactly the same configuration row."""
    keys = [tuple(np.round(row, 9)) for row in np.asarray(X, dtype=float)]
    return [[j for j, kj in enumerate(keys) if kj == k and j != i] for i, k in enumerate(keys)]


def self_check(model: ThroughputModel, inputs: FitInputs) -> tuple[SelfCheck, ...]:
    """The model's prediction for each of the calibration's points, against the measurement,
    each held to its own spread, with the cause of each miss (see the module's notes)."""
    if not len(inputs.y):
        return ()
    pred = np.asarray(model.predict(inputs.X), dtype=float)
    y_all = np.asarray(inputs.y, dtype=float)
    n = len(y_all)
    measurements: Sequence[Measurement | None] = inputs.measurements or (None,) * n
    rows = inputs.rows or ({},) * n
    same = _same_configuration(inputs.X)
    floors: Sequence[float | None] = inputs.floors or (None,) * n
    tols: list[tuple[float, float, str]] = []
    for m, floor in zip(measurements, floors, strict=True):
        sd, source = point_sd(m)
        if sd is None:
            sd, source = SINGLE_SAMPLE_RUN_SD, "assumed"
        if floor is not None and floor > sd:
            sd, source = floor, "what the test leaves out (as the fit trusts it)"
        tols.append((max(TOLERANCE, float(np.expm1(Z * sd))), float(sd), str(source)))
    out = []
    for i, (label, row, m) in enumerate(zip(inputs.labels, rows, measurements, strict=True)):
        y, p = float(y_all[i]), float(pred[i])
        tol, sd, source = tols[i]
        ratio = p / y
        ok = max(ratio, 1 / ratio) <= 1 + tol
        if ratio <= 1 + TOLERANCE and 1 / ratio <= 1 + TOLERANCE:
            cause = CAUSES[0]
        elif ok:
            cause = CAUSES[1]
        elif any((y_all[j] - p) * (y - p) < 0
                 and max(y_all[j] / y, y / y_all[j]) > (1 + tol) * (1 + tols[j][0])
                 for j in same[i]):
            cause = CAUSES[2]
        else:
            cause = CAUSES[3]
        cond = {k: float(row[k]) for k in _CONDITIONS
                if k in row and not (k == "file_mb" and row[k] >= _BIG_FILE_MB)}
        out.append(SelfCheck(label, term_of(label), cond, round(y, 4), round(p, 4),
                             round(ratio, 4), round(tol, 4), ok, sd=round(sd, 4),
                             spread_source=source,
                             samples=len(m.samples) if m is not None else None,
                             cause=cause,
                             same_as=tuple(inputs.labels[j] for j in same[i])))
    return tuple(out)


def failures(checks: Sequence[SelfCheck]) -> tuple[SelfCheck, ...]:
    return tuple(c for c in checks if not c.ok)


def describe(check: SelfCheck) -> str:
    """One line: which term disagrees and by how much."""
    way = "over" if check.ratio > 1 else "under"
    source = ("" if not check.spread_source else ", an assumed spread"
              if check.spread_source == "assumed" else f", from {check.spread_source}")
    head = (f"{check.test}: predicted {check.predicted:.3g} MB/s, measured "
            f"{check.measured:.3g} ({check.ratio:.2f}x, {way}-predicted; tolerance "
            f"±{100 * check.tolerance:.0f}%{source})")
    if check.cause == CAUSES[2]:
        return (f"{head} — the calibration measured the same configuration differently in "
                f"{', '.join(check.same_as)}: the {check.term} term cannot pass through both "
                "(the model does not tell those reads apart)")
    return f"{head} — the {check.term} term disagrees"


def warning_line(checks: Sequence[SelfCheck]) -> str | None:
    """The report's warning where any point fails, else ``None``."""
    bad = failures(checks)
    if not bad:
        return None
    worst = max(bad, key=lambda c: max(c.ratio, 1 / c.ratio))
    disagree = sum(1 for c in bad if c.cause == CAUSES[2])
    split = (f"; {disagree} of them where the calibration's own readings of one configuration "
             "disagree" if disagree else "")
    return (f"the model misses {len(bad)} of the {len(checks)} configurations it was fitted "
            f"on{split} (worst: {describe(worst)}): its predictions, and the speed-ups below, "
            "are not borne out by its own measurements")
