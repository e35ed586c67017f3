"""ROOT's own writer for the demo datasets, and its hadd merges."""

from __future__ import annotations

import subprocess
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import awkward as ak
import numpy as np
import pytest
import uproot

import hep_advisor.probes
from hep_advisor.demo import root_writer
from hep_advisor.demo.datasets import make_datasets, read_manifest
from hep_advisor.demo.root_writer import optimized_merge, plain_merge, require_root, write_tree
from hep_advisor.demo.spec import ESD, FLAT, FLOAT, INT, Chunk, Collection, TreeSpec, make_chunk
from hep_advisor.demo.uproot_writer import write_tree as uproot_write_tree

try:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import ROOT
except Exception:  # ImportError, or a broken installation
    pytest.skip("ROOT is not installed", allow_module_level=True)

pytestmark = pytest.mark.root

REPO = Path(__file__).resolve().parents[1]

#: Small, but with what matters: both types, a collection that is often empty, and one whose
#: multiplicity outgrows the writer's first buffers (16 items) in a later chunk.
SMALL = TreeSpec(
    name="events",
    scalars=(("run", INT), ("weight", FLOAT), ("met", FLOAT)),
    collections=(
        Collection("Mu", 0.7, (("pt", FLOAT), ("q", INT))),
        Collection("Hit", 25.0, (("x", FLOAT), ("layer", INT), ("e", FLOAT))),
    ),
)


def _chunks(spec: TreeSpec, sizes: tuple[int, ...], seed: int = 0) -> list[Chunk]:
    return [make_chunk(spec, n, seed + i) for i, n in enumerate(sizes)]


def _joined(chunks: list[Chunk], collection: str, field: str) -> tuple[np.ndarray, np.ndarray]:
    counts = np.concatenate([c.collections[collection][0] for c in chunks])
    values = np.concatenate([c.collections[collection][1][field] for c in chunks])
    return counts, values


def _set_multiplicity(chunk: Chunk, collection: str, entry: int, n: int) -> None:
    """Give ``entry`` of ``chunk`` ``n`` items of ``collection`` (values repeated to fit)."""
    counts, fields = chunk.collections[collection]
    counts = counts.copy()
    counts[entry] = n
    total = int(counts.sum())
    chunk.collections[collection] = (counts, {f: np.resize(v, total) for f, v in fields.items()})


@contextmanager
def _root_tree(path: Path, name: str) -> Iterator[Any]:
    f = ROOT.TFile.Open(str(path))
    try:
        yield f.Get(name)
    finally:
        f.Close()


def test_import_does_not_import_root() -> None:
    code = "import sys, hep_advisor.demo.root_writer; assert 'ROOT' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True)


def test_require_root(monkeypatch: pytest.MonkeyPatch) -> None:
    require_root()
    monkeypatch.setitem(sys.modules, "ROOT", None)  # makes `import ROOT` fail
    with pytest.raises(RuntimeError) as err:
        require_root()
    assert str(err.value) == "ROOT is not installed: pip install 'hep-advisor[root]'"


def test_uproot_reads_same_branches_and_values(tmp_path: Path) -> None:
    chunks = _chunks(SMALL, (50, 1, 0, 120))
    _set_multiplicity(chunks[3], "Hit", 7, 90)  # far above what the earlier chunks needed
    path = tmp_path / "small.root"
    write_tree(str(path), SMALL, iter(chunks), "ZLIB", 1)

    tree = uproot.open(path)["events"]
    assert list(tree.keys()) == list(SMALL.branch_names)
    assert tree.num_entries == sum(c.entries for c in chunks) == 171
    assert tree["run"].typename == "int32_t"
    assert tree["met"].typename == "float"
    assert tree["nHit"].typename == "int32_t"
    assert tree["Hit_x"].typename == "float[]"
    assert tree["Hit_layer"].typename == "int32_t[]"
    assert tree["Hit_x"].title == "Hit_x[nHit]/F"
    for name in ("run", "weight", "met"):
        expected = np.concatenate([c.scalars[name] for c in chunks])
        np.testing.assert_array_equal(tree[name].array(library="np"), expected)
    for coll, field in (("Mu", "pt"), ("Mu", "q"), ("Hit", "x"), ("Hit", "layer"), ("Hit", "e")):
        counts, values = _joined(chunks, coll, field)
        np.testing.assert_array_equal(tree[f"n{coll}"].array(library="np"), counts)
        jagged = tree[f"{coll}_{field}"].array()
        np.testing.assert_array_equal(ak.to_numpy(ak.num(jagged)), counts)
        np.testing.assert_array_equal(ak.to_numpy(ak.flatten(jagged)), values)
    assert counts.max() == 90


def test_branches_named_and_typed_as_uproot_names_them(tmp_path: Path) -> None:
    chunks = _chunks(SMALL, (30,))
    write_tree(str(tmp_path / "root.root"), SMALL, chunks, "ZLIB", 1)
    uproot_write_tree(str(tmp_path / "uproot.root"), SMALL, chunks, "ZLIB", 1)
    by_root = uproot.open(tmp_path / "root.root")["events"]
    by_uproot = uproot.open(tmp_path / "uproot.root")["events"]
    assert list(by_root.keys()) == list(by_uproot.keys())
    assert by_root.typenames() == by_uproot.typenames()
    for name in SMALL.branch_names:
        a, b = by_root[name].array(), by_uproot[name].array()
        assert ak.all(a == b), name


def test_inconsistent_chunk_leaves_no_file(tmp_path: Path) -> None:
    good, bad = _chunks(SMALL, (20, 20))
    counts, fields = bad.collections["Hit"]
    bad.collections["Hit"] = (counts, {f: v[:-1] for f, v in fields.items()})
    path = tmp_path / "bad.root"
    with pytest.raises(ValueError, match=r"Hit_x: \d+ values for \d+ items"):
        write_tree(str(path), SMALL, [good, bad], "ZLIB", 1)
    assert not path.exists()


@pytest.mark.parametrize(
    ("algorithm", "level", "setting"),
    [("ZLIB", 1, 101), ("LZ4", 4, 404), ("ZSTD", 5, 505), ("LZMA", 7, 207), ("none", 0, 0)],
)
def test_compression_setting(tmp_path: Path, algorithm: str, level: int, setting: int) -> None:
    path = tmp_path / "flat.root"
    write_tree(str(path), FLAT, _chunks(FLAT, (500, 500)), algorithm, level)
    f = uproot.open(path)
    assert f.file.fCompress == setting
    assert f["pythia"].num_entries == 1000
    profile = hep_advisor.probes.probe_dataset([str(path)]).trees[0]
    assert profile.compression.setting == setting
    assert profile.compression.algorithm == algorithm
    assert profile.compression.level == (None if algorithm == "none" else level)


@pytest.mark.parametrize(
    ("spec", "algorithm", "level"), [(ESD, "ZLIB", 1), (FLAT, "ZSTD", 5), (SMALL, "LZ4", 4)]
)
def test_probe_agrees_with_root(tmp_path: Path, spec: TreeSpec, algorithm: str, level: int) -> None:
    path = tmp_path / "tree.root"
    write_tree(str(path), spec, _chunks(spec, (40, 35)), algorithm, level)
    profile = hep_advisor.probes.probe_dataset([str(path)])
    assert not profile.errors
    (tree,) = profile.trees
    assert tree.name == spec.name
    assert tree.branches == spec.n_branches
    assert tree.entries == 75
    assert (tree.compression.algorithm, tree.compression.level) == (algorithm, level)
    assert tree.compression.source == "basket-header"
    assert tree.clusters is not None
    assert (tree.clusters.source, tree.clusters.count, tree.cluster_entries) == ("estimated", 1, 75)
    branches = {b.name: b for b in tree.branch_profiles}
    assert set(branches) == set(spec.branch_names)
    some = [spec.branch_names[0], spec.branch_names[-1], spec.branch_names[len(branches) // 2]]
    with _root_tree(path, spec.name) as t:
        assert t.GetEntries() == 75
        assert t.GetAutoFlush() == -30000000  # ROOT's default, never reached by these trees
        assert tree.compressed_bytes == t.GetZipBytes()
        assert tree.uncompressed_bytes == t.GetTotBytes()
        for name in some:
            b = t.GetBranch(name)
            assert branches[name].compressed_bytes == b.GetZipBytes(), name
            assert branches[name].uncompressed_bytes == b.GetTotBytes(), name
            assert branches[name].baskets.count == b.GetWriteBasket(), name


def _small_files(tmp_path: Path, entries: tuple[int, ...]) -> list[str]:
    paths = []
    for i, n in enumerate(entries):
        p = tmp_path / f"esd_{i}.root"
        write_tree(str(p), ESD, [make_chunk(ESD, n, 100 + i)], "ZLIB", 1)
        paths.append(str(p))
    return paths


def test_plain_merge_keeps_baskets_but_not_clusters(tmp_path: Path) -> None:
    inputs = _small_files(tmp_path, (30, 30, 30))
    merged = tmp_path / "merged.root"
    plain_merge(inputs, str(merged))

    small = hep_advisor.probes.probe_dataset(inputs).trees[0]
    (tree,) = hep_advisor.probes.probe_dataset([str(merged)]).trees
    assert tree.entries == 90
    assert tree.branches == ESD.n_branches
    assert (tree.compression.algorithm, tree.compression.level) == ("ZLIB", 1)
    # a fast merge copies the baskets: one per branch per input
    assert tree.baskets.count == small.baskets.count == 3 * ESD.n_branches
    assert tree.compressed_bytes == small.compressed_bytes
    raw = uproot.open(merged)["esdTree"]
    assert raw.common_entry_offsets() == [0, 30, 60, 90]  # the inputs' baskets, aligned
    # ... but the inputs never reached their first AutoFlush, so hadd records no cluster ranges
    # and keeps fAutoFlush at -30000000: ROOT's TClusterIterator (and so the probe) estimates
    # entries * 30 MB / compressed bytes, far above 90, so all 90 entries are one cluster.
    assert raw.member("fNClusterRange") == 0
    assert raw.member("fAutoFlush") == -30000000
    assert tree.clusters is not None
    assert tree.clusters.source == "estimated"
    assert (tree.clusters.count, tree.clusters.min_entries, tree.clusters.max_entries) == (
        1,
        90,
        90,
    )
    assert tree.cluster_entries == 90
    with _root_tree(merged, "esdTree") as t:
        it = t.GetClusterIterator(0)
        assert (it.Next(), it.GetNextEntry()) == (0, 90)


def test_optimized_merge_has_fewer_baskets(tmp_path: Path) -> None:
    inputs = _small_files(tmp_path, (30, 40, 50))
    plain, optimized = tmp_path / "plain.root", tmp_path / "optimized.root"
    plain_merge(inputs, str(plain))
    optimized_merge(inputs, str(optimized))
    (p,) = hep_advisor.probes.probe_dataset([str(plain)]).trees
    (o,) = hep_advisor.probes.probe_dataset([str(optimized)]).trees
    assert p.entries == o.entries == 120
    assert o.baskets.count < p.baskets.count
    assert p.clusters is not None and o.clusters is not None
    # never-flushed inputs: one estimated cluster either way (see the test above)
    assert (p.clusters.count, p.clusters.min_entries, p.clusters.max_entries) == (1, 120, 120)
    assert (o.clusters.count, o.clusters.min_entries, o.clusters.max_entries) == (1, 120, 120)
    assert p.clusters.source == o.clusters.source == "estimated"
    counts, values = _joined(
        [make_chunk(ESD, n, 100 + i) for i, n in enumerate((30, 40, 50))], "Trk", "t3"
    )
    jagged = uproot.open(optimized)["esdTree"]["Trk_t3"].array()
    np.testing.assert_array_equal(ak.to_numpy(ak.num(jagged)), counts)
    np.testing.assert_array_equal(ak.to_numpy(ak.flatten(jagged)), values)


def test_merge_failure_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.root"
    bad.write_text("not a ROOT file\n")
    out = tmp_path / "out.root"
    with pytest.raises(RuntimeError, match=r"^hadd failed \(exit \d+\): .*Error") as err:
        plain_merge([str(bad)], str(out))
    assert "\n" not in str(err.value)
    assert not out.exists()
    with pytest.raises(RuntimeError, match="no input files"):
        plain_merge([], str(out))


def test_make_datasets_with_root(tmp_path: Path) -> None:
    d = make_datasets(tmp_path / "d", writer="root", scale="tiny", jobs=2)
    manifest = read_manifest(d)
    assert manifest["writer"] == "root"
    # ROOT's writer is given no chunking: its own basket size and AutoFlush decide
    assert {ds["chunk_entries"] for ds in manifest["datasets"]} == {0}
    files = sorted((d / "small_files").glob("*.root"))
    assert len(files) == 6
    (merged,) = hep_advisor.probes.probe_dataset([str(d / "merged")]).trees
    assert merged.name == ESD.name
    assert merged.entries == 6 * 20
    assert merged.branches == ESD.n_branches
    assert merged.clusters is not None
    # the small files never flushed, so neither did their plain merge: one estimated cluster
    assert merged.clusters.source == "estimated"
    assert merged.clusters.count == 1
    assert merged.cluster_entries == 6 * 20
    (flat,) = hep_advisor.probes.probe_dataset([str(d / "flat" / "pythia_zstd5.root")]).trees
    assert (flat.entries, flat.compression.algorithm, flat.compression.level) == (4000, "ZSTD", 5)


def test_hadd_path_is_next_to_root() -> None:
    assert Path(root_writer.hadd_path()).parent == Path(ROOT.__file__).parent / "bin"
