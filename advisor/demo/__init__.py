"""Demo and example datasets that show the shapes of DOMAIN.md (written with uproot or ROOT)."""

from .datasets import (
    FLAT_COMPRESSIONS,
    MANIFEST,
    SCALES,
    WRITERS,
    DatasetInfo,
    Scale,
    default_demo_dir,
    ensure_demo,
    make_datasets,
    read_manifest,
)
from .spec import ESD, FLAT, Chunk, Collection, TreeSpec, make_chunk

__all__ = [
    "ESD",
    "FLAT",
    "FLAT_COMPRESSIONS",
    "MANIFEST",
    "SCALES",
    "WRITERS",
    "Chunk",
    "Collection",
    "DatasetInfo",
    "Scale",
    "TreeSpec",
    "default_demo_dir",
    "ensure_demo",
    "make_chunk",
    "make_datasets",
    "read_manifest",
]
