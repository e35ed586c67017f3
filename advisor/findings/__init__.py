"""The findings: the plain result types that everything above shows and stores.

A recommendation and its evidence (:mod:`.recommendation`), the verdict and the advice
(:mod:`.advice`), the cluster's and the trace's results (:mod:`.cluster`, :mod:`.trace`),
``try``'s result (:mod:`.trial`) and ``apply``'s plan (:mod:`.apply`), and their JSON
conversion (:mod:`.jsonio`).  They import only ``hep_advisor.models`` and
``hep_advisor.probes`` below them; their output hooks (``__rich__``, ``_repr_html_``,
``to_json``, ``plot``) call :mod:`hep_advisor.render.hooks`, the one module above them they
may use.
"""
