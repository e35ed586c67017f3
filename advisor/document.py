"""The versioned JSON document every command emits (``--json``).

``schema_version`` changes when a field is renamed or removed; new fields may be added within a
version.  Blocks that later commands add (calibration, model, recommendations) are optional.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, replace
from typing import Any

from models.scenarios import ModelSummary
from probes.readtests.results import Calibration
from probes.results import DatasetProfile, SiteProfile

from ._version import __version__
from .advice import DatasetAdvice, Recommendation, Report
from .jsonio import to_jsonable

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
        a.block() for a in report.advice), recommendations=report.recommendations)


def document_json(doc: Document) -> dict[str, Any]:
    data: dict[str, Any] = to_jsonable(doc)
    return data
