"""The read tests on RNTuple datasets (decompression of its pages, the event loop with uproot
and, marked ``root``, with ROOT's RNTupleReader), and the TTree -> RNTuple conversion test:
its sample converted in a temporary directory that is always removed."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from helpers import snapshot, write_flat
from hep_advisor.probes.dataset import probe_dataset
from hep_advisor.probes.readtests import conversion as conv_mod
from hep_advisor.probes.readtests.calibrate import calibrate
from hep_advisor.probes.readtests.conversion import extrapolate, measure_conversion, sample_entries
from hep_advisor.probes.readtests.registry import BY_NAME
from hep_advisor.probes.readtests.rntuple_loop import (
    NotForRNTuple,
    collect_pages,
    measure_rntuple_decompression,
    measure_rntuple_event_loop,
    plan_rntuple_reads,
)
from hep_advisor.probes.readtests.runner import Session


def write_rntuple_uproot(path: Path, entries: int = 20_000, compression: Any = None) -> Path:
    """An RNTuple ``ntpl`` (uproot >= 5.7 writes one for ``f[name] = arrays``): two flat
    fields and a jagged one."""
    import awkward as ak
    import uproot

    rng = np.random.default_rng(3)
    counts = rng.integers(0, 5, entries)
    data = {"x": rng.normal(size=entries).astype(np.float32),
            "n": rng.integers(0, 100, entries).astype(np.int32),
            "v": ak.unflatten(rng.normal(size=int(counts.sum())), counts)}
    with uproot.recreate(path, compression=compression or uproot.ZLIB(1)) as f:
        f["ntpl"] = data
    return path


@pytest.fixture()
def rntuple_file(tmp_path: Path) -> Path:
    return write_rntuple_uproot(tmp_path / "ntpl.root")


def test_pages_are_collected_and_decompressed(rntuple_file: Path) -> None:
    sample = collect_pages([str(rntuple_file)], "ntpl")
    assert "ZLIB" in sample.pools and sample.pools["ZLIB"].baskets > 0
    pts = measure_rntuple_decompression(Session(30), [str(rntuple_file)], "ntpl", 0.5)
    (p,) = pts
    assert p.algorithm == "ZLIB" and p.compressed_mb_per_s and p.compressed_mb_per_s > 0
    assert p.compression_factor and p.compression_factor > 1
    assert "RNTuple pages" in (p.measurement.conditions.note or "")


def test_event_loop_reads_the_fields_cold_and_warm(rntuple_file: Path) -> None:
    plan = plan_rntuple_reads([str(rntuple_file)], "ntpl")
    assert set(plan.fields) == {"x", "n", "v"} and plan.entries == 20_000
    loop = measure_rntuple_event_loop(Session(30), [str(rntuple_file)], "ntpl", share_s=1.0)
    assert loop.engine == "uproot" and loop.branches == 3
    assert loop.events_per_s and loop.events_per_s > 0
    assert loop.compressed_mb_per_s and loop.warm is not None and loop.cold is not None
    with pytest.raises(ValueError, match="no field"):
        plan_rntuple_reads([str(rntuple_file)], "ntpl", ["nope"])


def test_calibrate_runs_on_an_rntuple_dataset(rntuple_file: Path) -> None:
    ds = probe_dataset([str(rntuple_file)])
    assert ds.trees[0].format == "rntuple"
    cal = calibrate(ds, budget_s=8)
    assert cal.event_loop is not None and cal.event_loop.events_per_s
    assert any(p.algorithm == "ZLIB" for p in cal.decompression)
    reasons = {s.test: s.reason for s in cal.skipped}
    for name in ("call_cost", "basket_cost", "key_cost", "parallel_loop", "conversion"):
        assert "RNTuple" in reasons[name], reasons
    assert not any("AttributeError" in r for r in reasons.values())
    assert cal.conversion is None


def test_the_model_is_fitted_for_an_rntuple_dataset(rntuple_file: Path) -> None:
    from hep_advisor.pipeline.derive import advise_from
    from hep_advisor.probes import probe_site

    ds = probe_dataset([str(rntuple_file)])
    cal = calibrate(ds, budget_s=8)
    advice = advise_from(probe_site([str(rntuple_file)]), ds, cal)
    assert advice.fitted is not None and advice.model is not None
    assert not any(r.code in ("T001", "R001", "N001") for r in advice.recommendations)


def test_extrapolation_splits_a_fixed_part_and_a_part_per_entry() -> None:
    # 0.1 s fixed + 1 ms per entry
    assert extrapolate(0.1 + 1.0, 0.1 + 0.25, 1000, 250, 4000) == pytest.approx(4.1)
    assert extrapolate(1.0, 1.2, 1000, 250, 4000) is None  # no positive rate


def test_the_sample_is_whole_clusters_or_the_first_part_of_one(tmp_path: Path) -> None:
    import uproot

    path = write_flat(tmp_path / "c.root", entries=10_000, branches=2, chunks=10)
    with uproot.open(path) as f:
        t = f["t"]
        per_entry = sum(int(t[b].member("fZipBytes")) for b in ("b0", "b1")) / 10_000
        assert sample_entries(t, ["b0", "b1"], 3000 * per_entry) == 3000  # three clusters
        assert sample_entries(t, ["b0", "b1"], 1e12) == 10_000
        one = write_flat(tmp_path / "one.root", entries=10_000, branches=2)
    with uproot.open(one) as f:
        t = f["t"]
        per_entry = sum(int(t[b].member("fZipBytes")) for b in ("b0", "b1")) / 10_000
        assert sample_entries(t, ["b0", "b1"], 1000 * per_entry) == pytest.approx(1000, abs=2)


def test_conversion_with_uproot_leaves_nothing_behind(tmp_path: Path) -> None:
    import uproot

    (tmp_path / "data").mkdir()
    src = write_flat(tmp_path / "data" / "t.root", entries=20_000, branches=4,
                     compression=uproot.ZLIB(1), chunks=4)
    before = snapshot(tmp_path / "data")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    p = measure_conversion(Session(30), str(src), "t", None, 1.5, 101, converter="uproot",
                           tmp_root=str(scratch))
    assert p.converter.startswith("uproot") and p.entries == 20_000 and p.branches == 4
    assert p.gain is not None and p.gain > 0 and p.warm_gain is not None
    assert p.cache in ("cold", "warm") and p.measurement.conditions.cache == p.cache
    assert p.ttree_bytes > 0 and p.rntuple_bytes > 0 and p.rntuple_requests
    assert list(scratch.iterdir()) == []
    assert snapshot(tmp_path / "data") == before  # the user's file only read


def test_conversion_removes_its_directory_when_interrupted(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    src = write_flat(tmp_path / "t.root", entries=5000, branches=2)
    scratch = tmp_path / "scratch"
    scratch.mkdir()

    def boom(*args: Any) -> float:
        raise KeyboardInterrupt

    monkeypatch.setattr(conv_mod, "_uproot_read", boom)
    with pytest.raises(KeyboardInterrupt):
        measure_conversion(Session(30), str(src), "t", None, 1.0, None, converter="uproot",
                           tmp_root=str(scratch))
    assert list(scratch.iterdir()) == []


def test_the_conversion_test_is_registered_and_skips_rntuple_datasets(rntuple_file: Path
                                                                     ) -> None:
    t = BY_NAME["conversion"]
    assert t.field == "conversion" and t.engines == ("uproot", "root")
    ds = probe_dataset([str(rntuple_file)])
    from hep_advisor.probes.readtests.runner import Context

    ctx = Context(session=Session(10), dataset=ds, files=[str(rntuple_file)], tree=ds.trees[0])
    with pytest.raises(NotForRNTuple, match="RNTuple already"):
        conv_mod.conversion(ctx, 1.0)


def _root() -> Any:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import ROOT
    except Exception:
        pytest.skip("ROOT is not installed")
    return ROOT


@pytest.mark.root
def test_root_engine_reads_an_rntuple(tmp_path: Path) -> None:
    root = _root()
    from rntuple_helpers import write_rntuple

    path = write_rntuple(root, tmp_path / "r.root", setting=505, entries=3000)
    loop = measure_rntuple_event_loop(Session(30), [str(path)], "ntpl", ["i", "f", "v"],
                                      share_s=1.0, engine="root")
    assert loop.engine == "root" and loop.branches == 3 and loop.events_per_s
    ds = probe_dataset([str(path)])
    cal = calibrate(ds, budget_s=8, engine="root")
    assert cal.event_loop is not None and cal.event_loop.engine == "root"
    assert any(p.algorithm == "ZSTD" for p in cal.decompression)


@pytest.mark.root
def test_conversion_with_roots_importer(tmp_path: Path) -> None:
    _root()
    import uproot

    src = write_flat(tmp_path / "t.root", entries=20_000, branches=3,
                     compression=uproot.ZSTD(5), chunks=4)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    p = measure_conversion(Session(60), str(src), "t", None, 3.0, 505, converter="root",
                           tmp_root=str(scratch))
    assert p.converter.startswith("ROOT 6.") and "RNTupleImporter" in p.converter
    assert p.gain is not None and p.rntuple_requests and p.compression_setting == 505
    assert list(scratch.iterdir()) == []


def _slow_write(src: str, tree: str, branches: Any, entries: int, tt: str, rn: str,
                setting: Any) -> str:
    import time

    Path(tt).write_bytes(b"partial")  # a half-written sample, as a killed writer leaves
    time.sleep(20)
    return "t"


def test_a_conversion_past_its_share_ends_with_it(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """uproot's writer cannot be timed beforehand (592 branches, LZMA: 10 s for 375 entries,
    where a 30 s budget's share was 6 s): it runs in a child ended with the share, the test
    is skipped with the reason, and its directory is removed."""
    import time

    from hep_advisor.probes.readtests.runner import OutOfTime

    src = write_flat(tmp_path / "t.root", entries=5000, branches=2)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(conv_mod, "write_uproot_pair", _slow_write)
    session = Session(30)
    session.begin("conversion")
    session.extend(1.5)
    t0 = time.monotonic()
    with pytest.raises(OutOfTime, match="a quarter of them took more than"):
        measure_conversion(session, str(src), "t", None, 1.5, None, converter="uproot",
                           tmp_root=str(scratch))
    assert time.monotonic() - t0 < 5.0
    assert list(scratch.iterdir()) == []
