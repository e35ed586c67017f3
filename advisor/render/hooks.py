"""How a result shows itself: the one module the result types (:mod:`hep_advisor.findings`)
call upward, from their output hooks (``__rich__``, ``_repr_html_``, ``to_json``, ``plot``).

The import-layers contract names this module as the only exception to "result types call
nothing above them": everything a hook needs is reached from here, imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hep_advisor.findings.advice import Advice, Report


def rich(report: Report, verbose: bool = False) -> Any:
    """The terminal view (Rich renderable) of ``report``: short, the answer first (every
    card with ``verbose``)."""
    if verbose:
        from hep_advisor.render.advice_view import advice_view

        return advice_view(report)
    from hep_advisor.render.short_view import summary_view

    return summary_view(report)


def html(report: Report) -> str:
    """The HTML fragment Jupyter shows for ``report``."""
    from hep_advisor.render.html import report_html

    return report_html(report, standalone=False)


def to_json(report: Report) -> dict[str, Any]:
    """The report's JSON document (the same as ``hep-advisor report --format json``)."""
    from hep_advisor.document.report import document_json, make_report_document

    return document_json(make_report_document(report))


def plot(advice: Advice, ax: Any = None) -> Any:
    """The scaling plot (matplotlib) of one dataset's advice."""
    from hep_advisor.render.plot import plot_scaling

    return plot_scaling(advice, ax=ax)
