"""Advice that comes true on data unlike the demo (issue 11): the top three recommendations of
``hep-advisor report``, applied as printed, against what they realise.

    python -m benchmarks.validation.bench_advice_true [--only nano,split,...]
        [--disk slow|fast|both] [--repeats 3] [--budget 30] [--skip-write] [--out FILE.json]
        [--report-args "--reader uproot.iterate"] [--code DIR] [--also W001]
    python -m benchmarks.validation.bench_advice_true --table A.json B.json ... [--readvise]

Datasets (``benchmarks/validation/advice_true_data.py``): six, written once into
``/tmp/validate/data`` (kept between runs; ``--skip-write`` uses what is there): five by ROOT, a
NanoAOD-like mix (592 branches, LZMA-9), split objects (107 branches, ZLIB-6), 1,200 flat
scalars (LZ4, small baskets), 120 tiny files (100 branches, ZSTD-5), one 42 MB file of scalars
and STL vectors (ZLIB-1); and one by uproot (``upw``: 6 files, 173 branches with a jagged
collection, ZLIB-4, a basket per branch per 2,500 entries), added later as data the model was
not tuned on. For each dataset and disk (``slow``: an emulated 70 MB/s, 120 IOPS disk made by
``testbench``, the data copied onto it and everything below run inside its throttling cgroup;
``fast``: the work directory's own disk):

1. ``hep-advisor report DATA --format json --no-cache --budget B``, as a user types it, cold;
2. the top three recommendations shown as gains (not those marked "not recommended"), each
   applied as printed: a printed shell command (``hadd`` merges, recompressions, rewrites) run
   as printed with ``bash`` in a fresh directory on the same disk; ``W001``: the same analysis
   split over the recommended number of processes (files dealt round-robin by size, or entry
   ranges of one file); ``P001``: its printed command (read the files once), then the analysis;
   what cannot be applied here (other hardware, another site) is listed with the reason;
3. the analysis (``advice_true_analysis.py``: one process, ``uproot.iterate`` over every
   branch, uproot's defaults) before and after each, cold (the files' pages evicted), in
   ``--repeats`` passes whose order alternates; realised = median events/s after / before.
   Each pass starts with a machine check (the same pure-Python loop in one process, then two
   at once: this shared machine's single-core speed moved 2x between checks seconds apart),
   and one runs before the report: a CPU-bound miss can be read against them.  The table
   shows each pass's own after / before beside the medians' ratio.

``--table ... --readvise``: the same runs' realised figures against the predictions of this
working tree's code, advised again from each run's saved report (``NAME_DISK_report.json``, with
``_stepN`` for a ``--step`` run, beside
the ``--out`` file: its site, dataset and calibration, the reader its command named, the basket
maps of the dataset's files): what a change to the rules or the intervals would have said of
measurements already made.  A row whose recommendation the new advice does not make is shown
"not advised now".

``--program rdataframe|getentry|ttreecache`` (with ``--branches N``): the analysis is a ROOT
program (``advice_true_root.py``) over N of the tree's numeric branches (``ttreecache``: the
``GetEntry`` loop with ROOT's default TTreeCache left alone), and the report is told so
(``--reader rdataframe``, ``root.getentry`` or ``root.ttreecache``, ``--branches``); T001 is
applied as its printed ``SetCacheSize``, W001 for an RDataFrame as its printed
``EnableImplicitMT(n)`` (a ``GetEntry`` loop: n processes), the shell commands as printed. Its
reports are saved as ``NAME_DISK_PROGRAM_report.json``.

``--also W001`` also measures those codes where the report has them but does not show them as
gains (outside the top three, or marked not recommended): rows counted apart.

The timed parts (the report, the passes) hold ``/tmp/hep-bench.lock``; writing, copying and
applying do not.  Prints per dataset x recommendation: predicted (interval), realised, ratio,
inside, within 20 %, and the totals against the targets (90 % within 20 %, 90 % inside; W001
within 20 % on 3 datasets).
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks.common import REPO, machine_check
from benchmarks.validation.advice_true_data import ANALYSIS, DATASETS, branch_count, write

TREE = "Events"
LOCK = "/tmp/hep-bench.lock"
WORK = Path("/tmp/validate/run")
BIN = Path(sys.executable).parent
#: recommendations that need something this machine cannot change
NOT_HERE = {
    "D001": "other storage hardware", "D002": "other storage hardware",
    "D003": "other storage hardware", "L001": "faster storage hardware (a site admin's change)",
    "X001": "remote data",
    "X002": "remote data", "X003": "remote data", "N001": "RNTuple conversion (not run)",
    "B001": "the analysis reads every branch it uses", "A001": "a system read-ahead change",
    "T001": "no uproot snippet printed (a ROOT TTreeCache change: the analysis reads with "
            "uproot)",
}


@contextmanager
def locked(what: str) -> Iterator[None]:
    """Hold the shared benchmark lock for a timed part."""
    t0 = time.perf_counter()
    with open(LOCK, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        waited = time.perf_counter() - t0
        t1 = time.perf_counter()
        print(f"  [lock: {what}, waited {waited:.0f} s, load "
              f"{os.getloadavg()[0]:.1f}]", flush=True)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
            print(f"  [lock held {time.perf_counter() - t1:.0f} s]", flush=True)


class Disk:
    """Where a dataset is read: a runner (inside the throttling cgroup or not) and cold caches."""

    def __init__(self, name: str, bench: Any = None) -> None:
        self.name = name
        self.bench = bench
        self.root = bench.mount_point if bench is not None else WORK / "fast"

    def run(self, argv: list[str] | str, **kw: Any) -> subprocess.CompletedProcess[str]:
        kw.setdefault("capture_output", True)
        kw.setdefault("text", True)
        if self.bench is not None:
            return self.bench.run(argv, **kw)
        return subprocess.run(argv, **kw)

    def popen(self, argv: list[str], **kw: Any) -> subprocess.Popen[str]:
        if self.bench is not None:
            return self.bench.popen(argv, **kw)
        return subprocess.Popen(argv, **kw)

    def cold(self, *paths: Path) -> None:
        if self.bench is not None:
            self.bench.drop_caches(*paths, global_cache=False)
            self.bench.reset_throttle()
        else:
            from testbench import drop_caches

            drop_caches(*paths, global_cache=False)


#: ``--report-args``: more arguments for ``report`` (e.g. ``--reader uproot.iterate``)
EXTRA: list[str] = []
#: ``--report-args`` as given (``--program`` adds its reader and branches per dataset)
BASE_EXTRA: list[str] = []
#: ``--step``: the entry step the analysis reads with (the program's reader)
READER_STEP: list[int] = []
#: where the reports' JSON documents are kept (next to ``--out``)
SAVE: list[Path] = []
#: ``--code``: another copy of the advisor's code to run (PYTHONPATH), e.g. a ``git archive``
CODE: list[str] = []
#: ``--program``: the ROOT program (``rdataframe``, ``getentry``) and the branches it reads
#: instead of the uproot analysis; empty: the uproot analysis
PROGRAM: list[tuple[str, list[str]]] = []
#: the ROOT program (``advice_true_root.py``)
ROOT_PROGRAM = Path(__file__).with_name("advice_true_root.py")
#: what ``report`` is told for each ROOT program
ROOT_READER = {"rdataframe": "rdataframe", "getentry": "root.getentry",
               "ttreecache": "root.ttreecache"}


def env() -> dict[str, str]:
    """The user's environment: the virtualenv's ``hep-advisor`` and ROOT's ``hadd`` on PATH."""
    from hep_advisor.demo.root_writer import hadd_path

    out = {**os.environ, "PATH": f"{BIN}:{Path(hadd_path()).parent}:{os.environ['PATH']}"}
    if CODE:
        out["PYTHONPATH"] = CODE[0]
    return out


def tree_state() -> str:
    """The code the report ran: the commit, and a digest of the uncommitted changes to the
    packages (the working tree changes while others work in it)."""
    import hashlib

    repo = Path(CODE[0]) if CODE else REPO
    if CODE:
        return f"copy at {repo}"
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=repo, text=True,
                          capture_output=True).stdout.strip()
    diff = subprocess.run(["git", "diff", "HEAD", "--", "advisor", "models", "probes"],
                          cwd=repo, capture_output=True).stdout
    return f"{head} + diff {hashlib.sha1(diff).hexdigest()[:10]} ({len(diff):,} bytes)"


def diff_stat() -> str:
    """``git diff --stat`` of the packages the report ran (the last line: files, lines)."""
    if CODE:
        return ""
    out = subprocess.run(["git", "diff", "--stat", "HEAD", "--", "advisor", "models", "probes"],
                         cwd=REPO, text=True, capture_output=True).stdout.strip()
    return out.splitlines()[-1].strip() if out else "no changes"


def report(disk: Disk, data: Path, budget: float) -> dict[str, Any]:
    argv = ["hep-advisor", "report", str(data), "--format", "json", "--no-cache", "--budget",
            f"{budget:g}", *EXTRA]
    disk.cold(data)
    t0 = time.perf_counter()
    r = disk.run(argv, env=env(), timeout=4 * budget + 300)
    if r.returncode not in (0, 2) or not r.stdout.lstrip().startswith("{"):
        raise RuntimeError(f"report failed ({r.returncode}): {r.stderr.strip()[-300:]}")
    doc: dict[str, Any] = json.loads(r.stdout)
    doc["_wall_s"] = time.perf_counter() - t0
    doc["_command"] = " ".join(argv)
    doc["_tree"] = tree_state()
    doc["_diff_stat"] = diff_stat()
    if SAVE:
        step = f"_step{READER_STEP[0]}" if READER_STEP else ""
        step += f"_{PROGRAM[0][0]}" if PROGRAM else ""
        (SAVE[0] / f"{data.name}_{disk.name}{step}_report.json").write_text(r.stdout)
    return doc


# -- applying a recommendation ------------------------------------------------------------------

def shell_command(rec: dict[str, Any]) -> str | None:
    """The recommendation's first printed shell command (a script run by bash), if any."""
    for a in rec.get("actions") or []:
        cmd = a.get("command") or ""
        if "hadd " in cmd or cmd.lstrip().startswith(("(", "cat ", "vmtouch ", "find ")):
            return str(cmd)
    return None


def uproot_step(rec: dict[str, Any]) -> int | None:
    """The entry-count ``step_size`` of the recommendation's printed uproot snippet."""
    for a in rec.get("actions") or []:
        found = re.search(r"iterate\(.*step_size=([0-9_]+)\)", a.get("command") or "")
        if found:
            return int(found.group(1).replace("_", ""))
    return None


def cache_size(rec: dict[str, Any]) -> int | None:
    """The TTreeCache size of the recommendation's printed ``SetCacheSize`` line (T001 for a
    ROOT reader)."""
    for a in rec.get("actions") or []:
        found = re.search(r"SetCacheSize\((-?[0-9_]+)\)", a.get("command") or "")
        if found:
            return int(found.group(1).replace("_", ""))
    return None


def pick_branches(data: Path, count: int) -> list[str]:
    """``count`` of the tree's numeric branches (scalars, arrays and vectors of numbers), spread
    evenly over its branch list: what a ROOT program of ``--program`` reads."""
    import uproot

    with uproot.open(sorted(data.glob("*.root"))[0]) as fh:
        tree = fh[TREE]
        ok = [b.name for b in tree.branches if not b.branches and re.search(
            r"^(std::vector<)?(u?int\d+_t|float|double|bool)(>)?(\[.*\])?$", b.typename)]
    if len(ok) <= count:
        return ok
    return [ok[round(k * (len(ok) - 1) / (count - 1))] for k in range(count)] if count > 1 \
        else ok[:1]


def uproot_option(rec: dict[str, Any]) -> dict[str, Any] | None:
    """The recommendation's option for an uproot reader, where it lists one (T001: the point
    can be ROOT's TTreeCache, the uproot step among the options)."""
    return next((o for o in rec.get("options") or [] if o["name"].startswith("uproot")), None)


def split_work(files: list[Path], workers: int) -> list[tuple[list[Path], str | None]]:
    """The analysis' share of each worker: files dealt round-robin by size (largest first), or
    entry ranges of a single file."""
    if len(files) >= workers:
        shares: list[list[Path]] = [[] for _ in range(workers)]
        sizes = [0] * workers
        for f in sorted(files, key=lambda p: -p.stat().st_size):
            k = sizes.index(min(sizes))
            shares[k].append(f)
            sizes[k] += f.stat().st_size
        return [(s, None) for s in shares]
    import uproot

    with uproot.open(files[0]) as fh:
        n = fh[TREE].num_entries
    cuts = [n * k // workers for k in range(workers + 1)]
    return [([files[0]], f"{cuts[k]}:{cuts[k + 1]}") for k in range(workers)]


def analysis(disk: Disk, files: list[Path], *, workers: int = 1, step: int | None = None,
             before: Callable[[], None] | None = None, threads: int = 0,
             cache: int | None = None) -> float:
    """Events/s of the plain analysis over ``files``, cold: one process, or ``workers``
    processes started together (wall time from the first start to the last end); with
    ``--program``, the ROOT program (``threads``: its ``EnableImplicitMT``, ``cache``: its
    TTreeCache size)."""
    disk.cold(*files)
    if before is not None:
        before()
    shares = split_work(files, workers) if workers > 1 else [(files, None)]
    start_at = time.time() + (6.0 if workers > 1 else 0.0)  # after the imports
    procs = []
    with tempfile.TemporaryDirectory(dir=WORK) as tmp:
        for k, (share, rng) in enumerate(shares):
            lst = Path(tmp) / f"files_{k}.json"
            lst.write_text(json.dumps([str(p) for p in share]))
            argv = [sys.executable, str(ANALYSIS), str(lst)]
            if PROGRAM:
                kind, branches = PROGRAM[0]
                argv = [sys.executable, str(ROOT_PROGRAM), str(lst), "--reader",
                        "getentry" if kind == "ttreecache" else kind,
                        "--branches", ",".join(branches)]
                if threads > 1:
                    argv += ["--threads", str(threads)]
                if cache is not None:
                    argv += ["--cache", str(cache)]
                elif kind == "ttreecache":  # ROOT's default TTreeCache, left alone
                    argv += ["--cache", "-1"]
            if rng:
                argv += ["--entries", rng]
            if step:
                argv += ["--step", str(step)]
            if workers > 1:
                argv += ["--start-at", f"{start_at:.3f}"]
            procs.append(disk.popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True))
        outs = []
        for p in procs:
            out, err = p.communicate(timeout=900)
            if p.returncode != 0:
                raise RuntimeError(f"analysis failed: {err.strip()[-300:]}")
            outs.append(json.loads(out.strip().splitlines()[-1]))
    events = sum(o["events"] for o in outs)
    wall = max(o["end"] for o in outs) - min(o["start"] for o in outs)
    return float(events / wall)


def apply(disk: Disk, rec: dict[str, Any], files: list[Path], out: Path
          ) -> tuple[dict[str, Any] | None, str]:
    """How the recommendation is measured: (analysis keyword arguments for the "after" read,
    how it was applied) or (None, why not)."""
    code = rec["code"]
    step = uproot_step(rec)
    if PROGRAM:  # a ROOT program: its own lines for T001 and W001
        cache = cache_size(rec)
        if code == "T001" and cache is not None:
            return {"files": files, "cache": cache}, f"ROOT lines: SetCacheSize({cache})"
        if code == "W001" and PROGRAM[0][0] == "rdataframe":
            n = int(rec.get("workers") or 2)
            return {"files": files, "threads": n}, f"ROOT.EnableImplicitMT({n}), same program"
    elif step is not None and shell_command(rec) is None:  # a reader change (T001)
        return {"files": files, "step": step}, f"uproot snippet: step_size={step}"
    if code == "W001":
        n = int(rec.get("workers") or 2)
        return {"files": files, "workers": n}, f"{n} processes, same analysis"
    cmd = shell_command(rec)
    if code == "P001" and cmd:
        def stage() -> None:
            r = disk.run(["bash", "-c", cmd], env=env(), cwd=str(out.parent))
            if r.returncode != 0:
                raise RuntimeError(f"P001 command failed: {r.stderr.strip()[-200:]}")
        return {"files": files, "before": stage}, f"printed command, then the analysis: {cmd}"
    if code in NOT_HERE and not (PROGRAM and code == "T001"):
        return None, NOT_HERE[code]
    if cmd is None:
        return None, "no printed shell command to run"
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    t0 = time.perf_counter()
    r = disk.run(["bash", "-c", cmd], env=env(), cwd=str(out), timeout=1200)
    if r.returncode != 0:
        return None, f"the printed command failed ({r.returncode}): {r.stderr.strip()[-200:]}"
    made = sorted(out.glob("*.root"))
    if not made:
        return None, "the printed command wrote no ROOT file"
    os.sync()
    mb = sum(p.stat().st_size for p in made) / 1e6
    return {"files": made}, (f"printed command run as printed: {len(made)} file(s), {mb:.1f} MB, "
                             f"{time.perf_counter() - t0:.0f} s")


# -- one dataset on one disk --------------------------------------------------------------------

def shown(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in doc.get("recommendations") or [] if not r.get("contradicted")]


def baseline_predicted(doc: dict[str, Any]) -> float | None:
    model = (doc.get("datasets") or [{}])[0].get("model") or doc.get("model") or {}
    preds = model.get("predictions") or []
    one = next((p for p in preds if p.get("workers") == 1), None)
    return None if one is None else one.get("events_per_s")


def reader_baseline(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The report's baseline as the program reads (``--reader``): its replayed device and CPU
    time, its form and the calibration's own cold measurement of that reader."""
    rb = (doc.get("datasets") or [{}])[0].get("reader_baseline")
    keys = ("reader", "io_s", "cpu_s", "device_limit", "events_per_s", "entries",
            "measured_events_per_s", "measured_baseline_events_per_s", "cpu_source",
            "device_requests", "seeks")
    return {k: rb.get(k) for k in keys} if rb else None


def run_one(name: str, disk: Disk, args: argparse.Namespace) -> dict[str, Any]:
    src = DATASETS[name].path
    data = disk.root / name
    if not data.exists():
        shutil.copytree(src, data)
        os.sync()
    files = sorted(data.glob("*.root"))
    if PROGRAM:  # the ROOT program's branches, told to the report
        kind, _ = PROGRAM[0]
        PROGRAM[0] = (kind, pick_branches(src, args.branches))
        EXTRA[:] = [*BASE_EXTRA, "--reader", ROOT_READER[kind], "--branches",
                    ",".join(PROGRAM[0][1])]
    with locked(f"{name} report ({disk.name})"):
        at_report = machine_check()  # the machine as the calibration found it (about)
        print(f"  machine before the report: one loop {at_report['one_s']:.2f} s, "
              f"{at_report['cores']:.2f} cores' worth", flush=True)
        try:
            doc = report(disk, data, args.budget)
        except RuntimeError as exc:  # the working tree can be mid-edit: once more
            print(f"  {exc}; once more", flush=True)
            doc = report(disk, data, args.budget)
    recs = shown(doc)[:args.top]
    extra = [r for r in doc.get("recommendations") or [] if r["code"] in args.also
             and r not in recs]  # ``--also``: measured too, counted apart
    recs = recs + extra
    rb = reader_baseline(doc)
    if rb is not None:
        print(f"  reader baseline ({rb['device_limit']}): device {rb['io_s']:.2f} s, CPU "
              f"{rb['cpu_s']:.2f} s ({rb['cpu_source']}); diff {doc['_diff_stat']}", flush=True)
    print(f"  report {doc['_wall_s']:.0f} s (code: {doc['_tree']}): " + ", ".join(
        f"{r['code']} {r['predicted_speedup']:.2f} ({r['speedup_low']:.2f}-"
        f"{r['speedup_high']:.2f})" for r in recs), flush=True)
    variants: list[tuple[str, dict[str, Any]]] = [("before", {"files": files})]
    rows: list[dict[str, Any]] = []
    for r in recs:
        kw, how = apply(disk, r, files, disk.root / f"{name}_{r['code']}")
        row = {"dataset": name, "disk": disk.name, "code": r["code"], "title": r["title"],
               "predicted": r["predicted_speedup"], "low": r["speedup_low"],
               "high": r["speedup_high"], "workers": r.get("workers"), "applied": how,
               "scenario": r.get("scenario"), "options": r.get("options") or []}
        if any(r is x for x in extra):
            row["also"] = "marked not recommended" if r.get("contradicted") else \
                "not in the top three"
        if r["code"] == "W001":  # where its figure comes from (the device bound, if any)
            row["evidence"] = [{k: e.get(k) for k in ("name", "value", "unit", "source",
                                                      "note")} for e in r.get("evidence") or []]
        opt = uproot_option(r) if kw is not None and "step" in kw else None
        if opt is not None:  # the uproot snippet run: its own prediction
            row.update(point_shown=[r["predicted_speedup"], r["speedup_low"],
                                    r["speedup_high"]], predicted=opt["predicted_speedup"],
                       low=opt["speedup_low"], high=opt["speedup_high"],
                       predicted_for=opt["name"])
        print(f"  {r['code']}: {how}", flush=True)
        row["key"] = r["code"]
        if kw is not None:
            variants.append((r["code"], kw))
        rows.append(row)
        for o in r.get("options") or []:
            found = re.search(r"then iterate with step_size=([0-9,]+) entries", o["name"])
            if found is None or kw is None or "workers" in kw or "step" in kw or PROGRAM:
                continue  # (a ROOT program has no uproot step)
            step = int(found.group(1).replace(",", ""))
            key = f"{r['code']}+step"
            variants.append((key, {**kw, "step": step}))
            rows.append({**row, "key": key, "option": True, "predicted": o["predicted_speedup"],
                         "low": o["speedup_low"], "high": o["speedup_high"],
                         "applied": f"{how}; then the option's uproot step_size={step}",
                         "predicted_for": o["name"]})
    rates: dict[str, list[float]] = {v: [] for v, _ in variants}
    checks: list[dict[str, float]] = []
    if len(variants) > 1:
        with locked(f"{name} passes ({disk.name})"):
            for k in range(args.repeats):
                checks.append(machine_check())
                for v, kw in (variants if k % 2 == 0 else variants[::-1]):
                    kw = dict(kw)
                    if READER_STEP and "step" not in kw:  # ``--step``: the program's reader
                        kw["step"] = READER_STEP[0]
                    rates[v].append(analysis(disk, kw.pop("files"), **kw))
                print("  pass " + str(k + 1) + ": " + ", ".join(
                    f"{v} {rates[v][-1]:,.0f}" for v, _ in variants) + " events/s (machine: "
                    f"one loop {checks[-1]['one_s']:.2f} s, {checks[-1]['cores']:.2f} cores' "
                    "worth)", flush=True)
    before = statistics.median(rates["before"]) if rates["before"] else None
    for row in rows:
        after = rates.get(row["key"])
        if not after or before is None:
            continue
        realised = statistics.median(after) / before
        row.update(realised=realised, ratio=realised / row["predicted"],
                   inside=row["low"] <= realised <= row["high"],
                   within20=abs(realised / row["predicted"] - 1) <= 0.2,
                   after_events_per_s=after)
    return {"dataset": name, "disk": disk.name, "what": DATASETS[name].what,
            "branches": branch_count(DATASETS[name]), "files": len(files),
            "mb": round(sum(f.stat().st_size for f in files) / 1e6, 1),
            "command": doc["_command"], "code": CODE[0] if CODE else str(REPO),
            "program": PROGRAM[0][0] if PROGRAM else "uproot",
            "tree": doc["_tree"], "diff_stat": doc["_diff_stat"],
            "reader_baseline": reader_baseline(doc),
            "report_s": round(doc["_wall_s"], 1),
            "before_events_per_s": rates["before"], "baseline_predicted": baseline_predicted(doc),
            "recommendations": [{k: r.get(k) for k in ("code", "predicted_speedup",
                                                       "speedup_low", "speedup_high",
                                                       "contradicted", "rank_note")}
                                for r in doc.get("recommendations") or []],
            "rows": rows, "machine": checks, "machine_at_report": at_report,
            "measured_at": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
            "load": os.getloadavg()[0]}


def slow_disk(size_mb: int) -> Any:
    from testbench import availability, emulated_disks

    ok, why = availability()
    if not ok:
        raise SystemExit(f"emulated disks unavailable: {why}")
    return emulated_disks(n=1, size_mb=size_mb, read_mb_per_s=70.0, read_iops=120,
                          tmp_root="/var/tmp")


def advise_saved(res: dict[str, Any], where: Path) -> Any:
    """The advice this working tree's code gives from one run's saved report (its site,
    dataset and calibration, the reader and branches its command named, the basket maps of
    the dataset's first 8 files), or ``None`` where the report was not saved."""
    from hep_advisor.document.report import calibration_parts
    from hep_advisor.pipeline.derive import advise_from
    from hep_advisor.probes.basketmap import read_basket_map

    found = re.search(r"step_size=(\d+)", res["command"])
    step = f"_step{found.group(1)}" if found else ""
    step += f"_{res['program']}" if res.get("program", "uproot") != "uproot" else ""
    saved = where / f"{res['dataset']}_{res['disk']}{step}_report.json"
    if not saved.exists():
        print(f"  {res['dataset']} ({res['disk']}): no saved report {saved}", flush=True)
        return None
    doc = json.loads(saved.read_text())
    d0 = doc["datasets"][0]
    site, dataset, cal = calibration_parts({"site": doc["site"], "dataset": d0["dataset"],
                                            "calibration": d0["calibration"]}, saved)
    words = shlex.split(res["command"])
    reader = words[words.index("--reader") + 1] if "--reader" in words else None
    chosen = words[words.index("--branches") + 1].split(",") if "--branches" in words \
        else None
    files = sorted(DATASETS[res["dataset"]].path.glob("*.root"))
    maps = [read_basket_map(str(f), TREE) for f in files[:8]]
    return advise_from(site, dataset, with_loop_parts(cal, files, maps), basket_maps=maps,
                       reader=reader, inputs=tuple(map(str, files)), branches=chosen)


def with_loop_parts(cal: Any, files: list[Path], maps: list[Any]) -> Any:
    """``cal`` with its event loop's parts where a report saved before they were recorded
    names only their count (``N entries of K file(s)``): the loop read the calibration's
    files in order (the dataset's first ``K``, up to 256 files), every one whole but the
    last, and these datasets' files hold the same entries each (the first map's)."""
    from hep_advisor.models.loop_sample import first_entries
    from hep_advisor.probes.readtests.results import LoopPart

    loop = cal.event_loop
    if loop is None or loop.parts or loop.cold is None or not maps:
        return cal
    found = re.match(r"([\d,]+) entries of (\d+) file", loop.cold.conditions.note or "")
    if found is None or len(files) > 256:
        return cal
    entries, k = int(found.group(1).replace(",", "")), int(found.group(2))
    whole = [LoopPart(str(f), maps[0].entries) for f in files[:k]]
    return replace(cal, event_loop=replace(loop, parts=first_entries(whole, entries)))


def readvise(results: list[dict[str, Any]], where: Path) -> list[dict[str, Any]]:
    """``results`` with each row's prediction and interval from this working tree's code,
    advised again from the run's saved report (see the module docstring)."""
    out = []
    for res in results:
        advice = advise_saved(res, where)
        if advice is None:
            continue
        recs = {r.code: r for r in advice.recommendations}
        rows = []
        for row in res["rows"]:
            rec = recs.get(row["code"])
            if rec is None:  # shown without a realised figure: "not applied: not advised now"
                then = row.get("realised")
                rows.append({**{k: v for k, v in row.items() if k != "realised"},
                             "applied": "not advised now" + (
                                 f" (realised then {then:.2f})" if then else "")})
                continue
            x: Any = rec
            if row.get("predicted_for"):  # an option (or the uproot snippet's own figure)
                x = next((o for o in rec.options if o.name == row["predicted_for"]), rec)
            new = {**row, "predicted": x.predicted_speedup, "low": x.speedup_low,
                   "high": x.speedup_high}
            if "realised" in row:
                new.update(ratio=row["realised"] / new["predicted"],
                           inside=new["low"] <= row["realised"] <= new["high"],
                           within20=abs(row["realised"] / new["predicted"] - 1) <= 0.2)
            rows.append(new)
        out.append({**res, "rows": rows})
    return out


def table(results: list[dict[str, Any]]) -> None:
    print("\n| dataset | disk | code | applied as | predicted (interval) | realised | realised "
          "/ predicted | inside | within 20% | each pass's after / before (min-max) |\n"
          "|---|---|---|---|---|---|---|---|---|---|")
    n = inside = within = 0
    w001: list[str] = []
    also: list[dict[str, Any]] = []
    for res in results:
        for r in res["rows"]:
            pred = f"{r['predicted']:.2f} ({r['low']:.2f}–{r['high']:.2f})"
            if "realised" not in r:
                print(f"| {res['dataset']} | {res['disk']} | {r['code']} | not applied: "
                      f"{r['applied']} | {pred} | — | — | — | — | — |")
                continue
            if not r.get("option") and not r.get("also"):
                n += 1
                inside += r["inside"]
                within += r["within20"]
            if r.get("also"):
                also.append(r)
            if r["code"] == "W001" and r["within20"] and not r.get("also"):
                w001.append(f"{res['dataset']} ({res['disk']})")
            how = r["applied"].split(":")[0]
            code = f"{r['code']} option" if r.get("option") else r["code"]
            if r.get("also"):
                code = f"{code} ({r['also']}; --also)"
            if r.get("option"):
                how = r["predicted_for"]
            # the same pass's two runs, side by side: how far the machine moves the ratio
            each = [a / b for a, b in zip(r.get("after_events_per_s") or [],
                                          res.get("before_events_per_s") or [], strict=False)
                    if b]
            spread = f"{min(each):.2f}–{max(each):.2f}" if each else "—"
            print(f"| {res['dataset']} | {res['disk']} | {code} | {how} | {pred} | "
                  f"{r['realised']:.2f} | {r['ratio']:.2f} | {'yes' if r['inside'] else '**no**'}"
                  f" | {'yes' if r['within20'] else '**no**'} | {spread} |")
    if n:
        print(f"\napplied {n} (options not counted): within 20% {within} "
              f"({100 * within / n:.0f}%, target 90%); "
              f"inside the interval {inside} ({100 * inside / n:.0f}%, target 90%); W001 within "
              f"20% on {len(w001)} (target 3): {', '.join(w001) or 'none'}")
    if also:
        print(f"measured with --also (not counted above): {len(also)}, inside "
              f"{sum(r['inside'] for r in also)}, within 20% {sum(r['within20'] for r in also)}")
    print("\n| dataset | disk | branches | files | MB | the rate now, predicted (the verdict) "
          "| as the program reads (--reader) | measured (events/s, passes) |\n"
          "|---|---|---|---|---|---|---|---|")
    for res in results:
        b = res["baseline_predicted"]
        r = (res.get("reader_baseline") or {}).get("events_per_s")
        m = res["before_events_per_s"]
        print(f"| {res['dataset']} | {res['disk']} | {res['branches']} | {res['files']} | "
              f"{res['mb']} | {'—' if b is None else f'{b:,.0f}'} | "
              f"{'—' if r is None else f'{r:,.0f}'} | "
              f"{', '.join(f'{x:,.0f}' for x in m) or '—'} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=",".join(DATASETS))
    ap.add_argument("--disk", choices=("slow", "fast", "both"), default="slow")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--budget", type=float, default=30.0)
    ap.add_argument("--top", type=int, default=3)
    ap.add_argument("--also", type=lambda t: [c for c in t.split(",") if c], default=[],
                    metavar="CODES", help="also apply these recommendations where the report "
                    "has them outside the top three or marked not recommended (e.g. W001); "
                    "counted apart")
    ap.add_argument("--skip-write", action="store_true")
    ap.add_argument("--out", default=None)
    ap.add_argument("--code", default=None, help="run the advisor from this copy of the code "
                    "(default: the installed one, this working tree)")
    ap.add_argument("--step", type=int, default=None,
                    help="the analysis reads with uproot.iterate at this entry step (and the "
                         "report is told so: --reader uproot.iterate:step_size=N); a printed "
                         "step replaces it")
    ap.add_argument("--report-args", default="", help="more arguments for report, one string")
    ap.add_argument("--program", choices=("uproot", "rdataframe", "getentry", "ttreecache"),
                    default="uproot",
                    help="the analysis: uproot.iterate over every branch (default), or a ROOT "
                         "program over --branches of the tree's branches (an RDataFrame of "
                         "Histo1D, or a compiled GetEntry loop without TTreeCache or with "
                         "ROOT's default one), the report told --reader rdataframe, "
                         "root.getentry or root.ttreecache and those --branches")
    ap.add_argument("--branches", type=int, default=20,
                    help="with --program: how many numeric branches it reads, spread evenly")
    ap.add_argument("--table", nargs="+", default=None, metavar="JSON",
                    help="only print the tables of earlier runs' --out files")
    ap.add_argument("--readvise", action="store_true", help="with --table: the predictions "
                    "of this working tree's code, advised again from the saved reports")
    args = ap.parse_args()
    if args.table:
        runs = [(res, Path(f).resolve().parent) for f in args.table
                for res in json.loads(Path(f).read_text())]
        if args.readvise:
            table([r for res, where in runs for r in readvise([res], where)])
        else:
            table([res for res, _ in runs])
        return 0
    EXTRA.extend(shlex.split(args.report_args))
    BASE_EXTRA.extend(EXTRA)
    if args.program != "uproot":
        if args.step:
            raise SystemExit("--step is for the uproot analysis")
        PROGRAM.append((args.program, []))
    if args.step:
        READER_STEP.append(args.step)
        EXTRA.extend(["--reader", f"uproot.iterate:step_size={args.step}"])
    if args.code:
        CODE.append(str(Path(args.code).resolve()))
    if args.out:
        SAVE.append(Path(args.out).resolve().parent)
    names = [n for n in args.only.split(",") if n]
    for n in names:
        if n not in DATASETS:
            raise SystemExit(f"unknown dataset {n}: one of {', '.join(DATASETS)}")
        if not args.skip_write:
            write(n)
        elif not DATASETS[n].path.exists():
            raise SystemExit(f"{DATASETS[n].path} is missing: run without --skip-write")
    WORK.mkdir(parents=True, exist_ok=True)
    disks = ("slow", "fast") if args.disk == "both" else (args.disk,)
    results = []
    for name in names:
        mb = sum(p.stat().st_size for p in DATASETS[name].path.glob("*.root")) / 1e6
        for d in disks:
            print(f"\n[{name} on {d}] {DATASETS[name].what}, {mb:.0f} MB", flush=True)
            try:
                if d == "slow":
                    with slow_disk(int(mb * 6) + 256) as bench:
                        results.append(run_one(name, Disk("slow", bench), args))
                else:
                    disk = Disk("fast")
                    try:
                        results.append(run_one(name, disk, args))
                    finally:
                        for p in disk.root.glob(f"{name}*"):
                            shutil.rmtree(p, ignore_errors=True)
            except Exception as exc:  # a dataset that fails is a line that says so
                print(f"  {name} on {d}: {type(exc).__name__}: {exc}", flush=True)
            if args.out:
                Path(args.out).write_text(json.dumps(results, indent=1, default=str))
    table(results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
