"""U001's prediction counts the pre-pass's CPU inside its own key reads as saved (measured by
the sampler), the sampler's per-span reading, and the device's corners where the access time
is derived from the block counters (each bandwidth with its own access time)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from test_trace_attribution import BASKETS, BRANCHES, interleaved, timed

from hep_advisor.models.attribution import TracedDevice, attribute, device_from_trace
from hep_advisor.models.replay import python_buffered, uproot_iterate
from hep_advisor.probes.trace import TracedRead
from hep_advisor.probes.trace.sampler import Sample, on_core_between
from hep_advisor.rules.reader import TraceFacts, _devices, step_rule

KEY_CPU = 0.002  # seconds on a core inside each key read (opening, seeking, copying)
BETWEEN = 0.0005  # uproot's own work between two key reads


def _prepass(cpu_in_reads: bool) -> TraceFacts:
    """uproot's default step traced cold; each key read takes the device's time plus
    ``KEY_CPU`` on a core, and ``BETWEEN`` passes between key reads.  With ``cpu_in_reads``
    the recorder saw that CPU inside the reads (the I/O term is the time in reads less it, as
    ``hep_advisor.pipeline.trace.analyse`` makes it) and the sampler saw the main thread on a core
    for it; without, the same time was spent waiting for the device (the same wall time)."""
    m = interleaved(size=40_000)
    sizes = {m.path: m.file_bytes}
    reqs = list(python_buffered(uproot_iterate(m, step_size="100 MB"), 4096, sizes))
    att0 = attribute(timed(reqs, True, reopen=True), {m.path: m}, {m.path: len(reqs)}, 1.0)
    keys = {(c.read.offset, c.read.size) for c in att0.reads if c.kind == "key"}
    reads, t = [], 0.0
    for r in timed(reqs, True, reopen=True):
        key = (r.offset, r.size) in keys
        d = r.duration_s + (KEY_CPU if key else 0.0)
        reads.append(TracedRead(r.file, r.offset, r.size, t, d))
        t += d + (BETWEEN if key else 1e-4)
    wall = t + 0.5
    att = attribute(reads, {m.path: m}, {m.path: len(reqs)}, wall)
    n = sum(c.kind == "key" for c in att.reads)
    assert n == BRANCHES * BASKETS
    pre = att.phase("pre-pass")
    assert pre is not None
    on_core = n * (KEY_CPU if cpu_in_reads else 0.0) + (n - 1) * BETWEEN
    if cpu_in_reads:
        att = replace(att, io_s=att.io_s - n * KEY_CPU)
    return TraceFacts(att, (m,), wall, device_from_trace(reads),
                      prepass_on_core=(on_core, 0.0))


def test_u001_saves_the_cpu_inside_the_key_reads() -> None:
    # the fixed program reads no key at all.  Where the key reads' extra time was CPU, all of
    # it goes with them; where it was waiting for the device, the replay's ratio scales it
    # (some kept).  So the program whose key reads worked is predicted faster after the fix,
    # by less than that CPU.  The old prediction kept the CPU inside the key reads (taken out
    # of the I/O term) in the time left after the fix: slower than the one that waited.
    waited, worked = step_rule(_prepass(False)), step_rule(_prepass(True))
    assert waited is not None and worked is not None
    wall = _prepass(True).wall_s
    after_waited = wall / waited.predicted_speedup
    after_worked = wall / worked.predicted_speedup
    n = BRANCHES * BASKETS
    assert 0.0 < after_waited - after_worked < n * KEY_CPU
    assert worked.speedup_low <= worked.predicted_speedup <= worked.speedup_high
    ev = {e.name: e.value for e in worked.evidence}
    assert ev["pre-pass time on a core, untraced"] == pytest.approx(
        n * KEY_CPU + (n - 1) * BETWEEN, abs=1e-3)


def test_u001_without_samples_keeps_the_time_between_reads() -> None:
    f = replace(_prepass(False), prepass_on_core=None)
    got = step_rule(f)
    assert got is not None
    ev = {e.name: e.value for e in got.evidence}
    assert ev["pre-pass time besides the reads, untraced"] == pytest.approx(
        (BRANCHES * BASKETS - 1) * BETWEEN, abs=1e-3)


def test_on_core_between_interpolates_and_bounds() -> None:
    # the main thread (tid 7) on a core 5 ms in every 10 ms sample; another thread beside it
    samples = [Sample(0.01 * i, "R", {7: (5_000_000 * i, 1_000_000 * i), 8: (0, 0)})
               for i in range(11)]
    on, wait, edge = on_core_between(samples, 7, 0.025, 0.075) or (0.0, 0.0, 0.0)
    assert on == pytest.approx(0.025) and wait == pytest.approx(0.005)
    assert edge == pytest.approx(0.02)
    assert on_core_between(samples, 7, -1.0, 0.05) is None  # before the first sample
    assert on_core_between(samples, 7, 0.0, 0.5) is None  # after the last
    assert on_core_between(samples, 9, 0.0, 0.05) is None  # never seen


def test_counted_access_pairs_with_its_bandwidth() -> None:
    # access derived from the block counters: each end of the bandwidth's range with the
    # access time derived at it (the crossed pairs contradict the measured I/O)
    counted = TracedDevice(70.0, 0.008, (2.0, 70.0), (0.004, 0.008), 10, 1, True, 2000)
    got = {(d.mb_per_s, d.access_s) for d in _devices(counted, 128)}
    assert got == {(70.0, 0.008), (2.0, 0.004)}
    quartiles = replace(counted, device_reads=None)  # independent quartiles: every corner
    assert len({(d.mb_per_s, d.access_s) for d in _devices(quartiles, 128)}) == 4


def test_a_wide_interval_names_what_would_narrow_it() -> None:
    from hep_advisor.rules.reader import _narrowing

    f = _prepass(True)
    assert _narrowing(f, 2.0, 5.0) == ()
    (ev,) = _narrowing(f, 2.0, 16.0)
    assert ev.name == "what would narrow the interval" and "2.00-16.00x" in (ev.note or "")
