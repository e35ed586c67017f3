"""What the advisor concludes: a verdict, ranked recommendations, and the ``Advice`` object.

These are plain frozen dataclasses (they become the report's JSON through ``jsonio``), with no
UI code: the terminal, Markdown and HTML views live in ``hep_advisor.render`` and are imported only
when an ``Advice`` is displayed.  ``Advice`` keeps the fitted model and its baseline (not part
of the JSON) so that a notebook can ask it further what-ifs (:meth:`Advice.predict`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from hep_advisor.models.reader_baseline import ReaderBaseline
from hep_advisor.models.scenarios import ModelSummary, PredictionPoint
from hep_advisor.probes.readtests.results import Calibration
from hep_advisor.probes.results import DatasetProfile, SiteProfile

from .recommendation import Recommendation, rank_key, with_rank_notes

if TYPE_CHECKING:
    from hep_advisor.models.scenarios import Baseline
    from hep_advisor.models.throughput import ThroughputModel

    from .cluster import ClusterAdvice
    from .trace import Trace

Limit = Literal["storage", "decompression", "processing", "per-file overhead", "network"]


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
class ReaderUsed:
    """The reader the advice is for: the user's (``--reader``, a trace) or, not told, the
    engine's documented default, assumed; ``change``: how to name another."""

    spec: str
    description: str
    assumed: bool
    change: str


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
    #: ``hep_advisor.models.reader_baseline``)
    reader_baseline: ReaderBaseline | None = None
    #: the reader the advice is for (named, or the engine's default, assumed)
    reader: ReaderUsed | None = None


@dataclass(frozen=True)
class AdviceOptions:
    """How an advice was derived from its calibration (not in the JSON): what deriving it
    again (``try``'s refit) needs to give the same kind of advice.  ``reader``: the parsed
    ``--reader`` (a ``ReaderSpec``); ``basket_maps``: those the replays read (``None``: none
    read yet)."""

    branches: tuple[str, ...] = ()
    uses: tuple[str, ...] = ()
    level: float = 0.9
    replay_merge: bool = False
    reader: Any = None
    basket_maps: tuple[Any, ...] | None = None


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
    #: ``advise(..., dask=...)``: the cluster's nodes, model and advice
    #: (``hep_advisor.pipeline.cluster_calibration``)
    cluster: ClusterAdvice | None = field(default=None, repr=False, compare=False)
    #: ``advise(..., reader=...)``: the baseline as the program reads (replayed)
    reader_baseline: ReaderBaseline | None = None
    #: the reader the advice is for (named, or the engine's default, assumed)
    reader: ReaderUsed | None = None
    #: how it was derived (:class:`AdviceOptions`), for a refit
    options: AdviceOptions = field(default_factory=AdviceOptions, repr=False, compare=False,
                                   metadata={"json": False})
    #: ``advise(..., trace=...)``: the user's program, traced (``hep_advisor.findings.trace.Trace``)
    trace: Trace | None = field(default=None, repr=False, compare=False)

    # -- parts ---------------------------------------------------------------------------------
    def block(self) -> DatasetAdvice:
        return DatasetAdvice(self.label, self.inputs, self.dataset, self.calibration,
                             self.model, self.verdict, self.calibration_created, self.notes,
                             self.reader_baseline, self.reader)

    def counts(self) -> dict[str, int]:
        """Recommendations by severity (``critical``, ``warning``, ``uncertain``, ``info``)."""
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
        the analysis as it runs now.  Keywords (``hep_advisor.models.whatif.KEYWORDS``, the same as
        ``hep-advisor predict``'s options): ``merge_mb``, ``compression`` (``"ZSTD"``, ...;
        ``compression_factor``, ``decompress_mb_per_s``), ``branches`` (fraction of the bytes
        read), ``read_ahead_kb``, ``request_bytes``, ``site`` (a site description),
        ``storage`` (``"nvme"``, ``"separate:4"``, ...), ``prestage``, ``cached``."""
        from hep_advisor.models.whatif import predict

        if self.fitted is None or self.baseline is None:
            raise ValueError(f"{self.label}: no fitted model to predict from (the calibration "
                             "could not be fitted, or this is the cached summary and the model "
                             "is still loading)")
        return predict(self.fitted, self.baseline, workers, **scenario)

    # -- output --------------------------------------------------------------------------------
    def report(self) -> Report:
        return Report(site=self.site, advice=(self,), cluster=self.cluster,
                      trace=self.trace)

    def to_json(self) -> dict[str, Any]:
        """The report's JSON document (the same as ``hep-advisor report --format json``)."""
        return self.report().to_json()

    def plot(self, ax: Any = None) -> Any:
        """The scaling plot (matplotlib): predicted aggregate MB/s in its interval against
        workers, the measured points, the knee and the cores, and the storage capacity
        (model)."""
        from hep_advisor.render import hooks

        return hooks.plot(self, ax)

    def __rich__(self) -> Any:
        return self.report().__rich__()

    def _repr_html_(self) -> str:
        return self.report()._repr_html_()


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
        """The report's JSON document (the same as ``hep-advisor report --format json``)."""
        from hep_advisor.render import hooks

        return hooks.to_json(self)

    def __rich__(self) -> Any:
        from hep_advisor.render import hooks

        return hooks.rich(self)

    def _repr_html_(self) -> str:
        from hep_advisor.render import hooks

        return hooks.html(self)


def _counts(recs: tuple[Recommendation, ...]) -> dict[str, int]:
    out = {"critical": 0, "warning": 0, "uncertain": 0, "info": 0}
    for r in recs:
        out[r.severity] += 1
    return out
