"""Start-up of the TUI (issue 6): from process start to the first screen with cached results.

    python -m benchmarks.timing.bench_tui_start [--repeat 5] [--scale tiny|default]
        [--mode tmux|headless]

A calibration of the demo's small files is made first (in a private cache directory), so every
start reuses it, as a second `hep-advisor` on the same files does.  Then, ``--repeat`` times:

- ``tmux`` (the default where tmux is installed): ``hep-advisor tui PATH`` in a real terminal
  (``tmux new-session -x 100 -y 30``), the pane captured every 10 ms; the times from the
  session's start to the first frame (the tab bar drawn) and to the verdict on screen;
- ``headless``: the app run headless in a fresh interpreter, ``make_app(on_ready=...)``
  printing when the advice is on screen; the time from ``Popen`` to that line.

It prints the median (target: under 1 s to the verdict), the range, and the import times of
the pieces that a start with cached results loads.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

READY = "limits this analysis"
FIRST_FRAME = "6 What-if"


def _stats(xs: list[float]) -> str:
    return (f"median {statistics.median(xs):.3f} s (min {min(xs):.3f}, max {max(xs):.3f}, "
            f"n={len(xs)})")


def prepare(scale: str, work: Path) -> list[str]:
    os.environ["HEP_ADVISOR_CACHE"] = str(work / "cache")
    from hep_advisor.demo import make_datasets
    from hep_advisor.pipeline.advise import advise

    demo = make_datasets(work / "demo", scale=scale, jobs=1)
    paths = [str(demo / "small_files")]
    t0 = time.perf_counter()
    advise(paths, budget_s=5 if scale == "tiny" else 30)
    print(f"calibrated {paths[0]} once in {time.perf_counter() - t0:.1f} s (cached for the "
          "runs below)")
    return paths


def run_tmux(paths: list[str], repeat: int) -> tuple[list[float], list[float]]:
    first, ready = [], []
    env = f"HEP_ADVISOR_CACHE={os.environ['HEP_ADVISOR_CACHE']} TERM=xterm-256color"
    cmd = f"{env} {sys.executable} -m hep_advisor tui {' '.join(paths)}; sleep 30"
    for _ in range(repeat):
        sock = f"hep-advisor-bench-{uuid.uuid4().hex[:8]}"

        def tmux(*args: str, sock: str = sock) -> str:
            return subprocess.run(["tmux", "-L", sock, *args], capture_output=True,
                                  text=True).stdout

        t0 = time.perf_counter()
        tmux("new-session", "-d", "-s", "b", "-x", "100", "-y", "30", cmd)
        t_first = None
        try:
            while time.perf_counter() - t0 < 60:
                screen = tmux("capture-pane", "-p", "-t", "b")
                now = time.perf_counter() - t0
                if t_first is None and FIRST_FRAME in screen:
                    t_first = now
                if READY in screen:
                    ready.append(now)
                    first.append(t_first if t_first is not None else now)
                    break
                time.sleep(0.01)
            else:
                raise SystemExit(f"no verdict after 60 s; the screen:\n{screen}")
            tmux("send-keys", "-t", "b", "q")
            time.sleep(0.5)
        finally:
            tmux("kill-server")
    return first, ready


HEADLESS = """
import sys, time
from hep_advisor.tui import make_app
def ready(app):
    print("READY", flush=True)
    app.exit()
make_app(sys.argv[1:], on_ready=ready).run(headless=True, size=(100, 30))
"""


def run_headless(paths: list[str], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        p = subprocess.Popen([sys.executable, "-c", HEADLESS, *paths], stdout=subprocess.PIPE,
                             text=True)
        assert p.stdout is not None
        for line in p.stdout:
            if line.startswith("READY"):
                out.append(time.perf_counter() - t0)
                break
        p.wait(timeout=60)
    return out


def import_times() -> None:
    print("import times (fresh interpreter, median of 3):")
    for what in ("textual.app", "hep_advisor.tui.app", "hep_advisor.probes", "hep_advisor.models",
                 "hep_advisor.pipeline.advise",
                 "hep_advisor.tui.app, hep_advisor.pipeline.advise, hep_advisor.rules"):
        xs = []
        for _ in range(3):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", f"import {what}"], check=True)
            xs.append(time.perf_counter() - t0)
        print(f"  {what:<50} {statistics.median(xs):.3f} s")
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    print(f"  {'(python itself)':<50} {time.perf_counter() - t0:.3f} s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--scale", choices=["tiny", "default"], default="tiny")
    ap.add_argument("--mode", choices=["tmux", "headless"],
                    default="tmux" if shutil.which("tmux") else "headless")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="hep-advisor-bench-") as tmp:
        paths = prepare(args.scale, Path(tmp))
        if args.mode == "tmux":
            first, ready = run_tmux(paths, args.repeat)
            print(f"tmux, first frame:        {_stats(first)}")
            print(f"tmux, verdict on screen:  {_stats(ready)}  (target < 1 s)")
        headless = run_headless(paths, args.repeat)
        print(f"headless, advice shown:   {_stats(headless)}")
        import_times()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
