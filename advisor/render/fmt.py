"""Number formatting for people: MB = 10^6 bytes throughout (KiB = 2^10 bytes where a system
figure is counted so, e.g. Linux's read-ahead); unknown prints as an em dash; never e-notation
(:func:`plain`, :func:`sig`)."""

from __future__ import annotations

import math

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


def sig(x: float | None, digits: int = 3) -> str:
    """``x`` to ``digits`` significant digits, without e-notation: ``1,090``, ``23.5``,
    ``0.0000265``."""
    if x is None or not math.isfinite(x):
        return UNKNOWN
    if x == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    text = f"{round(x, decimals):,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def plain(x: float) -> str:
    """A figure as a person writes it (``1,234.5``, ``0.5``, ``0.000027``), never in
    e-notation: up to 6 significant digits, thousands separated."""
    if not math.isfinite(x):
        return UNKNOWN
    if x == 0 or 1e-4 <= abs(x) < 1e6:
        return format(x, ",g")
    if abs(x) >= 1e6:
        return f"{x:,.0f}"
    return sig(x, 3)


def byte_size(n: float | None) -> str:
    """A request or buffer size: ``4 KiB``, ``1 MiB`` for powers of two (as the read tests size
    their requests), else ``13 kB`` / ``28 MB`` (10^3, 10^6 bytes)."""
    if n is None:
        return UNKNOWN
    k = int(n)
    if k == n and k > 0 and k & (k - 1) == 0:
        for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
            if k >= size:
                return f"{k // size:,} {unit}"
        return f"{k} B"
    return mb(n, 1) if n >= 1e5 else kb(n, 1)


def kib(n: int | None) -> str:
    """A size the system counts in KiB (``/sys/block/*/queue/read_ahead_kb``): ``8,192 KiB``."""
    return UNKNOWN if n is None else f"{n:,} KiB"


def speedup_level(s: float | None, low: float | None, high: float | None,
                  level: float = 0.9) -> str:
    """``5.76× (90%: 4.42–7.52×)``: the speed-up with its interval, the interval's level
    named."""
    if s is None:
        return UNKNOWN
    if low is None or high is None:
        return times(s)
    return f"{times(s)} ({percent(level)}: {times(low)[:-1]}–{times(high)})"
