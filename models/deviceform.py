"""The local device's form: a disk (``"additive"``: each request pays its access, then its
transfer) or a rate limiter (``"max"``: a block throttle's byte and request budgets, the larger
of the two per request).

Two sources say which.  The calibration's request sweep fits both forms to its cold
random-offset reads (``hep_advisor.probes.readtests.raw.device_limit``); its points are single short
samples, and on a noisy machine the choice has flipped between calibrations of the same disk.
The site probe reads the cgroup block throttle that binds the probing process
(``storage[].throttle``, :mod:`hep_advisor.probes.throttle`): where one is recorded and the
calibration's own cold reads run at its limits, the device *is* that rate limiter, and the record
decides. A throttle well above what the reads reached (at most ``BINDS`` of its byte rate and of its
request rate) limits nothing: the hardware below it does, and the sweep decides.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from hep_advisor.probes.readtests.results import RawRead
    from hep_advisor.probes.results import SiteProfile, ThrottleInfo

Form = Literal["additive", "max"]

#: A recorded throttle binds where the calibration's cold sequential rate or its 4 KiB
#: random-request rate reached at least this share of the throttle's limit (the reads of a
#: throttled device run at 0.9-1.0 of it; a faster throttle over slower hardware far below).
BINDS = 0.8


def recorded_throttle(site: SiteProfile | None) -> ThrottleInfo | None:
    """The first data path's cgroup read throttle with a limit, as the site probe recorded
    it; ``None`` where none was."""
    if site is None:
        return None
    for storage in site.storage:
        throttle = getattr(storage, "throttle", None)
        if throttle is not None and (throttle.read_mb_per_s or throttle.read_iops):
            return throttle
    return None


def throttle_binds(throttle: ThrottleInfo, raw: RawRead | None) -> bool:
    """Whether the calibration's reads ran at ``throttle``'s limits (true where they measured
    neither rate: the record is then all there is)."""
    cold = raw.cold_mb_per_s if raw is not None else None
    iops = raw.iops_4k if raw is not None else None
    if not cold and not iops:
        return True
    by_bytes = bool(cold and throttle.read_mb_per_s and cold >= BINDS * throttle.read_mb_per_s)
    by_count = bool(iops and throttle.read_iops and iops >= BINDS * throttle.read_iops)
    return by_bytes or by_count


def device_form(raw: RawRead | None, site: SiteProfile | None) -> Form | None:
    """``"max"`` where a recorded throttle binds; else the request sweep's choice
    (``RawRead.device_limit``), ``None`` where the sweep could not tell."""
    throttle = recorded_throttle(site)
    if throttle is not None and throttle_binds(throttle, raw):
        return "max"
    limit = raw.device_limit if raw is not None else None
    return "max" if limit == "max" else "additive" if limit == "additive" else None


__all__ = ["BINDS", "Form", "device_form", "recorded_throttle", "throttle_binds"]
