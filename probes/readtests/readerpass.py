"""One timed pass of the program's reader over whole files (``try`` times its sample before and
after a change with it): opening every file, reading the branches the way the reader does, as
a program pays it.

- uproot's readers: ``iterate`` at the reader's ``step_size`` (or ``arrays``: each file in one
  call), the reader's ``library``; each chunk handed to ``analysis`` where given.
- ROOT's ``GetEntry`` loops: the compiled loop of :mod:`.rootengine` (its ``TTreeCache`` as the
  reader says), or the PyROOT loop of :mod:`.pyloops` (``loop=python``).
- ``rdataframe``: one ``RDataFrame`` over the files (:func:`.pyloops.rdataframe_pass`).  Its
  actions are compiled the first time a graph of that shape runs in the process: a caller that
  times several passes reads once untimed first (``try`` does).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .readers import ReaderSpec


@dataclass(frozen=True)
class ReaderPass:
    seconds: float
    entries: int


def read_with(spec: ReaderSpec | None, paths: Sequence[str], tree_name: str,
              branches: Sequence[str] | None, entry_stop: dict[str, int] | None = None,
              analysis: Callable[[Any], Any] | None = None,
              check: Callable[[], None] | None = None) -> ReaderPass:
    """``paths`` read by ``spec`` (entries up to ``entry_stop[path]`` where given), timed from
    the first file's opening to the last one's end.  ``analysis`` (uproot readers only) is
    called on each chunk of arrays.  Without a spec, the advisor's own loop (uproot's
    ``iterate`` at about ``DEFAULT_STEP_BYTES`` uncompressed per chunk, as the event loop
    reads).  Raises ``ValueError`` (one line) where it cannot read."""
    stops = entry_stop or {}
    if spec is None or spec.engine == "uproot":
        return _uproot(spec, paths, tree_name, branches, stops, analysis, check)
    if analysis is not None:
        raise ValueError(f"--analysis calls a Python function on uproot's arrays: not with "
                         f"the reader {spec.kind}")
    parts = [(p, int(stops.get(p, -1))) for p in paths]
    names = list(branches or ())
    if spec.kind == "rdataframe":
        from .pyloops import rdataframe_pass

        done = rdataframe_pass(parts, tree_name, names, check)
        return ReaderPass(done.seconds, done.total_entries)
    if spec.loop == "python":
        from .pyloops import pyroot_pass

        done = pyroot_pass(parts, tree_name, names, spec.root_cache_bytes, check)
        return ReaderPass(done.seconds, done.total_entries)
    from .rootengine import RootPart, root_names, run_pass

    root_parts = [RootPart(p, s) for p, s in parts]
    selected = root_names(root_parts, tree_name, names)
    t0 = time.perf_counter()
    result = run_pass(root_parts, tree_name, selected, spec.root_cache_bytes, check=check)
    return ReaderPass(time.perf_counter() - t0, result.total_entries)


def _uproot(spec: ReaderSpec | None, paths: Sequence[str], tree_name: str,
            branches: Sequence[str] | None, stops: dict[str, int],
            analysis: Callable[[Any], Any] | None,
            check: Callable[[], None] | None) -> ReaderPass:
    import uproot

    from .eventloop import DEFAULT_STEP_BYTES
    from .readers import uproot_chunks
    from .readplan import leaf_branches

    entries = 0
    t0 = time.perf_counter()
    for p in paths:
        with uproot.open(p) as f:
            tree = f[tree_name]
            names = list(branches) if branches else leaf_branches(tree)
            stop = stops.get(p, int(tree.num_entries))
            step = 0  # the reader's own step
            if spec is None:  # the advisor's loop: about DEFAULT_STEP_BYTES per chunk
                total = sum(int(tree[b].member("fTotBytes")) for b in names)
                step = max(1, int(max(int(tree.num_entries), 1) * DEFAULT_STEP_BYTES
                                  / max(total, 1)))
            for arrays in uproot_chunks(tree, spec, names, stop, step):
                if analysis is not None:
                    analysis(arrays)
                entries += _length(arrays)
                if check is not None:
                    check()
    return ReaderPass(time.perf_counter() - t0, entries)


def _length(arrays: Any) -> int:
    """Entries in a chunk: an awkward array's length, or a NumPy dict's arrays' length."""
    if isinstance(arrays, dict):
        return len(next(iter(arrays.values()))) if arrays else 0
    return len(arrays)
