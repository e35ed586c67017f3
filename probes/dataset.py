"""Profile a ROOT dataset from metadata: trees, branches, bytes, baskets, clusters, compression.

Every file is stat'ed.  Up to ``sample`` files, spread evenly over the sorted list, are opened;
with more files than that, totals are extrapolated by bytes (all files' bytes / opened files'
bytes), and the sampling is stated in the result.  Bad files never stop the probe: each becomes
one ``ProbeError`` and the others are still read.

TTrees and RNTuples are both profiled (``TreeProfile.format``); a file holding both adds to
both.  The first ``TIMED_OPENS`` files are read with uproot's full reader, which times the open
and names the branch types; the others with the fast reader of :mod:`hep_advisor.probes.ttreemeta`,
which reads only the members the probe needs (the same figures, about ten times faster).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .files import discover, os_error_cause
from .results import (
    Algorithm,
    AlgorithmSource,
    BasketStats,
    BranchProfile,
    ClusterSource,
    ClusterStats,
    Compression,
    CompressionShare,
    DatasetProfile,
    ProbeError,
    RNTupleLayout,
    Sampling,
    SizeStats,
    TimingStats,
    TreeFormat,
    TreeProfile,
)
from .rootfile import FileMeta, FileProblem, TreeMeta, inspect_file, one_line, setting_algorithm

DEFAULT_SAMPLE = 200
#: The first this many files opened are read with uproot's full reader, which times the open
#: (``open_s``) and names the branch types; the others with the fast metadata reader.
TIMED_OPENS = 5
#: At most this many distinct notes are kept per tree.
MAX_NOTES = 8

AlgKey = tuple[Algorithm | None, AlgorithmSource, int | None]

#: Called after each opened file with (files done, files to open, path).
FileProgress = Callable[[int, int, str], None]


def sample_indices(n: int, k: int | None) -> list[int]:
    """``k`` indices spread evenly over ``range(n)`` (all of them when ``k`` is None or >= n)."""
    if k is None or k <= 0 or k >= n:
        return list(range(n))
    return sorted({round(x) for x in np.linspace(0, n - 1, k)})


def timing_stats(samples: Sequence[float], keep: int = 200) -> TimingStats | None:
    if not samples:
        return None
    a = np.asarray(samples, dtype=float)
    return TimingStats(
        count=len(a),
        median_s=float(np.median(a)),
        p90_s=float(np.percentile(a, 90)),
        min_s=float(a.min()),
        max_s=float(a.max()),
        samples_s=tuple(float(x) for x in a[:keep]),
    )


def probe_dataset(
    paths: Iterable[str],
    sample: int | None = DEFAULT_SAMPLE,
    progress: FileProgress | None = None,
) -> DatasetProfile:
    """Probe the ROOT files behind ``paths`` (files, directories, globs)."""
    t0 = time.perf_counter()
    inputs = tuple(str(p) for p in paths)
    found = discover(inputs)
    errors = list(found.errors)
    files = found.files
    chosen = [files[i] for i in sample_indices(len(files), sample)]

    # each file's metadata is folded into per-tree accumulators at once and dropped, so memory
    # stays flat however many files are opened
    accs: dict[tuple[str, TreeFormat], _TreeAcc] = {}
    open_times: list[float] = []
    n_usable = 0
    usable_bytes = 0
    failed_bytes = 0
    for i, f in enumerate(chosen):
        try:
            meta = inspect_file(f.path, f.size_bytes, fast=len(open_times) >= TIMED_OPENS)
            for t in meta.trees:
                accs.setdefault((t.name, t.format), _TreeAcc()).add(t, meta)
            if meta.open_s is not None:
                open_times.append(meta.open_s)
            n_usable += 1
            usable_bytes += meta.size_bytes
        except FileProblem as exc:
            errors.append(ProbeError(path=f.path, error=str(exc)))
            failed_bytes += f.size_bytes
        except OSError as exc:
            errors.append(ProbeError(path=f.path, error=os_error_cause(exc)))
            failed_bytes += f.size_bytes
        except Exception as exc:  # any reader failure is one line, never a traceback
            errors.append(ProbeError(path=f.path, error=f"cannot read: {one_line(exc)}"))
            failed_bytes += f.size_bytes
        if progress is not None:
            progress(i + 1, len(chosen), f.path)

    total_bytes = sum(f.size_bytes for f in files)
    bad = {e.path for e in errors}
    sampled = len(chosen) < len(files)
    n_failed = len(chosen) - n_usable
    if sampled and n_usable:
        byte_scale = max(total_bytes - failed_bytes, 0) / usable_bytes if usable_bytes else 1.0
        count_scale = (len(files) - n_failed) / n_usable
    else:
        byte_scale = count_scale = 1.0

    trees = _profiles(accs, byte_scale, count_scale)
    return DatasetProfile(
        files=len(files),
        total_bytes=total_bytes,
        errors=tuple(errors),
        trees=tuple(trees),
        sampling=Sampling(
            method="sampled" if sampled else "all",
            stated_files=len(files),
            opened_files=len(chosen),
            scale_factor=byte_scale,
        ),
        inputs=inputs,
        open_s=timing_stats(open_times),
        probe_s=time.perf_counter() - t0,
        usable_files=n_usable,
        file_paths=tuple(f.path for f in files if f.path not in bad),
    )


@dataclass
class _BranchAcc:
    typename: str
    compressed: int = 0
    uncompressed: int = 0
    baskets: int = 0
    basket_bytes: int = 0
    fields: int | None = None
    columns: int | None = None


@dataclass
class _TreeAcc:
    files: int = 0
    entries: int = 0
    compressed: int = 0
    uncompressed: int = 0
    branches: dict[str, _BranchAcc] = field(default_factory=dict)
    n_branches: list[int] = field(default_factory=list)
    clusters: dict[int, int] = field(default_factory=dict)
    cluster_sources: dict[ClusterSource, int] = field(default_factory=dict)
    algorithms: dict[AlgKey, int] = field(default_factory=dict)
    file_sizes: list[int] = field(default_factory=list)
    open_s: list[float] = field(default_factory=list)
    autoflush: dict[int | None, int] = field(default_factory=dict)
    notes: dict[str, None] = field(default_factory=dict)
    rntuple: _RNTupleAcc | None = None

    def add(self, t: TreeMeta, m: FileMeta) -> None:
        self.files += 1
        self.autoflush[t.autoflush] = self.autoflush.get(t.autoflush, 0) + 1
        for note in t.notes:
            if len(self.notes) < MAX_NOTES:
                self.notes.setdefault(note)
        if t.rntuple is not None:
            if self.rntuple is None:
                self.rntuple = _RNTupleAcc()
            self.rntuple.add(t)
        self.entries += t.entries
        self.compressed += t.compressed_bytes
        self.uncompressed += t.uncompressed_bytes
        self.n_branches.append(len(t.branches))
        for b in t.branches:
            acc = self.branches.setdefault(b.name, _BranchAcc(typename=b.typename))
            acc.compressed += b.compressed_bytes
            acc.uncompressed += b.uncompressed_bytes
            acc.baskets += b.baskets
            acc.basket_bytes += b.basket_bytes
            if b.fields is not None:
                acc.fields = max(acc.fields or 0, b.fields)
            if b.columns is not None:
                acc.columns = max(acc.columns or 0, b.columns)
        for size, count in t.cluster_sizes:
            self.clusters[size] = self.clusters.get(size, 0) + count
        self.cluster_sources[t.cluster_source] = self.cluster_sources.get(t.cluster_source, 0) + 1
        key = (t.algorithm, t.algorithm_source, t.setting)
        self.algorithms[key] = self.algorithms.get(key, 0) + t.compressed_bytes
        self.file_sizes.append(m.size_bytes)
        if m.open_s is not None:
            self.open_s.append(m.open_s)


@dataclass
class _RNTupleAcc:
    fields: int = 0
    columns: int = 0
    pages: int = 0
    page_bytes: int = 0
    page_max: int = 0
    page_uncompressed: int = 0
    clusters: int = 0
    cluster_groups: int = 0
    versions: dict[str, None] = field(default_factory=dict)
    writers: dict[str, None] = field(default_factory=dict)

    def add(self, t: TreeMeta) -> None:
        r = t.rntuple
        assert r is not None
        self.fields = max(self.fields, r.fields)
        self.columns = max(self.columns, r.columns)
        self.pages += r.pages
        self.page_bytes += t.compressed_bytes
        self.page_max = max(self.page_max, r.page_compressed_max_bytes)
        self.page_uncompressed += r.page_uncompressed_bytes
        self.clusters += r.clusters
        self.cluster_groups += r.cluster_groups
        self.versions.setdefault(r.version)
        self.writers.setdefault(r.writer)

    def layout(self, scale: float) -> RNTupleLayout:
        return RNTupleLayout(
            fields=self.fields,
            columns=self.columns,
            pages=round(self.pages * scale),
            mean_page_compressed_bytes=self.page_bytes / self.pages if self.pages else None,
            max_page_compressed_bytes=self.page_max,
            mean_page_uncompressed_bytes=(
                self.page_uncompressed / self.pages if self.pages else None),
            clusters=round(self.clusters * scale),
            cluster_groups=round(self.cluster_groups * scale),
            clusters_per_group=(
                self.clusters / self.cluster_groups if self.cluster_groups else None),
            mean_cluster_compressed_bytes=(
                self.page_bytes / self.clusters if self.clusters else None),
            versions=tuple(sorted(self.versions)),
            writers=tuple(self.writers),
        )


def _factor(compressed: int, uncompressed: int) -> float | None:
    return uncompressed / compressed if compressed > 0 else None


def _profiles(
    accs: dict[tuple[str, TreeFormat], _TreeAcc], byte_scale: float, count_scale: float
) -> list[TreeProfile]:
    def scaled(x: float) -> int:
        return round(x * byte_scale)

    out = []
    for name, tree_format in sorted(accs):
        a = accs[(name, tree_format)]
        files = max(round(a.files * count_scale), a.files)
        entries = scaled(a.entries)
        n_baskets = sum(b.baskets for b in a.branches.values())
        basket_bytes = sum(b.basket_bytes for b in a.branches.values())
        branch_profiles = tuple(
            BranchProfile(
                name=bname,
                typename=b.typename,
                compressed_bytes=scaled(b.compressed),
                uncompressed_bytes=scaled(b.uncompressed),
                compression_factor=_factor(b.compressed, b.uncompressed),
                baskets=BasketStats(
                    count=scaled(b.baskets),
                    mean_compressed_bytes=b.basket_bytes / b.baskets if b.baskets else None,
                ),
                fields=b.fields,
                columns=b.columns,
            )
            for bname, b in sorted(a.branches.items(), key=lambda kv: -kv[1].compressed)
        )
        (alg, alg_source, setting), _ = max(a.algorithms.items(), key=lambda kv: kv[1])
        level = _level(alg, setting)
        if alg is None:
            alg = setting_algorithm(setting)
        mixture = _mixture(a.algorithms) if len(a.algorithms) > 1 else ()
        clusters = _cluster_stats(a.clusters, a.cluster_sources, byte_scale)
        sizes = np.asarray(a.file_sizes)
        out.append(
            TreeProfile(
                name=name,
                files=files,
                sampled_files=a.files,
                entries=entries,
                events_per_file=entries / files if files else 0.0,
                branches=max(a.n_branches),
                compressed_bytes=scaled(a.compressed),
                uncompressed_bytes=scaled(a.uncompressed),
                compression_factor=_factor(a.compressed, a.uncompressed),
                compression=Compression(
                    algorithm=alg, level=level, setting=setting, source=alg_source,
                    mixture=mixture,
                ),
                baskets=BasketStats(
                    count=scaled(n_baskets),
                    mean_compressed_bytes=basket_bytes / n_baskets if n_baskets else None,
                ),
                cluster_entries=clusters.mean_entries if clusters else None,
                clusters=clusters,
                file_bytes=SizeStats(
                    count=files,
                    total_bytes=scaled(int(sizes.sum())),
                    min_bytes=int(sizes.min()),
                    median_bytes=float(np.median(sizes)),
                    max_bytes=int(sizes.max()),
                ),
                open_s=timing_stats(a.open_s),
                branch_profiles=branch_profiles,
                format=tree_format,
                autoflush=max(a.autoflush.items(), key=lambda kv: kv[1])[0],
                notes=tuple(a.notes),
                rntuple=a.rntuple.layout(byte_scale) if a.rntuple is not None else None,
            )
        )
    return out


def _level(alg: Algorithm | None, setting: int | None) -> int | None:
    return None if setting is None or alg == "none" else setting % 100


def _mixture(
    algorithms: dict[AlgKey, int],
) -> tuple[CompressionShare, ...]:
    merged: dict[tuple[Algorithm | None, int | None], int] = {}
    for (alg, _src, setting), nbytes in algorithms.items():
        key = (alg, _level(alg, setting))
        merged[key] = merged.get(key, 0) + nbytes
    total = sum(merged.values()) or 1
    return tuple(
        CompressionShare(algorithm=alg, level=level, share=nbytes / total)
        for (alg, level), nbytes in sorted(merged.items(), key=lambda kv: -kv[1])
    )


def _cluster_stats(
    counts: dict[int, int], sources: dict[ClusterSource, int], scale: float
) -> ClusterStats | None:
    if not counts:
        return None
    total_clusters = sum(counts.values())
    total_entries = sum(size * n for size, n in counts.items())
    return ClusterStats(
        count=round(total_clusters * scale),
        mean_entries=total_entries / total_clusters,
        min_entries=min(counts),
        max_entries=max(counts),
        source=max(sources.items(), key=lambda kv: kv[1])[0],
    )
