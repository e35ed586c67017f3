"""Writing the report from the TUI: the same renderers as ``hep-advisor report``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hep_advisor.findings.advice import Advice



def default_path(advice: Advice, directory: Path, fmt: str = "md") -> Path:
    from hep_advisor.render.formats import FORMATS

    slug = re.sub(r"[^A-Za-z0-9]+", "-", advice.label).strip("-").lower() or "report"
    return directory / f"hep-advisor-{slug}{FORMATS[fmt].suffixes[0]}"


def write_report(advice: Advice, path: Path, fmt: str) -> Path:
    """Render with the report's renderers, then write atomically."""
    from hep_advisor.pipeline.fileio import write_atomically
    from hep_advisor.render.formats import render_report

    path = path.expanduser()
    write_atomically(path, render_report(advice.report(), fmt))
    return path
