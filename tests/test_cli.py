"""The command line: version, help on every command, probe and demo output."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from advisor import __version__
from advisor.cli import build_parser, main


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "advisor", *args], capture_output=True,
                          text=True, timeout=300)


def test_version() -> None:
    r = run("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"hep-advisor {__version__}"


COMMANDS = ["probe", "calibrate", "predict", "demo", "report", "tui"]


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_help_on_every_command(command: str | None, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"] if command else ["--help"])
    assert exc.value.code == 0
    assert "usage: hep-advisor" in capsys.readouterr().out


def test_every_command_has_help() -> None:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert set(sub.choices) == set(COMMANDS)  # type: ignore[union-attr]


def test_bad_sample_is_a_usage_error() -> None:
    r = run("probe", "x.root", "--sample", "-3")
    assert r.returncode == 2 and "must be 0" in r.stderr and "Traceback" not in r.stderr


def test_probe_terminal_summary(tiny_demo: Path) -> None:
    r = run("probe", str(tiny_demo / "small_files"), "--branches", "3")
    assert r.returncode == 0, r.stderr
    assert "esdTree" in r.stdout and "ZLIB-1" in r.stdout
    assert "largest branches" in r.stdout
    assert "site" in r.stdout


def test_probe_sample_is_stated(tiny_demo: Path) -> None:
    r = run("probe", str(tiny_demo / "small_files"), "--sample", "2", "--json")
    ds = json.loads(r.stdout)["dataset"]
    assert ds["sampling"] == {"method": "sampled", "stated_files": 6, "opened_files": 2,
                              "scale_factor": pytest.approx(ds["sampling"]["scale_factor"])}
    assert ds["trees"][0]["sampled_files"] == 2 and ds["trees"][0]["files"] == 6


def test_demo_into_a_directory(tmp_path: Path) -> None:
    r = run("demo", "--dir", str(tmp_path / "d"), "--scale", "tiny", "--json")
    assert r.returncode == 0, r.stderr
    manifest = json.loads(r.stdout)
    assert manifest["writer"] == "uproot"
    assert {d["name"] for d in manifest["datasets"]} >= {"small_files", "merged", "flat_lzma7"}
    # a second run reuses the data instead of writing again
    r = run("demo", "--dir", str(tmp_path / "d"), "--scale", "tiny")
    assert r.returncode == 0 and "reusing" in r.stderr
    # a non-empty foreign directory is refused, and left alone
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "thesis.tex").write_text("x")
    r = run("demo", "--dir", str(tmp_path / "mine"), "--scale", "tiny")
    assert r.returncode == 1 and "not empty" in r.stderr
    assert [p.name for p in (tmp_path / "mine").iterdir()] == ["thesis.tex"]


def test_probe_without_paths_uses_the_cached_demo(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The quick start: `hep-advisor probe` creates the demo once, then reuses it."""
    from advisor.demo import datasets

    monkeypatch.setenv("HEP_ADVISOR_CACHE", str(tmp_path / "cache"))
    monkeypatch.setitem(datasets.SCALES, "default", datasets.SCALES["tiny"])
    assert main(["probe", "--json"]) == 0
    demo = datasets.default_demo_dir()
    assert (demo / "manifest.json").exists()
    stamp = (demo / "manifest.json").stat().st_mtime
    assert main(["probe", "--json"]) == 0
    assert (demo / "manifest.json").stat().st_mtime == stamp
