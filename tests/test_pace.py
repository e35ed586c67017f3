"""The machine's pace through a calibration: a fixed piece of work before each read test."""

from __future__ import annotations

from pathlib import Path

import pytest

from hep_advisor.probes.readtests.pace import (
    BUSY_CPU_SHARE,
    UNSTEADY_SPREAD,
    machine_pace,
    pace_line,
    sample,
)
from hep_advisor.probes.readtests.results import PaceSample


def _samples(walls: list[float], share: float = 1.0) -> list[PaceSample]:
    return [PaceSample(f"t{i}", w, w * share) for i, w in enumerate(walls)]


def test_a_sample_times_the_work_in_wall_and_cpu_time() -> None:
    s = sample("raw_read", iterations=20_000)
    assert s.test == "raw_read" and s.wall_s > 0 and s.cpu_s >= 0
    longer = sample("raw_read", iterations=400_000)
    assert longer.wall_s > s.wall_s  # the work, not a constant


def test_a_steady_machine_with_one_slow_sample() -> None:
    """One slow sample (as after a cold-read test here) does not make the machine unsteady:
    the spread is of the quartiles."""
    pace = machine_pace(_samples([2.5e-3, 2.6e-3, 2.7e-3, 2.5e-3, 5.0e-3]))
    assert pace is not None and not pace.unsteady
    assert pace.spread == pytest.approx(3.85 / 2.5 - 1.0)
    assert pace.cpu_share == pytest.approx(1.0)
    assert pace_line(pace).startswith("machine steady: a fixed piece of work took 2.5-5.0 ms "
                                      "across the calibration's tests (median 2.6, slowest "
                                      "before t4")


def test_a_slow_stretch_makes_the_machine_unsteady() -> None:
    slow = 2.5e-3 * (1.0 + UNSTEADY_SPREAD) * 1.2
    pace = machine_pace(_samples([2.5e-3] * 4 + [slow] * 4))
    assert pace is not None and pace.unsteady
    line = pace_line(pace)
    assert "unsteady" in line and "slowest before t4" in line and "calibrate again" in line


def test_few_samples_spread_from_the_extremes() -> None:
    pace = machine_pace(_samples([2.0e-3, 3.0e-3]))
    assert pace is not None and pace.spread == pytest.approx(0.5)


def test_a_process_kept_waiting_makes_the_machine_unsteady() -> None:
    pace = machine_pace(_samples([2.5e-3] * 5, share=BUSY_CPU_SHARE - 0.1))
    assert pace is not None and pace.spread == pytest.approx(0.0)
    assert pace.unsteady and "75% of its time on a core" in pace_line(pace)


def test_one_sample_is_no_pace() -> None:
    assert machine_pace(_samples([2.5e-3])) is None


def test_the_calibration_samples_before_each_test_and_at_its_end(tiny_demo: Path) -> None:
    from hep_advisor.probes import probe_dataset
    from hep_advisor.probes.readtests.calibrate import calibrate

    ds = probe_dataset([tiny_demo / "small_files"])
    cal = calibrate(ds, budget_s=6.0)
    assert cal.machine is not None
    names = [s.test for s in cal.machine.samples]
    assert names[-1] == "end" and names[0] == "raw_read"
    assert len(names) == len(set(names))  # once per test
    assert all(s.wall_s > 0 for s in cal.machine.samples)


def test_an_unsteady_calibration_is_a_note_of_the_advice() -> None:
    """The advice says when its calibration was measured on an unsteady machine (in every
    format: the notes), and says nothing where the machine was steady."""
    from dataclasses import replace

    from tui_helpers import fixture_advice

    from hep_advisor.pipeline.derive import advise_from

    a = fixture_advice()
    assert a.calibration is not None
    kw = dict(label=a.label, inputs=a.inputs)
    busy = machine_pace(_samples([2.5e-3, 2.5e-3, 6e-3, 6e-3, 2.6e-3, 6e-3]))
    quiet = machine_pace(_samples([2.5e-3, 2.5e-3, 2.6e-3, 2.6e-3]))
    noted = advise_from(a.site, a.dataset, replace(a.calibration, machine=busy), **kw)
    plain = advise_from(a.site, a.dataset, replace(a.calibration, machine=quiet), **kw)
    assert any("machine was unsteady" in n for n in noted.notes)
    assert not any("machine" in n for n in plain.notes)


def test_a_calibration_slower_than_the_hosts_usual() -> None:
    """A stretch slow throughout does not spread the samples: the median against the host's
    earlier calibrations finds it, given enough of them."""
    from hep_advisor.probes.readtests.pace import MIN_REFERENCES, SLOW_PACE, with_reference

    slow = machine_pace(_samples([7.3e-3, 7.2e-3, 7.4e-3, 7.3e-3]))
    assert slow is not None and not slow.unsteady
    usual = [3.7e-3, 3.9e-3, 4.1e-3]
    assert SLOW_PACE * 3.9e-3 < 7.3e-3 and len(usual) >= MIN_REFERENCES
    found = with_reference(slow, usual)
    assert found.slow and found.reference_s == pytest.approx(3.9e-3) and found.references == 3
    line = pace_line(found)
    assert "slower than usual" in line and "3 earlier calibrations: median 3.9 ms" in line
    assert not with_reference(slow, usual[:2]).slow  # too few to compare with
    assert with_reference(slow, usual[:2]).reference_s is None
    assert not with_reference(slow, [7.0e-3, 7.5e-3, 7.1e-3]).slow  # its usual pace


def test_the_host_paces_are_a_history_in_the_cache(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import json
    import socket

    from hep_advisor.pipeline import cache as calcache

    monkeypatch.setenv("HEP_ADVISOR_CACHE", str(tmp_path))
    assert calcache.host_paces() == []  # none yet (no directory either)
    for m in (3e-3, 4e-3, 5e-3):
        calcache.record_pace(m)
    assert calcache.host_paces() == pytest.approx([3e-3, 4e-3, 5e-3])
    path = calcache.cache_dir() / calcache.PACE_FILE
    doc = json.loads(path.read_text())
    doc.append({"host": "another-node", "median_s": 9e-3})  # a cache shared over the network
    doc.append({"host": socket.gethostname(), "median_s": "?"})
    path.write_text(json.dumps(doc))
    assert calcache.host_paces() == pytest.approx([3e-3, 4e-3, 5e-3])
    for _ in range(calcache.PACE_ENTRIES):
        calcache.record_pace(6e-3)
    assert len(json.loads(path.read_text())) == calcache.PACE_ENTRIES  # the newest kept
    path.write_text("{not json")
    assert calcache.host_paces() == []
    calcache.record_pace(7e-3)  # an unreadable history starts again
    assert calcache.host_paces() == pytest.approx([7e-3])
    assert [p.name for p in path.parent.iterdir()] == [calcache.PACE_FILE]  # no temporary
