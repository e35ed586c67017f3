"""The per-file open cost with uproot: open the file and read its trees' metadata, cold (the
file evicted from the page cache first) and warm (the same file again at once)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from .pagecache import Eviction, evict
from .raw import cache_state, eviction_note
from .results import Conditions, OpenOverhead
from .runner import Session, measurement


def open_once(path: str, tree_names: Sequence[str]) -> float:
    """Seconds to ``uproot.open`` a file and read the named trees' metadata."""
    import uproot

    t0 = time.perf_counter()
    with uproot.open(path) as f:
        for name in tree_names:
            if name in f:
                f[name]
    return time.perf_counter() - t0


def open_overhead(session: Session, files: Sequence[str], tree_names: Sequence[str],
                  share_s: float) -> OpenOverhead:
    """Cold and warm open cost over up to ``len(files)`` distinct files (one pair per file);
    at least three files (where there are), even with no share left (``share_s`` 0)."""
    import uproot  # noqa: F401  (its import cost is not part of the open cost)

    open_once(files[0], tree_names)  # first-use set-up (streamers, caches) is not per file
    cold: list[float] = []
    warm: list[float] = []
    evictions: list[Eviction] = []
    t0 = time.perf_counter()
    for i, path in enumerate(files):
        session.check()
        evictions.append(evict(path))
        cold.append(open_once(path, tree_names))
        warm.append(open_once(path, tree_names))
        spent = time.perf_counter() - t0
        session.report("open_cost", min(1.0, spent / share_s) if share_s > 0 else 1.0,
                       f"opened {i + 1} files")
        if spent > share_s and len(cold) >= 3:
            break
    cold_m = measurement(cold, "s", Conditions(cache=cache_state(evictions),
                                               note=eviction_note(evictions)))
    warm_m = measurement(warm, "s", Conditions(cache="warm"))
    session.report("open_cost", 1.0, "open cost",
                   f"{1e3 * (cold_m.median or 0):.1f} ms cold, "
                   f"{1e3 * (warm_m.median or 0):.1f} ms warm")
    return OpenOverhead(cold=cold_m.median, warm=warm_m.median, cold_measurement=cold_m,
                        warm_measurement=warm_m)
