"""Helpers the tests share (importable as ``helpers``: pytest puts tests/ on the path)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from hep_advisor.probes.basketmap import BasketMap, Region, synthetic_map


def write_flat(path: Path, entries: int = 100, branches: int = 3, compression: object = None,
               chunks: int = 1) -> Path:
    """A small flat tree ``t`` with ``branches`` float32 branches written by uproot."""
    import uproot

    rng = np.random.default_rng(len(str(path)))
    with uproot.recreate(path, compression=compression) as f:
        f.mktree("t", {f"b{i}": np.float32 for i in range(branches)})
        per = entries // chunks
        for _ in range(chunks):
            f["t"].extend({f"b{i}": np.round(rng.normal(size=per), 2).astype(np.float32)
                           for i in range(branches)})
    return path


def snapshot(directory: Path) -> dict[str, tuple[int, float]]:
    """Every path below ``directory`` with its size and modification time (to prove that
    nothing was written)."""
    out = {}
    for root, dirs, files in os.walk(directory, followlinks=False):
        for name in dirs + files:
            p = os.path.join(root, name)
            st = os.lstat(p)
            out[p] = (st.st_size, st.st_mtime)
    return out



def clustered_map(path: str, entries: int = 1000, branches: int = 40, flush: int = 100,
                  size: int = 3000) -> BasketMap:
    """A synthetic basket map of a file flushed every ``flush`` entries: each cluster holds
    one basket (``size`` bytes, key included) of every branch, so a branch's baskets lie
    ``branches`` baskets apart; then the keys list and the TTree record."""
    header = 100
    rows = []
    seek = header
    for c in range(0, entries, flush):
        for i in range(branches):
            rows.append((f"b{i}", seek, size, c, min(c + flush, entries)))
            seek += size
    regions = (Region("header", 0, header), Region("keys", seek, 50),
               Region("tree", seek + 50, 400), Region("tree_keylen", seek + 50, 40))
    return synthetic_map(rows, entries=entries, path=path, file_bytes=seek + 450,
                         regions=regions, clusters=list(range(0, entries + 1, flush)))
