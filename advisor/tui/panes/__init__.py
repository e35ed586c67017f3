"""The app's tabs, one module each; every pane shows a ``Loaded`` advice with ``show``."""

from .advice import AdvicePane
from .calibrate import CalibratePane
from .data import DataPane
from .overview import OverviewPane
from .scaling import ScalingPane
from .whatif import WhatIfPane

__all__ = ["AdvicePane", "CalibratePane", "DataPane", "OverviewPane", "ScalingPane",
           "WhatIfPane"]
