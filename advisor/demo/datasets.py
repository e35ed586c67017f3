"""The demo and example datasets (the default demo lives in the cache directory, ``paths``).

Three datasets show the shapes of data that HEP analyses read, and the problems they bring:

``small_files/``
    many small files (100 events each) of an ESD-like tree with hundreds of branches;
``merged/``
    the same events in one file, merged plainly (each input's clusters and baskets kept, as a
    fast ``hadd`` leaves them);
``flat/``
    a flat tree of 20 branches, once per compression: ZLIB-1, LZ4-4, ZSTD-5, LZMA-7, none.

A ``manifest.json`` records what each writer was told (branches, entries, compression, cluster
size).  A dataset directory is built in a temporary sibling and renamed into place when complete,
so an interrupted run leaves nothing half-written.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from hep_advisor._version import __version__
from hep_advisor.demo.spec import ESD, FLAT, Chunk, TreeSpec, make_chunk
from hep_advisor.pipeline.paths import default_demo_dir

MANIFEST = "manifest.json"
FLAT_COMPRESSIONS: tuple[tuple[str, int], ...] = (
    ("ZLIB", 1), ("LZ4", 4), ("ZSTD", 5), ("LZMA", 7), ("none", 0),
)
WRITERS = ("uproot", "root")

#: Called with (step done, steps, message).
Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class Scale:
    """How big the datasets are.  ``default`` is the demo; ``tiny`` is for tests."""

    small_files: int
    events_per_file: int
    flat_entries: int
    flat_chunk: int

    @classmethod
    def named(cls, name: str) -> Scale:
        return SCALES[name]


SCALES = {
    "default": Scale(small_files=64, events_per_file=100, flat_entries=200_000, flat_chunk=50_000),
    "tiny": Scale(small_files=6, events_per_file=20, flat_entries=4_000, flat_chunk=1_000),
}


@dataclass(frozen=True)
class DatasetInfo:
    """One dataset and what its writer was told."""

    name: str
    path: str  # relative to the demo directory
    description: str
    tree: str
    files: int
    branches: int
    entries: int
    algorithm: str
    level: int
    #: entries per write call: with uproot, one basket per branch each; with ROOT, 0 (ROOT's
    #: default basket size and AutoFlush decide)
    chunk_entries: int


@dataclass(frozen=True)
class Task:
    path: str
    spec_name: str
    seeds: tuple[int, ...]
    entries_per_chunk: int
    algorithm: str
    level: int


SPECS: dict[str, TreeSpec] = {"esd": ESD, "flat": FLAT}


def _plan(scale: Scale, writer: str) -> tuple[list[DatasetInfo], list[Task]]:
    n, epf = scale.small_files, scale.events_per_file
    small_seeds = [1000 + i for i in range(n)]
    tasks = [
        Task(f"small_files/esd_{i:03d}.root", "esd", (seed,), epf, "ZLIB", 1)
        for i, seed in enumerate(small_seeds)
    ]
    if writer != "root":  # with ROOT, the merged file is hadd's (see make_datasets)
        tasks.append(Task("merged/esd_merged.root", "esd", tuple(small_seeds), epf, "ZLIB", 1))
    uproot_chunk = writer == "uproot"
    infos = [
        DatasetInfo("small_files", "small_files", f"{n} small files of {epf} events",
                    ESD.name, n, ESD.n_branches, n * epf, "ZLIB", 1, epf if uproot_chunk else 0),
        DatasetInfo("merged", "merged", "the same events merged plainly into one file "
                    "(the inputs' small clusters kept)",
                    ESD.name, 1, ESD.n_branches, n * epf, "ZLIB", 1,
                    epf if uproot_chunk else 0),
    ]
    chunks = max(1, scale.flat_entries // scale.flat_chunk)
    for alg, level in FLAT_COMPRESSIONS:
        tag = alg.lower() if alg in ("LZ4", "none") else f"{alg.lower()}{level}"
        rel = f"flat/pythia_{tag}.root"
        tasks.append(Task(rel, "flat", tuple(range(chunks)), scale.flat_chunk, alg, level))
        infos.append(DatasetInfo(f"flat_{tag}", rel, f"flat {FLAT.n_branches}-branch tree, "
                                 f"{alg}{'-' + str(level) if level else ''}", FLAT.name, 1,
                                 FLAT.n_branches, chunks * scale.flat_chunk, alg, level,
                                 scale.flat_chunk if uproot_chunk else 0))
    # the slowest (LZMA) first, so the pool stays busy
    tasks.sort(key=lambda t: (t.algorithm != "LZMA", t.path))
    return infos, tasks


def _run_task(args: tuple[Task, str, str]) -> str:
    task, root, writer = args
    spec = SPECS[task.spec_name]
    chunks = (make_chunk(spec, task.entries_per_chunk, s) for s in task.seeds)
    out = os.path.join(root, task.path)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    _write(writer, out, spec, chunks, task.algorithm, task.level)
    return task.path


def _write(writer: str, path: str, spec: TreeSpec, chunks: Iterable[Chunk], algorithm: str,
           level: int) -> None:
    if writer == "root":
        from hep_advisor.demo.root_writer import write_tree as write_root

        write_root(path, spec, chunks, algorithm, level)
    else:
        from hep_advisor.demo.uproot_writer import write_tree

        write_tree(path, spec, chunks, algorithm, level)


def make_datasets(
    directory: str | os.PathLike[str],
    writer: str = "uproot",
    scale: str | Scale = "default",
    progress: Progress | None = None,
    jobs: int | None = None,
) -> Path:
    """Write the example datasets into ``directory`` (created; must not hold a manifest yet).

    Returns the directory.  Files are written in a temporary sibling directory that is renamed
    into place at the end; on any failure or interruption it is removed.
    """
    if writer not in WRITERS:
        raise ValueError(f"unknown writer {writer!r} (choose from {', '.join(WRITERS)})")
    if writer == "root":
        from hep_advisor.demo.root_writer import require_root

        require_root()
    sc = scale if isinstance(scale, Scale) else Scale.named(scale)
    target = Path(directory).expanduser().resolve()
    if (target / MANIFEST).exists():
        raise FileExistsError(f"{target}: already holds demo datasets ({MANIFEST})")
    if target.exists() and any(target.iterdir()):
        raise FileExistsError(f"{target}: directory is not empty")
    target.parent.mkdir(parents=True, exist_ok=True)
    infos, tasks = _plan(sc, writer)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.partial-", dir=target.parent))
    t0 = time.perf_counter()
    try:
        n_jobs = jobs or min(len(tasks), os.cpu_count() or 1)
        args = [(t, str(staging), writer) for t in tasks]
        done = 0
        if n_jobs > 1:
            with ProcessPoolExecutor(max_workers=n_jobs) as pool:
                for rel in pool.map(_run_task, args):
                    done += 1
                    if progress:
                        progress(done, len(tasks), rel)
        else:
            for a in args:
                rel = _run_task(a)
                done += 1
                if progress:
                    progress(done, len(tasks), rel)
        if writer == "root":
            from hep_advisor.demo.root_writer import plain_merge

            # the merged file is ROOT's own fast merge of the small files
            merged = staging / "merged" / "esd_merged.root"
            merged.parent.mkdir(exist_ok=True)
            plain_merge(sorted(str(p) for p in (staging / "small_files").glob("*.root")),
                        str(merged))
        manifest = {
            "producer": {"name": "hep-advisor", "version": __version__},
            "writer": writer,
            "scale": asdict(sc),
            "elapsed_s": round(time.perf_counter() - t0, 3),
            "datasets": [asdict(i) for i in infos],
        }
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        os.sync()  # flushed, so that read tests can evict the files from the page cache
        if target.exists():
            target.rmdir()
        os.rename(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def read_manifest(directory: str | os.PathLike[str]) -> dict:
    return json.loads((Path(directory) / MANIFEST).read_text())


def ensure_demo(writer: str = "uproot", progress: Progress | None = None) -> Path:
    """The default demo datasets, created on first use in the cache directory and reused."""
    d = default_demo_dir(writer)
    if (d / MANIFEST).exists():
        return d
    return make_datasets(d, writer=writer, progress=progress)

