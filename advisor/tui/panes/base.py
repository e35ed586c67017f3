"""What the panes share."""

from __future__ import annotations

from functools import partial
from typing import Any


def show_if_loaded(pane: Any) -> None:
    """For a pane mounted lazily (after the first frame): show the advice if it came first,
    else the probes if they did (a pane with ``show_probed``)."""
    loaded = getattr(pane.app, "loaded", None)
    probed = getattr(pane.app, "probed", None)
    if loaded is not None:
        pane.app.show_safely(pane.id or "",
                             partial(pane.show, loaded, getattr(pane.app, "scaling", None)))
    elif probed is not None and hasattr(pane, "show_probed"):
        pane.app.show_safely(pane.id or "", partial(pane.show_probed, probed))
