"""What every rule sees: the site, the dataset, the calibration and the fitted model, and the
one way rules get a predicted speed-up: a scenario through the model."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

from hep_advisor.findings.advice import Verdict
from hep_advisor.findings.recommendation import (
    MIN_SPEEDUP,
    Action,
    Audience,
    Evidence,
    Option,
    Recommendation,
    severity_for,
)
from hep_advisor.models.calcosts import (
    basket_cost,
    collector_per_file,
    dataset_decompression_mb_per_s,
    decompression_basket_s,
    first_call_extra,
    first_touch_cost,
    loop_call_costs,
    loop_cpu_rate,
    loop_refault,
    root_unzip_mb_per_s,
    split_call_cost,
    step_touch,
    uproot_key_cost,
)
from hep_advisor.models.inputspread import InputSpread, input_spread, spanning_access
from hep_advisor.models.reader_baseline import ReaderBaseline, reader_setup_s
from hep_advisor.models.replay import LocalDevice
from hep_advisor.models.replay.cpucosts import (
    MEMORY_GROWTH,
    MEMORY_GROWTH_RANGE,
    SMALL_BASKET_BYTES,
    UPROOT_BASKET_S,
    UPROOT_BASKET_S_RANGE,
    CpuCosts,
    LoopCosts,
    assumed_baskets,
    costs_from,
)
from hep_advisor.models.replay.predict import (
    STEP_BYTES,
    UPROOT_OVERLAP,
    UPROOT_OVERLAP_RANGE,
    LayoutTime,
    MergePrediction,
    Reader,
    layout_time,
    merge_prediction,
    reader_change,
    reader_loop_costs,
)
from hep_advisor.models.replay.sitedevice import site_device
from hep_advisor.models.scenarios import (
    Baseline,
    ModelSummary,
    PredictionPoint,
    Scenario,
    ScenarioResult,
    predict_scenarios,
)
from hep_advisor.models.throughput import ThroughputModel
from hep_advisor.probes.basketmap import BasketMap
from hep_advisor.probes.readtests.readers import ReaderSpec
from hep_advisor.probes.readtests.results import Calibration
from hep_advisor.probes.results import DatasetProfile, SiteProfile, TreeProfile
from hep_advisor.rules.inputs import Inputs, inputs_of
from hep_advisor.rules.narrowing import narrowing
from hep_advisor.rules.rule import Rule


@dataclass(frozen=True)
class Context:
    site: SiteProfile
    dataset: DatasetProfile
    calibration: Calibration | None
    model: ThroughputModel
    baseline: Baseline
    summary: ModelSummary
    verdict: Verdict
    label: str = "dataset"
    inputs: tuple[str, ...] = ()
    #: the branches the program reads (``--branches``; empty: every branch)
    branches: tuple[str, ...] = ()
    level: float = 0.9
    #: the branches the analysis uses (``--uses``; empty: not known)
    uses: tuple[str, ...] = ()
    #: basket maps of sampled files of the largest tree (``hep_advisor.probes.basketmap``), for
    #: replays
    basket_maps: tuple[BasketMap, ...] = field(default=(), repr=False, compare=False)
    #: M001's speed-up from replaying the reads of the merged layout (``hep_advisor.models.replay``)
    #: rather than from the rate model's merge scenario (needs ``basket_maps``); without it
    #: the replay still checks what the merged layout costs each reader
    replay_merge: bool = False
    #: the program's reader (``--reader``, or deduced from a trace): M001's and P001's
    #: speed-ups then replay that reader (needs ``basket_maps``); ``None``: not known
    reader: ReaderSpec | None = None
    #: that reader's baseline, replayed once by the caller (``hep_advisor.models.reader_baseline``);
    #: a rule that needs it computes it where it is ``None``
    reader_baseline: ReaderBaseline | None = None
    #: per context (``replace`` starts a new one): scenario -> its result
    _results: dict[Scenario, ScenarioResult] = field(default_factory=dict, init=False,
                                                     repr=False, compare=False)
    _replays: dict[tuple[object, ...], MergePrediction | None] = field(
        default_factory=dict, init=False, repr=False, compare=False)
    _replay_memo: dict[object, object] = field(default_factory=dict, init=False, repr=False,
                                               compare=False)

    @property
    def replay_memo(self) -> dict[object, object]:
        """Replays kept for this context (layouts, their timings, the shared job), for the
        rules that replay alike: a replay done for one rule is reused by the next."""
        return self._replay_memo

    @property
    def tree(self) -> TreeProfile | None:
        return self.dataset.main_tree

    @property
    def program_reader(self) -> Reader | None:
        """The program's reader as the replay's :class:`Reader` (``None``: not known)."""
        if self.reader is None:
            return None
        from hep_advisor.models.reader_baseline import replay_reader

        return replay_reader(self.reader)

    def reader_context(self) -> Context:
        """This context with the branches the program's reader reads where its spec names
        them (a trace's), for the replays of that reader; else this one."""
        if self.reader is None or not self.reader.branches or \
                tuple(self.reader.branches) == self.branches:
            return self

        if "reader context" not in self._replay_memo:  # one, its replays kept
            self._replay_memo["reader context"] = replace(
                self, branches=tuple(self.reader.branches))
        sub: Context = self._replay_memo["reader context"]  # type: ignore[assignment]
        return sub

    @property
    def workers_now(self) -> int:
        return self.baseline.workers

    @property
    def cores(self) -> int:
        return self.site.cpu.physical_cores or self.site.cpu.logical_cores or 1

    @property
    def logical(self) -> int:
        return self.site.cpu.logical_cores or self.cores

    def run(self, scenario: Scenario) -> ScenarioResult:
        """The scenario through the model, once per scenario (``make`` reuses the result)."""
        if scenario not in self._results:
            self._results[scenario] = predict_scenarios(self.model, self.baseline, [scenario],
                                                        level=self.level)[0]
        return self._results[scenario]

    def predict(self, scenario: Scenario) -> PredictionPoint:
        """The scenario at its own worker count (default: the analysis' as now), with the
        speed-up over the analysis as it runs now."""
        return self.run(scenario).predictions[0]

    def merge_replay(self, per_output: int, optimise: bool,
                     step: int | str | float = STEP_BYTES, *, reader: Reader | None = None,
                     after_reader: Reader | None = None, after_warm: bool = False
                     ) -> MergePrediction | None:
        """The merge of ``per_output`` files at a time replayed (one worker, uproot's
        ``iterate`` at ``step``: by default the event loop's; or ``reader`` today and
        ``after_reader`` on the merged files, pre-staged where ``after_warm``): ``None`` where
        no basket maps were read or the analysis runs several workers."""
        key = (per_output, optimise, step, reader, after_reader, after_warm)
        if key not in self._replays:
            self._replays[key] = self._replay(
                lambda dev, costs, sds, cpu_sd, tree_files: merge_prediction(
                    self.basket_maps, tree_files, per_output, dev, costs, optimise=optimise,
                    branches=self.branches or None, step=step, device_sd=sds,
                    cpu_sd=cpu_sd, jobs=self.cores,  # M001 prints hadd -j <cores>
                    reader=reader, after_reader=after_reader, after_warm=after_warm,
                    memo=self._replay_memo))
        return self._replays[key]

    def reader_replay(self, before: Reader, after: Reader,
                      read_ahead_kb: int | None = None, *, after_warm: bool = False,
                      after_branches: Sequence[str] | None = None
                      ) -> MergePrediction | None:
        """Today's files read with ``before``, then with ``after`` (and the read-ahead
        ``read_ahead_kb``; from the page cache where ``after_warm``: pre-staged; only
        ``after_branches`` where given), replayed: ``None`` as for :meth:`merge_replay`."""
        key = ("reader", before, after, read_ahead_kb, after_warm,
               tuple(after_branches) if after_branches is not None else None)
        if key not in self._replays:
            self._replays[key] = self._replay(
                lambda dev, costs, sds, cpu_sd, tree_files: reader_change(
                    self.basket_maps, tree_files, dev, costs, before, after,
                    after_read_ahead_kb=read_ahead_kb, branches=self.branches or None,
                    device_sd=sds, cpu_sd=cpu_sd, memo=self._replay_memo,
                    after_warm=after_warm, after_branches=after_branches))
        return self._replays[key]

    def replay_device(self) -> LocalDevice:
        """The device of the replay: the calibration's raw read and request sweep, the site's
        read-ahead and largest I/O (see ``hep_advisor.models.replay.sitedevice.site_device``);
        on a disk, the access time the program's reader's cold loop measured where its
        baseline took it from there (``ReaderBaseline.stream_access_ms``)."""
        raw = self.calibration.raw_read if self.calibration is not None else None
        dev = site_device(self.baseline.params, raw, self.site)
        rb = self.reader_baseline
        if rb is not None and rb.stream_access_ms is not None:  # set on a disk alone
            return replace(dev, access_s=rb.stream_access_ms / 1e3)  # the reader's own loop's
        return dev

    def replay_costs(self) -> CpuCosts:
        """The CPU terms of one worker: the warm open where it was measured; the per-call cost
        from the warm event loop with the measured decompression rate where the calibration
        has them (:func:`~models.replay.cpucosts.loop_costs`), else the fitted terms; uproot's
        overlap of I/O and CPU (an assumption, with its range)."""
        opened = self.calibration.open_overhead_s if self.calibration is not None else None
        costs = costs_from(self.baseline.params, self.baseline.row(1),
                           opened.warm if opened else None, loop=self._loop_costs(),
                           overlap=UPROOT_OVERLAP, overlap_range=UPROOT_OVERLAP_RANGE,
                           touch=step_touch(self.calibration),
                           collector_s=collector_per_file(self.calibration),
                           first_call_s=first_call_extra(self.calibration),
                           root_open_s=self._root_open())
        alg = self.tree.compression.algorithm if self.tree is not None else None
        costs = costs.with_decompress_basket(decompression_basket_s(self.calibration, alg))
        costs = self._root_loop_scaled(costs)
        once = reader_setup_s(self.calibration, self.reader.text) if self.reader is not None \
            else 0.0
        return costs.with_once(once) if once > 0 else costs  # paid once per run

    def _root_loop_scaled(self, costs: CpuCosts) -> CpuCosts:
        """Where the calibration's warm event loop ran the program's ``GetEntry`` loop (with
        or without TTreeCache): ROOT's CPU beyond the open taken from that loop, so that the
        reader's warm replay on today's files costs the loop's measured time per event, as
        the reader's baseline does (:func:`~models.reader_baseline.reader_baseline`).  The
        loop's time is its decompression, at ROOT's own rate (its perf stats of the same
        loop's passes, :func:`~models.calcosts.root_unzip_mb_per_s`: for ZLIB and ZSTD the
        decompression test's rates agree, for LZMA-2 ROOT ran at 31 MB/s where Python's lzma
        took 20), and, the rest, a cost per entry read (``CpuCosts.entry_s``), with no cost
        per basket or read call: the same loop over the same data in 1,174 and in 408
        baskets (``hadd -O``, codec kept) took 0.183 and 0.188 s.  Scaled instead as
        uproot's terms (per call, basket and MB), a rewrite's fewer baskets took most of that
        per-entry work away: C001 came out 1.15-1.41x too large on five datasets (the
        program's pass after 0.22 s where 0.15 s was replayed).  Where the decompression
        alone exceeds the loop, it is slowed to it.  Not for RDataFrame, whose loop holds its
        graph's work per event beside the reading (scaled, its pre-staging on one set was
        predicted at 1.06x and 1.60x where 1.35x and 2.03x came; unscaled, 1.24x and
        2.13x).  ``costs`` unchanged for another reader or without the loop."""
        cal, spec, prog = self.calibration, self.reader, self.program_reader
        loop = cal.event_loop if cal is not None else None
        if loop is None or spec is None or prog is None or \
                not spec.kind.startswith("root.") or loop.reader != spec.text or \
                not self.basket_maps:
            return costs
        root = costs.for_engine("root")
        if "root loop split" not in self._replay_memo:  # one replay per context
            self._replay_memo["root loop split"] = self._root_loop_split(costs, root)
        split = self._replay_memo["root loop split"]
        if not isinstance(split, tuple):
            return costs
        dec_rate, dec_basket_s, entry_s = split
        scaled = replace(root, call_s=0.0, basket_s=0.0, key_s=0.0, process_mb_per_s=0.0,
                         decompress_mb_per_s=dec_rate, decompress_basket_s=dec_basket_s,
                         basket_density=costs.basket_density,
                         entry_s=entry_s)
        return replace(costs, root=scaled,
                       variants=tuple(replace(v, root=scaled) for v in costs.variants))

    def _root_loop_split(self, costs: CpuCosts, root: CpuCosts
                         ) -> tuple[float, float, float] | None:
        """The measured warm ``GetEntry`` loop on today's files split
        (:meth:`_root_loop_scaled`): (the decompression rate, compressed MB/s: today's
        codec's measured one, slowed where it alone exceeds the loop; the codec's fixed cost
        per basket, likewise; the cost per entry read).  ``None``: no loop, or no replay."""
        cal, spec, prog = self.calibration, self.reader, self.program_reader
        warm = loop_cpu_rate(cal.event_loop) if cal is not None else None
        if not warm or spec is None or prog is None:
            return None
        measured = root_unzip_mb_per_s(cal)
        if measured is None and cal is not None:  # the decompression test's, on its baskets
            alg = self.tree.compression.algorithm if self.tree is not None else None
            measured = dataset_decompression_mb_per_s(cal, alg)
        root = replace(root, decompress_mb_per_s=float(measured) if measured
                       else root.decompress_mb_per_s,
                       decompress_basket_s=costs.decompress_basket_s,
                       basket_density=costs.basket_density)
        chosen = list(spec.branches) if spec.branches else (list(self.branches) or None)
        try:
            lt = layout_time(self.basket_maps, replace(self.replay_device(), warm=True),
                             costs, branches=chosen, reader=prog)
        except (KeyError, ValueError):
            return None
        if not lt.entries:
            return None
        loop_s = lt.entries / warm
        dec_s = (lt.compressed_mb / root.decompress_mb_per_s
                 if root.decompress_mb_per_s > 0 else 0.0) \
            + root.decompress_fix_s(lt.baskets, lt.compressed_mb)
        if dec_s >= loop_s:  # the codec alone exceeds the loop: slowed to it
            f = loop_s / dec_s if dec_s > 0 else 1.0
            rate = root.decompress_mb_per_s / f if root.decompress_mb_per_s > 0 else 0.0
            return rate, root.decompress_basket_s * f, 0.0
        return root.decompress_mb_per_s, root.decompress_basket_s, (loop_s - dec_s) / lt.entries

    def _root_open(self) -> float | None:
        """ROOT's own warm open per file where the program's ROOT reader measured it
        (``Calibration.reader_open``), else ``None`` (the open test's)."""
        own = self.calibration.reader_open if self.calibration is not None else None
        return float(own.warm) if own is not None and own.warm else None

    def replay_cost_notes(self) -> tuple[str, ...]:
        """The assumption lines of the replay's CPU costs where one is assumed: uproot's cost
        per basket, where the per-basket test did not run."""
        if not self.replay_costs().basket_assumed:
            return ()
        lo, hi = UPROOT_BASKET_S_RANGE
        return (f"uproot's CPU per basket read is assumed at {UPROOT_BASKET_S * 1e6:.0f} µs "
                f"(the range spans {lo * 1e6:.0f}-{hi * 1e6:.0f} µs): the calibration's "
                "per-basket test did not run (a longer --budget runs it); the warm event "
                "loop's time is split with it into per-call and per-basket costs",)

    def touch_evidence(self, before: LayoutTime, after: LayoutTime, what: str
                       ) -> list[Evidence]:
        """The two replays' first writes of a new process's peak memory (part of their CPU):
        one row, where either reads with uproot (a ROOT loop builds no such arrays)."""
        touch = self.replay_costs().touch_s
        if touch <= 0 or not (before.step_mb or after.step_mb):
            return []
        s, (lo, hi), measured = first_touch_cost(self.calibration)
        refault = loop_refault(self.calibration)
        g_lo, g_hi = MEMORY_GROWTH_RANGE
        return [Evidence(
            f"fresh memory now / {what}",
            f"{before.step_mb * MEMORY_GROWTH:.0f} / {after.step_mb * MEMORY_GROWTH:.0f}", "MB",
            "derived",
            f"a new process writes its peak memory once: about {MEMORY_GROWTH:g}x its largest "
            f"step's arrays ({before.step_mb:.0f} / {after.step_mb:.0f} MB; an assumption, "
            f"{g_lo:g}-{g_hi:g}x), at {s * 1e3:.2f} ms per MB "
            f"({'measured' if measured else 'assumed'}, {lo * 1e3:.2f}-{hi * 1e3:.2f})"
            + (f", less the {refault:.1f} MB per MB the calibration's warm loop faulted "
               "again each pass (measured; already in its rate)" if refault > 0 else "")
            + f": {before.step_mb * touch:.2f} / {after.step_mb * touch:.2f} s of the CPU")]

    def key_cost_note(self) -> str | None:
        """The assumption line of uproot's CPU per basket key in a memory-size step's
        pre-pass, where the per-key test did not run (``None`` where it measured it)."""
        key_s, (lo, hi), measured = uproot_key_cost(self.calibration)
        if measured:
            return None
        return (f"uproot's CPU per basket key of a memory-size step's pre-pass is assumed at "
                f"{key_s * 1e6:.0f} µs (the range spans {lo * 1e6:.0f}-{hi * 1e6:.0f} µs): "
                "the calibration's per-key test did not run (a longer --budget runs it)")

    def _loop_costs(self) -> LoopCosts | None:
        """The per-call cost of uproot's plain event loop from the calibration's warm loop
        (:func:`hep_advisor.models.calcosts.loop_call_costs`); where that loop ran the program's own
        uproot reader (``--reader``), from it (:meth:`_reader_loop_costs`)."""
        cal = self.calibration
        if cal is None:
            return None
        loop = cal.event_loop
        if loop is not None and loop.reader is not None:
            if "reader loop costs" not in self._replay_memo:  # one replay per context
                self._replay_memo["reader loop costs"] = self._reader_loop_costs()
            return self._replay_memo["reader loop costs"]  # type: ignore[return-value]
        return loop_call_costs(cal, self.tree)

    def _reader_loop_costs(self) -> LoopCosts | None:
        """:func:`~models.replay.predict.reader_loop_costs`: the calibration's warm loop ran
        the program's uproot reader, so its time per event, less the decompression at the
        measured rate, the baskets beyond one per branch and call and the pre-pass's keys,
        sets the per-call cost (the calls, baskets and keys counted by that reader's replay on
        today's files).  The rates and the small-files condition are
        :func:`~models.calcosts.loop_call_costs`' (the loop read as an entry-step loop
        would), the condition checked again with the reader's own calls (where it fails:
        :meth:`_reader_mb_costs`).  ``None`` (the fitted terms) for another reader, a ROOT
        reader, no maps or no warm loop."""

        from hep_advisor.models.calcosts import LOOP_CALL_MAX_BASKETS

        cal, spec, prog = self.calibration, self.reader, self.program_reader
        loop = cal.event_loop if cal is not None else None
        if cal is None or loop is None or spec is None or prog is None or \
                loop.reader != spec.text or prog.engine != "uproot" or loop.warm is None or \
                not loop.warm.median or not self.basket_maps or self.tree is None:
            return None
        chosen = list(spec.branches) if spec.branches else (list(self.branches) or None)
        try:
            lt = layout_time(self.basket_maps, self.replay_device(), CpuCosts(open_s=0.0),
                             branches=chosen, reader=prog)
        except (KeyError, ValueError):
            return None
        if not lt.branch_calls or not lt.compressed_mb:
            return None
        rates = loop_call_costs(replace(cal, event_loop=replace(loop, reader=None)), self.tree)
        warm = float(loop_cpu_rate(loop) or loop.warm.median)  # or the cold, where faster
        if rates is None or lt.baskets / lt.branch_calls > LOOP_CALL_MAX_BASKETS:
            return self._reader_mb_costs(lt, warm)
        return reader_loop_costs(lt, warm, rates.decompress_mb_per_s,
                                 None if rates.basket_assumed else rates.basket_s,
                                 rates.process_mb_per_s or None, key_s=rates.key_s,
                                 key_range=rates.key_range, first_s=rates.first_s)

    def _reader_mb_costs(self, lt: LayoutTime, warm: float) -> LoopCosts | None:
        """Where the program's reader's calls hold several baskets per branch (larger files):
        its warm loop's time per event (``warm``; ``lt``: its replay on today's files) less
        the fitted per-call cost, the pre-pass's keys and the baskets beyond one per branch
        and call is work per MB: the measured decompression, the rest processing; where the
        baskets are small (at most ``SMALL_BASKET_BYTES`` compressed on average) that rest is
        charged per basket read instead (each branch's first in a call with the call), as a
        merge that keeps the baskets keeps it and one that refills them loses it.  The
        baskets cost what the per-basket test measured, else an assumption over its range
        (:func:`~models.replay.cpucosts.assumed_baskets`); the per-call cost is the per-call
        test's split calls (:func:`~models.calcosts.split_call_cost`), else the fitted one
        where the fit constrained it (one call per file cannot tell it from the baskets'
        cost: 0 then).  ``None`` where nothing is left or the decompression rate is
        unmeasured."""
        cal, tree = self.calibration, self.tree
        if cal is None or tree is None:
            return None
        dec = dataset_decompression_mb_per_s(cal, tree.compression.algorithm)
        if dec is None:
            return None
        key_s, key_range, _ = uproot_key_cost(cal)
        split = split_call_cost(cal, lt.branch_calls / lt.calls) if lt.calls else None
        fitted = self.summary.parameters.get("call_s")
        call = split if split is not None else self.param("call_s") \
            if fitted is not None and fitted.source in ("measured", "fitted") else 0.0

        # the baskets that pay their own cost: beyond one per branch and call where the
        # per-call cost is the fitted one (it holds the first), every one where it is the
        # split calls' (which hold none)
        extra = lt.extra_touches if split is None else lt.baskets

        # each file's first call (the fitted per-call cost leaves it out)
        first = first_call_extra(cal)

        # small baskets: what is left is charged per basket, not per MB
        small = lt.baskets > 0 and lt.compressed_mb * 1e6 / lt.baskets <= SMALL_BASKET_BYTES

        def divided(b: float) -> LoopCosts | None:
            left = lt.entries / warm - lt.calls * call - lt.keys * key_s - extra * b \
                - lt.files * first
            per_mb = left / lt.compressed_mb - (1.0 / dec if dec else 0.0)
            if left <= 0 or per_mb <= 0:
                return None
            if small:
                # the same share per basket read, the first of each branch in a call with it
                r = per_mb * lt.compressed_mb / (lt.touches or lt.baskets)
                held = lt.branch_calls / lt.calls if split is None and lt.calls else 0.0
                return LoopCosts(call_s=call + r * held, basket_s=b + r,
                                 decompress_mb_per_s=dec, process_mb_per_s=0.0, key_s=key_s,
                                 key_range=key_range, first_s=first,
                                 calls_hold_baskets=split is None)
            return LoopCosts(call_s=call, basket_s=b, decompress_mb_per_s=dec,
                             process_mb_per_s=1.0 / per_mb, key_s=key_s, key_range=key_range,
                             first_s=first, calls_hold_baskets=split is None)

        bc = basket_cost(cal, tree.compression.algorithm)
        measured = bc.basket_s if bc is not None else None
        if measured is None:
            return assumed_baskets(divided)
        return divided(measured) or self._scaled_to_loop(
            lt, warm, dec, call, extra, measured, key_s, key_range, split is None)

    @staticmethod
    def _scaled_to_loop(lt: LayoutTime, warm: float, dec: float, call: float, extra: float,
                        basket_s: float, key_s: float, key_range: tuple[float, float],
                        calls_hold_baskets: bool = True) -> LoopCosts | None:
        """Where the measured per-call, per-basket and per-key costs add up to more than the
        warm loop's time beyond its decompression (each was timed at another moment, on a
        machine whose speed moves: on the 1,200-branch validation dataset they over-explained
        it by 40%), the three scaled down together to fill that time, nothing left for
        processing: the loop's own time bounds what a merge or a reader change can save,
        where the fitted terms alone (the fallback) charged the whole loop to its calls.
        ``extra``: the baskets that pay ``basket_s`` (beyond one per branch and call where
        ``calls_hold_baskets``, else every one).  ``None`` where not even the decompression
        fits."""
        fixed = lt.calls * call + lt.keys * key_s + extra * basket_s
        left = lt.entries / warm - (lt.compressed_mb / dec if dec else 0.0)
        if left <= 0 or fixed <= 0:
            return None
        f = min(1.0, left / fixed)
        return LoopCosts(call_s=call * f, basket_s=basket_s * f, decompress_mb_per_s=dec,
                         process_mb_per_s=0.0, key_s=key_s * f,
                         key_range=(key_range[0] * f, key_range[1] * f),
                         calls_hold_baskets=calls_hold_baskets)

    def _replay(self, run: Callable[[LocalDevice, CpuCosts, tuple[float, float], float, int],
                                    MergePrediction]) -> MergePrediction | None:
        tree = self.tree
        if not self.basket_maps or tree is None or self.baseline.workers != 1:
            return None

        sp = self.input_spread
        try:
            return run(self.replay_device(), self.replay_costs(), (sp.bandwidth, sp.access),
                       sp.cpu, tree.files)
        except (KeyError, ValueError):  # a branch the maps lack, an empty map
            return None

    @cached_property
    def input_spread(self) -> InputSpread:
        """The replays' inputs' run-to-run spreads, from the calibration's repeats
        (:func:`hep_advisor.models.inputspread.input_spread`); on a disk where the program's
        reader's cold loop implies another access time than the request sweep's, the access
        time's spans both (:func:`~hep_advisor.models.inputspread.spanning_access`)."""
        spread = input_spread(self.calibration)
        rb = self.reader_baseline
        if rb is not None and rb.loop_access_ms is not None and rb.swept_access_ms is not None:
            spread = spanning_access(spread, rb.swept_access_ms, rb.loop_access_ms)
        return spread

    @cached_property
    def paths(self) -> Inputs:
        """The inputs as the printed commands name them (see :mod:`.inputs`)."""
        return inputs_of(self.inputs, self.dataset.file_paths)

    def param(self, name: str) -> float:
        return float(getattr(self.baseline.params, name, 0.0))

    def param_evidence(self, name: str, label: str, scale: float = 1.0, unit: str = "",
                       digits: int = 3) -> Evidence:
        p = self.summary.parameters.get(name)
        source = "fitted"
        note = None
        if p is not None:
            source = {"measured": "measured", "fitted": "fitted", "assumed": "assumed",
                      "fixed": "assumed"}[p.source]
            if p.uncertainty is not None:
                note = f"± {_round(p.uncertainty * scale, digits)} (1σ)"
            elif p.source == "assumed":
                note = ("no measurement constrains it: where the fit left it, with no interval "
                        "of its own")
        return Evidence(label, _round(self.param(name) * scale, digits), unit or
                        (p.unit if p else ""), source, note)  # type: ignore[arg-type]

    def make(self, *, rule: Rule, title: str, audience: Audience,
             point: PredictionPoint, scenario: Scenario, summary: str,
             evidence: Sequence[Evidence], actions: Sequence[Action],
             options: Sequence[Option] = (), extra_assumptions: Sequence[str] = (),
             keep: bool = False) -> Recommendation | None:
        """The recommendation, or ``None`` when the predicted speed-up is below
        ``MIN_SPEEDUP`` (it does not apply; ``keep``: made all the same, for a caller that
        marks it not recommended)."""
        if point.speedup is None:
            return None
        s = round(point.speedup, 3)  # the figure shown: the severity and the cut are its
        if s < MIN_SPEEDUP and not keep:
            return None
        low, high = round(point.speedup_low or s, 3), round(point.speedup_high or s, 3)
        severity = severity_for(s, low, high)
        wide = narrowing(rule, severity, low, high)
        return Recommendation(
            code=rule.code, kind=rule.kind, title=title, severity=severity,
            audience=audience,
            predicted_speedup=s, speedup_low=low, speedup_high=high, workers=point.workers,
            scenario=scenario.name, summary=summary,
            evidence=(*evidence, *((wide,) if wide is not None else ())),
            actions=tuple(actions),
            assumptions=tuple(dict.fromkeys((*self.run(scenario).assumptions,
                                             *extra_assumptions))),
            options=tuple(options), dataset=self.label)


def _round(x: float, digits: int) -> float:
    from math import floor, log10

    if x == 0 or x != x:
        return x
    return round(x, max(0, digits - 1 - floor(log10(abs(x)))))
