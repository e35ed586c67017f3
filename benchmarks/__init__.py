"""The benchmarks: run by hand from the repository's root, as modules
(``python -m benchmarks.validation.bench_advice_true --help``); their current figures are in
``benchmarks/RESULTS.md``.

- ``validation/``: predictions checked against what was realised (the advice applied, the
  model's jobs, replayed requests against traced ones, remote and cluster predictions).
- ``timing/``: the tool's own speed, memory and budget, and its read tests beside reference
  tools (fio, the codec libraries, rootreadspeed).
- ``lab/``: one-off investigations, each answering one question about a cost the model counts.
- ``common``: what they share (paths, the machine's pace, a dataset on an emulated slow disk).
"""
