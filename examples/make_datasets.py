#!/usr/bin/env python3
"""Write hep-advisor's example datasets into a directory.

    python examples/make_datasets.py DIR [--writer uproot|root] [--scale default|tiny]

The same as ``hep-advisor demo --dir DIR``: many small files with hundreds of branches, the same
events merged plainly into one file, and a flat 20-branch tree in ZLIB-1, LZ4, ZSTD-5, LZMA-7
and uncompressed.  ``--writer root`` writes them with ROOT itself (``pip install
'hep-advisor[root]'``), whose baskets, clusters and OptimizeBaskets differ from uproot's.
The datasets show, at a small scale, the shapes that sites measured on real ESD and Pythia data
(docs/root-io.md, "What sites measured").
"""

from __future__ import annotations

import argparse
import json
import sys

from hep_advisor.demo import SCALES, WRITERS, make_datasets, read_manifest


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("directory")
    ap.add_argument("--writer", choices=WRITERS, default="uproot")
    ap.add_argument("--scale", choices=sorted(SCALES), default="default")
    args = ap.parse_args()

    def progress(done: int, total: int, path: str) -> None:
        print(f"[{done:3d}/{total}] {path}", file=sys.stderr)

    try:
        target = make_datasets(args.directory, writer=args.writer, scale=args.scale,
                               progress=progress)
    except (FileExistsError, RuntimeError) as exc:
        print(f"make_datasets: {exc}", file=sys.stderr)
        return 1
    print(json.dumps({"directory": str(target), **read_manifest(target)}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
