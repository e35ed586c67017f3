"""The engine through the calibration's own event loop: the sample that loop read, replayed.

The calibration's cold event loop with the program's reader times a sample of the dataset: its
first files in order, the last of them cut short where the test's share ended
(:attr:`~hep_advisor.probes.readtests.results.EventLoop.parts`).  The whole job differs from
that sample (every file whole, each file's first reads and opening spread over more entries),
so a per-event rate taken from the sample and carried to the whole job mixes the sample's
difference into the engine's error.  Here the engine replays the sample itself: the same
reader, device and measured CPU terms as the job's replay (:func:`~.reader_baseline.
reader_baseline`), on each part's basket map cut to the entries it read
(:meth:`~hep_advisor.probes.basketmap.BasketMap.head`), without what the loop did not time
(the files' opening, where its passes open before the clock starts, and what a run pays
once).  A part whose file has no basket map here (the replay maps a few files spread over the
dataset) is replayed on a mapped file of the same dataset instead (a stand-in, counted).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hep_advisor.probes.basketmap import BasketMap
from hep_advisor.probes.readtests.readers import ReaderSpec

from .reader_baseline import ReaderBaseline, reader_baseline
from .selfcheck import LoopSample

if TYPE_CHECKING:
    from hep_advisor.probes.readtests.results import Calibration, EventLoop, LoopPart
    from hep_advisor.probes.results import SiteProfile

    from .scenarios import Baseline


def sample_maps(parts: Sequence[LoopPart], maps: Sequence[BasketMap]
                ) -> tuple[list[BasketMap], int]:
    """Each part's basket map cut to the entries it read, and how many parts stood on
    another file's map (the mapped files the parts do not name, in order)."""
    def key(path: str) -> str:
        return os.path.abspath(path)

    by_path = {key(m.path): m for m in maps}
    named = {key(p.path) for p in parts}
    spare = [m for m in maps if key(m.path) not in named] or list(maps)
    out, stand = [], 0
    for p in parts:
        m = by_path.get(key(p.path))
        if m is None:
            m, stand = spare[stand % len(spare)], stand + 1
        out.append(m.head(p.entries))
    return out, stand


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
    cut, stand = sample_maps(loop.parts, maps)
    try:
        again = reader_baseline(spec, cut, len(cut), calibration, site, baseline, branches,
                                algorithm, access_s=rb.access_ms / 1e3)
    except ValueError:
        return None
    if again.events_per_s <= 0 or again.entries <= 0:
        return None
    total = again.entries / again.events_per_s
    untimed = again.setup_s + (0.0 if spec.opens_in_loop else
                               again.files * again.open_per_file_s)
    timed = total - untimed
    if timed <= 0:
        return None
    return LoopSample(replayed_events_per_s=again.entries / timed,
                      measured_events_per_s=float(cold.median), entries=int(again.entries),
                      files=len(cut), stand_ins=stand,
                      io_share=min(again.io_s / timed, 1.0))


__all__ = ["LoopSample", "replay_loop_sample", "sample_maps"]
