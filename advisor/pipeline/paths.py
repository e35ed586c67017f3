"""Where hep-advisor keeps what it makes for itself: the cache directory.

``$HEP_ADVISOR_CACHE`` if set, else ``$XDG_CACHE_HOME/hep-advisor``, else
``~/.cache/hep-advisor``.  The calibration cache (``calibrations/``) and the default demo
datasets (``demo-VERSION-WRITER/``) live under it, never beside the user's data.
"""

from __future__ import annotations

import os
from pathlib import Path

from hep_advisor._version import __version__


def cache_root() -> Path:
    """The cache directory (read from the environment on every call; not created)."""
    base = os.environ.get("HEP_ADVISOR_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "hep-advisor"
    )
    return Path(base)


def calibrations_dir() -> Path:
    """Where the calibration cache keeps its entries."""
    return cache_root() / "calibrations"


def default_demo_dir(writer: str = "uproot") -> Path:
    """Where the default demo datasets are (or will be) written by ``writer``."""
    return cache_root() / f"demo-{__version__}-{writer}"


__all__ = ["cache_root", "calibrations_dir", "default_demo_dir"]
