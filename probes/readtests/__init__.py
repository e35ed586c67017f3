"""The calibrated read tests: budgeted measurements of every term of the rate model on the
dataset's own files.

The tests, their order, labels and budget weights are listed once, in :mod:`.registry`;
:func:`.calibrate.calibrate` runs them.  Importing this package imports nothing heavy.
"""
