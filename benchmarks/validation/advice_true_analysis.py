"""The plain analysis of ``bench_advice_true.py``, as a user writes it: ``uproot.iterate`` over
every branch of the tree, in one process (uproot's defaults unless a recommendation's snippet
changes the call).

    python -m benchmarks.validation.advice_true_analysis FILES.json [--tree Events] [--step N]
        [--filter-name A,B] [--entries START:STOP] [--start-at UNIX_TIME]

``FILES.json``: a JSON list of paths.  ``--entries``: read only that entry range of the (single)
file (a worker's share when there are fewer files than workers).  ``--start-at``: wait until
then before reading (several workers start together, after their imports).  Prints one JSON
line: events, the reading's start and end (``time.time()``), seconds.
"""

from __future__ import annotations

import argparse
import json
import time

import uproot


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files")
    ap.add_argument("--tree", default="Events")
    ap.add_argument("--step", type=int, default=None)
    ap.add_argument("--filter-name", default=None)
    ap.add_argument("--entries", default=None)
    ap.add_argument("--start-at", type=float, default=None)
    args = ap.parse_args()
    with open(args.files) as fh:
        files = json.load(fh)
    kw: dict[str, object] = {"library": "ak"}
    if args.step:
        kw["step_size"] = args.step
    if args.filter_name:
        kw["filter_name"] = args.filter_name.split(",")
    if args.start_at:
        time.sleep(max(0.0, args.start_at - time.time()))
    t0 = time.time()
    n = 0
    if args.entries:
        start, stop = (int(x) for x in args.entries.split(":"))
        with uproot.open(files[0]) as f:
            for arrays in f[args.tree].iterate(entry_start=start, entry_stop=stop, **kw):
                n += len(arrays)
    else:
        for arrays in uproot.iterate([{f: args.tree} for f in files], **kw):
            n += len(arrays)
    t1 = time.time()
    print(json.dumps({"events": n, "start": t0, "end": t1, "seconds": t1 - t0}))


if __name__ == "__main__":
    main()
