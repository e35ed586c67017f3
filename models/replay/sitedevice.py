"""The calibration's local device: what the read tests measured (the cold raw read's
bandwidth, the request sweep's access time and the device's form) and what the site probe
found on the data path (read-ahead, largest I/O, page-cache folios, a cgroup block throttle),
as a :class:`~.device.LocalDevice` for the replay."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..deviceform import device_form, recorded_throttle
from .device import LocalDevice
from .folios import large_folios

if TYPE_CHECKING:
    from hep_advisor.probes.readtests.results import RawRead
    from hep_advisor.probes.results import SiteProfile

    from ..physics import Params


def device_from(params: Params, raw: RawRead | None = None,
                read_ahead_kb: int | None = None, max_io_kb: int | None = None,
                limit: str | None = None) -> LocalDevice:
    """The local device of a calibration: the cold raw read's bandwidth and the request
    sweep's access time where the read tests measured them, else the fitted model's
    ``storage_mb_per_s`` and ``access_ms``; the read-ahead the site probe found (the kernel's
    default of 128 KiB where unknown) and the device's largest I/O (the queue's
    ``max_sectors_kb``, probed; 0, unknown, where not: each read-ahead window is then one
    I/O, and a read larger than the read-ahead reads ahead no further).  ``limit``: the
    device's form where known otherwise (:func:`hep_advisor.models.deviceform.device_form`), else
    the request sweep's, else the fitted model's."""
    bw = params.storage_mb_per_s
    access_ms = params.access_ms
    if raw is not None:
        bw = raw.cold_mb_per_s or raw.bandwidth_mb_per_s or bw
        if raw.access_time_ms is not None and raw.access_time_ms > 0:
            access_ms = raw.access_time_ms
    if limit is None:
        limit = raw.device_limit if raw is not None and raw.device_limit else \
            "max" if params.storage_overlap >= 0.5 else "additive"
    elif limit == "max" and raw is not None and raw.device_limit != "max" and raw.iops_4k:
        access_ms = 1e3 / raw.iops_4k  # a rate limiter's smallest request: one request slot
    return LocalDevice(float(bw), float(access_ms) / 1e3,
                       int(read_ahead_kb) if read_ahead_kb else 128,
                       limit="max" if limit == "max" else "additive",
                       max_io_kb=int(max_io_kb) if max_io_kb and max_io_kb > 0 else 0)


def site_device(params: Params, raw: RawRead | None, site: SiteProfile) -> LocalDevice:
    """:func:`device_from` with the site's read-ahead and largest I/O: those of the first
    data path whose read-ahead the probe found, the device's form (a binding cgroup throttle
    the probe recorded makes it a rate limiter: :func:`hep_advisor.models.deviceform.device_form`),
    and its page cache (large folios where the kernel release and that path's file system give them:
    :func:`.folios.large_folios`)."""
    disk = next((s for s in site.storage if s.read_ahead_kb), None)
    dev = device_from(params, raw, disk.read_ahead_kb if disk else None,
                      disk.max_sectors_kb if disk else None, limit=device_form(raw, site))
    throttle = recorded_throttle(site)  # the one record the form was decided by
    return replace(dev, large_folios=large_folios(site.os, disk.fs_type if disk else None),
                   throttle_slice_s=getattr(throttle, "slice_s", 0.0),
                   throttle_mb_per_s=getattr(throttle, "read_mb_per_s", None) or 0.0,
                   throttle_iops=getattr(throttle, "read_iops", None) or 0.0)


__all__ = ["device_from", "site_device"]
