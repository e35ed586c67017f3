"""How a report is rendered, beyond its format: verbose or short, and what the HTML page names
(the command line, the time).  Apart from :mod:`.formats` so that the renderers it imports can
take it without an import circle."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field


@dataclass(frozen=True)
class RenderOptions:
    """How to render: ``verbose``: every card in full (text and Markdown; the HTML page has
    them in collapsed sections and opens them); ``command``: the command line that made the
    report, and ``created``: when (the HTML page names both; default: now)."""

    verbose: bool = False
    command: str | None = None
    created: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.timezone.utc))
