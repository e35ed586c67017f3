"""Typed results of the remote read tests (``Calibration.remote``; MB = 10^6 bytes).

Remote figures: the server's disk and page cache sit behind the link, so none of these is a
cold or warm storage rate; each is what a client here sees through the link.  Samples are kept
raw (seconds or ms as named), with the median and spread = (p75 - p25) / median.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RemoteSamples:
    """Repeated samples of one remote figure."""

    unit: str
    samples: tuple[float, ...]
    median: float | None
    spread: float | None
    note: str = ""


@dataclass(frozen=True)
class RemoteRequestPoint:
    """Reads of ``request_bytes`` each, one at a time: seconds per read (median)."""

    request_bytes: int
    seconds: float
    mb_per_s: float
    reads: int


@dataclass(frozen=True)
class StreamsPoint:
    """``streams`` reads at once (threads; own file handles): the aggregate rate.  XRootD's
    client multiplexes one server's files over one TCP connection (``connections`` says how
    many the client opened)."""

    streams: int
    aggregate_mb_per_s: float
    connections: int
    samples: tuple[float, ...]


@dataclass(frozen=True)
class VectorReads:
    """Whether one call can fetch many ranges (XRootD ``kXR_readv``, an HTTP multi-range GET),
    and what it costs: ``chunks`` ranges of ``chunk_bytes`` in one call (``vector_s``) against
    one call each (``single_s`` per call); ``chunk_overhead_ms``: the vector call's time per
    chunk beyond one round trip and the bytes at the bandwidth."""

    supported: bool
    chunks: int
    chunk_bytes: int
    vector_s: float | None
    single_s: float | None
    chunk_overhead_ms: float | None
    reason: str = ""


@dataclass(frozen=True)
class RemoteClientCost:
    """The reader's own client through the link, on the file of the CPU test (what the link's
    pings and the local CPU test do not see): ``client`` is ``uproot`` (its default source),
    ``uproot XRootDSource`` or ``root`` (``TFile::Open`` over ``root://``, in its own process).

    - ``request_ms``: one basket read at a time, median of ``request_samples``, of
      ``request_bytes`` each: uproot, the source's ``chunk()`` of the file's first baskets in
      file order; ROOT, the ``GetEntry`` loop without a cache on a few branches (time per read
      call, decompression included: ``request_decoded``);
    - ``open_s``: open the file, get the tree, close it (median); the client's own counts of
      the reads it made on the way (``open_requests``, ``open_bytes``);
    - ``read_s``: every branch read through the client (uproot ``arrays()``; ROOT's
      ``GetEntry`` loop with its default TTreeCache), the open not included (median of
      ``read_samples``), with the client's counts (``read_requests``, ``read_bytes``) and the
      ``baskets`` read;
    - ``first_s``: the first open and read of the file in the process (the connection already
      made): what a job pays once more than the passes after it;
    - ``local_open_samples``, ``local_read_samples``: the same open and read of the local copy,
      each timed right before its remote pass (paired: the machine's load then is in both).

    ``hep_advisor.models.link.ClientTerms`` turns these into the client's costs beyond the model's
    round trips, transfer and local CPU: per round trip, per file, per basket."""

    client: str
    request_ms: float | None
    request_bytes: int
    request_samples: tuple[float, ...]
    open_s: float | None
    open_requests: int
    open_bytes: int
    read_s: float | None
    read_requests: int
    read_bytes: int
    read_samples: tuple[float, ...]
    baskets: int
    note: str = ""
    request_decoded: bool = False
    first_s: float | None = None
    open_samples: tuple[float, ...] = ()
    #: the same open + close and read on the local copy, each right before its remote pass
    local_open_samples: tuple[float, ...] = ()
    local_read_samples: tuple[float, ...] = ()


@dataclass(frozen=True)
class RemoteReaderCpu:
    """The reader's CPU on one of the dataset's files, fetched whole over the link first (so
    no link time is in it) into a private temporary copy, removed afterwards: ``engine``
    (``uproot``: ``arrays`` of every branch; ``root``: the ``GetEntry`` loop with its
    TTreeCache, ROOT's one-time set-up paid before the timing).  ``open_s``: opening
    the file and its tree (median); ``loop_s``: reading every branch (median of
    ``samples``); ``mb_s``: ``loop_s`` per compressed MB of the baskets read (decompression,
    interpretation and the fixed cost per basket at this file's ``baskets`` per MB)."""

    engine: str
    url: str
    file_bytes: int
    basket_bytes: int
    baskets: int
    open_s: float | None
    loop_s: float | None
    mb_s: float | None
    samples: tuple[float, ...]
    spread: float | None
    note: str = ""
    #: the reader's own client(s) through the link on the same file (``RemoteClientCost``)
    clients: tuple[RemoteClientCost, ...] = ()
    #: Python's full (generation-2) garbage collections, which the median pass leaves out
    #: (a pass that meets one is an outlier) but a job of many files pays: ``gc_pause_s``, a
    #: full collection timed right after a pass's ``arrays()`` (the heap at its fullest, in
    #: this process); ``gc_gen0_per_pass``: young (generation-0) collections per pass (the
    #: reader's allocations); ``gc_s``: the pause amortized per pass (file), at CPython's
    #: default rule of one full collection per ``(threshold1 + 1) x (threshold2 + 1)`` young
    #: ones (``gc.get_threshold()``).  ``None``: not measured (ROOT's C++ loop: no Python
    #: objects per basket)
    gc_pause_s: float | None = None
    gc_gen0_per_pass: float | None = None
    gc_s: float | None = None
    #: the tree's entries in the file
    entries: int | None = None
    #: ROOT's ``GetEntry`` loop: its cost per entry whatever the branches read (s), from
    #: passes on one branch beside the passes on all (``loop_s`` = ``entries`` x
    #: ``entry_s`` + the bytes' part); ``None``: not measured (uproot reads arrays, with no
    #: cost per entry)
    entry_s: float | None = None

    @property
    def bytes_mb_s(self) -> float | None:
        """Seconds per compressed MB of the loop's bytes alone (``mb_s`` less the cost per
        entry, where measured)."""
        if self.mb_s is None or not self.entry_s or not self.entries or not self.loop_s \
                or not self.basket_bytes:
            return self.mb_s
        return max(self.loop_s - self.entries * self.entry_s, 0.0) / (self.basket_bytes / 1e6)

    def client(self, name: str) -> RemoteClientCost | None:
        """The measurement of client ``name`` (``None`` where it was not measured)."""
        return next((c for c in self.clients if c.client == name), None)


@dataclass(frozen=True)
class RemoteCalibration:
    """The link to the data: round trip, bandwidth (one stream, parallel streams), vector
    reads, open cost and the request-size sweep, measured on ``url``."""

    url: str
    scheme: str
    server: str
    #: median of protocol pings (XRootD ``kXR_ping``; HTTP: a 1-byte range GET)
    rtt_ms: float | None
    #: one stream, about a second of data timed from its first byte to its last
    bandwidth_mb_per_s: float | None
    parallel_streams: tuple[StreamsPoint, ...]
    vector_reads: VectorReads | None
    #: opening the file on an established connection (median); the first open also connects
    open_s: float | None
    first_open_s: float | None
    request_sweep: tuple[RemoteRequestPoint, ...]
    #: the sweep fitted to seconds = a + bytes / B: a (ms) and B (MB/s), a cross-check
    fit_latency_ms: float | None
    fit_bandwidth_mb_per_s: float | None
    rtt: RemoteSamples | None
    bandwidth: RemoteSamples | None
    #: 1-byte reads of the file: the latency a reader's small request sees (ms, median)
    read_latency_ms: float | None = None
    bytes_moved: int = 0
    note: str = ("remote: measured through the link; the server's cache state is not known "
                 "and no page-cache figure is claimed")
    #: the reader's CPU on one of the files (what the link time is combined with)
    cpu: RemoteReaderCpu | None = None
    #: uproot's default ``iterate`` (``step_size="100 MB"``, the default source) tried over
    #: the link on the first basket of one branch: ``None`` where it read, else its error in
    #: one line (uproot 5.7.7 with fsspec-xrootd 0.5.5 over ``root://``: a ``TypeError`` in the
    #: key pre-pass, which hands NumPy integers to XRootD); ``default_iterate_tried``: whether
    #: it was tried
    default_iterate_error: str | None = None
    default_iterate_tried: bool = False


__all__ = ["RemoteCalibration", "RemoteClientCost", "RemoteReaderCpu", "RemoteRequestPoint",
           "RemoteSamples", "StreamsPoint", "VectorReads"]
