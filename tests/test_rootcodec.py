"""Compression as ROOT writes it (probes.readtests.rootcodec): LZ4 from level 4 in LZ4's
high-compression mode, the other codecs as uproot's; checked against ROOT's own writer."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
import uproot

from hep_advisor.probes.readtests.conversion import _uproot_compression
from hep_advisor.probes.readtests.decoders import inflater
from hep_advisor.probes.readtests.recompress import Payload, basket_payloads, recompress
from hep_advisor.probes.readtests.rootblocks import collect_baskets, split_blocks
from hep_advisor.probes.readtests.rootcodec import root_codec


def _payloads() -> list[Payload]:
    rng = np.random.default_rng(7)  # small integers: compressible, as many branches are
    return [Payload(rng.integers(0, 40, 4000).astype(np.int32).tobytes(), 0)
            for _ in range(8)]


def test_lz4_from_level_4_is_the_high_compression_mode() -> None:
    pays = _payloads()
    fast = recompress(pays, "LZ4", 1)
    hc = recompress(pays, "LZ4", 4)
    assert hc.factor is not None and fast.factor is not None
    assert hc.factor > 1.1 * fast.factor  # uproot's LZ4(4) compresses as LZ4(1) does
    import uproot.compression as uc
    assert len(uc.compress(pays[0].data, uproot.LZ4(4))) == \
        len(uc.compress(pays[0].data, uproot.LZ4(1)))
    # the blocks are ordinary LZ4 blocks: uproot reads them back
    out = uc.compress(pays[0].data, root_codec("LZ4", 4))
    parsed = split_blocks(bytes(out))
    assert parsed is not None and parsed[0] == "LZ4"
    assert b"".join(inflater("LZ4")(b) for b in parsed[1]) == pays[0].data
    assert type(root_codec("ZSTD", 5)) is uproot.ZSTD
    assert type(root_codec("LZ4", 3)) is uproot.LZ4
    assert type(root_codec("LZ4", 4)) is type(root_codec("LZ4", 9))  # one class
    # the conversion test's writer: ROOT's settings (below 100: ZLIB at that level)
    assert _uproot_compression(404).compress(pays[0].data) == \
        root_codec("LZ4", 4).compress(pays[0].data)
    assert _uproot_compression(6) == uproot.ZLIB(6)
    assert _uproot_compression(None) is None and _uproot_compression(301) is None


def test_uproot_writes_a_file_with_it(tmp_path: Path) -> None:
    path = tmp_path / "hc.root"
    x = np.repeat(np.arange(500), 20).astype(np.float64)
    with uproot.recreate(path, compression=root_codec("LZ4", 4)) as f:
        f.mktree("t", {"x": "f8"})
        f["t"].extend({"x": x})
    f = uproot.open(path)
    assert f.file.compression == uproot.LZ4(4)
    branch = f["t"]["x"]
    assert np.array_equal(branch.array(library="np"), x)


@pytest.mark.root
def test_the_sample_matches_roots_own_lz4_4(tmp_path: Path) -> None:
    """ROOT rewrites a file with ``hadd -O -f404``; its baskets, decompressed and compressed
    again by the recompressed sample's codec, take ROOT's bytes exactly."""
    pytest.importorskip("ROOT")
    from hep_advisor.demo.root_writer import hadd_path
    from testbench.rootwriter import Layout, write_mixed_root

    layout = Layout(scalars=(("x", "F"), ("n", "I")), vectors=("v",),
                    collections=(("J", 2.0, (("pt", "F"),)),), auto_flush=300,
                    basket_size=3000)
    write_mixed_root(str(tmp_path), 1, 3000, layout, 101, tag="t_rootcodec")
    src = sorted(tmp_path.glob("part_*.root"))
    out = tmp_path / "lz4.root"
    subprocess.run([hadd_path(), "-O", "-f404", str(out), *map(str, src)], check=True,
                   capture_output=True)
    pool = collect_baskets([str(out)], ["Events"], sample_bytes=10**8).pools["LZ4"]
    pays = basket_payloads(pool, 10**8)
    stored = sum(p.stored_bytes for p in pays)
    assert recompress(pays, "LZ4", 4).stored_bytes == stored
    assert recompress(pays, "LZ4", 1).stored_bytes > 1.05 * stored
