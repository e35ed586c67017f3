"""The site: cores, memory, load, OS, and the storage under each data path."""

from __future__ import annotations

import os
import platform
import socket
from collections.abc import Iterable

import psutil

from .files import is_remote
from .results import CpuInfo, MemoryInfo, SiteProfile, StorageInfo
from .storage import probe_storage


def _cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def probe_cpu() -> CpuInfo:
    try:
        load: float | None = os.getloadavg()[0]
    except (OSError, AttributeError):
        load = None
    return CpuInfo(
        physical_cores=psutil.cpu_count(logical=False),
        logical_cores=psutil.cpu_count(logical=True),
        load_avg_1m=load,
        model=_cpu_model(),
    )


def probe_memory() -> MemoryInfo:
    vm = psutil.virtual_memory()
    return MemoryInfo(total_bytes=int(vm.total), available_bytes=int(vm.available))


def storage_paths(inputs: Iterable[str], files: Iterable[str] = ()) -> list[str]:
    """The data paths whose storage the site probe describes: the inputs that exist, and the
    directories of ``files`` found through globs (or, without them, of the globs' first
    matches)."""
    import glob

    inputs = [os.path.expanduser(p) for p in inputs]
    out = [os.path.abspath(p) for p in inputs if os.path.exists(p)]
    found = list(files) or [m for p in inputs if not os.path.exists(p)
                            for m in glob.glob(p, recursive=True)[:1]]
    remote = sorted({f.rsplit("/", 1)[0] + "/" for f in found if is_remote(f)})  # URLs as given
    found = [f for f in found if not is_remote(f)]
    out += sorted({os.path.dirname(os.path.abspath(f)) for f in found
                   if not any(os.path.abspath(f).startswith(o) for o in out)})
    return out + remote


def probe_site(data_paths: Iterable[str] = ()) -> SiteProfile:
    """Probe this machine, and the storage under each of ``data_paths`` (deduplicated by mount)."""
    storage: list[StorageInfo] = []
    seen: set[tuple[str | None, str | None]] = set()
    for path in data_paths:
        info = probe_storage(str(path))
        key = (info.mount_point, info.device) if info.mount_point else (info.path, None)
        if key not in seen:
            seen.add(key)
            storage.append(info)
    return SiteProfile(
        hostname=socket.gethostname(),
        os=f"{platform.system()} {platform.release()}",
        cpu=probe_cpu(),
        memory=probe_memory(),
        storage=tuple(storage),
    )
