"""Demo and example datasets (written with uproot or ROOT) in shapes that HEP analyses meet:
many small files with hundreds of branches, the same events merged plainly into one file, and a
flat tree in each compression algorithm.  :func:`demo_report` advises on them."""

from hep_advisor.demo.datasets import (
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
from hep_advisor.demo.report import DEMO_DATASETS, demo_dataset, demo_report
from hep_advisor.demo.spec import ESD, FLAT, Chunk, Collection, TreeSpec, make_chunk

__all__ = [
    "DEMO_DATASETS",
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
    "demo_dataset",
    "demo_report",
    "ensure_demo",
    "make_chunk",
    "make_datasets",
    "read_manifest",
]
