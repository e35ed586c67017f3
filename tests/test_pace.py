"""The machine's pace through a calibration: a fixed piece of work before each read test."""

from __future__ import annotations

from pathlib import Path

import pytest

from probes.readtests.pace import (
    BUSY_CPU_SHARE,
    UNSTEADY_SPREAD,
    machine_pace,
    pace_line,
    sample,
)
from probes.readtests.results import PaceSample


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
    from probes import probe_dataset
    from probes.readtests.calibrate import calibrate

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

    from advisor.core import advise_from

    a = fixture_advice()
    assert a.calibration is not None
    kw = dict(label=a.label, inputs=a.inputs)
    busy = machine_pace(_samples([2.5e-3, 2.5e-3, 6e-3, 6e-3, 2.6e-3, 6e-3]))
    quiet = machine_pace(_samples([2.5e-3, 2.5e-3, 2.6e-3, 2.6e-3]))
    noted = advise_from(a.site, a.dataset, replace(a.calibration, machine=busy), **kw)
    plain = advise_from(a.site, a.dataset, replace(a.calibration, machine=quiet), **kw)
    assert any("machine was unsteady" in n for n in noted.notes)
    assert not any("machine" in n for n in plain.notes)
