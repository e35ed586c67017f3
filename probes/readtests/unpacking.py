"""uproot's unpacking of decompressed baskets into arrays: the plain event loop's processing
per MB, without I/O or decompression (see :func:`measure_unpacking`).  It runs in the
decompression test's share and reports under its name."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .results import Conditions, Unpacking
from .runner import OutOfTime, Session, measurement

TEST = "decompression"
#: Uncompressed bytes of baskets held for the unpacking test at most.
UNPACK_BYTES = 8_000_000
#: Fraction of its share the unpacking test may spend reading and decompressing its baskets.
UNPACK_COLLECT_FRACTION = 0.4
#: Fixed costs are separated from the cost per byte only where the calls' sizes differ this much.
UNPACK_SIZE_RATIO = 2.0
#: The time per byte is taken as at least this share of the pass's time (where the fits find
#: less, they cannot tell it from their noise).
UNPACK_MIN_BYTE_SHARE = 0.1
#: Seconds the smallest useful unpacking measurement takes (a file opened, a few baskets read,
#: a warm pass and a few timed ones), about.
UNPACK_MIN_S = 0.25
#: Largest files tried for the tree.
UNPACK_FILES = 4
#: The timed passes also unpack each fixed-width branch's baskets with their data repeated
#: (the same baskets and calls on several times the bytes), so the fit of the fixed costs has
#: sizes to work with where the baskets are all alike: as many times as makes this many bytes
#: in all, within ``UNPACK_TILE``.
UNPACK_TILE_BYTES = 32_000_000
UNPACK_TILE = (2, 16)


@dataclass
class _Unpack:
    branch: Any
    interpretation: Any
    baskets: list[Any] = field(default_factory=list)
    #: the baskets' data repeated (fixed-width branches only)
    tiled: list[Any] | None = None

    @property
    def stop(self) -> int:
        return int(self.branch.entry_offsets[len(self.baskets)])

    def tile(self, np: Any, k: int) -> None:
        """Hold each basket's data repeated *k* times, where the branch's items have a fixed
        width (no byte offsets): the same unpacking calls on *k* times the bytes."""
        if any(bk.byte_offsets is not None for bk in self.baskets) or not hasattr(
                self.interpretation, "from_dtype"):
            return
        self.tiled = [np.tile(bk.data, k) for bk in self.baskets]


def measure_unpacking(
    session: Session,
    files: Sequence[str],
    tree_name: str,
    branches: Sequence[str] | None = None,
    share_s: float | None = None,
    *,
    max_bytes: int = UNPACK_BYTES,
) -> Unpacking | None:
    """uproot's per-MB processing of the plain event loop, without I/O or decompression.

    *Why.*  Where decompression takes most of the event loop's time (LZMA), the loop's rows
    cannot tell the processing rate from the noise on the decompression rate, and every
    what-if that changes the decompression (recompress, C001) inherits that: a speed-up of
    8x with a 90% interval of 0.08x to 765x.  This measures the processing directly.

    *How.*  From one of the largest files, the first baskets of each branch the loop reads
    (or of every branch) are read and decompressed by uproot (``TBranch.basket``), round-robin
    over the branches, until ``max_bytes`` uncompressed are held.  Then one core runs what
    uproot runs on each decompressed basket when it reads arrays (``interpretation.basket_array``
    for every basket, then ``final_array`` per branch, library ``ak``), repeatedly, timed in CPU
    seconds of the thread (``time.thread_time``).  Two more passes time every call, each also on
    its baskets' data repeated k times (fixed-width branches; about ``UNPACK_TILE_BYTES`` in
    all): each call's fixed cost and cost per byte, ``basket_array`` and ``final_array`` apart,
    are fitted by non-negative least squares (where the calls' sizes differ at least
    ``UNPACK_SIZE_RATIO`` fold).  The rate is the cost per byte, per compressed MB as stored;
    the fixed costs, and the pass's own Python around the calls, are the model's per-basket and
    per-call costs.  Measured here on eight datasets unlike the demo, uproot's unpacking costs
    about 3 us per ``basket_array`` and 30-55 us per ``final_array`` call whatever their size,
    and per byte less than the fit can tell from its noise (a ``final_array`` of 1.3 MB of
    floats takes 63 us against 29 us at 20 kB): so the time per byte is taken as at least a
    tenth of the pass's (``UNPACK_MIN_BYTE_SHARE``, a bound, not a measurement).  Without both
    fits the fixed costs are taken out of the pass's time instead.  Not included: the user's
    analysis (a timed ``--analysis`` adds its own work), awkward's grouping of the branches into
    records, and the Python of the read loop itself.  Returns ``None`` where no file holds the
    tree."""
    import threading

    import numpy as np
    import uproot
    from uproot.interpretation.library import _regularize_library

    share = session.begin("unpacking") if share_s is None else float(share_s)
    clock = session.clock
    t0 = clock()
    session.check()
    if share < UNPACK_MIN_S:
        raise OutOfTime(f"no time for uproot's unpacking: about {UNPACK_MIN_S:g} s needed, "
                        f"{share:.2g} s left of the decompression test's share")
    session.report(TEST, 0.0, "unpacking baskets (uproot)")
    local = sorted((f for f in files if os.path.isfile(f)), key=os.path.getsize,
                   reverse=True)[:UNPACK_FILES]
    library = _regularize_library("ak")
    options = {"ak_add_doc": False}
    for path in local:
        try:
            fh = uproot.open(path)
        except Exception:
            continue
        with fh:
            if tree_name not in fh:
                continue
            tree = fh[tree_name]
            if branches:
                chosen = [tree[n] for n in branches if n in tree]
            else:
                chosen = list(tree.itervalues(recursive=True))
            items = []
            for b in chosen:
                if b.num_baskets <= 0:
                    continue
                try:
                    interp = b.interpretation
                except Exception:
                    continue
                if isinstance(interp, uproot.interpretation.identify.UnknownInterpretation):
                    continue
                items.append(_Unpack(b, interp))
            if not items:
                continue
            # the first baskets of each branch, round-robin, within the bytes and the time
            held = 0
            deadline = t0 + UNPACK_COLLECT_FRACTION * share
            i = 0
            while held < max_bytes:
                added = False
                for it in items:
                    if i >= it.branch.num_baskets or held >= max_bytes:
                        continue
                    if held and clock() >= deadline:
                        break
                    session.check()
                    bk = it.branch.basket(i)
                    it.baskets.append(bk)
                    held += int(bk.uncompressed_bytes)
                    added = True
                if not added or (held and clock() >= deadline):
                    break
                i += 1
            session.bytes_read += sum(int(bk.member("fNbytes")) for it in items
                                      for bk in it.baskets)
            return _time_unpacking(session, [it for it in items if it.baskets], library,
                                   options, share - (clock() - t0), np, threading)
    return None


def _time_unpacking(session: Session, items: list[_Unpack], library: Any,
                    options: dict[str, Any], share_s: float, np: Any,
                    threading: Any) -> Unpacking | None:
    calls: list[tuple[int, int, float]] = []  # (kind: 0 basket, 1 final; bytes; seconds)

    def unpack(it: _Unpack, record: bool, reps: int = 1) -> None:
        context = dict(it.branch.context)
        context["forth"] = threading.local()
        arrays = {}
        datas: list[Any] = [bk.data for bk in it.baskets] if reps == 1 else it.tiled or []
        for bk, data in zip(it.baskets, datas, strict=True):
            s = time.thread_time()
            arrays[bk.basket_num] = it.interpretation.basket_array(
                data, bk.byte_offsets, bk, it.branch, context, bk.member("fKeylen"),
                library, options)
            if record:
                calls.append((0, len(data), time.thread_time() - s))
        offsets = it.branch.entry_offsets
        if reps > 1:
            offsets = [reps * int(e) for e in offsets[: len(it.baskets) + 1]]
        s = time.thread_time()
        it.interpretation.final_array(arrays, 0, reps * it.stop, offsets, library, it.branch,
                                      options)
        if record:
            calls.append((1, int(sum(len(d) for d in datas)), time.thread_time() - s))

    # a first pass warms uproot up and drops the branches it cannot unpack; the branches
    # kept are those that unpack within a quarter of the share
    t0 = session.clock()
    kept: list[_Unpack] = []
    for it in items:
        session.check()
        try:
            unpack(it, False)
        except Exception:
            continue
        kept.append(it)
        if session.clock() - t0 > share_s / 4:
            break
    if not kept:
        return None
    compressed = sum(int(bk.member("fNbytes")) for it in kept for bk in it.baskets)
    uncompressed = sum(int(bk.uncompressed_bytes) for it in kept for bk in it.baskets)
    n_baskets = sum(len(it.baskets) for it in kept)

    def sample_rate() -> float:
        s = time.thread_time()
        for it in kept:
            unpack(it, False)
        return compressed / 1e6 / max(time.thread_time() - s, 1e-9)

    left = max(0.0, share_s - (session.clock() - t0))
    samples = session.repeat(sample_rate, left * 0.7, TEST,
                             f"unpacking {n_baskets} baskets of {len(kept)} branches (uproot)")
    # every call timed, twice, each also on its data repeated: the fixed costs per call and
    # the cost per byte (where the passes fit the share; without the repeats where only the
    # plain passes do)
    pass_s = compressed / 1e6 / max(float(np.median(samples)), 1e-9)
    reps = int(min(max(UNPACK_TILE_BYTES // max(uncompressed, 1), UNPACK_TILE[0]),
                   UNPACK_TILE[1]))
    if session.clock() + 2 * (1 + reps) * pass_s > t0 + share_s:
        reps = 1
    if reps > 1 or session.clock() + 2 * pass_s <= t0 + share_s:
        for it in kept if reps > 1 else []:
            it.tile(np, reps)
        for _ in range(2):
            session.check()
            for it in kept:
                unpack(it, True)
                if it.tiled is not None:
                    unpack(it, True, reps)
    basket_s, basket_byte_s = _fixed_cost([(b, t) for k, b, t in calls if k == 0], np)
    branch_s, branch_byte_s = _fixed_cost([(b, t) for k, b, t in calls if k == 1], np)
    m = measurement(samples, "MB/s", Conditions(
        cache="warm", workers=1, bytes_per_sample=compressed,
        note=(f"uproot basket_array + final_array (library ak) on {n_baskets} decompressed "
              f"baskets of {len(kept)} branches held in memory; one core, CPU time; "
              f"compressed MB = baskets as stored (keys included); fixed costs per basket "
              f"call {_us(basket_s)}, per branch {_us(branch_s)}")))
    total = m.median
    beyond = None
    if total:
        t = compressed / 1e6 / total
        if basket_byte_s is not None and branch_byte_s is not None:
            # both fits hold: the time per byte is their slopes' (the pass's own Python
            # around the calls, per branch, is the loop's per-call cost, not a cost per MB)
            data = sum(len(bk.data) for it in kept for bk in it.baskets)
            per_byte = data * (basket_byte_s + branch_byte_s)
        else:
            per_byte = t - n_baskets * (basket_s or 0.0) - len(kept) * (branch_s or 0.0)
        beyond = compressed / 1e6 / max(per_byte, UNPACK_MIN_BYTE_SHARE * t)
    session.report(TEST, 1.0, "unpacking done",
                   figure=f"unpacking: {beyond:.0f} MB/s compressed" if beyond else None)
    return Unpacking(
        compressed_mb_per_s=beyond,
        uncompressed_mb_per_s=None if beyond is None else beyond * uncompressed / compressed,
        total_mb_per_s=total, basket_call_s=basket_s, branch_call_s=branch_s,
        branches=len(kept), baskets=n_baskets, measurement=m)


def _fixed_cost(calls: list[tuple[int, float]],
                np: Any) -> tuple[float | None, float | None]:
    """The fixed seconds per call and the seconds per byte of t = fixed + bytes x per_byte
    (non-negative least squares on the fastest of each call's timings), or ``None, None``
    where the sizes differ too little."""
    from scipy.optimize import nnls

    if len(calls) < 4:
        return None, None
    sizes = np.array([b for b, _ in calls], dtype=float)
    if sizes.min() <= 0 or sizes.max() / sizes.min() < UNPACK_SIZE_RATIO:
        return None, None
    # the fastest timing of each call (they come in passes of equal length)
    half = len(calls) // 2
    times = np.minimum(np.array([t for _, t in calls[:half]]),
                       np.array([t for _, t in calls[half: 2 * half]]))
    a = np.c_[np.ones(half), sizes[:half] / 1e6]
    scale = np.maximum(a.max(axis=0), 1e-12)
    x, _ = nnls(a / scale, times)
    return float(x[0] / scale[0]), float(x[1] / scale[1] / 1e6)


def _us(seconds: float | None) -> str:
    return "not separated" if seconds is None else f"{seconds * 1e6:.1f} us"
