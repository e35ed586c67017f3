"""ROOT's TTreeCache, as the replay reads it, against what a real ``GetEntry`` loop reads.

T001 prints ``SetCacheSize(N)`` and ``AddBranchToCache("*", true)``; adding the branches by hand
skips ROOT's learning phase, so the first cache fill reads the whole cluster in one
``ReadBuffers`` call where the learning phase splits it.  On a disk that reads ahead, that one
split decided how much the kernel read (benchmarks/lab/check_root_cache_throttle.py).  The
read calls of a real loop, traced with ``strace``, must be the replay's, read for read.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hep_advisor.models.replay.readers import ROOT_LEARN_ENTRIES, root_getentry
from hep_advisor.probes.basketmap import read_basket_map
from hep_advisor.probes.trace.run import run_traced

uproot = pytest.importorskip("uproot")
pytest.importorskip("ROOT")

BRANCHES = [f"b{i}" for i in range(0, 120, 10)] + ["b119"]  # the last ends a basket row
LOOP = """
import sys, warnings
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import ROOT
f = ROOT.TFile.Open(sys.argv[1])
t = f.Get("t")
t.SetBranchStatus("*", 0)
for b in sys.argv[2].split(","):
    t.SetBranchStatus(b, 1)
t.SetCacheSize(10_000_000)
if sys.argv[3] == "1":
    t.AddBranchToCache("*", True)
for i in range(t.GetEntries()):
    t.GetEntry(i)
f.Close()
"""


@pytest.fixture(scope="module")
def interleaved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """120 branches written by uproot in four ``extend`` calls: one cluster, each branch's
    baskets interleaved with the others'."""
    path = tmp_path_factory.mktemp("cache") / "wide.root"
    rng = np.random.default_rng(7)
    names = [f"b{i}" for i in range(120)]
    with uproot.recreate(path, compression=uproot.ZLIB(1)) as f:
        f.mktree("t", {n: "f8" for n in names})
        for _ in range(4):
            f["t"].extend({n: rng.normal(size=1000) for n in names})
    return path


def _traced(path: Path, tmp_path: Path, manual: bool) -> list[tuple[int, int]]:
    prog = tmp_path / "loop.py"
    prog.write_text(LOOP)
    cap = run_traced([sys.executable, str(prog), str(path), ",".join(BRANCHES),
                      "1" if manual else "0"], stdout=subprocess.DEVNULL, measure_cost=False)
    if not cap.reads:
        pytest.skip("ptrace not permitted here")
    assert cap.exit_code == 0
    want = str(path.resolve())
    return [(r.offset, r.size) for r in cap.reads if r.file == want]


@pytest.mark.parametrize("manual", [True, False], ids=["AddBranchToCache", "learning"])
def test_the_replayed_cache_reads_what_root_reads(interleaved: Path, tmp_path: Path,
                                                  manual: bool) -> None:
    if shutil.which("strace") is None:
        pytest.skip("strace not installed")
    m = read_basket_map(str(interleaved), "t")
    learn = 0 if manual else ROOT_LEARN_ENTRIES
    replayed = [(r.offset, r.size) for r in
                root_getentry(m, BRANCHES, cache_bytes=10_000_000, learn_entries=learn)]
    other = [(r.offset, r.size) for r in
             root_getentry(m, BRANCHES, cache_bytes=10_000_000,
                           learn_entries=ROOT_LEARN_ENTRIES - learn)]
    assert replayed != other  # the file tells the two apart
    assert _traced(interleaved, tmp_path, manual) == replayed
