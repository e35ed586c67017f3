"""The one place a :class:`~.results.Calibration` is built, from the read tests' results
(:mod:`.calibrate` for local data, :mod:`.remote` for data behind a link)."""

from __future__ import annotations

import dataclasses
from typing import Any

import psutil

from ..results import DatasetProfile
from .results import Calibration, MemoryFit, Skipped
from .runner import Session

#: The calibration's figures: every field but the run's own (budget, time, memory, ...).
_RUN_FIELDS = {"budget_s", "elapsed_s", "partial", "engine", "memory", "skipped",
               "files_used", "bytes_read"}


def build_calibration(session: Session, engine: str, partial: bool, dataset: DatasetProfile,
                 values: dict[str, Any], skipped: list[Skipped], files: list[str]
                 ) -> Calibration:
    """The one place a ``Calibration`` is built: the tests' ``values`` (by field), and the
    fields the tests did not fill empty (``None``, or ``()`` for a list of points)."""
    empty = {f.name: () if str(f.type).startswith("tuple") else None
             for f in dataclasses.fields(Calibration) if f.name not in _RUN_FIELDS}
    available = int(psutil.virtual_memory().available)
    return Calibration(
        budget_s=session.budget_s,
        elapsed_s=session.elapsed(),
        partial=partial,
        engine=engine,
        memory=MemoryFit(dataset_bytes=dataset.total_bytes, available_bytes=available,
                         fits_in_ram=dataset.total_bytes < available),
        skipped=tuple(skipped),
        files_used=len(files),
        bytes_read=session.bytes_read,
        **{**empty, **{k: v for k, v in values.items() if k in empty}},
    )
