"""What ``apply`` and ``try`` check an output against: the decompressed data of every branch.

:func:`data_digest` reads every TTree of a list of files (in order, as if concatenated) with
uproot and keeps, per tree, the entry count and, per leaf branch, a SHA-256 over the branch's
values that does not depend on how the data are split into files, clusters, baskets or read
chunks: for a jagged branch the counts at each level and the flat content are hashed
separately, in entry order.  Two lists of files hold the same data exactly when their digests
are equal, so a merge (the inputs' digest, read one after the other) or a rewrite and a
recompression (one input's digest) can be checked against its output.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hep_advisor.probes.readtests.readplan import leaf_branches

#: Entries per read chunk are chosen so that a chunk holds about this many uncompressed bytes.
CHUNK_BYTES = 50_000_000


@dataclass
class TreeDigest:
    """One tree's entries and, per leaf branch, the hex SHA-256 of its values."""

    entries: int = 0
    branches: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"entries": self.entries, "branches": dict(self.branches)}


Digest = dict[str, TreeDigest]


class _BranchHash:
    """Hashers per nesting level of one branch: the counts of each jagged level, then the flat
    values."""

    def __init__(self) -> None:
        self.levels: list[Any] = []

    def _h(self, level: int) -> Any:
        while len(self.levels) <= level:
            self.levels.append(hashlib.sha256())
        return self.levels[level]

    def feed(self, array: Any) -> None:
        import awkward as ak
        import numpy as np

        a = array
        level = 0
        while _is_list(a):
            counts = np.asarray(ak.to_numpy(ak.num(a, axis=1)), dtype="<i8")
            self._h(level).update(counts.tobytes())
            a = ak.flatten(a, axis=1)
            level += 1
        try:
            flat = np.asarray(ak.to_numpy(a))
            if flat.dtype.kind in "biufc":
                flat = flat.astype(flat.dtype.newbyteorder("<"), copy=False)
                self._h(level).update(np.ascontiguousarray(flat).tobytes())
                return
        except (TypeError, ValueError, AttributeError):
            pass
        h = self._h(level)  # strings, records, options: value by value (slow, but exact)
        for x in ak.to_list(a):
            h.update(repr(x).encode() + b"\x00")

    def hexdigest(self) -> str:
        top = hashlib.sha256()
        for h in self.levels:
            top.update(h.digest())
        return top.hexdigest()


def _is_list(a: Any) -> bool:
    """A jagged or regular list level that is not a string."""
    import awkward as ak

    if not isinstance(a, ak.Array) or a.ndim < 2:
        return False
    return a.layout.parameter("__array__") not in ("string", "bytestring")


def tree_names(path: str) -> list[str]:
    """The TTrees directly in ``path`` (cycle numbers dropped, each name once)."""
    import uproot

    with uproot.open(path) as f:
        names = f.keys(recursive=True, cycle=False,
                       filter_classname=lambda c: c.startswith("TTree"))
    return sorted(set(names))


def data_digest(paths: Sequence[str], trees: Sequence[str] | None = None,
                progress: Callable[[int], None] | None = None,
                check: Callable[[], None] | None = None) -> Digest:
    """The digest of ``paths`` read one after the other (see the module's docstring).
    ``trees``: the tree names (default: every TTree of the first file).  ``progress`` gets the
    compressed bytes of each file once it is read; ``check`` is called between chunks (to
    stop early by raising)."""
    import uproot

    names = list(trees) if trees is not None else tree_names(paths[0]) if paths else []
    hashes: dict[str, dict[str, _BranchHash]] = {n: {} for n in names}
    out: Digest = {n: TreeDigest() for n in names}
    for path in paths:
        with uproot.open(path) as f:
            for name in names:
                if name not in f:
                    raise ValueError(f"{path}: no tree {name!r}")
                tree = f[name]
                leaves = leaf_branches(tree)
                bh = hashes[name]
                if not bh:
                    bh.update({b: _BranchHash() for b in leaves})
                missing = sorted(set(bh) ^ set(leaves))
                if missing:
                    raise ValueError(f"{path}: tree {name!r}: branches differ from the first "
                                     f"file's ({', '.join(missing[:5])})")
                n = int(tree.num_entries)
                out[name].entries += n
                if not leaves or n == 0:
                    continue
                total = sum(int(tree[b].member("fTotBytes")) for b in leaves)
                step = max(1, int(n * CHUNK_BYTES / max(total, 1)))
                for chunk in tree.iterate(leaves, step_size=step, library="ak", how=dict):
                    for b in leaves:
                        bh[b].feed(chunk[b])
                    if check is not None:
                        check()
        if progress is not None:
            progress(os.path.getsize(path))
    for name in names:
        out[name].branches = {b: h.hexdigest() for b, h in sorted(hashes[name].items())}
    return out


def compare(expected: Digest, actual: Digest) -> list[str]:
    """What differs between two digests (empty when the data are the same)."""
    problems: list[str] = []
    for name, want in expected.items():
        got = actual.get(name)
        if got is None:
            problems.append(f"tree {name!r} is missing")
            continue
        if got.entries != want.entries:
            problems.append(f"tree {name!r}: {got.entries} entries, expected {want.entries}")
        for b, h in want.branches.items():
            if b not in got.branches:
                problems.append(f"tree {name!r}: branch {b!r} is missing")
            elif got.branches[b] != h:
                problems.append(f"tree {name!r}: branch {b!r}: checksum of the data differs")
    return problems


def file_sha256(path: str, block: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(block):
            h.update(chunk)
    return h.hexdigest()


def digest_from_json(data: dict[str, Any]) -> Digest:
    return {k: TreeDigest(int(v["entries"]), dict(v["branches"])) for k, v in data.items()}


def digest_to_json(d: Digest) -> dict[str, Any]:
    return {k: v.to_json() for k, v in d.items()}
