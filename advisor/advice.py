"""What the advisor concludes: a verdict, ranked recommendations, and the ``Advice`` object.

These are plain frozen dataclasses (they become the report's JSON through ``jsonio``), with no
UI code: the terminal, Markdown and HTML views live in ``hep_advisor.render`` and are imported only
when an ``Advice`` is displayed.  ``Advice`` keeps the fitted model and its baseline (not part
of the JSON) so that a notebook can ask it further what-ifs (:meth:`Advice.predict`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from hep_advisor.models.replay.baseline import ReaderBaseline
from hep_advisor.models.scenarios import ModelSummary, PredictionPoint
from hep_advisor.probes.readtests.results import Calibration
from hep_advisor.probes.results import DatasetProfile, SiteProfile

if TYPE_CHECKING:
    from hep_advisor.models.scenarios import Baseline
    from hep_advisor.models.throughput import ThroughputModel

    from .cluster import ClusterAdvice
    from .trace import Trace

Severity = Literal["critical", "warning", "info"]
Audience = Literal["analyst", "site admin"]
Limit = Literal["storage", "decompression", "processing", "per-file overhead", "network"]
EvidenceSource = Literal["measured", "probed", "derived", "fitted", "assumed", "threshold"]

#: Severity from the predicted speed-up (thresholds, stated in every report's legend).
CRITICAL_SPEEDUP = 2.0
WARNING_SPEEDUP = 1.25
#: A recommendation whose predicted speed-up is below this is not shown (it does not apply).
MIN_SPEEDUP = 1.05


def severity_for(speedup: float) -> Severity:
    if speedup >= CRITICAL_SPEEDUP:
        return "critical"
    if speedup >= WARNING_SPEEDUP:
        return "warning"
    return "info"


#: A critical or warning recommendation whose interval is wider than this (high / low) names
#: the measurement that would narrow it (:func:`narrowing`).
WIDE_INTERVAL = 3.0
#: The recommendations ``hep-advisor try`` applies to a sample of the data (``hep_advisor.trial``).
TRY_CODES = ("M001", "R001", "C001")
#: For the others, the one run of the user's analysis that measures the change.
_MEASURE = {
    "P001": "read the files once (the printed command), then time the analysis",
    "T001": "time the analysis once with the printed read setting",
    "A001": "time the analysis once with the printed read-ahead",
    "W001": "time the analysis once with the recommended number of workers",
    "X001": "copy the files (the printed command), then time the analysis on the copies",
    "X002": "time the analysis twice through the cache (its first read, then again)",
    "X003": "time the analysis once reading the recommended number of files at once",
}


def narrowing(code: str, severity: str, low: float, high: float) -> Evidence | None:
    """What would narrow a critical or warning recommendation's interval wider than
    :data:`WIDE_INTERVAL`; ``None`` for a narrower one, or for ``info``."""
    if severity == "info" or low <= 0 or high <= WIDE_INTERVAL * low:
        return None
    if code in TRY_CODES:
        how = f"hep-advisor try {code}"
        what = ("it applies the change to a sample of the data, times the same cold read "
                "before and after, and refits the model with the two points")
    else:
        how = f"{_MEASURE.get(code, 'time the analysis once with the change applied')}, cold"
        what = "beside a cold run without it, that run measures the speed-up itself"
    return Evidence("what would narrow the interval", how, "", "derived",
                    f"{low:.2f}-{high:.2f}x is wider than {WIDE_INTERVAL:g}x (the "
                    f"calibration's spread and the assumptions listed): {what}")


@dataclass(frozen=True)
class Evidence:
    """One figure behind a recommendation: a measured or probed value, one derived from them,
    a fitted model parameter, an assumption, or the threshold the rule compared it with."""

    name: str
    value: float | str
    unit: str = ""
    source: EvidenceSource = "measured"
    note: str | None = None


@dataclass(frozen=True)
class Action:
    """Something to do, with the command line (or code) that does it, where there is one.
    ``requires``: what the command needs to run (a tool, a library and the versions it was
    checked with), where it needs more than a POSIX shell; the ``description`` ends with the
    same label, so that every view shows it."""

    description: str
    command: str | None = None
    requires: str | None = None

    @classmethod
    def labelled(cls, description: str, command: str | None, requires: str) -> Action:
        """An action whose description ends with what its command needs."""
        return cls(f"{description} — needs {requires}", command, requires)


@dataclass(frozen=True)
class Option:
    """One of several ways to act (the ``layout`` recommendation's device layouts), each with
    its own predicted speed-up and caveat."""

    name: str
    predicted_speedup: float
    speedup_low: float
    speedup_high: float
    caveat: str | None = None


@dataclass(frozen=True)
class Recommendation:
    """One ranked recommendation.  ``predicted_speedup`` (with its interval at the model's
    level) is the model's prediction for ``scenario`` at ``workers`` against the analysis as
    it runs now (``Verdict.workers``): how much sooner the same events are read."""

    code: str
    kind: str
    title: str
    severity: Severity
    audience: Audience
    predicted_speedup: float
    speedup_low: float
    speedup_high: float
    workers: int
    scenario: str
    summary: str
    evidence: tuple[Evidence, ...] = ()
    actions: tuple[Action, ...] = ()
    assumptions: tuple[str, ...] = ()
    options: tuple[Option, ...] = ()
    dataset: str = ""
    #: where the rule's own measured evidence points the other way beyond the predicted
    #: interval: what was measured (the recommendation is then not a gain: severity
    #: ``info``, its title says "not recommended", and it ranks last)
    contradicted: str | None = None
    #: where the interval overlaps that of a recommendation ranked next to it: the order
    #: may flip from one calibration to the next
    rank_note: str | None = None


def contradicted(rec: Recommendation, measured: str) -> Recommendation:
    """``rec`` turned into "not recommended" by its own measured evidence (``measured``
    says what was measured and against which predicted interval)."""
    return replace(rec, severity="info", contradicted=measured,
                   title=f"Not recommended: {rec.title[:1].lower()}{rec.title[1:]}",
                   summary=f"Not a gain here: {measured}. The model alone said: {rec.summary}")


def with_narrowing(rec: Recommendation) -> Recommendation:
    """``rec`` with :func:`narrowing`'s evidence where its interval calls for it and it has
    none (the rules built outside ``Context.make``: remote, cluster)."""
    wide = narrowing(rec.code, rec.severity, rec.speedup_low, rec.speedup_high)
    if wide is None or any(e.name == wide.name for e in rec.evidence):
        return rec
    return replace(rec, evidence=(*rec.evidence, wide))


def rank_key(rec: Recommendation) -> tuple[bool, float, str]:
    """Recommendations rank by predicted speed-up, those contradicted by their evidence last."""
    return (rec.contradicted is not None, -rec.predicted_speedup, rec.code)


def with_rank_notes(recs: tuple[Recommendation, ...]) -> tuple[Recommendation, ...]:
    """``recs`` (ranked) with a note on each whose interval overlaps that of one ranked just
    above or below it: within the intervals, the two may swap places in another run."""
    out = list(recs)
    shown = [r for r in recs if r.contradicted is None]
    for k, r in enumerate(shown):
        near = [o for o in shown[max(k - 1, 0):k + 2] if o is not r
                and o.speedup_low <= r.speedup_high and r.speedup_low <= o.speedup_high]
        if near:
            names = ", ".join(f"{o.code} ({o.speedup_low:.2f}–{o.speedup_high:.2f}x)"
                              for o in near)
            note = (f"its interval ({r.speedup_low:.2f}–{r.speedup_high:.2f}x) overlaps "
                    f"{names}: the ranking may flip from one run to the next")
            out[recs.index(r)] = replace(r, rank_note=note)
    return tuple(out)


@dataclass(frozen=True)
class Share:
    """The share of the analysis' time one limit takes (from the fitted model)."""

    limit: Limit
    share: float
    detail: str


@dataclass(frozen=True)
class Verdict:
    """What limits the analysis now: each limit's share of the time at ``workers`` jobs, the
    largest first, and the predicted rate there."""

    limit: Limit
    headline: str
    workers: int
    mb_per_s: float
    events_per_s: float | None
    shares: tuple[Share, ...]


@dataclass(frozen=True)
class DatasetAdvice:
    """One dataset's block of a report: its probe, calibration, model and verdict (the
    recommendations are listed once, at the top of the report, each naming its dataset)."""

    label: str
    inputs: tuple[str, ...]
    dataset: DatasetProfile
    calibration: Calibration | None
    model: ModelSummary | None
    verdict: Verdict | None
    calibration_created: str | None = None
    notes: tuple[str, ...] = ()
    #: ``--reader``: the baseline as the program reads (replayed;
    #: ``hep_advisor.models.replay.baseline``)
    reader_baseline: ReaderBaseline | None = None


@dataclass(frozen=True)
class Advice:
    """The advisor's result for one dataset: ``hep_advisor.advise(...)`` returns it.

    Its parts are objects (``site``, ``dataset``, ``calibration``, ``model`` (the fitted
    model's summary), ``verdict``, ``recommendations``); it renders itself in a terminal
    (Rich) and in Jupyter; :meth:`predict` answers further what-ifs, :meth:`to_json` gives the
    report's JSON document and :meth:`plot` draws the scaling curve (matplotlib, optional).
    """

    label: str
    site: SiteProfile
    dataset: DatasetProfile
    calibration: Calibration | None
    model: ModelSummary | None
    verdict: Verdict | None
    recommendations: tuple[Recommendation, ...]
    inputs: tuple[str, ...] = ()
    calibration_created: str | None = None
    notes: tuple[str, ...] = ()
    #: the calibration came from the cache (``advise`` made none)
    calibration_reused: bool = False
    fitted: ThroughputModel | None = field(default=None, repr=False, compare=False)
    baseline: Baseline | None = field(default=None, repr=False, compare=False)
    #: ``advise(..., dask=...)``: the cluster's nodes, model and advice (``hep_advisor.cluster``)
    cluster: ClusterAdvice | None = field(default=None, repr=False, compare=False)
    #: ``advise(..., reader=...)``: the baseline as the program reads (replayed)
    reader_baseline: ReaderBaseline | None = None
    #: ``advise(..., trace=...)``: the user's program, traced (``hep_advisor.trace.Trace``)
    trace: Trace | None = field(default=None, repr=False, compare=False)

    # -- parts ---------------------------------------------------------------------------------
    def block(self) -> DatasetAdvice:
        return DatasetAdvice(self.label, self.inputs, self.dataset, self.calibration,
                             self.model, self.verdict, self.calibration_created, self.notes,
                             self.reader_baseline)

    def counts(self) -> dict[str, int]:
        """Recommendations by severity (``critical``, ``warning``, ``info``)."""
        return _counts(self.recommendations)

    def recommendation(self, kind_or_code: str) -> Recommendation | None:
        """The recommendation of that kind (``"merge"``) or code (``"M001"``), or ``None``."""
        for r in self.recommendations:
            if kind_or_code in (r.kind, r.code):
                return r
        return None

    # -- what-ifs ------------------------------------------------------------------------------
    def predict(self, workers: int | list[int] | None = None, **scenario: Any
                ) -> list[PredictionPoint]:
        """The model's prediction with a what-if applied, e.g. ``predict(workers=4,
        merge_mb=500, cached=True)``: aggregate MB/s with its interval and the speed-up over
        the analysis as it runs now.  Keywords (``hep_advisor.whatif.KEYWORDS``, the same as
        ``hep-advisor predict``'s options): ``merge_mb``, ``compression`` (``"ZSTD"``, ...;
        ``compression_factor``, ``decompress_mb_per_s``), ``branches`` (fraction of the bytes
        read), ``read_ahead_kb``, ``request_bytes``, ``site`` (a site description),
        ``storage`` (``"nvme"``, ``"separate:4"``, ...), ``prestage``, ``cached``."""
        from .whatif import predict

        if self.fitted is None or self.baseline is None:
            raise ValueError(f"{self.label}: no fitted model to predict from (the calibration "
                             "could not be fitted, or this is the cached summary and the model "
                             "is still loading)")
        return predict(self.fitted, self.baseline, workers, **scenario)

    def try_(self, code: str, **kwargs: Any) -> Any:
        """Try recommendation ``code`` on a sample of the data before applying it: applied in
        a scratch directory, the same read timed before and after (cold), the realised
        speed-up against the predicted one (``hep_advisor.trial.try_recommendation``; keywords
        ``budget_s``, ``sample_mb``, ``scratch``, ``analysis``, ``branches``, ``progress``,
        ``cancel``).  Returns a ``TrialResult``."""
        from . import trial

        return trial.try_recommendation(self, code, **kwargs)

    # -- output --------------------------------------------------------------------------------
    def report(self) -> Report:
        return Report(site=self.site, advice=(self,), cluster=self.cluster,
                      trace=self.trace)

    def to_json(self) -> dict[str, Any]:
        """The report's JSON document (the same as ``hep-advisor report --format json``)."""
        return self.report().to_json()

    def plot(self, ax: Any = None) -> Any:
        """The scaling plot (matplotlib): predicted aggregate MB/s with its interval against
        workers, the measured points, ideal linear scaling and the storage capacity (model)."""
        from .render.plot import plot_scaling

        return plot_scaling(self, ax=ax)

    def __rich__(self) -> Any:
        from .render.advice_view import advice_view

        return advice_view(self.report())

    def _repr_html_(self) -> str:
        from .render.html import report_html

        return report_html(self.report(), standalone=False)


@dataclass(frozen=True)
class Report:
    """One or more datasets' advice on one site (``hep-advisor report``); the recommendations
    of all of them ranked together by predicted speed-up."""

    site: SiteProfile
    advice: tuple[Advice, ...]
    #: ``--dask``: the cluster's nodes, model and advice
    cluster: ClusterAdvice | None = None
    #: ``--trace FILE``: the user's program, traced (the report's Trace section)
    trace: Trace | None = None

    @property
    def recommendations(self) -> tuple[Recommendation, ...]:
        recs = [r for a in self.advice for r in a.recommendations]
        return with_rank_notes(tuple(sorted(recs, key=rank_key)))

    def counts(self) -> dict[str, int]:
        return _counts(self.recommendations)

    def to_json(self) -> dict[str, Any]:
        from .document import document_json, make_report_document

        return document_json(make_report_document(self))

    def __rich__(self) -> Any:
        from .render.advice_view import advice_view

        return advice_view(self)

    def _repr_html_(self) -> str:
        from .render.html import report_html

        return report_html(self, standalone=False)


def _counts(recs: tuple[Recommendation, ...]) -> dict[str, int]:
    out = {"critical": 0, "warning": 0, "info": 0}
    for r in recs:
        out[r.severity] += 1
    return out
