"""The fit works in a process where ROOT has run an RDataFrame (a notebook that used ROOT):
there SciPy's LAPACK workspace query fails ("Too large work array required ... 32-bit
LAPACK"), and the advice had no model."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

HERE = Path(__file__).parent

PROGRAM = textwrap.dedent("""
    import json, sys, warnings
    from pathlib import Path
    sys.path.insert(0, {here!r})
    warnings.simplefilter("ignore")
    import numpy  # first, as in a notebook (and the failure needs it so)
    if {root!r}:
        import ROOT
        ROOT.gROOT.SetBatch(True)
        ROOT.RDataFrame(10).Define("x", "1.0").Sum("x").GetValue()
    from report_helpers import advise_stored
    from test_advice_golden import CASES
    path, rel = CASES["small_reader"]
    a = advise_stored(path, rel, Path({demo!r}), "x", use_reader=True)
    print(json.dumps({{"model": a.model is not None, "notes": list(a.notes),
                      "top": [(r.code, r.predicted_speedup) for r in a.recommendations[:3]]}}))
""")


def _advice(demo: Path, root: bool) -> dict:
    code = PROGRAM.format(here=str(HERE), root=root, demo=str(demo))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.root
def test_the_fit_holds_after_root_ran_an_rdataframe_in_the_process(tiny_demo: Path) -> None:
    pytest.importorskip("ROOT")
    clean = _advice(tiny_demo, root=False)
    after = _advice(tiny_demo, root=True)
    assert clean["model"] and after["model"], after["notes"]
    assert not any("no model" in n for n in after["notes"])
    # the same advice, within the iterative solver's tolerance
    assert [c for c, _ in after["top"]] == [c for c, _ in clean["top"]]
    for (_, a), (_, b) in zip(after["top"], clean["top"], strict=True):
        assert a == pytest.approx(b, rel=0.05)
