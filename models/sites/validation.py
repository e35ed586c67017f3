"""Site and workload descriptions in TOML: reading and strict validation.

Every error is a :class:`SpecError` of one line naming the file and the key
(``FILE: TABLE.KEY: what is wrong``), with the closest known key suggested for a misspelt one.
The format is described in the package's notes (``hep_advisor.models.sites``).
"""

from __future__ import annotations

import difflib
import math
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .spec import (
    ACCESS,
    ALGORITHMS,
    DEFAULT_LATENCY_MS,
    DEFAULT_PAGE_CACHE_MB_PER_S,
    DEFAULT_READ_AHEAD_KB,
    DEFAULT_STRIPE_KB,
    LAYOUTS,
    LIMITS,
    MIN_COUNT,
    SiteSpec,
    StorageSpec,
    WorkloadSpec,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib


class SpecError(ValueError):
    """A site or workload description that cannot be used; the message is one line:
    ``FILE: KEY: what is wrong``."""


def load_site(path: str | Path) -> SiteSpec:
    """Read a site description (a ``[site]`` table; a ``[workload]`` beside it is ignored)."""
    data = _read(path)
    source = str(path)
    _only(source, data, {"site", "workload"})
    return site_from_dict(_table(source, "site", data.get("site"), required=True), source)


def load_workload(path: str | Path) -> WorkloadSpec:
    """Read a workload description (a ``[workload]`` table; a ``[site]`` beside it is ignored)."""
    data = _read(path)
    source = str(path)
    _only(source, data, {"site", "workload"})
    stem = Path(path).stem
    return workload_from_dict(_table(source, "workload", data.get("workload"), required=True),
                              source, default_name=stem)


def site_from_dict(data: Mapping[str, Any], source: str = "<site>") -> SiteSpec:
    t = _Table(source, "site", data)
    t.known("name", "cores", "threads_per_core", "ht_weight", "memory_gb", "network_gbps",
            "network_latency_ms", "page_cache_mb_per_s", "storage")
    name = t.text("name")
    cores = t.whole("cores", minimum=1)
    threads = t.whole("threads_per_core", minimum=1, default=1)
    ht = t.number("ht_weight", default=0.3, minimum=0.0, maximum=1.0)
    memory = t.number("memory_gb", positive=True)
    gbps = t.number("network_gbps", positive=True, default=None)
    latency = t.number("network_latency_ms", minimum=0.0, default=DEFAULT_LATENCY_MS)
    cache = t.number("page_cache_mb_per_s", positive=True, default=DEFAULT_PAGE_CACHE_MB_PER_S)
    raw = t.get("storage")
    if raw is None:
        t.fail("storage", "missing: at least one [[site.storage]] table is required")
    if not isinstance(raw, list) or not raw or not all(isinstance(x, dict) for x in raw):
        t.fail("storage", "must be one or more [[site.storage]] tables")
    storage = tuple(_storage(source, f"site.storage[{i}]", x) for i, x in enumerate(raw))
    for i, s in enumerate(storage):
        if s.remote and gbps is None:
            t.fail(f"storage[{i}].remote", "remote storage needs site.network_gbps")
    return SiteSpec(name=name, cores=cores, memory_gb=memory, storage=storage,
                    threads_per_core=threads, ht_weight=ht, network_gbps=gbps,
                    network_latency_ms=latency, page_cache_mb_per_s=cache)


def _storage(source: str, where: str, data: Mapping[str, Any]) -> StorageSpec:
    t = _Table(source, where, data)
    t.known("name", "count", "layout", "mb_per_s", "iops", "read_ahead_kb", "stripe_kb",
            "remote", "limit", "batch_kb")
    name = t.text("name")
    count = t.whole("count", minimum=1)
    layout = t.choice("layout", LAYOUTS)
    if layout == "single" and count != 1:
        t.fail("count", f"layout single means one device; count must be 1, got {count}")
    if count < MIN_COUNT[layout]:
        t.fail("count", f"{layout} needs at least {MIN_COUNT[layout]} devices, got {count}")
    mb = t.number("mb_per_s", positive=True)
    iops = t.number("iops", positive=True)
    ra = t.number("read_ahead_kb", positive=True, default=DEFAULT_READ_AHEAD_KB)
    stripe = t.number("stripe_kb", positive=True, default=DEFAULT_STRIPE_KB)
    remote = t.flag("remote", default=False)
    limit = t.choice("limit", LIMITS, default="additive")
    batch = t.number("batch_kb", positive=True, default=None)
    return StorageSpec(name=name, count=count, layout=layout,
                       mb_per_s=mb, iops=iops, read_ahead_kb=ra, stripe_kb=stripe,
                       remote=remote, limit=limit, batch_kb=batch)


def workload_from_dict(data: Mapping[str, Any], source: str = "<workload>",
                       default_name: str = "workload") -> WorkloadSpec:
    t = _Table(source, "workload", data)
    t.known("name", "files", "file_mb", "events_per_file", "compression_factor", "algorithm",
            "branches", "decompress_mb_per_s", "process_mb_per_s", "open_s", "mean_basket_kb",
            "access", "request_kb", "read_fraction")
    name = t.text("name", default=default_name)
    files = t.whole("files", minimum=1)
    file_mb = t.number("file_mb", positive=True)
    events = t.number("events_per_file", positive=True)
    factor = t.number("compression_factor", positive=True)
    algorithm = t.choice("algorithm", ALGORITHMS)
    branches = t.whole("branches", minimum=1)
    decompress = t.number("decompress_mb_per_s", positive=True)
    process = t.number("process_mb_per_s", positive=True)
    open_s = t.number("open_s", minimum=0.0)
    basket = t.number("mean_basket_kb", positive=True)
    access = t.choice("access", ACCESS, default=None)
    request = t.number("request_kb", positive=True, default=None)
    fraction = t.number("read_fraction", positive=True, maximum=1.0, default=1.0)
    if algorithm == "none" and factor != 1.0:
        t.fail("compression_factor", f"must be 1 for uncompressed data, got {factor:g}")
    return WorkloadSpec(name=name, files=files, file_mb=file_mb, events_per_file=events,
                        compression_factor=factor, algorithm=algorithm,
                        branches=branches, decompress_mb_per_s=decompress,
                        process_mb_per_s=process, open_s=open_s, mean_basket_kb=basket,
                        access=access, request_kb=request,
                        read_fraction=fraction)


def _read(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    try:
        with p.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise SpecError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise SpecError(f"{path}: is a directory, not a TOML file") from None
    except PermissionError:
        raise SpecError(f"{path}: permission denied") from None
    except UnicodeDecodeError:
        raise SpecError(f"{path}: not a text file (TOML must be UTF-8)") from None
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"{path}: invalid TOML: {' '.join(str(e).split())}") from None


def _only(source: str, data: Mapping[str, Any], allowed: set[str]) -> None:
    for key in data:
        if key not in allowed:
            raise SpecError(f"{source}: {key}: unknown table or key; expected "
                            f"{' or '.join(f'[{a}]' for a in sorted(allowed))}")


def _table(source: str, name: str, value: Any, required: bool) -> Mapping[str, Any]:
    if value is None and required:
        raise SpecError(f"{source}: {name}: missing table [{name}]")
    if not isinstance(value, dict):
        raise SpecError(f"{source}: {name}: must be a table [{name}]")
    return value


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, str):
        return f"string {value!r}"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "table"
    return f"{type(value).__name__} {value!r}"


_MISSING = object()


class _Table:
    """Typed, strict access to one TOML table; every failure is one ``SpecError`` line."""

    def __init__(self, source: str, where: str, data: Mapping[str, Any]) -> None:
        self.source = source
        self.where = where
        self.data = data

    def fail(self, key: str, problem: str) -> Any:
        raise SpecError(f"{self.source}: {self.where}.{key}: {problem}")

    def known(self, *keys: str) -> None:
        for key in self.data:
            if key not in keys:
                close = difflib.get_close_matches(key, keys, n=1)
                hint = f" (did you mean {close[0]}?)" if close else ""
                self.fail(key, f"unknown key{hint}; expected one of {', '.join(keys)}")

    def get(self, key: str) -> Any:
        return self.data.get(key)

    def _value(self, key: str, default: Any) -> Any:
        if key in self.data:
            return self.data[key]
        if default is _MISSING:
            self.fail(key, "missing (required)")
        return default

    def text(self, key: str, default: Any = _MISSING) -> str:
        v = self._value(key, default)
        if not isinstance(v, str) or not v.strip():
            self.fail(key, f"must be a non-empty string, not {_kind(v)}")
        return str(v)

    def whole(self, key: str, minimum: int, default: Any = _MISSING) -> int:
        v = self._value(key, default)
        if isinstance(v, bool) or not isinstance(v, int):
            if isinstance(v, float) and v.is_integer():
                v = int(v)
            else:
                self.fail(key, f"must be a whole number, not {_kind(v)}")
        if v < minimum:
            self.fail(key, f"must be at least {minimum}, got {v}")
        return int(v)

    def number(self, key: str, positive: bool = False, minimum: float | None = None,
               maximum: float | None = None, default: Any = _MISSING) -> Any:
        v = self._value(key, default)
        if v is None and default is None:
            return None
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            self.fail(key, f"must be a number, not {_kind(v)}")
        v = float(v)
        if not math.isfinite(v):
            self.fail(key, f"must be a finite number, got {v}")
        if positive and v <= 0:
            self.fail(key, f"must be positive, got {v:g}")
        if minimum is not None and v < minimum:
            self.fail(key, f"must be at least {minimum:g}, got {v:g}")
        if maximum is not None and v > maximum:
            self.fail(key, f"must be at most {maximum:g}, got {v:g}")
        return v

    def choice(self, key: str, options: tuple[str, ...], default: Any = _MISSING) -> Any:
        v = self._value(key, default)
        if v is None and default is None:
            return None
        if v not in options:
            self.fail(key, f"must be one of {', '.join(options)}; got {_kind(v)}")
        return v

    def flag(self, key: str, default: bool) -> bool:
        v = self._value(key, default)
        if not isinstance(v, bool):
            self.fail(key, f"must be true or false, not {_kind(v)}")
        return bool(v)
