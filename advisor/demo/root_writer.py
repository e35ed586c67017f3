"""Write demo trees with ROOT itself, and merge them with ROOT's ``hadd``.

Unlike :mod:`.uproot_writer`, ROOT chooses the layout: default basket buffers (32000 bytes,
resized by ``OptimizeBaskets`` at the first flush) and the default ``AutoFlush`` (the first
cluster closes at 30 MB, then every that many entries).  Branches are named and typed exactly as
uproot names them, so both writers' files hold the same branches and values.

ROOT is imported lazily: importing this module does not import ROOT.  Entries are filled by a
small C++ loop (declared once per process) that copies numpy columns into the branch buffers, so
no Python code runs per entry.
"""

from __future__ import annotations

import shutil
import subprocess
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hep_advisor.demo.spec import FLOAT, INT, Chunk, TreeSpec

#: Compression names the datasets use -> ROOT's algorithm codes (setting = code*100 + level).
ALGORITHMS = {"ZLIB": 1, "LZMA": 2, "LZ4": 4, "ZSTD": 5}
LEAF_TYPES = {FLOAT: "F", INT: "I"}
NOT_INSTALLED = "ROOT is not installed: pip install 'hep-advisor[root]'"

#: The per-entry loop.  Every value is 4 bytes (float32 or int32).  ``scalars`` holds
#: (buffer, data) address pairs, ``counters`` (buffer, counts) pairs, one per collection, and
#: ``fields`` (collection index, buffer, data) triples; ``offsets`` (one per collection) is the
#: first item of the chunk's first entry and is advanced as entries are filled.
_FILL_CODE = r"""
#include <cstdint>
#include <cstring>
#include "TTree.h"

namespace hep_advisor_demo {
Long64_t fill_chunk(TTree *tree, Long64_t entries,
                    Long64_t n_scalars, const std::uint64_t *scalars,
                    Long64_t n_counters, const std::uint64_t *counters,
                    Long64_t n_fields, const std::uint64_t *fields,
                    std::int64_t *offsets)
{
   for (Long64_t i = 0; i < entries; ++i) {
      for (Long64_t s = 0; s < n_scalars; ++s) {
         const char *data = reinterpret_cast<const char *>(scalars[2 * s + 1]);
         std::memcpy(reinterpret_cast<void *>(scalars[2 * s]), data + 4 * i, 4);
      }
      for (Long64_t c = 0; c < n_counters; ++c) {
         const std::int32_t *counts = reinterpret_cast<const std::int32_t *>(counters[2 * c + 1]);
         std::memcpy(reinterpret_cast<void *>(counters[2 * c]), counts + i, 4);
      }
      for (Long64_t f = 0; f < n_fields; ++f) {
         const Long64_t c = static_cast<Long64_t>(fields[3 * f]);
         const std::int32_t *counts = reinterpret_cast<const std::int32_t *>(counters[2 * c + 1]);
         const char *data = reinterpret_cast<const char *>(fields[3 * f + 2]);
         std::memcpy(reinterpret_cast<void *>(fields[3 * f + 1]), data + 4 * offsets[c],
                     4 * static_cast<std::size_t>(counts[i]));
      }
      for (Long64_t c = 0; c < n_counters; ++c)
         offsets[c] += reinterpret_cast<const std::int32_t *>(counters[2 * c + 1])[i];
      if (tree->Fill() < 0)
         return -1;
   }
   return entries;
}
}
"""

_declared = False


def _import_root() -> Any:
    """``import ROOT``, without its "alpha stage" warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import ROOT

    return ROOT


def require_root() -> None:
    """Raise a one-line :class:`RuntimeError` if ROOT cannot be imported."""
    try:
        _import_root()
    except ImportError:
        raise RuntimeError(NOT_INSTALLED) from None


def _root() -> Any:
    """ROOT, with the fill loop declared (once per process)."""
    global _declared
    try:
        ROOT = _import_root()
    except ImportError:
        raise RuntimeError(NOT_INSTALLED) from None
    if not _declared:
        if not ROOT.gInterpreter.Declare(_FILL_CODE):
            raise RuntimeError("ROOT could not compile the demo writer's fill loop")
        _declared = True
    return ROOT


def compression_setting(algorithm: str, level: int) -> int:
    """ROOT's compression setting (algorithm*100 + level) for a dataset's compression name."""
    if algorithm == "none":
        return 0
    return ALGORITHMS[algorithm] * 100 + level


def _addresses(rows: Sequence[tuple[int, ...]], width: int) -> np.ndarray:
    """Address tuples as one flat uint64 array (never empty, so it always has a pointer)."""
    flat = [x for row in rows for x in row] or [0] * width
    return np.asarray(flat, dtype=np.uint64)


def _column(a: np.ndarray, dtype: str) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.dtype(dtype))


class _Writer:
    """One tree: its branches, their buffers (kept alive here) and the fill loop."""

    def __init__(self, ROOT: Any, spec: TreeSpec) -> None:
        self.ROOT = ROOT
        self.spec = spec
        self.tree = ROOT.TTree(spec.name, spec.name)  # in the current directory: the file
        ROOT.SetOwnership(self.tree, False)  # the file deletes it when it closes
        self.scalar_bufs: dict[str, np.ndarray] = {}
        self.counter_bufs: dict[str, np.ndarray] = {}
        self.field_bufs: dict[str, np.ndarray] = {}
        self.capacity: dict[str, int] = {}
        for name, dt in spec.scalars:
            buf = np.zeros(1, dtype=dt)
            self.tree.Branch(name, buf, f"{name}/{LEAF_TYPES[dt]}")
            self.scalar_bufs[name] = buf
        for c in spec.collections:
            buf = np.zeros(1, dtype=INT)
            self.tree.Branch(c.counter, buf, f"{c.counter}/I")
            self.counter_bufs[c.name] = buf
            self.capacity[c.name] = 16
            for f, dt in c.fields:
                name = f"{c.name}_{f}"
                buf = np.zeros(16, dtype=dt)
                self.tree.Branch(name, buf, f"{name}[{c.counter}]/{LEAF_TYPES[dt]}")
                self.field_bufs[name] = buf

    def _grow(self, collection: str, need: int) -> None:
        """Give a collection's field branches buffers of at least ``need`` items."""
        if need <= self.capacity[collection]:
            return
        size = max(need, 2 * self.capacity[collection])
        c = next(c for c in self.spec.collections if c.name == collection)
        for f, dt in c.fields:
            name = f"{c.name}_{f}"
            buf = np.zeros(size, dtype=dt)
            self.tree.GetBranch(name).SetAddress(buf)
            self.field_bufs[name] = buf
        self.capacity[collection] = size

    def fill(self, chunk: Chunk) -> None:
        """Append the chunk's entries (one C++ call)."""
        keep: list[np.ndarray] = []  # the columns, alive until the loop has run

        def addr(a: np.ndarray) -> int:
            keep.append(a)
            return int(a.ctypes.data)

        scalars = [
            (addr(self.scalar_bufs[n]), addr(_column(chunk.scalars[n], dt)))
            for n, dt in self.spec.scalars
        ]
        counters, fields = [], []
        for i, c in enumerate(self.spec.collections):
            counts, values = chunk.collections[c.name]
            counts = _column(counts, INT)
            if chunk.entries and len(counts) != chunk.entries:
                raise ValueError(f"{c.counter}: {len(counts)} counts for {chunk.entries} entries")
            self._grow(c.name, int(counts.max()) if len(counts) else 0)
            counters.append((addr(self.counter_bufs[c.name]), addr(counts)))
            total = int(counts.sum())
            for f, dt in c.fields:
                name = f"{c.name}_{f}"
                column = _column(values[f], dt)
                if len(column) != total:
                    raise ValueError(f"{name}: {len(column)} values for {total} items")
                fields.append((i, addr(self.field_bufs[name]), addr(column)))
        offsets = np.zeros(max(len(counters), 1), dtype=np.int64)
        filled = self.ROOT.hep_advisor_demo.fill_chunk(
            self.tree,
            chunk.entries,
            len(scalars),
            _addresses(scalars, 2),
            len(counters),
            _addresses(counters, 2),
            len(fields),
            _addresses(fields, 3),
            offsets,
        )
        if filled != chunk.entries:
            raise RuntimeError(f"ROOT failed to fill tree {self.spec.name!r}")


def write_tree(
    path: str, spec: TreeSpec, chunks: Iterable[Chunk], algorithm: str, level: int
) -> None:
    """Write ``chunks`` to a new file at ``path`` as tree ``spec.name``, ROOT's layout.

    Compression setting ``algorithm*100 + level`` (``none``: 0); ROOT's default basket size and
    AutoFlush.  Entries are appended chunk after chunk.
    """
    ROOT = _root()
    setting = compression_setting(algorithm, level)
    f = ROOT.TFile.Open(str(path), "RECREATE", "", setting)
    if not f or f.IsZombie():
        raise RuntimeError(f"{path}: ROOT cannot create the file")
    try:
        f.cd()
        writer = _Writer(ROOT, spec)
        for chunk in chunks:
            writer.fill(chunk)
        writer.tree.Write()
        writer.tree.ResetBranchAddresses()  # the numpy buffers may go now
    except BaseException:
        f.Close()
        Path(path).unlink(missing_ok=True)  # no half-written file
        raise
    f.Close()


def hadd_path() -> str:
    """ROOT's ``hadd``: the one next to the ROOT package, else the one on ``PATH``."""
    try:
        ROOT = _import_root()
    except ImportError:
        raise RuntimeError(NOT_INSTALLED) from None
    here = Path(ROOT.__file__).parent / "bin" / "hadd"
    if here.is_file():
        return str(here)
    found = shutil.which("hadd")
    if found is None:
        raise RuntimeError("ROOT's hadd not found (neither next to ROOT nor on PATH)")
    return found


def _hadd(options: list[str], inputs: list[str], output: str) -> None:
    """Run ``hadd OPTIONS output inputs...``; a failure is one line with hadd's last words."""
    if not inputs:
        raise RuntimeError("hadd: no input files")
    cmd = [hadd_path(), *options, str(output), *map(str, inputs)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        Path(output).unlink(missing_ok=True)  # hadd may leave a partial file
        lines = [ln.strip() for ln in (proc.stderr or proc.stdout).splitlines() if ln.strip()]
        last = lines[-1] if lines else "no message"
        raise RuntimeError(f"hadd failed (exit {proc.returncode}): {last}")


def plain_merge(inputs: list[str], output: str) -> None:
    """Fast-merge ``inputs`` into ``output`` with ``hadd -f``.

    The inputs' baskets are copied as they are, and their cluster ranges recorded where they have
    any (a tree that never reached its first AutoFlush has none).  ``-f`` writes ZLIB-1 (101):
    inputs with another setting are recompressed by hadd's slower method."""
    _hadd(["-f"], inputs, output)


def optimized_merge(inputs: list[str], output: str) -> None:
    """Merge ``inputs`` into ``output`` with ``hadd -f -O``: baskets re-optimised."""
    _hadd(["-f", "-O"], inputs, output)
