"""Decompression and event-loop read tests (uproot engine) on the tiny demo datasets."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import time
import zlib
from dataclasses import replace
from pathlib import Path

import cramjam
import pytest
import uproot
import xxhash

from helpers import snapshot
from hep_advisor.probes.dataset import probe_dataset
from hep_advisor.probes.readtests import readplan
from hep_advisor.probes.readtests.decompress import (
    CANDIDATES,
    ORDER,
    Payload,
    collect_baskets,
    decoder,
    inflater,
    measure_decompression,
    measure_unpacking,
    recompress,
    split_blocks,
)
from hep_advisor.probes.readtests.eventloop import (
    AnalysisError,
    PassResult,
    measure_event_loop,
    read_pass,
    resolve_analysis,
    truncate,
)
from hep_advisor.probes.readtests.readplan import BasketTouch, plan_reads, whole_baskets
from hep_advisor.probes.readtests.runner import Cancelled, ProgressEvent, Session

FLAT_FILES = {"ZLIB": "pythia_zlib1", "LZ4": "pythia_lz4", "ZSTD": "pythia_zstd5",
              "LZMA": "pythia_lzma7", "none": "pythia_none"}


@pytest.fixture(scope="module")
def flat(tiny_demo: Path) -> dict[str, str]:
    return {alg: str(tiny_demo / "flat" / f"{stem}.root") for alg, stem in FLAT_FILES.items()}


@pytest.fixture(scope="module")
def decompression(flat: dict[str, str]) -> tuple:
    # the baskets sampled are those the share's time reaches: 1.5 s on a loaded CI machine
    # kept few enough LZMA baskets that their compression factor missed the tree's by 24%
    return measure_decompression(Session(60), list(flat.values()), share_s=3.0)


def tree_factor(path: str, tree: str = "pythia") -> float:
    with uproot.open(path) as f:
        t = f[tree]
        return int(t.member("fTotBytes")) / int(t.member("fZipBytes"))


def block(tag: bytes, data: bytes, raw_len: int, checksum: bytes = b"") -> bytes:
    c = len(checksum) + len(data)
    return (tag + b"\x01" + c.to_bytes(3, "little") + raw_len.to_bytes(3, "little")
            + checksum + data)


# -- decompression -----------------------------------------------------------------------------
def test_decompression_finds_each_algorithm_of_the_flat_files(decompression: tuple) -> None:
    assert [p.algorithm for p in decompression] == list(ORDER)  # ZLIB, LZ4, ZSTD, LZMA
    for p in decompression:
        assert p.baskets > 0
        assert p.library
        assert p.compressed_mb_per_s is not None and p.compressed_mb_per_s > 0
        assert p.uncompressed_mb_per_s is not None
        assert p.uncompressed_mb_per_s >= p.compressed_mb_per_s
        m = p.measurement
        assert m.unit == "MB/s" and len(m.samples) >= 1 and m.median == p.compressed_mb_per_s
        assert m.conditions.workers == 1 and m.conditions.bytes_per_sample


def test_decompression_ratio_matches_the_trees_compression_factor(
    decompression: tuple, flat: dict[str, str]
) -> None:
    for p in decompression:
        ratio = p.uncompressed_mb_per_s / p.compressed_mb_per_s
        assert ratio == pytest.approx(tree_factor(flat[p.algorithm]), rel=0.2), p.algorithm


def test_decompression_from_a_profile_skips_uncompressed_baskets(flat: dict[str, str]) -> None:
    profile = probe_dataset([flat["ZLIB"], flat["none"]])
    points = measure_decompression(Session(60), profile, share_s=0.3)
    assert [p.algorithm for p in points if p.source == "dataset"] == ["ZLIB"]
    none_only = measure_decompression(Session(60), [flat["none"]], share_s=0.3)
    assert none_only == ()


@pytest.fixture(scope="module")
def recompressed(flat: dict[str, str]) -> tuple[tuple, list, float]:
    """The ZLIB file's own baskets, and recompressed with every other candidate."""
    skipped: list = []
    t0 = time.perf_counter()
    points = measure_decompression(Session(60), probe_dataset([flat["ZLIB"]]), share_s=1.0,
                                   skipped=skipped)
    return points, skipped, time.perf_counter() - t0


def test_recompressed_points_measure_rates_and_factors(recompressed: tuple) -> None:
    points, skipped, elapsed = recompressed
    assert skipped == [] and elapsed < 3.0
    own = [p for p in points if p.source == "dataset"]
    assert [p.algorithm for p in own] == ["ZLIB"] and own[0].compression_factor > 1
    rec = [p for p in points if p.source == "recompressed"]
    assert [p.algorithm for p in rec] == ["LZ4", "ZSTD", "LZMA"]  # every candidate but ZLIB
    for p in rec:
        assert p.recompressed_from == "ZLIB" and p.level == CANDIDATES[p.algorithm]
        assert p.baskets > 0 and p.compression_factor > 1 and p.dataset_factor > 1
        assert p.compressed_mb_per_s and p.compressed_mb_per_s > 0
        assert p.uncompressed_mb_per_s > p.compressed_mb_per_s
        assert p.measurement.median == p.compressed_mb_per_s
        assert "recompressed" in p.measurement.conditions.note
    by = {p.algorithm: p for p in rec}
    assert by["LZMA"].compression_factor > by["LZMA"].dataset_factor  # LZMA-7 beats ZLIB-1
    assert by["LZ4"].compression_factor < by["LZ4"].dataset_factor  # LZ4 is larger


def test_recompressed_factor_ratio_matches_the_files_written_so(
    recompressed: tuple, flat: dict[str, str]
) -> None:
    """The size change measured on the sample is that of the demo files written with the
    candidate (the same events, written by uproot with the same settings)."""
    points, _, _ = recompressed
    for p in points:
        if p.source == "recompressed":
            expected = tree_factor(flat[p.algorithm]) / tree_factor(flat["ZLIB"])
            ratio = p.compression_factor / p.dataset_factor
            assert ratio == pytest.approx(expected, rel=0.15), p.algorithm


def test_recompress_round_trips_and_keeps_incompressible_baskets_raw() -> None:
    import os as _os

    text = b"muon pt eta phi " * 4000
    noise = _os.urandom(20_000)
    payloads = [Payload(text, 1000), Payload(noise, 20_100)]
    for alg in ("ZLIB", "LZ4", "ZSTD", "LZMA"):
        r = recompress(payloads, alg)
        assert r.baskets == 2 and r.raw_baskets == 1 and r.raw_bytes == len(noise)
        assert r.pool.baskets == 1 and r.uncompressed_bytes == len(text) + len(noise)
        assert r.factor == pytest.approx(r.uncompressed_bytes / (r.pool.compressed_bytes
                                                                 + len(noise)))
        assert r.dataset_factor == pytest.approx(r.uncompressed_bytes / 21_100)
        inflate = inflater(alg)
        assert b"".join(inflate(b) for b in r.pool.blocks) == text
        decode, _ = decoder(alg)  # the timed path, LZ4's checksum included
        assert sum(decode(b) for b in r.pool.blocks) == len(text)


def test_recompression_is_skipped_when_out_of_time_or_not_wanted(flat: dict[str, str]) -> None:
    skipped: list = []
    points = measure_decompression(Session(60), [flat["ZSTD"]], share_s=0.0, skipped=skipped)
    assert [p.source for p in points] == ["dataset"]
    assert {s.test for s in skipped} == {f"decompression {a} (recompressed)"
                                         for a in ("LZ4", "ZLIB", "LZMA")}
    assert all("no time left" in s.reason for s in skipped)
    none = measure_decompression(Session(60), [flat["ZSTD"]], share_s=0.2, candidates=())
    assert [p.source for p in none] == ["dataset"]


def test_unpacking_times_uproot_on_decompressed_baskets(flat: dict[str, str],
                                                        tiny_demo: Path) -> None:
    before = snapshot(tiny_demo)
    u = measure_unpacking(Session(60), [flat["LZMA"]], "pythia", share_s=0.5)
    assert u is not None and u.branches == 20 and u.baskets >= 20
    assert u.compressed_mb_per_s and u.total_mb_per_s
    # fixed costs taken out, if any (equal, to rounding, where none are separated)
    assert u.compressed_mb_per_s >= u.total_mb_per_s * (1 - 1e-12)
    assert u.uncompressed_mb_per_s == pytest.approx(
        u.compressed_mb_per_s * tree_factor(flat["LZMA"]), rel=0.1)
    assert u.measurement.median == u.total_mb_per_s and "basket_array" in \
        u.measurement.conditions.note
    some = measure_unpacking(Session(60), [flat["LZMA"]], "pythia", ["px", "nope"], 0.3)
    assert some is not None and some.branches == 1
    assert measure_unpacking(Session(60), [flat["LZMA"]], "no_such_tree", share_s=0.3) is None
    assert snapshot(tiny_demo) == before


def test_unpacking_separates_fixed_costs_where_sizes_differ(tiny_demo: Path) -> None:
    files = sorted(str(p) for p in (tiny_demo / "small_files").glob("*.root"))[:2]
    u = measure_unpacking(Session(60), files, "esdTree", share_s=5.0)
    assert u is not None and u.baskets > 100
    assert u.branch_call_s is not None and u.branch_call_s > 0  # final_array per branch
    assert u.compressed_mb_per_s > u.total_mb_per_s


def test_basket_sample_is_bounded_and_files_are_untouched(flat: dict[str, str],
                                                          tiny_demo: Path) -> None:
    before = snapshot(tiny_demo)
    sample = collect_baskets([flat["ZLIB"], flat["ZSTD"]], sample_bytes=20_000,
                             scan_bytes=300_000)
    assert set(sample.pools) == {"ZLIB", "ZSTD"} and sample.files_read == 2
    # each file is left after IDLE_BASKETS baskets in a row that its full pool did not keep
    assert sample.bytes_read < 2 * (20_000 + 64 * 2_100)
    for pool in sample.pools.values():
        # the pool stops growing once it holds sample_bytes: at most one basket more
        assert 20_000 <= pool.compressed_bytes < 20_000 + 10_000
    assert snapshot(tiny_demo) == before


def test_split_blocks_reads_root_compression_headers() -> None:
    a, b = b"x" * 5000, bytes(range(256)) * 10
    payload = block(b"ZL", zlib.compress(a, 1), len(a)) + block(b"ZL", zlib.compress(b), len(b))
    alg, blocks = split_blocks(payload)
    assert alg == "ZLIB" and [x.uncompressed_bytes for x in blocks] == [len(a), len(b)]
    assert zlib.decompress(blocks[1].data) == b

    lz = bytes(cramjam.lz4.compress_block(a, store_size=False))
    alg, blocks = split_blocks(block(b"L4", lz, len(a), struct.pack(">Q", xxhash.xxh64(lz)
                                                                          .intdigest())))
    assert alg == "LZ4" and blocks[0].data == lz
    assert blocks[0].checksum == xxhash.xxh64(lz).intdigest()

    assert split_blocks(b"\x00" * 40) is None  # stored uncompressed
    with pytest.raises(ValueError, match="runs past"):
        split_blocks(block(b"ZS", b"abc", 10)[:-1])


def test_decompression_cancelled_raises_cancelled(flat: dict[str, str]) -> None:
    session = Session(60)
    session.cancel()
    with pytest.raises(Cancelled):
        measure_decompression(session, [flat["ZLIB"]], share_s=1.0)

    events: list[ProgressEvent] = []

    def cancel_on_first_figure(event: ProgressEvent) -> None:
        events.append(event)
        if event.fraction > 0:
            session2.cancel()

    session2 = Session(60, progress=cancel_on_first_figure)
    with pytest.raises(Cancelled):
        measure_decompression(session2, list(flat.values()), share_s=1.0)
    assert events and all(e.test == "decompression" for e in events)


# -- event loop --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def loop(flat: dict[str, str]):
    return measure_event_loop(Session(60), [flat["ZLIB"]], "pythia", share_s=0.8)


def test_event_loop_rates_and_bytes_follow_the_metadata(loop, flat: dict[str, str]) -> None:
    assert loop.engine == "uproot" and loop.branches == 20 and loop.analysis is None
    assert loop.events_per_s is not None and loop.events_per_s > 0
    with uproot.open(flat["ZLIB"]) as f:
        t = f["pythia"]
        per_event_u = int(t.member("fTotBytes")) / t.num_entries
        per_event_c = int(t.member("fZipBytes")) / t.num_entries
    assert loop.uncompressed_mb_per_s * 1e6 / loop.events_per_s == pytest.approx(per_event_u)
    assert loop.compressed_mb_per_s * 1e6 / loop.events_per_s == pytest.approx(per_event_c)
    assert loop.cold is not None and loop.warm is not None
    assert loop.cold.conditions.cache in ("cold", "mixed", "unknown")
    assert loop.warm.conditions.cache == "warm"
    assert loop.cold.unit == "events/s" and loop.cold.conditions.bytes_per_sample > 0
    top = loop.cold if loop.cold.conditions.cache == "cold" else loop.warm
    assert loop.events_per_s == top.median
    # the warm passes' own page faults, per MB read, and the loop's largest step
    assert loop.refault_per_mb is not None and loop.refault_per_mb >= 0
    assert loop.step_mb is not None and 0 < loop.step_mb <= per_event_u * 4000 / 1e6 * 1.1
    # its own iterate's step (a short share: 1 MB, the floor), which sets its read calls
    assert loop.step_bytes == 1e6


def test_a_pass_counts_the_memory_it_faults(flat: dict[str, str]) -> None:
    # in a new process (this one's heap has grown): one step, whose arrays are new memory
    code = ("import sys, json; from probes.readtests.eventloop import plan_reads, read_pass; "
            "p = plan_reads([sys.argv[1]], 'pythia'); r = read_pass(p, step_bytes=10**9); "
            "print(json.dumps([r.faulted_bytes, r.array_bytes, p.uncompressed_bytes]))")
    out = subprocess.run([sys.executable, "-c", code, flat["ZLIB"]], capture_output=True,
                         text=True, check=True, cwd=Path(__file__).resolve().parents[1])
    faulted, arrays, unzipped = json.loads(out.stdout.splitlines()[-1])
    # at least the arrays' own pages (float32 payload), at most a few times them
    assert arrays > 0 and faulted >= 0.5 * arrays
    assert faulted < 50 * unzipped + 50e6


def test_metadata_bytes_match_the_arrays_read(flat: dict[str, str]) -> None:
    plan = plan_reads([flat["ZLIB"]], "pythia")
    result = read_pass(plan, step_bytes=100_000)  # several steps
    assert result.complete and result.total_entries == plan.entries == 4000
    # flat float32 branches: the arrays hold exactly the payload; the metadata adds the keys
    assert result.array_bytes == pytest.approx(plan.uncompressed_bytes, rel=0.05)
    assert result.array_bytes <= plan.uncompressed_bytes


def test_event_loop_on_selected_branches_and_bounded_bytes(flat: dict[str, str]) -> None:
    plan = plan_reads([flat["ZLIB"], flat["LZ4"]], "pythia", ["px", "py"], max_bytes=10_000)
    assert plan.branches == ("px", "py") and len(plan.parts) == 1
    assert plan.compressed_bytes <= 10_000 * 1.01 and plan.entries < 4000
    loop = measure_event_loop(Session(60), [flat["ZLIB"]], "pythia", ["px", "py"],
                              share_s=0.3, cold=False)
    assert loop.branches == 2 and loop.cold is None and loop.events_per_s > 0
    assert loop.uncompressed_mb_per_s * 1e6 / loop.events_per_s == pytest.approx(8, rel=0.05)
    with pytest.raises(ValueError, match="no branch nosuch"):
        plan_reads([flat["ZLIB"]], "pythia", ["px", "nosuch"])
    with pytest.raises(ValueError, match="no readable tree 'nosuch'"):
        plan_reads([flat["ZLIB"]], "nosuch")


def test_a_part_cut_inside_a_file_ends_on_a_cluster_boundary(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    import numpy as np

    path = tmp_path / "clusters.root"
    with uproot.recreate(path) as f:  # each extend: a basket per branch, a common boundary
        f.mktree("t", {"a": "f8", "b": "f8"})
        for i in range(4):
            f["t"].extend({"a": np.arange(100.0) + i, "b": np.arange(100.0) - i})
    whole = plan_reads([str(path)], "t")
    assert whole.parts[0].boundaries == (100, 200, 300, 400)
    assert whole.parts[0].entries == 400 and whole.overread() == pytest.approx((1.0, 1.0))
    # a part ending inside baskets decompresses them whole: 250 entries read 3 of 4 baskets
    # per branch where their share is 2.5
    inside = replace(whole, parts=(replace(whole.parts[0], entries=250),))
    assert inside.overread()[1] == pytest.approx(3 / 2.5)
    assert inside.overread()[0] == pytest.approx(3 / 2.5, rel=0.05)  # baskets of like bytes
    with uproot.open(path) as f:  # too many baskets to keep: not counted
        assert BasketTouch.of(f["t"], ["a", "b"]) is not None
        monkeypatch.setattr(readplan, "MAX_TOUCH_BASKETS", 7)
        assert BasketTouch.of(f["t"], ["a", "b"]) is None
    # the byte bound falls at about 250 entries: the part stops where both branches' baskets do
    cut = plan_reads([str(path)], "t", max_bytes=0.625 * whole.compressed_bytes)
    assert cut.parts[0].entries == 200
    # a pilot pass stopped inside a basket: the samples after it read whole baskets
    stopped = PassResult(entries=(250,), seconds=1.0, array_bytes=0, complete=False)
    assert truncate(whole, stopped).parts[0].entries == 200
    assert truncate(whole, replace_complete(stopped)).parts[0].entries == 400
    # a file cut before its first boundary is left out where the whole files before it keep
    # half of the entries; else (no boundary, or none that keeps half) the cut stays
    two = plan_reads([str(path), str(path)], "t", max_bytes=1.1 * whole.compressed_bytes)
    assert [p.entries for p in two.parts] == [400]
    cut = replace(whole.parts[0], entries=250)
    assert [p.entries for p in whole_baskets([replace(cut, boundaries=(100, 400))])] == [250]
    assert [p.entries for p in whole_baskets([replace(cut, boundaries=())])] == [250]
    assert [p.entries for p in whole_baskets([replace(cut, entries=199)])] == [100]
    assert [p.entries for p in whole_baskets([replace(cut, entries=40)])] == [40]
    assert [p.entries for p in whole_baskets([whole.parts[0], replace(cut, entries=40)])] == [400]
    assert [p.entries for p in whole_baskets([replace(cut, entries=40), replace(cut, entries=60,
                                              boundaries=(100, 400))])] == [40, 60]


def replace_complete(result: PassResult) -> PassResult:
    return replace(result, complete=True)


ANALYSIS = """
calls = []

def count(arrays):
    calls.append((len(arrays), sorted(arrays.fields)))
"""


def test_event_loop_runs_the_users_analysis(flat: dict[str, str], tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "hepadv_user_ana.py").write_text(ANALYSIS)
    monkeypatch.syspath_prepend(str(tmp_path))
    loop = measure_event_loop(Session(60), [flat["ZLIB"]], "pythia", ["px", "pt"],
                              analysis="hepadv_user_ana:count", share_s=0.3, cold=False)
    calls = sys.modules.pop("hepadv_user_ana").calls  # imported by the event loop
    assert loop.analysis == "hepadv_user_ana:count" and loop.events_per_s > 0
    assert all(fields == ["pt", "px"] for _, fields in calls)
    assert (4000, ["pt", "px"]) in calls  # one chunk per pass: every entry
    # a file path works too, and a plain callable
    func, name = resolve_analysis(f"{tmp_path / 'hepadv_user_ana.py'}:count")
    assert callable(func) and name.endswith("hepadv_user_ana.py:count")
    seen: list[int] = []
    loop = measure_event_loop(Session(60), [flat["ZLIB"]], "pythia", ["px"],
                              analysis=lambda a: seen.append(len(a)), share_s=0.2, cold=False)
    assert seen and loop.analysis and "lambda" in loop.analysis


@pytest.mark.parametrize(("spec", "message"), [
    ("hepadv_no_such_module:f", "no module named 'hepadv_no_such_module'"),
    ("json:no_such_function", "'json' has no attribute 'no_such_function'"),
    ("json:__doc__", "is not callable"),
    ("json", "expected 'module:function'"),
    ("/no/such/file.py:f", "no such file"),
])
def test_bad_analysis_is_a_clear_one_line_error(flat: dict[str, str], spec: str,
                                                message: str) -> None:
    with pytest.raises(ValueError, match=message) as info:
        measure_event_loop(Session(60), [flat["ZLIB"]], "pythia", analysis=spec, share_s=0.2)
    assert "\n" not in str(info.value) and spec in str(info.value)


def test_analysis_that_raises_is_reported_in_one_line(flat: dict[str, str]) -> None:
    def broken(arrays: object) -> None:
        raise KeyError("no such field\nsecond line")

    with pytest.raises(AnalysisError, match="broken raised KeyError") as info:
        measure_event_loop(Session(60), [flat["ZLIB"]], "pythia", analysis=broken, share_s=0.2)
    assert "\n" not in str(info.value)


def test_event_loop_cancelled_raises_cancelled(flat: dict[str, str]) -> None:
    session = Session(60)
    session.cancel()
    with pytest.raises(Cancelled):
        measure_event_loop(session, [flat["ZLIB"]], "pythia", share_s=0.5)


def _warm_samples(budget: float, per_sample_s: float, elapsed: float = 0.0) -> int:
    """How many warm samples ``cold_then_warm`` takes after a cold part that spent its share,
    each warm pass taking ``per_sample_s``, ``elapsed`` seconds into a ``budget``."""
    from hep_advisor.probes.readtests.eventloop import cold_then_warm
    from hep_advisor.probes.readtests.results import Conditions

    now = [0.0]
    session = Session(budget, clock=lambda: now[0])
    now[0] = elapsed

    def sample(cold: bool) -> float:
        now[0] += per_sample_s
        return 100.0

    _, warm, _ = cold_then_warm(session, "event_loop", "loop", Conditions(cache="warm"),
                                sample, 100.0, 5.0, 0.0, now[0], None)
    return len(warm.samples)


def test_the_warm_rate_takes_three_short_samples_past_a_spent_share() -> None:
    """A cold pass that used the share leaves the warm loop one sample; where three take at
    most ``WARM_GRACE_S`` more (or ``WARM_GRACE_FRACTION`` of the budget, here 3 s), it takes
    three (their median is the rate), else one."""
    from hep_advisor.probes.readtests.eventloop import WARM_GRACE_FRACTION, WARM_MIN_SAMPLES

    assert _warm_samples(60, 0.1) == WARM_MIN_SAMPLES
    assert _warm_samples(60, WARM_GRACE_FRACTION * 60) == 1


def test_a_long_budget_with_time_left_takes_three_warm_samples_of_half_a_second() -> None:
    """Two more passes of 0.55 s (1.1 s) are past ``WARM_GRACE_S`` but within
    ``WARM_GRACE_FRACTION`` of a 30 s budget: three samples where the budget has the time left,
    one where it has not (the same pass late in the calibration), one at a 10 s budget."""
    from hep_advisor.probes.readtests.eventloop import WARM_GRACE_FRACTION, WARM_GRACE_S

    per = 0.55
    assert 2 * per > WARM_GRACE_S and 2 * per <= WARM_GRACE_FRACTION * 30
    assert _warm_samples(30, per) == 3
    assert _warm_samples(30, per, 30 - 0.6 - per) == 1  # 0.6 s left after the first warm pass
    assert _warm_samples(10, per) == 1
