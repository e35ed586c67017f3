"""Compression (C001): decompression takes a large share of the time; another codec
(or the same one in larger baskets) is replayed against today's files."""

from __future__ import annotations

from dataclasses import replace

from hep_advisor.findings.recommendation import Action, Evidence, Option, Recommendation
from hep_advisor.models import scenarios as sc
from hep_advisor.rules import codec, versions
from hep_advisor.rules.context import Context
from hep_advisor.rules.files import replay_point
from hep_advisor.rules.inputs import hadd_all, hadd_groups
from hep_advisor.rules.rule import Rule

#: Recommend another compression when decompression takes at least this share of the time.
DECOMPRESSION_MIN_SHARE = 0.15
#: The algorithms proposed instead, with ROOT's compression setting (algorithm x 100 + level).
CANDIDATES = {"LZ4": 404, "ZSTD": 505}
#: uproot's spelling of each.
UPROOT_CODEC = {"LZ4": "uproot.LZ4(4)", "ZSTD": "uproot.ZSTD(5)"}
def _share(ctx: Context, limit: str) -> float:
    return next((s.share for s in ctx.verdict.shares if s.limit == limit), 0.0)


def _cpu_share(ctx: Context, limit: str) -> float:
    """``limit``'s share of the time; where the I/O overlap is assumed (nothing measured what
    of the reads hides behind the CPU), its share with none hidden: the most the CPU's part
    can take, so that a rule whose figure comes from a replay is not held back by an
    assumption.  The figure shown is still the verdict's."""
    if "io_overlap" not in getattr(ctx.model, "assumed_", ()):
        return _share(ctx, limit)
    from hep_advisor.models.throughput import PLAUSIBLE
    from hep_advisor.rules.verdict import verdict

    b = ctx.baseline
    low = replace(b, params=replace(b.params, io_overlap=PLAUSIBLE["io_overlap"][0]))
    v = verdict(low, ctx.verdict.workers)
    return max(_share(ctx, limit),
               next((s.share for s in v.shares if s.limit == limit), 0.0))


def compression_rule(ctx: Context) -> Recommendation | None:
    tree = ctx.tree
    if tree is None:
        return None
    alg = tree.compression.algorithm
    share, most = _share(ctx, "decompression"), _cpu_share(ctx, "decompression")
    if alg in (None, "none") or most < DECOMPRESSION_MIN_SHARE:
        return None
    best = None
    for cand in CANDIDATES:
        if cand == alg:
            continue
        scen = sc.compression(cand)
        try:
            point = ctx.predict(scen)
        except ValueError:
            continue
        new = scen.apply(ctx.baseline)
        rep = codec.codec_replay(ctx, cand, new.mb_per_work, new.params.decompress_mb_per_s,
                                 parts=False, interval=False)  # the chosen one's below
        if rep is not None:  # the printed command replayed: its figure
            point = replay_point(rep.command)
        if point.speedup is not None and (best is None or point.speedup > (best[1].speedup or 0)):
            best = (cand, point, scen, new, rep)
    if best is None:
        return None
    cand, point, scen, new, rep = best
    if rep is not None:  # the chosen candidate's command, and its parts
        rep = codec.codec_replay(ctx, cand, new.mb_per_work, new.params.decompress_mb_per_s)
        if rep is not None:  # with its interval
            point = replay_point(rep.command)
    size_change = (new.mb_per_work - 1.0) * 100
    rate_ev, size_ev = _candidate_evidence(ctx, cand, alg, new.params.decompress_mb_per_s,
                                           size_change)
    ev = [
        Evidence("algorithm now", f"{alg}-{tree.compression.level}"
                 if tree.compression.level is not None else str(alg), "", "probed"),
        Evidence("decompression's share of the time", round(100 * share, 1), "%", "derived",
                 "from the fitted model"),
        *([Evidence("decompression's share with no reads behind the CPU", round(100 * most, 1),
                    "%", "derived", "the I/O overlap is assumed, not measured: the rule "
                    "fires on this share")] if most > share else []),
        Evidence("decompression threshold", 100 * DECOMPRESSION_MIN_SHARE, "%", "threshold"),
        ctx.param_evidence("decompress_mb_per_s", f"{alg} decompression", 1.0,
                           "compressed MB/s per core"),
        rate_ev,
        size_ev,
    ]
    setting = CANDIDATES[cand]
    merged = codec.merges(ctx)
    # the title names all the command changes: hadd -O also refills the baskets
    title = f"Recompress with {cand} instead of {alg}"
    taken = (f"{100 * share:.0f}% of the time" if most <= share else
             f"{100 * share:.0f}% of the time with the assumed share of the reads hidden "
             f"behind the CPU, {100 * most:.0f}% with none")
    summary = (f"Decompressing {alg} takes {taken}. {cand} "
               f"decompresses faster here; the files change size by {size_change:+.0f}%.")
    title += (f", merging the {tree.files} files into one and refilling the baskets" if merged
              else ", refilling the baskets")
    if merged:
        summary += (f" The command also merges the {tree.files} files into one and refills "
                    "the baskets (hadd -O)")
    options: list[Option] = []
    extra: tuple[str, ...] = ()
    if rep is not None:
        ev.extend(codec.replay_evidence(rep, tree.files))
        ev.extend(ctx.touch_evidence(rep.command.before, rep.command.after, "rewritten"))
        caveat = codec.layout_caveat(ctx)
        extra = (codec.replay_assumption(rep), *((caveat,) if caveat else ()),
                 *ctx.replay_cost_notes())
        if rep.merge_only is not None and rep.codec_only is not None:
            summary += (f": replayed, the merge alone gains {rep.merge_only.speedup:.2f}x and "
                        f"the codec alone {rep.codec_only.speedup:.2f}x; the figure is the "
                        "whole command's, so it holds what M001's merge gains too.")
            o = rep.codec_only
            options.append(Option(f"recompress file by file, no merge ({rep.reader.describe()})",
                                  round(o.speedup, 3), round(o.low, 3), round(o.high, 3),
                                  "the codec alone: what it adds beside M001's merge"))
        elif merged:
            summary += "."
    else:
        if merged:
            summary += (": not in this figure (the rate model changes only the decompression "
                        "and the bytes; no basket map to replay the command).")
            extra = ("the figure leaves out the merge and the basket refill the command also "
                     "does (no basket map to replay them)",)
    actions = [
        Action.labelled(f"rewrite the files with {cand} (ROOT setting {setting}: "
                        f"algorithm {setting // 100}, level {setting % 100})"
                        + (", merged into one file (hadd -O: baskets refilled)" if merged
                           else " (hadd -O: baskets refilled)" if tree.files <= 1
                           else ", each file alone (hadd -O: baskets refilled)"),
                        hadd_all(ctx.paths, f"-O -f{setting}", "recompressed.root")
                        if merged or tree.files <= 1
                        else hadd_groups(ctx.paths, f"-O -f{setting}", 1, "recompressed_"),
                        versions.HADD),
    ]
    if options:
        actions.append(Action.labelled(
            f"or rewrite each file alone with {cand} (no merge): recompressed_000.root, ...",
            hadd_groups(ctx.paths, f"-O -f{setting}", 1, "recompressed_"), versions.HADD))
    actions += [
        Action.labelled("with uproot, when writing" + (
                            " (uproot's LZ4 compresses in LZ4's fast mode at every level, where "
                            "ROOT's level 4 uses its high-compression mode: the files come out "
                            "larger than this figure assumes)" if cand == "LZ4" else ""),
                        f"uproot.recreate(path, compression={UPROOT_CODEC[cand]})",
                        versions.UPROOT),
        Action.labelled("for files written by ROOT or RDataFrame",
                        f"opts = ROOT.RDF.RSnapshotOptions(); opts.fCompressionAlgorithm = "
                        f"ROOT.RCompressionSetting.EAlgorithm.k{cand}; "
                        f"opts.fCompressionLevel = {setting % 100}", versions.ROOT_RDF),
    ]
    return ctx.make(
        rule=C001, title=title,
        audience="analyst", point=point, scenario=scen, summary=summary,
        evidence=ev, actions=actions, options=options, extra_assumptions=extra)


def _candidate_evidence(ctx: Context, cand: str, alg: str | None, rate: float,
                        size_change: float) -> tuple[Evidence, Evidence]:
    """The candidate's decompression rate and the size change, each ``measured`` where the
    calibration measured it (the dataset's own baskets of ``cand``, or a recompressed sample
    of them), else ``assumed``."""
    points = [d for d in (ctx.calibration.decompression if ctx.calibration else ())
              if d.algorithm == cand and d.compressed_mb_per_s]
    point = next((d for d in points if d.source == "dataset"), None) or \
        next(iter(points), None)
    base = ctx.baseline
    if point is not None and point.source == "recompressed":
        where = (f"recompressed sample of {point.baskets} baskets"
                 f"{f' ({point.recompressed_from})' if point.recompressed_from else ''}")
        lvl = f"-{point.level}" if point.level is not None else ""
        rate_ev = Evidence(f"{cand} decompression", round(rate, 1), "compressed MB/s per core",
                           "measured", f"{where}, {cand}{lvl}, one core")
    elif point is not None:
        rate_ev = Evidence(f"{cand} decompression", round(rate, 1), "compressed MB/s per core",
                           "measured", f"the dataset's own {cand} baskets, one core")
    else:
        rate_ev = Evidence(f"{cand} decompression", round(rate, 1), "compressed MB/s per core",
                           "assumed", sc.SPEED_SOURCE)
    factor = next((d for d in (ctx.calibration.decompression if ctx.calibration else ())
                   if d.algorithm == cand and d.source == "recompressed"
                   and d.recompressed_from == alg and d.compression_factor
                   and d.dataset_factor), None)
    if factor is not None and cand in base.measured_factor and alg in base.measured_factor:
        size_ev = Evidence(
            "size change", round(size_change, 1), "%", "measured",
            f"compressed bytes after recompressing: {cand} factor "
            f"{factor.compression_factor:.2f} vs {alg} {factor.dataset_factor:.2f} on a "
            f"recompressed sample of {factor.baskets} baskets"
            + (f" (standard error {100 * factor.size_change_sd:.1f}% of the size, from each "
               "basket's own change)" if factor.size_change_sd is not None else ""))
    else:
        size_ev = Evidence("size change", round(size_change, 1), "%", "assumed",
                           "compressed bytes after recompressing; " + sc.FACTOR_SOURCE)
    return rate_ev, size_ev


def _percent(x: float) -> str:
    """``x`` as a percentage, with two significant digits below 1%."""
    return f"{100 * x:.0f}%" if x >= 0.01 or x == 0 else f"{100 * x:.2g}%"


C001 = Rule("C001", "compression", "compression", "Recompress with a faster codec",
            trigger="decompression takes >= 15% of the time",
            prediction="the candidate codec's measured decompression rate and size change "
                       "(a sample of the dataset's baskets recompressed), its files' reads "
                       "replayed; the rate model's compression scenario",
            measure="recompress a sample (hep-advisor try C001), or time the analysis on the "
                    "recompressed files",
            change="compression", check=lambda ctx, found: compression_rule(ctx))

RULES = (C001,)
