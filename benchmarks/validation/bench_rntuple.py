"""TTree -> RNTuple (N001): predicted against realised, on datasets written by ROOT.

For each of three datasets written by ROOT's RDataFrame (not the demo's; they differ in
branch types, compression and basket sizes):

1. probe the site and the dataset, calibrate (``--budget``, engine uproot), fit the model:
   the calibration's ``conversion`` test converts a sample (the first clusters of one file)
   and times the same read on both formats;
2. predicted: the N001 scenario through the fitted model (whether or not the rule fires),
   and whether N001 fires;
3. realised: every file converted in full with ``RNTupleImporter`` (the same compression
   setting) into a temporary directory, then the analysis the calibration timed (uproot:
   open each file, read every branch / field into arrays) on the TTree files and on the
   RNTuple files, alternating, cold where the files can be evicted (each pass's cache state
   is printed), ``--passes`` passes each; realised speed-up = TTree s / RNTuple s (medians).

Everything it writes goes into one temporary directory, removed at the end (also on
Ctrl-C).  Needs the ``root`` extra.  Run: ``python -m benchmarks.validation.bench_rntuple`` (about
3 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
import warnings
from typing import Any

#: name -> (entries per file, files, compression setting, basket bytes, branch kinds)
DATASETS: dict[str, tuple[int, int, int, int, str]] = {
    "flat-zlib": (400_000, 2, 101, 32_000, "flat"),
    "jagged-zstd": (250_000, 2, 505, 32_000, "jagged"),
    "small-baskets-lz4": (200_000, 2, 404, 4_000, "many"),
}


def _root() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import ROOT
    ROOT.gROOT.SetBatch(True)
    return ROOT


def write_dataset(root: Any, directory: str, kind: str, entries: int, files: int,
                  setting: int, basket: int, seed: int = 1) -> list[str]:
    """``files`` files of the TTree ``Events`` written by RDataFrame's Snapshot."""
    paths = []
    for i in range(files):
        root.gRandom.SetSeed(seed + i)
        df = root.RDataFrame(entries)
        cols: list[str] = []
        if kind == "flat":
            for k in range(12):
                df = df.Define(f"f{k}", f"(float)gRandom->Gaus({k}, 1)")
                cols.append(f"f{k}")
            for k in range(4):
                df = df.Define(f"i{k}", f"(int)gRandom->Poisson({k + 2})")
                cols.append(f"i{k}")
            df = df.Define("d0", "gRandom->Uniform()")
            cols.append("d0")
        elif kind == "jagged":
            df = df.Define("n", "(int)gRandom->Poisson(6)")
            cols.append("n")
            for k in ("pt", "eta", "phi", "m"):
                df = df.Define(f"jet_{k}", "ROOT::RVecF v(n); for (auto &x : v) "
                               "x = gRandom->Exp(30); return v;")
                cols.append(f"jet_{k}")
            df = df.Define("met", "(float)gRandom->Exp(20)")
            cols.append("met")
        else:
            for k in range(60):
                df = df.Define(f"b{k}", f"(float)(int)gRandom->Gaus(100, {k + 1})")
                cols.append(f"b{k}")
        opts = root.RDF.RSnapshotOptions()
        opts.fCompressionAlgorithm = setting // 100
        opts.fCompressionLevel = setting % 100
        opts.fBasketSize = basket
        path = os.path.join(directory, f"{kind}_{i}.root")
        df.Snapshot("Events", path, cols, opts)
        paths.append(path)
    return paths


def convert_all(root: Any, paths: list[str], out_dir: str, setting: int) -> list[str]:
    out = []
    for p in paths:
        dst = os.path.join(out_dir, os.path.basename(p))
        imp = root.Experimental.RNTupleImporter.Create(p, "Events", dst)
        opts = root.RNTupleWriteOptions()
        opts.SetCompression(setting)
        imp.SetWriteOptions(opts)
        imp.SetIsQuiet(True)
        imp.Import()
        out.append(dst)
    return out


def analysis_pass(paths: list[str], cold: bool) -> tuple[float, str]:
    """Seconds to open every file and read every branch / field into arrays (uproot)."""
    import uproot

    from hep_advisor.probes.readtests.pagecache import evict
    from hep_advisor.probes.readtests.raw import cache_state

    evictions = [evict(p) for p in paths] if cold else []
    t0 = time.perf_counter()
    for p in paths:
        with uproot.open(p) as f:
            f["Events"].arrays(library="ak")
    s = time.perf_counter() - t0
    return s, cache_state(evictions) if cold else "warm"


def realised(tt: list[str], rn: list[str], passes: int) -> tuple[float, float, str]:
    analysis_pass(tt, False)  # warm-up: imports, interpretations
    analysis_pass(rn, False)
    t_tt: list[float] = []
    t_rn: list[float] = []
    states = set()
    for k in range(passes):
        order = [(tt, t_tt), (rn, t_rn)]
        for paths, out in (order if k % 2 == 0 else order[::-1]):
            s, state = analysis_pass(paths, True)
            out.append(s)
            states.add(state)
    return statistics.median(t_tt), statistics.median(t_rn), "/".join(sorted(states))


def predicted(paths: list[str], budget: float) -> dict[str, Any]:
    from hep_advisor.models.calibrated import calibrated_baseline
    from hep_advisor.models.scenarios import predict_scenarios
    from hep_advisor.pipeline.derive import advise_from
    from hep_advisor.probes import probe_site
    from hep_advisor.probes.dataset import probe_dataset
    from hep_advisor.probes.readtests.calibrate import calibrate
    from hep_advisor.rules.rntuple import DEFAULT_READAHEAD_BYTES, to_rntuple

    site = probe_site(paths)
    ds = probe_dataset(paths)
    cal = calibrate(ds, budget_s=budget)
    conv = cal.conversion
    out: dict[str, Any] = {"conversion": conv, "skipped": cal.skipped}
    if conv is None:
        return out
    model, baseline = calibrated_baseline(cal, ds, site)
    ra = next((s.read_ahead_kb for s in site.storage if s.read_ahead_kb), None)
    scen = to_rntuple(conv, ra * 1024 if ra else DEFAULT_READAHEAD_BYTES)
    point = predict_scenarios(model, baseline, [scen])[0].predictions[0]
    out["speedup"] = point.speedup
    out["low"], out["high"] = point.speedup_low, point.speedup_high
    advice = advise_from(site, ds, cal, inputs=paths)
    out["fires"] = any(r.code == "N001" for r in advice.recommendations)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--budget", type=float, default=30.0, help="calibration budget, s")
    ap.add_argument("--passes", type=int, default=3, help="realised passes per format")
    ap.add_argument("--only", nargs="*", help="dataset names (default: all three)")
    args = ap.parse_args(argv)
    root = _root()
    print(f"ROOT {root.gROOT.GetVersion()}; budget {args.budget:g} s; {args.passes} passes")
    tmp = tempfile.mkdtemp(prefix="hep-advisor-bench-rntuple-")
    rows = []
    try:
        for name, (entries, files, setting, basket, kind) in DATASETS.items():
            if args.only and name not in args.only:
                continue
            d = os.path.join(tmp, name)
            os.makedirs(os.path.join(d, "rntuple"))
            tt = write_dataset(root, d, kind, entries, files, setting, basket)
            mb = sum(os.path.getsize(p) for p in tt) / 1e6
            pred = predicted(tt, args.budget)
            rn = convert_all(root, tt, os.path.join(d, "rntuple"), setting)
            t_tt, t_rn, state = realised(tt, rn, args.passes)
            conv = pred["conversion"]
            real = t_tt / t_rn
            sp = pred.get("speedup")
            err = (sp / real - 1) * 100 if sp else None
            rows.append((name, mb, conv, sp, pred.get("low"), pred.get("high"),
                         pred.get("fires"), t_tt, t_rn, state, real, err))
            if conv is None:
                print(f"{name}: no conversion measured: {pred['skipped']}")
            else:
                print(f"{name}: sample {conv.entries:,} entries ({conv.converter}, converted in "
                      f"{conv.convert_s:.1f} s), gains for reads of {conv.target_entries:,}: "
                      f"{conv.cache} {conv.gain:.2f}x, warm {conv.warm_gain or 0:.2f}x "
                      f"({len(conv.measurement.samples)} pairs; on the sample itself "
                      f"{conv.sample_gain or 0:.2f}x); requests {conv.ttree_requests} baskets / "
                      f"{conv.rntuple_requests} pages")
            sys.stdout.flush()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print()
    print(f"{'dataset':<18} {'MB':>6} {'sample gain':>16} {'predicted':>20} {'N001':>5} "
          f"{'TTree s':>8} {'RNTuple s':>9} {'cache':>6} {'realised':>8} {'error':>7}")
    for (name, mb, conv, sp, lo, hi, fires, t_tt, t_rn, state, real, err) in rows:
        gain = f"{conv.gain:.2f}x {conv.cache}" if conv and conv.gain else "n/a"
        p = f"{sp:.2f}x ({lo:.2f}-{hi:.2f})" if sp else "n/a"
        e = f"{err:+.0f}%" if err is not None else "n/a"
        print(f"{name:<18} {mb:6.1f} {gain:>16} {p:>20} {'yes' if fires else 'no':>5} "
              f"{t_tt:8.3f} {t_rn:9.3f} {state:>6} {real:7.2f}x {e:>7}")
    within = [r for r in rows if r[-1] is not None and abs(r[-1]) <= 20]
    print(f"\nwithin 20%: {len(within)} of {len(rows)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
