"""What ``hep-advisor apply`` planned and did (the ``apply`` block of the JSON document)."""

from __future__ import annotations

from dataclasses import dataclass

#: What every output was checked for before it was renamed into place.
VERIFICATION = ("entries, and the SHA-256 of every branch's decompressed values, equal to "
                "the inputs'")


@dataclass(frozen=True)
class PlannedOutput:
    """One file the plan writes: its name in DEST, its inputs and their bytes."""

    name: str
    inputs: tuple[str, ...]
    input_bytes: int


@dataclass(frozen=True)
class OutputResult:
    """One verified output: path, number of inputs, bytes, entries, and ``state``:
    ``written``, ``skipped`` (verified by an earlier run) or ``redone`` (changed since it was
    verified)."""

    name: str
    path: str
    inputs: int
    bytes: int
    entries: int
    state: str  # "written", "skipped" (verified before), "redone" (changed since verified)


@dataclass(frozen=True)
class ApplySummary:
    """A layout recommendation carried out into DEST (or only planned: ``dry_run``): the
    tool and options, the plan, the verified outputs, what was verified, and whether the
    inputs were unchanged (size and modification time) after the run."""

    code: str
    kind: str
    tool: str
    dest: str
    options: tuple[str, ...]
    journal: str
    inputs_unchanged: bool
    input_bytes: int
    outputs: tuple[OutputResult, ...]
    plan: tuple[PlannedOutput, ...] = ()
    verification: str = VERIFICATION
    dry_run: bool = False
