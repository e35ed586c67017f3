"""Write demo trees with uproot: one basket per branch per chunk, so one cluster per chunk."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hep_advisor.demo.spec import Chunk, TreeSpec


#: Compression names the datasets use -> uproot codec objects.
def uproot_compression(name: str, level: int) -> Any:
    import uproot

    if name == "none":
        return None
    return {"ZLIB": uproot.ZLIB, "LZ4": uproot.LZ4, "ZSTD": uproot.ZSTD, "LZMA": uproot.LZMA}[
        name
    ](level)


def _arrays(spec: TreeSpec, chunk: Chunk) -> dict[str, Any]:
    import awkward as ak

    data: dict[str, Any] = dict(chunk.scalars)
    for c in spec.collections:
        counts, fields = chunk.collections[c.name]
        data[c.name] = ak.zip({f: ak.unflatten(v, counts) for f, v in fields.items()})
    return data


def write_tree(
    path: str, spec: TreeSpec, chunks: Iterable[Chunk], algorithm: str, level: int
) -> None:
    """Write ``chunks`` to a new file at ``path`` (each chunk becomes one basket per branch)."""
    import uproot

    with uproot.recreate(path, compression=uproot_compression(algorithm, level)) as f:
        tree = None
        for chunk in chunks:
            if tree is None:
                tree = f.mktree(spec.name, _branch_types_for_mktree(spec))
            tree.extend(_arrays(spec, chunk))


def _branch_types_for_mktree(spec: TreeSpec) -> dict[str, Any]:
    import awkward as ak
    import numpy as np

    types: dict[str, Any] = {name: np.dtype(dt) for name, dt in spec.scalars}
    for c in spec.collections:
        record = ak.types.RecordType(
            [ak.types.NumpyType(str(np.dtype(dt))) for _, dt in c.fields],
            [f for f, _ in c.fields],
        )
        types[c.name] = ak.types.ListType(record)
    return types
