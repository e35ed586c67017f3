"""Number formatting for people: MB = 10^6 bytes throughout; unknown prints as an em dash."""

from __future__ import annotations

UNKNOWN = "—"


def mb(n_bytes: float | None, digits: int = 1) -> str:
    if n_bytes is None:
        return UNKNOWN
    value = n_bytes / 1e6
    if value >= 1e4:
        return f"{value / 1e3:,.1f} GB"
    if value < 0.1 and value > 0:
        return f"{n_bytes / 1e3:.{digits}f} kB"
    return f"{value:,.{digits}f} MB"


def kb(n_bytes: float | None, digits: int = 1) -> str:
    return UNKNOWN if n_bytes is None else f"{n_bytes / 1e3:,.{digits}f} kB"


def gb(n_bytes: float | None) -> str:
    return UNKNOWN if n_bytes is None else f"{n_bytes / 1e9:,.1f} GB"


def ms(seconds: float | None) -> str:
    return UNKNOWN if seconds is None else f"{seconds * 1e3:,.1f} ms"


def num(x: float | None, digits: int = 0) -> str:
    if x is None:
        return UNKNOWN
    return f"{x:,.{digits}f}"


def ratio(x: float | None) -> str:
    return UNKNOWN if x is None else f"{x:.2f}×"


def yes_no(x: bool | None) -> str:
    return UNKNOWN if x is None else ("yes" if x else "no")


def text(x: object) -> str:
    return UNKNOWN if x is None or x == "" else str(x)
