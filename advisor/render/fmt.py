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


def times(x: float) -> str:
    """A speed-up, the same in every view: ``1.8×``, ``1.05×``, ``2.0×``, ``12×``."""
    if x >= 10:
        return f"{x:.0f}×"
    text = f"{x:.2f}"
    if text.endswith("0"):
        text = text[:-1]
    return text + "×"


def speedup_text(s: float | None, low: float | None = None, high: float | None = None) -> str:
    """``1.8× (1.5–2.1×)``: the predicted speed-up with its interval."""
    if s is None:
        return UNKNOWN
    if low is None or high is None:
        return times(s)
    return f"{times(s)} ({times(low)[:-1]}–{times(high)})"


def rate(x: float | None) -> str:
    """A rate in MB/s, without the unit: ``0.67``, ``12.3``, ``1,234``."""
    if x is None:
        return UNKNOWN
    return num(x, 2 if x < 10 else 1 if x < 1000 else 0)


def mb_per_s(x: float | None) -> str:
    """A rate with its unit: ``1.33 MB/s``."""
    return UNKNOWN if x is None else f"{rate(x)} MB/s"


def rate_interval(mb: float, low: float | None, high: float | None) -> str:
    """``3.3 (2.1–5.1)``."""
    if low is None or high is None:
        return rate(mb)
    return f"{rate(mb)} ({rate(low)}–{rate(high)})"


def percent(level: float) -> str:
    return f"{100 * level:.0f}%"
