"""The RNTuple probe against ROOT 6.40's own figures, on RNTuples that ROOT writes.

Each file holds one RNTuple of many column types (nested records, vectors of vectors, a
variant, an array, half-precision, truncated and quantised floats), written in several clusters
and cluster groups with one compression setting; the probe's entries must equal
``RNTupleReader::GetNEntries()`` and its compressed and uncompressed bytes, overall and per
top-level field, ``RNTupleInspector``'s.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from rntuple_helpers import assert_rntuple_matches_root, root_figures, write_rntuple

import hep_advisor.probes

try:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import ROOT
except Exception:  # ImportError, or a broken installation
    pytest.skip("ROOT is not installed", allow_module_level=True)

pytestmark = pytest.mark.root

SETTINGS = {0: ("none", None), 101: ("ZLIB", 1), 207: ("LZMA", 7), 404: ("LZ4", 4),
            505: ("ZSTD", 5)}


@pytest.mark.parametrize("setting", list(SETTINGS), ids=[f"setting-{s}" for s in SETTINGS])
def test_rntuple_matches_root(tmp_path: Path, setting: int) -> None:
    path = write_rntuple(ROOT, tmp_path / "r.root", setting=setting)
    assert_rntuple_matches_root(ROOT, path, "ntpl")
    (tree,) = hep_advisor.probes.probe_dataset([str(path)]).trees
    assert tree.format == "rntuple"
    assert (tree.compression.algorithm, tree.compression.level) == SETTINGS[setting]
    assert tree.compression.setting == setting
    assert tree.compression.source == "page-list"


@pytest.mark.parametrize(
    ("entries", "per_cluster", "per_group"),
    [(5000, 700, 3), (3000, 1000, 1), (2000, 0, 0), (4001, 400, 4)],
    ids=["3-per-group", "1-per-group", "one-cluster", "partial-last"],
)
def test_clusters_and_groups_are_roots(tmp_path: Path, entries: int, per_cluster: int,
                                       per_group: int) -> None:
    path = write_rntuple(ROOT, tmp_path / "r.root", entries=entries, per_cluster=per_cluster,
                         per_group=per_group)
    assert_rntuple_matches_root(ROOT, path, "ntpl")
    want = root_figures(ROOT, path, "ntpl")
    (tree,) = hep_advisor.probes.probe_dataset([str(path)]).trees
    assert tree.entries == entries
    assert tree.clusters is not None and tree.clusters.source == "rntuple"
    assert tree.clusters.count == want["clusters"]
    assert tree.rntuple is not None
    assert tree.rntuple.cluster_groups == want["cluster_groups"]
    assert tree.rntuple.clusters == want["clusters"]
    if per_cluster:
        assert tree.clusters.max_entries == per_cluster


def test_fields_and_columns(tmp_path: Path) -> None:
    path = write_rntuple(ROOT, tmp_path / "r.root")
    reader = ROOT.RNTupleReader.Open("ntpl", str(path))
    desc = reader.GetDescriptor()
    (tree,) = hep_advisor.probes.probe_dataset([str(path)]).trees
    assert tree.rntuple is not None
    assert tree.rntuple.fields == desc.GetNFields() - 1  # ROOT counts its zero field
    assert tree.rntuple.columns == desc.GetNPhysicalColumns()
    fields = {b.name: b for b in tree.branch_profiles}
    assert fields["vv"].typename == "std::vector<std::vector<double>>"
    assert fields["vv"].fields == 3 and fields["vv"].columns == 3
    assert fields["i"].fields == 1 and fields["i"].columns == 1
    assert tree.branches == len(fields) == 15
    assert tree.rntuple.mean_page_compressed_bytes is not None
    assert 0 < tree.rntuple.mean_page_compressed_bytes <= tree.rntuple.max_page_compressed_bytes
    assert tree.rntuple.writers and tree.rntuple.writers[0].startswith("ROOT v6.")


def test_a_dataset_of_rntuple_files_sums_like_root(tmp_path: Path) -> None:
    paths = [write_rntuple(ROOT, tmp_path / f"r{i}.root", entries=1000 + 500 * i,
                           per_cluster=300, per_group=2) for i in range(3)]
    wants = [root_figures(ROOT, p, "ntpl") for p in paths]
    ds = hep_advisor.probes.probe_dataset([str(tmp_path)])
    assert ds.errors == ()
    (tree,) = ds.trees
    assert tree.files == 3
    assert tree.entries == sum(w["entries"] for w in wants)
    assert tree.compressed_bytes == sum(w["compressed"] for w in wants)
    assert tree.uncompressed_bytes == sum(w["uncompressed"] for w in wants)
    assert tree.rntuple is not None
    assert tree.rntuple.clusters == sum(w["clusters"] for w in wants)
    assert tree.rntuple.cluster_groups == sum(w["cluster_groups"] for w in wants)
    assert tree.open_s is not None and tree.open_s.count == 3
