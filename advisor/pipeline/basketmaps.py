"""The basket maps the replays read: a few of the dataset's files, evenly spread, metadata only,
kept in this process by (path, tree, size, mtime) so that advising the same files again (a
report's formats, the TUI, a refit) does not read them again."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hep_advisor.probes.basketmap import BasketMap
from hep_advisor.probes.readtests.results import Calibration
from hep_advisor.probes.results import DatasetProfile, largest_tree

#: Files whose basket maps a replay reads (spread evenly over the dataset).
REPLAY_MAPS = 8


def fit_maps(cal: Calibration, dataset: DatasetProfile) -> tuple[BasketMap, ...]:
    """The basket maps the model's fit reads a local file's cold device I/Os from
    (``hep_advisor.models.scenarios.calibrated_baseline``): none for remote data."""
    if cal.remote is not None:
        return ()
    return sample_basket_maps(dataset, inputs=dataset.inputs)


def sample_basket_maps(dataset: DatasetProfile, limit: int = REPLAY_MAPS, *,
                       inputs: Sequence[str] = ()) -> tuple[BasketMap, ...]:
    """Basket maps of the largest tree in up to ``limit`` of the dataset's files (evenly
    spread); none where they cannot be read.  The files are the probe's, or those found in
    ``inputs`` where the probe does not list them (a cached probe does not keep its paths)."""
    from hep_advisor.probes.basketmap import read_basket_map

    trees = [t for t in dataset.trees if t.format == "ttree"]
    paths = list(dataset.file_paths)
    if not paths and inputs:
        from hep_advisor.probes.files import discover

        bad = {e.path for e in dataset.errors}
        paths = [f.path for f in discover(inputs).files if f.path not in bad]
    if not trees or not paths:
        return ()
    tree = largest_tree(trees).name
    n = min(limit, len(paths))
    picked = [paths[round(i * (len(paths) - 1) / max(n - 1, 1))] for i in range(n)]
    try:
        return tuple(_basket_map(p, tree, read_basket_map) for p in dict.fromkeys(picked))
    except Exception:  # a replay is an extra: without maps the rules use the rate model
        return ()


#: Basket maps read in this process, by (path, tree, size, mtime): advising the same files
#: again (a report's formats, the TUI) does not read them again.
_MAPS: dict[tuple[str, str, int, int], BasketMap] = {}
_MAPS_KEPT = 64


def _basket_map(path: str, tree: str, read: Callable[[str, str], BasketMap]) -> BasketMap:
    import os

    if "://" in path:  # remote (root://, http(s)://): not kept, it cannot be stat'ed here
        return read(path, tree)
    st = os.stat(path)
    key = (os.path.abspath(path), tree, st.st_size, st.st_mtime_ns)
    if key not in _MAPS:
        if len(_MAPS) >= _MAPS_KEPT:
            _MAPS.pop(next(iter(_MAPS)))
        _MAPS[key] = read(path, tree)
    return _MAPS[key]
