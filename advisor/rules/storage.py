"""Storage rules: read-ahead (A001), TTreeCache (T001), caching or pre-staging (P001), and
the disk layout (L001)."""

from __future__ import annotations

import math
import shlex
from dataclasses import replace

from hep_advisor.findings.recommendation import (
    MIN_SPEEDUP,
    Action,
    Evidence,
    Option,
    Recommendation,
    contradicted,
)
from hep_advisor.models import scenarios as sc
from hep_advisor.models.calcosts import uproot_key_cost
from hep_advisor.models.replay.fileios import cold_file_ios
from hep_advisor.models.replay.predict import STEP_BYTES, Reader, cluster_step
from hep_advisor.models.scenarios import PredictionPoint
from hep_advisor.models.sites import StorageSpec
from hep_advisor.rules import versions
from hep_advisor.rules.context import Context
from hep_advisor.rules.files import (
    REMEDY_CAVEATS,
    UPROOT_DEFAULT_STEP,
    reader_assumption,
    replay_point,
)
from hep_advisor.rules.inputs import Inputs, find_root, words
from hep_advisor.rules.rule import Rule

#: Read-ahead: a size is worth it when raw reads of that size are this much faster.
READAHEAD_MIN_GAIN = 1.10
#: ... and the sweep's best size is reached within this fraction.
READAHEAD_NEAR_BEST = 0.90
#: TTreeCache: recommended when reads reaching the storage are smaller than this.
SMALL_READ_BYTES = 512 * 1024
#: TTreeCache size bounds (bytes).
TREECACHE_MIN, TREECACHE_MAX = 10_000_000, 100_000_000
#: Layout: considered when storage takes at least this share of the time at the worker count.
LAYOUT_MIN_SHARE = 0.20
#: Layouts tried: (option, caveat).
LAYOUTS = (
    ("separate:4", "four disks, each with its own files: no redundancy; a failed disk loses "
     "its files only"),
    ("raid0:4", "striped over four disks: one failed disk loses everything"),
    ("raid5:4", "four disks with parity: survives one failed disk; slower writes"),
    ("ssd", "one SATA SSD: capacity per cost is lower than a disk's"),
    ("nvme", "one NVMe SSD: capacity per cost is lowest"),
)


def _device(ctx: Context) -> str:
    for s in ctx.site.storage:
        if s.device:
            return s.device if s.device.startswith("/dev/") else f"/dev/{s.device}"
    return "/dev/DEVICE"


def _sysfs_readahead(dev: str) -> str:
    return f"/sys/block/{dev.rsplit('/', 1)[-1]}/queue/read_ahead_kb"


def _readahead_kb(ctx: Context) -> float | None:
    kbs = [s.read_ahead_kb for s in ctx.site.storage if s.read_ahead_kb]
    return float(kbs[0]) if kbs else None


def _file_ios_at(ctx: Context, kb: float) -> float | None:
    """The device I/Os of a file opened and read whole, cold, at a read-ahead of ``kb`` KiB,
    replayed from the basket maps as the baseline's were (``None`` where the baseline has no
    such count)."""
    if not ctx.baseline.config.get("device_ios") or not ctx.basket_maps:
        return None
    cal = ctx.calibration
    return cold_file_ios(ctx.basket_maps, ctx.site, cal.raw_read if cal is not None else None,
                         ctx.baseline.config.get("calls", 1.0) or 1.0, read_ahead_kb=int(kb))


def readahead_rule(ctx: Context) -> Recommendation | None:
    cal = ctx.calibration
    if cal is None:
        return None
    now_kb = _readahead_kb(ctx)
    seq = sorted((p.request_bytes, p.mb_per_s) for p in cal.request_sweep
                 if p.pattern == "sequential" and p.mb_per_s and math.isfinite(p.mb_per_s))
    if not seq or now_kb is None:
        return None
    best = max(r for _, r in seq)
    at_now = [r for b, r in seq if b <= now_kb * 1024]
    if not at_now:
        return None
    rate_now = at_now[-1]
    size = next((b for b, r in seq if r >= READAHEAD_NEAR_BEST * best), None)
    if size is None or size <= now_kb * 1024:
        return None
    kb = size / 1024
    # the program's reader on today's files at the new read-ahead, replayed (the engine)
    prog = ctx.program_reader or Reader()
    replayed = ctx.reader_replay(prog, prog, read_ahead_kb=int(kb))
    shows = replayed is not None and replayed.speedup >= MIN_SPEEDUP
    rates_say = ctx.baseline.access != "scattered" and best >= READAHEAD_MIN_GAIN * rate_now
    if not rates_say and not shows:
        return None
    scen = sc.read_ahead(kb, device_ios=_file_ios_at(ctx, kb))
    point = ctx.predict(scen)
    extra: list[Evidence] = []
    assumptions: tuple[str, ...] = ()
    if replayed is not None:
        b, a = replayed.before, replayed.after
        extra.append(Evidence(
            "replayed: your reader at this read-ahead", round(replayed.speedup, 2), "x",
            "derived", f"{b.io.device_requests * b.scale:,.0f} -> "
            f"{a.io.device_requests * a.scale:,.0f} device reads, "
            f"{b.io.seeks * b.scale:,.0f} -> {a.io.seeks * a.scale:,.0f} paying the access "
            "time"))
        point = replay_point(replayed)  # the engine; the rate model's scenario: a fallback
        assumptions = ("the speed-up replays your reader's reads of today's files through a "
                       "model of the device at both read-aheads",)
    dev = _device(ctx)
    return ctx.make(
        rule=A001, title=f"Raise the read-ahead to {kb:,.0f} KiB",
        audience="site admin", point=point, scenario=scen,
        summary=(f"Reads of {kb:,.0f} KiB ran at {best:,.0f} MB/s against {rate_now:,.0f} "
                 f"MB/s at the current read-ahead of {now_kb:,.0f} KiB."),
        evidence=[
            Evidence("read-ahead now", now_kb, "KiB", "probed"),
            *(Evidence(f"sequential reads of {b // 1024:,} KiB", round(r, 1), "MB/s",
                       "measured") for b, r in seq),
            Evidence("worth it from", round(100 * (READAHEAD_MIN_GAIN - 1)), "% faster",
                     "threshold"),
            *extra,
        ],
        extra_assumptions=assumptions,
        actions=[
            Action.labelled(f"set the read-ahead of {dev} (in 512-byte sectors; until reboot)",
                            f"blockdev --setra {int(kb * 2)} {shlex.quote(dev)}",
                            versions.BLOCKDEV),
            Action.labelled("or through sysfs, and persist it with a udev rule",
                            f"echo {int(kb)} > {shlex.quote(_sysfs_readahead(dev))}",
                            versions.SYSFS),
        ])


def entry_step(ctx: Context) -> int:
    """An entry-count ``step_size`` for uproot aligned with the clusters (about 50 MB of arrays
    per step, whole clusters): from the basket maps where read, else the tree's probe."""
    if ctx.basket_maps:
        return cluster_step(ctx.basket_maps, ctx.branches or None)
    tree = ctx.tree
    if tree is None or not tree.entries:
        return 100_000
    per_entry = tree.compressed_bytes * (tree.compression_factor or 1.0) / tree.entries
    cluster = max(round(tree.cluster_entries or tree.entries), 1)
    return cluster * max(1, round(STEP_BYTES / max(per_entry, 1.0) / cluster))


def treecache_rule(ctx: Context) -> Recommendation | None:
    tree = ctx.tree
    b = ctx.baseline
    if tree is None:
        return None
    step = entry_step(ctx)
    # the program's reader, then the printed change, for its engine (the other engine's
    # change from its default reader: an option)
    prog = ctx.program_reader
    up_before = prog if prog is not None and prog.engine == "uproot" else \
        Reader(step=UPROOT_DEFAULT_STEP)
    root_before = prog if prog is not None and prog.engine == "root" else \
        Reader("root", cache_bytes=0)
    cluster = None
    if tree.cluster_entries and tree.entries:
        cluster = tree.compressed_bytes * tree.cluster_entries / tree.entries
    size = min(max(cluster or TREECACHE_MIN, TREECACHE_MIN), TREECACHE_MAX)
    mb = max(1, round(size / 1e6))
    # the printed lines, replayed: SetCacheSize(mb MB) and AddBranchToCache("*", true), which
    # skips ROOT's learning phase (benchmarks/lab/check_root_cache_throttle.py: replayed with
    # the learning phase, a throttled disk's read-ahead read the files almost whole, 85
    # device requests and 41 MB, where the printed lines read 156 and 32 MB, as replayed
    # without it: T001 5.06x where 2.68x came)
    root = ctx.reader_replay(root_before, Reader("root", cache_bytes=mb * 1_000_000,
                                                 manual=True))
    up = ctx.reader_replay(up_before, Reader(step=step))
    mine = None if prog is None else root if prog.engine == "root" else up
    if root is None and (b.access != "scattered"
                         or b.config["request_bytes"] >= SMALL_READ_BYTES):
        return None
    if mine is not None and mine.speedup < MIN_SPEEDUP:
        return None  # the replay shows no gain for the program's reader
    if root is not None and root.speedup < MIN_SPEEDUP and (up is None
                                                            or up.speedup < MIN_SPEEDUP):
        return None  # the replay shows no gain for either reader
    request = min(size, b.config["file_mb"] * 1e6)
    scen = sc.request_size(request)
    point = ctx.predict(scen)
    extra: tuple[str, ...] = ()
    options: list[Option] = []
    ev = [
        Evidence("read size reaching the storage", round(b.config["request_bytes"] / 1e3, 1),
                 "kB", "derived", "the larger of the mean basket and the read-ahead"),
        Evidence("branches read", tree.branches, "", "probed",
                 "over 100: baskets interleave, reads scatter"),
        Evidence("small-read threshold", SMALL_READ_BYTES / 1e3, "kB", "threshold"),
        Evidence("cache size", round(size / 1e6, 1), "MB", "derived",
                 "a cluster's compressed bytes, within 10-100 MB"),
    ]
    for name, r, caveat in (
            (f"{root_before.describe()} -> with a {mb} MB TTreeCache, every branch added",
             root, REMEDY_CAVEATS["read"]),
            (f"{up_before.describe()} -> step_size={step:,} entries", up, None)):
        if r is None:
            continue
        before, after = r.before, r.after
        ev.append(Evidence(
            f"replayed: {name}", round(r.speedup, 2), "x", "derived",
            f"{before.io.seeks * before.scale:,.0f} -> {after.io.seeks * after.scale:,.0f} "
            f"scattered reads; {before.total_s:.3g} s -> {after.total_s:.3g} s"))
        options.append(Option(name, round(r.speedup, 3), round(r.low, 3), round(r.high, 3),
                              caveat))
    replayed = [(r, what) for r, what in (
        (root, f"{root_before.describe()}, then with a TTreeCache (" +
         REMEDY_CAVEATS["read"] + ")"),
        (up, f"{up_before.describe()}, then with step_size={step:,} entries"))
        if r is not None and (mine is None or r is mine)]
    if replayed:  # the point: the program's reader's change (not told: the larger gain)
        best, what = max(replayed, key=lambda x: x[0].speedup)
        point = replay_point(best)
        extra = (f"the speed-up is {what}, replayed on today's files through a model of the "
                 "device (the other reader's is among the options)", *ctx.replay_cost_notes(),
                 *((k,) if up is not None and (k := ctx.key_cost_note()) else ()))
    if up is not None:
        ev += ctx.touch_evidence(up.before, up.after, f"{step:,}-entry steps")
        key_s, (k_lo, k_hi), measured = uproot_key_cost(ctx.calibration)
        ev.append(Evidence("uproot's CPU per basket key (a memory-size step's pre-pass)",
                           round(key_s * 1e6, 1), "µs", "measured" if measured else "assumed",
                           f"range {k_lo * 1e6:.0f}-{k_hi * 1e6:.0f} µs"))
    cal = ctx.calibration
    if cal is not None and cal.root_cache_off is not None and cal.root_cache_on is not None:
        ev += [Evidence("ROOT reads without TTreeCache",
                        round((cal.root_cache_off.mean_read_bytes or 0) / 1e3, 1), "kB each",
                        "measured", f"{cal.root_cache_off.read_calls:,} calls"),
               Evidence("ROOT reads with TTreeCache",
                        round((cal.root_cache_on.mean_read_bytes or 0) / 1e3, 1), "kB each",
                        "measured", f"{cal.root_cache_on.read_calls:,} calls")]
    root_gains = (root is None or root.speedup >= MIN_SPEEDUP) and \
        (prog is None or prog.engine == "root")
    actions = []
    if root_gains:
        actions += [
            Action.labelled("ROOT (TTree loop)", f"tree->SetCacheSize({mb * 1_000_000}); "
                            "tree->AddBranchToCache(\"*\", true);", versions.ROOT_TTREE),
            Action.labelled("RDataFrame and TTree::Draw use a TTreeCache by default; keep it "
                            "on", "ROOT.gEnv.SetValue('TTreeCache.Size', 1.0)  # x the cluster "
                            "size", versions.PYROOT)]
    if up is None or up.speedup >= 1.0:  # never a reader setting the replay predicts slower
        actions.append(Action.labelled(
            "uproot: give step_size in entries, whole clusters (a memory size such as the "
            "default '100 MB' first reads every basket's key, one request each)",
            f"tree.iterate(step_size={step})", versions.UPROOT))
    title = f"Read through a {mb} MB TTreeCache"
    summary = ("The baskets of the branches read are small and interleaved, so reads reach "
               "the storage small and scattered. A TTreeCache gathers a cluster's baskets into "
               "a few large reads.")
    if not root_gains:  # uproot's reader (or only uproot's memory-size step scatters here)
        title = f"Read whole clusters with uproot: step_size={step:,} entries"
        summary = ("uproot's memory-size step_size (the default '100 MB') first reads every "
                   "basket's key, one small request each, branch by branch; an entry count "
                   "of whole clusters reads each cluster's baskets in a few coalesced "
                   "requests. A ROOT loop gains nothing from a TTreeCache here (replayed).")
        if prog is not None and prog.engine == "uproot" and not isinstance(prog.step, str):
            summary = (f"Your program reads with {prog.describe()}: steps that end inside "
                       "clusters read each basket in pieces, in more requests; an entry count "
                       "of whole clusters reads each cluster's baskets in a few coalesced "
                       "requests (replayed).")
    rec = ctx.make(
        rule=T001, title=title,
        audience="analyst", point=point, scenario=scen, summary=summary,
        evidence=ev, actions=actions, options=options, extra_assumptions=extra)
    off, on = (cal.root_cache_off, cal.root_cache_on) if cal is not None else (None, None)
    if (rec is None or not root_gains or off is None or on is None or off.cache != on.cache
            or off.entries != on.entries or not off.loop_s or not on.loop_s):
        return rec
    return _against(rec, off.loop_s / on.loop_s,
                    f"ROOT's event loop measured {off.loop_s:.3g} s without TTreeCache and "
                    f"{on.loop_s:.3g} s with it ({off.cache})")


def _against(rec: Recommendation, measured: float, what: str) -> Recommendation:
    """``rec``, or "not recommended" where the speed-up its read test measured (``measured``,
    ``what`` says how) lies below its predicted interval."""
    if measured >= rec.speedup_low:
        return rec
    return contradicted(rec, f"{what}: {measured:.2f}x, below the predicted "
                             f"{rec.speedup_low:.2f}–{rec.speedup_high:.2f}x")


def cache_rule(ctx: Context) -> Recommendation | None:
    b = ctx.baseline
    cal = ctx.calibration
    if b.config.get("cached", 0.0) > 0.5 or cal is None or cal.memory is None:
        return None
    fits = cal.memory.fits_in_ram
    if not fits:
        return None
    scen = sc.cached()
    point = ctx.predict(scen)
    prog = ctx.program_reader
    # the program's reader known: its reads of today's files replayed cold, then pre-staged
    mine = ctx.reader_context().reader_replay(prog, prog, after_warm=True) \
        if prog is not None else None
    extra_ev: list[Evidence] = []
    assumptions: tuple[str, ...] = ()
    if mine is not None and prog is not None and ctx.reader is not None:
        point = replay_point(mine)
        cold = mine.before
        extra_ev.append(Evidence(
            "speed-up with the program's reader", round(mine.speedup, 2), "x", "derived",
            f"{prog.describe()} (reader {ctx.reader.text}) replayed on today's files from the "
            f"device ({cold.io.device_requests * cold.scale:,.0f} device reads, "
            f"{cold.io.seeks * cold.scale:,.0f} paying the access time; {cold.total_s:.3g} s) "
            f"and from the page cache ({mine.after.total_s:.3g} s): the headline figure"))
        assumptions = (reader_assumption(prog),)
    rec = ctx.make(
        rule=P001, title="Pre-stage the data into memory (page cache)",
        audience="analyst", point=point, scenario=scen,
        summary=(f"The data ({cal.memory.dataset_bytes / 1e9:.2f} GB) fit in the free memory "
                 f"({cal.memory.available_bytes / 1e9:.1f} GB): read once ahead of the "
                 "analysis, every later pass reads at the page-cache rate."),
        evidence=[
            Evidence("dataset size", round(cal.memory.dataset_bytes / 1e9, 3), "GB", "probed"),
            Evidence("available memory", round(cal.memory.available_bytes / 1e9, 2), "GB",
                     "probed"),
            ctx.param_evidence("cache_mb_per_s", "page-cache rate", 1.0, "MB/s per stream"),
            ctx.param_evidence("storage_mb_per_s", "storage rate", 1.0, "MB/s per stream"),
            *extra_ev,
        ],
        actions=[
            Action("read the files once before the analysis (they stay cached while memory "
                   "allows)", pre_read(ctx.paths)),
            Action("or, for streams of files, copy the next file to local disk or memory "
                   "while the current one is processed (a file stager; xrdcp for remote data)"),
            Action.labelled("or with vmtouch, which reads them into memory (-t) and shows how "
                            "much of them is cached",
                            f"vmtouch -t {words((*ctx.paths.files, *ctx.paths.dirs))}",
                            versions.VMTOUCH),
        ],
        extra_assumptions=("the time of the pre-read is not counted: it overlaps other work "
                           "or is paid once for several passes", *assumptions))
    loop = cal.event_loop
    if (rec is None or loop is None or loop.cold is None or loop.warm is None
            or loop.cold.conditions.cache != "cold" or not loop.cold.median
            or not loop.warm.median):
        return rec
    return _against(rec, loop.warm.median / loop.cold.median,
                    f"the event loop measured {loop.cold.median:,.0f} events/s cold and "
                    f"{loop.warm.median:,.0f} from the page cache")


def _replayed_layout(ctx: Context, n: int, spec: StorageSpec, sd: float | None
                     ) -> tuple[float, float, float] | None:
    """(speed-up, low, high) of the program's reader's job at ``n`` workers on ``spec``
    against today's storage at ``n`` (:func:`~hep_advisor.models.replay.engine.on_storage`):
    the device kind's assumed spread (``sd``) and the parallel efficiency's range each moved
    alone, their log shifts added in quadrature.  ``None`` without the replayed job."""
    from hep_advisor.models.replay.engine import Z90, on_storage
    from hep_advisor.models.replay.quadrature import quadrature
    from hep_advisor.rules.engine import (
        efficiency,
        oversubscription,
        replayed_baseline,
        replayed_job,
    )

    rj, rb = replayed_job(ctx), replayed_baseline(ctx)
    if rj is None or rb is None:
        return None
    eff, eta, cores = efficiency(ctx), oversubscription(ctx)[0], ctx.baseline.cores

    def speedup(f: float = 1.0, e: float = eff[0]) -> float:
        new = on_storage(rj, spec.mb_per_s * f, spec.access_ms / f, spec.count, spec.layout,
                         rb.device_mb_per_s, rb.access_ms, rb.seeks)
        return rj.seconds(n, e, cores, eta) / new.seconds(n, e, cores, eta)

    s = speedup()
    effects = [[speedup(e=e) for e in eff[1:]]]
    if sd:
        effects.append([speedup(f=math.exp(k * Z90 * sd)) for k in (-1.0, 1.0)])
    return (s, *quadrature(s, effects))


def _device_now(ctx: Context) -> list[Evidence]:
    """The storage today as the engine has it: the replay's device (measured), else the rate
    model's fitted terms."""
    from hep_advisor.rules.engine import replayed_baseline

    rb = replayed_baseline(ctx)
    if rb is None:
        return [ctx.param_evidence("storage_mb_per_s", "storage rate", 1.0, "MB/s per stream"),
                ctx.param_evidence("access_ms", "access time", 1.0, "ms")]
    return [Evidence("storage rate", round(rb.device_mb_per_s, 1), "MB/s", "measured",
                     "the cold raw read"),
            Evidence("access time", round(rb.access_ms, 2), "ms", "measured",
                     "the request sweep's small reads"),
            Evidence("device time of the job (replayed), one worker", round(rb.io_s, 2), "s",
                     "derived", f"{rb.seeks:,.0f} of {rb.device_requests:,.0f} device I/Os "
                     "paying the access time; each layout rescales its transfer and access "
                     "times")]


def layout_rule(ctx: Context) -> Recommendation | None:
    b = ctx.baseline
    if b.config.get("cached", 0.0) > 0.5 or b.config.get("remote", 0.0) > 0.5:
        return None
    from hep_advisor.rules.engine import efficiency, oversubscription, replayed_job
    from hep_advisor.rules.verdict import verdict

    n = max(ctx.cores, 1)
    rj = replayed_job(ctx)
    if rj is not None:  # the engine's share of the storage at n workers
        share = rj.shares(n, efficiency(ctx)[0], b.cores, oversubscription(ctx)[0]).get(
            "storage", 0.0)
    else:  # the fallback: the rate model's
        v = verdict(b, n)
        share = next((s.share for s in v.shares if s.limit == "storage"), 0.0)
    if share < LAYOUT_MIN_SHARE:
        return None
    options = []
    best = None
    base_n = None  # the fallback's current storage at the same worker count
    for text, caveat in LAYOUTS:
        spec, sd, statement = sc.parse_storage(text, b)
        scen = sc.combine(sc.devices(spec, sd, (statement,)), sc.workers(n),
                          name=f"{text} at {n} workers")
        replayed = _replayed_layout(ctx, n, spec, sd)
        if replayed is not None and rj is not None:  # the engine: the job at n, rescaled
            s, lo, hi = replayed
            t = rj.seconds(n, efficiency(ctx)[0], b.cores, oversubscription(ctx)[0]) / s
            mb = rj.compressed_mb / t
            point = PredictionPoint(n, mb, mb * lo / s, mb * hi / s, rj.entries / t, s, lo, hi)
        else:  # the rate model's devices scenario, over its own prediction at n
            base_n = base_n or ctx.predict(sc.workers(n))
            model = ctx.predict(scen)
            if model.speedup is None or base_n.speedup is None:
                continue
            s = model.speedup / base_n.speedup
            point = replace(model, speedup=s,
                            speedup_low=(model.speedup_low or 0) / base_n.speedup,
                            speedup_high=(model.speedup_high or 0) / base_n.speedup)
        options.append(Option(text, round(s, 3), round(point.speedup_low or s, 3),
                              round(point.speedup_high or s, 3), caveat))
        if best is None or s > best[0]:
            best = (s, text, scen, point)
    if best is None:
        return None
    s, text, scen, rel = best
    return ctx.make(
        rule=L001, title=f"Spread the data over faster storage ({text})",
        audience="site admin", point=rel, scenario=scen,
        summary=(f"At {n} workers, storage takes {100 * share:.0f}% of the time. The options "
                 "below are predicted at the same worker count; each device kind's figures "
                 "are assumptions (see evidence)."),
        evidence=[
            Evidence("storage's share at this worker count", round(100 * share, 1), "%",
                     "derived", f"{n} workers"),
            Evidence("threshold", 100 * LAYOUT_MIN_SHARE, "%", "threshold"),
            *_device_now(ctx),
        ],
        actions=[Action(f"{o.name}: {o.predicted_speedup:.2f}x ({o.caveat})") for o in
                 sorted(options, key=lambda o: -o.predicted_speedup)],
        options=sorted(options, key=lambda o: -o.predicted_speedup),
        extra_assumptions=("separate disks: the files spread evenly, each job reading one "
                           "disk at a time; RAID: striped reads",))


def pre_read(ins: Inputs) -> str:
    """A command that reads every ROOT file of the inputs once (into the page cache)."""
    parts = [f"cat {words(ins.files)} > /dev/null"] if ins.files else []
    if ins.dirs:
        parts.append(f"{find_root(ins, '-exec cat {} +')} > /dev/null")
    return " && ".join(parts)


A001 = Rule("A001", "storage", "readahead", "Raise the read-ahead",
            trigger="larger sequential reads measured >= 10% faster",
            prediction="the program's reader replayed on today's files at both "
                       "read-aheads (the rate model's read-ahead scenario where no basket map "
                       "was read)",
            measure="time the analysis once with the printed read-ahead", audience="site admin",
            check=lambda ctx, found: readahead_rule(ctx))
T001 = Rule("T001", "storage", "treecache", "Read through ROOT's TTreeCache",
            trigger="scattered reads reach the storage smaller than 512 kB (over a link: ROOT "
                    "reads one basket per round trip)",
            prediction="the program's reader, then the printed setting for its engine, "
                       "replayed through the device (or the link); the rate model's "
                       "request-size scenario where no basket map was read",
            measure="time the analysis once with the printed read setting",
            check=lambda ctx, found: treecache_rule(ctx))
P001 = Rule("P001", "storage", "cache", "Pre-stage the data into memory",
            trigger="the data fit in the available memory and are read cold",
            prediction="the rate model's cached scenario (the page cache's measured rate), the "
                       "reader's reads replayed warm",
            measure="read the files once (the printed command), then time the analysis",
            audience="site admin", check=lambda ctx, found: cache_rule(ctx))
L001 = Rule("L001", "storage", "layout", "Spread the data over faster storage",
            trigger="storage takes >= 20% of the time at one worker per core",
            prediction="the program's reader's replayed job at one worker per core, its "
                       "device time rescaled to each layout's devices (separate disks, RAID, "
                       "SSD, NVMe: assumed figures); the rate model's devices scenario where "
                       "no replay ran",
            measure="time the analysis once with the change applied",
            audience="site admin", check=lambda ctx, found: layout_rule(ctx))

RULES = (A001, T001, P001, L001)
