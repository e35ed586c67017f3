"""Typed, immutable probe results.

Every figure carries its unit in its name (``_bytes``, ``_kb``, ``_s``, ``mb_per_s``; MB = 10^6
bytes).  Unknown is ``None``: never a crash and never a guess dressed up as a measurement.
These classes are plain data; the JSON document and its schema are generated from them, so a
field added here appears in both.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

Algorithm = Literal["ZLIB", "LZMA", "LZ4", "ZSTD", "OLD", "none"]
FsClass = Literal["local", "nfs", "lustre", "fuse", "remote", "memory"]
DeviceKind = Literal["disk", "partition", "md", "dm", "loop", "other"]
AlgorithmSource = Literal["basket-header", "file-setting", "page-list"]
ClusterSource = Literal["autoflush", "ranges", "estimated", "rntuple"]
TreeFormat = Literal["ttree", "rntuple"]

# ---------------------------------------------------------------------------------------------
# Site


@dataclass(frozen=True)
class CpuInfo:
    """Cores of this machine (psutil); ``load_avg_1m`` is the 1-minute load average."""

    physical_cores: int | None
    logical_cores: int | None
    load_avg_1m: float | None = None
    model: str | None = None


@dataclass(frozen=True)
class MemoryInfo:
    total_bytes: int
    available_bytes: int


@dataclass(frozen=True)
class BlockDevice:
    """One block device in the stack behind a mount (partition, md RAID, device-mapper, disk)."""

    name: str
    kind: DeviceKind
    rotational: bool | None = None
    read_ahead_kb: int | None = None
    scheduler: str | None = None
    raid_level: str | None = None
    size_bytes: int | None = None
    slaves: tuple[str, ...] = ()
    #: the queue's largest I/O, KiB (``queue/max_sectors_kb``): the block layer splits larger
    max_sectors_kb: int | None = None


@dataclass(frozen=True)
class ThrottleInfo:
    """Read limits a cgroup block throttle sets for the probing process on a data path's device
    (cgroup v1 ``blkio.throttle.read_*_device``, v2 ``io.max``); ``slice_s``: the throttle's
    time slice, whose whole budget a job gets at once after idle (``slice_source`` says whether
    it was measured or is the kernel's default, assumed)."""

    read_mb_per_s: float | None
    read_iops: float | None
    slice_s: float
    slice_source: str


@dataclass(frozen=True)
class StorageInfo:
    """Where one data path lives.

    ``fs_class`` is the coarse class the model cares about: ``local``, ``nfs``, ``lustre``,
    ``fuse``, ``remote`` (a URL), ``memory`` (tmpfs) or ``None`` when unknown.  ``device`` is the
    block device the file system sits on; ``physical_devices`` the leaf disks behind it (after
    partitions, md RAID and device-mapper are resolved) where the system shows them.
    """

    path: str
    mount_point: str | None
    fs_type: str | None
    fs_class: FsClass | None
    device: str | None
    rotational: bool | None
    read_ahead_kb: int | None
    scheduler: str | None
    physical_devices: tuple[str, ...] = ()
    stack: tuple[BlockDevice, ...] = ()
    #: the top device's largest I/O, KiB (``queue/max_sectors_kb``; ``None``: unknown)
    max_sectors_kb: int | None = None
    #: a cgroup block throttle on this device for the probing process (``None``: none found)
    throttle: ThrottleInfo | None = None


@dataclass(frozen=True)
class SiteProfile:
    hostname: str
    os: str
    cpu: CpuInfo
    memory: MemoryInfo
    storage: tuple[StorageInfo, ...] = ()


# ---------------------------------------------------------------------------------------------
# Dataset


@dataclass(frozen=True)
class ProbeError:
    """One input that could not be used, and why (one line)."""

    path: str
    error: str


@dataclass(frozen=True)
class CompressionShare:
    """One compression found in a tree's files, and its share of the tree's on-disk bytes."""

    algorithm: Algorithm | None
    level: int | None
    share: float


@dataclass(frozen=True)
class Compression:
    """Compression of a tree's baskets.

    ``algorithm`` is ``ZLIB``, ``LZMA``, ``LZ4``, ``ZSTD``, ``none`` or ``None`` (unknown);
    ``setting`` is ROOT's algorithm*100 + level as stored in the file.  ``source`` says where the
    algorithm came from: ``basket-header`` (the compression header of a stored basket),
    ``file-setting`` (the file's fCompress only) or, for an RNTuple, ``page-list`` (the setting
    its page list records for each column in each cluster).  Where the files of one tree differ,
    ``algorithm``/``level`` are those holding most bytes and ``mixture`` lists every one.
    """

    algorithm: Algorithm | None
    level: int | None
    setting: int | None
    source: AlgorithmSource
    mixture: tuple[CompressionShare, ...] = ()


@dataclass(frozen=True)
class BasketStats:
    """Baskets as stored on disk; ``mean_compressed_bytes`` is the mean on-disk size of one
    basket (its key plus compressed payload: what one read of that basket fetches)."""

    count: int
    mean_compressed_bytes: float | None


@dataclass(frozen=True)
class ClusterStats:
    """Cluster layout of a tree, in entries.

    ``source`` is ``autoflush`` (a fixed fAutoFlush), ``ranges`` (the variable cluster ranges
    a fast merge of flushed trees leaves), ``estimated`` (no flush recorded, as in small
    files, trees written by uproot and old TTree class versions without fAutoFlush: ROOT's own
    estimate, entries * 30 MB / compressed bytes, which is what its TTreeCache then uses), or
    ``rntuple`` (an RNTuple's clusters, as its footer lists them).
    """

    count: int
    mean_entries: float
    min_entries: int
    max_entries: int
    source: ClusterSource


@dataclass(frozen=True)
class SizeStats:
    count: int
    total_bytes: int
    min_bytes: int
    median_bytes: float
    max_bytes: int


@dataclass(frozen=True)
class TimingStats:
    """Repeated timings in seconds: median, 90th percentile and the raw samples."""

    count: int
    median_s: float
    p90_s: float
    min_s: float
    max_s: float
    samples_s: tuple[float, ...] = ()


@dataclass(frozen=True)
class BranchProfile:
    """One branch, summed over the sampled files (extrapolated when sampled).

    For an RNTuple, one top-level field with every field below it: ``baskets`` counts its
    pages, ``fields`` and ``columns`` how many fields (itself included) and physical columns it
    has (``None`` for a TTree branch).  Uncompressed bytes are ROOT's ``RNTupleInspector``'s:
    elements times their size in memory.
    """

    name: str
    typename: str
    compressed_bytes: int
    uncompressed_bytes: int
    compression_factor: float | None
    baskets: BasketStats
    fields: int | None = None
    columns: int | None = None


@dataclass(frozen=True)
class RNTupleLayout:
    """What an RNTuple holds beyond the figures it shares with a TTree.

    ``fields`` counts every field (nested ones included) and ``columns`` the physical columns
    (most over the sampled files).  Pages: ``pages`` (extrapolated like the tree's totals), the
    mean and largest compressed (on-storage) page and the mean uncompressed one (elements times
    their in-memory size).  Clusters and cluster groups: how many (extrapolated), clusters per
    group, and the mean compressed bytes of one cluster.  ``versions`` are the on-disk format
    versions found, ``writers`` the writer identifiers of the files (e.g. ``ROOT v6.34.02``).
    """

    fields: int
    columns: int
    pages: int
    mean_page_compressed_bytes: float | None
    max_page_compressed_bytes: int
    mean_page_uncompressed_bytes: float | None
    clusters: int
    cluster_groups: int
    clusters_per_group: float | None
    mean_cluster_compressed_bytes: float | None
    versions: tuple[str, ...] = ()
    writers: tuple[str, ...] = ()


@dataclass(frozen=True)
class TreeProfile:
    """One tree name across the dataset.

    ``files`` is the number of files holding this tree (estimated from the sample when the
    dataset was sampled); ``entries``, bytes and basket counts are extrapolated to all files in
    that case (see ``DatasetProfile.sampling``).

    ``format`` is ``ttree`` or ``rntuple``; an RNTuple's fields are its ``branch_profiles``, its
    pages its ``baskets``, and ``rntuple`` holds what only an RNTuple has.  ``autoflush`` is the
    TTree's fAutoFlush (the most common over the sampled files), ``None`` where unknown (an old
    TTree class version without it, or an RNTuple).  ``notes`` says what was unknown or
    approximated, and why (one line each).
    """

    name: str
    files: int
    sampled_files: int
    entries: int
    events_per_file: float
    branches: int
    compressed_bytes: int
    uncompressed_bytes: int
    compression_factor: float | None
    compression: Compression
    baskets: BasketStats
    cluster_entries: float | None
    clusters: ClusterStats | None
    file_bytes: SizeStats
    open_s: TimingStats | None
    branch_profiles: tuple[BranchProfile, ...] = ()
    format: TreeFormat = "ttree"
    autoflush: int | None = None
    notes: tuple[str, ...] = ()
    rntuple: RNTupleLayout | None = None


@dataclass(frozen=True)
class Sampling:
    """How the dataset was looked at: every file is stat'ed; ``opened_files`` of them (spread
    evenly over the sorted list) are opened, and totals are scaled by ``scale_factor`` =
    all files' bytes / opened files' bytes."""

    method: Literal["all", "sampled"]
    stated_files: int
    opened_files: int
    scale_factor: float


def largest_tree(trees: Iterable[TreeProfile]) -> TreeProfile:
    """The tree with the most compressed bytes, then (trees whose baskets are all embedded in
    their own metadata count none) the most entries; ``ValueError`` where there is none."""
    return max(trees, key=lambda t: (t.compressed_bytes, t.entries))


@dataclass(frozen=True)
class DatasetProfile:
    """The ROOT files behind the user's paths.

    ``files``/``total_bytes`` count every file found (all are stat'ed); ``usable_files`` is how
    many of the opened files could be read; ``errors`` holds one line per unusable input;
    ``open_s`` is the time uproot takes to open a file and read its trees' metadata, over the
    first files opened (up to 5; the others are read by a faster reader of the few members the
    probe needs, which does not time what a reader's open costs; page-cache state not
    controlled: the read tests measure it cold and warm); ``probe_s`` is the whole probe's
    wall time.
    """

    files: int
    total_bytes: int
    errors: tuple[ProbeError, ...]
    trees: tuple[TreeProfile, ...]
    sampling: Sampling
    inputs: tuple[str, ...] = ()
    open_s: TimingStats | None = None
    probe_s: float | None = None
    usable_files: int = 0
    file_paths: tuple[str, ...] = field(default=(), repr=False, metadata={"json": False})

    @property
    def usable(self) -> bool:
        return self.usable_files > 0

    @property
    def main_tree(self) -> TreeProfile | None:
        """The tree the read tests and the model use: the most compressed bytes, then (trees
        whose baskets are all embedded in their own metadata count none) the most entries."""
        return largest_tree(self.trees) if self.trees else None
