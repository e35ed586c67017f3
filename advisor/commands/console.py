"""The commands' terminal output: the Rich console on stderr, error lines, progress bars, JSON
on stdout, and the demo data the no-PATHS commands fall back on."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from hep_advisor.probes.results import ProbeError

err_console = Console(stderr=True, highlight=False)


def print_error_line(path: str, cause: str) -> None:
    """One line per unusable input: ``hep-advisor: PATH: cause`` on stderr."""
    from rich.markup import escape

    err_console.print(f"[red]hep-advisor:[/] {escape(path)}: {escape(cause)}", soft_wrap=True,
                      markup=True, emoji=False)


def print_error(message: str) -> None:
    """``hep-advisor: MESSAGE`` on stderr, on one line (the message is not markup)."""
    from rich.markup import escape

    err_console.print(f"[red]hep-advisor:[/] {escape(message)}", soft_wrap=True,
                      highlight=False, emoji=False, markup=True)


def print_errors(errors: tuple[ProbeError, ...]) -> None:
    for e in errors:
        print_error_line(e.path, e.error)


def dump_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2) + "\n")
    sys.stdout.flush()


@contextmanager
def progress_bar(description: str, enabled: bool = True) -> Iterator[Any]:
    """A transient progress bar on stderr; yields ``update(done, total, message)``."""
    if not enabled or not err_console.is_terminal:
        yield lambda done, total, message: None
        return
    with Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TimeElapsedColumn(), TextColumn("{task.fields[message]}", style="dim"),
        console=err_console, transient=True,
    ) as bar:
        task = bar.add_task(description, total=None, message="")

        def update(done: int, total: int, message: str) -> None:
            bar.update(task, completed=done, total=total, message=message[-50:])

        yield update


def demo_paths() -> list[str]:
    """The default demo data, for a command given no PATHS (created on first use, with a
    progress bar)."""
    from hep_advisor.demo import default_demo_dir, ensure_demo

    target = default_demo_dir()
    if not (target / "manifest.json").exists():
        err_console.print(f"Creating the demo datasets in {target} (once; reused later) ...")
    with progress_bar("writing demo data") as update:
        return [str(ensure_demo(progress=update))]
