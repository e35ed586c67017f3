"""The test bench's ROOT writers (``testbench.rootwriter``): what they write is what they say,
read back with uproot's defaults."""

from __future__ import annotations

import warnings
from pathlib import Path

import awkward as ak
import numpy as np
import pytest
import uproot

from testbench.rootwriter import Layout, write_mixed_root

try:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import ROOT  # noqa: F401
except Exception:  # ImportError, or a broken installation
    pytest.skip("ROOT is not installed", allow_module_level=True)

pytestmark = pytest.mark.root

#: every kind the writer knows, tiny
MIXED = Layout(
    scalars=(("run", "i"), ("event", "l"), ("met", "F"), ("w", "D"), ("trig", "O"),
             ("q", "b"), ("nv", "S"), ("x", "I")),
    collections=(("Jet", 3.0, (("pt", "F"), ("id", "I"), ("btag", "b"))),),
    vectors=("trk_pt",),
    objects=(("evt", 2, 1, 0), ("cand", 1, 1, 2)),
    auto_flush=100, basket_size=4000)


def test_mixed_layout_written_by_root(tmp_path: Path) -> None:
    write_mixed_root(str(tmp_path), 2, 250, MIXED, 505, tag="t_mixed")
    files = sorted(tmp_path.glob("*.root"))
    assert [f.name for f in files] == ["part_000.root", "part_001.root"]
    assert not list(tmp_path.glob("*.tmp"))
    with uproot.open(files[0]) as f:
        t = f["Events"]
        assert t.num_entries == 250
        names = t.keys()
        assert len(names) == MIXED.n_branches == 23
        assert t["evt"].typename == "hep_testbench_mixed_t_mixed_Obj0"  # a split object
        assert {k for k in names if k.startswith("cand/")} == {
            "cand/cand_f0", "cand/cand_i0", "cand/items", "cand/items/items.cand_s0",
            "cand/items/items.cand_s1"}
        assert t["Jet_pt"].title == "Jet_pt[nJet]/F"
        assert t["trk_pt"].typename == "std::vector<float>"
        assert isinstance(t["met"].compression, uproot.ZSTD)
        assert t["met"].compression.level == 5
        # AutoFlush 100 entries: clusters, so every branch holds at least three baskets
        assert min(b.num_baskets for b in t.values() if b.num_baskets) >= 3
        a = t.arrays(library="ak")  # every branch, uproot's defaults
    assert ak.num(a["Jet_pt"]).tolist() == a["nJet"].tolist()
    assert a["event"].tolist()[:3] == [1_000_000, 1_000_001, 1_000_002]
    assert set(np.unique(a["trig"].to_numpy())) <= {False, True}
    # the second file has its own seed
    with uproot.open(files[1]) as f:
        assert not np.array_equal(f["Events"]["met"].array(library="np"),
                                  a["met"].to_numpy())


def test_kept_when_complete_and_compression_setting(tmp_path: Path) -> None:
    layout = Layout(scalars=(("a", "F"),), collections=(("C", 1.0, (("v", "F"),)),))
    write_mixed_root(str(tmp_path), 1, 50, layout, 209, tag="t_lzma")
    p = tmp_path / "part_000.root"
    mtime = p.stat().st_mtime_ns
    write_mixed_root(str(tmp_path), 1, 50, layout, 209, tag="t_lzma")
    assert p.stat().st_mtime_ns == mtime
    with uproot.open(p) as f:
        c = f["Events"]["C_v"].compression
        assert isinstance(c, uproot.LZMA) and c.level == 9


def test_bad_layout_is_one_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'a b' is not an identifier"):
        write_mixed_root(str(tmp_path), 1, 10, Layout(scalars=(("a b", "F"),)), 101)
    with pytest.raises(ValueError, match="leaf code 'Q'"):
        write_mixed_root(str(tmp_path), 1, 10, Layout(collections=(("C", 1.0, (("v", "Q"),)),)),
                         101)
    with pytest.raises(RuntimeError, match="ROOT writer failed for"):  # ROOT says no
        write_mixed_root(str(tmp_path / "bad"), 1, 10, Layout(scalars=(("a", "F"),)), 101,
                         tag="not-an-identifier")
    assert not list(tmp_path.rglob("*.root"))
