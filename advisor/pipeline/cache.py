"""The calibration cache: a dataset's probe and calibration, reused while its files are unchanged.

Calibrating takes a minute; reporting on a calibrated dataset must not.  An entry is keyed by
the host, the engine, the branches read and the analysis (what the read tests measure), the
files the probe opens (``sample``, where not the default), the read tests a calibration holds,
and every input file's path, size and modification time, so a changed, added or removed file
(another host, or a version with new read tests) misses the cache.  The branches the analysis
uses (``--uses``) and ``replay_merge`` change the advice, not the measurements: they are no
part of a calibration's key, only of the stored advice's (:func:`advice_path`).
Entries live in the cache directory (``$HEP_ADVISOR_CACHE`` or ``~/.cache/hep-advisor``,
``calibrations/``), never beside the user's data; they are written to a temporary file and
renamed into place, so an interrupted write leaves no half entry.  An unreadable or outdated
entry is a miss (and is replaced by the next calibration).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import hashlib
import json
import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hep_advisor._version import __version__
from hep_advisor.findings.advice import Advice, DatasetAdvice
from hep_advisor.findings.jsonio import JsonInputError, from_jsonable, to_jsonable
from hep_advisor.findings.recommendation import Recommendation
from hep_advisor.pipeline.fileio import write_atomically
from hep_advisor.pipeline.paths import calibrations_dir
from hep_advisor.probes.dataset import DEFAULT_SAMPLE
from hep_advisor.probes.files import discover
from hep_advisor.probes.readtests.results import Calibration
from hep_advisor.probes.results import DatasetProfile, SiteProfile

#: Bumped when what an entry holds changes meaning (old entries become misses).
CACHE_FORMAT = 1


@dataclass(frozen=True)
class CachedCalibration:
    dataset: DatasetProfile
    calibration: Calibration
    created: str
    path: Path

    @property
    def age_s(self) -> float:
        return age_seconds(self.created)


def cache_dir() -> Path:
    return calibrations_dir()


def age_seconds(created: str) -> float:
    then = _dt.datetime.fromisoformat(created)
    return max(0.0, (_dt.datetime.now(_dt.timezone.utc) - then).total_seconds())


def describe_age(seconds: float) -> str:
    """``"just now"``, ``"5 min ago"``, ``"3 h ago"``, ``"2 days ago"``."""
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min ago"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.0f} h ago"
    return f"{seconds / 86400:.0f} days ago"


def cache_key(paths: Sequence[str], engine: str, branches: Sequence[str] | None,
              analysis: str | None, *, sample: int | None = DEFAULT_SAMPLE) -> str | None:
    """The entry's key, or ``None`` when the inputs name no file (nothing to cache).
    ``sample``: how many files the dataset probe opened (``None``: all), where not the
    default (the probe, and so the calibration, depends on it)."""
    found = discover(paths)
    if not found.files:
        return None
    h = hashlib.sha256()
    # a new read test (a new field of the calibration) makes older entries misses
    tests = sorted(f.name for f in dataclasses.fields(Calibration))
    ident = {"format": CACHE_FORMAT, "version": __version__, "host": socket.gethostname(),
             "tests": tests,
             "engine": engine, "branches": list(branches or []), "analysis": analysis}
    if sample != DEFAULT_SAMPLE:
        ident["sample"] = sample
    h.update(json.dumps(ident, sort_keys=True).encode())
    for f in found.files:
        try:
            st = os.stat(f.path)
        except OSError:
            continue
        h.update(f"{os.path.abspath(f.path)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:32]


def load(key: str | None) -> CachedCalibration | None:
    if key is None:
        return None
    path = cache_dir() / f"{key}.json"
    try:
        doc = json.loads(path.read_text())
        if doc.get("format") != CACHE_FORMAT:
            return None
        dataset = from_jsonable(DatasetProfile, doc["dataset"], str(path), "dataset")
        cal = from_jsonable(Calibration, doc["calibration"], str(path), "calibration")
        created = str(doc["created"])
        age_seconds(created)
    except (OSError, ValueError, KeyError, TypeError, JsonInputError):
        return None
    return CachedCalibration(dataset, cal, created, path)


def store(key: str | None, dataset: DatasetProfile, calibration: Calibration) -> str:
    """Write an entry (a partial calibration is not stored); returns its creation time."""
    created = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    if key is None or calibration.partial:
        return created
    doc: dict[str, Any] = {"format": CACHE_FORMAT, "created": created,
                           "dataset": to_jsonable(dataset),
                           "calibration": to_jsonable(calibration)}
    for old in (cache_dir() / f"{key}.advice.json",
                *cache_dir().glob(f"{key}.*.advice.json")):
        with contextlib.suppress(OSError):  # it was of the old calibration
            old.unlink(missing_ok=True)
    _write(cache_dir() / f"{key}.json", doc)
    return created


#: The machine-pace history (``calibration.machine``'s median samples): its file in the
#: cache directory, and the newest entries it keeps.
PACE_FILE = "machine-pace.json"
PACE_ENTRIES = 50


def _pace_doc() -> list[dict[str, Any]]:
    try:
        doc = json.loads((cache_dir() / PACE_FILE).read_text())
    except (OSError, ValueError):
        return []
    return [e for e in doc if isinstance(e, dict)] if isinstance(doc, list) else []


def host_paces() -> list[float]:
    """The median pace samples (seconds) of this host's earlier calibrations, oldest first:
    the reference a new calibration's pace is compared with
    (``hep_advisor.probes.readtests.pace.with_reference``).  Entries of other hosts (a cache
    directory shared over the network) and unreadable ones are left out."""
    host = socket.gethostname()
    out: list[float] = []
    for e in _pace_doc():
        try:
            if e.get("host") == host and float(e["median_s"]) > 0:
                out.append(float(e["median_s"]))
        except (KeyError, TypeError, ValueError):
            continue
    return out


def record_pace(median_s: float) -> None:
    """Add a calibration's median pace sample to the history (the newest ``PACE_ENTRIES``
    kept; written atomically; a read-only cache is skipped)."""
    created = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    entries = [*_pace_doc(), {"host": socket.gethostname(), "created": created,
                              "median_s": median_s}][-PACE_ENTRIES:]
    _write(cache_dir() / PACE_FILE, entries)


def advice_path(key: str, uses: Sequence[str] | None = None, *,
                replay_merge: bool = False) -> Path:
    """Where the advice concluded from calibration ``key`` is stored, for the options that
    change the advice and not the calibration: the branches the analysis uses (``uses``:
    ``None`` or empty when not given) and ``replay_merge`` (M001 from the replay)."""
    parts = [key]
    if uses:
        parts.append("uses-" + hashlib.sha256(json.dumps(list(uses)).encode()).hexdigest()[:12])
    if replay_merge:
        parts.append("replay-merge")
    return cache_dir() / (".".join(parts) + ".advice.json")


def store_advice(key: str | None, advice: Advice, uses: Sequence[str] | None = None, *,
                 replay_merge: bool = False) -> None:
    """Keep what ``advise`` concluded from a stored calibration (with ``uses``, the branches
    the analysis uses, and ``replay_merge``), so that the TUI can show it before the model's
    libraries have loaded (:func:`load_advice`)."""
    if key is None or advice.calibration is None or advice.calibration.partial:
        return
    doc = {"format": CACHE_FORMAT, "site": to_jsonable(advice.site),
           "block": to_jsonable(advice.block()),
           "recommendations": to_jsonable(advice.recommendations)}
    _write(advice_path(key, uses, replay_merge=replay_merge), doc)


def load_advice(key: str | None, uses: Sequence[str] | None = None, *,
                replay_merge: bool = False) -> Advice | None:
    """The advice stored with a calibration for the same ``uses`` and ``replay_merge``: every
    part but the fitted model (``predict`` needs ``advise``'s full result)."""
    if key is None:
        return None
    path = advice_path(key, uses, replay_merge=replay_merge)
    try:
        doc = json.loads(path.read_text())
        if doc.get("format") != CACHE_FORMAT:
            return None
        site = from_jsonable(SiteProfile, doc["site"], str(path), "site")
        block = from_jsonable(DatasetAdvice, doc["block"], str(path), "block")
        recs = from_jsonable(tuple[Recommendation, ...], doc["recommendations"], str(path),
                             "recommendations")
    except (OSError, ValueError, KeyError, TypeError, JsonInputError):
        return None
    return Advice(label=block.label, site=site, dataset=block.dataset,
                  calibration=block.calibration, model=block.model, verdict=block.verdict,
                  recommendations=recs, inputs=block.inputs,
                  calibration_created=block.calibration_created, notes=block.notes,
                  reader_baseline=block.reader_baseline, reader=block.reader)


def _write(target: Path, doc: Any) -> None:
    """Write atomically; a read-only cache is skipped (it only costs a later calibration)."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(target, json.dumps(doc))
    except OSError:
        pass
