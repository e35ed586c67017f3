"""Fit and predict: the throughput model and what-if scenarios.

May import ``probes``' result types; never ``advisor``, Rich or Textual.
"""

from .physics import FEATURES, PARAMS, Cores, Params, config_matrix, rates
from .throughput import ThroughputModel

__all__ = ["FEATURES", "PARAMS", "Cores", "Params", "ThroughputModel", "config_matrix", "rates"]
