"""Replayed against traced: the reads each reader issues, predicted from basket maps.

Writes six small layouts (ROOT via PyROOT, ``hadd``, uproot), runs each real reader on them
under ``strace`` (read system calls on the data files only), replays the same readers from the
files' basket maps (``hep_advisor.probes.basketmap`` -> ``hep_advisor.models.replay.readers``), and
prints, per layout and reader, the traced and replayed read calls and bytes and their ratios
(target: within 10%).

    python -m benchmarks.validation.bench_replay_trace [--workdir DIR] [--layouts ...]
        [--readers ...] [--cold] [--show]

About 90 s on two shared cores.  ``--cold`` also runs every reader cold (its data files evicted
from the page cache) and compares the bytes the kernel fetched (``read_bytes`` of
``/proc/self/io``, around the reading loop only) with the bytes the device model
(``hep_advisor.models.replay.device.LocalDevice``, this disk's ``read_ahead_kb``) says the request
stream fetches; it adds about 50%, so run it on half of the layouts at a time.  A last table gives
what the device model predicts for each replayed stream on a 70 MB/s, 120 IOPS disk with
128 kB read-ahead (a prediction only: no throttled disk is measured here;
``bench_replay_disk.py`` counts the device reads on an emulated disk and times them throttled).
``--show`` prints both streams of every case that differs.  Needs ROOT (the ``root`` extra)
and ``strace``.

Layouts (a few MB in all):

- ``small``: 6 ROOT files x 500 entries x 40 float branches (ZLIB-1, ROOT's default AutoFlush,
  which such small files never reach), read one after another in one process;
- ``hadd``: those merged by ``hadd`` (fast merge: baskets copied, clusters kept);
- ``hadd-O``: merged by ``hadd -O`` (baskets rewritten, re-clustered);
- ``autoflush``: one ROOT file, 60,000 entries x 30 branches, flushed by ROOT's byte rule at
  1 MB (``SetAutoFlush(-1000000)``: the default rule at 1/30 of its 30 MB, so that a small
  file has clusters and resized baskets);
- ``tiny``: 2 kB baskets (``SetBasketSize``) of mixed float/double/int branches with
  ``SetAutoFlush(0)``: 64-byte to 2 kB baskets interleaved on disk in the order they fill;
- ``uproot``: written by uproot in 8 chunks of 5,000 entries (one basket per branch per chunk).

Readers: uproot ``iterate(step_size=5000)``, uproot ``iterate()`` (default ``"100 MB"``: a key
pre-pass), ROOT ``GetEntry`` loop without cache (``SetCacheSize(0)``) and with the default
TTreeCache; and three of them on a branch subset (``3br``: ``b0, b7, b21``, enabled with
``SetBranchStatus`` for ROOT, ``filter_name`` for uproot), where reads are sparse.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from hep_advisor.models.replay import (
    LocalDevice,
    Transfer,
    python_buffered,
    root_files,
    stats,
    uproot_files,
)
from hep_advisor.models.replay.requests import Request
from hep_advisor.probes.basketmap import BasketMap, read_basket_map

TREE = "Events"
STEP = 5000

# --------------------------------------------------------------------------------------------
# Writing the layouts

WRITE_ROOT = r"""
import array, json, sys, ROOT
for path, nbranch, nent, autoflush, basket, mixed in json.loads(sys.argv[1]):
    f = ROOT.TFile(path, "RECREATE", "", 101)
    t = ROOT.TTree("Events", "Events")
    bufs = []
    for i in range(nbranch):
        kind = "f"
        if mixed and i % 3:
            kind = "d" if i % 3 == 1 else "i"
        a = array.array(kind, [0])
        t.Branch(f"b{i}", a, f"b{i}/{kind.upper()}", basket)
        bufs.append((kind, a))
    if autoflush is not None:
        t.SetAutoFlush(autoflush)
    r = ROOT.TRandom3(nent + nbranch)
    for e in range(nent):
        for i, (k, a) in enumerate(bufs):
            a[0] = int(r.Poisson(5)) if k == "i" else (r.Gaus() if i % 2 else float(e % 97))
        t.Fill()
    t.Write()
    f.Close()
"""


def write_root(specs: Sequence[tuple[Path, int, int, int | None, int, bool]]) -> None:
    """Write ROOT files (path, branches, entries, autoflush or None, basket size, mixed types)."""
    payload = json.dumps([[str(p), *rest] for p, *rest in specs])
    subprocess.run([sys.executable, "-c", WRITE_ROOT, payload], check=True, capture_output=True)


def root_tool(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    spec = importlib.util.find_spec("ROOT")
    if spec is None or spec.origin is None:
        raise SystemExit(f"{name} not found (install the root extra)")
    return str(Path(spec.origin).parent / "bin" / name)


def write_uproot(path: Path, branches: int, entries: int, chunk: int) -> None:
    import numpy as np
    import uproot

    rng = np.random.default_rng(7)
    with uproot.recreate(path, compression=uproot.ZLIB(1)) as f:
        for start in range(0, entries, chunk):
            n = min(chunk, entries - start)
            data = {
                f"b{i}": (
                    rng.normal(size=n).astype(np.float32)
                    if i % 2
                    else (np.arange(start, start + n) % 97).astype(np.float32)
                )
                for i in range(branches)
            }
            if start == 0:
                f.mktree(TREE, {k: v.dtype for k, v in data.items()})
            f[TREE].extend(data)


def make_layouts(work: Path, reuse: bool = False) -> dict[str, list[Path]]:
    small = [work / f"small_{i}.root" for i in range(6)]
    layouts = {
        "small": small,
        "hadd": [work / "hadd.root"],
        "hadd-O": [work / "haddO.root"],
        "autoflush": [work / "autoflush.root"],
        "tiny": [work / "tiny.root"],
        "uproot": [work / "uproot.root"],
    }
    if reuse and all(p.exists() for ps in layouts.values() for p in ps):
        return layouts
    hadd = root_tool("hadd")
    write_root(
        [
            *[(p, 40, 500, None, 32000, False) for p in small],
            (work / "autoflush.root", 30, 60000, -1_000_000, 32000, False),
            (work / "tiny.root", 30, 20000, 0, 2000, True),
        ]
    )
    subprocess.run(
        [hadd, "-f", str(work / "hadd.root"), *map(str, small)], check=True, capture_output=True
    )
    subprocess.run(
        [hadd, "-O", "-f", str(work / "haddO.root"), *map(str, small)],
        check=True,
        capture_output=True,
    )
    write_uproot(work / "uproot.root", 30, 40000, 5000)
    return layouts


# --------------------------------------------------------------------------------------------
# Running the real readers under strace

READ_BYTES = r"""
def read_bytes():
    with open("/proc/self/io") as fh:
        for line in fh:
            if line.startswith("read_bytes"):
                return int(line.split()[1])
    return -1
"""

READ_UPROOT = (
    READ_BYTES
    + r"""
import sys, uproot
step, names = sys.argv[1], sys.argv[2]
step = int(step) if step.isdigit() else step
names = None if names == "*" else names.split(",")
before = read_bytes()
for path in sys.argv[3:]:
    with uproot.open(path) as f:
        for _ in f["Events"].iterate(names, step_size=step, library="np"):
            pass
print("READ_BYTES", read_bytes() - before, file=sys.stderr)
"""
)

READ_ROOT = (
    READ_BYTES
    + r"""
import sys, ROOT
cache, names = int(sys.argv[1]), sys.argv[2]
ROOT.TFile  # load the I/O libraries before counting
before = read_bytes()
for path in sys.argv[3:]:
    f = ROOT.TFile.Open(path)
    t = f.Get("Events")
    if names != "*":
        t.SetBranchStatus("*", 0)
        for name in names.split(","):
            t.SetBranchStatus(name, 1)
    if cache >= 0:
        t.SetCacheSize(cache)
    for i in range(t.GetEntries()):
        t.GetEntry(i)
    f.Close()
print("READ_BYTES", read_bytes() - before, file=sys.stderr)
"""
)

_CALL = re.compile(r"^(\d+)\s+(read|pread64|lseek|openat)\((.*)$")
_RESUMED = re.compile(r"^(\d+)\s+<\.\.\. (\w+) resumed>(.*)$")
_FD = re.compile(r"^(\d+)<([^>]*)>")


def trace(script: str, args: Sequence[str], files: Sequence[Path]) -> list[Request]:
    """Run ``python -c script args`` under strace; the reads of ``files`` in order."""
    wanted = {str(p.resolve()) for p in files}
    with tempfile.NamedTemporaryFile("r", suffix=".strace") as out:
        cmd = [
            "strace",
            "-f",
            "-qq",
            "-y",
            "-e",
            "trace=read,pread64,lseek,openat",
            "-o",
            out.name,
            sys.executable,
            "-c",
            script,
            *args,
        ]
        subprocess.run(cmd, check=True, capture_output=True)
        lines = Path(out.name).read_text(errors="replace").splitlines()
    pending: dict[str, str] = {}
    pos: dict[tuple[str, str], int] = {}  # (fd, path) -> offset
    out_reqs: list[Request] = []
    for line in lines:
        m = _CALL.match(line)
        if m:
            pid, call, rest = m.groups()
            if rest.endswith("<unfinished ...>"):
                pending[pid] = call + "(" + rest[: -len("<unfinished ...>")]
                continue
            text = call + "(" + rest
        else:
            r = _RESUMED.match(line)
            if not r or r.group(1) not in pending:
                continue
            text = pending.pop(r.group(1)) + r.group(3)
        call, _, args_text = text.partition("(")
        fd = _FD.match(args_text)
        if not fd:
            if call == "openat":
                ret = re.search(r"= (\d+)<([^>]*)>", text)
                if ret and ret.group(2) in wanted:
                    pos[(ret.group(1), ret.group(2))] = 0
            continue
        fdnum, path = fd.groups()
        if path not in wanted:
            continue
        ret = re.search(r"\)\s+= (-?\d+)", text)
        if not ret:
            continue
        value = int(ret.group(1))
        if call == "lseek":
            pos[(fdnum, path)] = value
        elif call == "read" and value >= 0:
            offset = pos.get((fdnum, path), 0)
            out_reqs.append(Request(path, offset, value))
            pos[(fdnum, path)] = offset + value
        elif call == "pread64" and value >= 0:
            offset = int(text.rsplit(",", 1)[1].split(")")[0])
            out_reqs.append(Request(path, offset, value))
    return out_reqs


def evict(files: Sequence[Path]) -> None:
    for p in files:
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def cold_read_bytes(script: str, args: Sequence[str], files: Sequence[Path]) -> int:
    """Bytes the reader made the kernel fetch from the device, cold (``/proc/self/io``)."""
    evict(files)
    done = subprocess.run(
        [sys.executable, "-c", script, *args], check=True, capture_output=True, text=True
    )
    found = re.search(r"READ_BYTES (-?\d+)", done.stderr)
    return int(found.group(1)) if found else -1


def device_read_ahead_kb(path: Path) -> int:
    """The block device's read_ahead_kb for the file system holding ``path`` (128 if unknown)."""
    dev = os.stat(path).st_dev
    base = Path(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}")
    for q in (base / "queue", base.parent / "queue" if base.exists() else base / "none"):
        try:
            return int((q / "read_ahead_kb").read_text())
        except OSError:
            continue
    try:
        return int((base.resolve().parent / "queue" / "read_ahead_kb").read_text())
    except OSError:
        return 128


# --------------------------------------------------------------------------------------------
# Replaying the same readers


def replay(reader: str, maps: Sequence[BasketMap]) -> list[Request]:
    names = SUBSET if reader.endswith(SUFFIX) else None
    if reader.startswith("uproot"):
        step: int | str = "100 MB" if "100 MB" in reader else STEP
        reqs = uproot_files(maps, names, step_size=step)
        return list(python_buffered(reqs, 4096, {m.path: m.file_bytes for m in maps}))
    if reader.startswith("ROOT no cache"):
        return root_files(maps, names, cache_bytes=0)
    return root_files(
        maps, names, cache_bytes=None, autoflush=[AUTOFLUSH.get(m.path) for m in maps]
    )


AUTOFLUSH: dict[str, int] = {}
#: The emulated disk of the project's tests (throttled to 70 MB/s and 120 IOPS).
HDD = LocalDevice.from_rates(70, 120, read_ahead_kb=128)

#: A branch subset (3 of 30 or 40 branches): sparse reads, where read-ahead matters.
SUBSET = ["b0", "b7", "b21"]
SUFFIX = " 3br"
READERS = {
    "uproot step": (READ_UPROOT, [str(STEP), "*"]),
    "uproot 100 MB": (READ_UPROOT, ["100 MB", "*"]),
    "ROOT no cache": (READ_ROOT, ["0", "*"]),
    "ROOT TTreeCache": (READ_ROOT, ["-1", "*"]),
    "uproot step" + SUFFIX: (READ_UPROOT, [str(STEP), ",".join(SUBSET)]),
    "ROOT no cache" + SUFFIX: (READ_ROOT, ["0", ",".join(SUBSET)]),
    "ROOT TTreeCache" + SUFFIX: (READ_ROOT, ["-1", ",".join(SUBSET)]),
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--layouts", nargs="*", default=None)
    ap.add_argument("--readers", nargs="*", default=None)
    ap.add_argument("--show", action="store_true", help="print both streams of every miss")
    ap.add_argument(
        "--cold",
        action="store_true",
        help="also run each reader cold and compare the device bytes (/proc/self/io)"
        " with the device model's",
    )
    opts = ap.parse_args()
    if shutil.which("strace") is None:
        print("strace not found", file=sys.stderr)
        return 2
    work = Path(opts.workdir or tempfile.mkdtemp(prefix="replay-trace-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    layouts = make_layouts(work, reuse=opts.workdir is not None)
    print(f"layouts written in {time.perf_counter() - t0:.1f} s under {work}")
    import uproot

    rows = []
    cold: list[tuple[str, str, int, int, int]] = []
    predicted: list[tuple[str, str, Transfer]] = []
    for name, paths in layouts.items():
        if opts.layouts and name not in opts.layouts:
            continue
        maps = [read_basket_map(str(p.resolve()), TREE) for p in paths]
        for p in paths:
            with uproot.open(p) as f:
                AUTOFLUSH[str(p.resolve())] = int(f[TREE].member("fAutoFlush"))
        for reader, (script, args) in READERS.items():
            if opts.readers and reader not in opts.readers:
                continue
            traced = trace(script, [*args, *map(str, paths)], paths)
            replayed = replay(reader, maps)
            ts, rs = stats(traced), stats(replayed)
            rows.append((name, reader, ts, rs))
            sizes = {m.path: m.file_bytes for m in maps}
            hdd = HDD.replay(replayed, sizes, reopen=reader.startswith("uproot"))
            predicted.append((name, reader, hdd))
            if opts.cold:
                real = cold_read_bytes(script, [*args, *map(str, paths)], paths)
                device = LocalDevice(1000, 1e-4, read_ahead_kb=device_read_ahead_kb(paths[0]))
                model = device.replay(
                    replayed,
                    {m.path: m.file_bytes for m in maps},
                    reopen=reader.startswith("uproot"),
                )
                size = sum(m.file_bytes for m in maps)
                cold.append((name, reader, real, model.device_bytes, size))
            if opts.show and (ts.requests != rs.requests or ts.bytes != rs.bytes):
                print(f"--- {name} / {reader}")
                for a, b in zip(traced, replayed, strict=False):
                    print(f"  {a.offset:>10} {a.size:>8}   {b.offset:>10} {b.size:>8} {b.kind}")
                for a in traced[len(replayed) :]:
                    print(f"  {a.offset:>10} {a.size:>8}   (traced only)")
                for b in replayed[len(traced) :]:
                    print(f"  {'':>10} {'':>8}   {b.offset:>10} {b.size:>8} {b.kind} (replay only)")
    print()
    head = (
        f"{'layout':<10} {'reader':<19} {'traced reads':>12} {'replayed':>9} {'ratio':>6}"
        f" {'traced MB':>10} {'replayed':>9} {'ratio':>6}  {'seq runs t/r':>12}"
    )
    print(head)
    print("-" * len(head))
    within = 0
    for name, reader, ts, rs in rows:
        rr = rs.requests / ts.requests if ts.requests else float("nan")
        rb = rs.bytes / ts.bytes if ts.bytes else float("nan")
        ok = abs(rr - 1) <= 0.10 and abs(rb - 1) <= 0.10
        within += ok
        print(
            f"{name:<10} {reader:<19} {ts.requests:>12} {rs.requests:>9} {rr:>6.3f}"
            f" {ts.bytes / 1e6:>10.3f} {rs.bytes / 1e6:>9.3f} {rb:>6.3f}"
            f"  {ts.runs:>5}/{rs.runs:<6}{'' if ok else ' MISS'}"
        )
    print(
        f"\nwithin 10% (reads and bytes): {within} of {len(rows)}"
        f"   ({time.perf_counter() - t0:.1f} s)"
    )
    print(
        "\npredicted, not measured: the replayed streams, cold, on a 70 MB/s, 120 IOPS disk"
        " with 128 kB read-ahead"
    )
    head = f"{'layout':<10} {'reader':<19} {'time s':>8} {'device I/Os':>12} {'device MB':>10}"
    print(head)
    print("-" * len(head))
    for name, reader, t in predicted:
        print(
            f"{name:<10} {reader:<19} {t.time_s:>8.2f} {t.device_requests:>12}"
            f" {t.device_bytes / 1e6:>10.3f}"
        )
    if cold:
        ra = device_read_ahead_kb(work)
        print(f"\ncold reads: bytes fetched from the device (read_ahead_kb {ra})")
        head = (
            f"{'layout':<10} {'reader':<19} {'file MB':>8} {'measured MB':>12}"
            f" {'model MB':>9} {'ratio':>6}"
        )
        print(head)
        print("-" * len(head))
        for name, reader, real, model_bytes, size in cold:
            ratio = model_bytes / real if real > 0 else float("nan")
            print(
                f"{name:<10} {reader:<19} {size / 1e6:>8.3f} {real / 1e6:>12.3f}"
                f" {model_bytes / 1e6:>9.3f} {ratio:>6.3f}"
            )
    if not opts.keep and opts.workdir is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
