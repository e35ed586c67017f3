"""File-level rules: merge small files (M001), rewrite tiny baskets or clusters (R001)."""

from __future__ import annotations

import math
import shutil

from models import scenarios as sc
from models.physics import config_matrix, rates
from models.replay.predict import MergePrediction
from models.scenarios import PredictionPoint

from ..advice import Action, Evidence, Recommendation
from . import versions
from .context import Context
from .inputs import Inputs, hadd_all, hadd_groups, python_files

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
    at one worker, from the fitted model."""
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
    if replayed is not None:
        point = replay_point(replayed, point)
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
                 "derived", "one per 50 MB of arrays (uproot's iterate step)"),
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
    if replayed is not None:
        ev.extend(replay_evidence(replayed, rate_model))
        extra = REPLAY_ASSUMPTIONS
        plain = ctx.merge_replay(k, small_baskets is not None, UPROOT_DEFAULT_STEP)
        if plain is not None and plain.speedup < PLAIN_ITERATE_WARN * replayed.speedup:
            ev.append(Evidence(
                "replayed speed-up with uproot's default step", round(plain.speedup, 2), "x",
                "derived", f"step_size={UPROOT_DEFAULT_STEP!r}: every basket's key is read "
                f"first, branch by branch; {plain.after.io.seeks * plain.after.scale:,.0f} "
                "scattered reads in the merged files"))
            gain = (f"would read them slower ({plain.speedup:.2f}x)" if plain.speedup < 1
                    else f"would gain only {plain.speedup:.2f}x")
            summary += (f" An analysis that calls uproot.iterate with its default step_size "
                        f"({UPROOT_DEFAULT_STEP}) {gain}: it reads "
                        "every basket's key first, branch by branch, which scatters its reads "
                        "over the merged files; give step_size in entries (as the calibration "
                        "does) to keep the gain.")
        if replayed.after_seek_share >= SCATTERED_SHARE:
            summary += (f" The merged files would still be read in "
                        f"{replayed.after.io.seeks * replayed.after.scale:,.0f} scattered "
                        f"requests ({100 * replayed.after_seek_share:.0f}% of the time in "
                        "access times): read them with a coalescing reader, or rewrite them "
                        "with a clustered layout.")
    return ctx.make(
        code="M001", kind="merge", title=f"Merge the small files to about {target:,.0f} MB",
        audience="analyst", point=point, scenario=scen, summary=summary,
        evidence=ev, actions=actions, extra_assumptions=extra)


#: uproot's default ``step_size`` for ``iterate`` (a memory size: a key pre-pass first).
UPROOT_DEFAULT_STEP = "100 MB"
#: M001 warns when the merge replayed for uproot's default step gains less than this fraction
#: of the event loop's replayed gain.
PLAIN_ITERATE_WARN = 0.5
#: Where the merged layout's replayed time is at least this share access times, M001 says the
#: merge leaves the job bound by scattered reads.
SCATTERED_SHARE = 0.3
REPLAY_ASSUMPTIONS = (
    "speed-up from replaying uproot's reads of today's and of the merged layout (basket maps "
    "of the sampled files) through a model of the device (the calibration's bandwidth and "
    "access time, the site's read-ahead), plus the fitted CPU costs; its range spans the "
    "device's and the per-file costs' uncertainties",
)


def replay_point(r: MergePrediction, model: PredictionPoint) -> PredictionPoint:
    """The merge's prediction from its replay (one worker)."""
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
                 "fitted: opening (warm), read calls, baskets, decompression, processing"),
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
    return ctx.make(
        code="R001", kind="rewrite",
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
        ])
