"""The page cache: evict a file from it, and measure how much of a file it holds.

Eviction is ``posix_fadvise(POSIX_FADV_DONTNEED)`` on a read-only descriptor (the file is never
written); residency is ``mincore`` over a private, read-only mapping of the file.  Where either
is unavailable (not Linux, a remote or FUSE file system that ignores the advice, dirty pages),
the result says so instead of pretending the read was cold.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import mmap
import os
from dataclasses import dataclass

PAGE = mmap.PAGESIZE
#: A file counts as evicted when at most this fraction of its pages stay resident.
EVICTED_FRACTION = 0.02

_libc: ctypes.CDLL | None = None


def _lib() -> ctypes.CDLL | None:
    global _libc
    if _libc is None:
        name = ctypes.util.find_library("c")
        try:
            _libc = ctypes.CDLL(name, use_errno=True) if name else None
        except OSError:
            _libc = None
        if _libc is not None:
            _libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
            _libc.mincore.restype = ctypes.c_int
            _libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                                   ctypes.c_int, ctypes.c_long]
            _libc.mmap.restype = ctypes.c_void_p
            _libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
            _libc.munmap.restype = ctypes.c_int
    return _libc


def resident_fraction(path: str) -> float | None:
    """Fraction of ``path``'s pages in the page cache (``None`` where mincore is unavailable)."""
    lib = _lib()
    if lib is None:
        return None
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        if size == 0:
            return 1.0
        addr = lib.mmap(None, size, mmap.PROT_READ, mmap.MAP_PRIVATE, fd, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            return None
        try:
            pages = (size + PAGE - 1) // PAGE
            vec = (ctypes.c_ubyte * pages)()
            if lib.mincore(addr, size, vec) != 0:
                return None
            return sum(b & 1 for b in bytes(vec)) / pages
        finally:
            lib.munmap(addr, size)
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Eviction:
    """What evicting one file achieved: residency before and after (``None``: unknown)."""

    path: str
    resident_before: float | None
    resident_after: float | None

    @property
    def cold(self) -> bool:
        """True only when mincore confirmed that (almost) nothing stayed in the cache."""
        return self.resident_after is not None and self.resident_after <= EVICTED_FRACTION


def evict(path: str) -> Eviction:
    """Drop ``path`` from the page cache (read-only: the file is never written)."""
    before = resident_fraction(path)
    fd = os.open(path, os.O_RDONLY)
    try:
        if hasattr(os, "posix_fadvise"):
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    return Eviction(path=path, resident_before=before, resident_after=resident_fraction(path))


def evict_all(paths: list[str]) -> tuple[Eviction, ...]:
    return tuple(evict(p) for p in paths)
