"""What this machine charges a process for memory it touches for the first time.

A program that reads a ROOT file with uproot builds its arrays in memory: the decompressed
baskets, each branch's array joined from them, awkward's view of the step.  A new process
(every run of the user's program) gets each page of that memory from the kernel on its first
write: a page fault that zeroes a 4 kB page.  The calibration's warm event loop runs again and
again in one process whose heap has grown, so it pays little of that; the program pays it
once per page of its peak memory, and the peak grows with the arrays of one step.  Measured
on this project's machine (uproot 5.7.7, one fresh process per run, warm page cache): a
merged LZ4 file read in 100 MB steps faulted 99,000 pages (0.23-0.42 s of system time, half
of the run) where its six 20 MB-step inputs faulted 32,000; see ``benchmarks/RESULTS.md``.

*How.*  A fresh private anonymous mapping of ``SAMPLE_MB`` (``mmap`` with ``MAP_PRIVATE``, as
the C library maps large allocations; no huge-page advice, so the system's default applies)
is written one byte per page, timed, and unmapped: one sample, seconds per MB.  Repeated while
the share lasts, at least ``MIN_REPEATS`` times.  Nothing touches the disk.  Python's
``mmap.mmap(-1, n)`` maps *shared* memory by default, whose pages the kernel keeps as shared
memory files: on this project's machine their first touch cost 0.86 ms per MB where private
pages cost 0.61 (side by side, seven samples each), and a program's own faults about 0.65
(``benchmarks/lab/check_merge_parts.py``), so the test maps private memory.
"""

from __future__ import annotations

import mmap
import time

from .results import Conditions, FirstTouch
from .runner import Session, measurement

TEST = "first_touch"
#: MB of fresh memory per sample (about 20-40 ms on this project's machine).
SAMPLE_MB = 32
MIN_REPEATS = 3
MAX_REPEATS = 9
_PAGE = mmap.PAGESIZE
#: a private anonymous mapping, as ``malloc`` makes for a large array (where the platform has
#: the flags; elsewhere ``mmap``'s default)
_PRIVATE: dict[str, int] = (
    {"flags": mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS}
    if hasattr(mmap, "MAP_PRIVATE") and hasattr(mmap, "MAP_ANONYMOUS") else {})


def touch_once(mb: int = SAMPLE_MB) -> float:
    """Seconds to write one byte to each page of a fresh anonymous mapping of ``mb`` MB."""
    size = mb * 1_000_000 // _PAGE * _PAGE
    m = mmap.mmap(-1, size, **_PRIVATE)
    try:
        view = memoryview(m)
        t0 = time.perf_counter()
        view[::_PAGE] = b"\x01" * (size // _PAGE)
        seconds = time.perf_counter() - t0
        view.release()
    finally:
        m.close()
    return seconds


def measure_first_touch(session: Session, share_s: float) -> FirstTouch:
    """Seconds per MB of memory a process writes for the first time (see the module's
    notes), within ``share_s`` seconds (``MIN_REPEATS`` samples at least)."""
    clock = session.clock
    t0 = clock()
    session.report(TEST, 0.0, "touching fresh memory")
    touch_once(1)  # the mapping code paths ready
    samples: list[float] = []
    while len(samples) < MAX_REPEATS:
        session.check()
        s0 = clock()
        samples.append(touch_once() / SAMPLE_MB)
        if len(samples) >= MIN_REPEATS and clock() + (clock() - s0) > t0 + share_s:
            break
    m = measurement(samples, "s/MB", Conditions(
        cache="unknown", bytes_per_sample=SAMPLE_MB * 1_000_000,
        note=f"a fresh private anonymous mapping of {SAMPLE_MB} MB written one byte per "
        f"{_PAGE // 1024} kB page (each write a page fault), this process"))
    s_per_mb = m.median if m.median is not None and m.median > 0 else None
    session.report(TEST, 1.0, "fresh memory",
                   f"{1e3 * s_per_mb:.2f} ms per MB" if s_per_mb is not None else None)
    return FirstTouch(s_per_mb=s_per_mb, measurement=m)


__all__ = ["SAMPLE_MB", "measure_first_touch", "touch_once"]
