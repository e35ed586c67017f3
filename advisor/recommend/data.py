"""Data-level rules: compression (C001) and branches (B001)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

from hep_advisor.models import scenarios as sc
from hep_advisor.models.scenarios import PredictionPoint
from hep_advisor.probes.results import DatasetProfile, largest_tree

from ..advice import Action, Evidence, Option, Recommendation
from . import codec, versions
from .context import Context
from .files import replay_point
from .inputs import Inputs, hadd_all, hadd_groups, python_files
from .storage import entry_step

#: Recommend another compression when decompression takes at least this share of the time.
DECOMPRESSION_MIN_SHARE = 0.15
#: The algorithms proposed instead, with ROOT's compression setting (algorithm x 100 + level).
CANDIDATES = {"LZ4": 404, "ZSTD": 505}
#: uproot's spelling of each.
UPROOT_CODEC = {"LZ4": "uproot.LZ4(4)", "ZSTD": "uproot.ZSTD(5)"}
#: Recommend reading fewer branches when the branches the analysis uses hold at most this share
#: of the bytes the program reads.
BRANCHES_MAX_FRACTION = 0.5


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

    from ..verdict import verdict

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
    title = f"Recompress with {cand} instead of {alg}"
    taken = (f"{100 * share:.0f}% of the time" if most <= share else
             f"{100 * share:.0f}% of the time with the assumed share of the reads hidden "
             f"behind the CPU, {100 * most:.0f}% with none")
    summary = (f"Decompressing {alg} takes {taken}. {cand} "
               f"decompresses faster here; the files change size by {size_change:+.0f}%.")
    if merged:
        title += f", merging the {tree.files} files into one"
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
        code="C001", kind="compression", title=title,
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


def branches_rule(ctx: Context) -> Recommendation | None:
    """B001: the program reads more branches than the analysis uses.  ``ctx.branches`` is what
    the program reads (``--branches``; none given: every branch, as ROOT without
    ``SetBranchStatus`` and uproot without ``filter_name`` do), ``ctx.uses`` what the analysis
    uses (``--uses``).  It fires only when the used branches are a strict subset of the read
    ones holding at most ``BRANCHES_MAX_FRACTION`` of the bytes read; without ``uses`` it
    cannot tell, and does not fire.  The speed-up is the model's for reading the used
    branches' bytes over its prediction for reading the read ones' (both from the whole tree
    the model's baseline reads)."""
    tree = ctx.tree
    if tree is None or not ctx.uses or not tree.branch_profiles:
        return None
    by_name = {b.name: b for b in tree.branch_profiles}
    given = bool(ctx.branches)
    read = [n for n in dict.fromkeys(ctx.branches) if n in by_name] if given else list(by_name)
    used = [n for n in dict.fromkeys(ctx.uses) if n in by_name]
    if not read or not used or not set(used) < set(read):
        return None  # the program reads no more than the analysis uses (or the names are off)
    total = sum(b.compressed_bytes for b in tree.branch_profiles)
    read_bytes = sum(by_name[n].compressed_bytes for n in read)
    used_bytes = sum(by_name[n].compressed_bytes for n in used)
    if total <= 0 or read_bytes <= 0 or used_bytes <= 0:
        return None
    fraction = used_bytes / read_bytes
    if fraction > BRANCHES_MAX_FRACTION:
        return None
    now = ctx.predict(sc.branches(read_bytes / total, len(read) / len(by_name))) \
        if read_bytes < total else None
    scen = sc.branches(used_bytes / total, len(used) / len(by_name))
    point = _relative(ctx.predict(scen), now)
    what_read = (f"{len(read)} of the tree's {tree.branches} branches" if given
                 else f"all {tree.branches} branches")
    return ctx.make(
        code="B001", kind="branches",
        title=f"Read only the {len(used)} branches the analysis uses, not {len(read)} "
              f"({_percent(fraction)} of the bytes read now)",
        audience="analyst", point=point, scenario=scen,
        summary=(f"The program reads {what_read} ({read_bytes / 1e6:,.1f} MB), but the "
                 f"analysis uses {len(used)} of them, holding {_percent(fraction)} of those "
                 "bytes. Reading (or keeping) only those reads less."),
        evidence=[
            Evidence("branches the program reads", len(read), "", "probed",
                     "given with --branches" if given else
                     "every branch (no --branches): ROOT's and uproot's default"),
            Evidence("branches the analysis uses", len(used), "", "probed",
                     "given with --uses"),
            Evidence("bytes read now", float(f"{read_bytes / 1e6:.4g}"), "MB", "probed",
                     f"{_percent(read_bytes / total)} of the tree's compressed bytes"),
            Evidence("bytes the analysis uses", float(f"{used_bytes / 1e6:.4g}"), "MB",
                     "probed"),
            Evidence("share of the bytes read that are used", float(f"{100 * fraction:.3g}"),
                     "%", "derived"),
            Evidence("threshold", 100 * BRANCHES_MAX_FRACTION, "%", "threshold",
                     "of the bytes read"),
        ],
        actions=[
            Action.labelled("ROOT: enable only these branches",
                            'tree->SetBranchStatus("*", 0); for (auto b : {'
                            + ", ".join(_cxx_string(root_name(n)) for n in used)
                            + "}) tree->SetBranchStatus(b, 1);", versions.ROOT_TTREE),
            Action.labelled("uproot: name them (an entry-count step of whole clusters: a "
                            "memory-size step such as the default '100 MB' first reads every "
                            "basket's key)",
                            f"tree.iterate(filter_name={used!r}, step_size={_step(ctx, used)})",
                            versions.UPROOT),
            Action.labelled("or slim the files once to these branches (RDataFrame Snapshot)",
                            snapshot_script(ctx.paths, tree.name, used), versions.ROOT_RDF),
        ],
        extra_assumptions=(
            ("the program reads the branches given with --branches" if given else
             "the program reads every branch (no --branches: ROOT's default without "
             "SetBranchStatus, uproot's without filter_name)")
            + " and the analysis needs only those given with --uses",))


def _relative(point: PredictionPoint, now: PredictionPoint | None) -> PredictionPoint:
    """``point``'s speed-up (and interval) over ``now`` rather than over the model's
    baseline (``now`` is ``None``: the baseline itself)."""
    if now is None or not now.speedup:
        return point
    s = point.speedup
    return replace(point, speedup=None if s is None else s / now.speedup,
                   speedup_low=None if point.speedup_low is None
                   else point.speedup_low / now.speedup,
                   speedup_high=None if point.speedup_high is None
                   else point.speedup_high / now.speedup)


def selection_notes(dataset: DatasetProfile, branches: Sequence[str] | None,
                    uses: Sequence[str] | None) -> tuple[str, ...]:
    """What to say about ``--branches`` (read) and ``--uses`` (used), as notes: names that
    no tree has, used branches the program does not read, and, for ``--branches`` alone,
    that B001 needs ``--uses``."""
    trees = dataset.trees
    if not trees or not (branches or uses):
        return ()
    tree = largest_tree(trees)
    known = {b.name for b in tree.branch_profiles}
    if not known:
        return ()
    notes = []
    for flag, names in (("--branches", branches), ("--uses", uses)):
        missing = [n for n in dict.fromkeys(names or ()) if n not in known]
        if missing:
            notes.append(f"{flag}: no branch {_names(missing)} in tree {tree.name}")
    if branches and uses:
        unread = [n for n in dict.fromkeys(uses) if n in known and n not in set(branches)]
        if unread:
            notes.append(f"--uses names {_names(unread)}, which the program does not read "
                         "(--branches): the used branches should be among the read ones")
    elif branches and not uses:
        notes.append(f"the program reads {len(set(branches) & known)} of the {len(known)} "
                     "branches (--branches): that is the baseline; whether it reads more than "
                     "the analysis needs (B001) takes the branches it uses (--uses)")
    return tuple(notes)


def _percent(x: float) -> str:
    """``x`` as a percentage, with two significant digits below 1%."""
    return f"{100 * x:.0f}%" if x >= 0.01 or x == 0 else f"{100 * x:.2g}%"


def _names(names: Sequence[str], shown: int = 5) -> str:
    head = ", ".join(names[:shown])
    return head + (f" and {len(names) - shown} more" if len(names) > shown else "")


def _cxx_string(text: str) -> str:
    """A C++ string literal (JSON's escapes are C++'s for these)."""
    return json.dumps(text, ensure_ascii=False)


def root_name(branch: str) -> str:
    """ROOT's name for a branch as uproot names it: a split object's member ``evt/evt_f0``
    is ``evt.evt_f0`` to ``SetBranchStatus`` and to RDataFrame (they know no ``/``)."""
    return branch.replace("/", ".")


def snapshot_script(ins: Inputs, tname: str, names: list[str]) -> str:
    """Python that slims the inputs' files to ``names`` with RDataFrame into slim.root.  The
    files go to a TChain one by one (``AddFile``: no wildcards), through links with plain names
    where ROOT would read their paths as syntax (see :mod:`.inputs`)."""
    head = f"files = {python_files(ins)}\nchain = ROOT.TChain({tname!r})\n"
    columns = [root_name(n) for n in names]
    snap = f"ROOT.RDataFrame(chain).Snapshot({tname!r}, 'slim.root', {columns!r})"
    if not ins.links:
        return ("import os\n\nimport ROOT\n\n" + head
                + "for f in files:\n    chain.AddFile(f)\n" + snap)
    return ("import os\nimport tempfile\n\nimport ROOT\n\n" + head
            + "with tempfile.TemporaryDirectory() as links:  # ROOT reads $, ? and # as syntax\n"
            "    for i, f in enumerate(files):\n"
            "        link = os.path.join(links, f'{i}.root')\n"
            "        os.symlink(os.path.abspath(f), link)\n"
            "        chain.AddFile(link)\n"
            "    " + snap)


def _step(ctx: Context, used: Sequence[str]) -> int:
    """uproot's entry-count ``step_size`` for the used branches, whole clusters."""
    if ctx.basket_maps:
        from hep_advisor.models.replay.predict import cluster_step

        return cluster_step(ctx.basket_maps, list(used))
    return entry_step(ctx)
