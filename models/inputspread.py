"""How far the replay's inputs vary from run to run, from the calibration's own repeats: the
device's bandwidth and access time, and the CPU's time per event.

A read test repeats its samples; one sample's relative sigma (what one run of the analysis may
differ by) comes from them as the self-check takes it (:func:`~.pointnoise.point_sd`: the
interquartile range of three or more, the range of two, or the parts of one timed stream of
reads).  An input whose measurement tells nothing gets its kind's typical spread, labelled
assumed.  The replays' intervals propagate these
(:func:`hep_advisor.models.replay.predict.propagated`); they replace the rate model's fitted
uncertainties, which its misfit inflated (storage ±44% where four raw reads agreed within 3%).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from statistics import median

from hep_advisor.probes.readtests.results import Calibration, Measurement

from .pointnoise import point_sd

#: a sample's relative sigma where a test has too few samples (assumptions: the raw reads,
#: the request sweep's small reads and the event loop spread by 1-5%, 3-15% and 2-12% on this
#: project's validation runs)
TYPICAL = {"bandwidth": 0.05, "access": 0.10, "cpu": 0.08}
#: no spread below this (a sigma of 0 from three equal samples says too little)
FLOOR = 0.02
#: the request sweep's reads small enough to measure the access time
ACCESS_BYTES = 64 * 1024
#: the 90% interval's z (the replays move each input to exp(+-Z90 * sigma))
Z90 = 1.6448536269514722


@dataclass(frozen=True)
class InputSpread:
    """Relative sigmas (of one run) of the device's bandwidth and access time and of the
    CPU's time, and for each whether it was measured."""

    bandwidth: float
    access: float
    cpu: float
    measured: frozenset[str] = frozenset()
    #: where the access time's spread spans two measured figures (:func:`spanning_access`):
    #: the two, in ms, as (request sweep, the reader's cold loop); else ``None``
    access_span_ms: tuple[float, float] | None = None

    def describe(self) -> str:
        def one(name: str, v: float) -> str:
            return f"{name} ±{100 * v:.0f}% ({'measured' if name in self.measured else 'assumed'})"
        access = one("access", self.access)
        if self.access_span_ms is not None:
            swept, loop = self.access_span_ms
            access += (f": spans the request sweep's {swept:.3g} ms and the cold loop's "
                       f"{loop:.3g} ms")
        return ", ".join((one("bandwidth", self.bandwidth), access, one("cpu", self.cpu)))


def _sd(m: Measurement | None) -> float | None:
    """One sample's relative sigma from the measurement's own data
    (:func:`~hep_advisor.models.pointnoise.point_sd`), never below :data:`FLOOR`."""
    sd, _ = point_sd(m)
    return None if sd is None else max(sd, FLOOR)


def input_spread(cal: Calibration | None) -> InputSpread:
    """The spreads the calibration measured (:class:`InputSpread`), each else :data:`TYPICAL`."""
    got: dict[str, float] = {}
    if cal is not None:
        raw = cal.raw_read
        if raw is not None:
            bw = _sd(raw.cold)  # too few samples: how steady the device was within one
            if bw is not None:
                got["bandwidth"] = bw
        small = [s for p in cal.request_sweep
                 if p.request_bytes <= ACCESS_BYTES and p.pattern == "random"
                 and (s := _sd(p.measurement)) is not None]
        if small:
            got["access"] = median(small)
        loop = cal.event_loop
        if loop is not None:
            cpu = _sd(loop.warm)
            if cpu is not None:
                got["cpu"] = cpu
    return InputSpread(bandwidth=got.get("bandwidth", TYPICAL["bandwidth"]),
                       access=got.get("access", TYPICAL["access"]),
                       cpu=got.get("cpu", TYPICAL["cpu"]), measured=frozenset(got))


def spanning_access(spread: InputSpread, swept_ms: float, loop_ms: float) -> InputSpread:
    """``spread`` with the access time's sigma wide enough that its 90% interval reaches from
    either figure to the other: the request sweep's (random small reads, one at a time) and
    the one the program's reader's cold loop implies (``ReaderBaseline.loop_access_ms``).  Two
    measurements of the one input that disagree: whichever the replay takes, the other is
    inside its interval, so that two calibrations on either side of the choice
    (``reader_baseline.STREAM_TOLERANCE``) give intervals that hold each other's point.
    Unchanged where the measured sigma is already that wide."""
    if swept_ms <= 0 or loop_ms <= 0:
        return spread
    sd = abs(math.log(swept_ms / loop_ms)) / Z90
    if sd <= spread.access:
        return spread
    return replace(spread, access=sd, measured=spread.measured | {"access"},
                   access_span_ms=(swept_ms, loop_ms))


__all__ = ["FLOOR", "TYPICAL", "Z90", "InputSpread", "input_spread", "spanning_access"]
