"""Typed results of the calibrated read tests (units in the names; MB = 10^6 bytes).

Every figure comes with the :class:`Measurement` it was derived from: the raw samples, their
median and spread, and the conditions they ran under (cold or warm cache, request size,
workers, bytes read).  A figure that could not be measured is ``None`` and the reason is in
``Calibration.skipped``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .remote_results import RemoteCalibration

CacheState = Literal["cold", "warm", "mixed", "unknown"]
Pattern = Literal["sequential", "random"]
DecompressionSource = Literal["dataset", "recompressed"]


@dataclass(frozen=True)
class Conditions:
    """What a measurement ran under.  ``cache`` is ``cold`` only where eviction was confirmed
    with mincore; ``warm`` where the data was read just before; ``unknown`` otherwise."""

    cache: CacheState
    workers: int = 1
    request_bytes: int | None = None
    pattern: Pattern | None = None
    bytes_per_sample: int | None = None
    note: str | None = None


@dataclass(frozen=True)
class Measurement:
    """Repeated samples of one figure: ``median``, and ``spread`` = (p75 - p25) / median.

    ``part_spread``: where a sample is a timed stream of reads (the raw read tests), each
    sample cut into ``PARTS`` equal stretches of time and the rate of each timed: (p75 - p25)
    / median of those rates, over all samples.  It says how steady the device was within a
    sample where there are too few samples for their own spread (a part's rate varies more
    than a whole sample's, so it is an upper estimate).  ``None`` where not timed so."""

    unit: str
    samples: tuple[float, ...]
    median: float | None
    spread: float | None
    conditions: Conditions
    part_spread: float | None = None


@dataclass(frozen=True)
class RawRead:
    """Plain reads of the dataset's files: storage (cold) and page-cache (warm) rates, and the
    small-read figures from the request sweep."""

    cold_mb_per_s: float | None
    warm_mb_per_s: float | None
    iops_4k: float | None
    access_time_ms: float | None
    bandwidth_mb_per_s: float | None
    cold: Measurement | None
    warm: Measurement | None
    #: sequential / random MB/s of 4 KiB reads, cold: what the device's read-ahead (and the
    #: file system's) does for small reads in file order; about 1 means it does nothing
    readahead_gain_4k: float | None = None
    #: the device's form, from the request sweep (``raw.device_limit``): "additive", a disk
    #: (access time, then transfer, per request), or "max", a rate limiter (a throttled or
    #: cloud volume: the larger of a request slot and the transfer); ``None``: undecided
    device_limit: str | None = None


@dataclass(frozen=True)
class RequestPoint:
    request_bytes: int
    pattern: Pattern
    mb_per_s: float | None
    measurement: Measurement


@dataclass(frozen=True)
class ConcurrencyPoint:
    workers: int
    aggregate_mb_per_s: float | None
    measurement: Measurement


@dataclass(frozen=True)
class OpenOverhead:
    """Seconds to open one file and read its trees' metadata, cold and warm."""

    cold: float | None
    warm: float | None
    cold_measurement: Measurement | None
    warm_measurement: Measurement | None


@dataclass(frozen=True)
class DecompressionPoint:
    """One core decompressing the dataset's own baskets, held in memory."""

    algorithm: str
    compressed_mb_per_s: float | None
    uncompressed_mb_per_s: float | None
    library: str
    baskets: int
    measurement: Measurement
    #: ``dataset``: the baskets as stored in the dataset; ``recompressed``: the dataset's own
    #: baskets (of ``recompressed_from``) decompressed and recompressed in memory with
    #: ``algorithm`` at ``level``, then timed in the same way
    source: DecompressionSource = "dataset"
    #: uncompressed / compressed bytes of the sample measured (for a recompressed sample,
    #: baskets the algorithm could not shrink count as stored uncompressed, as ROOT keeps them)
    compression_factor: float | None = None
    level: int | None = None
    recompressed_from: str | None = None
    #: the dataset's own compression factor on the same baskets (recompressed points only):
    #: ``compression_factor / dataset_factor`` is the size change, measured
    dataset_factor: float | None = None
    #: the size change's relative standard error over the sample's baskets (recompressed
    #: points only; ``None`` under two baskets): the ratio estimator's, from each basket's own
    #: change
    size_change_sd: float | None = None
    #: the codec's fixed CPU seconds per basket decompressed, beyond its bytes
    #: (:mod:`~probes.readtests.blockcost`: the sample compressed basket by basket and in
    #: blocks of several baskets' bytes); the rate above holds at this sample's baskets,
    #: larger ones save this per basket fewer.  ``None`` where not measured
    basket_s: float | None = None


@dataclass(frozen=True)
class Unpacking:
    """uproot turning baskets already decompressed in memory into arrays (its
    ``interpretation.basket_array`` and ``final_array``, library ``ak``), one core: the plain
    event loop's processing per MB, without I/O or decompression.

    ``compressed_mb_per_s`` counts the baskets as stored (keys included, as the event loop's
    rates do), beyond the fixed costs per basket and per branch where the sample's sizes let
    them be told apart (``basket_call_s``, ``branch_call_s``; ``None`` where they could not:
    the rate then includes them and is a lower bound); ``total_mb_per_s`` includes them.  The
    measurement's samples are total compressed MB/s, one per pass."""

    compressed_mb_per_s: float | None
    uncompressed_mb_per_s: float | None
    total_mb_per_s: float | None
    basket_call_s: float | None
    branch_call_s: float | None
    branches: int
    baskets: int
    measurement: Measurement


@dataclass(frozen=True)
class LoopPart:
    """One file of the event loop's timed passes: its path and the entries read, from the
    tree's first."""

    path: str
    entries: int


@dataclass(frozen=True)
class EventLoop:
    """Reading the selected branches into arrays (or running the user's analysis), cold and
    warm; the top-level figures are the cold ones (the warm where cold was impossible)."""

    engine: str
    branches: int
    events_per_s: float | None
    compressed_mb_per_s: float | None
    uncompressed_mb_per_s: float | None
    cold: Measurement | None
    warm: Measurement | None
    analysis: str | None = None
    #: the program's reader it ran (``--reader``: ``hep_advisor.probes.readtests.readers``);
    #: ``None``: the event loop's own (uproot ``iterate`` at an entry step, or ROOT's ``GetEntry``
    #: loop)
    reader: str | None = None
    #: seconds the reader costs once per program run, not per event, measured: RDataFrame's
    #: just-in-time compilation of its actions (``None``: none measured)
    setup_s: float | None = None
    #: MB of memory the warm passes faulted per uncompressed MB they read (the median; the
    #: loop's process had already grown its heap, so this is memory unmapped and mapped again
    #: each pass, and its cost is inside the warm rate), and the in-memory size of the loop's
    #: largest step of arrays in MB (``None``: not recorded)
    refault_per_mb: float | None = None
    step_mb: float | None = None
    #: the uncompressed bytes per read call of the loop's own ``iterate`` (its entry step is
    #: this over the bytes per entry): the calls per file the rate model charges its rows
    #: (``None``: a program's reader ran, or not recorded: 50 MB, ``overhead.STEP_BYTES``)
    step_bytes: float | None = None
    #: what the loop's passes decompressed against their share of the files: bytes and
    #: baskets of the baskets that begin before each part's end, over the part's fraction of
    #: all of them (1: whole files or whole clusters; more where a part ends inside baskets,
    #: which a read decompresses whole; ``None``: not known).  Its rate per MB, taken to whole
    #: files, is scaled by them (``hep_advisor.models.calibration``)
    read_mb_factor: float | None = None
    read_basket_factor: float | None = None
    #: the files each timed pass read, in order, and the entries of each (the engine replays
    #: this sample to check itself against the loop: ``hep_advisor.models.loop_sample``);
    #: empty: not recorded
    parts: tuple[LoopPart, ...] = ()

    @classmethod
    def from_rate(cls, engine: str, branches: int, events_per_s: float | None,
                  compressed_bytes_per_event: float, uncompressed_bytes_per_event: float,
                  cold: Measurement | None, warm: Measurement | None,
                  analysis: str | None = None) -> EventLoop:
        """The figures of an event rate, with the bytes one event carries."""
        def mb(per_event: float) -> float | None:
            return None if events_per_s is None else events_per_s * per_event / 1e6

        return cls(engine=engine, branches=branches, events_per_s=events_per_s,
                   compressed_mb_per_s=mb(compressed_bytes_per_event),
                   uncompressed_mb_per_s=mb(uncompressed_bytes_per_event), cold=cold,
                   warm=warm, analysis=analysis)


@dataclass(frozen=True)
class RootPerfStats:
    """ROOT's own figures (``TTreePerfStats``) for one pass over the files, summed over files.

    ``read_calls`` and ``bytes_read`` count the event loop only (not the reads made while
    opening); ``mean_read_bytes`` = bytes / calls; times in seconds; ``loop_s`` is the wall
    time of the ``GetEntry`` loops."""

    tree_cache: bool
    cache_bytes: int
    cache: CacheState
    files: int
    entries: int
    read_calls: int
    bytes_read: int
    mean_read_bytes: float | None
    unzipped_bytes: int
    disk_time_s: float
    unzip_time_s: float
    cpu_time_s: float
    real_time_s: float
    loop_s: float
    events_per_s: float | None


@dataclass(frozen=True)
class CallCost:
    """The event loop's fixed cost per read call (``call_s``, seconds) and its rate per MB
    beyond it (compressed MB/s), warm, over ``branches`` branches."""

    call_s: float | None
    mb_per_s: float | None
    branches: int
    measurement: Measurement
    #: baskets per compressed MB in the part read beyond the first range (what ``mb_per_s``
    #: includes the per-basket cost of); ``None`` where not counted
    baskets_per_mb: float | None = None
    #: what a file's first read call costs beyond a later call of the same entries (seconds,
    #: the median of paired differences: a freshly opened file's first call, then the same
    #: call again on an open one); uproot finds each branch's baskets the first time a file's
    #: branch is read, a cost per file, not per call; ``None`` where not measured
    first_call_s: float | None = None
    #: the first range's read call on the open file (seconds, warm, the median), its entries,
    #: and whether that range is a whole input file (the temporary merge of small files): the
    #: calibration's event loop reads such a file in one call, and what its time per file
    #: holds beyond this call is a cost per file (``hep_advisor.models.calcosts.first_call_extra``)
    later_call_s: float | None = None
    later_entries: int | None = None
    later_whole_file: bool = False
    #: what one more read call costs over the same baskets and entries (seconds, warm, the
    #: median, at least 0, at most ``later_call_s``, and 0 where below what its reads
    #: resolve, ``overhead.SPLIT_RESOLVED``): a range read in two calls less in one, the
    #: baskets and entries the same (``split``: its samples), over ``branches`` branches;
    #: unlike ``call_s`` (an intercept of two ranges, whose difference holds the second
    #: range's baskets) it holds no basket's or byte's cost.  ``None`` where not measured
    #: (an older calibration)
    split_call_s: float | None = None
    split: Measurement | None = None


@dataclass(frozen=True)
class BasketGroup:
    """One group of branches of the per-basket test: the baskets (``baskets``) and compressed
    MB (``mb``) its long range reads beyond its short one, and the CPU seconds that took in
    each repetition (``extra_s``)."""

    baskets: int
    mb: float
    extra_s: tuple[float, ...]


@dataclass(frozen=True)
class BasketCost:
    """The fixed cost of one basket read (``basket_s``, seconds) and the compressed MB/s
    beyond it, warm, with uproot; ``baskets`` read per repetition of the test; the samples
    are one estimate per repetition.  ``groups``: what each group read and took, from which
    the cost can be fitted again with the per-MB cost another test measured
    (``hep_advisor.models.calcosts.basket_cost``); empty in calibrations made before it was kept."""

    basket_s: float | None
    mb_per_s: float | None
    baskets: int
    measurement: Measurement
    groups: tuple[BasketGroup, ...] = ()


@dataclass(frozen=True)
class KeyCost:
    """uproot's CPU per basket key read as a memory-size step's pre-pass reads it
    (``key_s``, seconds), warm; ``keys`` read per repetition; one sample per repetition."""

    key_s: float | None
    keys: int
    measurement: Measurement


@dataclass(frozen=True)
class FirstTouch:
    """Seconds per MB a process pays to write memory for the first time (``s_per_mb``: the
    kernel's page faults, which zero each new page); one sample per fresh mapping."""

    s_per_mb: float | None
    measurement: Measurement


@dataclass(frozen=True)
class Collector:
    """Python's cyclic garbage collector per file a program opens and reads with uproot
    (``per_file_s`` = ``freeing_s + walk_s``, seconds), measured in a fresh interpreter that
    imports uproot and awkward: ``freeing_s`` the full collections' time beyond the heap
    walk, ``walk_s`` an empty full collection (``empty_full_s``, ``heap_objects`` tracked)
    at CPython's rate of full collections (from the ``collections`` of any generation seen
    over ``files`` reads, ``full_collections`` of them full); one sample per run."""

    per_file_s: float | None
    freeing_s: float
    walk_s: float
    files: int
    full_collections: int
    collections: int
    empty_full_s: float
    heap_objects: int
    measurement: Measurement


@dataclass(frozen=True)
class ParallelPoint:
    """The event loop by ``workers`` processes (warm, pull-based over ``units`` files, or
    packets of entries where ``whole_files`` is false).

    ``first_s_per_mb``: seconds per compressed MB of the first unit each worker took (over the
    workers, weighted by MB); ``later_s_per_mb``: of the units each took after its first
    (``None``: none did).  A worker's first unit pays what a fresh process pays once (its heap
    written for the first time, lazily built readers): a run where each worker reads one unit
    is all first units, so comparing it with a run that reads two per worker mixes the two.
    Both paces count only the units that the test's other run read at the same place (by
    file and entries: ``parallel.unit_pace``), so that uneven units compare like against like.
    (``None``: not recorded, a calibration from before these fields.)
    ``speedup_over_cores``: for a run by more workers than the logical cores, its rate over the
    run by as many workers as the cores, over the same units, from the paces of the first units
    both read first (``parallel.over_cores``); ``None`` for the other runs."""

    workers: int
    aggregate_mb_per_s: float | None
    file_mb: float
    calls_per_file: float
    units: int
    measurement: Measurement
    first_s_per_mb: float | None = None
    later_s_per_mb: float | None = None
    whole_files: bool = True
    speedup_over_cores: float | None = None


@dataclass(frozen=True)
class ConversionPoint:
    """A sample of the largest TTree (its first clusters in one file, ``entries`` entries)
    copied as a TTree and converted to an RNTuple, both with the dataset's compression setting,
    in a temporary directory removed afterwards; then the same read (``engine``'s, of the
    selected branches / the fields they became) timed on both, alternating.

    ``cache`` says which reads ``gain`` compares: ``cold`` only where eviction was confirmed
    with mincore for both files, else ``warm``.  ``gain`` = TTree seconds / RNTuple seconds
    (median of the pairs; for reads of ``target_entries``); ``measurement`` holds the pairs'
    gains (unit ``x``), ``ttree`` and ``rntuple`` the seconds of the compared reads of the
    whole sample, ``warm_gain`` the warm pairs' median gain (also where the cold ones are
    compared).  ``*_bytes`` are each sample's stored bytes of what is read; ``*_requests``
    the baskets (TTree) and pages (RNTuple) holding them: uproot reads an RNTuple's pages one
    request each."""

    engine: str
    converter: str
    compression_setting: int | None
    entries: int
    branches: int
    cache: CacheState
    gain: float | None
    warm_gain: float | None
    ttree_bytes: int
    rntuple_bytes: int
    ttree_requests: int | None
    rntuple_requests: int | None
    convert_s: float
    measurement: Measurement
    ttree: Measurement
    rntuple: Measurement
    note: str = ""
    #: the entries of one read of the analysis (a file's, at most one event-loop step) the
    #: gains are given for: the sample's reads of all its entries and of its first quarter
    #: split each format's time into a fixed part and a part per entry; ``None``: the sample's
    target_entries: int | None = None
    #: TTree / RNTuple seconds on the sample itself (``cache`` as ``gain``)
    sample_gain: float | None = None
    #: whether the temporary directory lies on the device of the dataset's file (``st_dev``):
    #: then cold reads there are reads from the dataset's own storage
    same_storage: bool | None = None


@dataclass(frozen=True)
class MemoryFit:
    dataset_bytes: int
    available_bytes: int
    fits_in_ram: bool


@dataclass(frozen=True)
class Skipped:
    test: str
    reason: str


@dataclass(frozen=True)
class ReaderSetup:
    """What a run of the program's reader pays once (an RDataFrame's first just-in-time
    compilation, ROOT's set-up on the first file: its first set-up pass less a second one),
    measured before its event-loop test was ended at its share: kept where the loop's rates
    were not."""

    reader: str
    setup_s: float


@dataclass(frozen=True)
class PaceSample:
    """A fixed piece of pure-Python work (:mod:`.pace`) timed in the calibration's process
    before ``test`` (``"end"``: after the last): wall and CPU seconds, the median of a few."""

    test: str
    wall_s: float
    cpu_s: float


@dataclass(frozen=True)
class MachinePace:
    """How fast the machine ran one process's work through the calibration.  ``spread``: the
    samples' upper quartile of wall time over their lower quartile, less 1 (the slowest over
    the fastest with fewer than four samples); ``cpu_share``: the CPU time the
    samples got over their wall time (below 1: the process was ready and not run, for other
    programs or, on a virtual machine, the host's other guests)."""

    samples: tuple[PaceSample, ...]
    spread: float
    cpu_share: float
    #: the spread or the CPU share beyond what a quiet machine shows (:mod:`.pace`)
    unsteady: bool
    #: the median sample of this host's earlier calibrations (the advisor's cache), and how
    #: many there were; ``None`` where fewer than ``pace.MIN_REFERENCES``
    reference_s: float | None = None
    references: int = 0
    #: the median sample beyond ``pace.SLOW_PACE`` times the reference: a calibration made
    #: in a stretch slower than this host's usual
    slow: bool = False


@dataclass(frozen=True)
class Calibration:
    budget_s: float
    elapsed_s: float
    partial: bool
    engine: str
    raw_read: RawRead | None
    request_sweep: tuple[RequestPoint, ...]
    concurrency: tuple[ConcurrencyPoint, ...]
    open_overhead_s: OpenOverhead | None
    decompression: tuple[DecompressionPoint, ...]
    event_loop: EventLoop | None
    memory: MemoryFit | None
    skipped: tuple[Skipped, ...] = ()
    files_used: int = 0
    bytes_read: int = 0
    #: the ROOT engine's TTreePerfStats figures, TTreeCache on and off (``--engine root``)
    root_cache_on: RootPerfStats | None = None
    root_cache_off: RootPerfStats | None = None
    #: the event loop's fixed cost per read call, and its scaling on the cores (warm)
    call_cost: CallCost | None = None
    parallel_loop: tuple[ParallelPoint, ...] = ()
    #: the fixed cost of one basket read (uproot)
    basket_cost: BasketCost | None = None
    #: uproot's CPU per basket key in a memory-size step's pre-pass
    key_cost: KeyCost | None = None
    #: the cost of memory a new process touches for the first time (its page faults)
    first_touch: FirstTouch | None = None
    #: Python's garbage collector per file opened and read (uproot, a fresh interpreter)
    collector: Collector | None = None
    #: uproot's unpacking of decompressed baskets into arrays (processing per MB, uproot)
    unpacking: Unpacking | None = None
    #: a sample of the largest TTree converted to RNTuple, the same read timed on both
    conversion: ConversionPoint | None = None
    #: remote data (root://, http(s)://): the link (round trip, bandwidth, streams, vector reads)
    remote: RemoteCalibration | None = None
    #: the machine's pace through the calibration (a fixed piece of work before each test)
    machine: MachinePace | None = None
    #: the program's reader's one-off set-up where its event-loop test was ended before its
    #: rates (with the loop, ``event_loop.setup_s`` holds it)
    reader_setup: ReaderSetup | None = None
    #: a compiled ROOT ``GetEntry`` reader's own open per file (``TFile::Open`` and the tree's
    #: metadata, cold and warm), measured in its child after its loop, where the open test
    #: ran another engine's (uproot's tens of ms where ROOT takes about one)
    reader_open: OpenOverhead | None = None
