"""``hep-advisor trace`` end to end on a tiny uproot-written file: the reads are attributed,
the exit code is passed through, nothing is left behind, a bad command is one line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(shutil.which("strace") is None, reason="strace not installed")

PROGRAM = """\
import sys, uproot
n = 0
for a in uproot.iterate(sys.argv[1] + ":Events", library="np"):
    n += len(a["b0"])
print("entries", n)
sys.exit(int(sys.argv[2]))
"""


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import uproot

    d = tmp_path_factory.mktemp("trace-data")
    rng = np.random.default_rng(1)
    with uproot.recreate(d / "t.root", compression=uproot.ZLIB(1)) as f:
        for c in range(6):
            chunk = {f"b{i}": rng.normal(size=400).astype(np.float32) for i in range(4)}
            if c == 0:
                f.mktree("Events", {k: v.dtype for k, v in chunk.items()})
            f["Events"].extend(chunk)
    (d / "prog.py").write_text(PROGRAM)
    return d


def hep(args: list[str], tmp: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, TMPDIR=str(tmp))
    return subprocess.run([sys.executable, "-m", "hep_advisor", *args], capture_output=True,
                          text=True, env=env, timeout=120)


def listing(d: Path) -> dict[str, int]:
    return {str(p): p.stat().st_mtime_ns for p in d.rglob("*")}


def test_trace_json_exit_code_and_nothing_left(data: Path, tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    before = listing(data)
    done = hep(["trace", "--json", "--cold", "--", sys.executable, str(data / "prog.py"),
                str(data / "t.root"), "3"], tmp)
    if "ptrace" in done.stderr or "Operation not permitted" in done.stderr:
        pytest.skip("ptrace not permitted here")
    assert done.returncode == 3, done.stderr
    assert "entries 2400" in done.stderr  # the program's output, kept off the JSON
    t = json.loads(done.stdout)["trace"]
    assert t["exit_code"] == 3
    (f,) = t["files"]
    assert f["path"] == str((data / "t.root").resolve())
    assert f["opens"] > 1  # uproot's default local source opens the file per range
    kinds = t["requests_by_kind"]
    assert kinds["key"] == 6 * 4  # the default step_size's pre-pass: one per basket
    assert kinds["basket"] >= 1 and kinds["metadata"] >= 1
    assert [p["name"] for p in t["phases"]][-1] == "processing"
    assert "pre-pass" in [p["name"] for p in t["phases"]]
    assert set(t["time_split"]) >= {"io", "decompression", "user"}
    assert t["cold"] is True  # the file named on the command line was evicted first
    assert list(tmp.iterdir()) == []  # the trace's scratch files are gone
    assert listing(data) == before  # the data untouched


def test_cold_is_not_claimed_for_files_the_command_line_does_not_name(data: Path,
                                                                      tmp_path: Path) -> None:
    # the program finds its file in a list: --cold cannot know it, and says so
    listed = tmp_path / "files.txt"
    listed.write_text(str(data / "t.root") + "\n")
    prog = tmp_path / "listed.py"
    prog.write_text(PROGRAM.replace("sys.argv[1] + ", "open(sys.argv[1]).read().strip() + "))
    done = hep(["trace", "--json", "--cold", "--", sys.executable, str(prog), str(listed),
                "0"], tmp_path)
    if "ptrace" in done.stderr or "Operation not permitted" in done.stderr:
        pytest.skip("ptrace not permitted here")
    assert done.returncode == 0, done.stderr
    t = json.loads(done.stdout)["trace"]
    assert len(t["files"]) == 1
    assert t["cold"] is False
    assert any("--cold evicted only the ROOT files named" in n for n in t["notes"])


def test_trace_writes_html_and_text(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.html"
    done = hep(["trace", "-o", str(out), "--", sys.executable, str(data / "prog.py"),
                str(data / "t.root"), "0"], tmp_path)
    assert done.returncode == 0, done.stderr
    page = out.read_text()
    assert "<svg" in page and "pre-pass" in page
    assert "requests by kind" in done.stdout


def test_bad_command_is_one_line(tmp_path: Path) -> None:
    done = hep(["trace", "--", "no-such-program-xyz"], tmp_path)
    assert done.returncode == 127
    assert done.stderr.strip().count("\n") == 0
    assert "no-such-program-xyz: command not found" in done.stderr
    assert "Traceback" not in done.stderr
    done = hep(["trace"], tmp_path)
    assert done.returncode == 2 and "no command given" in done.stderr
