"""The codec's fixed cost per basket decompressed: measured on the dataset's own bytes
(``hep_advisor.probes.readtests.blockcost``), and what it changes in a replay (``CpuCosts``): a
layout of larger baskets decompresses faster per MB; today's layout, where the rate was measured, is
unchanged.  Tiny synthetic data, exact figures where the arithmetic is the model's."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from test_replay_predict import one_file

from hep_advisor.models.replay import LocalDevice
from hep_advisor.models.replay.cpucosts import CpuCosts
from hep_advisor.models.replay.predict import merge_prediction
from hep_advisor.models.replay.rewrite import recoded_costs
from hep_advisor.probes.readtests.blockcost import JOIN, block_call_s
from hep_advisor.probes.readtests.recompress import Payload


def _payloads(n: int, size: int) -> list[Payload]:
    rng = np.random.default_rng(5)
    # floats with few distinct values: compressible, as physics branches are
    return [Payload(rng.integers(0, 50, size // 4).astype(">f4").tobytes(), size // 3)
            for _ in range(n)]


def test_block_cost_is_measured_on_the_bytes_and_needs_enough_baskets() -> None:
    c0 = block_call_s(_payloads(4 * JOIN, 3000), "ZSTD", 5)
    assert c0 is not None and 0.0 <= c0 < 1e-3
    # fewer baskets than two joined blocks: nothing to compare
    assert block_call_s(_payloads(JOIN, 3000), "ZSTD", 5) is None
    # out of time before the second form: not measured
    assert block_call_s(_payloads(4 * JOIN, 3000), "ZSTD", 5, deadline=0.0,
                        clock=lambda: 1.0) is None


def test_the_fixed_cost_follows_the_baskets_per_mb() -> None:
    c = CpuCosts(open_s=0.0, decompress_mb_per_s=100.0, decompress_basket_s=10e-6,
                 basket_density=100.0)
    # 20 baskets in 1 MB where the rate held 100: 80 calls fewer, 10 µs each
    assert c.decompress_fix_s(20, 1.0) == pytest.approx(-0.8e-3)
    assert c.decompress_fix_s(100, 1.0) == pytest.approx(0.0)
    assert c.decompress_fix_s(300, 1.0) == pytest.approx(2e-3)
    # never more than the rate's whole time per MB is fixed: 1/(100 MB/s * 100 per MB)
    big = replace(c, decompress_basket_s=1.0)
    assert big.decompress_fix_s(0, 1.0) == pytest.approx(-1.0 / 100.0)
    # not counted without a density, a cost or a rate
    assert replace(c, basket_density=0.0).decompress_fix_s(20, 1.0) == 0.0
    assert replace(c, decompress_mb_per_s=0.0).decompress_fix_s(20, 1.0) == 0.0
    # a rewrite's codec: its rate held at today's baskets, size_factor times the bytes
    r = recoded_costs(c, 500.0, 0.5, 2e-6)
    assert (r.decompress_basket_s, r.basket_density) == (2e-6, 200.0)
    assert recoded_costs(c, 500.0, 0.5).decompress_basket_s == 0.0


def test_a_merge_into_larger_baskets_saves_the_calls_and_today_is_unchanged() -> None:
    maps = [one_file(f"/s{i}.root", branches=10, baskets=1, size=4_000) for i in range(8)]
    dev = LocalDevice(500.0, 0.0001, 128, warm=True)
    base = CpuCosts(open_s=0.01, call_s=0.002, decompress_mb_per_s=50.0, extra_baskets=True)
    fixed = base.with_decompress_basket(20e-6)
    for optimise in (False, True):
        plain = merge_prediction(maps, 8, 8, dev, base, optimise=optimise)
        with_c0 = merge_prediction(maps, 8, 8, dev, fixed, optimise=optimise)
        # today's layout holds the rate's own density: its time is the same
        assert with_c0.before.cpu_s == pytest.approx(plain.before.cpu_s)
        b, a = with_c0.after, plain.after
        per_mb_before = with_c0.before.baskets / with_c0.before.compressed_mb
        expected = 20e-6 * (b.baskets - b.compressed_mb * per_mb_before)
        assert b.cpu_s - a.cpu_s == pytest.approx(expected)
        if optimise:  # hadd -O writes fewer, larger baskets: the merge gains more
            assert b.baskets < with_c0.before.baskets
            assert with_c0.speedup > plain.speedup
        else:  # a fast merge keeps the baskets: nothing changes
            assert with_c0.speedup == pytest.approx(plain.speedup)
