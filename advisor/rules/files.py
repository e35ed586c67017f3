"""File-level rules: merge small files (M001), rewrite tiny baskets or clusters (R001)."""

from __future__ import annotations

import math
import shutil

from hep_advisor.findings.recommendation import (
    MIN_SPEEDUP,
    Action,
    Evidence,
    Option,
    Recommendation,
    contradicted,
)
from hep_advisor.models import scenarios as sc
from hep_advisor.models.physics import config_matrix, rates
from hep_advisor.models.replay.predict import MergePrediction, Reader, cluster_step
from hep_advisor.models.replay.rewrite import RecompressionPrediction
from hep_advisor.models.scenarios import PredictionPoint
from hep_advisor.rules import versions
from hep_advisor.rules.codec import layout_caveat
from hep_advisor.rules.context import Context
from hep_advisor.rules.inputs import Inputs, hadd_all, hadd_groups, python_files
from hep_advisor.rules.rule import Rule

#: Merge when the per-file costs take at least this share of a file's time.
MERGE_MIN_SHARE = 0.10
#: ... and aim for files where they take at most this share.
MERGE_TARGET_SHARE = 0.05
#: Largest merged file suggested (files stay easy to move, and several per worker).
MERGE_MAX_MB = 10_000.0
#: Rewrite when the mean compressed basket is smaller than this.
SMALL_BASKET_BYTES = 8_000
#: Or when a cluster holds less than this many compressed bytes (TTreeCache reads a cluster).
SMALL_CLUSTER_BYTES = 1_000_000
#: ROOT's default basket buffer (TTree::Branch bufsize), uncompressed bytes: what hadd -O and a
#: rewrite with ROOT's defaults give a branch with enough data (an assumption of the rule).
ROOT_BASKET_BYTES = 32_000


def nice_size(mb: float) -> float:
    """The next size up in the 1-2-5 series (MB)."""
    if mb <= 0:
        return 1.0
    exp = math.floor(math.log10(mb))
    for m in (1, 2, 5, 10):
        if m * 10**exp >= mb * 0.999:
            return float(m * 10**exp)
    return float(10 ** (exp + 1))


def per_file_overhead(ctx: Context) -> tuple[float, float, float]:
    """(seconds of fixed cost per file, MB/s of reading without it, its share of a file's time)
    at one worker: the engine's (the program's reader replayed: its per-file overhead part,
    and the verdict's share of it), else the fitted model's."""
    from hep_advisor.rules.engine import replayed_job

    rj = replayed_job(ctx)
    if rj is not None and rj.job.files > 0 and rj.compressed_mb > 0:
        t = rj.seconds(1, 1.0, ctx.baseline.cores)
        share = rj.shares(1, 1.0, ctx.baseline.cores).get("per-file overhead", 0.0)
        rest = t - rj.open_s
        return rj.open_s / rj.job.files, rj.compressed_mb / rest if rest > 0 else 0.0, share
    b = ctx.baseline
    row = b.row(1)
    t_file = ctx.param("open_s") * (row.get("opens", 0.0) > 0.5) + \
        max(row.get("calls", 0.0), 0.0) * ctx.param("call_s")
    bare = {**row, "opens": 0.0, "calls": 0.0}
    r = float(rates(b.params, config_matrix([bare]), b.cores)[0])
    file_mb = row["file_mb"]
    share = t_file / (t_file + file_mb / r) if r > 0 else 0.0
    return t_file, r, share


def hadd_available() -> bool:
    if shutil.which("hadd"):
        return True
    try:
        import importlib.util

        return importlib.util.find_spec("ROOT") is not None
    except (ImportError, ValueError):
        return False


def _tree_name(ctx: Context) -> str:
    return ctx.tree.name if ctx.tree is not None else "TREE"


def uproot_merge(ins: Inputs, tname: str, per_output: int) -> str:
    """A Python script (run through bash) that merges the inputs' trees ``tname`` with uproot,
    ``per_output`` files at a time, into merged_000.root, ... in the current directory."""
    k = max(1, per_output)
    return ("python - <<'EOF'\nimport os\nimport pathlib\n\nimport uproot\n\n"
            f"files = {python_files(ins)}\n"
            f"for n in range(0, len(files), {k}):\n"
            f"    with uproot.recreate(f'merged_{{n // {k}:03d}}.root') as out:\n"
            f"        for f in files[n:n + {k}]:\n"
            "            with uproot.open(pathlib.Path(f)) as src:  # a path, never a glob\n"
            f"                for chunk in src[{tname!r}].iterate(step_size='200 MB'):\n"
            f"                    if {tname!r} in out:\n"
            f"                        out[{tname!r}].extend(chunk)\n"
            "                    else:\n"
            f"                        out[{tname!r}] = chunk\n"
            "EOF")


def merge_rule(ctx: Context) -> Recommendation | None:
    tree = ctx.tree
    if tree is None or tree.files < 2:
        return None
    t_file, r, share = per_file_overhead(ctx)
    if share < MERGE_MIN_SHARE or t_file <= 0:
        return None
    file_mb = ctx.baseline.row(1)["file_mb"]
    total_mb = tree.compressed_bytes / 1e6
    wanted = t_file * r * (1 - MERGE_TARGET_SHARE) / MERGE_TARGET_SHARE
    target = min(nice_size(wanted), MERGE_MAX_MB)
    # keep a file per core to share among the workers
    per_core = total_mb / max(ctx.cores, 1)
    if target > per_core:
        target = max(per_core, 2 * file_mb)
    target = min(target, total_mb)
    if target < 2 * file_mb:
        return None
    small_baskets = _small_baskets(ctx)
    scen = sc.merge(target)
    if small_baskets is not None:
        scen = sc.combine(scen, sc.rebasket(small_baskets), name=f"{scen.name}, hadd -O")
    point = ctx.predict(scen)
    k = max(2, round(target / max(file_mb, 1e-9)))
    outputs = math.ceil(tree.files / k)
    replayed = ctx.merge_replay(k, small_baskets is not None)
    rate_model = point
    prog = ctx.program_reader
    # the program's reader known: the merge replayed with it is the headline
    mine = ctx.reader_context().merge_replay(k, small_baskets is not None, reader=prog) \
        if prog else None
    if mine is not None:
        point = replay_point(mine)
    elif replayed is not None and ctx.replay_merge:
        point = replay_point(replayed)
    tname = _tree_name(ctx)
    opt = "-O " if small_baskets is not None else ""
    actions = [
        Action.labelled(f"merge the {tree.files} files in groups of {k} into {outputs} files "
                        f"of about {target:,.0f} MB, written as merged_000.root, ... in the "
                        f"current directory (bash; hadd -j uses {ctx.cores} processes)",
                        hadd_groups(ctx.paths, f"-j {ctx.cores} {opt}-fk", k), versions.HADD),
        Action("hadd's options: -fk keeps the first input's compression settings and copies "
               "the baskets as they are (fast); -O re-optimises them, rewriting baskets and "
               "clusters (slower, and it fixes tiny baskets)"
               + ("; the baskets here are tiny, so -O is used" if opt else "")),
    ]
    if not hadd_available():
        actions.append(Action.labelled(
            "without ROOT, merge with uproot (reads and rewrites the arrays)",
            uproot_merge(ctx.paths, tname, k), versions.UPROOT))
    ev = [
        Evidence("files", tree.files, "", "probed"),
        Evidence("median file size", round(tree.file_bytes.median_bytes / 1e6, 3), "MB",
                 "probed"),
        ctx.param_evidence("open_s", "open cost per file", 1e3, "ms"),
        ctx.param_evidence("call_s", "cost per read call", 1e3, "ms"),
        Evidence("read calls per file", round(ctx.baseline.row(1).get("calls", 0.0), 2), "",
                 "derived", "one per 50 MB of arrays (uproot's iterate step)"
                 + (": the rate model's event loop, which sizes the merge; the headline "
                    "replays the program's reader" if prog is not None else "")),
        Evidence("reading rate without per-file costs", round(r, 2), "MB/s", "derived",
                 "one worker, from the fitted model"),
        Evidence("per-file costs' share of the time", round(100 * share, 1), "%", "derived"),
        Evidence("merge threshold", 100 * MERGE_MIN_SHARE, "%", "threshold",
                 "merge when the per-file costs take at least this share"),
        Evidence("target size", round(target, 1), "MB", "derived",
                 f"per-file costs at most {100 * MERGE_TARGET_SHARE:.0f}% of a file's time "
                 f"(size {wanted:,.0f} MB), at most one file per core's share of the data and "
                 f"{MERGE_MAX_MB:,.0f} MB"),
    ]
    summary = (f"Each file costs {1e3 * t_file:.0f} ms before and around its data (opening, "
               f"read calls), {100 * share:.0f}% of the time for files of {file_mb:.2g} MB. "
               f"Files of about {target:,.0f} MB pay it less often.")
    extra: tuple[str, ...] = ()
    options: list[Option] = []
    if mine is not None and prog is not None and ctx.reader is not None:
        ev.append(Evidence(
            "speed-up with the program's reader", round(mine.speedup, 2), "x", "derived",
            f"the merge replayed with {prog.describe()} (reader {ctx.reader.text}) on today's "
            "files and on the merged ones: the headline figure"))
    if replayed is not None:
        ev.extend(replay_evidence(mine or replayed, rate_model))
        ev.extend(ctx.touch_evidence((mine or replayed).before, (mine or replayed).after,
                                     "merged"))
        extra = REPLAY_ASSUMPTIONS if ctx.replay_merge else REPLAY_CHECKS
        if mine is not None and prog is not None:
            extra = (reader_assumption(prog), *REPLAY_CHECKS)
        extra = (*extra, *ctx.replay_cost_notes())
        said, more, options, remedies = scattered_checks(ctx, k, small_baskets is not None,
                                                         replayed)
        summary += said
        ev.extend(more)
        actions.extend(remedies)
    # with the program's reader the merge alone gains nothing, but a merge with a reader
    # change does: kept, marked not recommended as it stands, its options shown
    keep = (mine is not None and round(mine.speedup, 3) < MIN_SPEEDUP
            and any(o.predicted_speedup >= MIN_SPEEDUP for o in options))
    rec = ctx.make(
        rule=M001, title=f"Merge the small files to about {target:,.0f} MB",
        audience="analyst", point=point, scenario=scen, summary=summary,
        evidence=ev, actions=actions, options=options, extra_assumptions=extra, keep=keep)
    if rec is None or not keep or prog is None or mine is None:
        return rec
    return contradicted(rec, f"the merge alone, replayed with the program's reader "
                             f"({prog.describe()}), gains {mine.speedup:.2f}x "
                             f"({mine.low:.2f}–{mine.high:.2f}x); the options pair it with a "
                             "reader change")


def scattered_checks(ctx: Context, k: int, optimise: bool, loop: MergePrediction
                     ) -> tuple[str, list[Evidence], list[Option], list[Action]]:
    """What the merged layout costs the readers users run (uproot's default ``iterate`` step,
    ROOT's ``GetEntry`` without a TTreeCache, the event loop's entry-count step), replayed; for
    each reader the merge would leave bound by scattered reads, what removes them (an
    entry-count step aligned with the clusters, ``hadd -O``, pre-staging, a TTreeCache), each
    replayed against that reader on today's files.  Returns (summary text, evidence, options,
    actions)."""
    said = ""
    ev: list[Evidence] = []
    options: list[Option] = []
    actions: list[Action] = []
    plain = Reader(step=UPROOT_DEFAULT_STEP)
    no_cache = Reader("root", cache_bytes=0)
    step = cluster_step(ctx.basket_maps, ctx.branches or None)
    if loop.after_seek_share >= SCATTERED_SHARE:
        said += (f" Even with an entry-count step the merged files would be read in "
                 f"{loop.after.io.seeks * loop.after.scale:,.0f} scattered requests "
                 f"({100 * loop.after_seek_share:.0f}% of the time in access times).")
    for reader, fixes in (
            (plain, (("iterate with step_size=" + f"{step:,} entries (whole clusters)",
                      Reader(step=step), False, False),
                     ("hadd -O (clustered rewrite)", None, True, False),
                     ("pre-stage the merged files into memory", None, False, True))),
            (no_cache, (("read with ROOT's TTreeCache",  # as printed: every branch added
                          Reader("root", cache_bytes=None, manual=True), False, False),))):
        m = ctx.merge_replay(k, optimise, reader=reader)
        if m is None:
            continue
        seeks = m.after.io.seeks * m.after.scale
        ev.append(Evidence(f"replayed merge, {reader.describe()}", round(m.speedup, 2), "x",
                           "derived", f"{seeks:,.0f} scattered reads in the merged files, "
                           f"{100 * m.after_seek_share:.0f}% of their time in access times"))
        bound = (m.after_seek_share >= SCATTERED_SHARE
                 or m.speedup < PLAIN_ITERATE_WARN * loop.speedup)
        if not bound:
            continue
        gain = (f"would be slower than today's ({m.speedup:.2f}x)" if m.speedup < 1
                else f"would gain only {m.speedup:.2f}x"
                if m.speedup < PLAIN_ITERATE_WARN * loop.speedup
                else f"would gain {m.speedup:.2f}x, still")
        said += (f" Read with {reader.describe()}, the merged files {gain}: "
                 f"{seeks:,.0f} scattered reads, {100 * m.after_seek_share:.0f}% of the time "
                 "in access times.")
        options.append(Option(f"merge alone, {reader.describe()}", round(m.speedup, 3),
                              round(m.low, 3), round(m.high, 3),
                              "bound by scattered reads"))
        for name, after, opt, warm in fixes:
            if opt and optimise:
                continue  # -O is printed already
            f = ctx.merge_replay(k, optimise or opt, reader=reader, after_reader=after,
                                 after_warm=warm)
            if f is None or f.speedup < REMEDY_MIN_GAIN * m.speedup:
                continue  # not predicted faster than the merge alone: not offered
            options.append(Option(f"merge, then {name} ({reader.describe()} now)",
                                  round(f.speedup, 3), round(f.low, 3), round(f.high, 3),
                                  REMEDY_CAVEATS.get(name.split(" ", 1)[0])))
            actions.append(_remedy_action(ctx, name, step, k))
    if options:
        said += " The options below remove the scattered reads, each replayed."
    return said, ev, options, actions


#: A remedy is offered when its replay is at least this much faster than the merge alone.
REMEDY_MIN_GAIN = 1.05
REMEDY_CAVEATS = {
    "pre-stage": "the pre-read is not counted (it overlaps other work or serves several "
                 "passes); the files must fit in free memory",
    "hadd": "rewrites every basket: slower to merge",
    "read": "ROOT's CPU per basket and per MB taken as uproot's fitted ones (an assumption)",
}


def _remedy_action(ctx: Context, name: str, step: int, k: int) -> Action:
    tname = _tree_name(ctx)
    if name.startswith("iterate"):
        return Action.labelled(
            "uproot: give step_size in entries (whole clusters): no key pre-pass, each step "
            "reads a cluster's baskets in coalesced requests",
            f"for arrays in uproot.iterate('merged_*.root:{tname}', step_size={step}):\n"
            "    ...  # the analysis, as now",
            versions.UPROOT)
    if name.startswith("hadd"):
        return Action.labelled("merge with -O: baskets rewritten cluster by cluster",
                               hadd_groups(ctx.paths, f"-j {ctx.cores} -O -fk", k),
                               versions.HADD)
    if name.startswith("pre-stage"):
        return Action("pre-stage the merged files before the analysis",
                      "cat merged_*.root > /dev/null")
    return Action.labelled("ROOT (TTree loop): a TTreeCache of the automatic size, every "
                           "branch read", "tree->SetCacheSize(-1); "
                           "tree->AddBranchToCache(\"*\", true);", versions.ROOT_TTREE)


#: uproot's default ``step_size`` for ``iterate`` (a memory size: a key pre-pass first).
UPROOT_DEFAULT_STEP = "100 MB"
#: M001 says a reader is left bound by scattered reads when its replayed merge gains less than
#: this fraction of the event loop's replayed gain.
PLAIN_ITERATE_WARN = 0.5
#: ... or where the merged layout's replayed time is at least this share access times.
SCATTERED_SHARE = 0.3
REPLAY_ASSUMPTIONS = (
    "speed-up from replaying uproot's reads of today's and of the merged layout (basket maps "
    "of the sampled files) through a model of the device (the calibration's bandwidth and "
    "access time, the site's read-ahead), plus the CPU costs (the per-call cost from the "
    "warm event loop and the measured decompression rate, else the fitted terms); uproot's "
    "reads of basket data hide behind its CPU only within a read call, as far as the call's "
    "coalesced requests allow (a request's baskets are decompressed once it is read); its "
    "range spans the device's and the per-file costs' uncertainties and up to all of the "
    "reads hidden (an assumption)",
)


REPLAY_CHECKS = (
    "the readers' costs on the merged layout (and the options that remove scattered reads) "
    "replay their reads of today's and of the merged layout (basket maps of the sampled "
    "files) through a model of the device plus the CPU costs, uproot's data reads hidden "
    "behind its CPU within each read call as its requests allow; ranges span the device's "
    "and the per-file costs' uncertainties and up to all of the reads hidden",
)


def reader_assumption(reader: Reader) -> str:
    """The assumption line of a speed-up replayed with the program's reader."""
    return (f"the speed-up replays the program's reader ({reader.describe()}) on today's files "
            "and on the changed ones (basket maps of the sampled files) through a model of the "
            "device (the calibration's bandwidth and access time, the site's read-ahead), "
            "plus the CPU costs; its range spans the device's, the per-file costs' and "
            "uproot's overlap's uncertainties")


def replay_point(r: MergePrediction | RecompressionPrediction) -> PredictionPoint:
    """A layout change's prediction from its replay (one worker): a merge, a rewrite, a
    reader change."""
    after = r.after
    return PredictionPoint(
        workers=1, aggregate_mb_per_s=after.mb_per_s, low=after.mb_per_s * r.low / r.speedup,
        high=after.mb_per_s * r.high / r.speedup, events_per_s=after.events_per_s,
        speedup=r.speedup, speedup_low=r.low, speedup_high=r.high)


def replay_evidence(r: MergePrediction, model: PredictionPoint) -> list[Evidence]:
    b, a = r.before, r.after
    return [
        Evidence("replayed I/O now", round(b.io_s, 3), "s", "derived",
                 f"{b.io.device_requests * b.scale:,.0f} device reads, "
                 f"{b.io.seeks * b.scale:,.0f} of them paying the access time"),
        Evidence("replayed I/O merged", round(a.io_s, 3), "s", "derived",
                 f"{a.io.device_requests * a.scale:,.0f} device reads, "
                 f"{a.io.seeks * a.scale:,.0f} of them paying the access time "
                 f"({'hadd -O' if r.optimise else 'hadd'} layout, {r.outputs} files)"),
        Evidence("CPU now / merged", f"{b.cpu_s:.2f} / {a.cpu_s:.2f}", "s", "derived",
                 "opening (warm), read calls, baskets, decompression, processing"),
        Evidence("I/O hidden behind CPU now / merged", f"{b.hidden_s:.2f} / {a.hidden_s:.2f}",
                 "s", "derived", "within each read call, as far as its coalesced "
                 "requests allow (the range: up to all of the reads hidden)"),
        Evidence("rate model's speed-up", round(model.speedup or 0.0, 2), "x", "derived",
                 "the merge scenario of the fitted rates (request sizes unchanged)"),
    ]


def _small_baskets(ctx: Context) -> float | None:
    """The basket size a rewrite gives (compressed bytes), or ``None`` when the baskets are not
    small.  A rewrite with ROOT's defaults fills a basket buffer of ``ROOT_BASKET_BYTES``
    uncompressed (where a branch has that much data per cluster)."""
    tree = ctx.tree
    if tree is None or tree.baskets.mean_compressed_bytes is None:
        return None
    mean = tree.baskets.mean_compressed_bytes
    factor = tree.compression_factor or 1.0
    target = ROOT_BASKET_BYTES / factor
    if mean >= SMALL_BASKET_BYTES or target < 1.5 * mean:
        return None
    return target


def rewrite_rule(ctx: Context, merge_applies: bool) -> Recommendation | None:
    tree = ctx.tree
    if tree is None or merge_applies:
        return None
    target = _small_baskets(ctx)
    cluster_bytes = None
    if tree.cluster_entries and tree.entries:
        cluster_bytes = tree.compressed_bytes * tree.cluster_entries / tree.entries
    tiny_clusters = (cluster_bytes is not None and tree.clusters is not None
                     and tree.clusters.count > 1 and cluster_bytes < SMALL_CLUSTER_BYTES)
    if target is None and not tiny_clusters:
        return None
    mean = tree.baskets.mean_compressed_bytes or 0.0
    target = target or max(mean, ROOT_BASKET_BYTES / (tree.compression_factor or 1.0))
    scen = sc.rebasket(target)
    point = ctx.predict(scen)
    # the printed command (every file into one, hadd -O) replayed with the program's reader
    # (else the event loop's): the headline where the basket maps allow it
    prog = ctx.program_reader
    rctx = ctx.reader_context() if prog is not None else ctx
    r = rctx.merge_replay(tree.files, True, reader=prog)
    extra: tuple[str, ...] = ()
    rate_model = point
    if r is not None:
        point = replay_point(r)
        how = prog.describe() + " (the program's reader)" if prog is not None else \
            "uproot iterate at the event loop's entry step"
        extra = (f"the speed-up replays {how} on today's files and on the one file hadd -O -fk "
                 "writes (basket maps of the sampled files, baskets refilled as hadd -O does) "
                 "through a model of the device, plus the CPU costs; its range spans the "
                 "device's and the per-file costs' uncertainties and uproot's overlap (up to "
                 "all of the reads hidden)",
                 *((c,) if (c := layout_caveat(ctx)) else ()), *ctx.replay_cost_notes())
    ev = [
        Evidence("baskets", tree.baskets.count, "", "probed"),
        Evidence("mean basket size (compressed)", round(mean / 1e3, 2), "kB", "probed"),
        Evidence("small-basket threshold", SMALL_BASKET_BYTES / 1e3, "kB", "threshold"),
        Evidence("basket size after the rewrite", round(target / 1e3, 1), "kB", "assumed",
                 f"ROOT's default basket buffer ({ROOT_BASKET_BYTES:,} B uncompressed) at the "
                 f"data's compression factor {tree.compression_factor or 1:.2f}"),
    ]
    if cluster_bytes is not None:
        ev.append(Evidence("mean cluster size (compressed)", round(cluster_bytes / 1e6, 3),
                           "MB", "probed", f"{tree.cluster_entries:,.0f} entries per cluster; "
                           f"threshold {SMALL_CLUSTER_BYTES / 1e6:g} MB"))
    if "basket_s" in ctx.summary.parameters:
        ev.append(ctx.param_evidence("basket_s", "cost per basket", 1e6, "µs"))
    if r is not None:
        b, a = r.before, r.after
        ev += [
            Evidence("replayed time now / rewritten", f"{b.total_s:.2f} / {a.total_s:.2f}", "s",
                     "derived", f"one worker, cold; {tree.files} files merged into one by "
                     "hadd -O -fk (the printed command): the headline"),
            Evidence("the rate model's figure (baskets resized, files kept)",
                     round(rate_model.speedup or 0.0, 2), "x", "derived",
                     "the fitted per-basket cost alone; not the printed command"),
        ]
    return ctx.make(
        rule=R001,
        title=f"Rewrite the {'tiny baskets' if mean < SMALL_BASKET_BYTES else 'tiny clusters'}"
              f" (hadd -O or a larger fAutoFlush)",
        audience="analyst", point=point, scenario=scen,
        summary=(f"The files hold {tree.baskets.count:,} baskets of {mean / 1e3:.1f} kB on "
                 "average (as a plain hadd of small files leaves them): every basket costs a "
                 "fixed amount to find, read and unpack. Rewriting them into baskets of about "
                 f"{target / 1e3:.0f} kB pays that cost less often."),
        evidence=ev,
        actions=[
            Action.labelled("rewrite with hadd, re-optimising baskets and clusters (-O), "
                            "keeping the compression (-fk)",
                            hadd_all(ctx.paths, "-O -fk", "rewritten.root"), versions.HADD),
            Action.labelled("or, where the files are produced, flush larger clusters (ROOT)",
                            "tree->SetAutoFlush(-30000000);  // 30 MB clusters: ROOT's default",
                            versions.ROOT_TTREE),
            Action.labelled("with uproot, write larger chunks per extend() (one basket per "
                            "branch per call)",
                            "out[tree].extend(arrays)  # e.g. 100 000 entries per call",
                            versions.UPROOT),
        ], extra_assumptions=extra)


def _merged(found: dict[str, Recommendation | None]) -> bool:
    """M001 applies (not "not recommended"): R001 then stays quiet."""
    merge = found.get("M001")
    return merge is not None and merge.contradicted is None


M001 = Rule("M001", "files", "merge", "Merge small files",
            trigger="per-file costs (opening, metadata, first reads) take >= 10% of a file's time",
            prediction="the rate model's merge scenario (fewer, larger files: fewer opens); the "
                       "merged layout's reads replayed for the readers users run (and for the "
                       "speed-up itself with --reader or replay_merge)",
            measure="merge a sample (hep-advisor try M001), or time the analysis on the merged "
                    "files",
            change="merge", check=lambda ctx, found: merge_rule(ctx))
R001 = Rule("R001", "files", "rewrite", "Rewrite tiny baskets into larger ones",
            trigger="mean basket < 8 kB, or clusters < 1 MB (and no merge applies)",
            prediction="the rate model's rebasket scenario (fewer, larger baskets), the rewritten "
                       "layout's reads replayed",
            measure="rewrite a sample (hep-advisor try R001), or time the analysis on the "
                    "rewritten files",
            change="rewrite", check=lambda ctx, found: rewrite_rule(ctx, _merged(found)))

RULES = (M001, R001)
