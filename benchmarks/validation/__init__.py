"""Predictions checked against what was realised: see ``benchmarks/RESULTS.md``."""
