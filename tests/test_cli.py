"""The command line: version, help on every command, probe and demo output."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hep_advisor import __version__
from hep_advisor.cli import build_parser, main


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hep_advisor", *args], capture_output=True,
                          text=True, timeout=300)


def test_version() -> None:
    r = run("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"hep-advisor {__version__}"


COMMANDS = ["probe", "calibrate", "predict", "demo", "report", "explain", "tui", "try", "apply",
            "trace"]


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_help_on_every_command(command: str | None, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"] if command else ["--help"])
    assert exc.value.code == 0
    assert "usage: hep-advisor" in capsys.readouterr().out


def test_every_command_has_help() -> None:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert sub.choices is not None and set(sub.choices) == set(COMMANDS)


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
    from hep_advisor.demo import datasets

    monkeypatch.setenv("HEP_ADVISOR_CACHE", str(tmp_path / "cache"))
    monkeypatch.setitem(datasets.SCALES, "default", datasets.SCALES["tiny"])
    assert main(["probe", "--json"]) == 0
    demo = datasets.default_demo_dir()
    assert (demo / "manifest.json").exists()
    stamp = (demo / "manifest.json").stat().st_mtime
    assert main(["probe", "--json"]) == 0
    assert (demo / "manifest.json").stat().st_mtime == stamp


def test_calibrate_without_usable_data(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """The bad input is listed before any read test, then one line and exit 2."""
    bad = tmp_path / "notes.root"
    bad.write_text("not ROOT")
    assert main(["calibrate", str(bad), "--budget", "1", "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert str(bad) in lines[0] and lines[-1] == \
        "hep-advisor: no usable ROOT file: nothing to calibrate"


def test_calibrate_runs_through_the_core(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """``hep-advisor calibrate`` is ``hep_advisor.pipeline.advise.calibrate_paths`` and a rendering:
    the options reach it, its notes are printed, its result is the JSON document."""
    from hep_advisor.pipeline import advise as core

    calls: list[dict] = []

    def fake(paths: list[str], **kw: object) -> object:
        calls.append({"paths": paths, **kw})
        raise core.NoUsableData("none")

    monkeypatch.setattr(core, "calibrate_paths", fake)
    assert main(["calibrate", "a.root", "--workers", "1,2,4-5", "--sample", "0",
                 "--budget", "3", "--json", "--branches", "a,b,c", "--uses", "a"]) == 2
    (call,) = calls
    assert call["paths"] == ["a.root"] and call["workers"] == (1, 2, 4, 5)
    assert call["sample"] is None and call["budget_s"] == 3.0
    assert call["branches"] == ["a", "b", "c"] and call["uses"] == ["a"]
    assert "nothing to calibrate" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["calibrate", "report", "tui"])
def test_branches_and_uses_mean_one_thing_each(command: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """``--branches`` is what the program reads, ``--uses`` what the analysis uses: the help
    says so, and both reach the command."""
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--branches A,B,... branches your program reads now" in text
    assert "--uses A,B,... branches the analysis actually uses" in text
    assert "no B001" in text
    args = build_parser().parse_args([command, "x.root", "--branches", "a, b", "--uses", "b"])
    assert args.branches == ["a", "b"] and args.uses == ["b"]


def test_report_passes_uses_to_advise(monkeypatch: pytest.MonkeyPatch) -> None:
    from hep_advisor.pipeline import advise as core

    calls: list[dict] = []

    def fake(paths: list[str], **kw: object) -> object:
        calls.append(kw)
        raise core.NoUsableData("none")

    monkeypatch.setattr(core, "advise", fake)
    assert main(["report", "a.root", "--branches", "a,b", "--uses", "a"]) == 2
    assert calls[0]["branches"] == ["a", "b"] and calls[0]["uses"] == ["a"]
    assert main(["report", "--uses", "a"]) == 2  # the demo runs its own event loop


def test_commands_do_not_import_the_cli() -> None:
    """No cycle: the commands take exit codes and shared arguments from commands.common."""
    import ast

    for path in (Path(__file__).resolve().parents[1] / "advisor" / "commands").glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = ("", "hep_advisor.commands.", "advisor.")[node.level]
                assert f"{base}{node.module}" != "hep_advisor.cli", f"{path.name} imports the CLI"


def test_tui_passes_uses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``tui --uses`` reaches the advice source the app loads (and its cached quick view)."""
    from hep_advisor.tui.app import make_app

    monkeypatch.setenv("HEP_ADVISOR_CACHE", str(tmp_path))
    app = make_app([str(tmp_path / "x.root")], branches=["a", "b"], uses=["a"])
    source = app.loader
    assert getattr(source, "branches", None) == ("a", "b")
    assert getattr(source, "uses", None) == ("a",)
