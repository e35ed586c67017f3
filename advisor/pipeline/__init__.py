"""The pipeline: probe, calibrate, fit and advise (:mod:`.advise`), with the calibration cache
(:mod:`.cache`), the basket maps the replays read (:mod:`.basketmaps`), the user's program
traced (:mod:`.trace`), a recommendation tried on a sample (:mod:`.trial`) or applied
(:mod:`.apply`), and a Dask cluster calibrated (:mod:`.cluster_calibration`).

It uses the rules (:mod:`hep_advisor.rules`) and returns findings
(:mod:`hep_advisor.findings`); nothing here renders.
"""
