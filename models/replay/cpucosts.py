"""The CPU side of a replay: one worker's CPU terms (:class:`CpuCosts`), and the per-call,
per-basket and per-MB costs taken from the calibration's warm event loop (:func:`loop_costs`,
:class:`LoopCosts`), with the assumptions where a test did not run (uproot's CPU per key of a
memory-size step's pre-pass, per basket).  :mod:`.predict` replays the reads and adds these."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..physics import Params

#: uproot's CPU per basket key in a memory-size step's pre-pass (``"100 MB"``: every selected
#: basket's key read, one call each).  An assumption from one check (uproot 5.7.7, this
#: project's machine, warm, process CPU time): ``iterate`` over every branch at "100 MB" less
#: the same at an entry step with as many calls, over the keys, on five ROOT-written datasets
#: (100-1,200 branches, 2,073-12,000 keys): 45-62 µs (``benchmarks/RESULTS.md``).  The range
#: the intervals span: half to one and a half times it (single runs gave 32-128 µs).
UPROOT_KEY_S = 50e-6
UPROOT_KEY_S_RANGE = (25e-6, 75e-6)
#: uproot's CPU per basket read beyond the first of its branch in a read call (interpreting
#: it, joining it to the branch's array) where the calibration's per-basket test did not run
#: (its budget ran out): an assumption, the rate model's own default, from that test on the
#: demo data (68-116 us over runs; ``benchmarks/RESULTS.md``, "Rewriting tiny baskets").  The
#: warm event loop's time is then split with it (what is left per call, or per MB), and the
#: intervals span the range, each end with the loop's time split again.  Without it, every
#: basket was free: a merge that halves the read calls but writes more, smaller baskets
#: (``hadd -O`` on 8 KB baskets) was credited with the whole per-call time.
UPROOT_BASKET_S = 100e-6
UPROOT_BASKET_S_RANGE = (50e-6, 150e-6)
#: Compressed bytes per basket at most (the mean over the baskets a program's reader reads) at
#: which the part of uproot's warm event loop that its measured costs (per call, key, basket,
#: decompression) leave unexplained is charged per basket, not per MB, where the read calls
#: hold several baskets per branch.  From one lab check (``benchmarks/lab/check_small_baskets.py``,
#: uproot 5.7.7, warm): 60 files of 45 branches with 1.5 kB ZSTD baskets read in 1.00 s; merged
#: by ``hadd -fk`` (the same 5,400 baskets in one file) 0.37 s; by ``hadd -O -fk`` (375 baskets)
#: 0.044 s.  Beyond decompression and the per-file costs, 54 µs per basket in both of the first
#: two and 52 µs in the third, where per MB it fell from 36 to 3.2 ms: it went with the baskets.
#: Above the bound the rest stays per MB, as before (not checked by that lab check; on 40 files
#: of 5 kB baskets with a jagged collection it was mostly per basket, partly per MB).
SMALL_BASKET_BYTES = 10_000
#: MB of memory a new process writes for the first time per MB of its largest step's arrays
#: (uproot: the decompressed baskets, each branch's array joined from them, awkward's step; the
#: heap then reused, or unmapped and mapped again for arrays too large to keep).  An
#: assumption from one check (uproot 5.7.7, this project's machine, one fresh process per
#: run, warm page cache, the default ``iterate``; ``benchmarks/lab/check_fresh_memory.py``): over
#: 18 layouts of six datasets (steps of 0.5-100 MB) the pages faulted were about 52-57 MB +
#: 3.0-3.2 x the largest step's uncompressed MB; the constant is paid by every run alike and
#: left out.  The range the intervals span is that of the eight datasets' own slopes from
#: their files to one merged file (1.3x for 1,200 flat scalars to 5.5x for a held-out dataset
#: of wide jagged collections; it was 2-5x before the held-out data were measured).
MEMORY_GROWTH = 3.2
MEMORY_GROWTH_RANGE = (1.3, 5.5)
#: Seconds per MB of memory a process writes for the first time, where the first-touch test
#: did not run: an assumption from that test on this project's machine (private memory, as a
#: program's arrays get: 0.61 ms per MB, where a shared mapping measured 0.86 beside it;
#: ``benchmarks/lab/check_merge_parts.py``); the range the intervals span.
FIRST_TOUCH_S_PER_MB = 0.6e-3
FIRST_TOUCH_RANGE = (0.4e-3, 1.2e-3)


@dataclass(frozen=True)
class CpuCosts:
    """The fitted model's CPU terms for one worker.  ``open_s``: the CPU part of opening a
    file (the warm open; its reads are replayed); a rate of 0 is a cost not paid."""

    open_s: float
    call_s: float = 0.0
    basket_s: float = 0.0
    decompress_mb_per_s: float = 0.0
    process_mb_per_s: float = 0.0
    #: the share of uproot's streamed I/O that hides behind the read calls' CPU (0: none, the
    #: sum of I/O and CPU), and the range the intervals span (``None``: no range)
    overlap: float = 0.0
    overlap_range: tuple[float, float] | None = None
    #: ``basket_s`` is paid only by the baskets beyond one per branch and call (``call_s``,
    #: from the event loop, holds the first basket of each branch)
    extra_baskets: bool = False
    #: the terms a ROOT ``GetEntry`` loop pays where they differ from uproot's (``None``:
    #: these)
    root: CpuCosts | None = None
    #: CPU per key of a memory-size step's pre-pass (the per-key test's, else ``UPROOT_KEY_S``;
    #: 0: not apart, as fitted), and the range the intervals span
    key_s: float = 0.0
    key_range: tuple[float, float] = UPROOT_KEY_S_RANGE
    #: ``basket_s`` is assumed (``UPROOT_BASKET_S``: the per-basket test did not run), and the
    #: same measurements split with the ends of its range: the intervals' corners
    basket_assumed: bool = False
    variants: tuple[CpuCosts, ...] = ()
    #: CPU per MB of a run's largest step of arrays for the memory a new process writes for
    #: the first time (:func:`first_touch`: the first-touch test's cost per MB times
    #: ``MEMORY_GROWTH``; 0: not counted; a ROOT loop builds no such arrays), and the range
    #: the intervals span (``None``: none)
    touch_s: float = 0.0
    touch_range: tuple[float, float] | None = None
    #: the codec's fixed CPU per basket decompressed, beyond its bytes (the decompression
    #: test's, :mod:`hep_advisor.probes.readtests.blockcost`; 0: not counted), and the baskets per
    #: compressed MB at which ``decompress_mb_per_s`` holds (0: not set): a layout with fewer
    #: baskets per MB saves this per basket fewer (:meth:`decompress_fix_s`)
    decompress_basket_s: float = 0.0
    basket_density: float = 0.0
    #: CPU seconds a run of the program pays once, whatever the layout (an RDataFrame's
    #: compilation, a ROOT loop's first file; measured by the calibration's loop with that
    #: reader; 0: none)
    once_s: float = 0.0
    #: CPU per entry read, whatever the layout (a ROOT ``GetEntry`` loop's work beyond
    #: decompression: the entry's values copied into the branches' buffers; measured as its
    #: warm loop less its decompression; 0: not counted)
    entry_s: float = 0.0

    def decompress_fix_s(self, baskets: float, compressed_mb: float) -> float:
        """Decompression time beyond ``compressed_mb`` at the rate: the codec's fixed cost for
        the baskets more (or, negative, fewer) than the rate's density holds in those MB;
        never more than the whole fixed part (the rate's time per MB times the MB)."""
        c0, d = self.decompress_basket_s, self.basket_density
        if c0 <= 0 or d <= 0 or self.decompress_mb_per_s <= 0 or compressed_mb <= 0:
            return 0.0
        c0 = min(c0, 1.0 / (self.decompress_mb_per_s * d))  # the fixed part within the rate
        return c0 * (baskets - compressed_mb * d)

    def at_density(self, baskets: float, compressed_mb: float) -> CpuCosts:
        """These costs with the decompression rate holding at ``baskets`` per
        ``compressed_mb`` (today's layout, where the rate was measured), variants alike."""
        if self.decompress_basket_s <= 0 or compressed_mb <= 0:
            return self
        d = baskets / compressed_mb
        return replace(self, basket_density=d,
                       variants=tuple(replace(v, basket_density=d) for v in self.variants))

    def with_decompress_basket(self, basket_s: float | None) -> CpuCosts:
        """These costs with the codec's fixed cost per basket (``None``: not counted),
        variants alike."""
        c0 = float(basket_s or 0.0)
        return replace(self, decompress_basket_s=c0,
                       variants=tuple(replace(v, decompress_basket_s=c0)
                                      for v in self.variants))

    def alternatives(self) -> tuple[CpuCosts, ...]:
        """These costs and the variants the intervals span (each without variants)."""
        return (replace(self, variants=()), *self.variants)

    def with_once(self, once_s: float) -> CpuCosts:
        """These costs (and their variants) with ``once_s`` paid once per run."""
        return replace(self, once_s=once_s,
                       variants=tuple(v.with_once(once_s) for v in self.variants))

    def for_engine(self, engine: str) -> CpuCosts:
        return self.root if engine == "root" and self.root is not None else self

    def per_mb_s(self) -> float:
        s = 0.0
        if self.decompress_mb_per_s > 0:
            s += 1.0 / self.decompress_mb_per_s
        if self.process_mb_per_s > 0:
            s += 1.0 / self.process_mb_per_s
        return s

    def scaled(self, f: float) -> CpuCosts:
        """The per-file costs (open, call, basket) times ``f``."""
        return replace(self, open_s=self.open_s * f, call_s=self.call_s * f,
                       basket_s=self.basket_s * f, key_s=self.key_s * f,
                       touch_s=self.touch_s * f, entry_s=self.entry_s * f,
                       root=self.root.scaled(f) if self.root is not None else None,
                       variants=tuple(v.scaled(f) for v in self.variants))


def first_touch(s_per_mb: float, s_range: tuple[float, float], refault: float = 0.0
                ) -> tuple[float, tuple[float, float]]:
    """(``CpuCosts.touch_s``, its range): seconds per MB of fresh memory (the first-touch
    test's, and the range of its samples) times ``MEMORY_GROWTH`` (over its range), less
    ``refault``: the MB per MB that the calibration's warm loop faulted again each pass (its
    rate, and the CPU terms fitted to it, already pay that much for every step, the first
    included; never below 0)."""
    lo, hi = MEMORY_GROWTH_RANGE
    r = max(0.0, refault)
    return (s_per_mb * max(0.0, MEMORY_GROWTH - r),
            (s_range[0] * max(0.0, lo - r), s_range[1] * max(0.0, hi - r)))


def costs_from(params: Params, row: Mapping[str, float], warm_open_s: float | None = None,
               *, loop: LoopCosts | None = None, overlap: float = 0.0,
               overlap_range: tuple[float, float] | None = None,
               touch: tuple[float, tuple[float, float]] | None = None,
               collector_s: float = 0.0, first_call_s: float = 0.0,
               root_open_s: float | None = None) -> CpuCosts:
    """The fitted model's CPU terms for one worker (``row``: the baseline's configuration,
    which says whether the job decompresses and processes); the open's CPU part is the
    measured warm open where there is one (its cold part is replayed), else ``open_s``.

    ``loop`` (see :func:`loop_costs`): the per-call cost from the warm event loop and the
    measured decompression rate replace the fitted per-call, per-basket and per-MB terms (the
    fitted per-MB rate absorbs per-branch costs that a merge removes).  ``overlap`` (and its
    ``overlap_range``): uproot's I/O hidden behind the CPU (see the module's notes).
    ``touch``: ``(touch_s, range)`` of :func:`first_touch` (``None``: not counted).
    ``collector_s``: Python's garbage collector per file (``calcosts.collector_per_file``),
    added to uproot's open and not to ROOT's (``CpuCosts.root``).  ``first_call_s``: what a
    file's first read call costs beyond a later one (``calcosts.first_call_extra``), which
    the fitted ``open_s`` holds and the fitted ``call_s`` does not: added to uproot's open (the
    loop's own, ``LoopCosts.first_s``, where ``loop`` is given), not to ROOT's.
    ``root_open_s``: ROOT's own warm open per file, where measured (``Calibration.
    reader_open``): ROOT's ``GetEntry`` loop pays it in place of the open test's."""
    first = max(float(first_call_s), 0.0)
    alone = params.open_s - first  # the open alone (its prior holds the first call)
    if alone <= 0:
        # a first call costing more than the whole fitted open: the two disagree (a noisy
        # pair of first calls, 59 ms where the loop took 25 ms a file), and the fitted open
        # is kept whole as the cap (else the measured warm open, 15 ms, went uncounted)
        alone = params.open_s
    open_s = alone if warm_open_s is None else min(warm_open_s, alone)
    opens = row.get("opens", 1.0) >= 0.5
    if not opens:
        open_s = first = 0.0
    dec = float(params.decompress_mb_per_s) if row.get("decompress", 1.0) > 0.5 else 0.0
    proc = float(params.process_mb_per_s) if row.get("process", 1.0) > 0.5 else 0.0
    touch_s, touch_range = touch if touch is not None else (0.0, None)
    gc_s = max(float(collector_s), 0.0) if opens else 0.0  # paid by a program opening files
    fitted = CpuCosts(
        open_s=float(open_s) + first + gc_s, call_s=float(params.call_s),
        basket_s=float(params.basket_s),
        decompress_mb_per_s=dec, process_mb_per_s=proc, overlap=overlap,
        overlap_range=overlap_range, touch_s=touch_s, touch_range=touch_range)
    # ROOT's GetEntry loop keeps the fitted terms (the event loop measured uproot's calls),
    # without Python's collector
    root = replace(fitted, open_s=float(open_s if root_open_s is None or not opens
                                        else root_open_s))
    if loop is None:
        return replace(fitted, root=root) if gc_s or first or root_open_s is not None \
            else fitted

    def of(lc: LoopCosts) -> CpuCosts:
        return CpuCosts(open_s=float(open_s) + (lc.first_s if opens else 0.0) + gc_s,
                        call_s=lc.call_s,
                        basket_s=lc.basket_s,
                        decompress_mb_per_s=lc.decompress_mb_per_s if dec else 0.0,
                        process_mb_per_s=lc.process_mb_per_s, overlap=overlap,
                        overlap_range=overlap_range, extra_baskets=lc.calls_hold_baskets,
                        root=root,
                        key_s=lc.key_s, key_range=lc.key_range,
                        basket_assumed=lc.basket_assumed, touch_s=touch_s,
                        touch_range=touch_range)

    return replace(of(loop), variants=tuple(of(v) for v in loop.variants))


@dataclass(frozen=True)
class LoopCosts:
    """CPU terms of uproot's event loop taken from measurements (:func:`loop_costs`)."""

    call_s: float
    basket_s: float
    decompress_mb_per_s: float
    process_mb_per_s: float = 0.0
    key_s: float = UPROOT_KEY_S  # per key of a memory-size step's pre-pass, not in call_s
    key_range: tuple[float, float] = UPROOT_KEY_S_RANGE  # what the intervals span
    #: ``basket_s`` assumed (``UPROOT_BASKET_S``), and the same measurements split with the
    #: ends of its range (``UPROOT_BASKET_S_RANGE``) where they leave time to split
    basket_assumed: bool = False
    variants: tuple[LoopCosts, ...] = ()
    #: what each file's first read call cost beyond a later one, left out of ``call_s`` (the
    #: per-call test's ``first_call_s``; a cost per file, counted with the opening)
    first_s: float = 0.0
    #: ``call_s`` holds the first basket of each branch read (taken from the loop's time per
    #: call): ``basket_s`` is paid by the baskets beyond it; ``False``: ``call_s`` holds no
    #: basket (the per-call test's split calls), and every basket pays ``basket_s``
    calls_hold_baskets: bool = True


def assumed_baskets(split: Callable[[float], LoopCosts | None]) -> LoopCosts | None:
    """A warm loop's time split with the per-basket cost assumed (:data:`UPROOT_BASKET_S`)
    where the per-basket test did not run: ``split(basket_s)`` at the assumption, with the
    splits at its range's ends as variants.  Where the assumption leaves no time (a loop
    faster than that), the lower end, else no per-basket cost at all (as before there was an
    assumption), each without variants."""
    lo, hi = UPROOT_BASKET_S_RANGE
    central = split(UPROOT_BASKET_S)
    if central is None:
        low = split(lo)
        return replace(low, basket_assumed=True) if low is not None else split(0.0)
    ends = tuple(replace(v, basket_assumed=True) for v in (split(lo), split(hi))
                 if v is not None)
    return replace(central, basket_assumed=True, variants=ends)


def loop_costs(file_s: float, file_mb: float, calls: float, extra_baskets: float,
               decompress_mb_per_s: float, basket_s: float | None = None,
               process_mb_per_s: float | None = None, keys: float = 0.0,
               key_s: float = UPROOT_KEY_S,
               key_range: tuple[float, float] = UPROOT_KEY_S_RANGE,
               first_s: float = 0.0) -> LoopCosts | None:
    """The per-call cost of uproot's event loop from its warm time per file ``file_s`` (the
    calibration's warm event loop: opening not timed, ``calls`` read calls per file of
    ``file_mb`` compressed MB, ``extra_baskets`` baskets interpreted per file beyond one per
    branch and call, a basket that a step ended inside counting again in the next): what is
    left of a file's time after decompressing its MB at the measured rate (and processing
    them, where measured apart from the fixed costs), and the baskets beyond the first of
    each branch at ``basket_s`` (the per-basket test; ``None`` where it did not
    run: :func:`assumed_baskets`), per call.  So the per-branch work of each call (finding
    the baskets, building the arrays) is a per-call cost, not a per-MB rate.  ``keys``:
    basket keys per file the loop's memory-size step read in its pre-pass (0: an entry
    step), at ``key_s`` each (measured by the per-key test, else assumed; ``key_range``: the
    range the intervals span), left out of the per-call cost (a replay charges them where its
    reader reads them).  ``first_s``: what a file's first call costs beyond a later one
    (the per-call test's, measured), left out of the per-call cost too (the loop's files each
    had one first call; a replay counts it per file, with the opening); where that would
    leave less than half of the per-call time, it stays in (the measurements disagree).
    ``None`` where nothing is left (the loop was faster than its decompression alone: a noisy
    measurement)."""
    if file_s <= 0 or calls <= 0 or decompress_mb_per_s < 0:
        return None
    if basket_s is None:  # unmeasured: assumed, over its range
        return assumed_baskets(lambda b: loop_costs(
            file_s, file_mb, calls, extra_baskets, decompress_mb_per_s, b, process_mb_per_s,
            keys, key_s, key_range, first_s))
    per_mb = (1.0 / decompress_mb_per_s if decompress_mb_per_s > 0 else 0.0) + \
        (1.0 / process_mb_per_s if process_mb_per_s else 0.0)
    b = basket_s or 0.0
    left = file_s - file_mb * per_mb - max(extra_baskets, 0.0) * b - max(keys, 0.0) * key_s
    if left <= 0:
        return None
    first = max(first_s, 0.0) if left - max(first_s, 0.0) >= left / 2 else 0.0
    return LoopCosts(call_s=(left - first) / calls, basket_s=b,
                     decompress_mb_per_s=decompress_mb_per_s,
                     process_mb_per_s=process_mb_per_s or 0.0, key_s=key_s,
                     key_range=key_range, first_s=first)
