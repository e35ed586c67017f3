"""Names of the read tests as people read them (the CLI's bars, the TUI's Calibrate tab), from
the registry of the read tests.  Import-light: the TUI loads it before its first screen (the
registry is plain data)."""

from __future__ import annotations

from hep_advisor.probes.readtests.registry import LABELS

#: ``ProgressEvent.test`` -> label, in the order the tests run.
TEST_LABELS: dict[str, str] = dict(LABELS)
