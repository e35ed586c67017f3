"""The reader's CPU on remote data: one of the dataset's files fetched whole over the link,
then read by the same reader with no link in the way (what the link time of
:mod:`hep_advisor.models.remote_reads` is combined with).

The file is copied into a private temporary directory (removed afterwards, whatever happens;
never beside the data) and read from there, in the page cache:

- uproot: ``TTree.arrays()`` of every branch (library ``ak``, uproot's default; its default
  local source); the class models are built by an untimed first pass.
- ROOT: the ``GetEntry`` loop with ROOT's default TTreeCache (the engine's C++ helper,
  ``rootengine.cxx``); ROOT's one-time set-up (libraries, dictionaries: about 0.15 s) is paid
  by an untimed first pass.

The file is the one nearest the median size among those whose fetch fits the time given.
Up to ``PASSES`` timed passes (the median is used; the machine's other work only slows a
pass).
"""

from __future__ import annotations

import gc
import io
import os
import shutil
import statistics
import tempfile
import threading
import time
from collections.abc import Sequence
from typing import Any

from ..remote_files import RemoteError, read_head
from .remote_results import RemoteClientCost, RemoteReaderCpu
from .runner import Cancelled, spread

#: timed passes at most (after the untimed one)
PASSES = 5
#: the share of the time left after the fetch the CPU passes take at most, when the reader's
#: client is measured after them (the client's tests have fixed costs: a first pass, a process)
PASS_SHARE = 0.25


def pick_file(sizes: Sequence[tuple[str, int]], max_bytes: float) -> tuple[str, int] | None:
    """The file nearest the median size among those of at most ``max_bytes``."""
    fits = sorted((s, u) for u, s in sizes if 0 < s <= max_bytes)
    if not fits:
        return None
    s, u = fits[len(fits) // 2]
    return u, s


def _baskets(tree: Any) -> tuple[int, int, tuple[str, int] | None]:
    """(compressed bytes, count) of every basket of ``tree`` (uproot), keys included, and
    the top-level branch with the fewest such bytes (its name and bytes; ``None`` where no
    branch has baskets)."""
    nbytes = n = 0
    least: tuple[str, int] | None = None
    for b in tree.itervalues(recursive=True):
        mine = 0
        for i in range(b.num_baskets):
            mine += int(b.basket_compressed_bytes(i))
            n += 1
        nbytes += mine
        if mine and b.parent is tree and (least is None or mine < least[1]):
            least = (b.name, mine)
    return nbytes, n, least


def measure_reader_cpu(url: str, size: int, tree_name: str, engine: str, budget_s: float, *,
                       cancel: threading.Event | None = None,
                       clients: bool = True,
                       skipped: list[tuple[str, str]] | None = None) -> RemoteReaderCpu:
    """The reader's CPU on ``url`` (``size`` bytes, tree ``tree_name``) within about
    ``budget_s``, the fetch included; with ``clients``, what is left after the passes (they
    take at most ``PASS_SHARE`` of it) for the reader's own client through the link on the
    same file (:mod:`.remote_client`; a client left out for lack of time is a line in
    ``skipped``).  Raises :class:`RemoteError` (one line) when the CPU cannot be measured (the
    client's failure is a note)."""
    import uproot

    from .remote_client import measure_clients

    t_end = time.perf_counter() + budget_s
    try:
        t0 = time.perf_counter()
        blob = read_head(url, size)
        fetch_s = time.perf_counter() - t0
    except OSError as exc:
        raise RemoteError(f"fetching {url} for the CPU test: {exc}") from None
    left = t_end - time.perf_counter()
    passes_s = left * PASS_SHARE if clients else left
    if cancel is not None and cancel.is_set():
        raise Cancelled()
    try:
        with uproot.open(io.BytesIO(blob)) as f:
            nbytes, n, least = _baskets(f[tree_name])
            entries = int(f[tree_name].num_entries)
    except Exception as exc:  # a file uproot cannot read: one line, the caller goes on
        raise RemoteError(f"{url}: {type(exc).__name__}: {exc}") from None
    work = tempfile.mkdtemp(prefix="hep-advisor-cpu-")
    try:
        path = os.path.join(work, "sample.root")
        with open(path, "wb") as out:
            out.write(blob)
        collector: dict[str, float | None] = {}
        entry_s = None
        if engine == "root":
            ones: list[float] = []
            opens, loops = _root_passes(path, tree_name, passes_s, cancel, collector,
                                        least[0] if least else None, ones)
            note = ("ROOT GetEntry loop, default TTreeCache, on a temporary copy in the page "
                    "cache (one-time set-up paid first)")
            if ones and loops and least is not None:
                entry_s = _entry_cost(statistics.median(loops), statistics.median(ones),
                                      nbytes, least[1], entries)
                note += (f"; passes on branch {least[0]} alone: {_ms(ones)} ms, so "
                         + (f"{entry_s * 1e6:.2f} us per entry" if entry_s is not None
                            else "no cost per entry told apart"))
        else:
            opens, loops = _uproot_passes(path, tree_name, passes_s, cancel, collector)
            note = ("uproot arrays() of every branch (library ak) on a temporary copy in the "
                    "page cache")
        measured: tuple[RemoteClientCost, ...] = ()
        if clients:
            try:
                local_s = statistics.median(loops) if loops else 0.0
                measured = measure_clients(
                    url, tree_name, path, engine, t_end - time.perf_counter(), cancel=cancel,
                    one_pass_s=fetch_s + local_s, start_s=collector.get("setup_s") or 0.0,
                    skipped=skipped)
            except (RemoteError, OSError, ValueError, KeyError) as exc:
                note += f"; the reader's client through the link was not measured: {exc}"
    finally:
        shutil.rmtree(work, ignore_errors=True)
    loop = statistics.median(loops) if loops else None
    return RemoteReaderCpu(
        engine=engine, url=url, file_bytes=len(blob), basket_bytes=nbytes, baskets=n,
        open_s=statistics.median(opens) if opens else None, loop_s=loop,
        mb_s=loop / (nbytes / 1e6) if loop is not None and nbytes else None,
        samples=tuple(loops), spread=spread(list(loops)), note=note, clients=measured,
        gc_pause_s=collector.get("pause_s"), gc_gen0_per_pass=collector.get("gen0"),
        gc_s=collector.get("per_pass_s"), entries=entries, entry_s=entry_s)


def _entry_cost(all_s: float, one_s: float, all_bytes: int, one_bytes: int,
                entries: int) -> float | None:
    """The loop's cost per entry from a pass on every branch (``all_s``) and one on a single
    branch (``one_s``): each is ``entries x entry_s + bytes x per_byte``; ``None`` where the
    two do not give a cost per byte above zero and a cost per entry at or above zero."""
    if entries <= 0 or all_bytes <= one_bytes or all_s <= one_s:
        return None
    per_byte = (all_s - one_s) / (all_bytes - one_bytes)
    fixed = one_s - one_bytes * per_byte
    return fixed / entries if fixed >= 0 else None


def _ms(xs: Sequence[float]) -> str:
    return ", ".join(f"{x * 1e3:.1f}" for x in xs)


def _young_collections() -> int:
    return int(gc.get_stats()[0]["collections"])


def _uproot_passes(path: str, tree_name: str, budget_s: float,
                   cancel: threading.Event | None,
                   collector: dict[str, float | None] | None = None
                   ) -> tuple[list[float], list[float]]:
    """Timed passes (open, read); with ``collector``, Python's garbage collections too
    (see ``RemoteReaderCpu.gc_s``): young collections counted per timed pass, and after the
    last pass's read a full collection timed with the arrays still held."""
    import uproot

    t_end = time.perf_counter() + budget_s
    opens: list[float] = []
    loops: list[float] = []
    young: list[int] = []
    pause = None
    for k in range(PASSES + 1):
        if cancel is not None and cancel.is_set():
            raise Cancelled()
        g0 = _young_collections()
        t0 = time.perf_counter()
        with uproot.open(path) as f:
            tree = f[tree_name]
            t1 = time.perf_counter()
            arrays = tree.arrays()
            t2 = time.perf_counter()
            g1 = _young_collections()
            last = k == PASSES or (time.perf_counter() + (t2 - t0) > t_end and k > 0)
            if collector is not None and last and gc.isenabled():
                c0 = time.perf_counter()
                gc.collect()
                pause = time.perf_counter() - c0
            del arrays
        if k:  # the first pass builds the class models: untimed
            opens.append(t1 - t0)
            loops.append(t2 - t1)
            young.append(g1 - g0)
        if last:
            break
    if collector is not None and young and pause is not None:
        th0, th1, th2 = gc.get_threshold()  # th0 = 0: no automatic collections
        per = statistics.median(young)
        collector.update(pause_s=pause, gen0=float(per),
                         per_pass_s=pause * per / ((th1 + 1) * (th2 + 1)) if th0 else 0.0)
    return opens, loops


def _root_passes(path: str, tree_name: str, budget_s: float,
                 cancel: threading.Event | None,
                 collector: dict[str, float | None] | None = None,
                 one: str | None = None, ones: list[float] | None = None
                 ) -> tuple[list[float], list[float]]:
    """Timed passes (open, read) of ROOT's helper; with ``collector``, ``setup_s``: the
    untimed first pass with ROOT's one-time set-up (what a process that loads ROOT pays).
    With branch ``one`` and a list ``ones``, each timed pass is followed by one that reads
    that branch alone, its loop time appended to ``ones``."""
    from .rootengine import import_root

    t_setup = time.perf_counter()
    try:
        root = import_root()
    except Exception as exc:
        raise RemoteError(f"the ROOT engine is not available: {exc}") from None
    t_end = time.perf_counter() + budget_s
    opens: list[float] = []
    loops: list[float] = []
    helper = root.hep_advisor_root.read_pass
    no_branches = root.std.vector["std::string"]()
    just_one = root.std.vector["std::string"]()
    if one is not None:
        just_one.push_back(one)
    for k in range(PASSES + 1):
        if cancel is not None and cancel.is_set():
            raise Cancelled()
        t0 = time.perf_counter()
        res = helper(path, tree_name, no_branches, -1, -1, max(budget_s, 1.0), False)
        dt = time.perf_counter() - t0
        if int(res[0]) != 0:
            raise RemoteError(f"ROOT could not read the copy (status {int(res[0])})")
        if k:  # the first pass pays ROOT's one-time set-up: untimed
            loops.append(float(res[9]))
            opens.append(max(0.0, dt - float(res[9])))
        elif collector is not None:
            collector["setup_s"] = time.perf_counter() - t_setup
        if k and one is not None and ones is not None:
            t1 = time.perf_counter()
            res = helper(path, tree_name, just_one, -1, -1, max(budget_s, 1.0), False)
            dt += time.perf_counter() - t1
            if int(res[0]) == 0:
                ones.append(float(res[9]))
        if time.perf_counter() + dt > t_end and loops:
            break
    return opens, loops


__all__ = ["measure_reader_cpu", "pick_file"]
