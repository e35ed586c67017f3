"""The advisor core: advise() end to end on tiny data, the verdict, and each recommendation's
trigger and absence.  Rules are pure functions of the context, so each is driven across its
threshold by changing the one figure it keys on, starting from a stored calibration
(``stored``: tests/data/tui_small_files.json), never from a live one, whose figures move with
the machine's load."""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from hep_advisor.findings.advice import Advice
from hep_advisor.findings.recommendation import MIN_SPEEDUP, Recommendation, severity_for
from hep_advisor.models import scenarios as sc
from hep_advisor.models.physics import PARAMS
from hep_advisor.pipeline.advise import NoUsableData, advise
from hep_advisor.pipeline.derive import advise_from
from hep_advisor.probes.readtests.readers import parse_reader
from hep_advisor.probes.readtests.results import RequestPoint
from hep_advisor.rules import Context, recommend
from hep_advisor.rules.branches import branches_rule
from hep_advisor.rules.compression import compression_rule
from hep_advisor.rules.files import merge_rule, nice_size, per_file_overhead, rewrite_rule
from hep_advisor.rules.storage import (
    LAYOUT_MIN_SHARE,
    cache_rule,
    layout_rule,
    readahead_rule,
    treecache_rule,
)
from hep_advisor.rules.verdict import verdict
from hep_advisor.rules.workers import knee, workers_rule


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="module")
def small(tiny_demo: Path, cache_dir: Path) -> Advice:
    mp = pytest.MonkeyPatch()
    mp.setenv("HEP_ADVISOR_CACHE", str(cache_dir))
    try:
        return advise([str(tiny_demo / "small_files")], budget_s=4, label="small")
    finally:
        mp.undo()


@pytest.fixture(scope="module")
def stored() -> Advice:
    """Advice from a stored site, dataset and calibration (the tiny demo's small files): the
    same fitted model every run."""
    from tui_helpers import fixture_advice

    return fixture_advice(label="small")


def context(a: Advice, **params: float) -> Context:
    """The advice's context with some model parameters replaced."""
    assert a.fitted is not None and a.baseline is not None and a.model is not None
    b = a.baseline
    if params:
        b = replace(b, params=replace(b.params, **params))
    return Context(site=a.site, dataset=a.dataset, calibration=a.calibration, model=a.fitted,
                   baseline=b, summary=a.model, verdict=verdict(b), label=a.label,
                   inputs=a.inputs)


def test_advise_end_to_end(small: Advice) -> None:
    assert small.model is not None and small.verdict is not None
    shares = [s.share for s in small.verdict.shares]
    assert abs(sum(shares) - 1.0) < 0.02 and shares == sorted(shares, reverse=True)
    for r in small.recommendations:
        assert r.predicted_speedup >= MIN_SPEEDUP
        assert r.speedup_low <= r.predicted_speedup <= r.speedup_high
        assert r.severity == severity_for(r.predicted_speedup, r.speedup_low, r.speedup_high)
        assert r.evidence and r.actions and r.dataset == "small"
    speedups = [r.predicted_speedup for r in small.recommendations]
    assert speedups == sorted(speedups, reverse=True)
    assert small.predict(workers=1)[0].speedup == pytest.approx(1.0, rel=1e-6)


def test_cached_calibration_is_reused(small: Advice, tiny_demo: Path, cache_dir: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HEP_ADVISOR_CACHE", str(cache_dir))
    again = advise([str(tiny_demo / "small_files")], budget_s=4, label="small")
    assert again.calibration == small.calibration
    assert again.calibration_created == small.calibration_created
    assert list(cache_dir.glob("calibrations/*.json")) and \
        not list(cache_dir.glob("calibrations/.tmp-*"))


def test_cache_misses_when_a_file_changes(tiny_demo: Path, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from hep_advisor.pipeline import cache

    monkeypatch.setenv("HEP_ADVISOR_CACHE", str(tmp_path / "c"))
    src = tiny_demo / "flat" / "pythia_zstd5.root"
    f = tmp_path / "a.root"
    f.write_bytes(src.read_bytes())
    k1 = cache.cache_key([str(f)], "uproot", None, None)
    assert cache.cache_key([str(f)], "root", None, None) != k1
    with f.open("ab") as fh:
        fh.write(b"\0")
    assert cache.cache_key([str(f)], "uproot", None, None) != k1
    assert cache.cache_key([str(tmp_path / "none")], "uproot", None, None) is None
    (tmp_path / "c" / "calibrations").mkdir(parents=True)
    (tmp_path / "c" / "calibrations" / f"{k1}.json").write_text("{broken")
    assert cache.load(k1) is None


def test_no_usable_data_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.root"
    bad.write_text("not root")
    with pytest.raises(NoUsableData) as exc:
        advise([str(bad)], budget_s=1, cache=False)
    assert str(bad) in str(exc.value) and "\n" not in str(exc.value)


def test_cancelled_advice_is_marked_partial(tiny_demo: Path, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HEP_ADVISOR_CACHE", str(tmp_path))
    cancel = threading.Event()
    cancel.set()
    a = advise([str(tiny_demo / "merged")], budget_s=2, cancel=cancel)
    assert a.calibration is not None and a.calibration.partial
    assert any("partial" in n for n in a.notes)
    assert not list(tmp_path.glob("calibrations/*.json"))  # a partial calibration is not cached


def test_on_probed_says_the_site_and_dataset_before_the_read_tests(
        tiny_demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``advise(on_probed=...)`` gets the probes before the calibration starts (the TUI fills
    its cards with them), with a fresh calibration and with a cached one."""
    from hep_advisor.probes.readtests.runner import ProgressEvent

    monkeypatch.setenv("HEP_ADVISOR_CACHE", str(tmp_path))
    seen: list[Any] = []

    def probed(site: Any, dataset: Any) -> None:
        seen.append(("probed", site, dataset))

    def progress(ev: ProgressEvent) -> None:
        seen.append((ev.test, ev.fraction, ev.message))

    paths = [str(tiny_demo / "flat" / "pythia_zstd5.root")]
    a = advise(paths, budget_s=2, progress=progress, on_probed=probed)
    calls = [x for x in seen if x[0] == "probed"]
    assert len(calls) == 1 and calls[0][1] == a.site and calls[0][2] == a.dataset
    where = seen.index(calls[0])
    assert all(x[0] == "probe" for x in seen[:where])  # nothing of the read tests before it
    assert any(x[0] not in ("probe", "probed") for x in seen[where:])  # they came after
    seen.clear()
    again = advise(paths, budget_s=2, progress=progress, on_probed=probed)
    assert again.calibration_reused
    cached = [x[2] for x in seen if x[0] == "probed"]  # the dataset stored with it
    assert len(cached) == 1 and cached[0].trees == a.dataset.trees


def test_verdict_follows_the_slow_part(stored: Advice) -> None:
    assert stored.baseline is not None
    b = stored.baseline
    slow_dec = replace(b, params=replace(b.params, decompress_mb_per_s=0.01))
    assert verdict(slow_dec).limit == "decompression"
    slow_open = replace(b, params=replace(b.params, open_s=100.0))
    assert verdict(slow_open).limit == "per-file overhead"
    assert verdict(slow_open).shares[0].share > 0.9


def test_merge_trigger_and_absence(stored: Advice) -> None:
    on = merge_rule(context(stored, open_s=0.5))
    assert on is not None and on.kind == "merge" and on.code == "M001"
    assert on.predicted_speedup > 1.5
    assert any("hadd" in (a.command or "") for a in on.actions)
    target = next(e for e in on.evidence if e.name == "target size")
    assert target.source == "derived" and float(target.value) > 0
    off = merge_rule(context(stored, open_s=1e-7, call_s=1e-7))
    assert off is None
    t_file, rate, share = per_file_overhead(context(stored, open_s=0.5))
    assert t_file >= 0.5 and rate > 0 and 0 < share < 1


def test_rewrite_trigger_and_absence(tiny_demo: Path, stored: Advice) -> None:
    ctx = context(stored, basket_s=1e-3) if "basket_s" in PARAMS else context(stored)
    tree = ctx.tree
    assert tree is not None
    tiny = replace(tree, baskets=replace(tree.baskets, mean_compressed_bytes=500.0))
    ds = replace(stored.dataset, trees=(tiny,))
    b = ctx.baseline
    ctx = replace(ctx, baseline=replace(b, mean_basket_bytes=500.0, config={
        **b.config, "baskets": b.config["file_mb"] * 1e6 / 500.0}))
    r = rewrite_rule(replace(ctx, dataset=ds), merge_applies=False)
    if "basket_s" in PARAMS:
        assert r is not None and r.kind == "rewrite" and r.predicted_speedup > 1
        assert any("hadd -O" in (a.command or "") for a in r.actions)
    assert rewrite_rule(replace(ctx, dataset=ds), merge_applies=True) is None
    big = replace(tree, baskets=replace(tree.baskets, mean_compressed_bytes=1e6),
                  cluster_entries=float(tree.entries), clusters=None)
    assert rewrite_rule(replace(ctx, dataset=replace(ds, trees=(big,))), False) is None


def test_compression_trigger_and_absence(stored: Advice, small: Advice) -> None:
    def zlib_context(a: Advice, rate: float) -> Context:
        ctx = context(a, decompress_mb_per_s=rate)
        tree = ctx.tree
        assert tree is not None
        zlib = replace(tree, compression=replace(tree.compression, algorithm="ZLIB"))
        return replace(ctx, dataset=replace(ctx.dataset, trees=(zlib,)))

    r = compression_rule(zlib_context(stored, 0.5))
    assert r is not None and r.kind == "compression" and r.predicted_speedup > 1.2
    assert "LZ4" in r.title or "ZSTD" in r.title
    assert any(e.name == "size change" for e in r.evidence)
    assert compression_rule(zlib_context(stored, 1e5)) is None
    # a live calibration recompresses a sample of the dataset's own (ZLIB) baskets: the
    # candidate's rate and the size change are measured, not assumed (unless it ran out of
    # time on a busy machine, which it says)
    live = compression_rule(zlib_context(small, 0.5))
    assert live is not None
    assert small.calibration is not None and small.baseline is not None
    rec = {d.algorithm: d for d in small.calibration.decompression
           if d.source == "recompressed"}
    cand = "LZ4" if "LZ4" in live.title else "ZSTD"
    ev = {e.name: e for e in live.evidence}
    if cand in rec and rec[cand].compressed_mb_per_s:  # recompressed, and timed
        assert ev[f"{cand} decompression"].source == "measured"
        assert f"recompressed sample of {rec[cand].baskets} baskets" in \
            (ev[f"{cand} decompression"].note or "")
        assert ev["size change"].source == "measured"
        assert cand in small.baseline.measured_factor
    elif cand in rec:  # recompressed but not timed (its share ran out, or nothing shrank)
        assert ev[f"{cand} decompression"].source == "assumed"
    else:
        assert any(s.test == f"decompression {cand} (recompressed)"
                   for s in small.calibration.skipped)
        assert ev["size change"].source == "assumed"

def _by_size(ctx: Context) -> list[str]:
    tree = ctx.tree
    assert tree is not None and tree.branch_profiles
    return [b.name for b in sorted(tree.branch_profiles, key=lambda b: b.compressed_bytes)]


def test_branches_alone_never_yield_b001(stored: Advice) -> None:
    """``--branches`` is what the program reads: however few, without ``--uses`` the advisor
    cannot tell that it reads more than it uses."""
    ctx = context(stored)
    names = _by_size(ctx)
    for read in ((), tuple(names[:1]), tuple(names[:2]), tuple(names[-2:]), tuple(names)):
        assert branches_rule(replace(ctx, branches=read)) is None
    # nor the whole advice, from the same calibration
    again = advise_from(stored.site, stored.dataset, stored.calibration,
                        branches=names[:2], inputs=stored.inputs)
    assert again.recommendation("B001") is None
    assert any("--uses" in n and "baseline" in n for n in again.notes)


def test_branches_trigger_and_absence(stored: Advice) -> None:
    ctx = context(stored)
    names = _by_size(ctx)
    few = tuple(names[:2])
    # no --branches: the program reads every branch; the analysis uses two small ones
    r = branches_rule(replace(ctx, uses=few))
    assert r is not None and r.kind == "branches" and r.predicted_speedup > 1
    assert r.speedup_low <= r.predicted_speedup <= r.speedup_high
    ev = {e.name: e for e in r.evidence}
    assert ev["branches the program reads"].value == len(names)
    assert ev["branches the analysis uses"].value == 2
    assert all(n in (a.command or "") for a in r.actions for n in few)
    assert not any(n in (a.command or "") for a in r.actions for n in names[2:5])
    # the program reads a subset already: the gain is from that subset to the used one
    read, used = tuple(names[100:]), tuple(names[100:102])
    sub = branches_rule(replace(ctx, branches=read, uses=used))
    assert sub is not None and sub.predicted_speedup < r.predicted_speedup
    assert {e.name: e for e in sub.evidence}["branches the program reads"].value == len(read)
    assert ctx.tree is not None
    sizes = {b.name: b.compressed_bytes for b in ctx.tree.branch_profiles}
    total = sum(sizes.values())
    now = ctx.predict(sc.branches(sum(sizes[n] for n in read) / total,
                                  len(read) / len(sizes))).speedup
    then = ctx.predict(sc.branches(sum(sizes[n] for n in used) / total,
                                   len(used) / len(sizes))).speedup
    assert now is not None and then is not None
    assert sub.predicted_speedup == pytest.approx(then / now, abs=2e-3)
    # it reads what it uses (or less): nothing to gain
    assert branches_rule(replace(ctx, branches=few, uses=few)) is None
    assert branches_rule(replace(ctx, branches=few, uses=tuple(names[:3]))) is None
    # the used branches hold most of what is read: below the rule's threshold
    assert branches_rule(replace(ctx, uses=tuple(names[2:]))) is None
    assert branches_rule(replace(ctx, uses=("no such branch",))) is None


def test_uses_mismatches_are_said(stored: Advice) -> None:
    names = _by_size(context(stored))
    a = advise_from(stored.site, stored.dataset, stored.calibration,
                    branches=names[:2], uses=[names[0], names[5], "nope"])
    assert a.recommendation("B001") is None
    assert any("--uses: no branch nope" in n for n in a.notes)
    assert any(names[5] in n and "does not read" in n for n in a.notes)

def test_readahead_trigger_and_absence(stored: Advice) -> None:
    ctx = context(stored, access_ms=20.0, storage_mb_per_s=100.0)
    b = ctx.baseline
    ctx = replace(ctx, baseline=replace(b, access="sequential", config={
        **b.config, "request_bytes": 128 * 1024.0, "file_mb": 500.0}), site=replace(
        ctx.site, storage=tuple(replace(s, read_ahead_kb=128) for s in ctx.site.storage)))
    assert ctx.calibration is not None
    m = ctx.calibration.request_sweep[0].measurement if ctx.calibration.request_sweep else None
    if m is None:
        pytest.skip("the tiny calibration ran no request sweep")

    cal = ctx.calibration

    def sweep(rates: dict[int, float]) -> Context:
        pts = tuple(RequestPoint(b, "sequential", r, m) for b, r in rates.items())
        return replace(ctx, calibration=replace(cal, request_sweep=pts))

    kb = [s.read_ahead_kb for s in ctx.site.storage if s.read_ahead_kb]
    if not kb:
        pytest.skip("no read-ahead known for this storage")
    now = int(kb[0]) * 1024
    r = readahead_rule(sweep({now: 30.0, 4 * now: 60.0, 16 * now: 61.0}))
    assert r is not None and r.kind == "readahead" and r.audience == "site admin"
    assert any("blockdev --setra" in (a.command or "") for a in r.actions)
    assert all(a.requires and "root privileges" in a.requires for a in r.actions)
    assert readahead_rule(sweep({now: 60.0, 4 * now: 61.0})) is None
    scattered = replace(ctx, baseline=replace(ctx.baseline, access="scattered"))
    assert readahead_rule(replace(scattered, calibration=sweep(
        {now: 30.0, 4 * now: 60.0}).calibration)) is None


def test_treecache_trigger_and_absence(stored: Advice) -> None:
    ctx = context(stored, access_ms=8.0, storage_mb_per_s=70.0)
    scattered = replace(ctx, baseline=replace(
        ctx.baseline, access="scattered",
        config={**ctx.baseline.config, "request_bytes": 8192.0, "file_mb": 500.0}))
    r = treecache_rule(scattered)
    assert r is not None and r.kind == "treecache" and r.predicted_speedup > 1.5
    seq = replace(scattered, baseline=replace(scattered.baseline, access="sequential"))
    assert treecache_rule(seq) is None


def test_cache_trigger_and_absence(stored: Advice) -> None:
    slow_disk = context(stored, storage_mb_per_s=5.0, access_ms=10.0)
    r = cache_rule(slow_disk)
    assert r is not None and r.kind == "cache" and r.predicted_speedup > 1.05
    assert slow_disk.calibration is not None and slow_disk.calibration.memory is not None
    no_room = replace(slow_disk.calibration.memory, fits_in_ram=False)
    assert cache_rule(replace(slow_disk, calibration=replace(slow_disk.calibration,
                                                             memory=no_room))) is None
    assert cache_rule(context(stored, storage_mb_per_s=1e5, access_ms=1e-4)) is None


def test_layout_trigger_and_absence(stored: Advice) -> None:
    """Driven across its threshold: the storage rate at which storage takes exactly
    ``LAYOUT_MIN_SHARE`` of the time (at one worker per core) is found by bisection on the
    stored model; a little slower storage fires the rule, a little faster does not."""
    n = max(context(stored).cores, 1)

    def at(rate: float) -> tuple[Context, float]:
        ctx = context(stored, storage_mb_per_s=rate, access_ms=10.0)
        v = verdict(ctx.baseline, n)
        return ctx, next((s.share for s in v.shares if s.limit == "storage"), 0.0)

    lo, hi = 1e-3, 1e6  # storage rates (MB/s): share above, and below, the threshold
    assert at(lo)[1] > LAYOUT_MIN_SHARE > at(hi)[1]
    for _ in range(80):
        mid = (lo * hi) ** 0.5
        lo, hi = (mid, hi) if at(mid)[1] > LAYOUT_MIN_SHARE else (lo, mid)
    slow, slow_share = at(lo / 1.1)
    fast, fast_share = at(hi * 1.1)
    assert LAYOUT_MIN_SHARE < slow_share < LAYOUT_MIN_SHARE + 0.1
    assert LAYOUT_MIN_SHARE - 0.1 < fast_share < LAYOUT_MIN_SHARE
    r = layout_rule(slow)
    assert r is not None and r.kind == "layout" and len(r.options) >= 3
    assert all(o.caveat for o in r.options)
    assert [o.predicted_speedup for o in r.options] == sorted(
        (o.predicted_speedup for o in r.options), reverse=True)
    share = next(e for e in r.evidence if e.name.startswith("storage's share"))
    assert float(share.value) == pytest.approx(100 * slow_share, abs=0.1)
    assert layout_rule(fast) is None
    # far from the threshold both ways
    assert layout_rule(context(stored, storage_mb_per_s=0.3, access_ms=10.0)) is not None
    assert layout_rule(context(stored, storage_mb_per_s=1e5, access_ms=1e-4)) is None

def test_workers_trigger_and_absence(stored: Advice) -> None:
    from hep_advisor.probes.readtests.results import ParallelPoint
    from hep_advisor.rules.workers import BEYOND_CORES_MIN_GAIN, _beyond_cores_gain

    assert knee([(1, 10.0), (2, 19.0), (3, 20.0), (4, 20.0)]) == 2
    assert knee([(1, 10.0), (2, 10.0)]) == 1
    ctx = context(stored, parallel_efficiency=1.0)
    scaling = replace(ctx.summary, predictions=tuple(
        replace(p, aggregate_mb_per_s=10.0 * p.workers) for p in ctx.summary.predictions))
    r = workers_rule(replace(ctx, summary=scaling))
    top = max(p.workers for p in ctx.summary.predictions)
    # past the logical cores only where the calibration's run past them gained
    gain = _beyond_cores_gain(ctx)
    n = top if gain is not None and gain >= BEYOND_CORES_MIN_GAIN else min(top, ctx.logical)
    assert r is not None and r.kind == "workers" and r.workers == n
    assert ctx.calibration is not None and top > ctx.logical
    past = ParallelPoint(top, 30.0, 1.0, 1.0, top, ctx.calibration.parallel_loop[0].measurement,
                         speedup_over_cores=1.5)
    gained = replace(ctx, summary=scaling, calibration=replace(
        ctx.calibration, parallel_loop=(*ctx.calibration.parallel_loop, past)))
    r_past = workers_rule(gained)
    assert r_past is not None and r_past.workers == top
    flat_past = replace(gained, calibration=replace(
        gained.calibration, parallel_loop=(*ctx.calibration.parallel_loop,
                                           replace(past, speedup_over_cores=1.0))))
    r_flat = workers_rule(flat_past)
    assert r_flat is not None and r_flat.workers == ctx.logical
    commands = [a.command or "" for a in r.actions]
    # what today's ROOT, uproot, coffea and Dask run comes first, the reader's own way first
    # (the context has no reader: uproot's processes); PROOF-Lite last, labelled for the ROOT
    # builds that still have it (the `root` extra's ROOT 6.40 has no TProof)
    assert "ProcessPoolExecutor" in commands[0] and "EnableImplicitMT" in commands[1]
    with_root = workers_rule(replace(ctx, summary=scaling,
                                     reader=parse_reader("root.ttreecache")))
    assert with_root is not None and "EnableImplicitMT" in (with_root.actions[0].command or "")
    assert "TProof::Open" in commands[-1] and "proof" in (r.actions[-1].requires or "")
    assert not any("TProof" in c for c in commands[:-1])
    for a in r.actions:
        assert a.requires and a.description.endswith(f" — needs {a.requires}")
    flat = replace(ctx.summary, predictions=tuple(
        replace(p, aggregate_mb_per_s=10.0) for p in ctx.summary.predictions))
    assert workers_rule(replace(ctx, summary=flat)) is None


def test_every_command_says_what_it_needs(stored: Advice) -> None:
    """Each printed command or snippet that needs more than a POSIX shell is labelled with
    the tool and the versions it was checked with; the label is part of the description, so
    every view shows it."""
    ctx = context(stored, open_s=0.5, storage_mb_per_s=5.0, access_ms=10.0,
                  decompress_mb_per_s=0.5)
    tree = ctx.tree
    assert tree is not None
    ctx = replace(ctx, uses=tuple(_by_size(ctx)[:2]), dataset=replace(ctx.dataset, trees=(
        replace(tree, compression=replace(tree.compression, algorithm="ZLIB")),)))
    slow_disk = context(stored, storage_mb_per_s=0.4, access_ms=10.0)  # storage > 20% at 2 jobs
    scattered = replace(slow_disk, baseline=replace(
        slow_disk.baseline, access="scattered",
        config={**slow_disk.baseline.config, "request_bytes": 8192.0, "file_mb": 500.0}))
    found = [*recommend(ctx), *recommend(slow_disk), treecache_rule(scattered)]
    recs = [r for r in found if r is not None]
    assert {"M001", "C001", "B001", "P001", "L001", "T001"} <= {r.code for r in recs}
    for r in recs:
        for a in r.actions:
            if a.command and not a.requires:  # only the plain pre-read: cat (or find)
                assert r.code == "P001" and "cat " in a.command, f"{r.code}: {a.description}"
            if a.requires:
                assert a.description.endswith(f" — needs {a.requires}")
                assert "checked with" in a.requires or "vmtouch" in a.requires or \
                    "Linux" in a.requires or "proof" in a.requires

def test_severity_follows_the_speedup_shown(stored: Advice) -> None:
    """A speed-up of 1.9996 is shown as 2.0x, so it is critical (the threshold is 2.0), and
    one shown as 1.05x is kept."""
    from hep_advisor.models.scenarios import PredictionPoint
    from hep_advisor.rules.registry import RULES

    ctx = context(stored)

    def made(speedup: float) -> Recommendation | None:
        point = PredictionPoint(1, 1.0, 0.9, 1.1, None, speedup, speedup - 0.1, speedup + 0.1)
        return ctx.make(rule=RULES["X001"], title="x", audience="analyst", point=point,
                        scenario=sc.workers(1), summary="x", evidence=(), actions=())

    r = made(1.9996)
    assert r is not None and r.predicted_speedup == 2.0 and r.severity == "critical"
    assert made(MIN_SPEEDUP - 4e-4) is not None and made(MIN_SPEEDUP - 6e-4) is None


@pytest.mark.parametrize(("code", "speedup", "low", "high", "names"), [
    ("P001", 22.0, 4.3, 94.0, "read the files once"),  # critical, 22x wide: named
    ("M001", 2.5, 0.9, 3.0, "hep-advisor try M001"),  # a code try applies: try it
    ("T001", 1.5, 1.3, 3.0, None),  # warning, under 2.5x wide: nothing to add
    ("T001", 1.5, 0.9, 2.0, "printed read setting"),  # uncertain (below 1.25x): measure it
    ("T001", 1.1, 0.3, 3.0, None),  # info: never
])
def test_a_wide_interval_names_the_measurement_that_would_narrow_it(
        stored: Advice, code: str, speedup: float, low: float, high: float,
        names: str | None) -> None:
    from hep_advisor.models.scenarios import PredictionPoint
    from hep_advisor.rules.registry import RULES

    point = PredictionPoint(1, 1.0, 0.9, 1.1, None, speedup, low, high)
    r = context(stored).make(rule=RULES[code], title="x", audience="analyst", point=point,
                             scenario=sc.workers(1), summary="x", evidence=(), actions=())
    assert r is not None
    wide = [e for e in r.evidence if e.name == "what would narrow the interval"]
    if names is None:
        assert not wide
    else:
        assert len(wide) == 1 and names in str(wide[0].value) and wide[0].source == "derived"
        assert f"{low:.2f}-{high:.2f}x" in (wide[0].note or "")


def test_rules_outside_make_get_the_narrowing_once(stored: Advice) -> None:
    """Remote and cluster rules build their recommendations themselves: ``narrowed`` adds
    the evidence where the interval is wide, once, from the rule's record, and leaves a narrow
    one as it is."""
    from hep_advisor.rules.registry import narrowed as with_narrowing

    assert stored.recommendations
    wide = replace(stored.recommendations[0], code="X001", severity="critical",
                   predicted_speedup=3.0, speedup_low=1.0, speedup_high=9.0, evidence=())
    got = with_narrowing(wide)
    added = [e for e in got.evidence if e.name == "what would narrow the interval"]
    assert len(added) == 1 and "copy the files" in str(added[0].value)
    assert with_narrowing(got) == got
    narrow = replace(wide, speedup_low=2.5, speedup_high=3.5)
    assert with_narrowing(narrow) is narrow


def test_recommendations_are_ranked_and_json_round_trips(stored: Advice) -> None:
    recs = recommend(context(stored, open_s=0.5, storage_mb_per_s=5.0, access_ms=10.0))
    # by predicted speed-up; those their own measurement contradicts last
    keys = [(r.contradicted is not None, -r.predicted_speedup) for r in recs]
    assert keys == sorted(keys)
    assert len({r.code for r in recs}) == len(recs)
    doc = stored.to_json()
    json.dumps(doc)
    assert doc["command"] == "report" and doc["datasets"][0]["label"] == "small"
    for r in doc["recommendations"]:
        assert {"code", "kind", "title", "severity", "audience", "predicted_speedup",
                "speedup_low", "speedup_high", "evidence", "actions"} <= set(r)


def test_predict_what_ifs(stored: Advice) -> None:
    now = stored.predict(workers=1)[0]
    assert now.speedup == pytest.approx(1.0, rel=1e-6)
    cached = stored.predict(workers=1, cached=True)[0]
    assert cached.speedup is not None and cached.speedup >= 1.0
    two = stored.predict(workers=[1, 2], merge_mb=100)
    assert [p.workers for p in two] == [1, 2]
    with pytest.raises(ValueError, match="unknown what-if"):
        stored.predict(workers=1, disks=4)


def test_advise_from_is_pure(small: Advice) -> None:
    assert small.calibration is not None
    again = advise_from(small.site, small.dataset, small.calibration, label="small",
                        inputs=small.inputs)
    assert again.recommendations == small.recommendations
    assert nice_size(28) == 50 and nice_size(1.0) == 1 and nice_size(120) == 200


def test_uses_changes_the_advice_not_the_calibration(small: Advice, tiny_demo: Path,
                                                      cache_dir: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """``uses`` is an advice input: the cached calibration is reused, and the stored advice
    is kept per ``uses``."""
    from hep_advisor.pipeline.advise import cached_advice

    monkeypatch.setenv("HEP_ADVISOR_CACHE", str(cache_dir))
    paths = [str(tiny_demo / "small_files")]
    tree = small.dataset.trees[0]
    few = [b.name for b in sorted(tree.branch_profiles, key=lambda b: b.compressed_bytes)[:2]]
    a = advise(paths, budget_s=4, label="small", uses=few)
    assert a.calibration_reused and a.calibration == small.calibration
    same = advise_from(a.site, a.dataset, a.calibration, label="small", inputs=a.inputs,
                       uses=few)
    assert a.recommendations == same.recommendations
    quick = cached_advice(paths, uses=few)
    assert quick is not None and quick.recommendations == a.recommendations
    plain = cached_advice(paths)
    assert plain is not None and plain.recommendation("B001") is None


def test_cached_advice_is_the_stored_conclusion(small: Advice, tiny_demo: Path,
                                                cache_dir: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from hep_advisor.pipeline.advise import cached_advice

    monkeypatch.setenv("HEP_ADVISOR_CACHE", str(cache_dir))
    quick = cached_advice([str(tiny_demo / "small_files")])
    assert quick is not None and quick.fitted is None
    assert quick.verdict == small.verdict and quick.recommendations == small.recommendations
    assert quick.calibration_created == small.calibration_created
    with pytest.raises(ValueError, match="no fitted model"):
        quick.predict(workers=2)
    assert cached_advice([str(tiny_demo / "merged")]) is None  # never advised: nothing stored
