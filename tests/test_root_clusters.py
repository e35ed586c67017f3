"""The probe's cluster layout against ROOT's own ``TTree::TClusterIterator``.

Each case writes a small file (ROOT's writer, ``hadd``, uproot), walks its clusters with ROOT's
iterator, and checks that the probe finds the same clusters (as a multiset of lengths), the same
mean cluster size, and says where it got them from.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import uproot

import hep_advisor.probes
from hep_advisor.demo.root_writer import plain_merge, write_tree
from hep_advisor.demo.spec import ESD, FLAT, make_chunk
from hep_advisor.demo.uproot_writer import write_tree as uproot_write_tree
from hep_advisor.probes.rootfile import inspect_file

try:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import ROOT
except Exception:  # ImportError, or a broken installation
    pytest.skip("ROOT is not installed", allow_module_level=True)

pytestmark = pytest.mark.root

#: A tree "t" of an int and a float[width], filled with incompressible bit patterns (so that
#: compressed sizes are predictable), AutoFlush set to ``autoflush`` when ``set_autoflush``.
_WRITE_CODE = r"""
#include <cstdint>
#include <cstring>
#include <vector>
#include "TFile.h"
#include "TString.h"
#include "TTree.h"

namespace hep_advisor_cluster_test {
Long64_t write(const char *path, Long64_t entries, Int_t width, Int_t setting,
               bool set_autoflush, Long64_t autoflush)
{
   TFile f(path, "RECREATE", "", setting);
   if (f.IsZombie())
      return -1;
   TTree t("t", "t");
   Int_t n = width;
   std::vector<float> x(width);
   t.Branch("n", &n, "n/I");
   t.Branch("x", x.data(), TString::Format("x[%d]/F", width));
   if (set_autoflush)
      t.SetAutoFlush(autoflush);
   for (Long64_t i = 0; i < entries; ++i) {
      for (Int_t j = 0; j < width; ++j) {
         std::uint64_t h = static_cast<std::uint64_t>(i * width + j + 1) * 0x9E3779B97F4A7C15ULL;
         h ^= h >> 29;
         h *= 0xBF58476D1CE4E5B9ULL;
         h ^= h >> 32;
         const std::uint32_t bits = static_cast<std::uint32_t>(h) & 0x3fffffffu;  // finite
         std::memcpy(&x[j], &bits, 4);
      }
      if (t.Fill() < 0)
         return -1;
   }
   t.Write();
   f.Close();
   return entries;
}
}
"""

_declared = False


def _write(
    path: Path, entries: int, autoflush: int | None = None, width: int = 10, setting: int = 101
) -> Path:
    """Write tree "t" with ROOT: ``autoflush`` is what ``TTree::SetAutoFlush`` is told (None:
    nothing, ROOT's default -30000000 stays)."""
    global _declared
    if not _declared:
        assert ROOT.gInterpreter.Declare(_WRITE_CODE)
        _declared = True
    written = ROOT.hep_advisor_cluster_test.write(
        str(path), entries, width, setting, autoflush is not None, autoflush or 0
    )
    assert written == entries
    return path


def root_cluster_lengths(path: Path, name: str) -> list[int]:
    """The entries of each cluster, as ROOT's ``TTree::TClusterIterator`` walks them."""
    f = ROOT.TFile.Open(str(path))
    try:
        tree = f.Get(name)
        n = tree.GetEntries()
        it = tree.GetClusterIterator(0)
        lengths = []
        start = it.Next()  # the first cluster's start; GetNextEntry() is its end (exclusive)
        while start < n:
            stop = it.GetNextEntry()
            assert stop > start, (start, stop)
            lengths.append(stop - start)
            start = it.Next()
        assert sum(lengths) == n
        return lengths
    finally:
        f.Close()


def _as_sizes(lengths: list[int]) -> tuple[tuple[int, int], ...]:
    """Cluster lengths as the probe reports them: (entries per cluster, count), by size."""
    return tuple(sorted(Counter(lengths).items()))


def _assert_probe_matches_root(path: Path, name: str, source: str) -> list[int]:
    lengths = root_cluster_lengths(path, name)
    (meta,) = inspect_file(str(path)).trees
    assert meta.name == name
    assert meta.cluster_sizes == _as_sizes(lengths)
    assert meta.cluster_source == source
    profile = hep_advisor.probes.probe_dataset([str(path)])
    assert not profile.errors
    (tree,) = profile.trees
    assert tree.clusters is not None
    assert tree.clusters.source == source
    assert tree.clusters.count == len(lengths)
    assert (tree.clusters.min_entries, tree.clusters.max_entries) == (min(lengths), max(lengths))
    assert tree.cluster_entries == sum(lengths) / len(lengths)
    return lengths


# -- the cases -------------------------------------------------------------------------------


def _root_small(d: Path) -> Path:
    """ROOT's writer (the demo's), 75 entries: never reaches its first AutoFlush."""
    p = d / "small.root"
    write_tree(str(p), ESD, [make_chunk(ESD, 40, 1), make_chunk(ESD, 35, 2)], "ZLIB", 1)
    return p


def _root_autoflush(d: Path) -> Path:
    return _write(d / "af200.root", 1200, autoflush=200)


def _root_autoflush_partial(d: Path) -> Path:
    """1000 entries, AutoFlush 300: the last cluster is short."""
    return _write(d / "af300.root", 1000, autoflush=300)


def _hadd_flushed(d: Path) -> Path:
    """A fast merge of flushed trees with different AutoFlush (and a small one at the end)."""
    inputs = [
        _write(d / "a.root", 1000, autoflush=100),
        _write(d / "b.root", 1000, autoflush=250),
        _write(d / "c.root", 370, autoflush=37),
        _write(d / "d.root", 30),
    ]
    out = d / "merged.root"
    plain_merge([str(p) for p in inputs], str(out))
    return out


def _hadd_small_between_flushed(d: Path) -> Path:
    """A never-flushed tree between flushed ones: its range has cluster size 0."""
    inputs = [
        _write(d / "a.root", 1000, autoflush=100),
        _write(d / "b.root", 30),
        _write(d / "c.root", 1000, autoflush=300),
    ]
    out = d / "merged.root"
    plain_merge([str(p) for p in inputs], str(out))
    return out


def _hadd_flushed_between_small(d: Path) -> Path:
    inputs = [
        _write(d / "a.root", 30),
        _write(d / "b.root", 1000, autoflush=100),
        _write(d / "c.root", 30),
    ]
    out = d / "merged.root"
    plain_merge([str(p) for p in inputs], str(out))
    return out


def _hadd_never_flushed(d: Path) -> Path:
    """A fast merge of the demo's small files: no ranges, fAutoFlush stays -30000000."""
    inputs = []
    for i, n in enumerate((30, 40, 50)):
        p = d / f"esd_{i}.root"
        write_tree(str(p), ESD, [make_chunk(ESD, n, 100 + i)], "ZLIB", 1)
        inputs.append(str(p))
    out = d / "merged.root"
    plain_merge(inputs, str(out))
    return out


def _uproot_chunks(d: Path) -> Path:
    """uproot, three write calls (one basket per branch each): no flush recorded."""
    p = d / "uproot.root"
    chunks = [make_chunk(FLAT, n, i) for i, n in enumerate((100, 50, 70))]
    uproot_write_tree(str(p), FLAT, chunks, "ZLIB", 1)
    return p


def _uproot_over_30mb(d: Path) -> Path:
    """uproot, 32 MB stored: ROOT's estimate (entries * 30 MB / bytes) splits it in two."""
    p = d / "big.root"
    with uproot.recreate(p, compression=None) as f:
        f.mktree("t", {"x": np.float64})
        for i in range(4):
            f["t"].extend({"x": np.random.default_rng(i).random(1_000_000)})
    return p


def _hadd_unflushed_range_under_autoflush(d: Path) -> Path:
    """A never-flushed 1000-entry tree between flushed ones; the merge ends with AutoFlush 300."""
    inputs = [
        _write(d / "a.root", 1000, autoflush=100),
        _write(d / "b.root", 1000),
        _write(d / "c.root", 1000, autoflush=300),
    ]
    out = d / "merged.root"
    plain_merge([str(p) for p in inputs], str(out))
    return out


def _hadd_autoflush_0_after_flushed(d: Path) -> Path:
    """A flushed tree, then one with AutoFlush disabled (0): the merge keeps fAutoFlush 0."""
    inputs = [_write(d / "a.root", 1000, autoflush=100), _write(d / "b.root", 1000, autoflush=0)]
    out = d / "merged.root"
    plain_merge([str(p) for p in inputs], str(out))
    return out


def _hadd_autoflush_1mb(d: Path) -> Path:
    """Two 0.8 MB trees told AutoFlush -1000000 (1 MB, never reached); merged: 1.6 MB."""
    inputs = [
        _write(d / f"{i}.root", 1000, autoflush=-1_000_000, width=200) for i in ("a", "b")
    ]
    out = d / "merged.root"
    plain_merge([str(p) for p in inputs], str(out))
    return out


def _root_autoflush_0_over_30mb(d: Path) -> Path:
    """AutoFlush disabled (0), 32 MB stored uncompressed."""
    return _write(d / "big0.root", 4000, autoflush=0, width=2000, setting=0)


@dataclass(frozen=True)
class Case:
    build: Callable[[Path], Path]
    tree: str
    source: str
    #: ROOT's cluster lengths where the construction fixes them, {length: count}
    root: dict[int, int] | None = None
    #: for the estimated splits of large files: how many clusters ROOT finds
    n_clusters: int | None = None


CASES = {
    "root-small": Case(_root_small, ESD.name, "estimated", {75: 1}),
    "root-autoflush": Case(_root_autoflush, "t", "autoflush", {200: 6}),
    "root-autoflush-partial": Case(_root_autoflush_partial, "t", "autoflush", {300: 3, 100: 1}),
    "hadd-flushed": Case(_hadd_flushed, "t", "ranges", {100: 10, 250: 4, 37: 10, 30: 1}),
    "hadd-small-between-flushed": Case(
        _hadd_small_between_flushed, "t", "ranges", {100: 11, 30: 1, 300: 3}
    ),
    "hadd-flushed-between-small": Case(
        _hadd_flushed_between_small, "t", "ranges", {30: 2, 100: 10}
    ),
    "hadd-never-flushed": Case(_hadd_never_flushed, ESD.name, "estimated", {120: 1}),
    "uproot-chunks": Case(_uproot_chunks, FLAT.name, "estimated", {220: 1}),
    "uproot-over-30mb": Case(_uproot_over_30mb, "t", "estimated", n_clusters=2),
    # a range of cluster size 0 takes fAutoFlush (300) when fAutoFlush > 0
    "hadd-unflushed-range-under-autoflush": Case(
        _hadd_unflushed_range_under_autoflush, "t", "ranges", {100: 12, 300: 6}),
    # fAutoFlush -1000000: ROOT's cache, and so its estimate, uses 1 MB
    "hadd-autoflush-1mb": Case(_hadd_autoflush_1mb, "t", "estimated", n_clusters=2),
}


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_probe_clusters_are_roots(tmp_path: Path, case: Case) -> None:
    path = case.build(tmp_path)
    lengths = _assert_probe_matches_root(path, case.tree, case.source)
    if case.root is not None:
        assert Counter(lengths) == case.root
    if case.n_clusters is not None:
        assert len(lengths) == case.n_clusters


@pytest.mark.parametrize("n", [1, 64, 500])
def test_cluster_size_is_what_the_writer_was_told(tmp_path: Path, n: int) -> None:
    path = _write(tmp_path / "t.root", 4 * n, autoflush=n)
    with uproot.open(path) as f:
        raw = f["t"]
        assert raw.member("fAutoFlush") == n
        assert raw.member("fNClusterRange") == 0
    assert root_cluster_lengths(path, "t") == [n] * 4
    (tree,) = hep_advisor.probes.probe_dataset([str(path)]).trees
    assert tree.cluster_entries == n
    assert tree.clusters is not None
    assert tree.clusters.source == "autoflush"
    assert (tree.clusters.count, tree.clusters.min_entries, tree.clusters.max_entries) == (4, n, n)


def test_clusters_pool_over_files(tmp_path: Path) -> None:
    """A dataset of several files: every file's clusters, as ROOT walks each tree."""
    paths = [
        _write(tmp_path / "a.root", 1000, autoflush=100),
        _write(tmp_path / "b.root", 1000, autoflush=300),
        _write(tmp_path / "c.root", 900, autoflush=300),
    ]
    lengths = [x for p in paths for x in root_cluster_lengths(p, "t")]
    assert Counter(lengths) == {100: 11, 300: 6}
    (tree,) = hep_advisor.probes.probe_dataset([str(p) for p in paths]).trees
    assert tree.clusters is not None
    assert tree.clusters.source == "autoflush"
    assert tree.clusters.count == len(lengths)
    assert tree.cluster_entries == sum(lengths) / len(lengths)


# -- where the probe and ROOT part -----------------------------------------------------------
#
# ROOT's GetClusterIterator() first sizes the tree's read cache (TTree::GetCacheAutoSize:
# -fAutoFlush bytes when fAutoFlush < 0; 1.5 * median cluster * bytes per entry, or 45 MB,
# when fAutoFlush == 0), and GetEstimatedClusterSize() returns fAutoFlush whenever it is
# positive, before estimating.  The probe follows both, except that for fAutoFlush == 0
# (flushing disabled, rare) it estimates with a 30 MB cache.  These cases pin what ROOT does,
# and fail once the probe agrees, so that they can join CASES.

DISAGREEMENTS = {
    "hadd-autoflush-0-after-flushed": (
        Case(_hadd_autoflush_0_after_flushed, "t", "ranges", {100: 10, 149: 6, 106: 1}),
        "fAutoFlush 0: ROOT's cache is 1.5 * median cluster * bytes per entry, not 30 MB",
    ),
    "root-autoflush-0-over-30mb": (
        Case(_root_autoflush_0_over_30mb, "t", "estimated", {4000: 1}),
        "fAutoFlush 0, no ranges: ROOT's cache is 45 MB, not 30 MB",
    ),
}


@pytest.mark.parametrize(
    ("case", "why"), list(DISAGREEMENTS.values()), ids=list(DISAGREEMENTS)
)
def test_known_disagreements(tmp_path: Path, case: Case, why: str) -> None:
    path = case.build(tmp_path)
    lengths = root_cluster_lengths(path, case.tree)
    if case.root is not None:
        assert Counter(lengths) == case.root
    if case.n_clusters is not None:
        assert len(lengths) == case.n_clusters
    (meta,) = inspect_file(str(path)).trees
    assert meta.cluster_source == case.source
    assert meta.cluster_sizes != _as_sizes(lengths), "the probe now agrees: move to CASES"
    pytest.xfail(f"probe {meta.cluster_sizes} != ROOT {_as_sizes(lengths)}: {why}")
