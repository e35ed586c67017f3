"""``python -m testbench``: check, run a command on emulated disks, or clean up.

    python -m testbench --check
    python -m testbench --run --mb-per-s 70 --iops 120 --copy DATA -- \\
        sh -c 'hep-advisor calibrate "$HEP_ADVISOR_EMULATED_MOUNT"'
    python -m testbench --cleanup     # leftovers of crashed runs
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from . import remote
from .bench import (
    DEFAULT_READ_AHEAD_KB,
    DEFAULT_SIZE_MB,
    availability,
    cleanup_stale,
    emulated_disks,
)
from .common import MB


def _tree_bytes(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(
        (Path(root) / f).stat().st_size for root, _d, files in os.walk(path) for f in files
    )


def _copy_onto(src: Path, dest: Path) -> None:
    if src.is_dir():
        shutil.copytree(src, dest, dirs_exist_ok=True, symlinks=True)
    else:
        shutil.copy2(src, dest / src.name)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m testbench",
        description="Emulated slow disks (loop device + ext4 + cgroup v1 blkio throttling).",
        epilog="With --run, CMD sees the first disk's mount point in $HEP_ADVISOR_EMULATED_MOUNT "
        "(all of them in $HEP_ADVISOR_EMULATED_MOUNTS), and '{mount}' in its arguments is "
        "replaced by it.",
    )
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--check", action="store_true", help="say whether it can run here")
    action.add_argument("--run", action="store_true", help="set up, run CMD inside, clean up")
    action.add_argument("--cleanup", action="store_true",
                        help="remove leftovers of crashed runs (disks, and remote servers, "
                        "namespaces, proxies)")
    parser.add_argument("--mb-per-s", type=float, default=70.0,
                        help="read limit, MB/s (10^6 B); 0: none (default 70)")
    parser.add_argument("--iops", type=int, default=120,
                        help="read requests/s limit; 0: none (default 120)")
    parser.add_argument("--disks", type=int, default=1, help="number of disks (default 1)")
    parser.add_argument("--size-mb", type=int, default=None,
                        help=f"size of each disk (default {DEFAULT_SIZE_MB}, or enough for --copy)")
    parser.add_argument("--read-ahead-kb", type=int, default=DEFAULT_READ_AHEAD_KB,
                        help=f"loop device read-ahead (default {DEFAULT_READ_AHEAD_KB})")
    parser.add_argument("--no-direct-io", action="store_true",
                        help="loop devices read their backing files through the page cache")
    parser.add_argument("--copy", type=Path, action="append", default=[], metavar="SRC",
                        help="copy a directory's contents (or a file) onto every disk first, "
                        "then drop the page cache; repeatable")
    parser.add_argument("--no-global-drop", action="store_true",
                        help="after --copy, evict only the copied files (posix_fadvise), not the "
                        "whole page cache (metadata such as inodes then stays cached)")
    parser.add_argument("--force", action="store_true",
                        help="with --cleanup: also benches of running processes")
    parser.add_argument("cmd", nargs=argparse.REMAINDER, help="-- CMD [ARGS...]")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd

    if args.check:
        ok, reason = availability()
        print(reason if ok else f"unavailable: {reason}")
        remote_ok, remote_reason = remote.availability()
        print(f"remote bench (XRootD, XCache, emulated link): "
              f"{remote_reason if remote_ok else 'unavailable: ' + remote_reason}")
        return 0 if ok else 1
    if args.cleanup:
        for line in cleanup_stale(force=args.force) + remote.cleanup_stale(force=args.force):
            print(f"removed {line}")
        return 0
    if not cmd:
        parser.error("--run needs a command after --")
    for src in args.copy:
        if not src.exists():
            parser.error(f"--copy: {src} does not exist")
    size_mb = args.size_mb
    if size_mb is None:
        data = sum(_tree_bytes(s) for s in args.copy)
        size_mb = max(DEFAULT_SIZE_MB, int(data * 1.15 / MB) + 128)

    def on_term(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_term)
    cleanup_stale()
    with emulated_disks(
        n=args.disks,
        size_mb=size_mb,
        read_mb_per_s=args.mb_per_s or None,
        read_iops=args.iops or None,
        read_ahead_kb=args.read_ahead_kb,
        direct_io=not args.no_direct_io,
    ) as bench:
        for disk in bench.disks:
            for src in args.copy:
                _copy_onto(src, disk.mount_point)
        if args.copy:
            bench.drop_caches(global_cache=not args.no_global_drop)
        print(f"emulated disks: {bench}", file=sys.stderr, flush=True)
        argv_cmd = [a.replace("{mount}", str(bench.mount_point)) for a in cmd]
        try:
            rc = bench.run(argv_cmd).returncode
        except KeyboardInterrupt:
            rc = 130
        except OSError as exc:
            print(f"cannot run {argv_cmd[0]}: {exc}", file=sys.stderr)
            rc = 127
    return rc if rc >= 0 else 128 - rc
