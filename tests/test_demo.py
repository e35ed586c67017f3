"""The demo datasets: what they hold, and that an interrupted build leaves nothing behind."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import uproot

from hep_advisor.demo import ESD, FLAT, make_chunk, make_datasets, read_manifest


def test_chunks_are_reproducible_and_realistic() -> None:
    a, b = make_chunk(FLAT, 1000, seed=7), make_chunk(FLAT, 1000, seed=7)
    for name in a.scalars:
        np.testing.assert_array_equal(a.scalars[name], b.scalars[name])
    pt = a.scalars["pt"]
    assert pt.dtype == np.float32
    # quantised: far fewer distinct values than entries would have with noise
    assert len(np.unique(a.scalars["charge"])) <= 64
    esd = make_chunk(ESD, 50, seed=1)
    counts, fields = esd.collections["Trk"]
    assert len(counts) == 50 and all(len(v) == counts.sum() for v in fields.values())


def test_manifest_and_files(tiny_demo: Path) -> None:
    m = read_manifest(tiny_demo)
    assert m["writer"] == "uproot"
    names = {d["name"]: d for d in m["datasets"]}
    assert set(names) == {"small_files", "merged", "flat_zlib1", "flat_lz4", "flat_zstd5",
                          "flat_lzma7", "flat_none"}
    assert names["small_files"]["branches"] >= 200  # "hundreds of branches"
    assert len(list((tiny_demo / "small_files").glob("*.root"))) == names["small_files"]["files"]
    with uproot.open(tiny_demo / "merged" / "esd_merged.root") as f:
        merged = f["esdTree"]["Trk_t3"].array(library="np")
    parts = []
    for p in sorted((tiny_demo / "small_files").glob("*.root")):
        with uproot.open(p) as f:
            parts.append(f["esdTree"]["Trk_t3"].array(library="np"))
    # the merged file holds exactly the small files' events, in order
    assert len(merged) == sum(len(p) for p in parts)
    np.testing.assert_array_equal(np.concatenate(merged), np.concatenate(
        [np.concatenate(p) for p in parts]))


def test_interrupted_build_leaves_nothing(tmp_path: Path) -> None:
    def stop(done: int, total: int, message: str) -> None:
        if done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        make_datasets(tmp_path / "demo", scale="tiny", progress=stop, jobs=1)
    assert list(tmp_path.iterdir()) == []


def test_refuses_a_directory_with_data(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "keep.root").write_bytes(b"x")
    with pytest.raises(FileExistsError):
        make_datasets(tmp_path / "d", scale="tiny")
    assert (tmp_path / "d" / "keep.root").read_bytes() == b"x"


def test_example_script(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    script = Path(__file__).resolve().parents[1] / "examples" / "make_datasets.py"
    r = subprocess.run([sys.executable, str(script), str(tmp_path / "ex"), "--scale", "tiny"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["writer"] == "uproot"
    assert (tmp_path / "ex" / "merged" / "esd_merged.root").exists()


def test_the_core_writes_no_demo_data(tmp_path: Path) -> None:
    """The demo is written where it is asked for (``hep_advisor.demo``, the commands given no
    PATHS), never by the core: advise needs paths, and neither the core nor the calibration
    cache loads ``hep_advisor.demo``."""
    import os
    import subprocess
    import sys

    code = (
        "import sys, hep_advisor, hep_advisor.pipeline.advise as core,"
        " hep_advisor.pipeline.cache as cache, hep_advisor.models.whatif,"
        " hep_advisor.document.report\n"
        f"assert cache.cache_dir() == __import__('pathlib').Path({str(tmp_path)!r}, "
        "'calibrations')\n"
        f"assert core.cached_advice({str(tmp_path / 'none.root')!r}) is None\n"
        "try:\n    core.advise()\nexcept TypeError:\n    pass\n"
        "else:\n    raise SystemExit('advise() ran without paths')\n"
        "print(sorted(m for m in sys.modules if m.startswith('hep_advisor.demo')))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**os.environ, "HEP_ADVISOR_CACHE": str(tmp_path)}, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"
    assert list(tmp_path.iterdir()) == []


def test_the_demo_on_request(tiny_demo: Path, tmp_path: Path,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    import hep_advisor
    from hep_advisor.demo import DEMO_DATASETS, datasets, demo_dataset, demo_report, report
    from hep_advisor.pipeline import advise as core
    from hep_advisor.pipeline.paths import cache_root, default_demo_dir

    assert hep_advisor.demo_report is demo_report and hep_advisor.demo_dataset is demo_dataset
    assert report.DEFAULT_BUDGET_S == core.DEFAULT_BUDGET_S
    assert all((tiny_demo / rel).exists() for _, rel in DEMO_DATASETS)
    monkeypatch.setenv("HEP_ADVISOR_CACHE", str(tmp_path / "cache"))
    assert cache_root() == tmp_path / "cache"
    assert datasets.default_demo_dir() == default_demo_dir() == \
        tmp_path / "cache" / f"demo-{hep_advisor.__version__}-uproot"
    # the default demo, written on first use (here: the tiny one, copied into place)
    monkeypatch.setattr(datasets, "make_datasets",
                        lambda d, **kw: Path(__import__("shutil").copytree(tiny_demo, d)))
    assert demo_dataset() == default_demo_dir() / "small_files"
    assert demo_dataset("merged").is_dir()
    with pytest.raises(ValueError, match="no dataset 'nope'"):
        demo_dataset("nope")
