"""The decompression and event-loop read tests on an RNTuple dataset.

*Decompression*: a bounded sample of the RNTuple's stored pages (positions and sizes from the
page lists: every page's locator) is read from the files and held in memory; each page is a
run of ROOT compression blocks, as a TTree basket's payload is (the page checksum, where there
is one, lies after the locator's bytes and is not read).  Then one core decompresses them,
repeatedly, through uproot's own decompressors, timed as for TTree baskets
(:mod:`.decompress`): one :class:`~.results.DecompressionPoint` per algorithm, counting pages
as "baskets".  Pages stored uncompressed are skipped.  No recompressed samples are made for an
RNTuple (the compression recommendation stays silent for RNTuple datasets).

*Event loop with uproot*: the selected fields (default: every top-level field) of a bounded
part of the dataset (at most ``max_bytes`` compressed, whole clusters) are read with
``RNTuple.arrays(fields, entry_start, entry_stop)`` in steps of whole clusters of about
``step_bytes`` uncompressed, cold (files evicted, checked with ``mincore``) and warm, as the
TTree loop of :mod:`.eventloop`; the user's analysis, where given, is called on every chunk.
Rates are events/s and MB/s of the fields' bytes from the RNTuple's page lists (compressed:
pages on storage; uncompressed: elements x in-memory size, as ROOT's ``RNTupleInspector``).

*Event loop with ROOT* (``--engine root``): ``ROOT::RNTupleReader`` opened on a model holding
only the selected fields, and ``LoadEntry(i)`` for every entry (C++, declared once), cold and
warm; opening is not timed.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..rootfile import one_line
from .decoders import decoder
from .decompress import _pilot, _point, _report_point, _time_pool
from .eventloop import AnalysisError, cold_then_warm, resolve_analysis
from .pagecache import Eviction, evict
from .readplan import PartTotals
from .results import Conditions, DecompressionPoint, EventLoop, Skipped
from .rootblocks import DEFAULT_SAMPLE_BYTES, MAX_FILES, ORDER, BasketSample, Pool, split_blocks
from .runner import OutOfTime, Session

DECOMPRESSION = "decompression"
EVENT_LOOP = "event_loop"
DEFAULT_MAX_BYTES = 200_000_000
DEFAULT_STEP_BYTES = 50_000_000
PILOT_FRACTION = 0.3
COLD_FRACTION = 0.6
SCAN_FRACTION = 0.3


class NotForRNTuple(OutOfTime):
    """A read test that is not made for an RNTuple dataset: listed in ``skipped`` with the
    reason, and its time flows to the tests after it."""


# -- pages -----------------------------------------------------------------------------------
def page_locations(ntuple: Any) -> list[tuple[int, int]]:
    """(offset, bytes) of every stored page of one uproot RNTuple, by position."""
    out: list[tuple[int, int]] = []
    for cluster in ntuple.page_link_list:
        for col in cluster:
            if getattr(col, "suppressed", False):
                continue
            for p in col.pages:
                loc = p.locator
                if int(getattr(loc, "type", 0) or 0) != 0:  # not a plain file locator
                    continue
                off, n = int(loc.offset), int(loc.num_bytes)
                if off > 0 and n > 0:
                    out.append((off, n))
    out.sort()
    return out


def collect_pages(
    files: Sequence[str],
    name: str,
    sample_bytes: int = DEFAULT_SAMPLE_BYTES,
    deadline: float | None = None,
    check: Callable[[], None] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> BasketSample:
    """Read up to ``sample_bytes`` (compressed) of stored pages per algorithm, files in order
    (each file's pages in file order), at most ``MAX_FILES`` files, until ``deadline``."""
    import uproot

    pools: dict[str, Pool] = {}
    skipped: list[str] = []
    raw_pages = read = files_read = 0
    for path in files[:MAX_FILES]:
        if deadline is not None and clock() >= deadline and pools:
            break
        if pools and all(p.compressed_bytes >= sample_bytes for p in pools.values()):
            break
        if check is not None:
            check()
        try:
            with uproot.open(path) as f:
                if name not in f:
                    continue
                locations = page_locations(f[name])
        except Exception as exc:  # a bad file is skipped, never a crash
            skipped.append(f"{path}: {one_line(exc)}")
            continue
        files_read += 1
        try:
            with open(path, "rb") as fh:
                for off, n in locations:
                    fh.seek(off)
                    payload = fh.read(n)
                    read += len(payload)
                    parsed = split_blocks(payload)
                    if parsed is None:
                        raw_pages += 1
                        continue
                    alg, blocks = parsed
                    if alg == "OLD":
                        continue
                    pool = pools.setdefault(alg, Pool(alg))
                    if pool.compressed_bytes >= sample_bytes:
                        if all(p.compressed_bytes >= sample_bytes for p in pools.values()):
                            break
                        continue
                    pool.add(blocks, len(payload), sum(b.uncompressed_bytes for b in blocks))
                    if deadline is not None and clock() >= deadline:
                        break
        except (OSError, ValueError) as exc:
            skipped.append(f"{path}: {one_line(exc)}")
    return BasketSample(pools=pools, uncompressed_baskets=raw_pages, skipped=tuple(skipped),
                        files_read=files_read, bytes_read=read)


def measure_rntuple_decompression(
    session: Session,
    files: Sequence[str],
    name: str,
    share_s: float,
    sample_bytes: int = DEFAULT_SAMPLE_BYTES,
    skipped: list[Skipped] | None = None,
) -> tuple[DecompressionPoint, ...]:
    """Decompression rate per core of the RNTuple's own pages, one point per algorithm."""
    clock = session.clock
    t0 = clock()
    session.check()
    session.report(DECOMPRESSION, 0.0, "reading pages")
    local = [f for f in files if os.path.isfile(f)]
    sample = collect_pages(local, name, sample_bytes, deadline=t0 + SCAN_FRACTION * share_s,
                           check=session.check, clock=clock)
    session.bytes_read += sample.bytes_read
    pools = [sample.pools[a] for a in ORDER if a in sample.pools]
    if not pools:
        why = "; ".join(sample.skipped[:2]) or (
            "every page is stored uncompressed" if sample.uncompressed_baskets else "no page")
        raise OutOfTime(f"no compressed page to time ({why})")
    points: list[DecompressionPoint] = []
    for k, pool in enumerate(pools):
        session.check()
        start = clock()
        part = max(0.0, share_s - (start - t0)) / (len(pools) - k)
        decode, library = decoder(pool.algorithm)
        _pilot(pool, decode, max(part / 4, 1e-3), clock)
        m = _time_pool(session, pool, decode, max(0.0, part - (clock() - start)), Conditions(
            cache="warm", workers=1, bytes_per_sample=pool.compressed_bytes,
            note=(f"{pool.baskets} RNTuple pages of the dataset held in memory; one core; "
                  f"compressed MB = stored page (block headers); uncompressed/compressed = "
                  f"{pool.uncompressed_bytes / pool.compressed_bytes:.3f}")),
            f"decompressing {pool.algorithm} ({pool.baskets} pages)")
        points.append(_point(pool, library, m))
        _report_point(session, points[-1], (k + 1) / len(pools))
        pool.blocks = []
    if skipped is not None:
        skipped.append(Skipped(f"{DECOMPRESSION} (recompressed)",
                               "no recompressed samples for an RNTuple dataset"))
    return tuple(points)


# -- event loop ------------------------------------------------------------------------------
@dataclass(frozen=True)
class NtuplePart:
    """The first ``entries`` of one file's RNTuple (whole clusters), and the selected fields'
    bytes in the whole RNTuple."""

    path: str
    entries: int
    total_entries: int
    compressed_bytes: int
    uncompressed_bytes: int
    cluster_ends: tuple[int, ...]  # entry after each cluster

    @property
    def fraction(self) -> float:
        return self.entries / self.total_entries if self.total_entries else 0.0


@dataclass(frozen=True)
class NtuplePlan(PartTotals):
    name: str
    fields: tuple[str, ...]
    parts: tuple[NtuplePart, ...]


def _cluster_ends(ntuple: Any) -> tuple[int, ...]:
    ends = sorted(int(c.num_first_entry) + int(c.num_entries) for c in ntuple.cluster_summaries)
    return tuple(ends)


def plan_rntuple_reads(files: Sequence[str], name: str, fields: Sequence[str] | None = None,
                       max_bytes: float = DEFAULT_MAX_BYTES) -> NtuplePlan:
    """Which files (and how many whole clusters of the last) to read.  Raises ``ValueError``
    for a missing field or when no file holds the RNTuple."""
    import uproot

    from ..rntuple import read_rntuple

    parts: list[NtuplePart] = []
    problems: list[str] = []
    selected: tuple[str, ...] | None = tuple(fields) if fields else None
    total = 0.0
    for path in files:
        if total >= max_bytes:
            break
        try:
            with uproot.open(path) as f:
                if name not in f:
                    problems.append(f"{path}: no RNTuple {name!r}")
                    continue
                nt = f[name]
                meta = read_rntuple(nt)
                ends = _cluster_ends(nt)
        except Exception as exc:
            problems.append(f"{path}: {one_line(exc)}")
            continue
        by_name = {fm.name: fm for fm in meta.fields}
        if selected is None:
            selected = tuple(by_name)
        missing = [x for x in selected if x not in by_name]
        if missing:
            raise ValueError(f"no field {', '.join(missing[:5])} in RNTuple {name!r} of {path}")
        zipped = sum(by_name[x].compressed_bytes for x in selected)
        unzipped = sum(by_name[x].uncompressed_bytes for x in selected)
        n = meta.entries
        if n <= 0:
            continue
        entries = n
        if zipped > 0 and total + zipped > max_bytes:
            want = n * (max_bytes - total) / zipped
            entries = next((e for e in ends if e >= want), n)
        parts.append(NtuplePart(path, entries, n, zipped, unzipped, ends or (n,)))
        total += zipped * entries / n
        if entries < n:
            break
    if not parts:
        why = "; ".join(problems[:3]) if problems else "no entries"
        raise ValueError(f"no readable RNTuple {name!r} in the files ({why})")
    return NtuplePlan(name, selected or (), tuple(parts))


def _steps(part: NtuplePart, step_bytes: float) -> list[tuple[int, int]]:
    """Entry ranges of whole clusters, each about ``step_bytes`` uncompressed."""
    per_entry = part.uncompressed_bytes / part.total_entries if part.total_entries else 1.0
    out: list[tuple[int, int]] = []
    start = 0
    for end in part.cluster_ends:
        end = min(end, part.entries)
        if end <= start:
            continue
        if (end - start) * per_entry >= step_bytes or end >= part.entries:
            out.append((start, end))
            start = end
        if start >= part.entries:
            break
    if start < part.entries:
        out.append((start, part.entries))
    return out


def read_ntuple_pass(plan: NtuplePlan, step_bytes: float = DEFAULT_STEP_BYTES,
                     analysis: Callable[[Any], Any] | None = None,
                     check: Callable[[], None] | None = None) -> tuple[int, float]:
    """Read the plan once with uproot: (entries, seconds); opening is not timed."""
    import uproot

    entries = 0
    seconds = 0.0
    for part in plan.parts:
        if check is not None:
            check()
        with uproot.open(part.path) as f:
            nt = f[plan.name]
            t0 = time.perf_counter()
            for start, stop in _steps(part, step_bytes):
                arrays = nt.arrays(list(plan.fields), entry_start=start, entry_stop=stop,
                                   library="ak")
                if analysis is not None:
                    try:
                        analysis(arrays)
                    except Exception as exc:
                        label = getattr(analysis, "__qualname__", repr(analysis))
                        raise AnalysisError(f"the analysis {label} raised "
                                            f"{type(exc).__name__}: {one_line(exc)}") from exc
                entries += len(arrays)
                del arrays
                if check is not None:
                    check()
            seconds += time.perf_counter() - t0
    return entries, seconds


def _shrink(plan: NtuplePlan, seconds: float, budget: float) -> NtuplePlan:
    """The plan cut (whole clusters, at least one) so that one pass takes about ``budget``."""
    if seconds <= budget or seconds <= 0:
        return plan
    keep = max(plan.entries * budget / seconds, 1.0)
    parts: list[NtuplePart] = []
    acc = 0
    for p in plan.parts:
        if acc >= keep:
            break
        want = keep - acc
        n = p.entries if want >= p.entries else next(
            (e for e in p.cluster_ends if e >= want), p.entries)
        parts.append(replace(p, entries=min(n, p.entries)))
        acc += parts[-1].entries
    return replace(plan, parts=tuple(parts))


def measure_rntuple_event_loop(
    session: Session,
    files: Sequence[str],
    name: str,
    fields: Sequence[str] | None = None,
    analysis: Any = None,
    share_s: float = 5.0,
    engine: str = "uproot",
    cold: bool = True,
    max_bytes: float = DEFAULT_MAX_BYTES,
    step_bytes: float = DEFAULT_STEP_BYTES,
) -> EventLoop:
    """Events/s and MB/s of reading ``fields`` (default: all top-level fields) of the RNTuple
    ``name`` with uproot (or ROOT's ``RNTupleReader`` with ``engine="root"``), cold and warm,
    as :func:`~.eventloop.measure_event_loop` does for a TTree."""
    func, analysis_name = resolve_analysis(analysis) if engine == "uproot" else (None, None)
    clock = session.clock
    t0 = clock()
    session.check()
    session.report(EVENT_LOOP, 0.0, "planning the event loop")
    plan = plan_rntuple_reads(files, name, fields, max_bytes)

    if engine == "root":
        def one_pass(p: NtuplePlan) -> tuple[int, float]:
            return root_ntuple_pass(p, check=session.check)
        lib = "ROOT RNTupleReader, LoadEntry"
    else:
        def one_pass(p: NtuplePlan) -> tuple[int, float]:
            return read_ntuple_pass(p, step_bytes, func, session.check)
        lib = "uproot RNTuple.arrays, library 'ak'"

    # warm-up (interpretations, kernels, ROOT's set-up), on the first cluster
    first = plan.parts[0]
    one_pass(replace(plan, parts=(replace(first, entries=first.cluster_ends[0]
                                          if first.cluster_ends else first.entries),)))
    evictions: list[Eviction] = []

    def evict_plan(p: NtuplePlan) -> None:
        evictions.extend(evict(path) for path in p.paths)

    if cold:
        evict_plan(plan)
    p0 = clock()
    n0, s0 = one_pass(plan)
    pass_s = clock() - p0
    pilot_budget = PILOT_FRACTION * max(0.0, share_s - (p0 - t0))
    plan = _shrink(plan, s0, pilot_budget)
    session.bytes_read += int(plan.compressed_bytes)
    pilot_rate = n0 / max(s0, 1e-9)
    pass_s *= plan.entries / max(n0, 1)

    def sample(evict_first: bool) -> float:
        if evict_first:
            evict_plan(plan)
        n, s = one_pass(plan)
        session.bytes_read += int(plan.compressed_bytes)
        return n / max(s, 1e-9)

    what = f"{'analysis ' + analysis_name if analysis_name else 'reading'} " \
           f"{len(plan.fields)} RNTuple fields"
    base = Conditions(cache="unknown", workers=1, bytes_per_sample=int(plan.compressed_bytes),
                      note=f"{plan.entries} entries of {len(plan.parts)} file(s), {lib}; "
                      "file opening not timed")
    cold_m, warm_m, top = cold_then_warm(session, EVENT_LOOP, what, base, sample, pilot_rate,
                                         pass_s, share_s, t0, evictions if cold else None)
    n = plan.entries
    session.report(EVENT_LOOP, 1.0, "event loop done",
                   figure=f"{top.median:.0f} events/s" if top.median is not None else None)
    return EventLoop.from_rate(engine, len(plan.fields), top.median,
                               plan.compressed_bytes / n if n else 0.0,
                               plan.uncompressed_bytes / n if n else 0.0,
                               cold_m, warm_m, analysis_name)


# -- ROOT's RNTupleReader --------------------------------------------------------------------
ROOT_CODE = r"""
#include <ROOT/RField.hxx>
#include <ROOT/RNTupleModel.hxx>
#include <ROOT/RNTupleReader.hxx>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace hep_advisor_rntuple {
// Loads entries [0, entries) of the fields named; returns the seconds of the loop alone
// (negative when the RNTuple cannot be opened).
double loop(const char *path, const char *name, const std::vector<std::string> &fields,
            long entries)
{
   std::unique_ptr<ROOT::RNTupleReader> reader;
   {
      auto probe = ROOT::RNTupleReader::Open(name, path);
      const auto &desc = probe->GetDescriptor();
      auto model = ROOT::RNTupleModel::CreateBare();
      for (const auto &f : fields) {
         const auto &fd = desc.GetFieldDescriptor(desc.FindFieldId(f));
         model->AddField(ROOT::RFieldBase::Create(f, fd.GetTypeName()).Unwrap());
      }
      reader = ROOT::RNTupleReader::Open(std::move(model), name, path);
   }
   auto entry = reader->GetModel().CreateEntry();
   const long n = std::min<long>(entries, reader->GetNEntries());
   auto t0 = std::chrono::steady_clock::now();
   for (long i = 0; i < n; ++i)
      reader->LoadEntry(i, *entry);
   auto t1 = std::chrono::steady_clock::now();
   return std::chrono::duration<double>(t1 - t0).count();
}
}
"""
def import_root_rntuple() -> Any:
    """``import ROOT`` (through the ROOT engine's loader) and declare the RNTuple loop once."""
    from .rootengine import declare_once, import_root

    return declare_once(import_root(), ROOT_CODE, "the RNTuple loop")


def root_ntuple_pass(plan: NtuplePlan,
                     check: Callable[[], None] | None = None) -> tuple[int, float]:
    """Read the plan once with ROOT's ``RNTupleReader``: (entries, seconds of the loops)."""
    root = import_root_rntuple()
    fields = root.std.vector["std::string"]()
    for x in plan.fields:
        fields.push_back(x)
    seconds = 0.0
    entries = 0
    for part in plan.parts:
        if check is not None:
            check()
        s = float(root.hep_advisor_rntuple.loop(part.path, plan.name, fields, part.entries))
        if s < 0:
            raise ValueError(f"ROOT cannot read RNTuple {plan.name!r} of {part.path}")
        seconds += s
        entries += part.entries
    return entries, seconds


__all__ = [
    "NotForRNTuple", "NtuplePart", "NtuplePlan", "collect_pages", "measure_rntuple_decompression",
    "measure_rntuple_event_loop", "page_locations", "plan_rntuple_reads", "read_ntuple_pass",
    "root_ntuple_pass",
]
