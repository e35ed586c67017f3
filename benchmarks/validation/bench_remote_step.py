"""Over ``root://``: does an uproot user's report name what the default reader costs (and its
failure where the installed uproot has it), and the step that avoids it, predicted right?

    python -m benchmarks.validation.bench_remote_step [--rtt-ms 20] [--rate-mbit 100]
        [--branches 200] [--entries 20000] [--baskets-per-branch 10] [--repeats 3]
        [--budget 30] [--out FILE.json]

A file unlike the demo is written with uproot (``--branches`` float branches, a basket per
branch per ``extend`` call: the baskets interleaved across branches), served by XRootD behind
an emulated link (``testbench.remote``: a network namespace, TBF shaping, a latency proxy).
Then, as a user types them:

1. ``hep-advisor report root://.../FILE.root --format json --no-cache --budget B``;
2. its X004 (step uproot by entries): the printed ``step_size``, the job times it predicts
   with the default step (the key pre-pass: a round trip per basket) and with the entry step;
3. realised, in fresh processes, ``--repeats`` times each: a plain ``uproot.iterate`` over
   every branch with the printed entry step; uproot's default ``iterate`` as installed (its
   failure, where it fails, is the finding: said); and the default with the failing call's
   offsets cast to ``int`` (the one-line fix uproot needs), which shows what the pre-pass
   costs where it does not fail.

Prints one JSON document: predicted and realised seconds, their ratio, within 20%.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import REPO, child_env

#: A plain uproot program: every branch, the step given (``None``: uproot's default).
PROGRAM = """
import sys, time, uproot
url, step, cast = sys.argv[1], sys.argv[2], sys.argv[3] == "cast"
if cast:  # the one-line fix: offsets as Python ints (uproot's pre-pass hands NumPy integers)
    import fsspec_xrootd.xrootd as fx
    orig = fx.XRootDFileSystem._cat_file
    async def _cat_file(self, path, start, end, **kw):
        return await orig(self, path, None if start is None else int(start),
                          None if end is None else int(end), **kw)
    fx.XRootDFileSystem._cat_file = _cat_file
kw = {} if step == "default" else {"step_size": int(step)}
t = time.perf_counter()
n = 0
try:
    for a in uproot.iterate({url: "Events"}, library="np", **kw):
        n += len(next(iter(a.values())))
except Exception as exc:
    print(f"FAILED {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
    sys.exit(0)
print(time.perf_counter() - t, n)
"""


def write_file(path: Path, branches: int, entries: int, per_branch: int) -> None:
    import numpy as np
    import uproot

    rng = np.random.default_rng(7)
    chunk = entries // per_branch
    with uproot.recreate(path) as f:
        tree = f.mktree("Events", {f"x{b}": np.float32 for b in range(branches)})  # a TTree
        for _ in range(per_branch):
            tree.extend({f"x{b}": rng.normal(size=chunk).astype(np.float32)
                         for b in range(branches)})


def run_program(url: str, step: str, cast: bool) -> tuple[float | None, str]:
    r = subprocess.run([sys.executable, "-c", PROGRAM, url, step, "cast" if cast else "as-is"],
                       capture_output=True, text=True, env=child_env(), timeout=1200)
    out = (r.stdout.strip().splitlines() or [r.stderr.strip()[-200:]])[-1]
    if out.startswith("FAILED") or r.returncode != 0:
        return None, out
    return float(out.split()[0]), out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rtt-ms", type=float, default=20.0)
    ap.add_argument("--rate-mbit", type=float, default=100.0)
    ap.add_argument("--branches", type=int, default=200)
    ap.add_argument("--entries", type=int, default=20_000)
    ap.add_argument("--baskets-per-branch", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--budget", type=float, default=30.0)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)

    from testbench.remote import remote_bench

    data = Path(tempfile.mkdtemp(prefix="hep-bench-step-", dir="/var/tmp"))
    data.chmod(0o755)
    f = data / "events.root"
    write_file(f, args.branches, args.entries, args.baskets_per_branch)
    f.chmod(0o644)
    result: dict[str, Any] = {"file": {"branches": args.branches, "entries": args.entries,
                                       "baskets": args.branches * args.baskets_per_branch,
                                       "bytes": f.stat().st_size},
                              "link": {"rtt_ms": args.rtt_ms, "rate_mbit": args.rate_mbit}}
    with remote_bench(args.rtt_ms, args.rate_mbit, http=False, data_dir=data) as bench:
        url = bench.root_url(f)
        cache = tempfile.mkdtemp(prefix="hep-bench-cache-")
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "hep_advisor", "report", url, "--format",
                            "json", "--no-cache", "--budget", str(args.budget)],
                           capture_output=True, text=True, cwd=REPO, timeout=1200,
                           env=child_env({**__import__("os").environ,
                                          "HEP_ADVISOR_CACHE": cache}))
        result["report_s"] = round(time.perf_counter() - t0, 2)
        if r.returncode != 0:
            print(r.stderr[-3000:], file=sys.stderr)
            return 1
        doc = json.loads(r.stdout)
        recs = {x["code"]: x for x in doc["recommendations"]}
        x4 = recs.get("X004")
        notes = doc["datasets"][0]["notes"]
        result["codes"] = list(recs)
        result["reader"] = doc["datasets"][0].get("reader")
        if x4 is None:
            result["x004"] = None
            print(json.dumps(result, indent=1))
            return 1
        ev = {e["name"]: e for e in x4["evidence"]}
        step = x4["scenario"].split("-> ")[1].split()[0].replace(",", "")
        result["x004"] = {"title": x4["title"], "speedup": x4["predicted_speedup"],
                          "low": x4["speedup_low"], "high": x4["speedup_high"],
                          "step": int(step), "severity": x4["severity"],
                          "default": ev["uproot's default iterate over the link"]["note"],
                          "predicted_default_s": ev["job, default step (replayed)"]["value"],
                          "predicted_step_s": ev["job, entry step (replayed)"]["value"]}
        result["notes"] = notes
        runs: dict[str, list[float]] = {"step": [], "default": [], "default_cast": []}
        said: dict[str, str] = {}
        for _ in range(args.repeats):
            for name, s, cast in (("step", step, False), ("default", "default", False),
                                  ("default_cast", "default", True)):
                sec, out = run_program(url, s, cast)
                if sec is None:
                    said[name] = out
                else:
                    runs[name].append(sec)
        result["realised"] = {k: [round(x, 3) for x in v] for k, v in runs.items()}
        result["failures"] = said
    x = result["x004"]
    for name, key in (("step", "predicted_step_s"), ("default_cast", "predicted_default_s")):
        if runs[name]:
            med = statistics.median(runs[name])
            x[f"realised_{name}_s"] = round(med, 3)
            x[f"{name}_ratio"] = round(x[key] / med, 3)
            x[f"{name}_within_20"] = abs(x[key] / med - 1) <= 0.2
    if runs["step"] and runs["default_cast"]:
        realised = statistics.median(runs["default_cast"]) / statistics.median(runs["step"])
        x["realised_speedup"] = round(realised, 3)
        x["speedup_within_20"] = abs(x["speedup"] / realised - 1) <= 0.2
        x["inside"] = x["low"] <= realised <= x["high"]
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
