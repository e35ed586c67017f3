"""Every rule's record (:class:`~.rule.Rule`), by code, from the family modules that define
them, in the order the advice runs them.  ``python -m hep_advisor.rules.registry`` prints the
table of codes (``docs/rules.md`` holds it; a test checks that the two agree).

Adding a rule to a family is one record and one function in that family's module; a new
family is one more module in :data:`FAMILIES`.
"""

from __future__ import annotations

import sys
from types import ModuleType

from hep_advisor.findings.recommendation import Recommendation
from hep_advisor.rules import (
    branches,
    cluster,
    compression,
    files,
    reader_changes,
    remote,
    rntuple,
    storage,
    workers,
)
from hep_advisor.rules.narrowing import with_narrowing
from hep_advisor.rules.rule import Rule

#: The family modules, each ending with its ``RULES``; the calibration's rules run in this order.
FAMILIES: tuple[ModuleType, ...] = (files, compression, branches, storage, workers, rntuple,
                                    remote, reader_changes, cluster)

RULES: dict[str, Rule] = {r.code: r for fam in FAMILIES for r in fam.RULES}


def rule(code: str) -> Rule | None:
    """The record of ``code`` (``None`` for an unknown code)."""
    return RULES.get(code.upper())


def narrowed(rec: Recommendation) -> Recommendation:
    """``rec`` with what would narrow its interval, where that is called for (the rules built
    outside ``Context.make``: remote, cluster)."""
    return with_narrowing(rec, rule(rec.code))


def tryable() -> tuple[str, ...]:
    """The codes ``hep-advisor try`` and ``apply`` handle (they change the files)."""
    return tuple(c for c, r in RULES.items() if r.tryable)


def table() -> str:
    """The codes as a Markdown table: code, family, what it recommends, when, ``try``."""
    rows = ["| code | family | recommends | when | try/apply |", "|---|---|---|---|---|"]
    for r in RULES.values():
        rows.append(f"| {r.code} | {r.family} | {r.title} | {r.trigger} | "
                    f"{r.change or ''} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    sys.stdout.write(table())
