"""The parts of ``try`` that touch files: the scratch directory, the sample written in it, and
the timed read before and after (cold: every file is evicted from the page cache first, with
the read tests' own ``posix_fadvise(DONTNEED)`` helper, and the eviction checked)."""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@contextlib.contextmanager
def scratch_dir(data: Sequence[str], scratch: str | None = None) -> Iterator[Path]:
    """A new directory for the sample, removed afterwards whatever happens (also on Ctrl-C).
    ``scratch``: under that directory; default: the system's temporary directory where it is on
    the data's file system, else the cache directory (``~/.cache/hep-advisor``) where that is,
    else the temporary directory (the comparison then mixes file systems: ``Scratch.note``)."""
    base = Path(scratch) if scratch else _same_fs_base(data[0] if data else ".")
    base.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix="hep-advisor-try-", dir=base))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _same_fs_base(data: str) -> Path:
    try:
        dev = os.stat(data).st_dev
    except OSError:
        return Path(tempfile.gettempdir())
    from hep_advisor.pipeline.cache import cache_dir

    for cand in (Path(tempfile.gettempdir()), cache_dir().parent / "scratch"):
        probe = cand if cand.exists() else cand.parent
        try:
            if os.stat(probe).st_dev == dev and os.access(probe, os.W_OK):
                return cand
        except OSError:
            continue
    return Path(tempfile.gettempdir())


def same_fs(a: str, b: str) -> bool:
    try:
        return os.stat(a).st_dev == os.stat(b).st_dev
    except OSError:
        return False


@dataclass(frozen=True)
class Read:
    """One timed pass: seconds (opening the files included), entries, whether every file was
    confirmed evicted before it (``None``: not attempted, a warm read)."""

    seconds: float
    entries: int
    cold: bool | None


def timed_read(paths: Sequence[str], tree_name: str, branches: Sequence[str] | None = None,
               analysis: Callable[[Any], Any] | None = None,
               entry_stop: dict[str, int] | None = None, cold: bool = True,
               check: Callable[[], None] | None = None, reader: Any = None) -> Read:
    """Open every file and read ``branches`` (default: every leaf branch) of ``tree_name``
    (entries up to ``entry_stop[path]`` where given) the way ``reader`` (a ``ReaderSpec``)
    does (:func:`hep_advisor.probes.readtests.readerpass.read_with`), calling ``analysis`` on
    each chunk of arrays; without a reader, into arrays chunk by chunk as the advisor's own
    event loop does.  Opening is timed too."""
    from hep_advisor.probes.readtests.pagecache import evict
    from hep_advisor.probes.readtests.readerpass import read_with

    confirmed: bool | None = None
    if cold:
        confirmed = all([evict(p).cold for p in paths])
    done = read_with(reader, paths, tree_name, branches, entry_stop, analysis, check)
    return Read(done.seconds, done.entries, confirmed)


#: A timed phase (one read of the sample) shorter than this is read again, cold again, within
#: the same phase, and the phase's time is the mean: a 0.2 s read is too short to time on a
#: loaded machine (scheduling and start-up jitter are a large part of it).
MIN_PHASE_S = 1.0
MAX_REPEATS = 25


def timed_phase(paths: Sequence[str], tree_name: str, branches: Sequence[str] | None,
                analysis: Callable[[Any], Any] | None, entry_stop: dict[str, int] | None,
                repeats: int, check: Callable[[], None] | None = None,
                reader: Any = None) -> Read:
    """``repeats`` cold reads of ``paths`` (each evicted again first, outside the timing): the
    mean seconds of one read."""
    reads = [timed_read(paths, tree_name, branches, analysis, entry_stop, check=check,
                        reader=reader) for _ in range(max(1, repeats))]
    colds = [r.cold for r in reads]
    cold = None if all(c is None for c in colds) else all(c is True for c in colds)
    return Read(sum(r.seconds for r in reads) / len(reads), reads[0].entries, cold)


def repeats_for(seconds: float, min_phase_s: float = MIN_PHASE_S) -> int:
    """Reads per phase so that a phase lasts at least ``min_phase_s``."""
    if seconds >= min_phase_s:
        return 1
    return min(MAX_REPEATS, math.ceil(min_phase_s / max(seconds, 1e-3)))


@dataclass(frozen=True)
class Passes:
    """Alternating timed phases before and after: per-phase reads, and reads per phase."""

    before: tuple[Read, ...]
    after: tuple[Read, ...]
    repeats_before: int
    repeats_after: int


def alternate(before: Sequence[str], after: Sequence[str], tree_name: str, *,
              branches: Sequence[str] | None = None,
              analysis: Callable[[Any], Any] | None = None,
              entry_stop: dict[str, int] | None = None, budget_s: float = 30.0,
              min_pairs: int = 3, max_pairs: int = 30, min_phase_s: float = MIN_PHASE_S,
              check: Callable[[], None] | None = None,
              on_pair: Callable[[int, Read, Read], None] | None = None,
              reader: Any = None) -> Passes:
    """Time ``before`` (up to ``entry_stop``) against ``after`` the same way: one untimed warm
    read of the first file of each (imports, first-call costs), one sizing read of each (how
    many cold reads make a phase of ``min_phase_s``; kept as a pass only when one read is
    enough), then pairs in alternating order (before-after, after-before, ...) until
    ``min_pairs`` are done and the next would pass ``budget_s`` (counted from the call), or
    ``max_pairs``.  ``reader``: the program's reader (a ``ReaderSpec``) times the reads
    (default: the advisor's own loop).  Raises ``ValueError`` when the two read different
    numbers of entries."""
    t0 = time.perf_counter()
    first_stop = {k: v for k, v in (entry_stop or {}).items() if k == before[0]}
    timed_read(before[:1], tree_name, branches, analysis, first_stop, cold=False, check=check,
               reader=reader)
    timed_read(after[:1], tree_name, branches, analysis, cold=False, check=check, reader=reader)
    b1 = timed_read(before, tree_name, branches, analysis, entry_stop, check=check,
                    reader=reader)
    a1 = timed_read(after, tree_name, branches, analysis, check=check, reader=reader)
    if a1.entries != b1.entries:
        raise ValueError(f"the files after the change hold {a1.entries} entries, before "
                         f"{b1.entries}")
    rb, ra = repeats_for(b1.seconds, min_phase_s), repeats_for(a1.seconds, min_phase_s)
    bs: list[Read] = []
    as_: list[Read] = []
    if rb == ra == 1:
        bs.append(b1)
        as_.append(a1)
        if on_pair is not None:
            on_pair(1, b1, a1)
    while len(bs) < max_pairs:
        if check is not None:
            check()
        t = time.perf_counter()
        if len(bs) % 2 == 0:
            b = timed_phase(before, tree_name, branches, analysis, entry_stop, rb, check, reader)
            a = timed_phase(after, tree_name, branches, analysis, None, ra, check, reader)
        else:
            a = timed_phase(after, tree_name, branches, analysis, None, ra, check, reader)
            b = timed_phase(before, tree_name, branches, analysis, entry_stop, rb, check, reader)
        bs.append(b)
        as_.append(a)
        if on_pair is not None:
            on_pair(len(bs), b, a)
        now = time.perf_counter()
        if len(bs) >= min_pairs and (now - t0) + (now - t) > budget_s:
            break
    return Passes(tuple(bs), tuple(as_), rb, ra)


def write_entry_range(src: str, tree_name: str, dst: str, entries: int,
                      entries_per_basket: int, compression: int | None) -> None:
    """The first ``entries`` of ``src``'s tree, rewritten with uproot into ``dst`` with about
    ``entries_per_basket`` entries per basket and ROOT compression setting ``compression``
    (default: the source's)."""
    import uproot

    from hep_advisor.pipeline.apply_verify import leaf_branches

    with uproot.open(src) as f:
        code = compression if compression is not None else int(f.file.fCompress)
        tree = f[tree_name]
        names = leaf_branches(tree)
        with uproot.recreate(dst, compression=uproot.compression.Compression.from_code(code)
                             if code else None) as out:
            for chunk in tree.iterate(names, step_size=max(1, entries_per_basket),
                                      entry_stop=entries, library="ak", how=dict):
                if tree_name not in out:
                    out.mktree(tree_name, {b: a.type for b, a in chunk.items()})
                out[tree_name].extend(chunk)


def basket_entries(path: str, tree_name: str) -> tuple[int, float]:
    """(entries, mean entries per basket over the leaf branches) of one file's tree."""
    import uproot

    from hep_advisor.pipeline.apply_verify import leaf_branches

    with uproot.open(path) as f:
        tree = f[tree_name]
        names = leaf_branches(tree)
        n = int(tree.num_entries)
        baskets = sum(tree[b].num_baskets for b in names) or 1
        return n, n * len(names) / baskets


def uncompressed_per_branch_entry(path: str, tree_name: str) -> float:
    """Mean uncompressed bytes per branch and entry."""
    import uproot

    from hep_advisor.pipeline.apply_verify import leaf_branches

    with uproot.open(path) as f:
        tree = f[tree_name]
        names = leaf_branches(tree)
        tot = sum(int(tree[b].member("fTotBytes")) for b in names)
        return tot / max(1, len(names) * int(tree.num_entries))
