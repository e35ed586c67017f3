"""The in-process Python recorder: what it records against strace on a tiny file, the exit
code passed through, nothing left behind, the user's own sitecustomize still run, and the
choice of recorder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hep_advisor.probes.trace import choose_recorder, run_traced
from hep_advisor.probes.trace.record import remote_files

PROGRAM = """\
import sys, uproot
n = 0
for a in uproot.iterate(sys.argv[1] + ":Events", library="np"):
    n += len(a["b0"])
with uproot.open(sys.argv[1]) as f:
    n += len(f["Events"].arrays(["b1"], library="np")["b1"])
print("entries", n)
sys.exit(int(sys.argv[2]))
"""


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import uproot

    d = tmp_path_factory.mktemp("record-data")
    rng = np.random.default_rng(2)
    with uproot.recreate(d / "t.root", compression=uproot.ZLIB(1)) as f:
        for c in range(5):
            chunk = {f"b{i}": rng.normal(size=300).astype(np.float32) for i in range(3)}
            if c == 0:
                f.mktree("Events", {k: v.dtype for k, v in chunk.items()})
            f["Events"].extend(chunk)
    (d / "prog.py").write_text(PROGRAM)
    return d


def listing(d: Path) -> dict[str, int]:
    return {str(p): p.stat().st_mtime_ns for p in d.rglob("*")}


def test_recorder_sees_what_strace_sees(data: Path, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    before = listing(data)
    argv = [sys.executable, str(data / "prog.py"), str(data / "t.root"), "5"]
    rec = run_traced(argv, recorder="python", stdout=subprocess.DEVNULL)
    assert rec.exit_code == 5 and rec.recorder == "python"
    path = str((data / "t.root").resolve())
    assert {r.file for r in rec.reads} == {path}
    # fsspec's cat_file: one open per range, one or two read calls each
    assert rec.opens[path] <= len(rec.reads) <= 2 * rec.opens[path]
    assert rec.waits  # uproot waited for chunks
    assert list(tmp_path.iterdir()) == [] and listing(data) == before
    if shutil.which("strace") is None:
        pytest.skip("strace not installed")
    st = run_traced(argv, recorder="strace", stdout=subprocess.DEVNULL,
                    measure_cost=False)
    if not st.reads:
        pytest.skip("ptrace not permitted here")
    assert st.exit_code == 5
    # the same read calls: offsets and sizes from the buffered file's raw position
    assert sorted((r.offset, r.size) for r in rec.reads) == \
        sorted((r.offset, r.size) for r in st.reads)


def test_users_sitecustomize_still_runs(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import os\nos.environ['USER_SITE_RAN'] = '1'\n")
    prog = tmp_path / "p.py"
    prog.write_text("import os, sys\nsys.exit(7 if os.environ.get('USER_SITE_RAN') else 1)\n")
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(site)
    try:
        cap = run_traced([sys.executable, str(prog)], recorder="python")
    finally:
        if old is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = old
    assert cap.exit_code == 7 and cap.reads == ()


def test_choose_recorder(tmp_path: Path) -> None:
    up = tmp_path / "a.py"
    up.write_text("import sys\nimport uproot\n")
    both = tmp_path / "b.py"
    both.write_text("import uproot\nimport ROOT\n")
    pyroot = tmp_path / "c.py"
    pyroot.write_text("import ROOT\n")
    py = sys.executable
    assert choose_recorder([py, str(up), "f.root"])[0] == "python"
    assert choose_recorder([py, "-u", str(up)])[0] == "python"
    assert choose_recorder([py, str(both)])[0] == "strace"  # ROOT's reads need strace
    assert choose_recorder([py, str(pyroot)])[0] == "strace"
    assert choose_recorder(["root", "-b", "-q", "m.C"])[0] == "strace"
    assert choose_recorder([py, "-c", "import uproot"])[0] == "strace"
    (tmp_path / "d.py").write_text("import sys, uproot\n")
    (tmp_path / "e.py").write_text("import os, ROOT as R\nfrom uproot import open\n")
    assert choose_recorder([py, str(tmp_path / "d.py")])[0] == "python"
    assert choose_recorder([py, str(tmp_path / "e.py")])[0] == "strace"
    assert choose_recorder([py, str(pyroot), "root://h:1094//d/f.root:Events"])[0] == "python"
    assert remote_files(["x", "root://h:1094//d/f.root:Events", "f.root"]) == \
        ["root://h:1094//d/f.root"]
