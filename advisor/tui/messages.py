"""The app's messages: posted from the loading worker's thread (``post_message`` is
thread-safe) and handled on the UI thread."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:  # the probes load in the worker, not before the first screen
    from hep_advisor.probes.readtests.runner import ProgressEvent
    from hep_advisor.render.scaling import ScalingData
    from hep_advisor.tui.source import Loaded, Probed


@dataclass
class CalibrationProgress(Message):
    """One step of one read test.  A step with no figure may be replaced by the next step
    of the same test before it is handled (the bar shows only the latest anyway)."""

    event: ProgressEvent

    def can_replace(self, message: Message) -> bool:
        return (isinstance(message, CalibrationProgress) and message.event.test == self.event.test
                and message.event.figure is None)


@dataclass
class ProbeReady(Message):
    """The site and dataset probes, before the read tests (the cards fill with them)."""

    probed: Probed


@dataclass
class AdviceReady(Message):
    """The advice (and the scaling plot's series, computed in the worker)."""

    loaded: Loaded
    scaling: ScalingData | None
    elapsed_s: float
    cancelled: bool


@dataclass
class LoadFailed(Message):
    """The advisor could not advise (no usable data, an error): one line for the user."""

    error: str
