"""Advice that follows the program's reader (``--reader``): M001's and P001's speed-ups are
the replays of that reader, not the rate model's event loop; without a reader they are
unchanged.  Tiny synthetic basket maps on the fixture calibration (see
tests/test_replay_advice.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from test_replay_advice import interleaved, slow_disk_context

from hep_advisor.findings.recommendation import rank_key
from hep_advisor.models.calcosts import loop_cpu_rate
from hep_advisor.models.reader_baseline import replay_reader
from hep_advisor.models.replay import LocalDevice
from hep_advisor.models.replay.predict import MergePrediction, Reader, layout_time
from hep_advisor.models.scenarios import Scenario
from hep_advisor.probes.readtests.readers import parse_reader
from hep_advisor.probes.readtests.results import (
    BasketCost,
    Calibration,
    CallCost,
    EventLoop,
    RootPerfStats,
)
from hep_advisor.rules import recommend
from hep_advisor.rules.context import Context
from hep_advisor.rules.files import merge_rule
from hep_advisor.rules.storage import cache_rule


def contexts(size: int) -> tuple[Context, Context]:
    maps = tuple(interleaved(f"f{i}", size=size) for i in range(4))
    a, ctx = slow_disk_context(maps)
    if a.baseline is None or a.baseline.workers != 1:
        pytest.skip("the replay is of one worker")
    return ctx, replace(ctx, reader=parse_reader("uproot.iterate"))


def merge_alone(ctx: Context, reader: Reader) -> MergePrediction:
    """The merge alone replayed with ``reader`` (today's and the merged files), as M001 asked
    for it (its group size is the rule's own)."""
    found = [p for k, p in ctx._replays.items()
             if len(k) == 6 and k[3] == reader and k[4] is None and not k[5]]
    assert len(found) == 1 and found[0] is not None
    return found[0]


def test_the_reader_spec_maps_to_the_replay_reader() -> None:
    _, ctx = contexts(300)
    assert ctx.program_reader == Reader(step="100 MB")  # a key pre-pass first
    assert replace(ctx, reader=None).program_reader is None
    assert replace(ctx, reader=parse_reader("root.getentry")).program_reader == \
        Reader("root", cache_bytes=0)


@pytest.mark.parametrize("spec", ["uproot.iterate", "root.getentry"])
def test_m001_is_the_merge_replayed_with_the_programs_reader(spec: str) -> None:
    plain, _ = contexts(300)
    mine = replace(plain, reader=parse_reader(spec))
    before, rec = merge_rule(plain), merge_rule(mine)
    assert before is not None and rec is not None
    # without a reader: the rate model's merge scenario, as before
    assert before.predicted_speedup == round(
        plain.predict(_scenario(plain, before.scenario)).speedup or 0, 3)
    p = merge_alone(mine, replay_reader(parse_reader(spec)))
    assert rec.predicted_speedup == round(p.speedup, 3)
    assert (rec.speedup_low, rec.speedup_high) == (round(p.low, 3), round(p.high, 3))
    assert rec.predicted_speedup != before.predicted_speedup
    shown = {e.name: e for e in rec.evidence}
    assert shown["speed-up with the program's reader"].value == round(p.speedup, 2)
    assert any("program's reader" in s for s in rec.assumptions)
    assert not any("program's reader" in e.name for e in before.evidence)


def _scenario(ctx: Context, name: str) -> Scenario:
    found = [s for s in ctx._results if s.name == name]
    assert found
    return found[0]


def test_a_merge_that_loses_with_the_programs_reader_is_not_recommended() -> None:
    """Large baskets, every branch: the pre-pass of uproot's default step costs more on the
    merged files than the per-file costs saved; a merge with an entry-count step still
    gains: kept, marked not recommended, the options shown."""
    plain, ctx = contexts(8000)
    rec = merge_rule(ctx)
    p = merge_alone(ctx, Reader(step="100 MB"))
    assert p.speedup < 1.05  # the premise of the test
    assert rec is not None and rec.contradicted is not None
    assert rec.predicted_speedup == round(p.speedup, 3)
    assert rec.title.startswith("Not recommended")
    assert any(o.predicted_speedup >= 1.05 and "then" in o.name for o in rec.options)
    other = merge_rule(plain)
    assert other is not None and other.contradicted is None
    assert sorted([rec, other], key=rank_key)[-1] is rec  # ranked last
    assert "M001" in [r.code for r in recommend(ctx)]  # shown, ranked with the others


def test_m001_fires_where_the_engine_says_the_per_file_costs_matter() -> None:
    """M001's trigger is the engine's: the per-file overhead's share of the program's reader's
    replayed time.  Larger baskets still: the key pre-pass and the reads take the time, the
    per-file costs under 10% of it, and M001 is not raised for that reader, where the rate
    model's own event loop (no reader) still finds them worth a merge."""
    from hep_advisor.rules.files import MERGE_MIN_SHARE, per_file_overhead

    plain, ctx = contexts(12000)
    assert per_file_overhead(ctx)[2] < MERGE_MIN_SHARE <= per_file_overhead(plain)[2]
    assert merge_rule(ctx) is None and merge_rule(plain) is not None


def test_p001_is_the_programs_reader_cold_then_pre_staged() -> None:
    plain, ctx = contexts(300)
    ctx = replace(ctx, calibration=_fits(ctx))
    plain = replace(plain, calibration=ctx.calibration)
    before, rec = cache_rule(plain), cache_rule(ctx)
    r = ctx.reader_replay(Reader(step="100 MB"), Reader(step="100 MB"), after_warm=True)
    assert r is not None and r.after.io.device_requests == 0
    assert rec is not None and rec.predicted_speedup == round(r.speedup, 3)
    assert any(e.name == "speed-up with the program's reader" for e in rec.evidence)
    if before is not None:  # without a reader: the rate model's cached scenario
        assert not any("program's reader" in e.name for e in before.evidence)
        assert before.predicted_speedup == round(
            plain.predict(_scenario(plain, before.scenario)).speedup or 0, 3)


def _fits(ctx: Context) -> Calibration:
    cal = ctx.calibration
    assert cal is not None
    if cal.memory is None:
        pytest.skip("the fixture has no memory probe")
    return replace(cal, memory=replace(cal.memory, fits_in_ram=True))


def test_advise_from_passes_the_reader_to_the_rules() -> None:
    from tui_helpers import fixture_advice

    from hep_advisor.pipeline.derive import advise_from

    a = fixture_advice(label="small")
    if a.baseline is None or a.baseline.workers != 1:
        pytest.skip("the replay is of one worker")
    maps = tuple(interleaved(f"f{i}", size=300) for i in range(4))
    kw = dict(label=a.label, inputs=a.inputs, basket_maps=maps)
    with_reader = advise_from(a.site, a.dataset, a.calibration, reader="uproot.iterate", **kw)
    assumed = advise_from(a.site, a.dataset, a.calibration, **kw)  # the default reader
    without = advise_from(a.site, a.dataset, a.calibration, reader="advisor", **kw)
    m1 = next(r for r in with_reader.recommendations if r.code.startswith("M001"))
    ma = next(r for r in assumed.recommendations if r.code.startswith("M001"))
    m0 = next(r for r in without.recommendations if r.code.startswith("M001"))
    assert any(e.name == "speed-up with the program's reader" for e in m1.evidence)
    assert any(e.name == "speed-up with the program's reader" for e in ma.evidence)
    assert ma.predicted_speedup == m1.predicted_speedup  # the default is uproot.iterate
    assert not any(e.name == "speed-up with the program's reader" for e in m0.evidence)


def test_a_traced_readers_branches_are_those_replayed() -> None:
    """A reader deduced from a trace names the branches it read: M001 replays those."""
    plain, _ = contexts(300)
    few = ("b0", "b7", "b13")
    ctx = replace(plain, reader=replace(parse_reader("uproot.iterate"), branches=few))
    rec = merge_rule(ctx)
    assert rec is not None
    sub = ctx.reader_context()
    assert sub.branches == few and ctx.branches == ()
    p = merge_alone(sub, Reader(step="100 MB"))
    assert rec.predicted_speedup == round(p.speedup, 3)
    every = merge_rule(replace(plain, reader=parse_reader("uproot.iterate")))
    assert every is not None and every.predicted_speedup != rec.predicted_speedup


def test_the_programs_reader_costs_what_the_calibrations_loop_of_it_measured() -> None:
    """Where the calibration's warm event loop ran the program's reader, the replays of that
    reader on today's files cost its measured time per event plus the warm opens, and an
    entry-count step saves the pre-pass keys' CPU; another reader's loop leaves the terms."""
    maps = tuple(interleaved(f"f{i}", flush=1000, size=3000) for i in range(4))  # small files
    a, plain = slow_disk_context(maps)
    if a.baseline is None or a.baseline.workers != 1:
        pytest.skip("the replay is of one worker")
    ctx = replace(plain, reader=parse_reader("uproot.iterate"))
    cal = ctx.calibration
    assert cal is not None
    if cal.event_loop is None or cal.event_loop.warm is None or not cal.event_loop.warm.median:
        pytest.skip("the fixture has no warm event loop")
    assert ctx.reader is not None
    loop = replace(cal.event_loop, reader=ctx.reader.text)
    mine = replace(ctx, calibration=replace(cal, event_loop=loop))
    costs = mine.replay_costs()
    assert costs.call_s != plain.replay_costs().call_s  # taken from the reader's own loop
    assert costs.key_s > 0 and costs.extra_baskets
    prog = mine.program_reader
    assert prog is not None
    r = mine.reader_replay(prog, prog, after_warm=True)
    assert r is not None
    warm = loop_cpu_rate(loop)  # the warm rate, or the cold one where faster
    assert warm is not None
    # plus the first writes of a new process's peak memory, which the warm loop did not pay
    assert costs.touch_s > 0 and r.after.step_mb > 0
    assert r.after.cpu_s == pytest.approx(r.after.entries / warm + r.after.files * costs.open_s
                                          + r.after.step_mb * costs.touch_s)
    step = mine.reader_replay(prog, Reader(step=10**9))
    assert step is not None and step.after.keys == 0 < step.before.keys
    assert step.before.cpu_s - step.after.cpu_s == pytest.approx(
        step.before.keys * costs.key_s + (step.before.step_mb - step.after.step_mb) * costs.touch_s)
    # a loop of another reader: the per-call cost is not taken from it
    other = replace(cal, event_loop=replace(loop, reader="uproot.iterate:step_size=1000"))
    assert replace(ctx, calibration=other).replay_costs().call_s != costs.call_s


def test_larger_files_take_the_loops_leftover_as_work_per_mb(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Calls of several baskets per branch (larger files) of baskets above the small-basket
    bound: the program's reader's measured warm loop still sets its replayed CPU, the fitted
    per-call cost kept and the rest per MB."""
    monkeypatch.setattr("hep_advisor.rules.context.SMALL_BASKET_BYTES", 0)
    plain, ctx = contexts(300)  # ten baskets per branch and call
    cal, loop = _reader_loop(ctx)
    mine = replace(ctx, calibration=replace(cal, event_loop=loop))
    costs = mine.replay_costs()
    assert costs.call_s == pytest.approx(mine.param("call_s"))
    assert costs.key_s > 0 and costs.process_mb_per_s > 0
    _assert_replay_costs_the_loop(mine, loop, costs.open_s, costs.touch_s)
    assert costs.process_mb_per_s != plain.replay_costs().process_mb_per_s


def test_small_baskets_take_the_loops_leftover_per_basket(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The same calls of small baskets (300 bytes): what the measured costs leave of the
    warm loop is charged per basket read (each branch's first in a call with the call), none
    per MB; the replay on today's files still costs the loop's measured time, and a layout
    of fewer, larger baskets holding the same MB saves it where the per-MB split kept it."""
    _, ctx = contexts(300)
    cal, loop = _reader_loop(ctx)
    mine = replace(ctx, calibration=replace(cal, event_loop=loop))
    costs = mine.replay_costs()
    assert costs.process_mb_per_s == 0.0
    _assert_replay_costs_the_loop(mine, loop, costs.open_s, costs.touch_s)
    monkeypatch.setattr("hep_advisor.rules.context.SMALL_BASKET_BYTES", 0)
    mb_costs = replace(mine).replay_costs()  # a fresh context: the per-MB split
    assert mb_costs.process_mb_per_s > 0
    assert costs.basket_s > mb_costs.basket_s and costs.call_s > mb_costs.call_s
    prog = mine.program_reader
    assert prog is not None
    r = mine.reader_replay(prog, prog, after_warm=True)
    assert r is not None
    lt = r.before
    # today's files cost the same either way; fewer baskets of the same MB cost less per basket
    assert lt.with_costs(costs).cpu_s == pytest.approx(lt.with_costs(mb_costs).cpu_s)
    fewer = replace(lt, baskets=lt.baskets / 10, touches=(lt.touches or lt.baskets) / 10,
                    branch_calls=lt.branch_calls)
    assert fewer.with_costs(costs).cpu_s < fewer.with_costs(mb_costs).cpu_s


def test_split_calls_set_the_per_call_cost_and_every_basket_pays_its_own(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the per-call test timed one more call over the same baskets (the split calls),
    that is the per-call cost (scaled to the reader's branches per call), every basket pays
    the per-basket cost (the call holds none), the replay still costs the loop's measured
    time, and what the calls cost is no longer work per MB (baskets above the small-basket
    bound)."""
    monkeypatch.setattr("hep_advisor.rules.context.SMALL_BASKET_BYTES", 0)
    _, ctx = contexts(300)  # ten baskets per branch and call
    cal, loop = _reader_loop(ctx)
    assert loop.warm is not None
    m = replace(loop.warm, samples=(0.004,), median=0.004, unit="s")
    cc = cal.call_cost or CallCost(call_s=None, mb_per_s=None, branches=loop.branches,
                                   measurement=m)
    prog = ctx.program_reader
    assert prog is not None

    def with_split(split_s: float) -> Context:
        calls = replace(cc, split_call_s=split_s, split=m)
        return replace(ctx, calibration=replace(cal, event_loop=loop, call_cost=calls))

    mine, free = with_split(0.004), with_split(0.0)
    costs = mine.replay_costs()
    r = mine.reader_replay(prog, prog, after_warm=True)
    assert r is not None
    lt = r.before
    per_call = lt.branch_calls / lt.calls
    assert costs.call_s == pytest.approx(0.004 * per_call / cc.branches)
    assert not costs.extra_baskets  # every basket pays, the first of each call too
    assert free.replay_costs().call_s == 0.0
    _assert_replay_costs_the_loop(mine, loop, costs.open_s, costs.touch_s)
    # the calls' cost moved off the MB (which a merge keeps) onto the calls (which it saves)
    assert costs.process_mb_per_s > free.replay_costs().process_mb_per_s > 0


def test_a_getentry_loops_replay_costs_what_its_measured_loop_did() -> None:
    """Where the calibration's warm loop ran the program's ``GetEntry`` reader, ROOT's CPU
    terms are scaled so that its pre-staged replay on today's files costs that loop's time
    per event plus the opens and what a run pays once; an RDataFrame loop leaves them."""
    _, ctx = contexts(300)
    cal = ctx.calibration
    assert cal is not None and cal.event_loop is not None and cal.event_loop.warm is not None

    def ran(text: str) -> tuple[Context, EventLoop]:
        spec = parse_reader(text)
        loop = replace(cal.event_loop, engine="root", reader=spec.text)  # type: ignore[arg-type]
        return replace(ctx, reader=spec, calibration=replace(cal, event_loop=loop)), loop

    mine, loop = ran("root.getentry")
    prog = mine.program_reader
    assert prog is not None and prog.engine == "root"
    costs = mine.replay_costs()
    r = mine.reader_replay(prog, prog, after_warm=True)
    rate = loop_cpu_rate(loop)
    assert r is not None and rate is not None
    root = costs.for_engine("root")
    assert r.after.cpu_s == pytest.approx(r.after.entries / rate + r.after.files * root.open_s
                                          + costs.once_s)
    fitted = replace(ctx, reader=parse_reader("root.getentry")).replay_costs()  # not its loop
    assert fitted.for_engine("root").call_s != root.call_s
    rdf, _ = ran("rdataframe")  # its loop holds the graph's work: the terms stay fitted
    assert rdf.replay_costs().for_engine("root").call_s == fitted.for_engine("root").call_s


def test_a_getentry_loop_is_its_decompression_and_a_cost_per_entry() -> None:
    """The measured ``GetEntry`` loop split into decompression at ROOT's own rate (its perf
    stats) and a cost per entry, with none per basket or call: fewer baskets of the same bytes
    replay at the same CPU, a faster codec saves only its decompression."""
    _, ctx = contexts(300)
    cal = ctx.calibration
    assert cal is not None and cal.event_loop is not None
    spec = parse_reader("root.getentry")
    loop = replace(cal.event_loop, engine="root", reader=spec.text)
    rate = loop_cpu_rate(loop)
    assert rate is not None
    mine = replace(ctx, reader=spec, calibration=replace(cal, event_loop=loop))
    prog = mine.program_reader
    assert prog is not None
    r = mine.reader_replay(prog, prog, after_warm=True)
    assert r is not None
    loop_s = r.after.entries / rate  # the loop's measured time on today's files
    mb = r.after.compressed_mb
    # ROOT's perf stats: its decompression took a third of the loop
    stats = RootPerfStats(tree_cache=False, cache_bytes=0, cache="warm", files=1, entries=100,
                          read_calls=10, bytes_read=int(mb * 1e6), mean_read_bytes=None,
                          unzipped_bytes=int(2 * mb * 1e6), disk_time_s=0.0,
                          unzip_time_s=loop_s / 3, cpu_time_s=loop_s, real_time_s=loop_s,
                          loop_s=loop_s, events_per_s=None)
    split = replace(mine, calibration=replace(mine.calibration, root_cache_off=stats))
    root = split.replay_costs().for_engine("root")
    assert root.decompress_mb_per_s == pytest.approx(mb / (loop_s / 3))
    assert root.basket_s == root.call_s == root.process_mb_per_s == 0.0
    assert root.entry_s * r.after.entries == pytest.approx(2 * loop_s / 3, rel=1e-6)
    base = layout_time(split.basket_maps, LocalDevice(1000.0, 1e-4, warm=True), root,
                       reader=prog)
    assert base.engine == "root" and base.baskets > 4
    refilled = replace(base, baskets=base.baskets / 4).with_costs(root)
    assert refilled.cpu_s == pytest.approx(base.with_costs(root).cpu_s)  # none per basket
    plain = replace(root, decompress_basket_s=0.0)
    lz4 = base.with_costs(replace(plain, decompress_mb_per_s=1e9))
    assert base.with_costs(plain).cpu_s - lz4.cpu_s == pytest.approx(  # its decompression
        base.compressed_mb / root.decompress_mb_per_s, rel=1e-3)
    # the uniform scaling it replaces gave the baskets a share: a refill saved CPU
    assert replace(base, baskets=base.baskets / 4).with_costs(
        replace(root, basket_s=1e-4)).cpu_s < base.with_costs(replace(root, basket_s=1e-4)).cpu_s


def _reader_loop(ctx: Context) -> tuple[Calibration, EventLoop]:
    """The context's calibration, and its warm event loop as one of the program's reader."""
    cal = ctx.calibration
    assert cal is not None and cal.event_loop is not None and cal.event_loop.warm is not None
    assert ctx.reader is not None
    return cal, replace(cal.event_loop, reader=ctx.reader.text)


def _assert_replay_costs_the_loop(ctx: Context, loop: EventLoop, open_s: float,
                                  touch_s: float) -> None:
    """The program's reader replayed warm on today's files costs the loop's measured time per
    event, plus the opens and a new process's first writes of its peak memory."""
    prog = ctx.program_reader
    assert prog is not None and loop.warm is not None and loop.warm.median
    r = ctx.reader_replay(prog, prog, after_warm=True)
    assert r is not None
    rate = loop_cpu_rate(loop)  # the warm rate, or the cold one where faster
    assert rate is not None
    assert r.after.cpu_s == pytest.approx(r.after.entries / rate
                                          + r.after.files * open_s + r.after.step_mb * touch_s)


def test_measured_costs_that_overfill_the_loop_are_scaled_to_its_time() -> None:
    """Where the measured per-basket cost (with the per-call and per-key costs) adds up to
    more than the warm loop took beyond its decompression, the three are scaled down together
    to fill it: the reader's replay still costs the loop's measured time, nothing is left for
    processing."""
    _, ctx = contexts(300)
    cal, loop = _reader_loop(ctx)
    assert loop.warm is not None
    slow = BasketCost(basket_s=1.0, mb_per_s=None, baskets=10,
                      measurement=replace(loop.warm, samples=(1.0,), median=1.0, unit="s"))
    mine = replace(ctx, calibration=replace(cal, event_loop=loop, basket_cost=slow))
    costs = mine.replay_costs()
    assert 0 < costs.basket_s < 1.0 and costs.process_mb_per_s == 0.0
    assert not costs.basket_assumed
    _assert_replay_costs_the_loop(mine, loop, costs.open_s, costs.touch_s)
