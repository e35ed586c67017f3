"""The fast TTree metadata reader (``hep_advisor.probes.ttreemeta``) against uproot's full reader.

The probe reads the first files of a dataset with uproot and the others with the fast reader;
both must give the same figures (entries, bytes, baskets, clusters, compression) for every file,
and where the fast reader does not know a layout it must hand over to uproot, not guess.
"""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path

import numpy as np
import pytest
import uproot

import hep_advisor.probes
import hep_advisor.probes.dataset
from helpers import write_flat
from hep_advisor.probes.rootfile import FileMeta, TreeMeta, inspect_file
from hep_advisor.probes.ttreemeta import Unsupported, read_tree

REAL_WORLD = Path(__file__).parent / "data" / "real-world"


def _without_types(t: TreeMeta) -> TreeMeta:
    return dataclasses.replace(
        t, branches=tuple(dataclasses.replace(b, typename="") for b in t.branches))


def assert_same(path: Path) -> tuple[FileMeta, FileMeta]:
    full = inspect_file(str(path), fast=False)
    fast = inspect_file(str(path), fast=True)
    assert full.open_s is not None
    assert [_without_types(t) for t in fast.trees] == [_without_types(t) for t in full.trees]
    return full, fast


def _fast_read(path: Path, name: str) -> object:
    with uproot.open(path) as f:
        key = f.key(name)
        chunk, cursor = key.get_uncompressed_chunk_cursor()
        data = chunk.get(cursor.index, cursor.index + key.fObjlen, cursor, {})
        return read_tree(bytes(data), int(key.fKeylen))


def test_demo_files_read_alike(tiny_demo: Path) -> None:
    paths = sorted(tiny_demo.rglob("*.root"))
    assert len(paths) > 10
    for p in paths:
        _full, fast = assert_same(p)
        assert fast.open_s is None  # the fast reader was used, so uproot's open is not timed


@pytest.mark.parametrize("compression", [None, uproot.ZLIB(1), uproot.LZ4(4), uproot.ZSTD(5)],
                         ids=["none", "zlib", "lz4", "zstd"])
def test_flat_files_read_alike(tmp_path: Path, compression: object) -> None:
    path = write_flat(tmp_path / "f.root", entries=3000, branches=50, compression=compression,
                      chunks=4)
    assert_same(path)


def test_jagged_analysis_ntuple_reads_alike() -> None:
    full, fast = assert_same(REAL_WORLD / "uproot-HZZ.root")
    assert fast.open_s is None
    # the simple leaf types are named as uproot names them
    assert [b.typename for b in fast.trees[0].branches] == [
        b.typename for b in full.trees[0].branches]


def test_old_class_versions_fall_back_to_uproot() -> None:
    with pytest.raises(Unsupported, match="TTree class version 5"):
        _fast_read(REAL_WORLD / "uproot-issue-250.root", "B4")
    for name in ("uproot-issue-250.root", "uproot-from-geant4.root"):
        full, fast = assert_same(REAL_WORLD / name)
        assert fast.open_s is not None  # uproot read them, and timed the open
        assert [t.notes for t in fast.trees] == [t.notes for t in full.trees]


def test_a_dataset_probes_alike_with_and_without_the_fast_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(12):
        write_flat(tmp_path / f"f{i:02d}.root", entries=200 + 37 * i, branches=20, chunks=1 + i % 3)
    fast = hep_advisor.probes.probe_dataset([str(tmp_path)])
    monkeypatch.setattr(hep_advisor.probes.dataset, "TIMED_OPENS", 10**9)
    full = hep_advisor.probes.probe_dataset([str(tmp_path)])
    assert fast.open_s is not None and fast.open_s.count == 5
    assert full.open_s is not None and full.open_s.count == 12
    strip = ("open_s",)
    (a,), (b,) = fast.trees, full.trees
    assert {k: v for k, v in dataclasses.asdict(a).items() if k not in strip} == {
        k: v for k, v in dataclasses.asdict(b).items() if k not in strip}


def test_timed_opens(tmp_path: Path) -> None:
    for i in range(8):
        write_flat(tmp_path / f"f{i}.root")
    ds = hep_advisor.probes.probe_dataset([str(tmp_path)])
    assert ds.usable_files == 8
    assert ds.open_s is not None and ds.open_s.count == hep_advisor.probes.dataset.TIMED_OPENS == 5


def test_damaged_record_is_unsupported_not_wrong(tmp_path: Path) -> None:
    path = write_flat(tmp_path / "f.root", branches=10)
    with uproot.open(path) as f:
        key = f.key("t")
        chunk, cursor = key.get_uncompressed_chunk_cursor()
        data = bytearray(chunk.get(cursor.index, cursor.index + key.fObjlen, cursor, {}))
        keylen = int(key.fKeylen)
    rng = np.random.default_rng(1)
    unsupported = 0
    for _ in range(200):
        bad = bytearray(data)
        for i in rng.integers(len(bad) // 4, len(bad), 8):
            bad[i] ^= 0xFF
        try:  # any other exception fails the test
            read_tree(bytes(bad), keylen)
        except Unsupported:
            unsupported += 1
    assert unsupported > 100  # most damage breaks the framing, and is caught


# -- ROOT-written files ----------------------------------------------------------------------


def _root():  # type: ignore[no-untyped-def]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import ROOT
    except Exception:  # ImportError, or a broken installation
        pytest.skip("ROOT is not installed")
    return ROOT


_ROOT_CODE = r"""
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>
#include "TFile.h"
#include "TTree.h"

namespace hep_advisor_fast_test {
void write(const char *path, int setting)
{
   TFile f(path, "RECREATE", "", setting);
   TTree t("t", "t");
   Int_t n = 0;
   Float_t x[20];
   Double_t d = 0;
   ULong64_t u = 0;
   Bool_t o = false;
   std::vector<float> v;
   std::vector<std::vector<int>> vv;
   std::set<std::string> ss;
   std::unordered_map<std::string, double> um;
   std::string s;
   t.Branch("n", &n, "n/I");
   t.Branch("x", x, "x[n]/F");
   t.Branch("d", &d, "d/D");
   t.Branch("u", &u, "u/l");
   t.Branch("o", &o, "o/O");
   t.Branch("v", &v);
   t.Branch("vv", &vv);
   t.Branch("ss", &ss);
   t.Branch("um", &um);
   t.Branch("s", &s);
   t.SetAutoFlush(300);
   for (int i = 0; i < 2000; ++i) {
      n = i % 20;
      for (int j = 0; j < n; ++j) x[j] = 0.5f * i + j;
      d = 0.25 * i; u = 3ull * i; o = i % 2;
      v.assign(i % 5, 1.5f * i);
      vv.assign(i % 3, std::vector<int>(i % 4, i));
      ss.insert(std::to_string(i % 50));
      um[std::to_string(i % 30)] = i;
      s = std::string(i % 9, 'y');
      t.Fill();
   }
   t.Write();
}
}
"""


@pytest.mark.root
@pytest.mark.parametrize("setting", [0, 101, 404, 505])
def test_root_written_trees_read_alike(tmp_path: Path, setting: int) -> None:
    ROOT = _root()
    if not hasattr(ROOT, "hep_advisor_fast_test"):
        assert ROOT.gInterpreter.Declare(_ROOT_CODE)
    path = tmp_path / "r.root"
    ROOT.hep_advisor_fast_test.write(str(path), setting)
    _full, fast = assert_same(path)
    (tree,) = fast.trees
    assert tree.entries == 2000
    assert tree.cluster_source == "autoflush"
