"""C001's rewritten layout replayed against the real output of its printed command (counts and
replayed times: nothing is timed, no lock needed).

    python -m benchmarks.lab.check_rewrite_alignment REPORT.json DATA_DIR [--work DIR]
        [--reader uproot.iterate] [--keep]

``REPORT.json``: a ``hep-advisor report --format json`` of ``DATA_DIR`` whose recommendations
hold C001 (``bench_advice_true.py`` keeps them next to its ``--out``).  The report's saved
calibration is advised again (``advise_from``, the basket maps of ``DATA_DIR``'s files, the
reader), and C001's merged rewrite is caught as it is replayed: its device model, CPU costs,
size factor and new decompression rate.  Then ROOT's ``hadd -O -f<setting>`` (C001's printed
setting) writes the real file into ``--work``, and the same device and costs replay:

- the modelled layout (:func:`hep_advisor.models.replay.rewrite.rewritten_layout`) at the size
factor;
- the real output's basket map;
- the modelled layout with every basket's bytes 3%, 1% and 0.5% smaller and larger (its
  bytes then scaled back by the device's rate): where the keys and baskets fall against the
  read-ahead windows, which the model cannot know to the byte.

Printed: device I/Os, non-contiguous ones, replayed I/O and total seconds for each.  The
merged file is removed at the end unless ``--keep``.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import hep_advisor.rules.codec as codec
from hep_advisor.demo.root_writer import hadd_path
from hep_advisor.document.report import calibration_parts
from hep_advisor.models.replay import rewrite
from hep_advisor.models.replay.predict import layout_time
from hep_advisor.pipeline.advise import advise_from
from hep_advisor.probes.basketmap import read_basket_map

SIZES = (0.97, 0.99, 0.995, 1.005, 1.01, 1.03)


def caught_rewrite(doc: dict[str, Any], files: list[Path], reader: str) -> dict[str, Any]:
    """The arguments of C001's merged, printed command's replay (the first call with an
    interval and the merge), caught while the report's calibration is advised again."""
    d0 = doc["datasets"][0]
    site, dataset, cal = calibration_parts({"site": doc["site"], "dataset": d0["dataset"],
                                            "calibration": d0["calibration"]})
    tree = dataset.main_tree
    if tree is None:
        raise SystemExit("the report's dataset has no tree")
    maps = [read_basket_map(str(f), tree.name) for f in files]
    calls: list[dict[str, Any]] = []
    real_fn = codec.recompression_prediction

    def spy(maps_: Any, n: int, device: Any, costs: Any, **kw: Any) -> Any:
        calls.append({"maps": maps_, "files": n, "device": device, "costs": costs, **kw})
        return real_fn(maps_, n, device, costs, **kw)

    setattr(codec, "recompression_prediction", spy)  # noqa: B010 (a spy, put back below)
    try:
        advice = advise_from(site, dataset, cal, basket_maps=maps, reader=reader)
    finally:
        codec.recompression_prediction = real_fn
    c001 = next((r for r in advice.recommendations if r.code == "C001"), None)
    shown = [c for c in calls if c.get("merge", True) and c.get("interval", True)
             and c.get("alignment", True)]
    if c001 is None or not shown:
        raise SystemExit("the report's calibration gives no merged C001 here")
    return {**shown[-1], "tree": tree.name, "rec": c001}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report", type=Path)
    ap.add_argument("data", type=Path)
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "rewrite_check")
    ap.add_argument("--reader", default="uproot.iterate")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    files = sorted(args.data.glob("*.root"))
    x = caught_rewrite(json.loads(args.report.read_text()), files, args.reader)
    rec = x["rec"]
    cmd = next(a.command for a in rec.actions if a.command and "hadd -O" in a.command)
    setting = re.search(r"-f(\d+)", cmd)
    if setting is None:
        raise SystemExit(f"no compression setting in C001's command: {cmd!r}")
    args.work.mkdir(parents=True, exist_ok=True)
    out = args.work / "recompressed.root"
    subprocess.run([hadd_path(), "-f", "-O", f"-f{setting.group(1)}", str(out),
                    *map(str, files)], check=True, capture_output=True)
    try:
        real = read_basket_map(str(out), x["tree"])
    finally:
        if not args.keep:
            out.unlink(missing_ok=True)
    device, costs, sf = x["device"], x["costs"], x["size_factor"]
    new = rewrite.recoded_costs(costs, x["decompress_mb_per_s"], sf)
    print(f"C001 {rec.predicted_speedup:.2f} ({rec.speedup_low:.2f}-{rec.speedup_high:.2f}); "
          f"size factor {sf:.3f}, -f{setting.group(1)}, {x['files']} files; reader "
          f"{x['reader'].describe()}")
    print("| layout | device I/Os | non-contiguous | replayed I/O (s) | total (s) |")
    print("|---|---|---|---|---|")

    def row(name: str, maps: list[Any], scale: float, back: float = 1.0) -> None:
        lt = layout_time(maps, device, costs, reader=x["reader"], scale=scale,
                         branches=x.get("branches"))
        io = lt.io
        if back != 1.0:  # the bytes scaled back to the size factor's
            lt = rewrite.resized(lt, device, 1 / back)
        print(f"| {name} | {len(io.ios)} | {io.seeks} | {lt.io_s:.3f} | "
              f"{lt.with_costs(new).total_s:.3f} |")

    layout, scale, _ = rewrite.rewritten_layout(x["maps"], x["files"], sf, merge=True)
    row("modelled", layout, scale)
    row("real output", [real], 1.0)
    for j in SIZES:
        other, sc, _ = rewrite.rewritten_layout(x["maps"], x["files"], sf * j, merge=True)
        row(f"modelled, baskets x{j:g}", other, sc, j)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
