"""uproot's CPU per basket key in a memory-size step's pre-pass (warm).

``uproot.iterate`` and ``TTree.iterate`` with a step given as a memory size (uproot's default,
``step_size="100 MB"``) first turn it into an entry count: they read the ``TKey`` header of
every basket of the selected branches, one ``source.chunk`` call each (with uproot's default
local source, each one opens the file again).  Cold, the pre-pass's reads go to the device and
the replay times them; warm, each key still costs CPU: the call, the read system calls, the
key's parse.  That CPU is what an entry step saves beside the reads, so T001 credits it; and
the warm event loop of such a reader holds it (it is taken out before the rest is split into
per-call and per-MB costs).  On a network or FUSE file system, where each open costs more,
it can be many times the 47-93 µs measured on this project's machine.

*How.*  The dataset's files are read once sequentially, one after the other (each up to
``MAX_BYTES``, all within a part of the share), so that their pages are cached, until they
hold ``MAX_KEYS`` keys of the selected branches; then each of those keys is read with
``TBranch.basket_uncompressed_bytes``, as the pre-pass reads it (``uproot.open`` with its
default source), all of them in each repetition.  Each repetition is timed in CPU seconds of
the process (``time.process_time``, the read system calls included), over its keys: one
sample.  Nothing is written.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from contextlib import ExitStack
from typing import Any

from .raw import read_sequential
from .results import Conditions, KeyCost
from .runner import Session, measurement

TEST = "key_cost"
#: The file's bytes read into the page cache at most (its keys beyond are not timed).
MAX_BYTES = 64e6
#: The share of the test's time the sequential read may take, at most.
READ_SHARE = 0.4
#: Keys per repetition at most, and at least for a measurement.
MAX_KEYS = 2000
MIN_KEYS = 20
#: Repetitions: at least (where they fit the share) and at most.
MIN_REPEATS = 3
MAX_REPEATS = 7
_CHUNK = 1 << 20
#: A key's header lies within this many bytes of its seek (what must be cached to time it warm).
_KEY_BYTES = 64


def _keys(tree: Any, branches: Sequence[str] | None, limit: int) -> list[tuple[Any, int]]:
    """(branch, basket number) of every normal basket of ``branches`` (every branch) whose
    key ends within the file's first ``limit`` bytes, in the pre-pass's order (branch by
    branch).  An unknown branch: ``ValueError``."""
    names = list(branches) if branches else list(tree.keys(recursive=True))
    out: list[tuple[Any, int]] = []
    for name in names:
        try:
            branch = tree[name]
        except Exception:
            raise ValueError(f"no branch {name!r} in tree {tree.name!r}") from None
        seeks = branch.member("fBasketSeek")
        # the baskets with a key (uproot's count; an embedded basket has none, and no seek)
        for i in range(int(getattr(branch, "_num_normal_baskets", branch.num_baskets))):
            seek = int(seeks[i])
            if seek > 0 and seek + _KEY_BYTES <= limit:
                out.append((branch, i))
    return out


def measure_key_cost(session: Session, files: Sequence[str], tree_name: str,
                     branches: Sequence[str] | None, share_s: float) -> KeyCost:
    """Seconds of CPU per basket key read as a memory-size step's pre-pass reads it, warm,
    with uproot's default source, on ``files`` (the first, then more where it holds fewer
    than ``MAX_KEYS`` keys); see the module's notes.  Raises ``ValueError`` where no file
    holds the tree with baskets, the files read hold fewer than ``MIN_KEYS`` normal baskets
    of the branches, or a branch is unknown.  At least one repetition runs (a few tenths of a
    second at most: ``MAX_KEYS`` keys)."""
    import uproot

    clock = session.clock
    t_start = clock()
    deadline = t_start + share_s
    session.report(TEST, 0.0, "reading the files' pages into the cache")
    with ExitStack() as stack:
        keys: list[tuple[Any, int]] = []
        used: list[str] = []
        for path in files:
            if len(keys) >= MAX_KEYS or (used and clock() >= t_start + READ_SHARE * share_s):
                break
            session.check()
            limit = int(min(os.path.getsize(path), MAX_BYTES))
            got = read_sequential(path, _CHUNK, limit, deadline=t_start + READ_SHARE * share_s,
                                  clock=clock)
            f = stack.enter_context(uproot.open(path))
            try:
                tree = f[tree_name]
            except Exception:
                continue  # a file of the dataset without the main tree
            found = _keys(tree, branches, got)
            if found:
                keys += found[:MAX_KEYS - len(keys)]
                used.append(os.path.basename(path))
        if not used and not keys:
            raise ValueError(f"no tree {tree_name!r} with baskets in the files read")
        if len(keys) < MIN_KEYS:
            raise ValueError(f"fewer than {MIN_KEYS} basket keys in the files read "
                             f"({len(keys)}): the baskets are embedded, or too few")
        for branch, i in keys[:MIN_KEYS]:  # warm-up: the sources and the members ready
            branch.basket_uncompressed_bytes(i)
        samples: list[float] = []
        while len(samples) < MAX_REPEATS:
            session.check()
            w0, c0 = clock(), time.process_time()
            for branch, i in keys:
                branch.basket_uncompressed_bytes(i)
            samples.append((time.process_time() - c0) / len(keys))
            rep_s = clock() - w0
            session.report(TEST, min(1.0, (clock() - t_start) / max(share_s, 1e-9)),
                           "reading basket keys")
            if clock() + rep_s > deadline and (len(samples) >= MIN_REPEATS
                                               or session.spare() < rep_s):
                break  # fewer than MIN_REPEATS where no more fit
    where = used[0] if len(used) == 1 else f"{len(used)} files"
    m = measurement(samples, "s", Conditions(
        cache="warm", note=f"on {where}: {len(keys)} keys per repetition, uproot's default "
        "source, CPU time of the process"))
    key_s = m.median if m.median is not None and m.median > 0 else None
    session.report(TEST, 1.0, "per basket key",
                   f"{1e6 * key_s:.0f} µs per key" if key_s is not None else None)
    return KeyCost(key_s=key_s, keys=len(keys), measurement=m)


__all__ = ["measure_key_cost"]
