"""The fixed cost of one basket read, separated from the cost per byte (uproot, warm).

Reading a branch costs, beyond a fixed cost per call, a fixed time per basket (uproot finds
the basket, fetches its bytes, parses its header, decompresses it, interprets it and
concatenates it with the others) and a time per MB.  With tiny baskets the per-basket part
dominates: a plainly merged file of small files reads at half the speed of the same events
rewritten with larger baskets (``hadd -O``).

*How.*  The branches of one of the dataset's own files (of the kind that holds the most
baskets: flat, jagged, ...; the per-basket cost differs between kinds) are sorted by their
mean compressed bytes per basket, and ``GROUPS`` groups are taken along that order (the
smallest baskets, the largest, and between), so that the groups' bytes per basket differ
many-fold.  Each group is read warm as the event loop reads (one step of ``TTree.iterate``,
array cache off) over two entry ranges from the start: one that spans each branch's first
basket, and one that spans many baskets (at most ``MAX_BASKETS`` baskets and ``MAX_BYTES``
compressed).  The difference of the two times removes the fixed cost of the call; over the
groups it is

    dt_g = dn_g t_basket + dMB_g / r

(``dn_g`` baskets and ``dMB_g`` compressed MB more in the long range, counted from the
branches' basket layout), fitted by non-negative least squares.  The reads are timed in CPU
seconds of the process (``time.process_time``): warm, they wait for no device, so that is the
time they take on an idle machine, and other users' processes do not inflate it (wall-clock
timings of a few ms scatter by a factor of two on a busy machine).  One repetition (every group,
both ranges) gives one estimate; the repetitions give the spread.  Per-basket costs of ROOT
(C++) differ and are not measured here.

Where the candidate files' branches hold a single basket each (small files), or baskets of
about the same size on every branch (flat trees), a few branches of one file are copied twice
into a temporary file in the system's temporary directory, once in many small baskets and once
in a few large ones (the same bytes), measured in the same way, and removed: the data itself
is never written.
"""

from __future__ import annotations

import math
import os
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .results import BasketCost, BasketGroup, Conditions
from .runner import OutOfTime, Session, measurement

TEST = "basket_cost"
#: Groups of branches, along the order of their bytes per basket.
GROUPS = 4
#: Branches per group at least and at most (more where the branches hold few baskets each).
MIN_GROUP_BRANCHES = 4
MAX_GROUP_BRANCHES = 16
#: Baskets more the long range of a group reads than the short one, at least (when the layout
#: allows), to lift the difference well above the timing noise.
TARGET_EXTRA_BASKETS = 64
#: The long range of a group reads at most this many baskets and compressed bytes.
MAX_BASKETS = 160
MAX_BYTES = 2e6
#: The largest files searched for one with several baskets per branch (opening a tree with
#: hundreds of branches takes tens of ms; files written alike are alike).
CANDIDATES = 3
#: Files opened at most while looking for the tree (a dataset may mix trees).
MAX_OPENED = 32
#: Repetitions at least (where they fit the share) and at most; more than the least only while
#: they fit the share and the estimates still scatter.
MIN_REPEATS = 3
MAX_REPEATS = 9
STABLE_SPREAD = 0.10
#: For single-basket files: baskets per branch in the temporary copy, and what the copy takes
#: in units of the search for a file (that opened it), about.
COPY_BASKETS = 32
COPY_FIND = 2.0
#: The copy holds at most this many compressed bytes of the source's branches (its first
#: entries): a large file's whole branches would take many seconds to copy.
COPY_MAX_BYTES = 8e6
#: ... and at most this many per second of the test's share (the copy is written twice).
COPY_BYTES_PER_S = 3e6
#: The groups' bytes per basket must differ at least this much to tell baskets from bytes.
MIN_SIZE_RATIO = 2.0


@dataclass(frozen=True)
class _Branch:
    name: str
    starts: np.ndarray  # first entry of each basket
    nbytes: np.ndarray  # compressed bytes of each basket (key included)

    @property
    def mean_bytes(self) -> float:
        return float(self.nbytes.mean()) if len(self.nbytes) else 0.0


@dataclass(frozen=True)
class _Group:
    tree: str
    branches: tuple[str, ...]
    short_stop: int
    long_stop: int
    extra_baskets: int
    extra_mb: float
    baskets: int  # read by both ranges together
    mb: float


def _layout(tree: Any, names: Sequence[str]) -> list[_Branch]:
    out = []
    for name in names:
        b = tree[name]
        offsets = np.asarray(b.entry_offsets, dtype=np.int64)
        n = len(offsets) - 1
        written = int(b.member("fWriteBasket"))
        nbytes = np.zeros(n)
        k = min(n, written)
        nbytes[:k] = np.asarray(b.member("fBasketBytes"))[:k]
        out.append(_Branch(name, offsets[:-1], nbytes))
    return out


def _count(branches: Sequence[_Branch], stop: int) -> tuple[int, float]:
    """Baskets and compressed MB that reading entries [0, stop) fetches."""
    n, nbytes = 0, 0.0
    for b in branches:
        k = int(np.searchsorted(b.starts, stop, side="left"))
        n += k
        nbytes += float(b.nbytes[:k].sum())
    return n, nbytes / 1e6


def _group(tree: str, branches: Sequence[_Branch], entries: int) -> _Group | None:
    """The two ranges of one group: the first basket of each branch, and as many baskets as
    the bounds allow."""
    ends = sorted({int(e) for b in branches for e in (*b.starts[1:], entries)} - {0})
    if not ends:
        return None
    short = ends[0]
    n0, mb0 = _count(branches, short)
    best = None
    for stop in ends[1:]:
        n, mb = _count(branches, stop)
        if best is not None and (n > MAX_BASKETS or mb > MAX_BYTES / 1e6):
            break
        best = (stop, n, mb)
    if best is None or best[1] <= n0:
        return None
    stop, n1, mb1 = best
    return _Group(tree, tuple(b.name for b in branches), short, stop, n1 - n0, mb1 - mb0,
                  n0 + n1, mb0 + mb1)


def _dominant(tree: Any, names: Sequence[str]) -> list[str]:
    """The branches of the kind (uproot's interpretation: flat, jagged, ...) that holds the
    most baskets: the per-basket cost differs between kinds, and the event loop pays mostly
    that of the commonest.  All of them where that kind has too few branches."""
    kinds: dict[str, list[str]] = {}
    baskets: dict[str, int] = {}
    for n in names:
        b = tree[n]
        try:
            kind = type(b.interpretation).__name__
        except Exception:
            continue
        kinds.setdefault(kind, []).append(n)
        baskets[kind] = baskets.get(kind, 0) + int(b.num_baskets)
    if not baskets:
        return list(names)
    top = max(baskets, key=lambda k: baskets[k])
    return kinds[top] if len(kinds[top]) >= 2 * MIN_GROUP_BRANCHES else list(names)


def _groups(tree: Any, names: Sequence[str]) -> list[_Group]:
    """Groups of branches along their bytes per basket (see the module's notes), of the
    commonest kind where it has enough of them."""
    groups = _groups_of(tree, _dominant(tree, names))
    if len(groups) < 2 or _size_ratio(groups) < MIN_SIZE_RATIO:
        groups = _groups_of(tree, names)
    return groups


def _groups_of(tree: Any, names: Sequence[str]) -> list[_Group]:
    entries = int(tree.num_entries)
    tree_name = str(tree.object_path).lstrip("/").split(";")[0]
    layout = [b for b in _layout(tree, names) if len(b.starts) >= 2 and b.mean_bytes > 0]
    if len(layout) < 2:
        return []
    layout.sort(key=lambda b: b.mean_bytes)
    per_branch = float(np.median([len(b.starts) for b in layout]))
    k = math.ceil(TARGET_EXTRA_BASKETS / max(per_branch - 1.0, 1.0))
    k = max(MIN_GROUP_BRANCHES, min(MAX_GROUP_BRANCHES, k))
    g = max(2, min(GROUPS, len(layout) // max(k, 1)))
    k = max(1, min(k, len(layout) // g))
    out = []
    for i in range(g):
        centre = round(i * (len(layout) - 1) / (g - 1))
        lo = min(max(0, centre - k // 2), len(layout) - k)
        group = _group(tree_name, layout[lo:lo + k], entries)
        if group is not None:
            out.append(group)
    return out


def _size_ratio(groups: Sequence[_Group]) -> float:
    """How many times more bytes per basket the groups' extra baskets hold, largest over
    smallest."""
    per = [g.extra_mb / g.extra_baskets for g in groups if g.extra_baskets > 0]
    if not per:
        return 1.0
    return max(per) / min(per) if min(per) > 0 else math.inf


def _fit(extra_s: Sequence[float], groups: Sequence[_Group]) -> tuple[float, float]:
    """(seconds per basket, seconds per MB) from the groups' time differences (NNLS)."""
    from scipy.optimize import nnls

    a = np.array([[g.extra_baskets, g.extra_mb] for g in groups], dtype=float)
    y = np.asarray(extra_s, dtype=float)
    scale = np.maximum(a.max(axis=0), 1e-12)  # columns of comparable size
    x, _ = nnls(a / scale, y)
    x = x / scale
    return float(x[0]), float(x[1])


def _branch_names(tree: Any, branches: Sequence[str] | None) -> list[str]:
    from .readplan import leaf_branches

    if branches:
        missing = [b for b in branches if b not in tree]
        if missing:
            raise ValueError(f"no branch {missing[0]} in tree {tree.name!r}")
        return list(branches)
    return leaf_branches(tree)


def _several_baskets(tree: Any, branches: Sequence[str] | None) -> bool:
    """Whether most of the branches hold several baskets (from the metadata alone)."""
    if branches:
        counts = [int(tree[b].member("fWriteBasket")) for b in branches if b in tree]
    else:
        counts = [int(b.member("fWriteBasket")) for b in tree.itervalues(recursive=True)
                  if len(b.branches) == 0]
    return bool(counts) and float(np.median(counts)) >= 2


def _find_file(files: Sequence[str], tree_name: str, branches: Sequence[str] | None,
               session: Session, deadline: float | None = None,
               ) -> tuple[str | None, tuple[str, list[_Group]] | None]:
    """The largest file holding the tree, and the first of the ``CANDIDATES`` largest such
    files whose branches hold several baskets each of many-fold different sizes (with its
    groups), or ``None``.  At most ``MAX_OPENED`` files are looked at, and no more once
    ``deadline`` has passed and a file holds the tree."""
    import uproot

    first = None
    tried = 0
    for path in sorted(files, key=os.path.getsize, reverse=True)[:MAX_OPENED]:
        session.check()
        if first is not None and deadline is not None and session.clock() >= deadline:
            break
        try:
            with uproot.open(path) as f:
                if tree_name not in f:
                    continue
                first = first or path
                tried += 1
                tree = f[tree_name]
                names = _branch_names(tree, branches)  # unknown names refused at once
                groups = _groups(tree, names) if _several_baskets(tree, branches) else []
        except ValueError:
            raise
        except Exception:
            continue
        if len(groups) >= 2 and _size_ratio(groups) >= MIN_SIZE_RATIO:
            return first, (path, groups)
        if tried >= CANDIDATES:
            break
    return first, None


def _chunked_copy(source: str, tree_name: str, branches: Sequence[str] | None,
                  directory: str, max_bytes: float = COPY_MAX_BYTES
                  ) -> tuple[str, list[_Group]]:
    """A temporary file holding a few branches of ``source`` (spread along their bytes)
    twice: as tree ``fine``, written in ``COPY_BASKETS`` chunks (one basket per branch each),
    and as ``coarse``, in an eighth as many: the same bytes in baskets of many-fold different
    sizes.  Its path and the groups to read."""
    import awkward as ak
    import uproot
    from uproot.interpretation.identify import UnknownInterpretation

    with uproot.open(source) as f:
        tree = f[tree_name]
        if branches:
            _branch_names(tree, branches)
            candidates = [tree[n] for n in branches]
        else:
            candidates = [b for b in tree.itervalues(recursive=True) if len(b.branches) == 0]
        sized = sorted((int(b.member("fZipBytes")), b.name) for b in candidates
                       if int(b.member("fZipBytes")) > 0)
        if not sized:
            raise ValueError("no branch with data: no per-basket cost")
        g = min(GROUPS, len(sized))
        k = max(1, min(MIN_GROUP_BRANCHES, len(sized) // g))
        chosen: list[str] = []
        for i in range(g):
            centre = round(i * (len(sized) - 1) / max(g - 1, 1))
            lo = min(max(0, centre - k // 2), len(sized) - k)
            for _, name in sized[lo:lo + k]:
                try:
                    readable = not isinstance(tree[name].interpretation,
                                              UnknownInterpretation)
                except Exception:
                    readable = False
                if readable and name not in chosen:
                    chosen.append(name)
        if not chosen:
            raise ValueError("no branch uproot can read: no per-basket cost")
        zipped = sum(int(tree[name].member("fZipBytes")) for name in chosen)
        stop = tree.num_entries
        if zipped > max_bytes:
            stop = max(8 * COPY_BASKETS, int(stop * max_bytes / zipped))
        arrays = tree.arrays(chosen, entry_stop=stop, library="ak")
    out = os.path.join(directory, "baskets.root")
    n = len(arrays)
    with uproot.recreate(out) as w:
        for name, chunks in (("fine", COPY_BASKETS), ("coarse", max(1, COPY_BASKETS // 8))):
            step = max(1, math.ceil(n / chunks))
            for start in range(0, n, step):
                part = arrays[start:start + step]
                data = {b: part[b] for b in chosen}
                if start == 0:
                    w.mktree(name, {b: ak.type(data[b]).content for b in chosen})
                w[name].extend(data)
    with uproot.open(out) as f:
        groups = _groups_of(f["fine"], chosen) + _groups_of(f["coarse"], chosen)
    return out, groups


def _timed(tree: Any, branches: Sequence[str], stop: int) -> float:
    """CPU seconds (of the whole process) to read entries [0, stop) of ``branches`` as the
    event loop does: one step of ``iterate``."""
    t0 = time.process_time()
    for arrays in tree.iterate(list(branches), entry_stop=stop, step_size=stop, library="ak"):
        del arrays
    return time.process_time() - t0


def measure_basket_cost(session: Session, files: Sequence[str], tree_name: str,
                        branches: Sequence[str] | None, share_s: float) -> BasketCost:
    """Seconds per basket read (and compressed MB/s beyond it), warm, with uproot, on a part
    of ``files``; see the module's notes.  Raises ``ValueError`` where it cannot separate the
    two (one branch, or baskets of about the same size everywhere)."""
    import uproot

    session.report(TEST, 0.0, "finding a file with several baskets per branch")
    clock = session.clock
    t_start = clock()
    deadline = t_start + share_s
    # the search takes at most half the share (a file found is used, a copy takes time)
    first, found = _find_file(files, tree_name, branches, session, t_start + share_s / 2)
    if first is None:
        raise ValueError(f"no tree {tree_name!r} in the largest files")
    with tempfile.TemporaryDirectory(prefix="hep-advisor-baskets-") as tmp:
        if found is None:
            # the copy reads a few branches of a file and writes them twice: about twice
            # what opening the files took
            session.need(COPY_FIND * (clock() - t_start), "copying a few branches into a "
                         "temporary file (the files hold one basket per branch)", deadline)
            session.report(TEST, 0.1, "copying a few branches into a temporary file")
            path, groups = _chunked_copy(first, tree_name, branches, tmp, min(
                COPY_MAX_BYTES, max(1e6, COPY_BYTES_PER_S * session.left(deadline))))
            source = ("a temporary copy of a few branches in small and in large baskets "
                      "(removed)")
        else:
            path, groups = found
            source = os.path.basename(path)
        if len(groups) < 2 or _size_ratio(groups) < MIN_SIZE_RATIO:
            raise ValueError("too few branches with several baskets of different sizes: a "
                             "basket's cost cannot be told from its bytes")
        costs: list[float] = []
        per_mb: list[float] = []
        extras: list[list[float]] = []  # per repetition, per group
        with uproot.open(path, array_cache=None) as f:
            trees = {g.tree: f[g.tree] for g in groups}
            for g in groups:  # warm-up: interpretations built, pages cached
                session.check()
                # the set-up is done: past the share, the reads may take what the tests after it
                # do not need
                if session.clock() >= deadline and session.spare() <= 0:
                    raise OutOfTime("no time left for its reads: the tests after it need theirs")
                _timed(trees[g.tree], g.branches, g.long_stop)
            while True:
                session.check()
                t0 = clock()
                extra = []
                for g in groups:
                    short = _timed(trees[g.tree], g.branches, g.short_stop)
                    long = _timed(trees[g.tree], g.branches, g.long_stop)
                    extra.append(long - short)
                    session.bytes_read += int(g.mb * 1e6)
                t_basket, t_mb = _fit(extra, groups)
                extras.append(extra)
                costs.append(t_basket)
                per_mb.append(t_mb)
                rep_s = clock() - t0
                session.report(TEST, min(1.0, (clock() - t_start) / max(share_s, 1e-9)),
                               "reading groups of branches over two ranges")
                if len(costs) >= MAX_REPEATS or clock() + rep_s > deadline:
                    break  # fewer than MIN_REPEATS where no more fit the share
                if len(costs) >= MIN_REPEATS:
                    s = measurement(costs, "s", Conditions(cache="warm")).spread
                    if s is not None and s <= STABLE_SPREAD:
                        break
    per_rep = sum(g.baskets for g in groups)
    m = measurement(costs, "s", Conditions(
        cache="warm", bytes_per_sample=int(sum(g.mb for g in groups) * 1e6),
        note=f"on {source}: {len(groups)} groups of branches, {per_rep} baskets per "
             "repetition, array cache off, CPU time of the process"))
    basket_s = m.median if m.median is not None and m.median > 0 else None
    t_mb = float(np.median(per_mb)) if per_mb else 0.0
    session.report(TEST, 1.0, "per basket read",
                   f"{1e6 * basket_s:.0f} µs per basket" if basket_s is not None else None)
    return BasketCost(basket_s=basket_s,
                      mb_per_s=1.0 / t_mb if basket_s is not None and t_mb > 0 else None,
                      baskets=per_rep, measurement=m,
                      # the dataset's own baskets only: a copy is compressed as uproot
                      # writes (ZLIB), not as the dataset, whose decompression rate the
                      # model would take away from them
                      # (``hep_advisor.models.calcosts.basket_cost``)
                      groups=() if found is None else tuple(
                          BasketGroup(g.extra_baskets, round(g.extra_mb, 6),
                                      tuple(round(e[i], 7) for e in extras))
                          for i, g in enumerate(groups)))


__all__ = ["measure_basket_cost"]
