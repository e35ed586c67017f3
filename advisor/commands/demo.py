"""``hep-advisor demo``: write the example datasets."""

from __future__ import annotations

import argparse
from pathlib import Path

from hep_advisor.commands.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE


def run_demo(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from hep_advisor.commands.console import dump_json, err_console, progress_bar
    from hep_advisor.demo import MANIFEST, default_demo_dir, make_datasets, read_manifest

    target = Path(args.dir).expanduser() if args.dir else default_demo_dir(args.writer)
    if args.dir is None and args.scale != "default":
        err_console.print("hep-advisor: --scale applies with --dir only (the cached demo is "
                          "always the default scale)")
        return EXIT_USAGE
    if (target / MANIFEST).exists():
        err_console.print(f"Demo datasets already in {target}; reusing them.")
    else:
        try:
            with progress_bar(f"writing demo data ({args.writer})", enabled=not args.json) as u:
                make_datasets(target, writer=args.writer, scale=args.scale, progress=u)
        except (FileExistsError, RuntimeError, ValueError, OSError) as exc:
            err_console.print(f"[red]hep-advisor:[/] {exc}")
            return EXIT_FAILED
    manifest = read_manifest(target)
    if args.json:
        dump_json({"directory": str(target), **manifest})
        return EXIT_OK
    t = Table(title=f"demo datasets in {target} (writer: {manifest['writer']})",
              title_justify="left")
    for col in ("dataset", "path", "files", "entries", "branches", "compression", "what"):
        t.add_column(col)
    for d in manifest["datasets"]:
        comp = d["algorithm"] + (f"-{d['level']}" if d["level"] else "")
        t.add_row(d["name"], d["path"], str(d["files"]), f"{d['entries']:,}",
                  str(d["branches"]), comp, d["description"])
    Console().print(t)
    return EXIT_OK
