"""``hep-advisor apply CODE [PATHS] --to DEST``: a layout recommendation carried out into new,
verified files (see :mod:`hep_advisor.pipeline.apply`)."""

from __future__ import annotations

import argparse
from typing import Any

from hep_advisor.commands.common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    positive_number,
)


def add_apply_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("code", metavar="CODE", type=str.upper,
                   help="the recommendation: M001 (merge), R001 (rewrite baskets), "
                   "C001 (recompress)")
    p.add_argument("paths", nargs="*", metavar="PATHS",
                   help="ROOT files, directories or globs (default: the demo's small files)")
    p.add_argument("--to", dest="dest", required=True, metavar="DEST",
                   help="directory for the new files (created; the journal "
                   "hep-advisor-apply.json is kept there to resume an interrupted run)")
    p.add_argument("--dry-run", action="store_true", help="print the plan, write nothing")
    p.add_argument("--target-mb", type=positive_number, default=None, metavar="MB",
                   help="M001: size of a merged file (default: the cached advice's target, "
                   "else 1000)")
    p.add_argument("--optimize", action=argparse.BooleanOptionalAction, default=None,
                   help="M001: hadd -O, rewriting the baskets (default: as the advice says, "
                   "i.e. where the baskets are tiny)")
    p.add_argument("--algorithm", choices=["LZ4", "ZSTD", "ZLIB", "LZMA"], type=str.upper,
                   default=None, help="C001: the new compression (default: the advice's, "
                   "else ZSTD)")
    p.add_argument("--tool", choices=["hadd", "uproot"], default=None,
                   help="write with ROOT's hadd (default where found) or uproot")
    p.add_argument("--json", action="store_true", help="print the result as JSON on stdout")


def advised_options(code: str, paths: list[str]) -> dict[str, Any]:
    """What a cached advice of these files says (target size, -O, algorithm); ``{}`` without
    one.  Never calibrates."""
    from hep_advisor.pipeline.advise import cached_advice

    try:
        advice = cached_advice(paths)
    except Exception:
        return {}
    rec = advice.recommendation(code) if advice is not None else None
    if rec is None:
        return {}
    from hep_advisor.rules.registry import rule

    change = getattr(rule(code), "change", None)
    out: dict[str, Any] = {}
    if change == "merge":
        target = next((e.value for e in rec.evidence if e.name == "target size"), None)
        if isinstance(target, (int, float)):
            out["target_mb"] = float(target)
        out["optimize"] = "hadd -O" in rec.scenario
    if change == "compression":
        words = rec.title.split()
        if "with" in words:
            out["algorithm"] = words[words.index("with") + 1]
    return out


def run_apply(args: argparse.Namespace) -> int:
    from hep_advisor.commands.console import demo_paths, err_console, print_error, progress_bar
    from hep_advisor.pipeline.apply import ApplyError, VerificationError, apply_plan, make_plan

    paths = list(args.paths) or [p + "/small_files" for p in demo_paths()]
    advised = advised_options(args.code, paths)
    target = args.target_mb or advised.get("target_mb")
    optimize = args.optimize if args.optimize is not None else advised.get("optimize", False)
    algorithm = args.algorithm or advised.get("algorithm", "ZSTD")
    try:
        plan = make_plan(args.code, paths, args.dest, target_mb=target, optimize=optimize,
                         algorithm=algorithm, tool=args.tool)
    except ApplyError as exc:
        print_error(str(exc))
        return EXIT_USAGE
    if plan.kind == "merge" and all(len(o.inputs) == 1 for o in plan.outputs):
        print_error(f"merging to {plan.target_mb:,.2f} MB leaves every file on its own "
                    "(the files are that large already): nothing to merge (--target-mb)")
        return EXIT_USAGE
    if plan.kind == "merge" and target is None:
        err_console.print(f"no cached advice for these files: merging to "
                          f"{plan.target_mb:,.0f} MB (--target-mb to choose)")
    if args.dry_run:
        if args.json:
            from hep_advisor.findings.apply import plan_summary

            _dump(plan_summary(plan, dry_run=True))
            return EXIT_OK
        for line in plan.describe():
            print(line)
        return EXIT_OK
    try:
        with progress_bar(f"{args.code} into {args.dest}") as update:
            result = apply_plan(plan, progress=update)
    except VerificationError as exc:
        print_error(f"{exc}; the output was not kept (nothing else changed)")
        return EXIT_FAILED
    except ApplyError as exc:
        print_error(str(exc))
        return EXIT_FAILED
    except KeyboardInterrupt:
        from hep_advisor.pipeline.apply import journal_digests

        done = len(journal_digests(args.dest))
        print_error(f"interrupted: {done} of {len(plan.outputs)} outputs verified in "
                    f"{args.dest}; run the same command again to resume")
        return EXIT_INTERRUPTED
    if args.json:
        _dump(result.summary())
    else:
        for o in result.outputs:
            print(f"{o.path}  {o.entries:,} entries  {o.bytes / 1e6:,.1f} MB  "
                  f"from {o.inputs} file(s)  {o.state}")
        kept = sum(o.state == "skipped" for o in result.outputs)
        print(f"{len(result.outputs)} output(s) verified (entries and every branch's data "
              f"checksum equal to the inputs'){f'; {kept} from an earlier run' if kept else ''}"
              f"; inputs {'unchanged' if result.inputs_unchanged else 'CHANGED during the run'}")
    return EXIT_OK if result.inputs_unchanged else EXIT_FAILED


def _dump(summary: Any) -> None:
    """The versioned document with its ``apply`` block, on stdout."""
    from dataclasses import replace

    from hep_advisor.commands.console import dump_json
    from hep_advisor.document.report import document_json, make_document

    dump_json(document_json(replace(make_document("apply", None, None), apply=summary)))
