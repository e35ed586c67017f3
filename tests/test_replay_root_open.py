"""ROOT's open reads an uncompressed StreamerInfo record twice; the replay must too."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hep_advisor.models.replay.readers import root_open, root_streamers_uncompressed
from hep_advisor.probes.basketmap import read_basket_map

uproot = pytest.importorskip("uproot")


def _write_uproot(path: Path) -> None:
    with uproot.recreate(path, compression=uproot.ZLIB(1)) as f:
        f.mktree("t", {"x": "f8"})
        f["t"].extend({"x": np.arange(500.0)})


def _write_root(path: Path) -> None:
    root = pytest.importorskip("ROOT")
    import array

    f = root.TFile(str(path), "RECREATE")
    t = root.TTree("t", "t")
    x = array.array("d", [0.0])
    t.Branch("x", x, "x/D")
    for i in range(500):
        x[0] = i
        t.Fill()
    t.Write()
    f.Close()


def _streamer_reads(path: Path) -> int:
    m = read_basket_map(str(path), "t")
    info = m.region("streamers")
    assert info is not None
    return sum(1 for r in root_open(m) if (r.offset, r.size) == (info.offset, info.size))


def test_uproot_written_streamers_read_twice(tmp_path: Path) -> None:
    path = tmp_path / "up.root"
    _write_uproot(path)
    assert root_streamers_uncompressed(read_basket_map(str(path), "t"))
    assert _streamer_reads(path) == 2


def test_root_written_streamers_read_once(tmp_path: Path) -> None:
    path = tmp_path / "rt.root"
    _write_root(path)
    assert not root_streamers_uncompressed(read_basket_map(str(path), "t"))
    assert _streamer_reads(path) == 1
