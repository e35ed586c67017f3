"""Fit and predict: the throughput model and what-if scenarios (issue 4).

May import ``probes``' result types; never ``advisor``, Rich or Textual.  Nothing is exported
yet: the throughput model lands with issue 4.
"""

__all__: list[str] = []
