"""A Dask ``LocalCluster`` whose worker processes read throttled emulated disks (development only).

Each worker process stands for a node.  Its process joins the bench's blkio cgroup (:mod:`.cgroup`)
as soon as the cluster is up, so that everything it reads from an emulated disk is throttled:

* ``separate``: one emulated disk per worker, each worker's files on its own disk (the limits
  are per device, so every worker gets the whole rate: nodes with local disks);
* ``shared``: one emulated disk holding every worker's files (the workers share its rate: nodes
  reading one storage server).

Usage::

    with emulated_cluster(4, "shared", read_mb_per_s=60) as ec:
        profile = probe_cluster(ec.client, ec.files, group_by="worker",
                                before_read=ec.bench.reset_throttle)

Needs what :func:`testbench.availability` needs (Linux, root, cgroup v1 blkio, loop devices)
and ``distributed``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from . import cgroup as cg
from .bench import EmulatedDisks, emulated_disks
from .common import MB, EmulatedDiskError
from .readers import write_random_file

Mode = Literal["separate", "shared"]


@dataclass
class EmulatedCluster:
    """A running emulated cluster: the bench (its disks and cgroup), the ``LocalCluster`` and
    its ``Client``, the worker addresses in order, and ``files``: worker address -> the files
    it reads (its own disk's, or its share of the shared disk's)."""

    mode: Mode
    bench: EmulatedDisks
    cluster: Any
    client: Any
    workers: list[str]
    files: dict[str, list[str]]
    read_mb_per_s: float
    #: each worker's set rate alone (its own disk's, or the shared disk's)
    worker_mb_per_s: list[float]

    @property
    def all_files(self) -> list[str]:
        return sorted({p for ps in self.files.values() for p in ps})

    def worker_pids(self) -> dict[str, int]:
        return dict(self.client.run(os.getpid))

    def throttled(self) -> bool:
        """Whether every worker process is in the bench's cgroup."""
        inside = set(cg.pids(self.bench._cgroup()))
        return all(pid in inside for pid in self.worker_pids().values())


@contextlib.contextmanager
def emulated_cluster(
    workers: int = 2,
    mode: Mode = "separate",
    read_mb_per_s: float | Sequence[float] = 50.0,
    *,
    read_iops: int | None = None,
    file_mb: int = 24,
    files_per_worker: int = 4,
    threads_per_worker: int = 1,
) -> Iterator[EmulatedCluster]:
    """``with emulated_cluster(...) as ec:`` a LocalCluster of ``workers`` processes reading
    emulated disks limited to ``read_mb_per_s`` (and ``read_iops``; ``None``: unlimited) each,
    ``separate`` (one disk per worker) or ``shared`` (one disk for all).  In ``separate`` mode
    ``read_mb_per_s`` may give each worker's disk its own rate (heterogeneous nodes, in worker
    order; ``EmulatedCluster.read_mb_per_s`` is then the first).  Each worker gets
    ``files_per_worker`` files of ``file_mb`` MB of random bytes.  The cluster is closed before
    the disks are removed."""
    if mode not in ("separate", "shared"):
        raise ValueError("mode must be 'separate' or 'shared'")
    if workers < 1:
        raise ValueError("workers must be >= 1")
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise EmulatedDiskError("distributed is not installed (the `dask` extra)") from exc
    n_disks = workers if mode == "separate" else 1
    rates = ([float(read_mb_per_s)] * n_disks if isinstance(read_mb_per_s, (int, float))
             else [float(r) for r in read_mb_per_s])
    if len(rates) != n_disks:
        raise ValueError(f"{len(rates)} rates for {n_disks} disk(s)")
    per_disk = file_mb * files_per_worker * (1 if mode == "separate" else workers)
    size_mb = max(64, int(per_disk * 1.15) + 48)
    with emulated_disks(n_disks, size_mb=size_mb, read_mb_per_s=None, read_iops=None) as bench:
        paths: list[list[str]] = []
        for w in range(workers):
            disk = bench.mount_points[w if mode == "separate" else 0]
            paths.append([str(write_random_file(disk / f"w{w}-f{k}.bin", file_mb * MB))
                          for k in range(files_per_worker)])
        bench.drop_caches(global_cache=False)
        with LocalCluster(n_workers=workers, threads_per_worker=threads_per_worker,
                          processes=True, dashboard_address=":0") as cluster, \
                Client(cluster) as client:
            client.wait_for_workers(workers, timeout=60)
            addresses = sorted(client.scheduler_info(n_workers=-1)["workers"],
                               key=_worker_order(client))
            client.run(cg.join, str(bench._cgroup() / "cgroup.procs"))
            for i, rate in enumerate(rates):
                bench.set_limits(rate, read_iops, disks=[i])
            ec = EmulatedCluster(mode, bench, cluster, client, addresses,
                                 dict(zip(addresses, paths, strict=True)), rates[0],
                                 rates[:workers] if mode == "separate" else rates * workers)
            if not ec.throttled():
                raise EmulatedDiskError("the worker processes did not join the throttling cgroup")
            yield ec


def _worker_order(client: Any) -> Any:
    info = client.scheduler_info(n_workers=-1)["workers"]

    def key(address: str) -> tuple[int, str]:
        name = str(info[address].get("name", address))
        return (int(name), address) if name.isdigit() else (1 << 30, address)

    return key
