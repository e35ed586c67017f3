"""The storage as the site admin sees it: each device under the data once, with the figures
the calibrations measured on it, one figure per fact.

Several datasets on one device are several calibrations of it: each figure is their median,
its range said beside it (the cold reads of three calibrations of one disk differ; the disk
has one figure).  Plain strings (no Rich), for every view.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hep_advisor.findings.advice import Advice, Report
from hep_advisor.probes.readtests.results import Calibration
from hep_advisor.probes.results import StorageInfo
from hep_advisor.render import fmt


@dataclass(frozen=True)
class DeviceFigures:
    """One storage device: its name, what it is (file system, mount, rotational, read-ahead,
    scheduler), the datasets on it, and ``(figure, value, how)`` rows."""

    name: str
    about: str
    datasets: tuple[str, ...]
    rows: tuple[tuple[str, str, str], ...]


def _device_of(storage: Sequence[StorageInfo], advice: Advice) -> StorageInfo | None:
    """The storage entry under the advice's inputs (the longest path that holds one)."""
    best: StorageInfo | None = None
    for s in storage:
        root = s.path.rstrip("/") + "/"
        if any(p == s.path or p.startswith(root) for p in advice.inputs) and (
                best is None or len(s.path) > len(best.path)):
            best = s
    if best is None and len(storage) == 1:
        return storage[0]
    return best


def _figure(cals: Sequence[Calibration], get: Callable[[Calibration], float | None],
            show: Callable[[float], str]) -> tuple[str, str] | None:
    vals = [v for v in (get(c) for c in cals) if v is not None and v > 0]
    if not vals:
        return None
    mid = statistics.median(vals)
    if len(vals) == 1:
        return show(mid), "measured by the calibration"
    return show(mid), (f"median of {len(vals)} calibrations: {show(min(vals))} to "
                       f"{show(max(vals))}")


def _best_concurrent(c: Calibration) -> float | None:
    rates = [p.aggregate_mb_per_s for p in c.concurrency if p.aggregate_mb_per_s]
    return max(rates) if rates else None


def _readers_at_best(cals: Sequence[Calibration]) -> str:
    counts = []
    for c in cals:
        pts = [p for p in c.concurrency if p.aggregate_mb_per_s]
        if pts:
            counts.append(max(pts, key=lambda p: p.aggregate_mb_per_s or 0.0).workers)
    return ", ".join(str(n) for n in sorted(set(counts)))


def shares_a_device(report: Report) -> bool:
    """Whether two datasets of ``report`` lie on one storage device: the model's storage
    capacity, fitted per dataset (its access pattern), would then print several figures for
    one device, and the views print the device's measured figures once instead."""
    storage = report.site.storage
    devices = [_device_of(storage, a) for a in report.advice]
    named = [id(d) for d in devices if d is not None]
    return len(named) != len(set(named))


def scaling_parts(report: Report, advice: Advice) -> list[tuple[str, str]]:
    """The scaling's sentence (now, the knee, the storage capacity), less the capacity where
    the datasets share a device (:func:`shares_a_device`)."""
    from hep_advisor.render import scaling

    said = scaling.summary_parts(scaling.scaling_data(advice))
    if shares_a_device(report):
        said = [(k, v) for k, v in said if k != scaling.CAPACITY_LABEL]
    return said


def scaling_text(report: Report, advice: Advice) -> str:
    return " · ".join(f"{k}: {v}" for k, v in scaling_parts(report, advice))


def device_figures(report: Report) -> list[DeviceFigures]:
    from hep_advisor.render.probe_view import storage_line

    storage = report.site.storage
    out = []
    for s in storage:
        on = [a for a in report.advice if _device_of(storage, a) is s]
        cals = [a.calibration for a in on if a.calibration is not None]
        name = s.device or s.mount_point or "storage"
        rows: list[tuple[str, str, str]] = []
        specs: tuple[tuple[str, Callable[[Calibration], float | None],
                           Callable[[float], str]], ...] = (
            ("cold sequential reads, one reader",
             lambda c: c.raw_read.cold_mb_per_s if c.raw_read else None, fmt.mb_per_s),
            ("cold reads, concurrent readers (the most)", _best_concurrent, fmt.mb_per_s),
            ("access time (random reads)",
             lambda c: c.raw_read.access_time_ms if c.raw_read else None,
             lambda v: f"{fmt.sig(v)} ms"),
            ("random 4 KiB reads",
             lambda c: c.raw_read.iops_4k if c.raw_read else None,
             lambda v: f"{fmt.num(v)} per second"),
            ("reads from the page cache",
             lambda c: c.raw_read.warm_mb_per_s if c.raw_read else None, fmt.mb_per_s),
        )
        for label, get, show in specs:
            got = _figure(cals, get, show)
            if got is None:
                continue
            value, how = got
            if label.startswith("cold reads, concurrent"):
                at = _readers_at_best(cals)
                how = f"{how}; at {at} readers" if at else how
            rows.append((label, value, how))
        out.append(DeviceFigures(name, storage_line(s), tuple(a.label for a in on),
                                 tuple(rows)))
    return out
