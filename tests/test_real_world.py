"""Public ROOT files written outside this project (``tests/data/real-world``, see its README).

Every file is probed, none refused: old TTree class versions (5: no fAutoFlush, no cluster
ranges, baskets kept inside the TTree record) and RNTuples of format 1.0.  Without ROOT the
figures are checked against what uproot and the files' metadata say; with ROOT (tests marked
``root``) against ROOT's own: entries, bytes, clusters (``TTree::TClusterIterator``) and, for
RNTuples, ``RNTupleReader::GetNEntries`` and ``RNTupleInspector``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from collections import Counter
from pathlib import Path

import pytest

import hep_advisor.probes
from hep_advisor.probes.rootfile import inspect_file

DATA = Path(__file__).parent / "data" / "real-world"
FILES = sorted(DATA.glob("*.root"))

#: (file, tree): (format, entries, top-level branches or fields), as ROOT reports them.
EXPECTED = {
    ("uproot-from-geant4.root", "Details"): ("ttree", 1, 7),
    ("uproot-from-geant4.root", "HitStrips"): ("ttree", 4808, 3),
    ("uproot-from-geant4.root", "GeneratedTracks"): ("ttree", 1000, 7),
    ("uproot-from-geant4.root", "TrackedRays"): ("ttree", 224, 5),
    ("uproot-issue-250.root", "B4"): ("ttree", 1000, 4),
    ("uproot-HZZ.root", "events"): ("ttree", 2421, 51),
    ("ntpl001_staff_rntuple_v1-0-0-0.root", "Staff"): ("rntuple", 3354, 11),
    ("test_int_vfloat_tlv_vtlv_rntuple_v1-0-0-0.root", "ntuple"): ("rntuple", 5, 4),
}


def test_every_file_is_there() -> None:
    assert {p.name for p in FILES} == {f for f, _ in EXPECTED}


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_every_file_is_probed(path: Path) -> None:
    ds = hep_advisor.probes.probe_dataset([str(path)])
    assert ds.errors == ()
    assert ds.usable_files == 1
    want = {t: v for (f, t), v in EXPECTED.items() if f == path.name}
    got = {t.name: (t.format, t.entries, t.branches) for t in ds.trees}
    assert got == want
    for t in ds.trees:
        assert t.clusters is not None
        assert t.compression.algorithm == ("ZSTD" if t.format == "rntuple" else "ZLIB")


def test_old_ttree_class_version_is_probed_with_notes() -> None:
    ds = hep_advisor.probes.probe_dataset([str(DATA / "uproot-issue-250.root")])
    (tree,) = ds.trees
    assert tree.format == "ttree"
    assert tree.autoflush is None  # class version 5 has no fAutoFlush: unknown, not a refusal
    assert any("class version 5" in n and "fAutoFlush" in n for n in tree.notes)
    assert tree.clusters is not None and tree.clusters.source == "estimated"
    assert (tree.compressed_bytes, tree.uncompressed_bytes) == (34900, 48616)
    assert tree.compression.source == "basket-header"


def test_baskets_inside_the_tree_record_are_noted() -> None:
    ds = hep_advisor.probes.probe_dataset([str(DATA / "uproot-from-geant4.root")])
    trees = {t.name: t for t in ds.trees}
    hits = trees["HitStrips"]
    # ROOT counts no bytes for baskets never written to their own keys, and estimates the
    # clusters as entries - 1 (then 1) when fZipBytes is 0
    assert hits.compressed_bytes == 0
    assert any("inside the TTree record" in n for n in hits.notes)
    assert hits.clusters is not None
    assert (hits.clusters.count, hits.clusters.min_entries, hits.clusters.max_entries) == (
        2, 1, 4807)
    # no tree has bytes of its own: the read tests and the model take the one with the most
    # entries, not the first listed (a one-entry "Details")
    assert {t.compressed_bytes for t in ds.trees} == {0}
    assert ds.trees[0].name == "Details" and ds.main_tree is hits


def test_rntuple_profile() -> None:
    ds = hep_advisor.probes.probe_dataset([str(DATA / "ntpl001_staff_rntuple_v1-0-0-0.root")])
    (tree,) = ds.trees
    assert tree.format == "rntuple"
    assert tree.autoflush is None
    assert (tree.compression.algorithm, tree.compression.level) == ("ZSTD", 5)
    assert tree.compression.source == "page-list"
    assert tree.clusters is not None and tree.clusters.source == "rntuple"
    assert tree.rntuple is not None
    assert tree.rntuple.versions == ("1.0.0.0",)
    assert tree.rntuple.cluster_groups == 1 and tree.rntuple.clusters == 1
    assert tree.rntuple.pages == tree.baskets.count
    assert sum(b.compressed_bytes for b in tree.branch_profiles) == tree.compressed_bytes
    assert sum(b.uncompressed_bytes for b in tree.branch_profiles) == tree.uncompressed_bytes
    assert {b.name for b in tree.branch_profiles} >= {"Age", "Cost", "Division", "Nation"}
    assert all(b.fields is not None and b.columns is not None for b in tree.branch_profiles)


def test_nested_rntuple_fields_roll_up_to_the_top_level() -> None:
    (tree,) = hep_advisor.probes.probe_dataset(
        [str(DATA / "test_int_vfloat_tlv_vtlv_rntuple_v1-0-0-0.root")]).trees
    fields = {b.name: b for b in tree.branch_profiles}
    assert fields["two_v_floats"].typename == "std::vector<float>"
    assert fields["two_v_floats"].columns == 2  # offsets and values
    assert fields["four_v_LVs"].fields is not None and fields["four_v_LVs"].fields > 2
    assert tree.rntuple is not None and tree.rntuple.fields == 14


def test_probe_json_of_the_real_world_files(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "hep_advisor", "probe", str(DATA), "--json"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    doc = json.loads(r.stdout)
    import jsonschema

    from hep_advisor.document.schema import generate_schema

    jsonschema.validate(doc, generate_schema())
    trees = doc["dataset"]["trees"]
    assert doc["dataset"]["errors"] == []
    assert Counter(t["format"] for t in trees) == {"ttree": 6, "rntuple": 2}
    assert all((t["rntuple"] is None) == (t["format"] == "ttree") for t in trees)


def test_the_profile_survives_the_json_round_trip() -> None:
    """The cache and ``--dataset`` reload profiles from JSON: RNTuple fields and notes too."""
    import dataclasses

    from hep_advisor.findings.jsonio import from_jsonable, to_jsonable
    from hep_advisor.probes.results import DatasetProfile

    ds = hep_advisor.probes.probe_dataset([str(DATA)])
    back = from_jsonable(DatasetProfile, json.loads(json.dumps(to_jsonable(ds))), "t", "dataset")
    assert dataclasses.replace(back, file_paths=()) == dataclasses.replace(ds, file_paths=())


def test_a_file_with_both_a_ttree_and_an_rntuple(tmp_path: Path) -> None:
    import numpy as np
    import uproot

    path = tmp_path / "both.root"
    with uproot.recreate(path) as f:
        f.mktree("tree", {"x": np.float64})
        f["tree"].extend({"x": np.arange(100, dtype=np.float64)})
        f["ntuple"] = {"y": np.arange(50, dtype=np.int32)}  # uproot >= 5.7 writes RNTuple
    classes = set(uproot.open(path).classnames().values())
    if "ROOT::RNTuple" not in classes:
        pytest.skip(f"this uproot wrote {classes}, not an RNTuple")
    meta = inspect_file(str(path))
    assert {(t.name, t.format, t.entries) for t in meta.trees} == {
        ("tree", "ttree", 100), ("ntuple", "rntuple", 50)}
    ds = hep_advisor.probes.probe_dataset([str(path)])
    assert {(t.name, t.format) for t in ds.trees} == {("tree", "ttree"), ("ntuple", "rntuple")}


# -- against ROOT ----------------------------------------------------------------------------


def _root():  # type: ignore[no-untyped-def]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import ROOT
    except Exception:  # ImportError, or a broken installation
        pytest.skip("ROOT is not installed")
    return ROOT


TTREES = sorted({(f, t) for (f, t), v in EXPECTED.items() if v[0] == "ttree"})
RNTUPLES = sorted({(f, t) for (f, t), v in EXPECTED.items() if v[0] == "rntuple"})


@pytest.mark.root
@pytest.mark.parametrize(("file", "name"), TTREES, ids=[f"{f}:{t}" for f, t in TTREES])
def test_ttree_figures_are_roots(file: str, name: str) -> None:
    ROOT = _root()
    path = DATA / file
    f = ROOT.TFile.Open(str(path))
    try:
        tree = f.Get(name)
        n = tree.GetEntries()
        it = tree.GetClusterIterator(0)
        lengths = []
        start = it.Next()
        while start < n:
            stop = it.GetNextEntry()
            lengths.append(stop - start)
            start = it.Next()
        want = (n, tree.GetZipBytes(), tree.GetTotBytes(), tree.GetListOfBranches().GetEntries())
    finally:
        f.Close()
    meta = {t.name: t for t in inspect_file(str(path)).trees}[name]
    top = [b for b in meta.branches if "/" not in b.name and "." not in b.name]
    assert (meta.entries, meta.compressed_bytes, meta.uncompressed_bytes, len(top)) == want
    assert meta.cluster_sizes == tuple(sorted(Counter(lengths).items()))


@pytest.mark.root
@pytest.mark.parametrize(("file", "name"), RNTUPLES, ids=[f"{f}:{t}" for f, t in RNTUPLES])
def test_rntuple_figures_are_roots(file: str, name: str) -> None:
    from rntuple_helpers import assert_rntuple_matches_root

    assert_rntuple_matches_root(_root(), DATA / file, name)


def test_a_reader_baseline_on_an_rntuple_says_why_there_is_none() -> None:
    from hep_advisor.pipeline.derive import reader_baseline_of
    from hep_advisor.probes.readtests.readers import parse_reader

    ds = hep_advisor.probes.probe_dataset([str(DATA / "ntpl001_staff_rntuple_v1-0-0-0.root")])
    rb, why = reader_baseline_of(parse_reader("uproot.iterate"), ds, None,
                                 None, None, None, [])  # type: ignore[arg-type]
    assert rb is None
    assert why == ["reader uproot.iterate:step_size=100 MB: no baseline: the files hold an "
                   "RNTuple ('Staff'), and the reader replays model TTree readers"]
