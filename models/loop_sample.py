"""The engine through the calibration's own event loop: the sample that loop read, replayed.

The calibration's cold event loop with the program's reader times a sample of the dataset: its
first files in order, the last of them cut short where the test's share ended
(:attr:`~hep_advisor.probes.readtests.results.EventLoop.parts`).  The whole job differs from
that sample (every file whole, each file's first reads and opening spread over more entries),
so a per-event rate taken from the sample and carried to the whole job mixes the sample's
difference into the engine's error.  Here the engine replays the sample itself: the same
reader, device and measured CPU terms as the job's replay (:func:`~.reader_baseline.
reader_baseline`), on each part's basket map cut to the entries it read
(:meth:`~hep_advisor.probes.basketmap.BasketMap.head`), opening included, against the loop's
time for its entries plus what its passes leave out and the replay holds, measured: the files'
cold opening (where the loop opens them before its clock starts; the open test's cold figure,
as the whole job's measured baseline adds it) and a run's one-off set-up.  Where a file's
costs fall between its opening and its first reads is thus not the check's business; the
sample's files, entries and partial last file are.  A part whose file has no basket map here
(the replay maps a few files spread over the dataset) is replayed on the map of a file of the
same name, else on another mapped file of the dataset (a stand-in, counted).  Rates are the
sample's compressed MB per second, as the other points of the self-check.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from hep_advisor.probes.basketmap import BasketMap
from hep_advisor.probes.readtests.readers import ReaderSpec, parse_reader

from .reader_baseline import ReaderBaseline, measured_pass_s, reader_baseline
from .selfcheck import LoopSample

if TYPE_CHECKING:
    from hep_advisor.probes.readtests.results import Calibration, EventLoop, LoopPart
    from hep_advisor.probes.results import SiteProfile

    from .scenarios import Baseline


def sample_maps(parts: Sequence[LoopPart], maps: Sequence[BasketMap]
                ) -> tuple[list[BasketMap], int]:
    """Each part's basket map cut to the entries it read, and how many parts stood on
    another file's map.  A part takes the map of its path, else of a file of the same name
    (the calibration read the files elsewhere: a copy, another mount), else the next of the
    maps no part names (in order; all of them where every one is named)."""
    by_path = {os.path.abspath(m.path): m for m in maps}
    by_name: dict[str, BasketMap] = {}
    for m in maps:
        by_name.setdefault(os.path.basename(m.path), m)

    def own(path: str) -> BasketMap | None:
        return by_path.get(os.path.abspath(path)) or by_name.get(os.path.basename(path))

    owned = [own(p.path) for p in parts]
    named = {id(m) for m in owned if m is not None}
    spare = [m for m in maps if id(m) not in named] or list(maps)
    out, stand = [], 0
    for p, found in zip(parts, owned, strict=True):
        if found is None:
            found, stand = spare[stand % len(spare)], stand + 1
        out.append(found.head(p.entries))
    return out, stand


def first_entries(parts: Sequence[LoopPart], entries: int) -> tuple[LoopPart, ...]:
    """The first ``entries`` entries of ``parts`` in order: a pass over the same files that
    stopped sooner (ROOT's loop without its cache, capped in time)."""
    out, left = [], int(entries)
    for p in parts:
        if left <= 0:
            break
        n = min(p.entries, left)
        out.append(replace(p, entries=n))
        left -= n
    return tuple(out)


def _replay(spec: ReaderSpec, parts: Sequence[LoopPart], measured_events_per_s: float,
            rb: ReaderBaseline, maps: Sequence[BasketMap], calibration: Calibration | None,
            site: SiteProfile, baseline: Baseline, branches: Sequence[str] | None,
            algorithm: str | None) -> LoopSample | None:
    cut, stand = sample_maps(parts, maps)
    try:
        again = reader_baseline(spec, cut, len(cut), calibration, site, baseline, branches,
                                algorithm, access_s=rb.access_ms / 1e3)
    except ValueError:
        return None
    if again.seconds <= 0 or again.entries <= 0 or again.compressed_mb <= 0 or \
            again.cold_open_s is None or measured_events_per_s <= 0:
        return None
    measured_s = measured_pass_s(again.entries, measured_events_per_s, again.files,
                                 again.cold_open_s, again.setup_s)
    mb = again.compressed_mb
    return LoopSample(replayed_mb_per_s=mb / again.seconds, measured_mb_per_s=mb / measured_s,
                      entries=int(again.entries), files=len(cut), stand_ins=stand,
                      io_share=min(again.io_s / again.seconds, 1.0))


def replay_loop_sample(spec: ReaderSpec, rb: ReaderBaseline, loop: EventLoop | None,
                       maps: Sequence[BasketMap], calibration: Calibration | None,
                       site: SiteProfile, baseline: Baseline,
                       branches: Sequence[str] | None, algorithm: str | None
                       ) -> LoopSample | None:
    """The loop's cold sample replayed through the device of the job's replay ``rb`` (its
    access time included); ``None`` where the loop did not run this reader cold, did not
    record its parts, or no map is here."""
    if loop is None or loop.reader != spec.text or not loop.parts or not maps:
        return None
    cold = loop.cold
    if cold is None or cold.conditions.cache != "cold" or not cold.median:
        return None
    return _replay(spec, loop.parts, float(cold.median), rb, maps, calibration, site,
                   baseline, branches, algorithm)


#: A ROOT pass over fewer entries than this is too short to check against (the pass without
#: the cache is capped in time, and can end after its first few entries)
MIN_PASS_ENTRIES = 1000


def replay_root_passes(spec: ReaderSpec, rb: ReaderBaseline, calibration: Calibration | None,
                       maps: Sequence[BasketMap], site: SiteProfile, baseline: Baseline,
                       branches: Sequence[str] | None, algorithm: str | None
                       ) -> tuple[tuple[bool, bool, LoopSample], ...]:
    """ROOT's passes with and without TTreeCache (``Calibration.root_cache_on``/``_off``,
    cold) replayed on the loop's first files, as each read them: ``(with the cache, the
    program's own reader, sample)`` for each pass that is not the loop's own cold sample
    again (the pass that ran the program's reader over the whole sample: the loop's pilot).
    The pass's reader is ``GetEntry`` without a cache, or with one of the pass's size; its
    CPU per entry is the loop's (the same entries decompressed and read into the same
    branches: an assumption where the pass's reader is not the program's, said in its
    term)."""
    loop = calibration.event_loop if calibration is not None else None
    if calibration is None or loop is None or loop.reader != spec.text or not loop.parts \
            or not maps:
        return ()
    out = []
    for stats in (calibration.root_cache_on, calibration.root_cache_off):
        if stats is None or stats.cache != "cold" or not stats.events_per_s or \
                stats.entries < MIN_PASS_ENTRIES:
            continue
        # the program's own reader where the pass's cache is as that reader sets it
        own = stats.tree_cache == (spec.kind == "root.ttreecache") and (
            not stats.tree_cache or spec.cache_bytes in (None, stats.cache_bytes))
        pass_spec = spec if own else replace(parse_reader(
            f"root.ttreecache:size={stats.cache_bytes}" if stats.tree_cache and
            stats.cache_bytes else "root.ttreecache" if stats.tree_cache else "root.getentry"),
            loop=spec.loop)
        parts = first_entries(loop.parts, stats.entries)
        if own and sum(p.entries for p in parts) == sum(p.entries for p in loop.parts):
            continue  # the loop's own sample again
        # the loop's measured CPU per entry, for the pass's reader too
        cal = calibration if own else replace(
            calibration, event_loop=replace(loop, reader=pass_spec.text))
        got = _replay(pass_spec, parts, float(stats.events_per_s), rb, maps, cal, site,
                      baseline, branches, algorithm)
        if got is not None:
            out.append((stats.tree_cache, own, got))
    return tuple(out)


__all__ = ["LoopSample", "first_entries", "replay_loop_sample", "replay_root_passes",
           "sample_maps"]
