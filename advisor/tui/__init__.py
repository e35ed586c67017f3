"""The interactive advisor: a Textual app over ``hep_advisor.advise()``.

The only part of hep-advisor that imports Textual.  :func:`make_app` builds the app for the
CLI (``hep-advisor tui``), the tests and notebooks; ``AdviceSource`` and ``FixedAdvice``
(``source.py``) say where its advice comes from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hep_advisor.tui.app import AdvisorApp


def make_app(*args: Any, **kw: Any) -> AdvisorApp:
    """See :func:`hep_advisor.tui.app.make_app`."""
    from hep_advisor.tui.app import make_app as _make_app

    return _make_app(*args, **kw)


__all__ = ["make_app"]
