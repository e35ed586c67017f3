"""``hep-advisor try``: a recommendation tried on a sample before it is applied.

A representative sample of the files (spread evenly over the sorted list; an entry range of one
file where a single file exceeds the sample) is sized to the budget, the recommendation is
applied to it in a scratch directory (``apply``'s own writer: ``hadd``, or uproot), and the
same read (every leaf branch, or ``branches``, and the ``analysis`` where given, files opened
inside the timing) is timed on the sample before and after, cold (every file evicted from the
page cache first), in alternating order after an untimed warm-up read; a read shorter than
``trial_run.MIN_PHASE_S`` is repeated, cold each time, within its pass. The realised speed-up
is the ratio of the median times (the same events). It is compared with the recommendation's
predicted speed-up and interval, and with the model's prediction for the sample as it was
changed (a merge of a sample smaller than the recommended target merges to a smaller file: the
model predicts that too). The scratch directory is removed whatever happens; the inputs are
only read.
"""

from __future__ import annotations

import os
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from hep_advisor.findings.trial import Sample, Timing, TrialResult
from hep_advisor.pipeline.apply import SETTINGS, make_plan
from hep_advisor.pipeline.trial_run import (
    MIN_PHASE_S,
    alternate,
    basket_entries,
    same_fs,
    scratch_dir,
    uncompressed_per_branch_entry,
    write_entry_range,
)
from hep_advisor.rules.registry import RULES, tryable

if TYPE_CHECKING:
    from hep_advisor.findings.advice import Advice
    from hep_advisor.findings.recommendation import Recommendation
    from hep_advisor.models.scenarios import Scenario

DEFAULT_BUDGET_S = 60.0
#: Timed passes before and after: at least, and at most.
MIN_PAIRS, MAX_PAIRS = 3, 30
#: Assumed rate of writing the sample (MB/s of input), to size it to the budget.
WRITE_MB_PER_S = 20.0
#: Smallest and largest sample (MB) sized from the budget.
MIN_SAMPLE_MB, MAX_SAMPLE_MB = 1.0, 2000.0

Progress = Callable[[float, str], None]


class TrialError(ValueError):
    """The recommendation cannot be tried (the message is one line)."""


def try_recommendation(advice: Advice, code: str, *, budget_s: float = DEFAULT_BUDGET_S,
                       sample_mb: float | None = None, scratch: str | None = None,
                       analysis: str | Callable[[Any], Any] | None = None,
                       branches: Sequence[str] | None = None,
                       progress: Progress | None = None,
                       cancel: threading.Event | None = None,
                       refit: bool = True, store: bool = True,
                       reader: Any = None) -> TrialResult:
    """Try ``advice``'s recommendation ``code`` on a sample (see the module's docstring).
    ``sample_mb`` fixes the sample's size (default: sized to ``budget_s``).  Raises
    :class:`TrialError` when the recommendation is absent or cannot be tried.  With ``refit``
    (and a fitted model), the two timed points are fed back into the model and the
    recommendations ranked again (``TrialResult.refitted``, see
    :mod:`hep_advisor.pipeline.trial_refit`); with ``store`` the two points are kept with the files'
    cached advice, and later ``advise()`` runs of the same unchanged files refit with them
    (``TrialResult.stored``).  ``reader``: the program's reader that times the sample (a spec
    such as ``"uproot.iterate"``, a trace JSON file or a ``ReaderSpec``; default: the reader
    the advice is for, named or assumed: ``advice.options.reader``)."""
    from hep_advisor.pipeline.derive import reader_spec
    from hep_advisor.probes.readtests.eventloop import resolve_analysis

    t_start = time.perf_counter()
    code = code.upper()
    rec = advice.recommendation(code)
    if rec is None:
        have = ", ".join(r.code for r in advice.recommendations) or "none"
        raise TrialError(f"{advice.label}: no {code} among the recommendations ({have})")
    if rec.code not in tryable():
        raise TrialError(f"{rec.code} ({rec.kind}) changes no file: try knows "
                         f"{', '.join(tryable())}")
    tree = advice.dataset.main_tree
    files = [p for p in advice.dataset.file_paths if os.path.exists(p)]
    if not files and advice.inputs:  # a cached probe does not keep the file list
        from hep_advisor.pipeline.apply import ApplyError, input_files

        try:
            files = [p for p, _ in input_files(advice.inputs)]
        except ApplyError as exc:
            raise TrialError(str(exc)) from None
    if tree is None or not files:
        raise TrialError(f"{advice.label}: no readable files")
    func, _ = resolve_analysis(analysis)
    spec = advice.options.reader if reader is None else reader_spec(reader)
    notes: list[str] = [_timed_with(spec)]

    def say(fraction: float, message: str) -> None:
        if progress is not None:
            progress(min(1.0, fraction), message)

    def check() -> None:
        if cancel is not None and cancel.is_set():
            raise KeyboardInterrupt

    rate = (advice.verdict.mb_per_s if advice.verdict else None) or 50.0
    if sample_mb is None:
        speed = max(rec.predicted_speedup, 1.0)
        per_mb = 3 * (1 / rate) * (1 + 1 / speed) + 1 / WRITE_MB_PER_S
        sample_mb = min(max(0.6 * budget_s / per_mb, MIN_SAMPLE_MB), MAX_SAMPLE_MB)
    sizes = {p: os.path.getsize(p) for p in files}
    with scratch_dir(files, scratch) as tmp:
        if not same_fs(files[0], str(tmp)):
            notes.append(f"the scratch directory {tmp} is on another file system than the "
                         "data: the after-reads ran there")
        say(0.05, "writing the sample")
        picked, entry_stop, outputs, method, scen = _apply_to_sample(
            advice, rec, tree.name, files, sizes, sample_mb * 1e6, str(tmp), notes, check)
        out_bytes = sum(os.path.getsize(o) for o in outputs)
        in_bytes = sum(sizes[p] if p not in entry_stop else
                       int(sizes[p] * entry_stop[p] / max(basket_entries(p, tree.name)[0], 1))
                       for p in picked)
        spent = time.perf_counter() - t_start
        say(0.1, "timing the sample before and after (cold)")

        def on_pair(n: int, b: Any, a: Any) -> None:
            elapsed = time.perf_counter() - t_start
            say(0.1 + 0.9 * min(1.0, (elapsed - spent) / max(budget_s - spent, 1e-9)),
                f"pass {n}: before {b.seconds:.2f} s, after {a.seconds:.2f} s")

        try:
            passes = alternate(picked, outputs, tree.name, branches=branches, analysis=func,
                               entry_stop=entry_stop, budget_s=max(budget_s - spent, 0.0),
                               min_pairs=MIN_PAIRS, max_pairs=MAX_PAIRS, check=check,
                               on_pair=on_pair, reader=spec)
        except ValueError as exc:
            raise TrialError(f"the sample after the change: {exc}") from None
        before, after = list(passes.before), list(passes.after)
        if passes.repeats_before > 1 or passes.repeats_after > 1:
            notes.append(f"one read of the sample is shorter than {MIN_PHASE_S:g} s: each "
                         f"timed pass reads it {passes.repeats_before} time(s) before and "
                         f"{passes.repeats_after} after, cold each time (the mean of a "
                         "pass's reads is its time)")
        scratch_path = str(tmp)
    tb = _timing(before, in_bytes, passes.repeats_before)
    ta = _timing(after, in_bytes, passes.repeats_after)
    if tb.cache != "cold" or ta.cache != "cold":
        notes.append(f"eviction not confirmed for every pass (before: {tb.cache}, after: "
                     f"{ta.cache}): the timings may include cached reads")
    realised = tb.seconds / ta.seconds if ta.seconds > 0 else float("inf")
    sp = _predict_sample(advice, scen)
    if rec.workers != 1:
        notes.append(f"the recommendation's prediction is for {rec.workers} workers; the "
                     "sample was read by one")
    result = TrialResult(
        code=rec.code, title=rec.title, scenario=rec.scenario,
        sample=Sample(len(picked), in_bytes, tb.entries, method, len(outputs), out_bytes),
        predicted_speedup=rec.predicted_speedup, speedup_low=rec.speedup_low,
        speedup_high=rec.speedup_high, realised_speedup=round(realised, 4),
        before=tb, after=ta,
        within_interval=rec.speedup_low <= realised <= rec.speedup_high,
        sample_scenario=scen.name if scen is not None and sp is not None else None,
        sample_predicted_speedup=sp[0] if sp else None,
        sample_speedup_low=sp[1] if sp else None, sample_speedup_high=sp[2] if sp else None,
        workers=1, budget_s=budget_s, elapsed_s=round(time.perf_counter() - t_start, 3),
        scratch=scratch_path, notes=tuple(notes))
    if not refit or scen is None or advice.fitted is None or advice.calibration is None:
        return result
    from hep_advisor.pipeline import trial_refit as tr

    key = _cache_key(advice, branches, analysis) if store else None
    try:
        point = tr.trial_point(advice, result, scen)
        # the trials of other codes stored for these files, and this one
        points = [p for p in tr.load_trials(key) if p.code != rec.code] + [point]
        again = tr.refit_with(advice, points, branches=branches)
    except ValueError as exc:
        return replace(result, notes=(*result.notes, f"no refit: {exc}"))
    stored = tr.store_trial(key, point) if store else None
    new = again.recommendation(rec.code)
    return replace(result, refit=True, refitted=again,
                   stored=str(stored) if stored is not None else None,
                   refit_predicted_speedup=new.predicted_speedup if new else None,
                   refit_speedup_low=new.speedup_low if new else None,
                   refit_speedup_high=new.speedup_high if new else None,
                   refit_ranking=tuple(r.code for r in again.recommendations))


def _cache_key(advice: Advice, branches: Sequence[str] | None,
               analysis: str | Callable[[Any], Any] | None) -> str | None:
    """The key ``advise()`` caches these files' calibration and advice under (its engine and
    the reader the advice is for)."""
    from hep_advisor.pipeline.advise import engine_key
    from hep_advisor.pipeline.cache import cache_key

    if not advice.inputs:
        return None
    name = analysis if isinstance(analysis, str) or analysis is None else \
        f"{getattr(analysis, '__module__', '?')}:{getattr(analysis, '__qualname__', '?')}"
    engine = advice.calibration.engine if advice.calibration is not None else "uproot"
    return cache_key(list(advice.inputs), engine_key(engine, advice.options.reader), branches,
                     name)


def _timing(reads: list[Any], in_bytes: int, repeats: int = 1) -> Timing:
    secs = [r.seconds for r in reads]
    med = statistics.median(secs)
    flags = [r.cold for r in reads]
    cache = "cold" if all(f is True for f in flags) else "warm" if all(
        f is None for f in flags) else "mixed"
    n = reads[0].entries
    return Timing(round(med, 6), tuple(round(s, 6) for s in secs), n,
                  round(n / med, 3) if med > 0 else 0.0,
                  round(in_bytes / 1e6 / med, 3) if med > 0 else 0.0, cache, repeats)


def _apply_to_sample(advice: Advice, rec: Recommendation, tree_name: str, files: list[str],
                     sizes: dict[str, int], sample_bytes: float, tmp: str, notes: list[str],
                     check: Callable[[], None]
                     ) -> tuple[list[str], dict[str, int], list[str], str, Scenario | None]:
    """Pick the sample, write it changed into ``tmp``: (inputs, entry stops, outputs, method,
    the scenario the model predicts the sample with)."""
    from hep_advisor.pipeline.apply_write import write_output
    from hep_advisor.probes.dataset import sample_indices

    mean = sum(sizes.values()) / len(sizes)
    k = max(1, int(sample_bytes // max(mean, 1)))
    if _change(rec) == "merge":
        k = max(2, k)
    picked = [files[i] for i in sample_indices(len(files), k)]
    entry_stop: dict[str, int] = {}
    target = next((float(e.value) for e in rec.evidence if e.name == "target size"
                   and isinstance(e.value, (int, float))), None)
    optimize = "hadd -O" in rec.scenario
    alg = _algorithm(rec)
    if _change(rec) != "merge" and len(picked) == 1 and sizes[picked[0]] > 2 * sample_bytes:
        # an entry range of one file, rewritten with uproot
        src = picked[0]
        n, per_basket = basket_entries(src, tree_name)
        stop = max(1, min(n, int(n * sample_bytes / sizes[src])))
        entry_stop[src] = stop
        if _change(rec) == "rewrite":
            per = uncompressed_per_branch_entry(src, tree_name)
            per_basket = max(per_basket, 32_000 / max(per, 1e-9))
        dst = os.path.join(tmp, "sample.root")
        write_entry_range(src, tree_name, dst, stop, int(per_basket),
                          SETTINGS[alg] if _change(rec) == "compression" and alg else None)
        notes.append(f"sample: the first {stop:,} of {n:,} entries of {os.path.basename(src)}"
                     ", rewritten with uproot (the before-reads read the same entries)")
        return [src], entry_stop, [dst], "entries", _scenario(advice, rec, None)
    if _change(rec) == "merge" and target is not None:
        # whole groups of the full application's plan: each sampled output merges the inputs
        # it would merge there
        full = make_plan("M001", files, tmp, target_mb=target, optimize=optimize)
        mean_group = sum(o.input_bytes for o in full.outputs) / len(full.outputs)
        if len(full.outputs) > 1 and mean_group <= 1.5 * sample_bytes:
            g = max(1, int(sample_bytes // mean_group))
            chosen = [full.outputs[i] for i in sample_indices(len(full.outputs), g)]
            picked = [p for o in chosen for p in o.inputs]
            outputs = []
            for o in chosen:
                path = os.path.join(tmp, o.name)
                write_output(full, o, path, check)
                outputs.append(path)
            if g < len(full.outputs):
                notes.append(f"sample: {g} of the {len(full.outputs)} merged files the full "
                             "application writes, each from the same inputs")
            group_mb = sum(os.path.getsize(p) for p in outputs) / 1e6 / len(outputs)
            return picked, entry_stop, outputs, "files", _scenario(advice, rec, group_mb)
    sample_mb = sum(sizes[p] for p in picked) / 1e6
    if _change(rec) == "merge" and (target is None or target > sample_mb):
        notes.append(f"the sample ({sample_mb:,.1f} MB) is smaller than the recommended merge "
                     f"target ({target or 0:,.0f} MB): it was merged into one file of its size; "
                     "compare with the sample's prediction")
        target = sample_mb * 2
    plan = make_plan(rec.code, picked, tmp, target_mb=target, optimize=optimize,
                     algorithm=alg or "ZSTD")
    outputs = []
    for o in plan.outputs:
        path = os.path.join(tmp, o.name)
        write_output(plan, o, path, check)
        outputs.append(path)
    merged_mb = None
    if _change(rec) == "merge":
        merged_mb = sum(os.path.getsize(p) for p in outputs) / 1e6 / len(outputs)
    return picked, entry_stop, outputs, "files", _scenario(advice, rec, merged_mb)


def _algorithm(rec: Recommendation) -> str | None:
    words = rec.title.split()
    if _change(rec) == "compression" and "with" in words:
        return words[words.index("with") + 1].upper()
    return None


def _scenario(advice: Advice, rec: Recommendation, merged_mb: float | None) -> Scenario | None:
    """The model's scenario for the sample as it was changed."""
    from hep_advisor.models import scenarios as sc
    from hep_advisor.rules.files import ROOT_BASKET_BYTES

    tree = advice.dataset.main_tree
    factor = (tree.compression_factor if tree else None) or 1.0
    if _change(rec) == "merge" and merged_mb:
        scen = sc.merge(merged_mb)
        if "hadd -O" in rec.scenario:
            scen = sc.combine(scen, sc.rebasket(ROOT_BASKET_BYTES / factor),
                              name=f"{scen.name}, hadd -O")
        return scen
    if _change(rec) == "rewrite":
        kb = next((float(e.value) for e in rec.evidence
                   if e.name == "basket size after the rewrite"
                   and isinstance(e.value, (int, float))), None)
        return sc.rebasket(kb * 1e3 if kb else ROOT_BASKET_BYTES / factor)
    alg = _algorithm(rec)
    return sc.compression(alg) if alg else None


def _predict_sample(advice: Advice, scen: Scenario | None
                    ) -> tuple[float, float, float] | None:
    if scen is None or advice.fitted is None or advice.baseline is None:
        return None
    from hep_advisor.models.scenarios import predict_scenarios

    try:
        p = predict_scenarios(advice.fitted, advice.baseline, [scen], workers=[1])[0]
    except ValueError:
        return None
    pt = p.predictions[0]
    if pt.speedup is None:
        return None
    return (round(pt.speedup, 4), round(pt.speedup_low or pt.speedup, 4),
            round(pt.speedup_high or pt.speedup, 4))


def _timed_with(spec: Any) -> str:
    """The note that says which reader timed the sample."""
    if spec is None:
        return "timed with the advisor's own event loop (--reader advisor)"
    who = "the default reader (assumed; --reader names yours)" if spec.assumed else \
        "your reader"
    return f"timed with {who}: {spec.describe()}"


def _change(rec: Recommendation) -> str | None:
    """The files' change that ``rec``'s rule makes (its record's ``change``)."""
    r = RULES.get(rec.code)
    return None if r is None else r.change
