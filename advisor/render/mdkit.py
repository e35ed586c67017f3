"""The Markdown report's building blocks: escaping, tables and code fences."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

_SPECIAL = re.compile(r"([\\`*_\[\]<>|#~&])")


def esc(text: object) -> str:
    """Markdown-escaped text for a paragraph or a table cell (one line)."""
    return _SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def table(header: Sequence[str], rows: Iterable[Sequence[str]],
          align: str | None = None) -> list[str]:
    """A GFM table; ``align`` one character per column (``l``, ``r``); cells already escaped."""
    align = align or "l" * len(header)
    rule = ["---:" if a == "r" else "---" for a in align]
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join(rule) + " |"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return [*out, ""]


def fence(code: str, language: str) -> list[str]:
    ticks = "```"
    while ticks in code:
        ticks += "`"
    return [f"{ticks}{language}", *code.rstrip("\n").split("\n"), ticks]


def code(text: str) -> str:
    """Inline code: ``text`` verbatim between enough backticks (one line)."""
    text = " ".join(text.split("\n"))
    ticks = "`"
    while ticks in text:
        ticks += "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"
