"""Traced requests beside strace, and the device reads they cause beside ``/sys/block``.

    python -m benchmarks.validation.bench_trace_device [--workdir /tmp/tracedev/bench]
        [--layouts interleaved small heldout] [--programs default step arrays getentry rdf]
        [--ra 128] [--no-strace] [--global-drop] [--kernel-ios [N]]

Counts only (nothing is timed: no lock needed; one program runs at a time).  For each
layout x program of ``bench_trace.py`` (its ROOT writer and programs, imported):

- ``interleaved``: one file, 400 float branches, 20,000 entries, ZLIB-1, ``SetAutoFlush(0)``;
- ``small``: 20 files x 300 entries x 200 float branches, ZLIB-1;
- programs: ``default`` (``uproot.iterate``, default step), ``step`` (``step_size=1000``),
  ``arrays`` (20 branches), ``getentry`` (PyROOT ``TTree::GetEntry``, no cache), ``rdf``
  (RDataFrame summing 20 branches);

the program is traced cold on the emulated 70 MB/s, 120 IOPS disk (``testbench``; the
program and the tracer inside its throttled cgroup) by ``hep_advisor.pipeline.trace.trace_program``,
the call behind ``hep-advisor trace --json --cold`` with the default recorder (``auto``), run
in a small helper so that every recorded read is kept (the JSON's picture keeps at most
3,000).  The trace's own counters give the device's reads and bytes during the program's run
(``/sys/block/<dev>/stat``, snapshots just before and after it; only this bench's programs
use this disk).  Then:

- the check against strace: where the recorder was the in-process one (uproot programs), the
  program traced again cold with ``--recorder strace``: requests and bytes, recorded / strace;
- the replay (:func:`hep_advisor.models.replay.traced.replay_trace`): the recorded reads, per file
in time
  order, reopened per range where the recorder counted about one open per range, through
  ``LocalDevice`` with the disk's ``read_ahead_kb`` and ``max_sectors_kb`` read back from
  sysfs, and the page cache the kernel and the disk's file system give
  (:func:`hep_advisor.models.replay.folios.large_folios` of ``uname -r`` and the mount's type, as
  the site probe would: large folios for ext4 from Linux 6.16): device reads and bytes replayed /
  counted; the other page-cache model (order-0 pages, or large folios) in the last column;
- the reads a cold open of the layout's files costs on this disk (the file system's metadata:
  each file opened and closed after the caches were dropped, nothing read), measured, shown
  apart (the replay does not model them).

With ``--kernel-ios``, a diagnosis of the misses: the program run once more, cold and
untraced, with the block layer's ``block_rq_issue`` tracepoint recorded (in a tracefs
instance of this bench's own, filtered to this disk, removed afterwards); each I/O mapped
onto the files through their extents (``filefrag``); printed: the untraced run's device
counts, the I/O sizes (pages) of the kernel and of the replay, and the first ``N`` I/Os of
the first file, kernel beside replay (page offset + pages).

Cold: the files' pages dropped (``posix_fadvise``), the loop device's buffers flushed
(``EmulatedDisks.drop_caches`` without the machine-wide ``drop_caches``, which would disturb
the other users of this machine; ``--global-drop`` adds it), and the throttle's slice reset.
Needs root (the emulated disk), ROOT (the ``root`` extra) and strace.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.common import REPO
from benchmarks.validation.bench_trace import PROGRAMS, WRITE, WRITER
from hep_advisor.models.replay.device import LocalDevice
from hep_advisor.models.replay.folios import large_folios
from hep_advisor.models.replay.traced import TracedReplay, replay_trace
from hep_advisor.probes.storage import find_mount, read_mounts

LAYOUTS = {
    "interleaved": [("interleaved.root", 400, 20000, 32000, 0, 0)],
    "small": [(f"small/s{i:02d}.root", 200, 300, 32000, 1, 0) for i in range(20)],
    # bench_trace.py's held-out file: floats and doubles, 16 kB baskets
    "heldout": [("heldout.root", 200, 20000, 16000, 0, 1)],
}

HELPER = r"""
import json, sys
from dataclasses import replace
from hep_advisor.document.report import document_json, make_document
from hep_advisor.pipeline.trace import trace_program
out, recorder, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
run = trace_program(argv, cold=True, stdout=sys.stderr, recorder=recorder)
cap = run.capture
doc = document_json(replace(make_document("trace", None, None), trace=run.trace))
with open(out, "w") as fh:
    json.dump({"trace": doc["trace"], "opens": cap.opens, "file_bytes": cap.file_bytes,
               "reads": [[r.file, r.offset, r.size, r.start_s, r.duration_s, r.pid]
                         for r in cap.reads]}, fh)
"""

OPENS = r"""
import os, sys
for p in sys.argv[1:]:
    fd = os.open(p, os.O_RDONLY)
    os.fstat(fd)
    os.close(fd)
"""


class Read:
    __slots__ = ("duration_s", "file", "offset", "pid", "size", "start_s")

    def __init__(self, file: str, offset: int, size: int, start_s: float,
                 duration_s: float | None = None, pid: int = 0) -> None:
        self.file, self.offset, self.size, self.start_s = file, offset, size, start_s
        self.duration_s, self.pid = duration_s, pid


def write_data(work: Path) -> dict[str, list[Path]]:
    specs: list[list[Any]] = [[str(work / name), *rest] for files in LAYOUTS.values()
                              for name, *rest in files]
    todo = [sp for sp in specs if not Path(str(sp[0])).exists()]
    if todo:
        (work / "small").mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-c", WRITE, WRITER, json.dumps(todo)], check=True)
    return {k: [work / name for name, *_ in v] for k, v in LAYOUTS.items()}


def stat_of(dev: str) -> tuple[int, int]:
    """(reads completed, bytes read) of a block device (``/sys/block/<dev>/stat``)."""
    fields = (Path("/sys/block") / Path(dev).name / "stat").read_text().split()
    return int(fields[0]), int(fields[2]) * 512


def cold(disk: Any, paths: list[str], global_drop: bool) -> None:
    disk.drop_caches(*paths, global_cache=global_drop)
    disk.reset_throttle()


def open_reads(disk: Any, paths: list[str], global_drop: bool) -> tuple[int, int]:
    """Device reads and bytes of opening and closing ``paths`` cold (nothing read)."""
    cold(disk, paths, global_drop)
    before = stat_of(disk.device)
    disk.run([sys.executable, "-c", OPENS, *paths], check=True)
    after = stat_of(disk.device)
    return after[0] - before[0], after[1] - before[1]


def traced(disk: Any, out: Path, recorder: str, script: Path, paths: list[str],
           global_drop: bool) -> dict[str, Any]:
    cold(disk, paths, global_drop)
    argv = [sys.executable, "-c", HELPER, str(out), recorder, sys.executable, str(script),
            *paths]
    done = disk.run(argv, capture_output=True, text=True, cwd=str(REPO))
    if done.returncode != 0 or not out.exists():
        raise SystemExit(f"{script.name} {recorder}: exit {done.returncode}: "
                         f"{done.stderr.strip().splitlines()[-1:]}")
    got: dict[str, Any] = json.loads(out.read_text())
    out.unlink()
    return got


def replay(got: dict[str, Any], ra_kb: int, max_kb: int, folios: bool,
           log: list[tuple[str, int, int]] | None = None) -> TracedReplay:
    reads = [Read(*r) for r in got["reads"]]
    dev = LocalDevice(70.0, 1 / 120, ra_kb, max_io_kb=max_kb, large_folios=folios,
                      limit="max")
    return replay_trace(reads, dev, got["file_bytes"], got["opens"], log)


class KernelIOs:
    """The read I/Os the block layer issues to one device (``block_rq_issue``), recorded in a
    tracefs instance of this process's own (removed on exit, Ctrl-C included)."""

    def __init__(self, major_minor: str) -> None:
        major, minor = (int(x) for x in major_minor.split(":"))
        self.devt = (major << 20) | minor  # the kernel's dev_t
        self.inst = Path("/sys/kernel/tracing/instances") / f"hep-bench-tracedev-{os.getpid()}"
        self.event = self.inst / "events/block/block_rq_issue"

    def __enter__(self) -> KernelIOs:
        self.inst.mkdir()
        try:
            (self.event / "filter").write_text(f"dev == {self.devt}")
            (self.event / "enable").write_text("1")
        except BaseException:
            self.inst.rmdir()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(OSError):
            (self.event / "enable").write_text("0")
        self.inst.rmdir()

    def clear(self) -> None:
        (self.inst / "trace").write_text("")

    def ios(self) -> list[tuple[int, int]]:
        """(first sector, sectors) of each read I/O since :meth:`clear`."""
        out = []
        for line in (self.inst / "trace").read_text().splitlines():
            m = RQ.search(line)
            if m and "R" in m.group(1):
                out.append((int(m.group(2)), int(m.group(3))))
        return out


RQ = re.compile(r"block_rq_issue: \d+,\d+ (\w+) \d+ \(.*?\) (\d+) \+ (\d+)")
EXTENT = re.compile(r"^\s*\d+:\s+(\d+)\.\.\s*\d+:\s+(\d+)\.\.\s*\d+:\s+(\d+):")


def extents(paths: list[str]) -> list[tuple[int, int, str, int]]:
    """(first device block, blocks, file, first file block) of each extent (4 KiB blocks)."""
    out = []
    for p in paths:
        text = subprocess.run(["filefrag", "-v", "-b4096", p], capture_output=True,
                              text=True, check=True).stdout
        for line in text.splitlines():
            m = EXTENT.match(line)
            if m:
                out.append((int(m.group(2)), int(m.group(3)), p, int(m.group(1))))
    return out


def on_files(ios: list[tuple[int, int]], ext: list[tuple[int, int, str, int]]
             ) -> list[tuple[str, int, int]]:
    """The I/Os as (file, first page, pages); ``("", block, pages)`` outside the files."""
    out = []
    for sector, n in ios:
        block, pages = sector // 8, -(-n // 8)
        hit = next(((f, fb + block - b0) for b0, nb, f, fb in ext if b0 <= block < b0 + nb),
                   ("", block))
        out.append((hit[0], hit[1], pages))
    return out


def _sizes(pages: list[int]) -> str:
    hist: dict[int, int] = {}
    for n in pages:
        hist[n] = hist.get(n, 0) + 1
    top = sorted(hist.items(), key=lambda kv: -kv[1])[:8]
    return ", ".join(f"{k}p x{v}" for k, v in top)


def diagnose(disk: Any, kio: KernelIOs, script: Path, paths: list[str], got: dict[str, Any],
             ra_kb: int, max_kb: int, first: int, global_drop: bool
             ) -> list[tuple[str, int, int]]:
    """The kernel's I/Os in a cold untraced run beside the replay's (returned: the kernel's,
    as (file, first page, pages))."""
    cold(disk, paths, global_drop)
    kio.clear()
    before = stat_of(disk.device)
    disk.run([sys.executable, str(script), *paths], check=True, capture_output=True)
    after = stat_of(disk.device)
    kern = on_files(kio.ios(), extents(paths))
    log: list[tuple[str, int, int]] = []
    replay(got, ra_kb, max_kb, folios_of(paths[0]), log)
    split = max(max_kb // 4, 1)
    mine = [(f, o // 4096 + i, min(split, n // 4096 - i))
            for f, o, n in log for i in range(0, n // 4096, split)]
    other = sum(1 for f, _, _ in kern if not f)
    print(f"  kernel (untraced cold run): /sys/block {after[0] - before[0]} reads, "
          f"{(after[1] - before[1]) / 1e6:.2f} MB; block_rq_issue {len(kern)} I/Os "
          f"({other} outside the files)", flush=True)
    print(f"  I/O sizes, kernel: {_sizes([n for _, _, n in kern])}", flush=True)
    print(f"  I/O sizes, replay: {_sizes([n for _, _, n in mine])}", flush=True)
    f0 = next((f for f, _, _ in kern if f), None)
    if f0 is not None and first > 0:
        name = Path(f0).name
        seq_k = [f"{o}+{n}" for f, o, n in kern if f == f0][:first]
        seq_r = [f"{o}+{n}" for f, o, n in mine if f == f0][:first]
        print(f"  {name}, kernel: {' '.join(seq_k)}", flush=True)
        print(f"  {name}, replay: {' '.join(seq_r)}", flush=True)
    return kern


def folios_of(path: str) -> bool:
    """Whether the page cache of ``path``'s file system uses large folios on this kernel (the
    facts the site probe records: the kernel release and the mount's file system type)."""
    mount = find_mount(path, read_mounts())
    return large_folios(platform.release(), mount.fs_type if mount else None)


def _r(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b else "n/a"


def _ok(a: float, b: float) -> str:
    return "yes" if b and abs(a / b - 1) <= 0.10 else "**no**"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/tracedev/bench"))
    ap.add_argument("--layouts", nargs="*", default=list(LAYOUTS), choices=list(LAYOUTS))
    ap.add_argument("--programs", nargs="*", default=["default", "step", "arrays", "getentry",
                                                      "rdf"])
    ap.add_argument("--ra", type=int, default=128, help="the disk's read_ahead_kb to ask for")
    ap.add_argument("--no-strace", action="store_true", help="skip the strace check runs")
    ap.add_argument("--global-drop", action="store_true",
                    help="also drop the machine's whole page cache before each run")
    ap.add_argument("--kernel-ios", type=int, nargs="?", const=16, default=0, metavar="N",
                    help="also run each program cold and untraced with the block layer's "
                    "I/Os recorded (tracefs), beside the replay's; N: I/Os of the first file "
                    "shown (default 16)")
    ap.add_argument("--keep", type=Path, help="write each case's counts and replay (JSON) here")
    opts = ap.parse_args()
    bad = [p for p in opts.programs if p not in PROGRAMS]
    if bad:
        print(f"unknown program(s): {', '.join(bad)} (known: {', '.join(PROGRAMS)})",
              file=sys.stderr)
        return 2
    if shutil.which("strace") is None:
        print("strace not found", file=sys.stderr)
        return 2
    work = opts.workdir.resolve()
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    layouts = write_data(work)
    for name in opts.programs:
        (work / f"{name}.py").write_text(PROGRAMS[name])
    print(f"data ready in {time.perf_counter() - t0:.0f} s under {work}", flush=True)

    from testbench import emulated_disks

    rows: list[str] = []
    kept: list[dict[str, Any]] = []
    with emulated_disks(read_mb_per_s=70, read_iops=120, read_ahead_kb=opts.ra,
                        size_mb=256) as disk, contextlib.ExitStack() as stack:
        ra_kb, max_kb = disk.disks[0].read_ahead_kb, disk.disks[0].max_sectors_kb
        print(f"{disk!r}; queue read_ahead_kb {ra_kb}, max_sectors_kb {max_kb}", flush=True)
        kio = stack.enter_context(KernelIOs(disk.major_minor)) if opts.kernel_ios else None
        copied: dict[str, list[str]] = {}
        for name in opts.layouts:
            copied[name] = []
            for p in layouts[name]:
                dest = disk.mount_point / name / p.name
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(p, dest)
                copied[name].append(str(dest))
        subprocess.run(["sync"], check=True)
        lf = folios_of(str(disk.mount_point))
        model, other = ("large folios", "order-0 pages") if lf else ("order-0 pages",
                                                                      "large folios")
        print(f"page cache: {model} (Linux {platform.release()}, the disk's file system)",
              flush=True)
        for layout in opts.layouts:
            paths = copied[layout]
            o_n, o_b = open_reads(disk, paths, opts.global_drop)
            print(f"\n{layout}: cold opens of {len(paths)} files: {o_n} device reads, "
                  f"{o_b / 1e3:.0f} kB (measured; not replayed)", flush=True)
            for prog in opts.programs:
                script = work / f"{prog}.py"
                got = traced(disk, work / "trace.json", "auto", script, paths,
                             opts.global_drop)
                t = got["trace"]
                n_req = sum(f["requests"] for f in t["files"])
                n_b = sum(f["bytes"] for f in t["files"])
                blk_n, blk_b = t["block_reads"] or 0, t["block_bytes"] or 0
                # the model the facts choose, and the other one for comparison
                pages = replay(got, ra_kb, max_kb, lf)
                folio = replay(got, ra_kb, max_kb, not lf)
                again = sum(f.reopened for f in pages.files)
                whole = sum(got["file_bytes"].values())
                twice = blk_b > whole + 64 * 1024  # more than the files hold: pages read twice
                if twice:
                    print(f"  NOTE: the device served {blk_b / 1e6:.2f} MB of files holding "
                          f"{whole / 1e6:.2f} MB: pages evicted during the run and read again "
                          "(memory pressure, or another user's drop_caches); the replay "
                          "assumes nothing is evicted", flush=True)
                print(f"{layout} / {prog}: recorder {t['recorder']}; recorded {n_req} requests, "
                      f"{n_b / 1e6:.2f} MB (distinct {pages.distinct_bytes / 1e6:.2f} MB); "
                      f"{again}/{len(pages.files)} files reopened per range; /sys/block "
                      f"{blk_n} reads, {blk_b / 1e6:.2f} MB", flush=True)
                for label, r in ((model, pages), (other, folio)):
                    print(f"  replay ({label}): {r.device_reads} reads (/ counted "
                          f"{_r(r.device_reads, blk_n)}; with the measured opens "
                          f"{_r(r.device_reads + o_n, blk_n)}), {r.device_bytes / 1e6:.2f} MB "
                          f"(/ counted {_r(r.device_bytes, blk_b)})", flush=True)
                kern = None
                if kio is not None:
                    kern = diagnose(disk, kio, script, paths, got, ra_kb, max_kb,
                                    opts.kernel_ios, opts.global_drop)
                s_n = s_b = None
                if t["recorder"] != "strace" and not opts.no_strace:
                    s = traced(disk, work / "trace.json", "strace", script, paths,
                               opts.global_drop)["trace"]
                    s_n = sum(f["requests"] for f in s["files"])
                    s_b = sum(f["bytes"] for f in s["files"])
                    print(f"  strace: {s_n} requests, {s_b / 1e6:.2f} MB; recorded / strace "
                          f"{_r(n_req, s_n)} requests, {_r(n_b, s_b)} bytes", flush=True)
                strace_col = ("itself" if t["recorder"] == "strace" else
                              "not run" if s_n is None else
                              f"{_r(n_req, s_n)} / {_r(n_b, s_b or 0)}")
                rows.append(
                    f"| {layout} | {prog}{' (†)' if twice else ''} | {t['recorder']} | {n_req} | "
                    f"{n_b / 1e6:.2f} | "
                    f"{strace_col} | {blk_n} | {blk_b / 1e6:.2f} | "
                    f"{pages.device_reads} / {blk_n} = {_r(pages.device_reads, blk_n)} "
                    f"{_ok(pages.device_reads, blk_n)} | "
                    f"{_r(pages.device_reads + o_n, blk_n)} | "
                    f"{pages.device_bytes / 1e6:.2f} / {blk_b / 1e6:.2f} = "
                    f"{_r(pages.device_bytes, blk_b)} {_ok(pages.device_bytes, blk_b)} | "
                    f"{_r(folio.device_reads, blk_n)} / {_r(folio.device_bytes, blk_b)} |")
                if opts.keep is not None:
                    kept.append({"layout": layout, "program": prog, "recorder": t["recorder"],
                                 "requests": n_req, "bytes": n_b, "strace": [s_n, s_b],
                                 "block": [blk_n, blk_b], "open_reads": [o_n, o_b],
                                 "large_folios": lf, "replay": pages.as_dict(),
                                 "replay_other": folio.as_dict(),
                                 # what an offline replay needs: the reads, sizes and opens,
                                 # and the kernel's I/Os (file, first page, pages)
                                 "reads": got["reads"], "file_bytes": got["file_bytes"],
                                 "opens": got["opens"], "kernel_ios": kern})
    print(f"\ncold on the emulated 70 MB/s, 120 IOPS disk; read_ahead_kb {ra_kb}, "
          f"max_sectors_kb {max_kb}; Linux {platform.release()}; replay: {model} ({other} in "
          "the last column)\n")
    print("| layout | program | recorder | requests | MB | recorded / strace (req. / bytes) "
          "| /sys/block reads | /sys/block MB | replayed / counted reads | with cold opens "
          f"| replayed / counted MB | {other} (reads / MB) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    if opts.keep is not None:
        opts.keep.write_text(json.dumps(kept, indent=1) + "\n")
    print("\n(†): the device served more bytes than the files hold (pages read twice)")
    print(f"\n({time.perf_counter() - t0:.0f} s in all)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
