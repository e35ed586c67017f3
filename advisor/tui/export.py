"""Writing the report from the TUI: the same renderers as ``hep-advisor report``."""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..advice import Advice

SUFFIX = {"md": ".md", "html": ".html", "json": ".json"}


def default_path(advice: Advice, directory: Path, fmt: str = "md") -> Path:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", advice.label).strip("-").lower() or "report"
    return directory / f"hep-advisor-{slug}{SUFFIX[fmt]}"


def render(advice: Advice, fmt: str) -> str:
    report = advice.report()
    if fmt == "json":
        return json.dumps(report.to_json(), indent=2) + "\n"
    if fmt == "html":
        from ..render.html import report_html

        return report_html(report)
    from ..render.markdown import report_markdown

    return report_markdown(report)


def write_report(advice: Advice, path: Path, fmt: str) -> Path:
    """Render, then write atomically (a temporary file renamed into place)."""
    text = render(advice, fmt)
    path = path.expanduser()
    fd, tmp = tempfile.mkstemp(prefix=".hep-advisor-", dir=path.parent or Path("."))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)  # a report to share, not mkstemp's private 0600
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
