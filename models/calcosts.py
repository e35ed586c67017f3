"""What the replay's CPU terms read off a calibration: the decompression rate of the
dataset's own algorithm, uproot's cost per basket key, a new process's cost per MB of fresh
memory (less what the warm loop re-faulted), Python's garbage collector per file, the
per-call cost of the plain event loop, and
the baskets per MB the loop reads.  Each returns the measured figure where its read test ran,
else the assumption of :mod:`hep_advisor.models.replay.cpucosts` with the range the intervals span.
The fit (:mod:`hep_advisor.models.calibration`) takes the per-call cost and the basket density from
here too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from hep_advisor.probes.readtests.overhead import STEP_BYTES, calls_per_file
from hep_advisor.probes.readtests.results import (
    BasketCost,
    Calibration,
    DecompressionPoint,
    EventLoop,
)
from hep_advisor.probes.readtests.runner import measurement
from hep_advisor.probes.results import TreeProfile

if TYPE_CHECKING:
    from .replay.predict import LoopCosts

#: The loop's per-call cost is taken from the warm event loop where its read calls hold at
#: most this many baskets per branch (``loop_call_costs``).
LOOP_CALL_MAX_BASKETS = 1.5


def dataset_decompression_mb_per_s(cal: Calibration, alg: str | None) -> float | None:
    """The decompression test's rate (compressed MB/s) on the dataset's own baskets of
    algorithm ``alg``; 0.0 for uncompressed data; ``None`` where the data are compressed and
    the rate was not measured.  Where the probe did not name the algorithm, the one rate the
    test measured on the dataset's baskets."""
    found = _decompression_point(cal, alg, "dataset", lambda d: bool(d.compressed_mb_per_s))
    if found is not None and found.compressed_mb_per_s:
        return float(found.compressed_mb_per_s)
    return 0.0 if alg in (None, "none") else None


def root_unzip_mb_per_s(cal: Calibration | None) -> float | None:
    """ROOT's own decompression rate (compressed MB/s) in the calibration's ``GetEntry``
    loop: its perf stats' bytes read over their unzip time, from the pass without TTreeCache
    (the program's reads), else the one with it; ``None`` where neither timed any."""
    for stats in (getattr(cal, "root_cache_off", None), getattr(cal, "root_cache_on", None)):
        if stats is not None and stats.unzip_time_s > 0 and stats.bytes_read > 0:
            return stats.bytes_read / stats.unzip_time_s / 1e6
    return None


def _decompression_point(cal: Calibration, alg: str | None, source: str,
                         has: Callable[[DecompressionPoint], bool]
                         ) -> DecompressionPoint | None:
    """The decompression test's point of ``source`` for ``alg`` among those that ``has``
    the figure wanted; where the probe did not name the algorithm, the one such point of the
    dataset's own baskets (the test decompressed it)."""
    pts = [d for d in cal.decompression if d.source == source and has(d)]
    found = next((d for d in pts if d.algorithm == alg), None)
    if found is None and source == "dataset" and alg in (None, "none") and len(pts) == 1:
        found = pts[0]
    return found


def decompression_basket_s(cal: Calibration | None, alg: str | None,
                           source: str = "dataset") -> float | None:
    """The codec's fixed CPU per basket decompressed (``DecompressionPoint.basket_s``) the
    decompression test measured for ``alg`` on the dataset's own baskets (``source``
    ``"dataset"``) or on them recompressed (``"recompressed"``); ``None`` where it did not."""
    if cal is None:
        return None
    found = _decompression_point(cal, alg, source, lambda d: d.basket_s is not None)
    return float(found.basket_s) if found is not None and found.basket_s is not None else None


def uproot_key_cost(cal: Calibration | None) -> tuple[float, tuple[float, float], bool]:
    """uproot's CPU per basket key of a memory-size step's pre-pass: ``(seconds, the range
    the intervals span, measured)``.  The per-key test's median and the range of its samples
    where it ran; else the assumption (:data:`~models.replay.cpucosts.UPROOT_KEY_S` over
    ``UPROOT_KEY_S_RANGE``)."""
    from .replay.cpucosts import UPROOT_KEY_S, UPROOT_KEY_S_RANGE

    kc = cal.key_cost if cal is not None else None
    if kc is not None and kc.key_s is not None and kc.key_s > 0:
        samples = [x for x in kc.measurement.samples if x > 0] or [kc.key_s]
        return kc.key_s, (min(samples), max(samples)), True
    return UPROOT_KEY_S, UPROOT_KEY_S_RANGE, False


def first_touch_cost(cal: Calibration | None) -> tuple[float, tuple[float, float], bool]:
    """Seconds per MB of memory a new process writes for the first time: ``(seconds, the
    range the intervals span, measured)``.  The first-touch test's median and the range of
    its samples where it ran; else the assumption
    (:data:`~models.replay.cpucosts.FIRST_TOUCH_S_PER_MB` over ``FIRST_TOUCH_RANGE``)."""
    from .replay.cpucosts import FIRST_TOUCH_RANGE, FIRST_TOUCH_S_PER_MB

    ft = cal.first_touch if cal is not None else None
    if ft is not None and ft.s_per_mb is not None and ft.s_per_mb > 0:
        samples = [x for x in ft.measurement.samples if x > 0] or [ft.s_per_mb]
        return ft.s_per_mb, (min(samples), max(samples)), True
    return FIRST_TOUCH_S_PER_MB, FIRST_TOUCH_RANGE, False


def collector_per_file(cal: Calibration | None) -> float:
    """Python's garbage collector per file a program opens and reads with uproot (seconds,
    the collector test's, measured in a fresh interpreter); 0.0 where it did not run (fewer
    than ``hep_advisor.probes.readtests.collector.MIN_DATASET_FILES`` files, ROOT's engine, a short
    budget): the open test's median holds the young collections, not the full ones."""
    c = getattr(cal, "collector", None)
    return float(c.per_file_s) if c is not None and c.per_file_s and c.per_file_s > 0 else 0.0


def loop_refault(cal: Calibration | None) -> float:
    """MB of memory per MB read that the calibration's warm uproot loop faulted again each
    pass (0 where it was not recorded, or the loop ran ROOT's engine)."""
    loop = cal.event_loop if cal is not None else None
    if loop is None or loop.engine != "uproot" or loop.refault_per_mb is None:
        return 0.0
    return max(0.0, loop.refault_per_mb)


def step_touch(cal: Calibration | None) -> tuple[float, tuple[float, float]]:
    """``CpuCosts.touch``: the first-touch cost per MB of a run's largest step of arrays, and
    its range (:func:`hep_advisor.models.replay.cpucosts.first_touch`), less what the warm loop's
    own faults already put in its rate (:func:`loop_refault`)."""
    from .replay.cpucosts import first_touch

    s, rng, _ = first_touch_cost(cal)
    return first_touch(s, rng, loop_refault(cal))


def first_call_extra(cal: Calibration | None) -> float:
    """What a file costs uproot's event loop beyond a later read call of the same entries
    (seconds): a cost per file, which the model counts with the opening and takes out of the
    warm loop's per-call cost (each of the loop's files is one first call).

    Where the per-call test's range is a whole input file (small files: the temporary merge),
    it is the loop's warm time for that many entries less that range's later call
    (:func:`loop_file_extra`): whatever the loop pays per file -- finding each branch's
    baskets the first time, the file's objects built and freed, the collections they trigger.
    Else the per-call test's paired first calls (``CallCost.first_call_s``), which hold the
    first of these only; 0.0 where neither was measured.  On the held-out data (300 branches,
    six calibrations) the loop paid 6-47 ms a file beyond a later call (four of them 26-34),
    where the paired first calls found 0-7 ms: counted per call, a merged file's 24 calls
    came out 25-35% too slow."""
    derived = loop_file_extra(cal)
    if derived is not None:
        return derived
    cc = getattr(cal, "call_cost", None)
    first = getattr(cc, "first_call_s", None)
    if first is None or first <= 0:
        return 0.0
    # where the per-call test's range is a whole file, held below the loop's time per file
    # as the loop's own extra is (``LOOP_EXTRA_MAX``): a noisy pair of first calls measured
    # 69 ms where the loop took 24 ms a file, and the open it was taken from kept 8 ms of
    # a 23 ms warm open (tiny's pre-staging: 1.74x predicted, 1.14x realised)
    rate = loop_cpu_rate(getattr(cal, "event_loop", None))
    entries = getattr(cc, "later_entries", None)
    if getattr(cc, "later_whole_file", False) and entries and rate:
        return float(min(first, LOOP_EXTRA_MAX * entries / rate))
    return float(first)


def split_call_cost(cal: Calibration | None, branches_per_call: float) -> float | None:
    """What one more uproot read call costs over ``branches_per_call`` branches (seconds): the
    per-call test's split calls (``CallCost.split_call_s``: a range read in two calls less in
    one, the same baskets and entries), scaled from its branches to these (the cost is each
    branch's set-up and array building).  ``None`` where the test did not measure it.

    The intercept of the test's two ranges (``CallCost.call_s``) cannot give it where the
    second range holds baskets of its own: their fixed costs land on its MB, and the
    intercept comes out 0.  On 40 uproot-written files of 173 branches (two baskets per
    branch a file) the intercept was 0, the split calls 9.7 ms, and the replay, counting the
    loop's 10 ms a file as work per MB, predicted merging them at 1.66x where 2.71x came."""
    cc = getattr(cal, "call_cost", None)
    split = getattr(cc, "split_call_s", None)
    if split is None or cc is None or not cc.branches or branches_per_call <= 0:
        return None
    return float(split) * branches_per_call / cc.branches


#: The most of the loop's fastest time per file (cold or warm) its cost per file beyond a
#: later call may be (:func:`loop_file_extra`)
LOOP_EXTRA_MAX = 0.4


def loop_file_extra(cal: Calibration | None) -> float | None:
    """The calibration's warm event loop's time per file beyond the per-call test's later
    call of a whole file's entries (seconds, at least 0), where both were measured alike: the
    test's range is a whole input file (``CallCost.later_whole_file``), and the loop is
    uproot's own, with no analysis, reading that many entries in one call (its step).
    ``None`` where not.  At most ``LOOP_EXTRA_MAX`` of the loop's fastest time per file, cold
    or warm: the model takes it out of both loop rows (each keeps at least half its time;
    the margin is for the rows' own bytes per file), and a noisy warm median (10,800-15,000 events/s
    against the cold pass's 15,800 on 300 branches) made it 45 ms of a cold file's 76, which
    left the cold row as measured and the warm one less it: cold read 25% slower than warm,
    and the fit hid no I/O behind the CPU (``io_overlap`` 0.14), where merged files read as
    fast cold as warm."""
    cc = getattr(cal, "call_cost", None)
    loop = getattr(cal, "event_loop", None)
    if cc is None or not getattr(cc, "later_whole_file", False) or not cc.later_call_s \
            or not cc.later_entries or loop is None or loop.engine != "uproot" \
            or loop.reader is not None or loop.analysis is not None or loop.warm is None \
            or not loop.warm.median or not loop.events_per_s:
        return None
    per_event = (loop.uncompressed_mb_per_s or 0.0) * 1e6 / loop.events_per_s
    if calls_per_file(per_event * cc.later_entries, loop.step_bytes or STEP_BYTES) > 1:
        return None  # the loop read such a file in several calls
    per_file = cc.later_entries / (loop_cpu_rate(loop) or loop.warm.median)  # the faster pass
    return min(max(per_file - cc.later_call_s, 0.0), LOOP_EXTRA_MAX * per_file)


def loop_cpu_rate(loop: EventLoop | None) -> float | None:
    """The event loop's events/s that its CPU terms scale with: the warm median, or the cold
    one where that was faster.  A pass's wall time bounds its CPU time, and the cold pass
    did the same work (opening untimed in both) plus its waits for the disk, so a warm
    median below the cold one measured the machine, not the reader.  On 120 files of 0.3 MB
    and 100 branches (read-ahead took each file whole at its untimed opening) the warm
    samples read 9,339-13,853 events/s and the cold ones 14,535-16,493; the replay charged
    76 ms of CPU a file, and the program ran at 58 ms a file, opening and waits included.
    Where the loop's passes ended inside baskets (``loop_read_factors``), the rate is
    that of whole files: times the smaller of its two factors (a lower bound on the work
    it did beyond its share).  ``None`` without a warm median."""
    if loop is None or loop.warm is None or not loop.warm.median:
        return None
    cold = loop.cold.median if loop.cold is not None and loop.cold.median else 0.0
    # a pass ending inside baskets decompressed more than its share of the files: at the
    # smaller of its two factors (bytes, baskets), the events/s of whole files
    return float(max(loop.warm.median, cold)) * min(loop_read_factors(loop))


def loop_read_factors(loop: object) -> tuple[float, float]:
    """(bytes, baskets): what the event loop's passes decompressed over their share of the
    files (``EventLoop.read_mb_factor``, ``read_basket_factor``; 1 where not recorded, and
    never below 1: a read decompresses at least its share of whole files)."""
    mb = getattr(loop, "read_mb_factor", None)
    bk = getattr(loop, "read_basket_factor", None)
    return max(float(mb or 1.0), 1.0), max(float(bk or 1.0), 1.0)


def loop_calls_per_file(loop: EventLoop | None, uncompressed_bytes_per_file: float) -> float:
    """The read calls the calibration's event loop made per file of that many uncompressed
    bytes: one per its step (``EventLoop.step_bytes``; a short share reads in smaller steps
    than the 50 MB a whole job takes), else one per 50 MB (``overhead.calls_per_file``)."""
    if loop is not None and loop.step_bytes:
        return calls_per_file(uncompressed_bytes_per_file, loop.step_bytes)
    return calls_per_file(uncompressed_bytes_per_file)


def loop_call_costs(cal: Calibration, tree: TreeProfile | None, *, assume_baskets: bool = True
                    ) -> LoopCosts | None:
    """The per-call cost of uproot's plain event loop from the calibration's warm loop
    (:func:`hep_advisor.models.replay.cpucosts.loop_costs`: the loop's time per file less its MB at
    the measured decompression rate, and the baskets beyond the first per branch and call at the
    per-basket cost where measured), where the loop's calls hold at most
    ``LOOP_CALL_MAX_BASKETS`` baskets per branch: small files, whose read calls cost what
    their branches cost, not what their MB do.  The per-call test times calls of the same
    file again and again, and the difference of its two reads (the second basket of every
    branch) counts those fixed costs per MB: on three ROOT-written datasets of small files
    the fitted per-MB rate was 2-6x slower than reading a merged file of the same data.
    ``None`` where the loop ran another engine, reader or the user's analysis, or there is
    no warm loop or measured decompression rate (where the data is compressed).
    ``assume_baskets``: where the per-basket test did not run, the baskets cost the replay's
    assumption (:func:`hep_advisor.models.replay.cpucosts.assumed_baskets`); ``False``: nothing (the
    rate model's rows then carry no baskets either)."""
    from .replay.cpucosts import loop_costs

    loop = cal.event_loop
    if tree is None or loop is None or loop.engine != "uproot" or loop.analysis is not None \
            or getattr(loop, "reader", None) is not None or loop.warm is None:
        return None
    warm = loop_cpu_rate(loop)
    if not warm or not loop.events_per_s or not loop.compressed_mb_per_s or not tree.files \
            or not tree.entries:
        return None
    per_file = tree.entries / tree.files
    mb = loop.compressed_mb_per_s / loop.events_per_s * per_file
    unc = (loop.uncompressed_mb_per_s or 0.0) * 1e6 / loop.events_per_s * per_file
    calls = loop_calls_per_file(loop, unc)
    with_data = branches_with_data(tree)
    read = loop_branches(loop, tree)
    baskets = (tree.baskets.count or 0) / tree.files * read / max(with_data, 1)
    # small files are small at a job's step: a short share's loop reads larger files in
    # smaller steps, whose calls hold a basket per branch too, but the files' MB cost
    if not read or baskets / (read * calls_per_file(unc)) > LOOP_CALL_MAX_BASKETS:
        return None
    dec = dataset_decompression_mb_per_s(cal, tree.compression.algorithm)
    if dec is None:
        return None
    up = cal.unpacking
    proc = up.compressed_mb_per_s if up is not None and (
        up.basket_call_s is not None or up.branch_call_s is not None) else None
    bc = basket_cost(cal, tree.compression.algorithm)
    measured = bc.basket_s if bc is not None else None
    key_s, key_range, _ = uproot_key_cost(cal)
    # the baskets interpreted beyond the first of each branch in each call: the loop's steps
    # count entries, so each call after a file's first interprets again the basket of each
    # branch that the previous step ended inside (``replay.predict.step_touches``):
    # baskets + (calls - 1) read, less read per call
    return loop_costs(per_file / warm, mb, calls, baskets - read, dec,
                      measured if measured is not None or assume_baskets else 0.0, proc,
                      key_s=key_s, key_range=key_range, first_s=first_call_extra(cal))


def branches_with_data(tree: TreeProfile) -> int:
    """The tree's branches that hold baskets (all of them where the profile does not say)."""
    return sum(1 for b in tree.branch_profiles if b.baskets.count > 0) or tree.branches


def loop_branches(loop: EventLoop, tree: TreeProfile) -> int:
    """The branches with data the event loop read."""
    with_data = branches_with_data(tree)
    return min(loop.branches, with_data) if loop.branches else with_data


def basket_density(tree: TreeProfile, loop: EventLoop | None = None) -> float | None:
    """Baskets per compressed MB of the branches the event loop reads: the tree's baskets
    over its bytes; where the loop read a subset of the branches, scaled by the share of the
    branches (with data) it read over the share of the bytes.  ``None`` where unknown."""
    if not tree.baskets.count or not tree.compressed_bytes:
        return None
    with_data = branches_with_data(tree)
    share = 1.0
    if loop is not None and with_data and 0 < loop.branches < with_data:
        per_event = compressed_per_event(loop)
        if per_event and tree.entries:
            bytes_share = min(1.0, max(per_event / (tree.compressed_bytes / tree.entries), 1e-3))
            share = (loop.branches / with_data) / bytes_share
    return tree.baskets.count * share / (tree.compressed_bytes / 1e6)


def compressed_per_event(loop: object) -> float | None:
    events = getattr(loop, "events_per_s", None)
    mb = getattr(loop, "compressed_mb_per_s", None)
    if not events or not mb:
        return None
    return float(mb) * 1e6 / float(events)


def basket_cost(cal: Calibration | None, alg: str | None) -> BasketCost | None:
    """The per-basket test's result as the model uses it: its cost per basket beyond the
    per-MB cost that the decompression and unpacking tests measured.

    Each group of branches the test read took ``dt = dn t_basket + dMB t_mb`` more in its
    long range; the test fits both from its own four or so groups, and where their bytes per
    basket do not spread the time along the MB (the timings scatter by tens of per cent), the
    fit sets ``t_mb`` to zero and the decompression of the baskets' bytes lands in
    ``t_basket``, which the model then charges again at the decompression rate.  Here ``t_mb``
    is the decompression test's seconds per compressed MB (of the dataset's algorithm) plus
    the unpacking test's, each group's time is taken less ``dMB t_mb``, and the baskets' cost
    is fitted again, one estimate per repetition (least squares through the origin).  The
    test's own figure where it did not keep its groups or the decompression rate is
    unmeasured; ``None`` without the test."""
    bc = cal.basket_cost if cal is not None else None
    if cal is None or bc is None or not bc.groups or bc.basket_s is None:
        return bc
    dec = dataset_decompression_mb_per_s(cal, alg)
    if dec is None:
        return bc
    up = cal.unpacking
    s_mb = (1.0 / dec if dec else 0.0) + (
        1.0 / up.compressed_mb_per_s if up is not None and up.compressed_mb_per_s else 0.0)
    reps = min(len(g.extra_s) for g in bc.groups)
    dn2 = sum(float(g.baskets) ** 2 for g in bc.groups)
    if reps == 0 or dn2 <= 0:
        return bc
    estimates = [max(0.0, sum(g.baskets * (g.extra_s[r] - g.mb * s_mb) for g in bc.groups)
                     / dn2) for r in range(reps)]
    c = bc.measurement.conditions
    m = measurement(estimates, "s", replace(c, note=(c.note + "; " if c.note else "") +
                                            f"less {1e3 * s_mb:.2f} ms per compressed MB "
                                            "(the decompression and unpacking tests')"))
    net = m.median if m.median is not None and m.median > 0 else None
    return replace(bc, basket_s=net, mb_per_s=1.0 / s_mb if s_mb > 0 else None,
                   measurement=m)
