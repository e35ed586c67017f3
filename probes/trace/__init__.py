"""Tracing the user's own program: what it reads from ROOT files, and when.

:func:`~.run.run_traced` runs a command unchanged under ``strace`` and returns a
:class:`~.run.Capture` (reads with offsets, sizes, times; opens; wall, CPU; block-device
counters), or, for a Python program reading through uproot, with the lighter in-process
recorder of :mod:`~.record`; :func:`~.decompress.decompression_s_per_byte` times
decompressing a sample of the baskets it read.  Attribution onto basket maps is
:mod:`hep_advisor.models.attribution`.
"""

from .capture import Capture, TracedRead, TraceError, candidate_files
from .record import choose_recorder
from .run import run_traced

__all__ = ["Capture", "TraceError", "TracedRead", "candidate_files", "choose_recorder",
           "run_traced"]
