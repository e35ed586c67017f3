"""What ``hep-advisor apply`` planned and did (the ``apply`` block of the JSON document)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .jsonio import to_jsonable

#: What every output was checked for before it was renamed into place.
#: The journal ``apply`` keeps in DEST (written atomically after every output).
JOURNAL = "hep-advisor-apply.json"
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


class ApplyError(RuntimeError):
    """apply cannot proceed (the message is one line)."""


class VerificationError(ApplyError):
    """An output's data differ from its inputs' (it was not renamed into place)."""


@dataclass(frozen=True)
class ApplyPlan:
    code: str
    kind: str
    tool: str  # "hadd" or "uproot"
    dest: str
    options: tuple[str, ...]  # hadd's options (uproot: the same meaning, see _uproot_write)
    outputs: tuple[PlannedOutput, ...]
    compression: int | None = None  # ROOT setting for C001
    target_mb: float | None = None  # M001

    @property
    def input_bytes(self) -> int:
        return sum(o.input_bytes for o in self.outputs)

    def key(self) -> dict[str, Any]:
        """What must match for a journal to be resumed."""
        return {"code": self.code, "options": list(self.options),
                "outputs": [[o.name, list(o.inputs)] for o in self.outputs]}

    def describe(self) -> list[str]:
        """The plan, one line per output (``--dry-run``)."""
        verb = {"merge": "merge", "rewrite": "rewrite", "compression": "recompress"}[self.kind]
        cmd = "hadd " + " ".join(self.options) if self.tool == "hadd" else "uproot"
        lines = [f"{self.code}: {verb} {sum(len(o.inputs) for o in self.outputs)} file(s) "
                 f"({self.input_bytes / 1e6:,.1f} MB) into {len(self.outputs)} file(s) in "
                 f"{self.dest} with {cmd}"]
        for o in self.outputs:
            first = os.path.basename(o.inputs[0])
            more = f" and {len(o.inputs) - 1} more" if len(o.inputs) > 1 else ""
            lines.append(f"  {o.name}  <-  {first}{more} ({o.input_bytes / 1e6:,.1f} MB)")
        lines.append(f"  each output verified (entries, checksums of every branch's data) "
                     f"before it is renamed into place; journal {JOURNAL}")
        return lines


@dataclass(frozen=True)
class ApplyResult:
    plan: ApplyPlan
    outputs: tuple[OutputResult, ...]
    inputs_unchanged: bool
    journal: str

    def summary(self) -> ApplySummary:
        return plan_summary(self.plan, self.outputs, self.inputs_unchanged, self.journal)

    def to_json(self) -> dict[str, Any]:
        return {"apply": to_jsonable(self.summary())}


def plan_summary(plan: ApplyPlan, outputs: tuple[OutputResult, ...] = (),
                 inputs_unchanged: bool = True, journal: str = "",
                 dry_run: bool = False) -> ApplySummary:
    """The JSON block of a plan (``dry_run``: nothing written) or of its result."""
    return ApplySummary(plan.code, plan.kind, plan.tool, plan.dest, plan.options,
                        journal or str(Path(plan.dest) / JOURNAL), inputs_unchanged,
                        plan.input_bytes, outputs, plan.outputs, dry_run=dry_run)
