"""A rule as one record: its code, what triggers it, how its speed-up is predicted, what to run
to check it, and whether ``try`` and ``apply`` can make its change (and which).

Each family module (:mod:`.files`, :mod:`.compression`, ...) ends with its ``RULES``; the
registry (:mod:`.registry`) collects them, and everything that lists or handles codes (the
rules' table, ``try``, ``apply``, the views, what narrows an interval) reads the records.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

#: What a rule is made from: a calibration with its fitted model (``calibration``), the link's
#: read tests (``link``), a trace of the user's program (``trace``) or a Dask cluster's tests
#: (``cluster``).
Source = Literal["calibration", "link", "trace", "cluster"]
#: The change to the files that ``try`` makes on a sample and ``apply`` makes to the dataset.
Change = Literal["merge", "rewrite", "compression"]


@dataclass(frozen=True)
class Rule:
    """One recommendation code.  ``title``: what it recommends, in general (each
    recommendation's own title has its figures); ``trigger``: when it fires; ``prediction``:
    how its speed-up is predicted; ``measure``: the one run of the user's analysis that
    measures the change (where ``try`` cannot); ``change``: the files' change ``try`` and
    ``apply`` make (``None``: it changes no file); ``check``: the rule itself, called with
    the rule context and the recommendations found so far by code (``None``: the family's
    own function makes it from its ``source``)."""

    code: str
    family: str
    kind: str
    title: str
    trigger: str
    prediction: str
    measure: str
    audience: Literal["analyst", "site admin"] = "analyst"
    source: Source = "calibration"
    change: Change | None = None
    check: Callable[[Any, dict[str, Any]], Any] | None = None

    @property
    def tryable(self) -> bool:
        """``hep-advisor try`` (and ``apply``) can make this change."""
        return self.change is not None
