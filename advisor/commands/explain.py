"""``hep-advisor explain CODE [PATHS]``: one recommendation's full card, or ``explain
model-check``: the model check point by point, from the advice the last ``report`` of those
files left in the cache.  It never calibrates: where nothing is cached it says so in one line
and names the command that makes it.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from hep_advisor.commands.common import EXIT_NO_DATA, EXIT_OK, EXIT_USAGE

if TYPE_CHECKING:
    from hep_advisor.findings.advice import Advice, Report

MODEL_CHECK = "MODEL-CHECK"


def add_explain_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("code", metavar="CODE", type=str.upper,
                   help="a recommendation's code (M001, C001, W001, ...), or model-check: "
                   "every point the model was checked against")
    p.add_argument("paths", nargs="*", metavar="PATHS",
                   help="the ROOT files, directories or globs a report was made on (default: "
                   "the demo datasets, as `hep-advisor report` with no PATHS)")


def cached_advice_of(paths: list[str]) -> list[Advice]:
    """The advice cached for ``paths`` (one dataset), or for each demo dataset without
    ``paths``; never calibrates, never writes the demo."""
    from hep_advisor.pipeline.advise import cached_advice

    if paths:
        groups = [paths]
    else:
        from hep_advisor.demo.report import DEMO_DATASETS
        from hep_advisor.pipeline.paths import default_demo_dir

        root = default_demo_dir()
        if not (root / "manifest.json").exists():
            return []
        groups = [[str(root / rel)] for _, rel in DEMO_DATASETS]
    out = []
    for g in groups:
        try:
            a = cached_advice(g)
        except Exception:  # an unreadable or missing input: nothing cached for it
            a = None
        if a is not None:
            out.append(a)
    return out


def cached_report(paths: list[str]) -> Report | None:
    from hep_advisor.findings.advice import Report

    advice = cached_advice_of(paths)
    if not advice:
        return None
    return Report(site=advice[0].site, advice=tuple(advice))


def run_explain(args: argparse.Namespace) -> int:
    import shlex

    from rich.console import Console

    from hep_advisor.commands.console import print_error
    from hep_advisor.rules.registry import RULES

    code = args.code
    if code not in RULES and code != MODEL_CHECK:
        print_error(f"{code}: not a recommendation's code; expected model-check or one of "
                    f"{', '.join(RULES)}")
        return EXIT_USAGE
    report = cached_report(list(args.paths))
    if report is None:
        where = shlex.join(args.paths) if args.paths else "the demo datasets"
        make = "hep-advisor report" + (f" {shlex.join(args.paths)}" if args.paths else "")
        print_error(f"no advice cached for {where}: `{make}` makes it (it calibrates once, "
                    "about a minute), then explain reads it")
        return EXIT_NO_DATA
    from hep_advisor.render.explain_view import explain_card, explain_model_check

    view = explain_model_check(report) if code == MODEL_CHECK else explain_card(report, code)
    Console().print(view)
    return EXIT_OK
