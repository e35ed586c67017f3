"""Device I/Os of a file opened and read whole, cold: the rate model's ``device_ios``.

The rate model charges a file's reads by its read-ahead windows: ``file_mb / request_bytes``
requests.  A file smaller than one window is read in a fraction of a request there, yet
opening it and reading it takes several device I/Os: the header at its start, the keys, the
streamers and the tree's metadata at its end, the read-ahead's first small windows, a window
split where it meets a cached page or the device's largest I/O.  On a rate limiter each of
them spends a request slot: 120 ROOT files of 0.31 MB, read by the advisor's own event loop
on a 120-IOPS throttle, took 4.85-4.89 device reads each (counted on the block device,
``benchmarks/lab/check_cold_requests.py``) and read at 7.5 MB/s with one worker and with two,
where one request per file would have let two workers read twice as fast.

:func:`cold_file_ios` replays uproot's ``iterate`` over the sampled files' basket maps
(:mod:`.readers`) through the site's device (its read-ahead, largest I/O and page-cache
folios: :func:`.sitedevice.site_device`) and counts the I/Os that pay the device's access:
every one on a rate limiter, each that seeks on a disk (one that follows the previous
I/O in the same stream does not).  The replay gave 4.88 for those files.  Only the count is
used; the device's rates stay the fitted model's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ..physics import Params
from .cpucosts import CpuCosts
from .predict import WHOLE_FILE, Reader, layout_time
from .sitedevice import site_device

if TYPE_CHECKING:
    from hep_advisor.probes.basketmap import BasketMap
    from hep_advisor.probes.readtests.results import Calibration, RawRead
    from hep_advisor.probes.results import SiteProfile

#: Rates for the replay's device where only its I/O count is wanted (the count does not
#: depend on them).
_ANY = Params(storage_mb_per_s=100.0, access_ms=5.0, devices=1.0, decompress_mb_per_s=100.0,
              process_mb_per_s=100.0, open_s=0.0, cache_mb_per_s=5000.0)


def cold_file_ios(maps: Sequence[BasketMap], site: SiteProfile, raw: RawRead | None = None,
                  calls: float = 1.0, read_ahead_kb: int | None = None) -> float | None:
    """The device I/Os per file that pay an access when each of ``maps`` is opened and read
    whole, cold, with uproot's ``iterate`` in ``calls`` calls per file, on the site's device
    (:mod:`this module's notes <models.replay.fileios>`), at its read-ahead or at
    ``read_ahead_kb`` (a read-ahead change, A001); ``None`` without a map, or where the
    replay cannot run on them."""
    maps = [m for m in maps if m.entries > 0]
    if not maps:
        return None
    device = site_device(_ANY, raw, site)  # its form: a recorded throttle, else the sweep's
    if read_ahead_kb:
        device = replace(device, read_ahead_kb=int(read_ahead_kb))
    step = WHOLE_FILE if calls <= 1 else max(1, math.ceil(
        sum(m.entries for m in maps) / len(maps) / calls))
    try:
        lt = layout_time(maps, device, CpuCosts(open_s=0.0), reader=Reader(step=step))
    except (KeyError, ValueError, ZeroDivisionError):
        return None
    if lt.files <= 0:
        return None
    ios = lt.io.device_requests if device.limit == "max" else lt.io.seeks
    return float(ios) / lt.files


def device_ios_column(maps: Sequence[BasketMap], site: SiteProfile, cal: Calibration,
                      calls: float) -> dict[str, float]:
    """A calibration's baseline ``device_ios`` column (:func:`cold_file_ios`, its event
    loop's ``calls`` per file): empty without maps, or for remote data (the link's round
    trips are the remote model's)."""
    if not maps or cal.remote is not None:
        return {}
    ios = cold_file_ios(maps, site, cal.raw_read, calls)
    return {"device_ios": ios} if ios else {}


__all__ = ["cold_file_ios", "device_ios_column"]
