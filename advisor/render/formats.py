"""A report as text in one of the output formats (``hep-advisor report`` and the TUI's export)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..advice import Report

FORMATS = ("text", "md", "json", "html")


def render_report(report: Report, fmt: str, width: int | None = None) -> str:
    """``fmt``: ``json``, ``md``, ``html`` or ``text`` (plain, no ANSI codes; ``width``
    columns, default the terminal's)."""
    if fmt == "json":
        import json

        return json.dumps(report.to_json(), indent=2) + "\n"
    if fmt == "md":
        from .markdown import report_markdown

        return report_markdown(report)
    if fmt == "html":
        from .html import report_html

        return report_html(report)
    if fmt != "text":
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    import io

    from rich.console import Console

    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=False, color_system=None,
                      highlight=False, emoji=False, legacy_windows=False)
    console.print(report)
    return buf.getvalue()
