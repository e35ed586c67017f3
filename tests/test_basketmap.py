"""Basket maps: metadata only, compact arrays, a JSON-friendly summary."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import uproot

from helpers import write_flat
from hep_advisor.probes.basketmap import (
    BasketMap,
    Region,
    basket_keylen,
    read_basket_map,
    synthetic_map,
)


def interleaved() -> BasketMap:
    # two branches, baskets alternating on disk: a0 b0 a1 b1
    return synthetic_map(
        [
            ("a", 100, 50, 0, 10),
            ("a", 200, 50, 10, 20),
            ("b", 150, 50, 0, 10),
            ("b", 250, 50, 10, 20),
        ],
        entries=20,
    )


def test_synthetic_map_basics() -> None:
    m = interleaved()
    assert [b.name for b in m.branches] == ["a", "b"]
    a = m.branch("a")
    assert a.baskets == 2 and a.entries.tolist() == [0, 10, 20]
    assert a.baskets_for(5, 12).tolist() == [0, 1]
    assert a.baskets_for(10, 20).tolist() == [1]
    assert a.basket_at(9) == 0 and a.basket_at(10) == 1 and a.basket_at(20) == -1
    flat = m.flat()
    assert flat["seek"].tolist() == [100, 150, 200, 250]
    assert flat["branch"].tolist() == [0, 1, 0, 1]
    assert m.select(["b"]) == [m.branch("b")]
    with pytest.raises(KeyError):
        m.select(["nope"])


def test_summary_interleaving_and_json() -> None:
    s = interleaved().summary()
    json.dumps(s)
    assert s["baskets"] == 4 and s["branches"] == 2 and s["basket_bytes"] == 200
    assert s["same_branch_neighbours"] == 0.0  # fully interleaved
    assert s["contiguous_neighbours"] == 1.0
    assert s["basket_size_bytes"]["p50"] == 50
    grouped = synthetic_map(
        [("a", 0, 10, 0, 1), ("a", 10, 10, 1, 2), ("b", 20, 10, 0, 1), ("b", 40, 10, 1, 2)],
        entries=2,
    ).summary()
    assert grouped["same_branch_neighbours"] == pytest.approx(2 / 3)
    assert grouped["contiguous_neighbours"] == pytest.approx(2 / 3)


def test_keylen_layout() -> None:
    # fixed 26 + "TBasket" 8 + "pt" 3 + "Events" 7 + basket header 19
    assert basket_keylen("pt", "Events", 1000) == 63
    assert basket_keylen("pt", "Events", 1000, big=True) == 71
    assert basket_keylen("pt", "Events", 2**31) == 71


def test_read_map_matches_uproot(tmp_path: Path) -> None:
    path = write_flat(tmp_path / "f.root", entries=3000, branches=4, chunks=3)
    m = read_basket_map(str(path))
    assert m.tree == "t" and m.entries == 3000 and len(m.branches) == 4
    with uproot.open(path) as f:
        t = f["t"]
        for b in m.branches:
            ub = t[b.name]
            n = int(ub.member("fWriteBasket"))
            assert b.baskets == n == 3
            assert b.seek.dtype == np.int64 and b.nbytes.dtype == np.int32
            assert b.seek.tolist() == list(ub.member("fBasketSeek")[:n])
            assert b.nbytes.tolist() == list(ub.member("fBasketBytes")[:n])
            assert b.entries.tolist() == list(ub.member("fBasketEntry")[: n + 1])
            # derived key lengths equal the keys on disk
            assert [int(x) for x in b.keylen] == [ub.basket_key(i).fKeylen for i in range(n)]
        key = f.key("t")
        tree = m.region("tree")
        assert tree == Region("tree", key.fSeekKey, key.fNbytes)
    assert m.uproot_streamers is False  # uproot writes the versions it predefines
    assert m.clusters[0] == 0 and m.clusters[-1] == 3000
    s = m.summary()
    json.dumps(s)
    assert s["baskets"] == 12 and s["file_bytes"] == path.stat().st_size
    assert set(s["regions"]) >= {"header", "keys", "tree"}
