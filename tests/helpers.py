"""Helpers the tests share (importable as ``helpers``: pytest puts tests/ on the path)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np


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

