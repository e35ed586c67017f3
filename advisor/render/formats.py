"""The output formats, in one registry that the command line (``report --format``, ``-o``) and
the TUI (its export dialog and command palette) both read: a format's name, what it is called,
its file suffixes, and the function that renders a report in it.

Adding a format is a renderer module and one :class:`OutputFormat` line in :data:`FORMATS`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hep_advisor.render.options import RenderOptions

if TYPE_CHECKING:
    from hep_advisor.findings.advice import Report

__all__ = ["FORMATS", "OutputFormat", "RenderOptions", "by_suffix", "file_formats",
           "render_report"]


@dataclass(frozen=True)
class OutputFormat:
    """``name``: as ``--format`` takes it; ``label``: as a person says it; ``suffixes``: file
    names that choose it (the first is the default); ``renderer``: ``module:function`` taking
    ``(report, width)`` and returning the text; ``file``: offered for export to a file."""

    name: str
    label: str
    suffixes: tuple[str, ...]
    renderer: str
    description: str = ""
    file: bool = True

    def render(self, report: Report, width: int | None = None,
               options: RenderOptions | None = None) -> str:
        module, func = self.renderer.split(":")
        fn: Callable[[Report, int | None, RenderOptions], str] = getattr(
            importlib.import_module(module), func)
        return fn(report, width, options or RenderOptions())


FORMATS: dict[str, OutputFormat] = {f.name: f for f in (
    OutputFormat("text", "plain text", (".txt",), "hep_advisor.render.formats:_text",
                 "the terminal report without colours", file=False),
    OutputFormat("md", "Markdown", (".md", ".markdown"), "hep_advisor.render.formats:_markdown",
                 "write the report to a .md file"),
    OutputFormat("json", "JSON", (".json",), "hep_advisor.render.formats:_json",
                 "write the versioned JSON document"),
    OutputFormat("html", "HTML", (".html", ".htm"), "hep_advisor.render.formats:_html",
                 "write a self-contained HTML page"),
)}


def by_suffix(suffix: str) -> OutputFormat | None:
    """The file format a file name's suffix (``".md"``) chooses."""
    return next((f for f in FORMATS.values() if f.file and suffix.lower() in f.suffixes), None)


def file_formats() -> list[OutputFormat]:
    return [f for f in FORMATS.values() if f.file]


def render_report(report: Report, fmt: str, width: int | None = None, *,
                  verbose: bool = False, command: str | None = None) -> str:
    """``fmt``: a name in :data:`FORMATS` (``text`` is plain, no ANSI codes; ``width``
    columns, default the terminal's); ``verbose``: every card in full; ``command``: the
    command line that made the report (the HTML page names it)."""
    found = FORMATS.get(fmt)
    if found is None:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    return found.render(report, width, RenderOptions(verbose=verbose, command=command))


def _json(report: Report, width: int | None, options: RenderOptions) -> str:
    import json

    return json.dumps(report.to_json(), indent=2) + "\n"


def _markdown(report: Report, width: int | None, options: RenderOptions) -> str:
    from hep_advisor.render.markdown import report_markdown

    return report_markdown(report, verbose=options.verbose)


def _html(report: Report, width: int | None, options: RenderOptions) -> str:
    from hep_advisor.render.html import report_html

    return report_html(report, options=options)


def _text(report: Report, width: int | None, options: RenderOptions) -> str:
    import io

    from rich.console import Console

    from hep_advisor.render import hooks

    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=False, color_system=None,
                      highlight=False, emoji=False, legacy_windows=False)
    console.print(hooks.rich(report, verbose=options.verbose))
    return buf.getvalue()
