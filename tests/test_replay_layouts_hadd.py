"""ROOT's ``hadd -O`` basket sizing in the replayed layout (models.replay.layouts): the rule
on a small synthetic map whose basket counts were derived by hand, and (ROOT installed) the
rule against a real ``hadd -O`` of two tiny files ROOT wrote."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from hep_advisor.models.replay.layouts import (
    BranchFill,
    entries_per_basket,
    optimize_baskets,
    optimized_merge,
)
from hep_advisor.probes.basketmap import BasketMap, basket_keylen, synthetic_map


def test_entries_per_basket_is_root_fill_rule() -> None:
    # a 2,048-byte buffer of 4-byte floats behind a 71-byte key: 494 entries, as ROOT 6.40
    # wrote them (veclzma's hadd -O output); a longer name (72-byte key): 493
    assert entries_per_basket(2048, 71, 4, 0) == 494
    assert entries_per_basket(2048, 72, 4, 0) == 493
    # entries of varying size: twice the 4-byte offset table counts too
    # (1000 - 50 - 10) / (10 + 8) = 52.2 -> 53
    assert entries_per_basket(1000, 50, 10, 1) == 53
    assert entries_per_basket(100, 90, 50, 0) == 1  # at least one entry


def test_optimize_baskets_by_hand() -> None:
    # two branches, 600 entries filled, old buffers 4,000 B: a 4-byte branch (one basket of
    # 2,400 B + a 65-byte key) and an 8-byte one (two baskets + two keys)
    fills = [BranchFill("a", 4, 1.0, 65, 4000), BranchFill("b", 8, 1.0, 65, 4000)]
    tot = [600 * 4 + 65, 600 * 8 + 2 * 65]  # 2,465 and 4,930; average per leaf 3,697.5
    # first pass: 4000 * 2465 / 3697.5 = 2666 and 5333: memory factor 7395 / 7999 = 0.9245;
    # second: 2465 and 4930, rounded up past the next multiple of 512: 2560 and 5120
    assert optimize_baskets(fills, tot, 600, 600) == [2560, 5120]
    # entries of varying size add two Int_t per entry of a cluster before rounding:
    # 2465 + 600 * 8 = 7265 -> 7680
    vary = [replace(fills[0], offsets=10), fills[1]]
    assert optimize_baskets(vary, tot, 600, 600)[0] == 7680
    # a branch with sub-branches keeps its buffer
    parent = [replace(fills[0], subbranches=2), fills[1]]
    assert optimize_baskets(parent, tot, 600, 600)[0] == 4000


def two_branch_files(files: int = 3, entries: int = 1000, autoflush: int = 600
                     ) -> list[BasketMap]:
    """``files`` inputs of ``entries`` entries: branch ``a`` 4 bytes an entry, ``b`` 8, one
    basket each, compressed to half, 4,000-byte buffers, the tree's AutoFlush ``autoflush``."""
    maps = []
    for i in range(files):
        ka, kb = basket_keylen("a", "T", 100), basket_keylen("b", "T", 100)
        na, nb = ka + 2 * entries, kb + 4 * entries
        m = synthetic_map([("a", 100, na, 0, entries), ("b", 100 + na, nb, 0, entries)],
                          entries=entries, tree="T", path=f"f{i}")
        branches = (replace(m.branches[0], uncompressed_bytes=ka + 4 * entries,
                            basket_size=4000),
                    replace(m.branches[1], uncompressed_bytes=kb + 8 * entries,
                            basket_size=4000))
        maps.append(replace(m, branches=branches, autoflush=autoflush))
    return maps


def test_optimized_merge_follows_the_rule_by_hand() -> None:
    m = optimized_merge(two_branch_files())
    # the output keys are 64-bit: 34 + "TBasket" 8 + "a" 2 + "T" 2 + 19 = 65 bytes.
    # Before the first flush (entry 600) the 4,000-byte buffers hold (4000 - 65 - 4) / 4 ->
    # 983 entries of a and (4000 - 65 - 8) / 8 -> 491 of b; at 600 the buffers become 2,560
    # and 5,120 bytes (test above): 623 and 631 entries, more than a cluster of 600.
    # Baskets close at every cluster (600, 1200, ...) and at the first input's end (1000).
    assert m.clusters.tolist() == [0, 600, 1200, 1800, 2400, 3000] and m.autoflush == 600
    a, b = m.branches
    assert a.entries.tolist() == [0, 600, 1000, 1200, 1800, 2400, 3000]
    assert b.entries.tolist() == [0, 491, 600, 1000, 1200, 1800, 2400, 3000]
    assert (a.basket_size, b.basket_size) == (2560, 5120)
    # each basket: its key and its payload at the measured ratio (half)
    assert a.nbytes.tolist()[:2] == [65 + 600 * 2, 65 + 400 * 2]
    # written in the order they close (b's first basket, at 491, comes first)
    flat = m.flat()
    assert flat["branch"][:3].tolist() == [1, 0, 1]
    assert np.all(np.diff(flat["seek"]) > 0)


def test_a_tree_that_never_flushes_keeps_its_buffers() -> None:
    # ROOT's default AutoFlush (30 MB) never reached: no resizing, one estimated cluster
    m = optimized_merge(two_branch_files(autoflush=-30_000_000))
    assert m.autoflush == -30_000_000 and m.cluster_source == "estimated"
    assert m.clusters.tolist() == [0, 3000]
    a, b = m.branches
    assert (a.basket_size, b.basket_size) == (4000, 4000)
    assert a.entries.tolist() == [0, 983, 1000, 1983, 2966, 3000]
    # with the buffers unknown, ROOT's default 32,000 bytes is assumed
    unknown = [replace(x, branches=tuple(replace(y, basket_size=0) for y in x.branches))
               for x in two_branch_files(autoflush=-30_000_000)]
    assert optimized_merge(unknown).branches[0].basket_size == 32_000


def test_duplicate_branch_names_stay_apart() -> None:
    # split objects repeat member names (two ``items``): each keeps its own baskets
    # 4 and 8 bytes an entry behind 63-byte keys (the names the map was made with)
    m = synthetic_map([("i0", 100, 463, 0, 100), ("i1", 563, 863, 0, 100)], entries=100)
    m = replace(m, branches=tuple(replace(b, name="items", basket_size=300)
                                  for b in m.branches), autoflush=-30_000_000)
    out = optimized_merge([m, m])
    # 300-byte buffers behind 74-byte keys: (300 - 74 - 4) / 4 -> 56 and (300 - 74 - 8) / 8
    # -> 28 entries
    assert [b.entries.tolist()[:3] for b in out.branches] == [[0, 56, 100], [0, 28, 56]]


def test_c001_drops_its_layout_caveat_where_the_buffers_are_known() -> None:
    from test_codec_replay import _zlib_context, flat_file

    from hep_advisor.rules.codec import buffers_known, layout_caveat
    from hep_advisor.rules.compression import compression_rule

    regular = tuple(flat_file(f"f{i}", branches=4, size=250_000, flush=250) for i in range(3))
    assert not buffers_known(regular)  # maps without fBasketSize: the caveat stays
    assert layout_caveat(_zlib_context(regular, "uproot.iterate")) is not None
    known = tuple(replace(m, branches=tuple(replace(b, basket_size=32_000) for b in m.branches),
                          autoflush=250) for m in regular)
    assert buffers_known(known)
    ctx = _zlib_context(known, "uproot.iterate")
    assert layout_caveat(ctx) is None
    rec = compression_rule(ctx)
    if rec is not None and ctx.baseline.workers == 1:
        assert any("OptimizeBaskets at the first flush" in x for x in rec.assumptions)


@pytest.mark.root
def test_the_rule_against_root_hadd(tmp_path: Path) -> None:
    pytest.importorskip("ROOT")
    from hep_advisor.demo.root_writer import hadd_path
    from hep_advisor.probes.basketmap import read_basket_map
    from testbench.rootwriter import Layout, write_mixed_root

    layout = Layout(scalars=(("x", "F"), ("y", "D"), ("n", "I")), vectors=("v",),
                    collections=(("J", 2.0, (("pt", "F"),)),), auto_flush=300,
                    basket_size=3000)
    write_mixed_root(str(tmp_path), 2, 700, layout, 101, tag="t_hadd_rule")
    files = sorted(tmp_path.glob("part_*.root"))
    out = tmp_path / "merged.root"
    subprocess.run([hadd_path(), "-O", "-f101", str(out), *map(str, files)], check=True,
                   capture_output=True)
    maps = [read_basket_map(str(p), "Events") for p in files]
    real = read_basket_map(str(out), "Events")
    model = optimized_merge(maps)
    assert real.clusters.tolist() == model.clusters.tolist() == [0, 300, 600, 900, 1200, 1400]
    for r, m in zip(real.branches, model.branches, strict=True):
        if not r.entry_offset_len:  # fixed-size entries: ROOT's cuts exactly
            assert r.entries.tolist() == m.entries.tolist(), r.name
            assert r.basket_size == m.basket_size, r.name
    assert model.baskets == pytest.approx(real.baskets, rel=0.1)
    assert model.basket_bytes == pytest.approx(real.basket_bytes, rel=0.1)
