"""The parts of ``try`` that touch files: the scratch directory, the sample written in it, and
the timed read before and after (cold: every file is evicted from the page cache first, with
the read tests' own ``posix_fadvise(DONTNEED)`` helper, and the eviction checked)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Entries per read chunk: about this many uncompressed bytes (uproot's iterate step the
#: model assumes: one read call per 50 MB of arrays).
STEP_BYTES = 50_000_000


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
    from .cache import cache_dir

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
               check: Callable[[], None] | None = None) -> Read:
    """Open every file, read ``branches`` (default: every leaf branch) of ``tree_name`` into
    arrays chunk by chunk (entries up to ``entry_stop[path]`` where given) and call
    ``analysis`` on each chunk, as the calibration's event loop does; opening is timed too."""
    import uproot

    from probes.readtests.pagecache import evict

    from .apply_verify import leaf_branches

    confirmed: bool | None = None
    if cold:
        confirmed = all([evict(p).cold for p in paths])
    entries = 0
    t0 = time.perf_counter()
    for p in paths:
        with uproot.open(p) as f:
            tree = f[tree_name]
            names = list(branches) if branches else leaf_branches(tree)
            stop = (entry_stop or {}).get(p, int(tree.num_entries))
            total = sum(int(tree[b].member("fTotBytes")) for b in names)
            n = max(int(tree.num_entries), 1)
            step = max(1, int(n * STEP_BYTES / max(total, 1)))
            for arrays in tree.iterate(names, step_size=step, entry_stop=stop, library="ak"):
                if analysis is not None:
                    analysis(arrays)
                entries += len(arrays)
                if check is not None:
                    check()
    return Read(time.perf_counter() - t0, entries, confirmed)


def write_entry_range(src: str, tree_name: str, dst: str, entries: int,
                      entries_per_basket: int, compression: int | None) -> None:
    """The first ``entries`` of ``src``'s tree, rewritten with uproot into ``dst`` with about
    ``entries_per_basket`` entries per basket and ROOT compression setting ``compression``
    (default: the source's)."""
    import uproot

    from .apply_verify import leaf_branches

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

    from .apply_verify import leaf_branches

    with uproot.open(path) as f:
        tree = f[tree_name]
        names = leaf_branches(tree)
        n = int(tree.num_entries)
        baskets = sum(tree[b].num_baskets for b in names) or 1
        return n, n * len(names) / baskets


def uncompressed_per_branch_entry(path: str, tree_name: str) -> float:
    """Mean uncompressed bytes per branch and entry."""
    import uproot

    from .apply_verify import leaf_branches

    with uproot.open(path) as f:
        tree = f[tree_name]
        names = leaf_branches(tree)
        tot = sum(int(tree[b].member("fTotBytes")) for b in names)
        return tot / max(1, len(names) * int(tree.num_entries))
