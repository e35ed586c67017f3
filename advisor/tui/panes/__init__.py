"""The app's tabs, one module each; every pane shows a ``Loaded`` advice with ``show``."""

from hep_advisor.tui.panes.advice import AdvicePane
from hep_advisor.tui.panes.calibrate import CalibratePane
from hep_advisor.tui.panes.data import DataPane
from hep_advisor.tui.panes.overview import OverviewPane
from hep_advisor.tui.panes.scaling import ScalingPane
from hep_advisor.tui.panes.whatif import WhatIfPane

__all__ = ["AdvicePane", "CalibratePane", "DataPane", "OverviewPane", "ScalingPane",
           "WhatIfPane"]
