"""Advice from measurements already made, written once: fit -> summarise -> verdict -> rules.

:func:`fit` fits the rate model to a calibration (and to a trial's two measured points, where
given) and summarises its predictions over worker counts; :func:`advise_from` derives the
verdict and the ranked recommendations from that fit, the basket maps the replays read and the
program's reader.  ``advise()`` (a new or cached calibration), ``hep-advisor calibrate`` (the
fit alone), ``try``'s refit (:mod:`.trial_refit`) and the TUI all come here, so that advice
refitted after a ``try`` keeps its reader, its replays and its remote rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from hep_advisor.findings.advice import Advice, AdviceOptions, ReaderUsed
from hep_advisor.probes.readtests.pace import pace_line
from hep_advisor.probes.readtests.results import Calibration
from hep_advisor.probes.results import DatasetProfile, SiteProfile

from .basketmaps import sample_basket_maps

if TYPE_CHECKING:
    from hep_advisor.findings.cluster import ClusterAdvice
    from hep_advisor.findings.trace import Trace
    from hep_advisor.findings.trial import TrialPoint
    from hep_advisor.models.reader_baseline import ReaderBaseline
    from hep_advisor.models.scenarios import Baseline, ModelSummary
    from hep_advisor.models.throughput import ThroughputModel
    from hep_advisor.probes.basketmap import BasketMap
    from hep_advisor.probes.readtests.readers import ReaderSpec


@dataclass(frozen=True)
class Fitted:
    """The rate model fitted to a calibration, the baseline its scenarios start from, and its
    predictions over worker counts."""

    model: ThroughputModel
    baseline: Baseline
    summary: ModelSummary


def fit(cal: Calibration, dataset: DatasetProfile, site: SiteProfile, *,
        maps: Sequence[BasketMap] = (), workers: Sequence[int] = (), level: float = 0.9,
        trials: Sequence[TrialPoint] = (), access: Any = None) -> Fitted:
    """The model fitted to ``cal`` (and to the ``trials``' before and after points), its
    predictions for 1 .. 2 x the logical cores (and ``workers``).  ``maps``: basket maps of
    some of the files (a local file's cold device I/Os); ``access`` overrides the access
    pattern guessed from the branch count.  Raises ``ValueError`` when it cannot be fitted."""
    from hep_advisor.models.calibrated import calibrated_baseline
    from hep_advisor.models.scenarios import summarize

    extra_X = extra_y = None
    if trials:
        from hep_advisor.models.physics import config_matrix

        extra_X = config_matrix([r for p in trials for r in (p.before, p.after)])
        extra_y = [v for p in trials for v in (p.before_mb_per_s, p.after_mb_per_s)]
    model, baseline = calibrated_baseline(cal, dataset, site, extra_X=extra_X, extra_y=extra_y,
                                          access=access, maps=maps)
    logical = site.cpu.logical_cores or 1
    counts = sorted({*range(1, 2 * logical + 1), *workers})
    return Fitted(model, baseline, summarize(model, baseline, counts, level=level))


def advise_from(site: SiteProfile, dataset: DatasetProfile, calibration: Calibration | None,
                *, label: str = "dataset", inputs: Sequence[str] = (),
                calibration_created: str | None = None,
                branches: Sequence[str] | None = None, level: float = 0.9,
                uses: Sequence[str] | None = None, replay_merge: bool = False,
                basket_maps: Sequence[BasketMap] | None = None, reader: Any = None,
                trials: Sequence[TrialPoint] = (), trials_stored: bool = False,
                access: Any = None) -> Advice:
    """The verdict and the ranked recommendations from measurements already made.
    ``branches``: what the program reads (default: every branch); ``uses``: what the analysis
    uses, when known.  The basket maps of a few files (metadata only; ``basket_maps`` where
    given) are read for replays: M001 checks what the merged layout costs the readers users
    run and offers what removes scattered reads; T001 and A001 say what the replay predicts.
    ``replay_merge``: M001's own speed-up also comes from the replay (the event loop's reads
    of the merged layout through a model of the device, ``hep_advisor.models.replay``) instead
    of the rate model's merge scenario.  Off by default: on the validation data the replay was
    not closer to what the merge realised (benchmarks/validation/bench_merge_replay.py).
    ``trials``: measured trials (``try``) fitted with the calibration, each tried recommendation
    then carrying a ``measured trial`` evidence line (``trials_stored``: they came from the cache,
    said in the note)."""
    from hep_advisor.rules import Context, recommend
    from hep_advisor.rules.branches import selection_notes
    from hep_advisor.rules.engine import ENGINE_RATE_MODEL, replay_engine, with_engine
    from hep_advisor.rules.verdict import verdict

    notes: list[str] = list(selection_notes(dataset, branches, uses))
    engine = calibration.engine if calibration is not None else "uproot"
    tree = dataset.main_tree
    spec = reader_spec(reader, engine)
    if spec is not None and spec.assumed and tree is not None and tree.format == "rntuple":
        spec = None  # the replays model TTree readers: an RNTuple's loop is the advisor's
    sampled: tuple[BasketMap, ...] | None = None if basket_maps is None else tuple(basket_maps)

    def maps_once() -> tuple[BasketMap, ...]:  # read at most once, where a rule needs them
        nonlocal sampled
        if sampled is None:
            sampled = sample_basket_maps(dataset, inputs=inputs)
        return sampled

    fitted = None
    if calibration is not None:
        try:  # a local file's device I/Os, read whole and cold, come from its basket map
            fitted = fit(calibration, dataset, site, maps=maps_once(), level=level,
                         trials=trials, access=access)
        except ValueError as exc:
            notes.append(no_model_note(calibration, exc))
    if calibration is not None and calibration.partial:
        notes.append("the calibration was cancelled: the advice rests on partial results")
    if calibration is not None and calibration.machine is not None \
            and (calibration.machine.unsteady or calibration.machine.slow):
        notes.append(pace_line(calibration.machine))
    recs: tuple = ()
    v = None
    rb: ReaderBaseline | None = None
    rb_why: list[str] = []
    if fitted is not None:
        v = verdict(fitted.baseline)
        maps = maps_once() if fitted.baseline.workers == 1 else ()  # the replay: one worker
        if spec is not None:  # the program's reader, replayed once: W001 and the report
            rb, rb_why = reader_baseline_of(spec, dataset, calibration, site, fitted.baseline,
                                            branches, maps_once())
        ctx = Context(site=site, dataset=dataset, calibration=calibration, model=fitted.model,
                      baseline=fitted.baseline, summary=fitted.summary, verdict=v,
                      label=label, inputs=tuple(inputs), branches=tuple(branches or ()),
                      level=level, uses=tuple(uses or ()), basket_maps=maps,
                      replay_merge=replay_merge, reader=spec, reader_baseline=rb)
        replayed = replay_engine(ctx)  # the verdict and the scaling: the reader replayed
        if isinstance(replayed, str):
            summary = replace(fitted.summary, engine=ENGINE_RATE_MODEL,
                              engine_note=f"the fitted rate model: {replayed}")
            if calibration is not None and calibration.remote is None:  # said, not hidden
                notes.append(f"the verdict and the scaling come from the fitted rate model, "
                             f"not the replay of your reader: {replayed}")
        else:
            v, summary = replayed
        fitted = replace(fitted, summary=summary)
        ctx = with_engine(ctx, v, summary)
        recs = tuple(recommend(ctx))
    if calibration is not None and calibration.remote is not None:  # X001-X003, T001: the link
        from hep_advisor.findings.recommendation import rank_key
        from hep_advisor.rules.registry import narrowed
        from hep_advisor.rules.remote import link_notes, remote_rules

        rmaps = maps_once()
        remote = remote_rules(dataset, calibration, rmaps, branches, label=label)
        recs = tuple(sorted((*recs, *map(narrowed, remote)), key=rank_key))
        notes = [n for n in notes if not n.startswith("no model")] + link_notes(
            calibration, dataset, rmaps, branches)
    if spec is not None and fitted is not None:  # the program's reader, replayed above
        notes += rb_why if rb is None else [reader_note(rb, spec.assumed)]
    if trials and fitted is not None:
        recs = _with_trials(recs, trials)
        where = "stored with the cached advice" if trials_stored else "of this run"
        notes.append(f"refitted with {len(trials)} measured trial(s) {where}: "
                     + "; ".join(p.label() for p in trials))
    options = AdviceOptions(branches=tuple(branches or ()), uses=tuple(uses or ()),
                            level=level, replay_merge=replay_merge, reader=spec,
                            basket_maps=sampled)
    return Advice(label=label, site=site, dataset=dataset, calibration=calibration,
                  model=None if fitted is None else fitted.summary, verdict=v,
                  recommendations=recs, inputs=tuple(inputs),
                  calibration_created=calibration_created, notes=tuple(notes),
                  fitted=None if fitted is None else fitted.model,
                  baseline=None if fitted is None else fitted.baseline, reader_baseline=rb,
                  reader=reader_used(spec, tree), options=options)


#: The measurements the fit cannot do without: (the calibration's field, the read test's
#: name in ``Calibration.skipped``, what a person calls it).
FIT_NEEDS = (("event_loop", "event_loop", "the event loop"),
             ("raw_read", "raw_read", "the storage's cold reads"),
             ("decompression", "decompression", "the decompression test"))


def no_model_note(cal: Calibration, exc: Exception) -> str:
    """Why there is no model, said so that a person can act: the measurements the fit needs
    that the calibration lacks (and why each was skipped), and the command that measures them;
    else the fit's own error, and how to calibrate again."""
    skipped = {s.test: s.reason for s in cal.skipped}
    missing = [(name, skipped.get(test)) for attr, test, name in FIT_NEEDS
               if not getattr(cal, attr, None)]
    again = f"hep-advisor report --recalibrate --budget {max(60.0, 2 * cal.budget_s):.0f}"
    if missing:
        what = "; ".join(f"{n} ({why})" if why else n for n, why in missing)
        return (f"no model: the calibration lacks {what}, which the fit needs: calibrate "
                f"again with more time ({again}, with your paths)")
    return f"no model: the fit could not be computed ({exc}); calibrate again ({again})"


def _with_trials(recs: tuple, trials: Sequence[TrialPoint]) -> tuple:
    """Each tried recommendation with its latest trial as a ``measured trial`` line."""
    from hep_advisor.findings.recommendation import Evidence

    latest = {p.code: p for p in trials}
    out = []
    for r in recs:
        p = latest.get(r.code)
        if p is not None:
            r = replace(r, evidence=(*r.evidence, Evidence(
                "measured trial", round(p.realised_speedup, 3), "x", "measured",
                f"hep-advisor try on {p.sample_files} file(s), {p.sample_bytes / 1e6:,.1f} "
                f"MB ({p.created[:10]}); the model was refitted with its before and after "
                "reads")))
        out.append(r)
    return tuple(out)


def with_cluster_advice(advice: Advice, cluster: ClusterAdvice) -> Advice:
    """``advice`` with the cluster's part: its recommendations (D001-D003) ranked among the
    others, and why there is none (a note) where the cluster could not be used."""
    from hep_advisor.findings.recommendation import rank_key

    recs = tuple(sorted((*advice.recommendations, *cluster.recommendations), key=rank_key))
    notes = advice.notes + ((f"cluster: {cluster.error}",) if cluster.error else ())
    return replace(advice, cluster=cluster, recommendations=recs, notes=notes)


def with_trace(advice: Advice, trace: Trace) -> Advice:
    """``advice`` with the user's program, traced: its reader findings (U0xx) as notes."""
    from hep_advisor.findings.trace import trace_notes

    return replace(advice, notes=advice.notes + trace_notes(trace), trace=trace)


# -- the program's reader ----------------------------------------------------------------------
#: How to name the reader, where the advice assumed one.
CHANGE_READER = ("name yours with --reader (uproot.iterate:step_size=5000, uproot.arrays, "
                 "root.getentry, root.ttreecache, rdataframe) or --reader TRACE.json (from "
                 "hep-advisor trace)")
#: ``--reader advisor``: no reader of the user's: the advisor's own event loop.
ADVISOR_LOOP = "advisor"


def reader_spec(reader: Any, engine: str = "uproot",
                analysis: Any = None) -> ReaderSpec | None:
    """A reader spec (text, a trace JSON file, or a ``ReaderSpec``) parsed; ``ValueError``
    (one line) for a bad one.  Not named (``None``): the engine's documented default reader,
    assumed (``ReaderSpec.assumed``), but for ``--analysis`` with ROOT's engine (a Python
    function on uproot's arrays runs in the advisor's own loop); ``"advisor"``: the
    advisor's own event loop, no reader of the user's (``None``)."""
    from hep_advisor.probes.readtests.readers import ReaderSpec, default_reader, parse_reader

    if reader is None:
        return None if analysis is not None and engine != "uproot" else default_reader(engine)
    if isinstance(reader, ReaderSpec):
        return reader
    if str(reader).strip().lower() == ADVISOR_LOOP:
        return None
    return parse_reader(str(reader))


def reader_used(spec: ReaderSpec | None, tree: Any) -> ReaderUsed:
    """What the advice says about the reader it is for (its first lines)."""
    if spec is not None:
        return ReaderUsed(spec.text, spec.describe(), spec.assumed,
                          CHANGE_READER if spec.assumed else
                          "--reader names another (or --reader TRACE.json)")
    what = ("the advisor's own loop: the RNTuple's fields read in whole clusters" if
            tree is not None and tree.format == "rntuple" else
            "the advisor's own loop, with your --analysis")
    return ReaderUsed("advisor", what, True, CHANGE_READER)


def opening(rb: ReaderBaseline) -> str:
    """Whether the calibration's loop with ``rb``'s reader timed the files' opening."""
    from hep_advisor.probes.readtests.readers import parse_reader

    try:
        timed = parse_reader(rb.reader).opens_in_loop
    except ValueError:
        timed = False
    return "opening timed, as in a program" if timed else "opening not timed"


def reader_note(rb: ReaderBaseline, assumed: bool = False) -> str:
    """The reader baseline in one line (the advice's notes: every view shows them);
    ``assumed``: the reader was not named (the engine's default)."""
    measured = "" if rb.measured_events_per_s is None else (
        f"; the calibration's loop with that reader measured "
        f"{rb.measured_events_per_s:,.0f} events/s ({rb.measured_cache}, {opening(rb)})"
        + ("" if rb.measured_baseline_events_per_s is None else
           f", {rb.measured_baseline_events_per_s:,.0f} with the cold open per file"))
    who = "the default reader (assumed)" if assumed else "your program"
    return (f"baseline as {who} reads ({rb.description}): predicted "
            f"{rb.events_per_s:,.0f} events/s, 1 worker, cold, files opened (replayed I/O "
            f"{rb.io_s:.2f} s + fitted CPU {rb.cpu_s:.2f} s){measured}")


def reader_baseline_of(spec: ReaderSpec, dataset: DatasetProfile,
                       calibration: Calibration | None, site: SiteProfile, baseline: Any,
                       branches: Sequence[str] | None, maps: Sequence[BasketMap]
                       ) -> tuple[ReaderBaseline | None, list[str]]:
    """The program's reader replayed (``hep_advisor.models.reader_baseline``) on the sampled
    basket maps, or ``None`` and why."""
    from hep_advisor.models.reader_baseline import reader_baseline

    tree = dataset.main_tree
    if tree is not None and tree.format == "rntuple":
        return None, [f"reader {spec.text}: no baseline: the files hold an RNTuple ("
                      f"{tree.name!r}), and the reader replays model TTree readers"]
    if tree is None or not maps:
        return None, [f"reader {spec.text}: no baseline: no basket map of the files"]
    try:
        return reader_baseline(spec, maps, tree.files, calibration, site, baseline,
                               branches, tree.compression.algorithm), []
    except ValueError as exc:
        return None, [f"reader {spec.text}: no baseline: {exc}"]
