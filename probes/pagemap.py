"""An RNTuple's pages as a basket map, so that a trace's reads of an RNTuple file are
attributed as a TTree's are (:func:`hep_advisor.models.attribution.attribute`).

Each top-level field is a "branch" and each of its columns' pages a "basket" without a key:
its position and on-storage size from the page list (metadata only, through uproot; no page
is read).  A page's entries are its cluster's (a column's elements are not entries: a
collection's items and a nested field's columns count otherwise).  The metadata regions are
the file's (header, keys list, streamers), the anchor's key, and the RNTuple's header, footer
and page-list envelopes.  The map is for attribution only: the reader rules and the replay
model TTree readers, and leave it out.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .basketmap import BasketMap, BranchBaskets, Region, _regions
from .rntuple import RNTUPLE_CLASS, owners

#: ``BasketMap.cluster_source`` of a page map.
PAGE_MAP = "rntuple-pages"


def from_uproot_rntuple(nt: Any, path: str, file_bytes: int, key: Any = None) -> BasketMap:
    """The page map of one uproot RNTuple object (``key``: its anchor's key, for the
    regions)."""
    members = nt.members
    records = list(nt.field_records)
    _, col_top = owners(nt)
    counts = [int(c.num_entries) for c in nt.cluster_summaries]
    bounds = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)]).astype(np.int64)
    entries = int(bounds[-1])
    rows: dict[int, list[tuple[int, int, int]]] = {}  # top field -> (cluster, offset, bytes)
    for c, cluster in enumerate(nt.page_link_list):
        for col, col_pages in enumerate(cluster):
            if col >= len(col_top) or col_pages.suppressed:
                continue
            for page in col_pages.pages:
                loc = page.locator
                rows.setdefault(col_top[col], []).append(
                    (c, int(loc.offset), int(loc.num_bytes)))
    branches = []
    for i, field_id in enumerate(sorted(rows)):
        pages = sorted(rows[field_id])
        cl = np.asarray([p[0] for p in pages], dtype=np.int64)
        seek = np.asarray([p[1] for p in pages], dtype=np.int64)
        nbytes = np.asarray([p[2] for p in pages], dtype=np.int32)
        starts = bounds[np.minimum(cl, len(bounds) - 1)]
        ent = np.concatenate([starts, [entries]]).astype(np.int64)
        total = int(nbytes.sum())
        branches.append(BranchBaskets(str(records[field_id].field_name), i, seek, nbytes, ent,
                                      np.zeros(len(seek), dtype=np.int16), total, total))
    regions = list(_regions(nt.file if hasattr(nt, "file") else nt, key))
    regions.append(Region("rntuple_header", int(members["fSeekHeader"]),
                          int(members["fNBytesHeader"])))
    regions.append(Region("rntuple_footer", int(members["fSeekFooter"]),
                          int(members["fNBytesFooter"])))
    for g in nt.footer.cluster_group_records:
        loc = g.page_list_link.locator
        regions.append(Region("rntuple_pages", int(loc.offset), int(loc.num_bytes)))
    return BasketMap(path, str(nt.name if hasattr(nt, "name") else "rntuple"), file_bytes,
                     entries, tuple(branches), bounds, tuple(regions), cluster_source=PAGE_MAP)


def read_page_map(path: str, name: str | None = None) -> BasketMap:
    """Open ``path`` with uproot and map RNTuple ``name`` (the first when None).  Raises
    ``ValueError`` where the file holds none uproot reads."""
    import uproot  # a heavy import, only where a map is read

    with uproot.open(path) as f:
        if name is None:
            names = [k for k, c in f.classnames().items() if c == RNTUPLE_CLASS]
            if not names:
                raise ValueError(f"{path}: no TTree or RNTuple")
            name = names[0].split(";")[0]
        nt = f[name]
        return from_uproot_rntuple(nt, path, int(f.file.source.num_bytes), f.key(name))


def is_page_map(m: BasketMap) -> bool:
    return m.cluster_source == PAGE_MAP


__all__ = ["PAGE_MAP", "from_uproot_rntuple", "is_page_map", "read_page_map"]
