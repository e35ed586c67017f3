"""How uncertain one measured figure is, from its own samples: the relative standard deviation
of one sample (``point_sd``), how much the figure may differ from one calibration to the next
(``run_sd``), and the standard error of its median (``sigma``).  The rate model's fit weighs
its points and priors by these (``hep_advisor.models.calibration``), and the self-check states them
(``hep_advisor.models.selfcheck``)."""

from __future__ import annotations

import numpy as np

from hep_advisor.probes.readtests.results import Measurement

#: IQR / 1.349 is a normal distribution's standard deviation.
IQR_TO_SIGMA = 1.349
#: Run-to-run spread (one sigma, relative) of a figure measured fewer than three times: one
#: sample says nothing of how the next calibration's will differ.
SINGLE_SAMPLE_RUN_SD = 0.15
#: Mean range of two normal samples, in standard deviations (``point_sd``).
D2 = 1.128


def point_sd(m: Measurement | None) -> tuple[float | None, str | None]:
    """One sample's relative standard deviation from a measurement's own data, and where it
    came from; ``(None, None)`` where the measurement has nothing to tell it by."""
    if m is None:
        return None, None
    found: list[tuple[float, str]] = []
    n = len(m.samples)
    if n >= 3 and m.spread is not None:
        found.append((m.spread / IQR_TO_SIGMA, "samples"))
    elif n == 2 and m.spread is not None:
        found.append((m.spread / D2, "2 samples"))
    if n < 3 and m.part_spread is not None:  # an upper estimate: where samples are too few
        found.append((m.part_spread / IQR_TO_SIGMA, "parts of a sample"))
    if not found:
        return None, None
    return max(found)


def run_sd(m: Measurement | None, floor: float) -> float:
    """How much a figure may differ from one calibration to the next (one sigma, relative):
    one sample's spread (``point_sd``: from its samples, or the parts of one sample), not
    the standard error of the median, since the samples of one run share its conditions
    (the device's state, the machine's load); at least ``SINGLE_SAMPLE_RUN_SD`` where there
    are fewer than 3 samples (two, or the parts of one, say little of the next run); never
    below ``floor`` (the point's fitted error)."""
    sd, _ = point_sd(m)
    if m is None or len(m.samples) < 3:
        return max(floor, SINGLE_SAMPLE_RUN_SD, sd or 0.0)
    return max(floor, sd or 0.0)


def sigma(m: Measurement | None, floor: float) -> float:
    """Relative standard error of a measurement's median (1.253 sigma / sqrt(n)), no smaller
    than ``floor`` (what the model itself is trusted to)."""
    if m is None or m.spread is None or len(m.samples) < 3:
        return floor
    return max(floor, 1.2533 * m.spread / IQR_TO_SIGMA / np.sqrt(len(m.samples)))
