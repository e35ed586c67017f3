"""The device model against a block device: device reads counted, and (throttled) times.

The layouts and readers of ``bench_replay_trace.py``, run cold on an emulated disk (a loop
device of :mod:`testbench`, so that ``/sys/block/loopN/stat`` counts this benchmark's reads
alone), beside ``hep_advisor.models.replay.LocalDevice`` replaying the same readers' request
streams:

* ``--ra KB ...`` (no throttle; counts, no timing: no lock needed): for each read-ahead, the
  device reads and bytes the kernel issued against the model's, with order-0 pages and with
  large folios (the kernel's read path over folios, ``models/replay/folios.py``: what the
  replay uses where the site's kernel and file system give large folios);
* ``--times`` (the disk throttled to ``--mb-per-s`` and ``--iops``, 2560 KiB read-ahead, as the
  project's slow-disk benchmarks): each reader's cold and warm wall time, ``--repeat`` times,
  the lock held once, around all the timed runs (keep it to a few cases: minutes); the I/O
  time measured is cold - warm (the readers read, then decompress: read-ahead overlaps some of
  it, so this is a lower bound of the time spent waiting for the device), against the model's
  device time with the disk's form (``limit="max"``: a block throttle; ``max_io_kb`` the loop
  device's ``max_sectors_kb``).

    python -m benchmarks.validation.bench_replay_disk --workdir DIR [--layouts ...] [--readers ...]
        [--heldout] [--ra 128 2560] [--times [--repeat 3] [--lock /tmp/hep-bench.lock]]

Needs root, cgroup v1 blkio and ROOT (the ``root`` extra): see ``testbench``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks.validation import bench_replay_trace as brt
from hep_advisor.models.replay import LocalDevice
from hep_advisor.probes.basketmap import read_basket_map
from testbench.common import timing_lock

DEFAULT_READERS = ["uproot step", "uproot 100 MB", "ROOT no cache", "ROOT TTreeCache",
                   "uproot step 3br", "ROOT no cache 3br"]


def block_stat(device: str) -> tuple[int, int]:
    """(reads completed, bytes read) of a block device, from ``/sys/block``."""
    f = Path(f"/sys/block/{Path(device).name}/stat").read_text().split()
    return int(f[0]), int(f[2]) * 512


def queue_value(device: str, name: str) -> int:
    return int(Path(f"/sys/block/{Path(device).name}/queue/{name}").read_text())


def run_reader(bench: object, reader: str, paths: Sequence[Path], cold: bool,
               lock: str | None = None) -> tuple[float, int, int]:
    """(seconds, device reads, device bytes) of one reader's run inside the disk's cgroup."""
    script, args = brt.READERS[reader]
    if cold:  # these files only: the libraries stay cached, as in the warm run
        bench.drop_caches(*paths, global_cache=False)  # type: ignore[attr-defined]
    else:
        for p in paths:
            p.read_bytes()
    dev = bench.device  # type: ignore[attr-defined]
    with timing_lock(lock):
        bench.reset_throttle()  # type: ignore[attr-defined]
        time.sleep(0.3)  # a fresh throttle slice, and nothing queued from before
        n0, b0 = block_stat(dev)
        t0 = time.perf_counter()
        bench.run([sys.executable, "-c", script, *args, *map(str, paths)],  # type: ignore[attr-defined]
                  check=True, capture_output=True)
        wall = time.perf_counter() - t0
        n1, b1 = block_stat(dev)
    return wall, n1 - n0, b1 - b0


def copied(bench: object, layouts: dict[str, list[Path]], names: Sequence[str]
           ) -> dict[str, list[Path]]:
    out = {}
    mount = bench.mount_point  # type: ignore[attr-defined]
    for name in names:
        (mount / name).mkdir(exist_ok=True)
        out[name] = [Path(shutil.copy(p, mount / name / p.name)) for p in layouts[name]]
    os.sync()
    return out


def counts(layouts: dict[str, list[Path]], names: Sequence[str], readers: Sequence[str],
           ra: int) -> None:
    from testbench import emulated_disks

    size = int(sum(p.stat().st_size for n in names for p in layouts[n]) / 1e6 * 1.5) + 64
    with emulated_disks(read_mb_per_s=None, read_iops=None, read_ahead_kb=ra,
                        size_mb=max(size, 64)) as bench:
        assert queue_value(bench.device, "read_ahead_kb") == ra, "read-ahead not applied"
        max_io = queue_value(bench.device, "max_sectors_kb")
        files = copied(bench, layouts, names)
        print(f"\nread_ahead_kb {ra}, max_sectors_kb {max_io}: device reads counted "
              "(/sys/block) and replayed (order-0 pages; large folios, the model "
              "hep_advisor.models.replay.folios.large_folios chooses for ext4 from Linux 6.16)")
        print("| layout | reader | counted reads | replayed | ratio | large folios | ratio | "
              "counted MB | replayed MB |")
        print("|---|---|---|---|---|---|---|---|---|")
        for name in names:
            maps = [read_basket_map(str(p), brt.TREE) for p in files[name]]
            for p in files[name]:
                import uproot

                with uproot.open(p) as f:
                    brt.AUTOFLUSH[str(p)] = int(f[brt.TREE].member("fAutoFlush"))
            sizes = {m.path: m.file_bytes for m in maps}
            for reader in readers:
                _, n, b = run_reader(bench, reader, files[name], cold=True)
                reqs = brt.replay(reader, maps)
                reopen = reader.startswith("uproot")
                pages = LocalDevice(1000, 1e-4, ra, max_io_kb=max_io).replay(
                    reqs, sizes, reopen=reopen)
                folios = LocalDevice(1000, 1e-4, ra, large_folios=True, max_io_kb=max_io).replay(
                    reqs, sizes, reopen=reopen)
                print(f"| {name} | {reader} | {n} | {pages.device_requests} | "
                      f"{pages.device_requests / max(n, 1):.2f} | {folios.device_requests} | "
                      f"{folios.device_requests / max(n, 1):.2f} | {b / 1e6:.2f} | "
                      f"{pages.device_bytes / 1e6:.2f} |", flush=True)


def times(layouts: dict[str, list[Path]], names: Sequence[str], readers: Sequence[str],
          mb_per_s: float, iops: int, repeat: int, lock: str | None) -> None:
    from testbench import emulated_disks

    size = int(sum(p.stat().st_size for n in names for p in layouts[n]) / 1e6 * 1.5) + 64
    with emulated_disks(read_mb_per_s=mb_per_s, read_iops=iops,
                        size_mb=max(size, 64)) as bench:
        ra = queue_value(bench.device, "read_ahead_kb")
        max_io = queue_value(bench.device, "max_sectors_kb")
        files = copied(bench, layouts, names)
        dev = LocalDevice.from_rates(mb_per_s, iops, ra, limit="max", max_io_kb=max_io)
        folios = LocalDevice.from_rates(mb_per_s, iops, ra, limit="max", max_io_kb=max_io,
                                        large_folios=True)
        disk = LocalDevice.from_rates(mb_per_s, iops, ra, max_io_kb=max_io)
        print(f"\nthrottled {mb_per_s:g} MB/s, {iops} IOPS, read_ahead_kb {ra}, max_sectors_kb "
              f"{max_io}: cold - warm wall time (median of {repeat}, [min-max] of cold) against "
              "the device model's time")
        print("| layout | reader | cold s | warm s | I/O s (cold - warm) | model s (max) | "
              "ratio | max, large folios | additive | counted reads | replayed |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        cases = []  # the replays first, outside the lock
        for name in names:
            maps = [read_basket_map(str(p), brt.TREE) for p in files[name]]
            for p in files[name]:
                import uproot

                with uproot.open(p) as f:
                    brt.AUTOFLUSH[str(p)] = int(f[brt.TREE].member("fAutoFlush"))
            sizes = {m.path: m.file_bytes for m in maps}
            for reader in readers:
                reqs = brt.replay(reader, maps)
                reopen = reader.startswith("uproot")
                model = dev.replay(reqs, sizes, reopen=reopen)
                cases.append((name, reader, model,
                              folios.replay(reqs, sizes, reopen=reopen).time_s,
                              disk.replay(reqs, sizes, reopen=reopen).time_s))
        measured = []
        with timing_lock(lock):  # every timed run at once (a few minutes), not one waiter per run
            for name, reader, *_ in cases:
                cold, warm, reads = [], [], []
                for _ in range(repeat):
                    t, n, _ = run_reader(bench, reader, files[name], cold=True)
                    cold.append(t)
                    reads.append(n)
                    warm.append(run_reader(bench, reader, files[name], cold=False)[0])
                measured.append((cold, warm, reads))
        for (name, reader, model, folios_s, additive_s), (cold, warm, reads) in zip(
                cases, measured, strict=True):
            io = statistics.median(cold) - statistics.median(warm)
            print(f"| {name} | {reader} | {statistics.median(cold):.2f} [{min(cold):.2f}-"
                  f"{max(cold):.2f}] | {statistics.median(warm):.2f} | {io:.2f} | "
                  f"{model.time_s:.2f} | {model.time_s / io if io > 0 else float('nan'):.2f}"
                  f" | {folios_s:.2f} | {additive_s:.2f} | "
                  f"{statistics.median(reads):.0f} | {model.device_requests} |", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", type=Path, required=True, help="where the layouts are kept")
    ap.add_argument("--layouts", nargs="*", default=None)
    ap.add_argument("--readers", nargs="*", default=DEFAULT_READERS)
    ap.add_argument("--ra", nargs="*", type=int, default=[])
    ap.add_argument("--times", action="store_true")
    ap.add_argument("--heldout", action="store_true",
                    help="add bench_trace.py's held-out file (1,700 baskets, 19.5 MB)")
    ap.add_argument("--mb-per-s", type=float, default=70.0)
    ap.add_argument("--iops", type=int, default=120)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--lock", default="/tmp/hep-bench.lock",
                    help="the shared timing lock ('' for none)")
    opts = ap.parse_args()
    # a SIGTERM ends the run through the emulated disk's clean-up, as Ctrl-C does
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    from testbench import availability

    ok, why = availability()
    if not ok:
        print(f"no emulated disk here: {why}", file=sys.stderr)
        return 1
    opts.workdir.mkdir(parents=True, exist_ok=True)
    layouts = brt.make_layouts(opts.workdir.resolve(), reuse=True)
    if opts.heldout:  # bench_trace.py's held-out file: 200 branches, 16 kB baskets, AutoFlush 0
        from benchmarks.validation import bench_trace

        layouts["heldout"] = bench_trace.write_data(opts.workdir.resolve() / "trace")["heldout"]
    names = opts.layouts or list(layouts)
    for ra in opts.ra:
        counts(layouts, names, opts.readers, ra)
    if opts.times:
        times(layouts, names, opts.readers, opts.mb_per_s, opts.iops, opts.repeat,
              opts.lock or None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
