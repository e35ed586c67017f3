"""Data-level rules: compression (C001) and branches (B001)."""

from __future__ import annotations

import os

from models import scenarios as sc

from ..advice import Action, Evidence, Recommendation
from .context import Context

#: Recommend another compression when decompression takes at least this share of the time.
DECOMPRESSION_MIN_SHARE = 0.15
#: The algorithms proposed instead, with ROOT's compression setting (algorithm x 100 + level).
CANDIDATES = {"LZ4": 404, "ZSTD": 505}
#: uproot's spelling of each.
UPROOT_CODEC = {"LZ4": "uproot.LZ4(4)", "ZSTD": "uproot.ZSTD(5)"}
#: Recommend reading fewer branches when the analysis needs at most this share of the bytes.
BRANCHES_MAX_FRACTION = 0.5


def _share(ctx: Context, limit: str) -> float:
    return next((s.share for s in ctx.verdict.shares if s.limit == limit), 0.0)


def compression_rule(ctx: Context) -> Recommendation | None:
    tree = ctx.tree
    if tree is None:
        return None
    alg = tree.compression.algorithm
    share = _share(ctx, "decompression")
    if alg in (None, "none") or share < DECOMPRESSION_MIN_SHARE:
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
        if point.speedup is not None and (best is None or point.speedup > (best[1].speedup or 0)):
            best = (cand, point, scen)
    if best is None:
        return None
    cand, point, scen = best
    new = scen.apply(ctx.baseline)
    size_change = (new.mb_per_work - 1.0) * 100
    rate_ev, size_ev = _candidate_evidence(ctx, cand, alg, new.params.decompress_mb_per_s,
                                           size_change)
    ev = [
        Evidence("algorithm now", f"{alg}-{tree.compression.level}"
                 if tree.compression.level is not None else str(alg), "", "probed"),
        Evidence("decompression's share of the time", round(100 * share, 1), "%", "derived",
                 "from the fitted model"),
        Evidence("decompression threshold", 100 * DECOMPRESSION_MIN_SHARE, "%", "threshold"),
        ctx.param_evidence("decompress_mb_per_s", f"{alg} decompression", 1.0,
                           "compressed MB/s per core"),
        rate_ev,
        size_ev,
    ]
    setting = CANDIDATES[cand]
    return ctx.make(
        code="C001", kind="compression",
        title=f"Recompress with {cand} instead of {alg}",
        audience="analyst", point=point, scenario=scen,
        summary=(f"Decompressing {alg} takes {100 * share:.0f}% of the time. {cand} "
                 f"decompresses faster here; the files change size by {size_change:+.0f}%."),
        evidence=ev,
        actions=[
            Action(f"rewrite the files with {cand} (ROOT setting {setting}: algorithm "
                   f"{setting // 100}, level {setting % 100})",
                   f"hadd -O -f{setting} recompressed.root {ctx.files_arg()}"),
            Action("with uproot, when writing",
                   f"uproot.recreate(path, compression={UPROOT_CODEC[cand]})"),
            Action("for files written by ROOT or RDataFrame",
                   f"opts = ROOT.RDF.RSnapshotOptions(); opts.fCompressionAlgorithm = "
                   f"ROOT.RCompressionSetting.EAlgorithm.k{cand}; "
                   f"opts.fCompressionLevel = {setting % 100}"),
        ])


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
            f"recompressed sample of {factor.baskets} baskets")
    else:
        size_ev = Evidence("size change", round(size_change, 1), "%", "assumed",
                           "compressed bytes after recompressing; " + sc.FACTOR_SOURCE)
    return rate_ev, size_ev


def branches_rule(ctx: Context) -> Recommendation | None:
    """When the analysis reads a subset of the branches (``--branches``) that holds at most
    half of the bytes: read only those, or slim the files to them."""
    tree = ctx.tree
    if tree is None or not ctx.branches or not tree.branch_profiles:
        return None
    by_name = {b.name: b for b in tree.branch_profiles}
    chosen = [by_name[n] for n in ctx.branches if n in by_name]
    total = sum(b.compressed_bytes for b in tree.branch_profiles)
    if not chosen or total <= 0:
        return None
    fraction = sum(b.compressed_bytes for b in chosen) / total
    if fraction > BRANCHES_MAX_FRACTION:
        return None
    scen = sc.branches(fraction)
    point = ctx.predict(scen)
    names = ",".join(b.name for b in chosen)
    first = ctx.inputs[0] if ctx.inputs else "FILE.root"
    if os.path.isdir(first):
        first = first.rstrip("/") + "/*.root"
    return ctx.make(
        code="B001", kind="branches",
        title=f"Read only the {len(chosen)} branches the analysis uses "
              f"({100 * fraction:.0f}% of the bytes)",
        audience="analyst", point=point, scenario=scen,
        summary=(f"The analysis uses {len(chosen)} of {tree.branches} branches, holding "
                 f"{100 * fraction:.0f}% of the compressed bytes. Reading (or keeping) only "
                 "those reads less."),
        evidence=[
            Evidence("branches used", len(chosen), "", "probed", "given with --branches"),
            Evidence("branches in the tree", tree.branches, "", "probed"),
            Evidence("share of the bytes used", round(100 * fraction, 1), "%", "derived"),
            Evidence("threshold", 100 * BRANCHES_MAX_FRACTION, "%", "threshold"),
        ],
        actions=[
            Action("ROOT: enable only these branches",
                   'tree->SetBranchStatus("*", 0); for (auto b : {...}) '
                   'tree->SetBranchStatus(b, 1);'),
            Action("uproot: name them", f"tree.iterate(filter_name={names.split(',')!r})"),
            Action("or slim the files once to these branches (RDataFrame Snapshot)",
                   f"ROOT.RDataFrame({tree.name!r}, {first!r}).Snapshot({tree.name!r}, "
                   f"'slim.root', {names.split(',')!r})"),
        ],
        extra_assumptions=("the analysis as it runs now reads every branch (ROOT's default "
                           "without SetBranchStatus, uproot's without filter_name)",))
