"""What the panes share."""

from __future__ import annotations

from functools import partial
from typing import Any


def show_if_loaded(pane: Any) -> None:
    """For a pane mounted lazily (after the first frame): show the advice if it came first."""
    loaded = getattr(pane.app, "loaded", None)
    if loaded is not None:
        pane.app.show_safely(pane.id or "",
                             partial(pane.show, loaded, getattr(pane.app, "scaling", None)))
