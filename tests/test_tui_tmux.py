"""The TUI in a real terminal: ``hep-advisor tui`` started inside tmux on the tiny demo, keys
sent, the screen captured and checked, then ``q`` and a clean exit (status 0, the terminal
given back).  Skipped where tmux is missing (CI installs it)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

WIDTH, HEIGHT = 100, 50  # tall enough for a long recommendation and its evidence


class Tmux:
    """One tmux server of our own (``-L``), never the user's."""

    def __init__(self) -> None:
        self.socket = f"hep-advisor-test-{uuid.uuid4().hex[:8]}"

    def __call__(self, *args: str, check: bool = True) -> str:
        # The environment passed explicitly, without COLUMNS and LINES: GNU readline (imported
        # under pytest) puts COLUMNS=80, LINES=24 into the process's C environment, which a
        # child inherits by default, and the app then sized itself 80x24 in a 100x50 window
        # (a long recommendation pushed its evidence off the screen: a CI failure)
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
        r = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True,
                           check=check, timeout=30, env=env)
        return r.stdout

    def start(self, command: str) -> None:
        self("new-session", "-d", "-s", "app", "-x", str(WIDTH), "-y", str(HEIGHT), command)

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", "app", check=False)

    def keys(self, *keys: str) -> None:
        self("send-keys", "-t", "app", *keys)

    def wait_for(self, *texts: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if all(t in screen for t in texts):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {texts!r}; the screen was:\n{screen}")

    def kill(self) -> None:
        self("kill-server", check=False)


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    t = Tmux()
    try:
        yield t
    finally:
        t.kill()


def command(tmp_path: Path, paths: list[str], budget: float) -> str:
    env = {"HEP_ADVISOR_CACHE": str(tmp_path / "cache"), "TERM": "xterm-256color",
           "PYTHONPATH": os.pathsep.join(sys.path)}
    app = [sys.executable, "-m", "hep_advisor", "tui", *paths, "--budget", str(budget)]
    inner = " ".join([*(f"{k}={shlex.quote(v)}" for k, v in env.items()),
                      *map(shlex.quote, app)])
    # After the app: its exit status, where the test can read it, and time to read it.
    return f"sh -c {shlex.quote(inner + '; echo EXIT=$?; sleep 60')}"


@pytest.mark.slow
def test_tui_in_tmux(tmux: Tmux, tiny_demo: Path, tmp_path: Path) -> None:
    paths = [str(tiny_demo / "small_files")]
    tmux.start(command(tmp_path, paths, budget=3))
    # the first screen at once; the read tests, live on the Calibrate tab (3 s budget)
    tmux.wait_for("1 Overview", "6 What-if", "Quit", timeout=30)
    tmux.keys("3")
    tmux.wait_for("storage, cold", "page cache", timeout=60)
    screen = tmux.wait_for("Calibrated in", "storage (cold)", timeout=120)
    assert "Traceback" not in screen
    rows = screen.splitlines()
    assert len(rows) == HEIGHT and "Quit" in rows[-1]  # the app fills the window
    tmux.keys("1")
    tmux.wait_for("limits this analysis", "Top recommendations")

    tmux.keys("2")
    screen = tmux.wait_for("branch", "bytes", "share")
    assert "esdTree" in screen
    tmux.keys("4")
    screen = tmux.wait_for("predicted", "workers", "knee (90%", "storage capacity (model)")
    assert "hardware limit" not in screen
    tmux.keys("5")
    tmux.wait_for("Recommendations, ranked", "Evidence")
    tmux.keys("6")
    tmux.wait_for("Prediction", "Merge to", "Speed-up")
    tmux.keys("?")
    tmux.wait_for("Keys", "Esc closes")
    tmux.keys("Escape")
    tmux.wait_for("Prediction")

    tmux.keys("q")
    screen = tmux.wait_for("EXIT=", timeout=20)
    assert "EXIT=0" in screen
    assert "Quit" not in screen  # the alternate screen is gone: the terminal is given back


def test_tui_in_tmux_with_the_cached_calibration(tmux: Tmux, tiny_demo: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Second start on the same files: no read test runs, the cached calibration's age is
    shown at once."""
    from hep_advisor.pipeline.advise import advise

    paths = [str(tiny_demo / "flat" / "pythia_zstd5.root")]
    monkeypatch.setenv("HEP_ADVISOR_CACHE", str(tmp_path / "cache"))
    advise(paths, budget_s=2)  # calibrates and stores
    tmux.start(command(tmp_path, paths, budget=2))
    screen = tmux.wait_for("(cached)", "limits this analysis", timeout=30)
    assert "calibrated just now (cached)" in screen or "min ago (cached)" in screen
    tmux.keys("3")
    tmux.wait_for("Cached calibration from")
    tmux.keys("q")
    assert "EXIT=0" in tmux.wait_for("EXIT=", timeout=20)
