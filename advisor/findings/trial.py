"""What ``hep-advisor try`` measured: the sample, the timed passes before and after, and the
predicted against the realised speed-up (the ``try`` block of the JSON document)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hep_advisor.findings.advice import Advice
from hep_advisor.findings.jsonio import to_jsonable


@dataclass(frozen=True)
class Sample:
    """The part of the dataset the recommendation was tried on: input files and compressed
    bytes, entries read, how it was picked (``files`` spread over the dataset, or ``entries``:
    an entry range of one file) and the files written from it."""

    files: int
    bytes: int
    entries: int
    method: str  # "files" or "entries" (an entry range of one file)
    outputs: int
    output_bytes: int


@dataclass(frozen=True)
class Timing:
    """The timed passes over the sample (cold where ``cache`` says so): the median seconds of
    one read, each pass's seconds, entries, rates, and how many cold reads each pass averaged
    (a read shorter than the minimum phase is repeated within its pass)."""

    seconds: float
    samples_s: tuple[float, ...]
    entries: int
    events_per_s: float
    mb_per_s: float  # compressed MB of the original sample per second
    cache: str  # "cold" (every eviction confirmed), "mixed" or "warm"
    reads_per_pass: int = 1


@dataclass(frozen=True)
class TrialResult:
    """A recommendation tried on a sample: predicted speed-up and interval (the
    recommendation's, for the whole dataset), the realised speed-up on the sample (median time
    before over median time after, the same events), the model's prediction for the sample
    as changed, and the model refitted with the two measured points."""

    code: str
    title: str
    scenario: str
    sample: Sample
    predicted_speedup: float
    speedup_low: float
    speedup_high: float
    realised_speedup: float
    before: Timing
    after: Timing
    within_interval: bool
    #: the model's prediction for the sample as changed (the scenario it ran), or None
    sample_scenario: str | None = None
    sample_predicted_speedup: float | None = None
    sample_speedup_low: float | None = None
    sample_speedup_high: float | None = None
    workers: int = 1
    budget_s: float = 0.0
    elapsed_s: float = 0.0
    scratch: str = ""
    notes: tuple[str, ...] = field(default=())
    #: after the refit with the sample's two points: the tried code's prediction (None where
    #: it is no longer recommended, or no refit was made) and the new ranking
    refit: bool = False
    refit_predicted_speedup: float | None = None
    refit_speedup_low: float | None = None
    refit_speedup_high: float | None = None
    refit_ranking: tuple[str, ...] = ()
    #: where the two points were stored with the dataset's cached advice (later ``report``
    #: and ``tui`` runs refit with them), or None
    stored: str | None = None
    #: the advice refitted and ranked again (not in the JSON)
    refitted: Advice | None = field(default=None, repr=False, compare=False,
                                    metadata={"json": False})

    def to_json(self) -> dict[str, Any]:
        return {"try": to_jsonable(self)}

    def headline(self) -> str:
        where = "within" if self.within_interval else "outside"
        return (f"{self.code}: predicted {self.predicted_speedup:.2f}x "
                f"[{self.speedup_low:.2f}-{self.speedup_high:.2f}], realised "
                f"{self.realised_speedup:.2f}x on the sample ({where} the interval)")


@dataclass(frozen=True)
class TrialPoint:
    """One trial's two measured configurations (feature rows of the model) and their rates."""

    code: str
    created: str
    realised_speedup: float
    sample_files: int
    sample_bytes: int
    before: dict[str, float]
    after: dict[str, float]
    before_mb_per_s: float
    after_mb_per_s: float

    def label(self) -> str:
        return (f"{self.code} realised {self.realised_speedup:.2f}x on {self.sample_files} "
                f"file(s), {self.sample_bytes / 1e6:,.1f} MB ({self.created[:10]})")
