"""Which part of a dataset a read test reads: the files in order up to a byte bound, the last
one cut where the bound falls inside it, ending on a boundary where every branch starts a new
basket where that keeps most of it (:func:`whole_baskets`), and the baskets each part's reads
decompress (:class:`BasketTouch`, :meth:`Plan.overread`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

DEFAULT_MAX_BYTES = 200_000_000
#: A plan cut inside a file ends at the last cluster boundary before its cut (or with the
#: files before it) where that keeps at least this fraction of its entries
#: (:func:`whole_baskets`).
SNAP_KEEP = 0.5
#: A planned file's baskets are kept (16 bytes each, to count what a part of it reads) up to
#: this many; beyond, what its part reads beyond its share is not counted.
MAX_TOUCH_BASKETS = 200_000


@dataclass(frozen=True)
class BasketTouch:
    """Where the selected branches' baskets begin (entries, sorted) and their bytes on disk
    (cumulative, in that order): what a read of entries [0, n) decompresses."""

    starts: Any  # numpy int64
    cum_bytes: Any  # numpy float64, cumulative over ``starts``

    @classmethod
    def of(cls, tree: Any, branches: Sequence[str]) -> BasketTouch | None:
        """The baskets of ``branches``; ``None`` beyond ``MAX_TOUCH_BASKETS`` of them."""
        import numpy as np

        if sum(int(tree[b].member("fWriteBasket")) for b in branches) > MAX_TOUCH_BASKETS:
            return None
        starts, sizes = [], []
        for b in branches:
            branch = tree[b]
            n = int(branch.member("fWriteBasket"))
            starts.append(np.asarray(branch.member("fBasketEntry"))[:n].astype(np.int64))
            sizes.append(np.asarray(branch.member("fBasketBytes"))[:n].astype(np.float64))
        s = np.concatenate(starts) if starts else np.zeros(0, np.int64)
        order = np.argsort(s, kind="stable")
        z = np.concatenate(sizes)[order] if sizes else np.zeros(0)
        return cls(s[order], np.cumsum(z))

    def read(self, entries: int) -> tuple[int, float]:
        """(baskets, bytes) that a read of entries [0, ``entries``) decompresses."""
        import numpy as np

        i = int(np.searchsorted(self.starts, entries, side="left"))
        return i, float(self.cum_bytes[i - 1]) if i > 0 else 0.0

    @property
    def total(self) -> tuple[int, float]:
        return len(self.starts), float(self.cum_bytes[-1]) if len(self.cum_bytes) else 0.0


@dataclass(frozen=True)
class FilePart:
    """The part of one file a sample reads: ``entries`` from the start of the tree."""

    path: str
    entries: int
    tree_entries: int
    compressed_bytes: int  # of the selected branches, whole tree
    uncompressed_bytes: int
    #: entries where every selected branch starts a new basket (cluster boundaries), the
    #: tree's end included; empty: not known
    boundaries: tuple[int, ...] = ()
    #: the selected branches' baskets, to count what the part's reads decompress
    touch: BasketTouch | None = field(default=None, compare=False, repr=False)

    @property
    def fraction(self) -> float:
        return self.entries / self.tree_entries if self.tree_entries else 0.0


class PartTotals:
    """Totals over a plan's ``parts`` (each with path, entries, compressed and uncompressed
    bytes, and the fraction of them read)."""

    parts: tuple[Any, ...]

    @property
    def entries(self) -> int:
        return sum(p.entries for p in self.parts)

    @property
    def compressed_bytes(self) -> float:
        return sum(p.compressed_bytes * p.fraction for p in self.parts)

    @property
    def uncompressed_bytes(self) -> float:
        return sum(p.uncompressed_bytes * p.fraction for p in self.parts)

    @property
    def paths(self) -> list[str]:
        return [p.path for p in self.parts]


@dataclass(frozen=True)
class Plan(PartTotals):
    tree_name: str
    branches: tuple[str, ...]
    parts: tuple[FilePart, ...]
    skipped: tuple[str, ...] = ()

    def overread(self) -> tuple[float, float] | None:
        """What a pass over the plan decompresses against its share of the files' baskets:
        (bytes, baskets), each the ratio of the baskets that begin before each part's end to
        the part's fraction of all of them (1 for whole files, more for a part that ends
        inside baskets: :func:`whole_baskets`); ``None`` where a part's baskets are not
        known."""
        got_b = got_n = share_b = share_n = 0.0
        for p in self.parts:
            if p.touch is None:
                return None
            n, b = p.touch.read(p.entries)
            all_n, all_b = p.touch.total
            got_n, got_b = got_n + n, got_b + b
            share_n, share_b = share_n + all_n * p.fraction, share_b + all_b * p.fraction
        if share_b <= 0 or share_n <= 0:
            return None
        return got_b / share_b, got_n / share_n


def whole_baskets(parts: Sequence[FilePart]) -> tuple[FilePart, ...]:
    """``parts`` with the last one, where it ends inside its file, cut back to the last
    boundary where every branch starts a new basket (:attr:`FilePart.boundaries`), or left
    out where the parts before it are whole, wherever that keeps at least ``SNAP_KEEP`` of the
    entries; else as they are.  A read of entries [0, n) decompresses every basket that
    begins before n, so a part ending inside baskets reads more than its share of the file's
    bytes.  On 1,200 branches of 8 KB baskets (LZ4, clusters of 1,980 entries), 2,247 of a
    file's 5,000 entries read 2,640 baskets and 17.6 MB where their share is 1,726 baskets and
    10.0 MB, and the event loop's rate, scaled to whole files, predicted them read at 9.4 MB/s
    where a job read them at 17.2; on files of 12,000 entries in clusters of 10,000, a
    loop over two files and 3,582 entries of a third read 34,000 entries' baskets
    (benchmarks/RESULTS.md, stop 46)."""
    if not parts or parts[-1].entries >= parts[-1].tree_entries:
        return tuple(parts)
    last = parts[-1]
    total = sum(p.entries for p in parts)
    before = total - last.entries
    cuts = [b for b in last.boundaries if b <= last.entries] + ([0] if before > 0 else [])
    if not cuts or before + max(cuts) < SNAP_KEEP * total:
        return tuple(parts)
    cut = max(cuts)
    return (*parts[:-1], replace(last, entries=cut)) if cut > 0 else tuple(parts[:-1])


def common_boundaries(tree: Any, branches: Sequence[str]) -> tuple[int, ...]:
    """Entries (sorted, the tree's end included) where every one of ``branches`` starts a new
    basket: the clusters' boundaries, for a tree written with ROOT's AutoFlush."""
    import numpy as np

    common: set[int] | None = None
    for b in branches:
        branch = tree[b]
        n = int(branch.member("fWriteBasket"))
        entry = {int(x) for x in np.asarray(branch.member("fBasketEntry"))[1:n]}
        common = entry if common is None else common & entry
        if not common:
            break
    return (*sorted(common or set()), int(tree.num_entries))


# -- planning --------------------------------------------------------------------------------
def leaf_branches(tree: Any) -> list[str]:
    """Every branch uproot can read into an array (sub-branches, not their parents)."""
    from uproot.interpretation.identify import UnknownInterpretation

    out = []
    for name, b in tree.iteritems(recursive=True):
        if len(b.branches) > 0:
            continue
        try:
            interp = b.interpretation
        except Exception:
            continue
        if isinstance(interp, UnknownInterpretation):
            continue
        out.append(name)
    return out


def plan_reads(
    files: Sequence[str],
    tree_name: str,
    branches: Sequence[str] | None = None,
    max_bytes: float = DEFAULT_MAX_BYTES,
    deadline: float | None = None,
    clock: Callable[[], float] = time.perf_counter,
    max_files: int | None = None,
) -> Plan:
    """Which files (and how many entries of the last) to read: files in order until the
    selected branches reach ``max_bytes`` compressed (or ``max_files`` are planned).  Files
    without the tree (or that cannot be opened) are skipped and named in ``skipped``.  Raises
    ``ValueError`` when a requested branch does not exist, or when no file can be read."""
    import uproot

    parts: list[FilePart] = []
    skipped: list[str] = []
    selected: tuple[str, ...] | None = tuple(branches) if branches else None
    total = 0.0
    for path in files:
        if total >= max_bytes or (deadline is not None and parts and clock() >= deadline) \
                or (max_files is not None and len(parts) >= max_files):
            break
        try:
            with uproot.open(path) as f:
                if tree_name not in f:
                    skipped.append(f"{path}: no tree {tree_name!r}")
                    continue
                tree = f[tree_name]
                if selected is None:
                    selected = tuple(leaf_branches(tree))
                missing = [b for b in selected if b not in tree]
                if missing:
                    shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
                    raise ValueError(f"no branch {shown} in tree {tree_name!r} of {path}")
                zipped = sum(int(tree[b].member("fZipBytes")) for b in selected)
                unzipped = sum(int(tree[b].member("fTotBytes")) for b in selected)
                n = int(tree.num_entries)
                bounds = common_boundaries(tree, selected) if selected else ()
                touch = BasketTouch.of(tree, selected) if selected else None
        except ValueError:
            raise
        except Exception as exc:
            from ..rootfile import one_line

            skipped.append(f"{path}: {one_line(exc)}")
            continue
        if n <= 0:
            continue
        entries = n
        if zipped > 0 and total + zipped > max_bytes:
            entries = max(1, min(n, int(n * (max_bytes - total) / zipped)))
        parts.append(FilePart(path, entries, n, zipped, unzipped, bounds, touch))
        total += zipped * entries / n
        if entries < n:  # the bound falls inside this file
            break
    if not parts:
        why = "; ".join(skipped[:3]) if skipped else "no entries"
        raise ValueError(f"no readable tree {tree_name!r} in the files ({why})")
    return Plan(tree_name, selected or (), whole_baskets(parts), tuple(skipped))
