"""M001 merge: the rate model's prediction and the replay's, against what the merge realises.

    python -m benchmarks.validation.bench_merge_replay [--budget 30] [--repeats 2] [--datasets a,b]

For each dataset (written by ROOT here, unlike the demo):

- ``a``: 60 files x 300 entries x 400 float branches, ZLIB-1 (about 0.4 MB each);
- ``b``: 20 files x 2,000 entries x 150 float branches, LZ4 (about 0.9 MB each);
- ``c``: 40 files x 1,000 entries x 250 float branches, ZSTD-5 (about 0.9 MB each);

1. the small files are copied onto an emulated 70 MB/s, 120 IOPS disk (``testbench``: a loop
   device throttled by a cgroup-v1 blkio group; run as root);
2. the probes and the calibration run inside the throttled cgroup (as
   ``benchmarks/validation/advice_comes_true.py`` does), then ``advise_from`` ranks the
   recommendations twice: with the rate model's merge scenario (the default) and with
   ``replay_merge=True`` (the basket maps of 8 files replayed through the device model);
3. M001's first printed command (``hadd``, grouped) is run as printed, in a directory on the
   emulated disk;
4. the same analysis is run cold before and after, inside the cgroup, with two readers: the
   calibration's event loop (``run_job``: one process, every branch, one ``iterate`` step per
   50 MB of arrays) and a plain ``uproot.iterate`` over every branch with its default
   ``step_size`` (``"100 MB"``: uproot first reads every basket's key, branch by branch);
   realised speed-up = events/s after / before (median of ``--repeats`` runs), with the
   device reads the cgroup saw (``blkio.throttle.io_serviced``).

Prints per dataset and reader: predicted (rate model; replay, with its range; and the replay
with the fitted CPU terms and I/O and CPU summed, as before the overlap and the event loop's
per-call cost) and realised, the replayed device reads and I/O seconds against the measured
ones, and each layout's predicted time (I/O, synchronous I/O, CPU, I/O hidden behind the CPU)
beside the measured one.  About 4 minutes per
dataset on two shared cores.
"""

from __future__ import annotations

import argparse
import os
import pickle
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TREE = "Events"


#: name -> (files, entries per file, branches, ROOT compression setting, description)
DATASETS = {
    "a": (60, 300, 400, 101, "60 files x 300 entries x 400 branches, ZLIB-1"),
    "b": (20, 2000, 150, 404, "20 files x 2000 entries x 150 branches, LZ4-4"),
    "c": (40, 1000, 250, 505, "40 files x 1000 entries x 250 branches, ZSTD-5"),
}


def write(work: Path, names: list[str]) -> dict[str, Path]:
    from testbench.rootwriter import write_flat_root

    write_flat_root([(str(work / n), *DATASETS[n][:4]) for n in names],
                    name="small_{k:03d}.root", seed=1000)
    return {n: work / n for n in names}


# -- inside the cgroup (forked children) --------------------------------------------------------

def calibrate_there(path: str, budget: float):  # type: ignore[no-untyped-def]
    from hep_advisor.probes import probe_dataset, probe_site
    from hep_advisor.probes.readtests.calibrate import calibrate

    ds = probe_dataset([path])
    site = probe_site([path])
    return site, ds, calibrate(ds, budget_s=budget)


def loop_job(files: list[str]) -> tuple[float, float]:
    """The calibration's event loop, cold: (events/s, seconds)."""
    from hep_advisor.probes.readtests.parallel import run_job

    r = run_job(files, TREE, 1, cold=True)
    return r.events_per_s, r.wall_s


def plain_iterate(files: list[str]) -> tuple[float, float]:
    """``uproot.iterate`` over every branch, default step_size (caches dropped before)."""
    import uproot

    t0 = time.perf_counter()
    n = 0
    for arrays in uproot.iterate([f"{f}:{TREE}" for f in files], library="ak"):
        n += len(arrays)
    dt = time.perf_counter() - t0
    return n / dt, dt


def entry_iterate(files: list[str], step: int) -> tuple[float, float]:
    """``uproot.iterate`` over every branch with an entry-count ``step_size``."""
    import uproot

    t0 = time.perf_counter()
    n = 0
    for arrays in uproot.iterate([f"{f}:{TREE}" for f in files], library="ak",
                                 step_size=step):
        n += len(arrays)
    dt = time.perf_counter() - t0
    return n / dt, dt


ROOT_LOOP = r"""
#include "TFile.h"
#include "TTree.h"
#include <memory>
#include <string>
#include <vector>
long hep_bench_root_loop(const std::vector<std::string> &files, long cache) {
   long n = 0;
   for (const auto &f : files) {
      std::unique_ptr<TFile> file(TFile::Open(f.c_str()));
      TTree *t = file->Get<TTree>("Events");
      t->SetCacheSize(cache);
      if (cache != 0) t->AddBranchToCache("*", true);
      Long64_t e = t->GetEntries();
      for (Long64_t i = 0; i < e; ++i) t->GetEntry(i);
      n += e;
   }
   return n;
}
"""


def root_loop(files: list[str], cache: int) -> tuple[float, float]:
    """ROOT's ``GetEntry`` loop over every branch, file after file (``cache`` 0: no TTreeCache;
    -1: ROOT's automatic size, every branch added), timed without ROOT's import."""
    import ROOT

    ROOT.gInterpreter.Declare(ROOT_LOOP)
    names = ROOT.std.vector[ROOT.std.string]()
    for f in files:
        names.push_back(f)
    t0 = time.perf_counter()
    n = ROOT.hep_bench_root_loop(names, cache)
    dt = time.perf_counter() - t0
    return n / dt, dt


# -- the replay for a reader --------------------------------------------------------------------

def replay_context(advice, maps):  # type: ignore[no-untyped-def]
    """The rules' context of ``advice`` with the replay on."""
    from hep_advisor.rules.context import Context

    return Context(site=advice.site, dataset=advice.dataset, calibration=advice.calibration,
                   model=advice.fitted, baseline=advice.baseline, summary=advice.model,
                   verdict=advice.verdict, basket_maps=tuple(maps), replay_merge=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--budget", type=float, default=30.0)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--datasets", default="a,b")
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args()
    names = [n for n in args.datasets.split(",") if n]

    from hep_advisor.demo.root_writer import hadd_path
    from hep_advisor.models.replay.cpucosts import costs_from
    from hep_advisor.models.replay.predict import STEP_BYTES, layout_time, merge_prediction
    from hep_advisor.pipeline.basketmaps import sample_basket_maps
    from hep_advisor.pipeline.derive import advise_from
    from hep_advisor.probes.basketmap import read_basket_map
    from testbench import availability, emulated_disks

    ok, why = availability()
    if not ok:
        print(f"emulated disks unavailable: {why}")
        return 1
    work = Path(args.workdir or tempfile.mkdtemp(prefix="bench-merge-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"writing {', '.join(names)} with ROOT in {work} ...", flush=True)
    sources = write(work, names)
    rows = []
    remedies: list = []
    with emulated_disks(n=1, size_mb=400, read_mb_per_s=70.0, read_iops=120) as bench:
        dev = next(iter(bench.stats()))

        def measure(fn, files):  # type: ignore[no-untyped-def]
            runs, ios = [], []
            for _ in range(args.repeats):
                bench.drop_caches(*files)
                s0 = bench.stats()[dev]
                rate, _ = bench.call(fn, files)
                s1 = bench.stats()[dev]
                runs.append(rate)
                ios.append(s1[0] - s0[0])
            return statistics.median(runs), statistics.median(ios)

        for name in names:
            small_dir = bench.mount_point / name
            shutil.copytree(sources[name], small_dir)
            os.sync()
            small = sorted(str(p) for p in small_dir.glob("*.root"))
            bench.drop_caches(*small)
            print(f"\n[{name}] {DATASETS[name][4]}: calibrating on the emulated disk ...",
                  flush=True)
            site, ds, cal = bench.call(calibrate_there, str(small_dir), args.budget)
            with open(work / f"{name}_calibration.pickle", "wb") as fh:
                pickle.dump((site, ds, cal), fh)  # for a look afterwards
            old = advise_from(site, ds, cal, label=name, inputs=(str(small_dir),))
            if old.model is not None and old.model.predictions:
                print(f"  the model's baseline: {old.model.predictions[0].events_per_s or 0:,.0f}"
                      " events/s at 1 worker", flush=True)
            maps = sample_basket_maps(ds)
            new = advise_from(site, ds, cal, label=name, inputs=(str(small_dir),),
                              replay_merge=True, basket_maps=maps)
            m_old = next((r for r in old.recommendations if r.code == "M001"), None)
            m_new = next((r for r in new.recommendations if r.code == "M001"), None)
            if m_old is None:
                print(f"  no M001 for {name}: {[r.code for r in old.recommendations]}")
                continue
            cmd = m_old.actions[0].command or ""
            print(f"  M001 (rate model) {m_old.predicted_speedup:.2f}x "
                  f"({m_old.speedup_low:.2f}-{m_old.speedup_high:.2f}) at {m_old.workers} "
                  f"worker(s); printed command:\n    {cmd[:300]}", flush=True)
            if m_new is not None:
                print(f"  M001 (replay) {m_new.predicted_speedup:.2f}x "
                      f"({m_new.speedup_low:.2f}-{m_new.speedup_high:.2f})")
                for e in m_new.evidence[-4:]:
                    print(f"    {e.name}: {e.value} {e.unit} ({e.note or ''})")
            out_dir = bench.mount_point / f"{name}_merged"
            out_dir.mkdir()
            t0 = time.perf_counter()
            env = {**os.environ, "PATH": f"{Path(hadd_path()).parent}:{os.environ['PATH']}"}
            subprocess.run(["bash", "-c", cmd], cwd=out_dir, check=True, capture_output=True,
                           env=env)
            merged = sorted(str(p) for p in out_dir.glob("*.root"))
            os.sync()
            print(f"  merged into {len(merged)} files in {time.perf_counter() - t0:.1f} s "
                  f"({sum(os.path.getsize(p) for p in merged) / 1e6:.1f} MB)", flush=True)
            optimise = " -O " in f" {cmd} "
            k = max(2, round(len(small) / max(len(merged), 1)))
            for reader, fn, step in (("event loop (50 MB steps)", loop_job, None),
                                     ("uproot.iterate default", plain_iterate, "100 MB")):
                before, io_b = measure(fn, small)
                after, io_a = measure(fn, merged)
                realised = after / before
                ctx = replay_context(new, maps)
                rep = ctx.merge_replay(k, optimise, STEP_BYTES if step is None else step)
                # the previous replay: the fitted CPU terms, I/O and CPU summed
                opened = cal.open_overhead_s
                prev_costs = costs_from(ctx.baseline.params, ctx.baseline.row(1),
                                        opened.warm if opened else None)
                prev = merge_prediction(maps, len(small), k, ctx.replay_device(), prev_costs,
                                        optimise=optimise, jobs=ctx.cores,
                                        step=STEP_BYTES if step is None else step)
                # the same replay on the real merged files' maps: the layout model's share
                real = layout_time([read_basket_map(p) for p in merged], ctx.replay_device(),
                                   ctx.replay_costs(),
                                   step=STEP_BYTES if step is None else step)
                rows.append((name, reader, m_old, rep, realised, before, after, io_b, io_a,
                             prev))
                line = (f"  {reader}: before {before:,.0f} ev/s ({io_b:.0f} device reads), "
                        f"after {after:,.0f} ev/s ({io_a:.0f} device reads): realised "
                        f"{realised:.2f}x; rate model {m_old.predicted_speedup:.2f}x")
                if rep is not None:
                    b_reads = rep.before.io.device_requests * rep.before.scale
                    a_reads = rep.after.io.device_requests * rep.after.scale
                    line += (f"; replay {rep.speedup:.2f}x ({rep.low:.2f}-{rep.high:.2f}), "
                             f"replayed device reads {b_reads:.0f} / {a_reads:.0f}, I/O "
                             f"{rep.before.io_s:.2f} s / {rep.after.io_s:.2f} s, CPU "
                             f"{rep.before.cpu_s:.2f} s / {rep.after.cpu_s:.2f} s; on the "
                             f"real merged maps: {real.io.device_requests} device reads, I/O "
                             f"{real.io_s:.2f} s, replay {rep.before.total_s / real.total_s:.2f}x"
                             f"; previous replay (fitted CPU, summed) {prev.speedup:.2f}x")
                print(line, flush=True)
                if rep is not None:
                    c = ctx.replay_costs()

                    def paid(lt, c=c):  # type: ignore[no-untyped-def]
                        """The baskets that pay ``basket_s`` (beyond the first per branch and
                        call where the per-call cost comes from the event loop)."""
                        return (lt.extra_touches if c.extra_baskets
                                else lt.baskets)
                    for label, lt in (("before", rep.before), ("after", rep.after),
                                      ("real merged", real)):
                        print(f"    {label}: total {lt.total_s:.2f} s = I/O {lt.io_s:.2f} s "
                              f"(synchronous {lt.sync_s:.2f} s) + CPU {lt.cpu_s:.2f} s - "
                              f"hidden {lt.hidden_s:.2f} s; measured "
                              f"{lt.entries / (before if label == 'before' else after):.2f} s")
                        print(f"    CPU {label}: opens {lt.files * c.open_s:.2f} s, calls "
                              f"{lt.calls * c.call_s:.2f} s ({lt.calls:.0f}), baskets "
                              f"{paid(lt) * c.basket_s:.2f} s ({paid(lt):.0f} of "
                              f"{lt.baskets:.0f}), per MB "
                              f"{lt.compressed_mb * c.per_mb_s():.2f} s ({lt.compressed_mb:.1f}"
                              f" MB)", flush=True)
            remedies.extend(measure_remedies(name, m_old, small, merged, out_dir, env, measure,
                                             bench))
    if remedies:
        print("\n| dataset | M001 option (replayed) | predicted (range) | realised | "
              "predicted / realised | inside |\n|---|---|---|---|---|---|")
        for name, o, realised in remedies:
            inside = o.speedup_low <= realised <= o.speedup_high
            print(f"| {name} | {o.name} | {o.predicted_speedup:.2f}x ({o.speedup_low:.2f}-"
                  f"{o.speedup_high:.2f}) | {realised:.2f}x | "
                  f"{o.predicted_speedup / realised:.2f} | {'yes' if inside else 'no'} |")
    print("\n| dataset | reader | rate model | previous replay | replay (range) | realised | "
          "rate model / realised | previous / realised | replay / realised |\n"
          "|---|---|---|---|---|---|---|---|---|")
    better = 0
    for name, reader, m_old, rep, realised, *rest in rows:
        prev = rest[-1]
        r_old = m_old.predicted_speedup / realised
        if rep is None:
            print(f"| {name} | {reader} | {m_old.predicted_speedup:.2f}x | — | {realised:.2f}x "
                  f"| {r_old:.2f} | — |")
            continue
        r_new = rep.speedup / realised
        better += abs(r_new - 1) < abs(r_old - 1)
        print(f"| {name} | {reader} | {m_old.predicted_speedup:.2f}x | {prev.speedup:.2f}x | "
              f"{rep.speedup:.2f}x ({rep.low:.2f}-{rep.high:.2f}) | {realised:.2f}x | "
              f"{r_old:.2f} | {prev.speedup / realised:.2f} | {r_new:.2f} |")
    print(f"\nthe replay is closer in {better} of {len(rows)} cases")
    return 0


def measure_remedies(name, m001, small, merged, out_dir, env, measure, bench):  # type: ignore[no-untyped-def]
    """Run what M001's options (replayed on the default advice) print and measure each against
    the reader it starts from on today's files: (dataset, option, realised speed-up) rows."""
    import re

    rows = []
    cache: dict = {}

    def rate(key, fn, files):  # type: ignore[no-untyped-def]
        if key not in cache:
            cache[key] = measure(fn, files)[0]
        return cache[key]

    for o in m001.options:
        print(f"  option {o.name}: {o.predicted_speedup:.2f}x ({o.speedup_low:.2f}-"
              f"{o.speedup_high:.2f})", flush=True)
        root = "ROOT GetEntry" in o.name
        before = (rate("root small", lambda f: root_loop(f, 0), small) if root
                  else rate("plain small", plain_iterate, small))
        if o.name.startswith("merge alone"):
            after = (rate("root merged", lambda f: root_loop(f, 0), merged) if root
                     else rate("plain merged", plain_iterate, merged))
        elif "TTreeCache" in o.name:
            after = rate("root cache merged", lambda f: root_loop(f, -1), merged)
        elif "pre-stage" in o.name:
            runs = []
            for _ in range(2):
                bench.drop_caches(*merged)
                bench.call(lambda f: [Path(x).read_bytes() for x in f] and None, merged)
                runs.append(bench.call(plain_iterate, merged)[0])
            after = statistics.median(runs)
        elif "hadd -O" in o.name:
            cmd = next((a.command for a in m001.actions if a.command and " -O " in a.command),
                       None)
            if cmd is None:
                continue
            opt_dir = out_dir.parent / f"{out_dir.name}_O"
            opt_dir.mkdir(exist_ok=True)
            subprocess.run(["bash", "-c", cmd], cwd=opt_dir, check=True, capture_output=True,
                           env=env)
            os.sync()
            after = rate("plain -O", plain_iterate, sorted(str(p) for p in
                                                           opt_dir.glob("*.root")))
        elif "step_size=" in o.name.split("(")[0]:
            found = re.search(r"step_size=([\d,]+) entries", o.name)
            if found is None:
                continue
            step = int(found.group(1).replace(",", ""))
            after = rate(f"entries {step}", lambda f, s=step: entry_iterate(f, s), merged)
        else:
            continue
        realised = after / before
        print(f"    realised {realised:.2f}x ({before:,.0f} -> {after:,.0f} events/s)",
              flush=True)
        rows.append((name, o, realised))
    return rows


if __name__ == "__main__":
    sys.exit(main())
