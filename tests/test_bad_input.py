"""Bad input: one clear line per path, the other files still probed, never a traceback."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
import uproot

from helpers import snapshot, write_flat
from hep_advisor.probes import probe_dataset


def damage_tree_metadata(src: Path, dst: Path) -> Path:
    """Copy ``src`` and scramble the middle third of its TTree record."""
    with uproot.open(src) as f:
        key = f.key("t")
        third = (key.fNbytes - key.fKeylen) // 3
        start = key.fSeekKey + key.fKeylen + third
    data = bytearray(src.read_bytes())
    for i in range(start, start + third):
        data[i] ^= 0x5A
    dst.write_bytes(bytes(data))
    return dst


@pytest.fixture
def bad_dir(tmp_path: Path) -> Path:
    d = tmp_path / "data"
    d.mkdir()
    good = write_flat(d / "good.root", entries=500)
    (d / "empty.root").write_bytes(b"")
    (d / "truncated.root").write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    (d / "random.root").write_bytes(np.random.default_rng(0).bytes(4096))
    (d / "notes.root").write_text("these are my analysis notes\n" * 20)
    damage_tree_metadata(good, d / "damaged.root")
    with uproot.recreate(d / "histograms.root") as f:
        f["h"] = np.histogram(np.arange(10), bins=5)
    os.symlink("loop_b.root", d / "loop_a.root")
    os.symlink("loop_a.root", d / "loop_b.root")
    os.symlink("..", d / "back_up")  # a directory loop
    (d / "no_root_here").mkdir()
    (d / "no_root_here" / "readme.txt").write_text("nothing\n")
    return d


EXPECTED = {
    "empty.root": "empty file",
    "truncated.root": "truncated",
    "random.root": "not a ROOT file",
    "notes.root": "looks like text",
    "damaged.root": "damaged TTree metadata",
    "histograms.root": "no TTree or RNTuple in this file",
    "loop_a.root": "symlink loop",
    "loop_b.root": "symlink loop",
    "back_up": "symlink loop",
}


def test_each_bad_input_gets_one_error_and_the_good_file_is_probed(bad_dir: Path) -> None:
    before = snapshot(bad_dir)
    ds = probe_dataset([bad_dir, bad_dir / "missing.root", bad_dir / "no_root_here"])
    assert snapshot(bad_dir) == before  # nothing written, nothing touched
    by_name = {Path(e.path).name: e.error for e in ds.errors}
    for name, cause in EXPECTED.items():
        assert cause in by_name[name], (name, by_name.get(name))
    assert "no such file" in by_name["missing.root"]
    assert "no ROOT files" in by_name["no_root_here"]
    assert all("\n" not in e.error for e in ds.errors)
    assert len(ds.errors) == len(EXPECTED) + 2
    assert ds.usable_files == 1
    (tree,) = ds.trees
    assert tree.entries == 500 and tree.files == 1


def test_rntuple_only_file_is_probed(tmp_path: Path) -> None:
    with uproot.recreate(tmp_path / "n.root") as f:
        f["ntuple"] = {"x": np.arange(10, dtype=np.float32)}  # uproot writes an RNTuple
    ds = probe_dataset([tmp_path / "n.root"])
    assert ds.errors == ()
    (tree,) = ds.trees
    assert (tree.name, tree.format, tree.entries, tree.branches) == ("ntuple", "rntuple", 10, 1)
    assert tree.compressed_bytes > 0 and tree.uncompressed_bytes == 40


def test_damaged_rntuple_metadata_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "n.root"
    with uproot.recreate(path) as f:
        f["ntuple"] = {"x": np.arange(1000, dtype=np.float64)}
    with uproot.open(path) as f:
        footer = f["ntuple"].members["fSeekFooter"]
    data = bytearray(path.read_bytes())
    for i in range(footer + 8, footer + 40):
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))
    ds = probe_dataset([path])
    (error,) = ds.errors
    assert error.error.startswith("damaged RNTuple metadata in 'ntuple'"), error.error
    assert "\n" not in error.error


def _probe_as_nobody(path: str, conn: int) -> None:  # pragma: no cover - runs in a child
    os.setgid(65534)
    os.setuid(65534)
    ds = probe_dataset([path])
    os.write(conn, json.dumps([[e.path, e.error] for e in ds.errors]
                              + [["usable", ds.usable_files]]).encode())
    os._exit(0)


def test_directory_without_permission() -> None:
    # tmp_path lives in a directory only root may enter, so build this one in /tmp
    top = Path(tempfile.mkdtemp(prefix="hep-advisor-perm-"))
    try:
        os.chmod(top, 0o755)
        write_flat(top / "ok.root")
        locked = top / "locked"
        locked.mkdir()
        write_flat(locked / "hidden.root")
        os.chmod(locked, 0o000)
        if os.geteuid() != 0:
            ds = probe_dataset([str(top)])
            errors = [[e.path, e.error] for e in ds.errors]
            usable = ds.usable_files
        else:  # root reads everything: drop to `nobody` in a forked child
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(r)
                _probe_as_nobody(str(top), w)
            os.close(w)
            with os.fdopen(r) as fh:
                *errors, (_, usable) = json.loads(fh.read())
            os.waitpid(pid, 0)
        assert errors == [[str(locked), "permission denied"]]
        assert usable == 1
    finally:
        os.chmod(top / "locked", 0o755)
        shutil.rmtree(top)


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hep_advisor", *args], capture_output=True,
                          text=True, timeout=120)


def test_cli_reports_lines_and_exit_status(bad_dir: Path) -> None:
    r = run_cli("probe", str(bad_dir), str(bad_dir / "missing.root"), "--json")
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == len(EXPECTED) + 1
    assert all(ln.startswith("hep-advisor: ") for ln in lines)
    doc = json.loads(r.stdout)
    assert len(doc["dataset"]["errors"]) == len(EXPECTED) + 1
    assert doc["dataset"]["trees"][0]["entries"] == 500


def test_cli_exit_2_when_nothing_is_usable(bad_dir: Path) -> None:
    r = run_cli("probe", str(bad_dir / "empty.root"), str(bad_dir / "notes.root"))
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    assert "empty file" in r.stderr and "looks like text" in r.stderr
    r = run_cli("probe", str(bad_dir / "nothing-here"))
    assert r.returncode == 2 and "no such file" in r.stderr


def test_paths_with_glob_characters_and_markup(tmp_path: Path) -> None:
    d = tmp_path / "run [2024]"
    d.mkdir()
    (d / "notes.root").write_text("not a ROOT file\n")
    write_flat(d / "good.root")
    ds = probe_dataset([d])  # an existing path is taken literally, not as a pattern
    assert ds.usable_files == 1 and len(ds.errors) == 1
    r = run_cli("probe", str(d))
    assert f"{d / 'notes.root'}: not a ROOT file" in r.stderr  # "[2024]" is not eaten as markup
