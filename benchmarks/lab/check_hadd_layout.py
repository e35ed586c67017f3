"""The modelled ``hadd -O`` layout against the real one (counts, no timing: no lock needed).

    python -m benchmarks.lab.check_hadd_layout DATA_DIR [DATA_DIR ...] [--work /tmp/hadd_check]
        [--setting N] [--size-factor F ...] [--before REV] [--tree Events] [--out FILE.json]

For each dataset: ROOT's own ``hadd -O -f<setting>`` merges every file of the directory into
``WORK/<dataset>.root`` (``--setting``: the compression setting; default the first file's
own, so that the bytes compare the layout and not a codec), then the basket maps of the inputs
give the modelled layout (:func:`hep_advisor.models.replay.layouts.optimized_merge`), compared with
the map read from the real output: baskets per branch and in all, cluster boundaries, compressed
bytes (baskets with their keys).  ``--before REV``: the same with ``models/replay/layouts.py``
as it was at git revision ``REV`` (a "before" column).  ``--size-factor F``: also the layout
C001's replay builds for a recompression whose output is ``F`` times today's bytes
(:func:`hep_advisor.models.replay.rewrite.rewritten_layout`; with ``--setting``, the real output is
the new codec's: ROOT's 30 MB AutoFlush cuts it where its own bytes pass 30 MB).  The merged files
are removed at the end unless ``--keep``.  Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import REPO
from hep_advisor.demo.root_writer import hadd_path
from hep_advisor.models.replay.layouts import optimized_merge
from hep_advisor.models.replay.rewrite import rewritten_layout
from hep_advisor.probes.basketmap import BasketMap, read_basket_map


def _layouts_at(rev: str) -> Any:
    """``models/replay/layouts.py`` as it was at git revision ``rev``, as a module."""
    src = subprocess.run(["git", "show", f"{rev}:models/replay/layouts.py"], cwd=REPO,
                         capture_output=True, text=True, check=True).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(src)
    spec = importlib.util.spec_from_file_location("layouts_before", f.name)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    Path(f.name).unlink()
    return mod


def compare(model: BasketMap, real: BasketMap) -> dict[str, Any]:
    """Counts of ``model`` against ``real``: baskets (in all, per branch within 10%, the
    worst branch's ratio), basket boundaries equal, clusters, compressed MB."""
    both = list(zip(real.branches, model.branches, strict=True))  # the same tree: by position
    ratios = [m.baskets / r.baskets if r.baskets else (1.0 if not m.baskets else math.inf)
              for r, m in both]
    same = sum(np.array_equal(r.entries, m.entries) for r, m in both)
    return {
        "baskets_real": real.baskets, "baskets_model": model.baskets,
        "baskets_ratio": model.baskets / max(real.baskets, 1),
        "branches": len(both),
        "branches_within_10pct": sum(abs(x - 1) <= 0.1 for x in ratios),
        "branch_ratio_min": min(ratios, default=1.0), "branch_ratio_max": max(ratios, default=1.0),
        "same_boundaries": int(same),
        "clusters_real": len(real.clusters) - 1, "clusters_model": len(model.clusters) - 1,
        "clusters_equal": bool(np.array_equal(real.clusters, model.clusters)),
        "mb_real": real.basket_bytes / 1e6, "mb_model": model.basket_bytes / 1e6,
        "mb_ratio": model.basket_bytes / max(real.basket_bytes, 1),
    }


def run_one(src: Path, args: argparse.Namespace, before: Any) -> dict[str, Any]:
    import uproot

    files = sorted(src.glob("*.root"))
    if not files:
        raise RuntimeError(f"{src}: no .root files")
    with uproot.open(files[0]) as f:
        setting = args.setting if args.setting is not None else int(f.file.fCompress)
    out = args.work / f"{src.name}.root"
    if not out.exists():
        cmd = [hadd_path(), "-O", f"-f{setting}", str(out), *map(str, files)]
        r = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if r.returncode != 0:
            raise RuntimeError(f"hadd failed: {(r.stderr or r.stdout).strip()[-200:]}")
    maps = [read_basket_map(str(p), args.tree) for p in files]
    real = read_basket_map(str(out), args.tree)
    res: dict[str, Any] = {
        "dataset": src.name, "files": len(files), "entries": real.entries,
        "setting": setting, "input_autoflush": maps[0].autoflush,
        "output_autoflush": real.autoflush,
        "after": compare(optimized_merge(maps, "<model>"), real)}
    if before is not None:
        res["before"] = compare(before.optimized_merge(maps, "<before>"), real)
    for f in args.size_factor:
        out_maps, _, _ = rewritten_layout(maps, len(maps), f)
        if len(out_maps) == 1:  # one merged output, as the real one
            res[f"size x{f:g}"] = compare(out_maps[0], real)
    if not args.keep:
        out.unlink(missing_ok=True)
    return res


def table(results: list[dict[str, Any]]) -> None:
    print("\n| dataset | AutoFlush in → out | | baskets real / model | branches within 10% "
          "(worst ratios) | same basket boundaries | clusters real / model | MB real / model "
          "|\n|---|---|---|---|---|---|---|---|")
    for res in results:
        for key in ("before", "after", *(k for k in res if k.startswith("size x"))):
            c = res.get(key)
            if c is None:
                continue
            print(f"| {res['dataset']} | {res['input_autoflush']:,} → {res['output_autoflush']:,}"
                  f" | {key} | {c['baskets_real']:,} / {c['baskets_model']:,} "
                  f"({c['baskets_ratio']:.2f}) | {c['branches_within_10pct']} of "
                  f"{c['branches']} ({c['branch_ratio_min']:.2f}–{c['branch_ratio_max']:.2f}) "
                  f"| {c['same_boundaries']} | {c['clusters_real']} / {c['clusters_model']}"
                  f"{'' if c['clusters_equal'] else ' (differ)'} | {c['mb_real']:.2f} / "
                  f"{c['mb_model']:.2f} ({c['mb_ratio']:.2f}) |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="+", type=Path)
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "hadd_check")
    ap.add_argument("--setting", type=int, default=None)
    ap.add_argument("--before", default=None, metavar="REV")
    ap.add_argument("--size-factor", type=float, nargs="*", default=[], metavar="F")
    ap.add_argument("--tree", default="Events")
    ap.add_argument("--keep", action="store_true", help="keep the merged files")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    before = _layouts_at(args.before) if args.before else None
    results = []
    for src in args.data:
        try:
            results.append(run_one(src, args, before))
        except Exception as exc:  # a dataset that fails is a line that says so
            print(f"{src.name}: {type(exc).__name__}: {exc}", flush=True)
        if args.out:
            Path(args.out).write_text(json.dumps(results, indent=1, default=str))
    table(results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
