"""C001 replays its printed command: the rewritten layout (merged by ``hadd -O``, baskets
resized by the new codec) read by the program's reader, with the new codec's decompression
rate.  Tiny synthetic basket maps; exact where the arithmetic allows."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from helpers import clustered_map
from hep_advisor.models.replay import LocalDevice
from hep_advisor.models.replay.cpucosts import CpuCosts
from hep_advisor.models.replay.predict import Reader, layout_time
from hep_advisor.models.replay.rewrite import (
    recoded_costs,
    recompressed,
    recompression_prediction,
    rewritten_layout,
)
from hep_advisor.probes.basketmap import BasketMap


def flat_file(path: str, entries: int = 1000, branches: int = 10, size: int = 3000,
              flush: int | None = None) -> BasketMap:
    """One basket per branch per ``flush`` entries (default: one per branch), ``size`` bytes
    each (key included), then the keys list and the TTree record."""
    m = clustered_map(path, entries, branches, flush or entries, size)
    # uncompressed twice the compressed: a factor of 2
    return replace(m, branches=tuple(replace(b, uncompressed_bytes=2 * b.compressed_bytes)
                                     for b in m.branches))


NO_IO = LocalDevice(1e9, 0.0, read_ahead_kb=128)
DISK = LocalDevice(70, 0.008, read_ahead_kb=128)


def test_recompressed_scales_payloads_and_repacks() -> None:
    m = flat_file("f", size=3000)
    r = recompressed(m, 1.5)
    for old, new in zip(m.branches, r.branches, strict=True):
        payload_old = old.nbytes - old.keylen
        payload_new = new.nbytes - new.keylen
        assert np.array_equal(payload_new, np.round(payload_old * 1.5).astype(int))
        assert np.array_equal(new.entries, old.entries)
        assert new.uncompressed_bytes == old.uncompressed_bytes
        assert new.compressed_bytes - old.compressed_bytes == int((new.nbytes - old.nbytes).sum())
    flat = r.flat()
    ends = flat["seek"][:-1] + flat["nbytes"][:-1]
    assert np.array_equal(flat["seek"][1:], ends)  # packed, in the same order
    assert flat["seek"][0] == m.flat()["seek"][0]
    grown = r.basket_bytes - m.basket_bytes
    assert grown > 0
    assert r.region("header") == m.region("header")
    old_keys, new_keys = m.region("keys"), r.region("keys")
    assert old_keys is not None and new_keys is not None
    assert new_keys.offset == old_keys.offset + grown
    assert r.file_bytes == m.file_bytes + grown
    with pytest.raises(ValueError):
        recompressed(m, 0.0)


def test_the_merge_closes_clusters_on_the_new_bytes() -> None:
    # 10 files of 20 branches x 120 kB: 24 MB of baskets, under ROOT's 30 MB AutoFlush;
    # twice the bytes with the new codec: two clusters, as hadd -O writes them
    maps = [flat_file(f"f{i}", entries=2000, branches=20, size=120_000) for i in range(10)]
    same, scale, outputs = rewritten_layout(maps, 10, 1.0)
    assert (len(same), scale, outputs) == (1, 1.0, 1)
    assert same[0].entries == 20_000 and len(same[0].clusters) - 1 == 1
    bigger = rewritten_layout(maps, 10, 2.0)[0][0]
    assert len(bigger.clusters) - 1 == 2
    zipped = sum(b.compressed_bytes for b in bigger.branches)
    assert zipped == pytest.approx(2 * sum(b.compressed_bytes for m in maps
                                           for b in m.branches), rel=0.02)
    # a sample of maps stands for more files: replayed as one merge of them in turn
    sampled, scale, _ = rewritten_layout(maps[:2], 10, 1.0)
    assert sampled[0].entries == 20_000 and scale == 1.0
    alone, scale, outputs = rewritten_layout(maps[:2], 10, 1.0, merge=False)
    assert len(alone) == 2 and scale == 5.0 and outputs == 10


def test_recoded_costs() -> None:
    root = CpuCosts(open_s=0.1, decompress_mb_per_s=20.0, process_mb_per_s=100.0)
    c = CpuCosts(open_s=0.1, call_s=0.01, basket_s=1e-5, decompress_mb_per_s=20.0,
                 process_mb_per_s=100.0, root=root)
    r = recoded_costs(c, 1000.0, 1.5)
    assert r.decompress_mb_per_s == 1000.0 and r.process_mb_per_s == pytest.approx(150.0)
    assert (r.open_s, r.call_s, r.basket_s) == (c.open_s, c.call_s, c.basket_s)
    assert r.root is not None and r.root.decompress_mb_per_s == 1000.0
    assert r.root.process_mb_per_s == pytest.approx(150.0)
    # uncompressed data stays uncompressed
    assert recoded_costs(replace(c, decompress_mb_per_s=0.0), 1000.0, 1.0) \
        .decompress_mb_per_s == 0.0


def test_the_codec_alone_is_the_decompression_ratio() -> None:
    """Decompression only, no I/O, no fixed costs, same bytes, files kept: the speed-up is
    the ratio of the rates."""
    maps = [flat_file(f"f{i}") for i in range(3)]
    costs = CpuCosts(open_s=0.0, decompress_mb_per_s=10.0)
    p = recompression_prediction(maps, 3, NO_IO, costs, size_factor=1.0,
                                 decompress_mb_per_s=1000.0, reader=Reader(step="100 MB"),
                                 merge=False)
    assert p.speedup == pytest.approx(100.0, rel=0.02)
    # no uncertainty given; where the bytes fall (ALIGNMENT) moves no I/O on this device
    assert p.low == pytest.approx(p.speedup, rel=1e-3)
    assert p.high == pytest.approx(p.speedup, rel=1e-3)
    assert p.outputs == 3 and not p.merged
    # twice the bytes at the new rate: half the gain (the rest unchanged)
    q = recompression_prediction(maps, 3, NO_IO, costs, size_factor=2.0,
                                 decompress_mb_per_s=1000.0, reader=Reader(step="100 MB"),
                                 merge=False)
    assert q.speedup == pytest.approx(50.0, rel=0.02)


def test_the_command_holds_the_merge_and_its_range_the_rates() -> None:
    maps = [flat_file(f"f{i}") for i in range(4)]
    costs = CpuCosts(open_s=0.2, call_s=0.01, decompress_mb_per_s=10.0,
                     overlap=1.0, overlap_range=(0.5, 1.0))
    reader = Reader(step="100 MB")
    kw = dict(size_factor=1.6, decompress_mb_per_s=1000.0, reader=reader)
    alone = recompression_prediction(maps, 40, DISK, costs, merge=False, **kw)  # type: ignore[arg-type]
    merged = recompression_prediction(maps, 40, DISK, costs, merge=True, **kw)  # type: ignore[arg-type]
    assert merged.merged and merged.outputs == 1
    # 40 opens become 2 (40 files replayed as merges of 32 and scaled): much faster
    assert merged.speedup > 1.5 * alone.speedup
    assert merged.before.total_s == pytest.approx(alone.before.total_s)
    wide = recompression_prediction(maps, 40, DISK, costs, merge=True, rate_sd=(0.3, 0.1),
                                    size_range=(1.3, 1.6), device_sd=(0.1, 0.2),
                                    **kw)  # type: ignore[arg-type]
    assert wide.speedup == pytest.approx(merged.speedup)
    assert wide.low < merged.low <= merged.speedup <= merged.high < wide.high
    # today's time is the plain replay of today's files
    plain = layout_time(maps, DISK, costs, scale=10.0, reader=reader)
    assert merged.before.total_s == pytest.approx(plain.total_s)


def test_keys_keep_their_length() -> None:
    m = flat_file("f")
    r = recompressed(m, 0.5)
    for old, new in zip(m.branches, r.branches, strict=True):
        assert np.array_equal(new.keylen, old.keylen)
        assert int(new.nbytes.min()) > int(new.keylen.max())  # a payload is left


def _zlib_context(maps: tuple[BasketMap, ...], reader: str | None):
    """The fixture advice's rules context, its data taken as ZLIB decompressing at 0.5 MB/s
    (C001 fires), with ``maps`` to replay and the program's ``reader``."""
    from tui_helpers import fixture_advice

    from hep_advisor.probes.readtests.readers import parse_reader
    from hep_advisor.rules import Context
    from hep_advisor.rules.verdict import verdict

    a = fixture_advice(label="small")
    assert a.fitted is not None and a.baseline is not None and a.model is not None
    b = replace(a.baseline, params=replace(a.baseline.params, decompress_mb_per_s=0.5))
    ds = a.dataset
    tree = max(ds.trees, key=lambda t: t.compressed_bytes)
    zlib = replace(tree, compression=replace(tree.compression, algorithm="ZLIB"))
    ds = replace(ds, trees=tuple(zlib if t is tree else t for t in ds.trees))
    return Context(site=a.site, dataset=ds, calibration=a.calibration, model=a.fitted,
                   baseline=b, summary=a.model, verdict=verdict(b), label=a.label,
                   inputs=a.inputs, basket_maps=maps,
                   reader=parse_reader(reader) if reader else None)


def test_c001_shows_its_printed_command_replayed() -> None:
    from hep_advisor.rules.codec import codec_replay
    from hep_advisor.rules.compression import compression_rule

    # 3 files of 4 branches x 1 MB in 32 kB baskets (about the size a rewrite gives them, so
    # that the baskets' own cost does not decide): decompressing them is a good part of the
    # replayed time
    maps = tuple(flat_file(f"f{i}", branches=4, size=32_000, flush=32) for i in range(3))
    ctx = _zlib_context(maps, "uproot.iterate")
    tree = ctx.tree
    if ctx.baseline.workers != 1 or tree is None:
        pytest.skip("the replay is of one worker")
    plain = compression_rule(_zlib_context((), "uproot.iterate"))
    rec = compression_rule(ctx)
    assert rec is not None and plain is not None
    cand = "LZ4" if "LZ4" in rec.title else "ZSTD"
    names = {e.name for e in rec.evidence}
    assert "replayed time now / rewritten" in names
    assert "replayed time now / rewritten" not in {e.name for e in plain.evidence}
    # the figure is the command's replay, with the program's reader
    new = replace(ctx.baseline)  # the scenario's size and rate, as the rule takes them
    from hep_advisor.models import scenarios as sc

    applied = sc.compression(cand).apply(new)
    rep = codec_replay(ctx, cand, applied.mb_per_work, applied.params.decompress_mb_per_s)
    assert rep is not None and rep.reader == Reader(step="100 MB") and rep.reader_known
    assert rec.predicted_speedup == round(rep.command.speedup, 3)
    assert rec.speedup_low <= rec.predicted_speedup <= rec.speedup_high
    cmd = rec.actions[0].command or ""
    if tree.files > 1:  # the command merges: the title says so, the option is the codec alone
        assert f"merging the {tree.files} files into one" in rec.title
        assert "hadd -O -f" in cmd and "recompressed.root" in cmd
        assert rep.merge_only is not None and rep.codec_only is not None
        assert [o.predicted_speedup for o in rec.options] == [round(rep.codec_only.speedup, 3)]
        assert "M001" in rec.summary
    else:
        assert "recompressed.root" in cmd and "merging" not in rec.title
    # a dataset too large for one file: each file recompressed alone, and so replayed
    huge = replace(tree, compressed_bytes=20_000_000_000)
    big = replace(ctx, dataset=replace(ctx.dataset, trees=tuple(
        huge if t is tree else t for t in ctx.dataset.trees)))
    alone = compression_rule(big)
    assert alone is not None and "merging" not in alone.title and not alone.options
    if tree.files > 1:
        assert "recompressed_" in (alone.actions[0].command or "")
        each = codec_replay(big, cand, applied.mb_per_work, applied.params.decompress_mb_per_s)
        assert each is not None and not each.command.merged and each.merge_only is None
        assert alone.predicted_speedup == round(each.command.speedup, 3)
    # no reader given: the event loop's reader is replayed
    loop = codec_replay(_zlib_context(maps, None), cand, applied.mb_per_work,
                        applied.params.decompress_mb_per_s)
    assert loop is not None and loop.reader == Reader() and not loop.reader_known


def test_an_entry_autoflush_is_seen_and_said() -> None:
    from hep_advisor.rules.codec import entry_autoflush, layout_caveat
    from hep_advisor.rules.compression import compression_rule

    regular = tuple(flat_file(f"f{i}", branches=4, size=250_000, flush=250) for i in range(3))
    assert entry_autoflush(regular) == 250
    assert entry_autoflush(tuple(flat_file(f"g{i}") for i in range(2))) is None  # one cluster
    mixed = (regular[0], flat_file("h", flush=200))
    assert entry_autoflush(mixed) is None
    ctx = _zlib_context(regular, "uproot.iterate")
    caveat = layout_caveat(ctx)
    assert caveat is not None and "250 entries" in caveat
    rec = compression_rule(ctx)
    if ctx.baseline.workers == 1:
        assert rec is not None and caveat in rec.assumptions
    assert layout_caveat(_zlib_context(tuple(flat_file(f"g{i}") for i in range(2)), None)) \
        is None


def test_the_range_holds_where_the_bytes_fall() -> None:
    """The rewritten file's bytes against the read-ahead windows: the layout replayed with its
    baskets a little smaller and larger (ALIGNMENT) widens the range around the same central
    figure, on a disk; the parts' figures (``alignment=False``) keep the plain range."""
    maps = [flat_file(f"f{i}", entries=1000, branches=40, size=5000, flush=100)
            for i in range(3)]
    costs = CpuCosts(open_s=0.01, decompress_mb_per_s=100.0)
    kw = dict(size_factor=1.0, decompress_mb_per_s=100.0, reader=Reader(step="100 MB"))
    plain = recompression_prediction(maps, 3, DISK, costs, alignment=False, **kw)  # type: ignore[arg-type]
    aligned = recompression_prediction(maps, 3, DISK, costs, **kw)  # type: ignore[arg-type]
    assert plain.low == plain.high == plain.speedup  # no uncertainty given
    assert aligned.speedup == plain.speedup
    assert aligned.low < plain.low and aligned.high > plain.high
    # a scan's figure alone: the central one, no range
    scan = recompression_prediction(maps, 3, DISK, costs, interval=False, rate_sd=(0.3, 0.3),
                                    **kw)  # type: ignore[arg-type]
    assert scan.low == scan.high == scan.speedup == plain.speedup


def test_each_size_of_the_range_replays_its_own_layout() -> None:
    # 24 MB of baskets: one cluster at today's size; at twice the bytes ROOT's 30 MB AutoFlush
    # refills every branch's baskets anew, and that end of the range reads that layout
    maps = [flat_file(f"f{i}", entries=2000, branches=20, size=120_000) for i in range(10)]
    costs = CpuCosts(open_s=0.01, call_s=0.001, basket_s=0.005, decompress_mb_per_s=50.0)
    reader = Reader(step=500)
    pred = recompression_prediction(maps, 10, DISK, costs, size_factor=1.0,
                                    decompress_mb_per_s=100.0, reader=reader,
                                    size_range=(1.0, 2.0), alignment=False)
    bigger, scale, _ = rewritten_layout(maps, 10, 2.0)
    assert len(bigger[0].clusters) - 1 == 2
    assert bigger[0].baskets != pred.after.baskets
    after = layout_time(bigger, DISK, recoded_costs(costs, 100.0, 2.0), scale=scale,
                        reader=reader)
    assert pred.low == pytest.approx(min(pred.speedup, pred.before.total_s / after.total_s))
    # not the one-cluster layout's requests scaled (the old corner): other baskets
    from hep_advisor.models.replay.rewrite import resized
    scaled = resized(pred.after, DISK, 2.0).with_costs(recoded_costs(costs, 100.0, 2.0))
    assert after.total_s != pytest.approx(scaled.total_s, rel=0.05)
