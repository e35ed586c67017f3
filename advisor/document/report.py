"""The versioned JSON document every command emits (``--json``), and reading one back.

``schema_version`` changes when a field is renamed or removed; new fields may be added within a
version.  Blocks that later commands add (calibration, model, recommendations) are optional.
:func:`read_document` reads a saved document (of this ``SCHEMA_VERSION`` only) and
:func:`model_from_document` fits the throughput model to a saved calibration.
"""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hep_advisor._version import __version__
from hep_advisor.findings.advice import DatasetAdvice, Report
from hep_advisor.findings.apply import ApplySummary
from hep_advisor.findings.cluster import ClusterAdvice
from hep_advisor.findings.jsonio import JsonInputError, from_jsonable, to_jsonable
from hep_advisor.findings.recommendation import Recommendation
from hep_advisor.findings.trace import Trace
from hep_advisor.findings.trial import TrialResult
from hep_advisor.models.reader_baseline import ReaderBaseline
from hep_advisor.models.scenarios import ModelSummary
from hep_advisor.probes.readtests.results import Calibration
from hep_advisor.probes.results import DatasetProfile, SiteProfile

if TYPE_CHECKING:
    from hep_advisor.models.scenarios import Baseline
    from hep_advisor.models.throughput import ThroughputModel

SCHEMA_VERSION = 1
PRODUCER_NAME = "hep-advisor"


@dataclass(frozen=True)
class Producer:
    name: str
    version: str


@dataclass(frozen=True)
class Document:
    """A hep-advisor result: the site and dataset probes, the read tests' calibration (``null``
    from ``probe``) and the throughput model with its predictions (``null`` from ``probe``;
    ``predict --site/--workload`` has no probe, so ``site`` and ``dataset`` are ``null``).
    ``report`` fills ``datasets`` (one block per dataset, each with its own probe,
    calibration, model and verdict) and ``recommendations`` instead."""

    schema_version: int
    producer: Producer
    created: str
    command: str
    site: SiteProfile | None = None
    dataset: DatasetProfile | None = None
    calibration: Calibration | None = None
    model: ModelSummary | None = None
    datasets: tuple[DatasetAdvice, ...] | None = None
    recommendations: tuple[Recommendation, ...] | None = None
    trace: Trace | None = None  # `hep-advisor trace`: the user's own program, traced
    #: ``try``'s result (JSON key ``try``), and ``apply``'s
    try_: TrialResult | None = field(default=None, metadata={"key": "try"})
    apply: ApplySummary | None = None
    #: ``--dask``: every node of the cluster, the shared-storage test and the cluster model
    cluster: ClusterAdvice | None = None
    #: ``calibrate --reader``: the baseline as the program reads (replayed), beside ``model``
    reader_baseline: ReaderBaseline | None = None


def make_document(
    command: str,
    site: SiteProfile | None,
    dataset: DatasetProfile | None,
    calibration: Calibration | None = None,
    model: ModelSummary | None = None,
) -> Document:
    return Document(
        schema_version=SCHEMA_VERSION,
        producer=Producer(name=PRODUCER_NAME, version=__version__),
        created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        command=command,
        site=site,
        dataset=dataset,
        calibration=calibration,
        model=model,
    )


def make_report_document(report: Report) -> Document:
    """``hep-advisor report``'s document: the site, one block per dataset, and every
    recommendation ranked by predicted speed-up (each naming its dataset)."""
    return replace(make_document("report", report.site, None), datasets=tuple(
        a.block() for a in report.advice), recommendations=report.recommendations,
        cluster=report.cluster, trace=report.trace)


def document_json(doc: Document) -> dict[str, Any]:
    data: dict[str, Any] = to_jsonable(doc)
    return data


# ---------------------------------------------------------------------------------------------
# Reading a saved document


class DocumentError(JsonInputError):
    """A saved document that cannot be used; the message is one line, ``FILE: KEY: what is
    wrong`` (as ``jsonio``'s errors)."""


def read_document(path: str | Path) -> dict[str, Any]:
    """A saved hep-advisor document as JSON data, its ``schema_version`` checked."""
    try:
        text = Path(path).read_text()
    except FileNotFoundError:
        raise DocumentError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise DocumentError(f"{path}: is a directory") from None
    except (OSError, UnicodeDecodeError) as e:
        raise DocumentError(f"{path}: cannot read: {e}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise DocumentError(f"{path}: not JSON: {e.msg} (line {e.lineno})") from None
    if not isinstance(doc, dict) or "schema_version" not in doc:
        raise DocumentError(f"{path}: schema_version: missing: not a hep-advisor document")
    if doc["schema_version"] != SCHEMA_VERSION:
        raise DocumentError(f"{path}: schema_version: {doc['schema_version']!r} is not "
                            f"supported (this version reads {SCHEMA_VERSION})")
    return doc


def read_trace(path: str | Path) -> Trace:
    """The ``trace`` block of a saved ``hep-advisor trace --json`` document (``report`` and
    ``tui --trace FILE``); anything else is a one-line :class:`DocumentError` naming the file."""
    doc = read_document(path)
    if not isinstance(doc.get("trace"), dict):
        raise DocumentError(f"{path}: trace: missing: not the output of `hep-advisor trace "
                            "--json` (save it with `hep-advisor trace --json -o FILE -- ...`)")
    try:
        trace: Trace = from_jsonable(Trace, doc["trace"], str(path), "trace")
    except JsonInputError as e:
        raise DocumentError(str(e)) from None
    return trace


def calibration_parts(doc: dict[str, Any], path: str | Path = "document"
                      ) -> tuple[SiteProfile, DatasetProfile, Calibration]:
    """The site, dataset and calibration of a ``calibrate --json`` document (read back into
    their types; a missing or mistyped key is a :class:`DocumentError` naming it)."""
    if doc.get("calibration") is None:
        raise DocumentError(f"{path}: calibration: missing (null): save the output of "
                            "`hep-advisor calibrate --json`, not of `probe`")
    for key in ("site", "dataset"):
        if not isinstance(doc.get(key), dict):
            raise DocumentError(f"{path}: {key}: missing")
    where = str(path)
    return (from_jsonable(SiteProfile, doc["site"], where, "site"),
            from_jsonable(DatasetProfile, doc["dataset"], where, "dataset"),
            from_jsonable(Calibration, doc["calibration"], where, "calibration"))


def model_from_calibration_document(doc: dict[str, Any], path: str | Path = "document"
                                    ) -> tuple[ThroughputModel, Baseline]:
    """The throughput model fitted to a ``calibrate --json`` document's calibration, and the
    baseline (the analysis as it runs now) it predicts from."""
    from hep_advisor.models.calibrated import calibrated_baseline
    from hep_advisor.pipeline.basketmaps import fit_maps

    site, dataset, cal = calibration_parts(doc, path)
    try:
        return calibrated_baseline(cal, dataset, site, maps=fit_maps(cal, dataset))
    except ValueError as e:
        raise DocumentError(f"{path}: calibration: {e}") from None


def model_from_document(path: str | Path
                        ) -> tuple[ThroughputModel, Baseline, dict[str, Any]]:
    """Read a saved ``calibrate --json`` document and fit the model to it: the model, its
    baseline and the document's data."""
    doc = read_document(path)
    model, baseline = model_from_calibration_document(doc, path)
    return model, baseline, doc
