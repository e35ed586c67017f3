"""The dataset probe against what the writer was told (uproot-written files)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import uproot

from helpers import write_flat
from hep_advisor.demo import ESD, FLAT, read_manifest
from hep_advisor.probes import probe_dataset, sample_indices
from hep_advisor.probes.dataset import TIMED_OPENS
from hep_advisor.probes.rootfile import cluster_layout, inspect_file


def test_small_files_match_the_writer(tiny_demo: Path) -> None:
    info = {d["name"]: d for d in read_manifest(tiny_demo)["datasets"]}["small_files"]
    ds = probe_dataset([tiny_demo / "small_files"])
    assert ds.errors == ()
    assert ds.files == info["files"] == ds.usable_files
    (tree,) = ds.trees
    assert tree.name == ESD.name
    assert tree.branches == ESD.n_branches == info["branches"]
    assert tree.entries == info["entries"]
    assert tree.events_per_file == info["entries"] / info["files"]
    assert (tree.compression.algorithm, tree.compression.level) == ("ZLIB", 1)
    assert tree.compression.source == "basket-header"
    # a small file never reaches ROOT's first flush: one (estimated) cluster per file
    assert tree.cluster_entries == info["entries"] / info["files"]
    assert tree.clusters is not None and tree.clusters.source == "estimated"
    assert tree.clusters.count == info["files"]
    # uproot writes one basket per branch per extend() call, one call per file here
    assert tree.baskets.count == info["files"] * info["branches"]
    assert ds.sampling.method == "all"
    # uproot's open is timed on the first files; the others are read by the fast reader
    assert ds.open_s is not None and ds.open_s.count == min(info["files"], TIMED_OPENS)
    assert {b.name for b in tree.branch_profiles} == set(ESD.branch_names)


def test_merged_file_keeps_the_small_baskets(tiny_demo: Path) -> None:
    manifest = {d["name"]: d for d in read_manifest(tiny_demo)["datasets"]}
    ds = probe_dataset([tiny_demo / "merged"])
    (tree,) = ds.trees
    small = manifest["small_files"]
    assert tree.files == 1
    assert tree.entries == small["entries"]
    # one basket per branch per input file: as many (small) baskets as the small files
    small_tree = probe_dataset([tiny_demo / "small_files"]).trees[0]
    assert tree.baskets.count == small_tree.baskets.count
    assert tree.baskets.mean_compressed_bytes == pytest.approx(
        small_tree.baskets.mean_compressed_bytes, rel=0.01)


@pytest.mark.parametrize(
    ("tag", "algorithm", "level"),
    [("zlib1", "ZLIB", 1), ("lz4", "LZ4", 4), ("zstd5", "ZSTD", 5), ("lzma7", "LZMA", 7),
     ("none", "none", None)],
)
def test_flat_compression_is_detected(tiny_demo: Path, tag: str, algorithm: str,
                                      level: int | None) -> None:
    ds = probe_dataset([tiny_demo / "flat" / f"pythia_{tag}.root"])
    (tree,) = ds.trees
    assert tree.branches == FLAT.n_branches
    assert tree.compression.algorithm == algorithm
    assert tree.compression.level == level
    if algorithm == "none":
        assert tree.compression_factor == pytest.approx(1.0, abs=0.01)
    else:  # values are quantised, so they compress like real data, not like noise
        assert tree.compression_factor is not None and tree.compression_factor > 1.3


def test_bytes_agree_with_uproot_and_the_file(flat_file: Path) -> None:
    meta = inspect_file(str(flat_file))
    (tree,) = meta.trees
    with uproot.open(flat_file) as f:
        t = f["t"]
        assert tree.compressed_bytes == sum(b.compressed_bytes for b in t.values())
        assert tree.compressed_bytes == t.member("fZipBytes")
        assert tree.uncompressed_bytes == t.member("fTotBytes")
    assert sum(b.compressed_bytes for b in tree.branches) == tree.compressed_bytes
    assert meta.size_bytes == flat_file.stat().st_size
    assert meta.open_s > 0


def test_mixed_compressions_are_listed(tmp_path: Path) -> None:
    write_flat(tmp_path / "a.root", entries=2000, compression=uproot.ZLIB(1))
    write_flat(tmp_path / "b.root", entries=2000, compression=uproot.LZ4(4))
    (tree,) = probe_dataset([tmp_path]).trees
    assert {(m.algorithm, m.level) for m in tree.compression.mixture} == {("ZLIB", 1),
                                                                          ("LZ4", 4)}
    assert sum(m.share for m in tree.compression.mixture) == pytest.approx(1.0)


class FakeTree:
    """The TTree members that ``cluster_layout`` reads."""

    def __init__(self, autoflush: int, ends: list[int], sizes: list[int],
                 zip_bytes: int = 1000) -> None:
        self.members = {"fAutoFlush": autoflush, "fNClusterRange": len(ends),
                        "fClusterRangeEnd": np.array(ends), "fClusterSize": np.array(sizes),
                        "fZipBytes": zip_bytes}

    def member(self, name: str, none_if_missing: bool = False) -> object:
        if none_if_missing:
            return self.members.get(name)
        return self.members[name]


def test_cluster_layout_without_autoflush_or_ranges() -> None:
    """An old TTree class version (5) has neither: ROOT keeps its default fAutoFlush
    (-30000000) and estimates entries * 30 MB / fZipBytes, or entries - 1 when fZipBytes is 0."""
    tree = FakeTree(autoflush=0, ends=[], sizes=[], zip_bytes=20_000_000)
    del tree.members["fAutoFlush"], tree.members["fNClusterRange"]
    assert cluster_layout(tree, 1000) == (((1000, 1),), "estimated")
    tree.members["fZipBytes"] = 60_000_000  # 2 x 30 MB: two clusters of 500
    assert cluster_layout(tree, 1000) == (((500, 2),), "estimated")
    tree.members["fZipBytes"] = 0
    assert cluster_layout(tree, 1000) == (((1, 1), (999, 1)), "estimated")


def test_cluster_layout_follows_root_ranges() -> None:
    # a fast merge of three files: 100-entry clusters for entries 0..299, then 50-entry ones
    tree = FakeTree(autoflush=1000, ends=[299, 499], sizes=[100, 50])
    sizes, source = cluster_layout(tree, 2500)
    assert source == "ranges"
    assert dict(sizes) == {100: 3, 50: 4, 1000: 2}


def test_cluster_layout_autoflush_and_basket_boundaries() -> None:
    sizes, source = cluster_layout(FakeTree(autoflush=300, ends=[], sizes=[]), 1000)
    assert (dict(sizes), source) == ({300: 3, 100: 1}, "autoflush")
    # never flushed: ROOT's estimate, entries * 30 MB / zipped bytes (here 60 MB for 10,000)
    fake = FakeTree(autoflush=-30000000, ends=[], sizes=[], zip_bytes=60_000_000)
    sizes, source = cluster_layout(fake, 10_000)
    assert (dict(sizes), source) == ({5000: 2}, "estimated")
    # a small tree is one cluster
    sizes, _ = cluster_layout(FakeTree(-30000000, [], [], zip_bytes=100_000), 100)
    assert dict(sizes) == {100: 1}
    # a range of size 0 (written before the first flush) is estimated too
    sizes, _ = cluster_layout(FakeTree(-30000000, [99], [0], zip_bytes=60_000_000), 10_000)
    assert dict(sizes) == {100: 1, 5000: 1, 4900: 1}


def test_sample_indices_spread_over_the_list() -> None:
    assert sample_indices(10, None) == list(range(10))
    assert sample_indices(10, 20) == list(range(10))
    picked = sample_indices(1000, 5)
    assert picked[0] == 0 and picked[-1] == 999 and len(picked) == 5


def test_sampled_totals_are_extrapolated(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for i, n in enumerate([80, 100, 120, 90, 110]):
        write_flat(src / f"f{i}.root", entries=n * 10, branches=4)
    data = tmp_path / "data"
    data.mkdir()
    for k in range(40):  # 40 files, five kinds repeated
        shutil.copy(src / f"f{k % 5}.root", data / f"f{k:02d}.root")
    exact = probe_dataset([data], sample=None)
    sampled = probe_dataset([data], sample=10)
    assert exact.sampling.method == "all" and sampled.sampling.method == "sampled"
    assert sampled.sampling.opened_files == 10 and sampled.sampling.stated_files == 40
    assert sampled.total_bytes == exact.total_bytes  # every file is stat'ed
    (e,), (s,) = exact.trees, sampled.trees
    assert s.files == e.files == 40
    assert s.sampled_files == 10
    assert s.entries == pytest.approx(e.entries, rel=0.05)
    assert s.compressed_bytes == pytest.approx(e.compressed_bytes, rel=0.05)
    assert s.baskets.count == pytest.approx(e.baskets.count, rel=0.05)
    assert exact.trees[0].entries == 8 * (800 + 1000 + 1200 + 900 + 1100)


def test_branches_uproot_cannot_interpret_are_still_probed(
    flat_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The probe reads metadata only: a branch whose baskets uproot cannot interpret (as in
    some files of other programs) keeps its bytes and baskets; its type comes from its leaf."""
    from uproot.behaviors.TBranch import TBranch

    with uproot.open(flat_file) as f:
        want = {b.name: (b.typename, b.compressed_bytes) for b in f["t"].values()}

    def cannot(self: object) -> str:
        raise ValueError("cannot interpret this branch")

    monkeypatch.setattr(TBranch, "typename", property(cannot))
    (tree,) = inspect_file(str(flat_file)).trees
    assert {b.name: (b.typename, b.compressed_bytes) for b in tree.branches} == want
    assert any("cannot interpret" in n for n in tree.notes)
    assert tree.compressed_bytes == sum(v for _, v in want.values())


def test_compression_found_when_the_largest_branches_are_stored_raw(tmp_path: Path) -> None:
    """Noise does not compress, so the writer stores those baskets raw; the tree is still
    LZ4-compressed where it can be (a smaller, compressible branch): not ``none``."""
    rng = np.random.default_rng(1)
    n = 20_000
    data = {f"noise{i}": rng.random(n) for i in range(10)}
    data["counts"] = np.repeat(np.arange(20, dtype=np.int32), n // 20)
    path = tmp_path / "mostly_noise.root"
    with uproot.recreate(path, compression=uproot.LZ4(4)) as f:
        f.mktree("t", {k: v.dtype for k, v in data.items()}).extend(data)
    (tree,) = inspect_file(str(path)).trees
    assert tree.algorithm == "LZ4"
    assert tree.algorithm_source == "basket-header"
