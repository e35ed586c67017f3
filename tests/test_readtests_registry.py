"""The registry of the read tests is the one list the rest derives from: budget weights, run
order, labels, the calibration view's rows and the model's inputs."""

from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path
from typing import Any

import pytest

from helpers import write_flat
from hep_advisor.models.calibration import INPUTS
from hep_advisor.probes import DatasetProfile, probe_dataset
from hep_advisor.probes.readtests import calibrate as calibrate_mod
from hep_advisor.probes.readtests import registry, results, runner
from hep_advisor.probes.readtests.calibrate import ENGINES, calibrate, step_of
from hep_advisor.probes.readtests.opencost import open_overhead
from hep_advisor.probes.readtests.registry import READ_TESTS, ReadTest
from hep_advisor.probes.readtests.results import Calibration, Measurement
from hep_advisor.probes.readtests.runner import Context, OutOfTime, Session
from hep_advisor.render import calibration_view as view
from hep_advisor.render.labels import TEST_LABELS


class FakeClock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_every_entry_is_complete_and_consistent() -> None:
    fields = {f.name for f in dataclasses.fields(Calibration)}
    names = [t.name for t in READ_TESTS]
    assert len(set(names)) == len(names)
    for t in READ_TESTS:
        assert t.weight > 0 and t.label
        assert set(t.engines) <= set(ENGINES) and t.engines
        assert t.field is None or t.field in fields, t
        assert inspect.isclass(getattr(results, t.result)), t
        assert callable(step_of(t))
    assert abs(sum(t.weight for t in READ_TESTS) - 1.0) < 0.05


def test_weights_labels_order_and_model_inputs_derive_from_the_registry() -> None:
    order = [t.name for t in READ_TESTS]
    assert list(runner.WEIGHTS) == order
    assert {t.name: t.weight for t in READ_TESTS} == runner.WEIGHTS
    assert list(TEST_LABELS) == order  # "in the order the tests run"
    assert {t.name: t.label for t in READ_TESTS} == TEST_LABELS
    assert order.index("basket_cost") < order.index("parallel_loop")
    assert set(INPUTS) <= set(order)  # the model's inputs are keyed by registry names
    assert set(view._ROWS) <= set(order)


def test_the_registry_module_imports_nothing_heavy() -> None:
    tree = ast.parse(Path(registry.__file__).read_text())
    imported = {n.module if isinstance(n, ast.ImportFrom) else a.name
                for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)
                for a in n.names}
    assert imported <= {"__future__", "dataclasses"}


def _fake_dataset(tmp_path: Path) -> DatasetProfile:
    write_flat(tmp_path / "f.root")
    return probe_dataset([tmp_path / "f.root"])


def test_calibrate_runs_the_registry_in_order_and_builds_the_calibration_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ds = _fake_dataset(tmp_path)
    ran: list[tuple[str, float]] = []
    m = Measurement("MB/s", (1.0, 1.0, 1.0), 1.0, 0.0, results.Conditions(cache="warm"))

    def fake(test: ReadTest) -> Any:
        def step(ctx: Context, share_s: float) -> Any:
            ran.append((test.name, share_s))
            assert isinstance(ctx.session, Session)
            if test.name in ("raw_read", "page_cache"):
                return m
            if test.name == "event_loop":
                raise RuntimeError("broken here")
            return None

        return step

    monkeypatch.setattr(calibrate_mod, "step_of", fake)
    cal = calibrate(ds, budget_s=5.0, engine="root")
    uproot_only = {t.name for t in READ_TESTS if t.engines == ("uproot",)}
    assert [n for n, _ in ran] == [t.name for t in READ_TESTS if t.name not in uproot_only]
    assert cal.raw_read is not None and cal.raw_read.cold is m and cal.raw_read.warm is m
    assert cal.request_sweep == () and cal.event_loop is None and cal.basket_cost is None
    reasons = {s.test: s.reason for s in cal.skipped}
    assert reasons["event_loop"] == "RuntimeError: broken here"
    assert "uproot only" in reasons["basket_cost"]
    # the shares of the tests that do not run with ROOT flow to those after them: the last
    # test is given all that is left
    last = [t.name for t in READ_TESTS if "root" in t.engines][-1]
    assert ran[-1][0] == last and ran[-1][1] == pytest.approx(5.0, rel=0.05)


def test_a_test_the_view_does_not_know_gets_a_row_of_its_own(
        monkeypatch: pytest.MonkeyPatch) -> None:
    m = Measurement("s", (2e-3, 2e-3, 2e-3), 2e-3, 0.1, results.Conditions(cache="warm"))
    extra = ReadTest("newcomer", "a newcomer", 0.01, "steps:raw_read", "call_cost", "CallCost")
    monkeypatch.setattr(view, "READ_TESTS", (*READ_TESTS, extra))
    cal = Calibration(1.0, 1.0, False, "uproot", None, (), (), None, (), None, None,
                      call_cost=results.CallCost(None, None, 3, m))
    rows = dict(view.calibration_rows(cal))
    assert "per read call" not in rows  # its own rows: none without call_s
    assert rows["a newcomer"].startswith("0.002 s")


def test_open_cost_with_no_share_left_runs_its_minimum_or_stops(tmp_path: Path) -> None:
    files = [str(write_flat(tmp_path / f"f{i}.root")) for i in range(4)]
    o = open_overhead(Session(100.0), files, ["t"], 0.0)  # a share of 0: its minimum
    assert o.cold_measurement is not None and len(o.cold_measurement.samples) == 3
    clock = FakeClock()
    session = Session(1.0, clock=clock)
    clock.t = 2.0  # the whole budget is spent: a share of 0, and no time at all
    assert session.begin("open_cost") == 0.0
    with pytest.raises(OutOfTime, match="budget ran out"):
        open_overhead(session, files, ["t"], 0.0)
