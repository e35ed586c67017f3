"""Python's garbage collector, per file, as a program that opens many files pays it.

Opening a file with uproot leaves its models (the file, its directories, the tree, every
branch) in reference cycles, a few thousand objects per file, which only the cyclic garbage
collector frees; reading arrays adds more.  A program reading many small files therefore pays
*full* collections (generation 2) every few files, each walking the whole heap and freeing
the files' cycles: measured on 120 files of 500 entries and 100 branches, 12 full collections
of 60-165 ms, 11.6 ms per file, 9% of the program's time (15-20% for 20 files of 400
branches).  The open test's median leaves them out (they come every ~10 files), the event
loop holds them off while it is timed (``eventloop.no_full_collections``: on files of 300
branches they came in every pass), and the advisor's own heap is not the program's.

So this test runs in a **fresh interpreter** that imports what the program imports (uproot and
awkward), opens the sampled files in turn (cycling), reads each one's first entries with
``arrays`` as the event loop does, and records every collection (``gc.callbacks``).  What it
reports per file:

* the freeing: every full collection's time above an empty one's (the heap walk alone), and a
  final forced collection's for the garbage still pending (after a young one, untimed, has
  freed what young collections free), over the files read;
* the heap walk: an empty full collection's time times the rate CPython runs full collections
  (one per ``(threshold1 + 1) * (threshold2 + 1)`` collections, ``gc.get_threshold()``), from
  the collections counted per file.

Both are measured; the sum is the per-file cost added to the warm open (which already holds
the young collections).  ``python -m probes.readtests.collector SPEC.json`` is the child.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

from .results import Collector, Conditions
from .runner import Context, OutOfTime, measurement

TEST = "collector"
#: the child imports uproot and awkward before it starts; at most this long beyond its share
CHILD_GRACE_S = 30.0
#: entries read per file (the first ones), at most
ENTRIES_PER_FILE = 2000
#: the fewest files the child reads, whatever the share
MIN_FILES = 4
#: ... and at most this many
MAX_FILES = 400
#: datasets of fewer files are not measured: a few files' collections cost tens of ms at most
MIN_DATASET_FILES = 8
#: seconds a fresh interpreter takes to import uproot and awkward and read a first file (the
#: share's part not spent reading), about 1.5 s on this project's machine
IMPORT_S = 1.5


def child(spec: dict[str, Any]) -> dict[str, Any]:
    """In the fresh interpreter: read ``spec["files"]`` in turn for ``spec["share_s"]``."""
    import gc

    import awkward  # noqa: F401  (the program's imports: their objects are the heap walked)
    import uproot

    files: list[str] = spec["files"]
    tree: str = spec["tree"]
    branches: list[str] | None = spec.get("branches")

    def readable(t: Any) -> list[str]:  # every branch uproot reads into an array
        from uproot.interpretation.identify import UnknownInterpretation

        out = []
        for name, b in t.iteritems(recursive=True):
            try:
                if len(b.branches) == 0 and \
                        not isinstance(b.interpretation, UnknownInterpretation):
                    out.append(name)
            except Exception:
                continue
        return out

    skipped: set[str] = set()  # files without the tree, or that fail: read no more
    at = [0]

    def read(path: str) -> bool:
        nonlocal branches
        try:
            with uproot.open(path) as f:
                if tree not in f:
                    raise KeyError(tree)
                t = f[tree]
                if branches is None:
                    branches = readable(t)
                t.arrays(branches, entry_stop=min(t.num_entries, ENTRIES_PER_FILE),
                         library="ak")
        except Exception:
            skipped.add(path)
            return False
        return True

    def read_next() -> None:
        """The next file in turn that reads (a dataset's drawn files may hold other trees:
        the event loop's plan skips them as well)."""
        for _ in range(len(files)):
            path = files[at[0] % len(files)]
            at[0] += 1
            if path not in skipped and read(path):
                return
        raise RuntimeError(f"no file holds a readable tree {tree!r} "
                           f"(first: {files[0] if files else 'none'})")

    read_next()  # first use: interpretations, awkward's kernels
    gc.collect()
    events: list[tuple[int, float]] = []
    started = [0.0]

    def callback(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            events.append((info["generation"], time.perf_counter() - started[0]))

    gc.callbacks.append(callback)
    t0 = time.perf_counter()
    n = 0
    while n < MIN_FILES or (time.perf_counter() - t0 < spec["share_s"] and n < MAX_FILES):
        read_next()
        n += 1
    gc.callbacks.remove(callback)
    gc.collect(1)  # the young generations' garbage: a young collection frees it (not timed)
    t = time.perf_counter()
    gc.collect()  # the garbage still pending: the program pays it at a later full collection
    final = time.perf_counter() - t
    empties = []
    for _ in range(3):
        t = time.perf_counter()
        gc.collect()
        empties.append(time.perf_counter() - t)
    return {"files": n, "events": events, "final_s": final, "empty_s": sorted(empties)[1],
            "threshold": list(gc.get_threshold()), "heap_objects": len(gc.get_objects()),
            "seconds": time.perf_counter() - t0}


def summarise(out: dict[str, Any]) -> Collector:
    """The per-file cost from the child's record (see the module's notes)."""
    n = max(int(out["files"]), 1)
    empty = float(out["empty_s"])
    full = [s for g, s in out["events"] if g == 2]
    every = len(out["events"])  # each collection is one of generation 0's thresholds met
    _, t1, t2 = out["threshold"]
    freeing = (sum(max(s - empty, 0.0) for s in full) + max(out["final_s"] - empty, 0.0)) / n
    walk = empty * every / n / ((t1 + 1) * (t2 + 1))
    per_file = freeing + walk
    m = measurement([per_file], "s", Conditions(
        cache="warm", note=f"{n} files opened and read in a fresh interpreter (uproot, "
        f"awkward imported), {len(full)} full collections among {every}"))
    return Collector(per_file_s=per_file, freeing_s=freeing, walk_s=walk, files=n,
                     full_collections=len(full), collections=every, empty_full_s=empty,
                     heap_objects=int(out["heap_objects"]), measurement=m)


def measure_collector(files: Sequence[str], tree: str, branches: Sequence[str] | None,
                      share_s: float) -> Collector:
    """Run the child on ``files`` for about ``share_s`` seconds of reading (its imports come on
    top); raises ``RuntimeError`` with the child's last line where it fails."""
    spec = {"files": list(files), "tree": tree,
            "branches": list(branches) if branches is not None else None,
            "share_s": max(float(share_s), 0.0)}
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH")
                                else "")
    try:
        proc = subprocess.run([sys.executable, "-m", "hep_advisor.probes.readtests.collector"],
                              input=json.dumps(spec), capture_output=True, text=True,
                              env=env, timeout=share_s + CHILD_GRACE_S, check=False)
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(f"the collector's child ran past {exc.timeout:.0f} s") from None
    lines = (proc.stdout or "").strip().splitlines()
    if proc.returncode != 0 or not lines:
        last = ((proc.stderr or "").strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"the collector's child failed: {last}")
    return summarise(json.loads(lines[-1]))


def step(ctx: Context, share_s: float) -> Collector:
    """The read test (see the module's notes): the drawn files, the event loop's branches;
    skipped where the dataset has fewer than ``MIN_DATASET_FILES`` files or the share would
    not leave time for the child's imports."""
    if ctx.tree.format == "rntuple":
        from .rntuple_loop import NotForRNTuple

        raise NotForRNTuple("not measured for an RNTuple dataset yet (the child reads a TTree)")
    files = max(int(ctx.tree.files), len(ctx.files))
    if files < MIN_DATASET_FILES:
        raise OutOfTime(f"{files} file(s): Python's garbage collector per file is not "
                        f"measured below {MIN_DATASET_FILES} files (counted as 0)")
    if any("://" in f for f in ctx.files):
        raise OutOfTime("remote files: Python's garbage collector per file is not measured "
                        "over a link (counted as 0)")
    session = ctx.session
    session.check()
    session.report(TEST, 0.0, "opening files in a fresh interpreter")
    t0 = session.clock()
    if share_s < IMPORT_S + 0.5:
        raise OutOfTime(f"its share ({share_s:.1f} s) leaves no time beyond the child's "
                        f"imports (about {IMPORT_S:.1f} s)")
    result = measure_collector(ctx.files, ctx.tree.name, ctx.branches, share_s - IMPORT_S)
    session.report(TEST, 1.0, "garbage collector",
                   f"{1e3 * (result.per_file_s or 0):.1f} ms per file "
                   f"({result.files} files, {session.clock() - t0:.1f} s)")
    return result


__all__ = ["TEST", "child", "measure_collector", "step", "summarise"]


if __name__ == "__main__":
    print(json.dumps(child(json.loads(sys.stdin.read()))))
