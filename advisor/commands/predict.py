"""``hep-advisor predict``: the throughput model's predictions, and what-if scenarios.

The model comes either from a saved calibration (``calibrate --json``: fitted to its read
tests) or from site and workload descriptions (TOML: no fit, every parameter as described with
an assumed uncertainty).  Scenario options transform it; by default they combine into one
what-if (``--separately``: one each).
"""

from __future__ import annotations

import argparse
import datetime as _dt
from typing import TYPE_CHECKING, Any, Literal

from hep_advisor.commands.common import (
    EXIT_OK,
    EXIT_USAGE,
    add_json_argument,
    add_workers_argument,
    positive_number,
)
from hep_advisor.findings.jsonio import JsonInputError

if TYPE_CHECKING:
    from hep_advisor.models.scenarios import Baseline, ModelSummary, Scenario
    from hep_advisor.models.throughput import ThroughputModel


class InputError(JsonInputError):
    """A bad input file or option: one line, printed as ``hep-advisor: LINE``, exit 2."""


# ---------------------------------------------------------------------------------------------
# Arguments


def _fraction(text: str) -> float:
    value = positive_number(text)
    if value > 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], got {text!r}")
    return value


def _level(text: str) -> float:
    value = positive_number(text)
    if value >= 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1), got {text!r}")
    return value


def add_predict_arguments(p: argparse.ArgumentParser) -> None:
    """The ``predict`` command's options (cheap: no heavy import)."""
    src = p.add_argument_group("the model (one of)")
    src.add_argument("--calibration", metavar="FILE",
                     help="a saved `hep-advisor calibrate --json` document: fit the model to it")
    src.add_argument("--site", metavar="FILE", help="a site description (TOML; with --workload)")
    src.add_argument("--workload", metavar="FILE", help="a workload description (TOML)")
    src.add_argument("--storage", metavar="NAME",
                     help="which [[site.storage]] holds the data (name or index; default first)")
    add_workers_argument(p, None, "worker counts: 1-16, 1,2,4 or 1-8,12,16 (default: powers "
                         "of two up to the logical cores)")
    p.add_argument("--level", type=_level, default=0.9, metavar="P",
                   help="probability of the prediction intervals (default 0.9)")
    w = p.add_argument_group("what-if scenarios (combined into one unless --separately)")
    w.add_argument("--merge-mb", type=positive_number, metavar="MB",
                   help="merge the files to about MB each")
    w.add_argument("--read-ahead-kb", type=positive_number, metavar="KB",
                   help="set the device read-ahead (KiB)")
    w.add_argument("--request-kb", type=positive_number, metavar="KB",
                   help="read in requests of KB KiB (a TTreeCache, vectored reads)")
    w.add_argument("--cached", action="store_true", help="the files in the page cache")
    w.add_argument("--layout", metavar="SPEC",
                   help="the data on other devices: LAYOUT[:COUNT[:KIND]] or KIND, e.g. "
                   "separate:4, raid5:4:hdd, raid0:2:ssd, nvme (LAYOUT single, separate, "
                   "raid0, raid1, raid5, raid6; KIND hdd, ssd, nvme; no KIND: the current "
                   "devices)")
    w.add_argument("--prestage", metavar="SPEC",
                   help="copy the files ahead of use to SPEC (as for --layout), e.g. nvme")
    w.add_argument("--compression", metavar="ALG",
                   help="recompress with ALG: ZLIB, LZ4, ZSTD, LZMA or none")
    w.add_argument("--compression-factor", type=positive_number, metavar="F",
                   help="with --compression: the new compression factor (default: assumed)")
    w.add_argument("--decompress-mb-per-s", type=positive_number, metavar="R",
                   help="with --compression: its decompression rate, compressed MB/s per core "
                   "(default: measured by the calibration, else assumed)")
    w.add_argument("--branches-fraction", type=_fraction, metavar="F",
                   help="read only the branches holding this fraction of the bytes")
    w.add_argument("--on-site", metavar="FILE",
                   help="the same analysis on another (hypothetical) site description")
    w.add_argument("--separately", action="store_true",
                   help="one scenario per option instead of all of them together")
    add_json_argument(p)


# ---------------------------------------------------------------------------------------------
# The command


def run_predict(args: argparse.Namespace) -> int:
    try:
        model, baseline, source, doc = _model(args)
        scenarios = build_scenarios(args, baseline)
        workers = args.workers or default_workers(baseline.cores.cores,
                                                  baseline.cores.threads_per_core)
        from hep_advisor.models.scenarios import summarize

        summary = summarize(model, baseline, workers, scenarios, level=args.level,
                            source=source)
    except JsonInputError as e:
        from hep_advisor.commands.console import print_error

        print_error(str(e))
        return EXIT_USAGE
    if args.json:
        from hep_advisor.commands.console import dump_json

        dump_json(prediction_document(summary, doc))
    else:
        from rich.console import Console

        from hep_advisor.render.model_view import model_view

        Console().print(model_view(summary))
    return EXIT_OK


def default_workers(cores: int, threads_per_core: int = 1) -> tuple[int, ...]:
    logical = max(1, cores * threads_per_core)
    out = {1, logical}
    n = 2
    while n < logical:
        out.add(n)
        n *= 2
    return tuple(sorted(out))


def _model(args: argparse.Namespace
           ) -> tuple[ThroughputModel, Baseline, Literal["calibration", "description"],
                      dict[str, Any] | None]:
    if args.calibration and (args.site or args.workload):
        raise InputError("give --calibration FILE, or --site FILE with --workload FILE, "
                         "not both")
    if args.calibration:
        from hep_advisor.document.report import model_from_document

        model, baseline, doc = model_from_document(args.calibration)
        return model, baseline, "calibration", doc
    if not (args.site and args.workload):
        raise InputError("predict needs --calibration FILE, or --site FILE with "
                         "--workload FILE")
    from hep_advisor.models.scenarios import site_model
    from hep_advisor.models.sites import SpecError, load_site, load_workload

    try:
        site = load_site(args.site)
        workload = load_workload(args.workload)
    except SpecError as e:
        raise InputError(str(e)) from None
    index = _storage_index(site, args.storage, args.site)
    model, baseline = site_model(site, workload, index)
    return model, baseline, "description", None


def _storage_index(site: Any, which: str | None, path: str) -> int:
    if which is None:
        return 0
    names = [s.name for s in site.storage]
    if which in names:
        return names.index(which)
    if which.isdigit() and int(which) < len(names):
        return int(which)
    raise InputError(f"{path}: site.storage: no storage {which!r}; the site has "
                     f"{', '.join(names)}")


def build_scenarios(args: argparse.Namespace, baseline: Baseline) -> list[Scenario]:
    """The scenario options as scenarios (combined into one unless ``--separately``), through
    the library's one what-if translator (``hep_advisor.models.whatif.scenarios_from``)."""
    from hep_advisor.models.whatif import scenarios_from

    if not args.compression and (args.compression_factor or args.decompress_mb_per_s):
        raise InputError("--compression-factor and --decompress-mb-per-s need "
                         "--compression ALG")
    try:
        return scenarios_from(baseline, separately=args.separately, **whatif_keywords(args))
    except ValueError as e:  # SpecError (a bad --on-site file) included
        raise InputError(str(e)) from None


def whatif_keywords(args: argparse.Namespace) -> dict[str, Any]:
    """The scenario options as ``hep_advisor.models.whatif`` keywords."""
    return {
        "merge_mb": args.merge_mb, "read_ahead_kb": args.read_ahead_kb,
        "request_bytes": None if args.request_kb is None else args.request_kb * 1024,
        "cached": args.cached, "storage": args.layout, "prestage": args.prestage,
        "compression": args.compression, "compression_factor": args.compression_factor,
        "decompress_mb_per_s": args.decompress_mb_per_s, "branches": args.branches_fraction,
        "site": args.on_site,
    }


# ---------------------------------------------------------------------------------------------
# The JSON document


def prediction_document(summary: ModelSummary, source: dict[str, Any] | None
                        ) -> dict[str, Any]:
    """The ``predict --json`` document: the common header, the calibration document's site,
    dataset and calibration blocks where the model came from one (else ``null``), and the
    ``model`` block."""
    from hep_advisor._version import __version__
    from hep_advisor.document.report import PRODUCER_NAME, SCHEMA_VERSION
    from hep_advisor.findings.jsonio import to_jsonable

    source = source or {}
    return {
        "schema_version": SCHEMA_VERSION,
        "producer": {"name": PRODUCER_NAME, "version": __version__},
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "command": "predict",
        "site": source.get("site"),
        "dataset": source.get("dataset"),
        "calibration": source.get("calibration"),
        "model": to_jsonable(summary),
    }
