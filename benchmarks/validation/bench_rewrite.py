"""A rewrite with larger baskets: the model's predicted speed-up against the measured one.

    python -m benchmarks.validation.bench_rewrite [--demo DIR] [--calibration FILE] [--repeats 5]

1. The demo's small files are merged with ROOT's ``hadd -O`` (baskets re-optimised) into a
   temporary directory; the demo's ``merged/`` file holds the same events merged plainly (the
   inputs' tiny baskets kept).
2. Measured: both files read warm with uproot, ``iterate(step_size="50 MB")``, all branches,
   ``--repeats`` alternating passes after one warm-up pass each; the speed-up is the median of
   the per-repeat ratios of times (the same events).
3. Predicted: the model fitted to a calibration of the plain merge (``--calibration``, the
   output of ``hep-advisor calibrate DEMO/merged --budget 30 --json``; run here when the file
   is missing), its baseline in the page cache, and the scenario ``rebasket(B)`` with B the
   mean compressed basket of the hadd -O file: the ratio of the two predicted rates at one
   worker.
4. The per-basket read test alone on the plain merge, three times: its value and duration.

The temporary directory is removed at the end.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TREE = "esdTree"
DEFAULT_DEMO = Path.home() / ".cache" / "hep-advisor" / "demo-0.1.0-uproot"


def hadd_path() -> str:
    found = shutil.which("hadd")
    if found:
        return found
    spec = importlib.util.find_spec("ROOT")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("hadd not found (install the `root` extra)")
    return str(Path(next(iter(spec.submodule_search_locations))) / "bin" / "hadd")


def basket_stats(path: str) -> tuple[int, float, float]:
    """Baskets, mean compressed bytes per basket, compressed MB of the tree."""
    import numpy as np
    import uproot

    with uproot.open(path) as f:
        tree = f[TREE]
        n, nbytes = 0, 0
        for b in tree.itervalues(recursive=True):
            k = int(b.member("fWriteBasket"))
            n += k
            nbytes += int(np.asarray(b.member("fBasketBytes"))[:k].sum())
        return n, nbytes / n, int(tree.member("fZipBytes")) / 1e6


def read_once(path: str) -> float:
    import uproot

    with uproot.open(path) as f:
        tree = f[TREE]
        t0 = time.perf_counter()
        for arrays in tree.iterate(step_size="50 MB", library="ak"):
            del arrays
        return time.perf_counter() - t0


def measure(plain: str, rewritten: str, repeats: int) -> tuple[list[float], list[float]]:
    read_once(plain)
    read_once(rewritten)
    a, b = [], []
    for _ in range(repeats):
        a.append(read_once(plain))
        b.append(read_once(rewritten))
    return a, b


def predict(calibration: str, basket_bytes: float) -> dict[str, float]:
    """The model's warm rates before and after the rewrite, and the speed-up with its 90%
    interval (from the fit's covariance: mostly the per-basket cost's uncertainty)."""
    from hep_advisor.document.report import model_from_document
    from hep_advisor.models.scenarios import cached, predict_baseline, predict_scenarios, rebasket

    model, base, _ = model_from_document(calibration)
    warm = cached().apply(base)
    (before,) = predict_baseline(model, warm, [1])
    (result,) = predict_scenarios(model, warm, [rebasket(basket_bytes)], [1])
    after = result.predictions[0]
    std = model.params_std_.get("basket_s")
    return {"warm_mb_per_s": before.aggregate_mb_per_s,
            "rewritten_mb_per_s": after.aggregate_mb_per_s,
            "speedup": after.speedup or 0.0, "low": after.speedup_low or 0.0,
            "high": after.speedup_high or 0.0,
            "basket_s": model.params_["basket_s"], "basket_s_std": std or 0.0,
            "baskets_before": warm.config.get("baskets", 0.0),
            "baskets_after": rebasket(basket_bytes).apply(warm).config.get("baskets", 0.0)}


def basket_test(files: list[str]) -> list[tuple[float, float | None]]:
    """(seconds, basket_s) of the per-basket read test alone, three times."""
    from hep_advisor.probes.readtests.baskets import measure_basket_cost
    from hep_advisor.probes.readtests.runner import Session

    out = []
    for _ in range(3):
        t0 = time.perf_counter()
        cost = measure_basket_cost(Session(30.0), files, TREE, None, 1.0)
        out.append((time.perf_counter() - t0, cost.basket_s))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--demo", type=Path, default=DEFAULT_DEMO)
    ap.add_argument("--calibration", default="/tmp/cal_merged.json")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    plain = str(args.demo / "merged" / "esd_merged.root")
    small = sorted(str(p) for p in (args.demo / "small_files").glob("*.root"))
    if not Path(args.calibration).exists():
        print(f"calibrating {args.demo / 'merged'} (budget 30 s) -> {args.calibration}",
              flush=True)
        with open(args.calibration, "w") as out:
            subprocess.run([sys.executable, "-m", "hep_advisor", "calibrate",
                            str(args.demo / "merged"), "--budget", "30", "--json"],
                           stdout=out, check=True)
    cal = json.loads(Path(args.calibration).read_text())["calibration"]
    bc = cal.get("basket_cost") or {}
    with tempfile.TemporaryDirectory(prefix="bench-rewrite-") as tmp:
        rewritten = str(Path(tmp) / "esd_hadd_O.root")
        t0 = time.perf_counter()
        subprocess.run([hadd_path(), "-O", "-f", rewritten, *small], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        hadd_s = time.perf_counter() - t0
        n0, b0, mb0 = basket_stats(plain)
        n1, b1, mb1 = basket_stats(rewritten)
        print(f"plain merge: {n0:,} baskets of {b0 / 1e3:.2f} kB, {mb0:.1f} MB")
        print(f"hadd -O:     {n1:,} baskets of {b1 / 1e3:.2f} kB, {mb1:.1f} MB "
              f"({hadd_s:.1f} s)")
        a, b = measure(plain, rewritten, args.repeats)
    ratios = [x / y for x, y in zip(a, b, strict=True)]
    measured = statistics.median(ratios)
    print(f"measured, warm, uproot iterate(step_size='50 MB'), {args.repeats} alternating "
          f"repeats: plain {statistics.median(a):.2f} s ({mb0 / statistics.median(a):.1f} "
          f"MB/s), hadd -O {statistics.median(b):.2f} s ({mb1 / statistics.median(b):.1f} MB/s)"
          f"; speed-up median {measured:.2f} (range {min(ratios):.2f}-{max(ratios):.2f})")
    p = predict(args.calibration, b1)
    print(f"calibration's per-basket test: basket_s {1e6 * bc.get('basket_s', 0):.0f} us "
          f"(samples {', '.join(f'{1e6 * x:.0f}' for x in bc['measurement']['samples'])} us)"
          if bc else "calibration has no per-basket test")
    print(f"model: basket_s {1e6 * p['basket_s']:.0f} ± {1e6 * p['basket_s_std']:.0f} us; "
          f"baskets per file {p['baskets_before']:,.0f} -> {p['baskets_after']:,.0f}; warm "
          f"{p['warm_mb_per_s']:.1f} -> {p['rewritten_mb_per_s']:.1f} MB/s; predicted "
          f"speed-up {p['speedup']:.2f} (90%: {p['low']:.2f}-{p['high']:.2f}; measured "
          f"{measured:.2f}, {100 * (p['speedup'] / measured - 1):+.0f}%)")
    runs = basket_test([plain])
    print("per-basket test alone (share 1 s): " + "; ".join(
        f"{s:.2f} s, {1e6 * (v or 0):.0f} us" for s, v in runs))


if __name__ == "__main__":
    main()
