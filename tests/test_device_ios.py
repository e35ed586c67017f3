"""A file opened and read whole, cold: its device I/Os (``device_ios``, replayed from its
basket map) bind a rate limiter where its read-ahead windows alone would not.  Exact
arithmetic on the rate equations; the replay's count on tiny synthetic basket maps."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from helpers import clustered_map
from hep_advisor.models.physics import Cores, Params, config_matrix, rates

#: a 100 MB/s device with 10 ms per request; CPU: 20 ms to open, 10 ms per 0.2 MB file
LIMITER = Params(storage_mb_per_s=100.0, access_ms=10.0, devices=1.0, decompress_mb_per_s=20.0,
                 process_mb_per_s=1e9, open_s=0.02, cache_mb_per_s=5000.0, storage_overlap=1.0)
DISK = replace(LIMITER, storage_overlap=0.0)
SMALL = {"file_mb": 0.2, "request_bytes": 2.5e6, "decompress": 1.0, "opens": 1.0}


def _rate(p: Params, workers: int = 1, cores: int = 2, **row: float) -> float:
    return float(rates(p, config_matrix([{**SMALL, "workers": workers, **row}]),
                       Cores(cores))[0])


def test_a_small_files_ios_bind_a_rate_limiter() -> None:
    # one read-ahead window: 0.08 of a request, 10 ms at most; 5 I/Os: 5 x max(10 ms,
    # 0.4 ms) = 50 ms of the device, of which 30 ms (open 20 + CPU 10) hide behind the CPU
    # work: 50 ms a file, 4 MB/s, with one worker and with two (the device binds)
    assert _rate(LIMITER, device_ios=5) == pytest.approx(0.2 / 0.050)
    assert _rate(LIMITER, workers=2, device_ios=5) == pytest.approx(0.2 / 0.050, rel=1e-6)
    # without the count: a tenth of the device, two workers twice one
    one, two = _rate(LIMITER), _rate(LIMITER, workers=2)
    assert one > 0.2 / 0.040 and two > 1.8 * one


def test_on_a_disk_a_small_files_ios_wait() -> None:
    # 5 x (10 ms + 0.4 ms) of the device after the open and before the CPU work
    assert _rate(DISK, device_ios=5) == pytest.approx(0.2 / (0.020 + 0.052 + 0.010))


def test_the_count_applies_only_to_a_cold_open_from_the_device() -> None:
    for row in ({"cached": 1.0}, {"opens": 0.0}, {"io": 0.0}):
        assert _rate(LIMITER, device_ios=5, **row) == pytest.approx(_rate(LIMITER, **row))
    # no more I/Os than the file's read-ahead windows: as before
    big = {"file_mb": 50.0}
    assert _rate(LIMITER, device_ios=10, **big) == pytest.approx(_rate(LIMITER, **big))


def test_the_replay_counts_a_small_files_ios() -> None:
    from tui_helpers import fixture_advice

    from hep_advisor.models.replay.fileios import cold_file_ios

    a = fixture_advice()
    maps = [clustered_map(f"f{i}") for i in range(3)]
    raw = a.calibration.raw_read if a.calibration is not None else None
    limiter = replace(raw, device_limit="max") if raw is not None else None
    disk = replace(raw, device_limit="additive") if raw is not None else None
    site = replace(a.site, storage=tuple(replace(s, read_ahead_kb=128, throttle=None)
                                         for s in a.site.storage))
    n_max = cold_file_ios(maps, site, limiter)
    n_disk = cold_file_ios(maps, site, disk)
    assert n_max is not None and n_disk is not None
    windows = maps[0].file_bytes / (128 * 1024)
    # the header, the metadata at the end, the data's windows: more than its windows alone;
    # on a disk only those that seek pay an access
    assert n_max > windows + 1 and 1 <= n_disk <= n_max
    assert cold_file_ios([], site, limiter) is None
    # a step per call reads the same bytes: no fewer I/Os
    assert cold_file_ios(maps, site, limiter, calls=4) >= n_max - 1e-9
    assert np.isfinite(n_max)


def test_a_read_ahead_change_replays_the_files_ios_at_its_size() -> None:
    """A001's scenario takes the device I/Os replayed at its read-ahead: a larger window reads
    a small file in fewer I/Os; without a count, or where the baseline has none, the
    baseline's column stays."""
    from tui_helpers import fixture_advice

    from hep_advisor.models import scenarios as sc
    from hep_advisor.models.replay.fileios import cold_file_ios
    from hep_advisor.models.scenarios.baseline import Baseline

    a = fixture_advice()
    maps = [clustered_map(f"f{i}", entries=400) for i in range(3)]  # 0.48 MB each
    raw = a.calibration.raw_read if a.calibration is not None else None
    limiter = replace(raw, device_limit="max") if raw is not None else None
    site = replace(a.site, storage=tuple(replace(s, read_ahead_kb=128, throttle=None)
                                         for s in a.site.storage))
    now = cold_file_ios(maps, site, limiter)
    same = cold_file_ios(maps, site, limiter, read_ahead_kb=128)
    wide = cold_file_ios(maps, site, limiter, read_ahead_kb=4096)
    assert now is not None and same == now
    assert wide is not None and wide < now
    base = Baseline(params=LIMITER, cores=Cores(2), config={**SMALL, "device_ios": now})
    after = sc.read_ahead(4096, device_ios=wide).transform(base)
    assert after.config["device_ios"] == wide
    assert sc.read_ahead(4096).transform(base).config["device_ios"] == now
    plain = Baseline(params=LIMITER, cores=Cores(2), config=dict(SMALL))
    assert "device_ios" not in sc.read_ahead(4096, device_ios=wide).transform(plain).config
