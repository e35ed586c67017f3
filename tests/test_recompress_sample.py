"""The recompressed sample behind C001's size change: a spread of the dataset's baskets (not the
first branches of a file), and the size change's standard error over them."""

from __future__ import annotations

from pathlib import Path

import pytest

from hep_advisor.probes.dataset import probe_dataset
from hep_advisor.probes.readtests import decompress
from hep_advisor.probes.readtests.decompress import measure_decompression
from hep_advisor.probes.readtests.recompress import ratio_sd
from hep_advisor.probes.readtests.rootblocks import Block, Pool
from hep_advisor.probes.readtests.runner import Session


def test_ratio_sd_is_the_ratio_estimators() -> None:
    pairs = [(100, 120), (200, 220), (50, 70), (150, 150)]
    sx, sy, n = 500, 560, 4
    r = sy / sx
    ss = sum((y - r * x) ** 2 for x, y in pairs)
    want = (ss / (n * (n - 1))) ** 0.5 / (sx / n) / r
    assert ratio_sd(pairs) == pytest.approx(want)
    # every basket changing alike: no spread
    assert ratio_sd([(100, 130), (200, 260), (10, 13)]) == pytest.approx(0.0, abs=1e-12)
    assert ratio_sd([(100, 130)]) is None and ratio_sd([]) is None
    assert ratio_sd([(0, 5), (0, 7)]) is None


def _pool(n: int) -> Pool:
    p = Pool("ZLIB")
    for i in range(n):  # basket i: i % 3 + 1 blocks, each tagged with i
        blocks = [Block(bytes([i]), 10 + i) for _ in range(i % 3 + 1)]
        p.add(blocks, 9 * len(blocks), (10 + i) * len(blocks))
    return p


def test_reorder_keeps_every_basket_whole() -> None:
    p = _pool(10)
    order = [3, 0, 9, 1, 2, 8, 4, 5, 7, 6]
    p.reorder(order)
    assert p.baskets == 10
    start = 0
    for i, end in zip(order, p.basket_ends, strict=True):
        assert [b.data for b in p.blocks[start:end]] == [bytes([i])] * (i % 3 + 1)
        start = end
    p.truncate(3)
    assert {b.data[0] for b in p.blocks} == {3, 0, 9}
    with pytest.raises(ValueError):
        p.reorder([0, 1])


def test_the_sample_is_drawn_before_the_pilot_cuts_the_pool(
        tiny_demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pilot keeps only what its timing needs (here forced to one basket); the sample
    recompressed is drawn from the whole pool before it, and reports its standard error."""
    real = decompress._pilot

    def one_basket(pool, decode, target_s, clock):  # type: ignore[no-untyped-def]
        real(pool, decode, target_s, clock)
        pool.truncate(1)

    monkeypatch.setattr(decompress, "_pilot", one_basket)
    path = str(tiny_demo / "flat" / "pythia_zlib1.root")
    points = measure_decompression(Session(60), probe_dataset([path]), share_s=1.0,
                                   candidates=("ZSTD",))
    own = next(p for p in points if p.source == "dataset")
    rec = next(p for p in points if p.source == "recompressed")
    assert own.baskets == 1
    assert rec.baskets > 1
    assert rec.size_change_sd is not None and rec.size_change_sd >= 0
