"""``hep-advisor predict``: the throughput model's predictions, and what-if scenarios.

The model comes either from a saved calibration (``calibrate --json``: fitted to its read
tests) or from site and workload descriptions (TOML: no fit, every parameter as described with
an assumed uncertainty).  Scenario options transform it; by default they combine into one
what-if (``--separately``: one each).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..cli import EXIT_OK, EXIT_USAGE
from ..jsonio import JsonInputError, from_jsonable

if TYPE_CHECKING:
    from models.scenarios import Baseline, ModelSummary, Scenario
    from models.throughput import ThroughputModel

MAX_WORKERS = 4096


class InputError(JsonInputError):
    """A bad input file or option: one line, printed as ``hep-advisor: LINE``, exit 2."""


# ---------------------------------------------------------------------------------------------
# Arguments


def parse_workers(text: str) -> tuple[int, ...]:
    """``1-16``, ``1,2,4``, ``1-8,12,16``: sorted, without repeats."""
    out: set[int] = set()
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        lo, sep, hi = part.partition("-")
        try:
            a = int(lo)
            b = int(hi) if sep else a
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"not a worker list: {text!r} (e.g. 1-16, 1,2,4 or 1-8,12,16)") from None
        if a < 1 or b < a:
            raise argparse.ArgumentTypeError(f"bad range {part!r}: counts start at 1, low-high")
        if b > MAX_WORKERS:
            raise argparse.ArgumentTypeError(f"at most {MAX_WORKERS} workers")
        out.update(range(a, b + 1))
    if not out:
        raise argparse.ArgumentTypeError("no worker count given (e.g. 1-16)")
    return tuple(sorted(out))


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}")
    return value


def _fraction(text: str) -> float:
    value = _positive(text)
    if value > 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], got {text!r}")
    return value


def _level(text: str) -> float:
    value = _positive(text)
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
    p.add_argument("--workers", type=parse_workers, default=None, metavar="LIST",
                   help="worker counts: 1-16, 1,2,4 or 1-8,12,16 (default: powers of two up "
                   "to the logical cores)")
    p.add_argument("--level", type=_level, default=0.9, metavar="P",
                   help="probability of the prediction intervals (default 0.9)")
    w = p.add_argument_group("what-if scenarios (combined into one unless --separately)")
    w.add_argument("--merge-mb", type=_positive, metavar="MB",
                   help="merge the files to about MB each")
    w.add_argument("--read-ahead-kb", type=_positive, metavar="KB",
                   help="set the device read-ahead (KiB)")
    w.add_argument("--request-kb", type=_positive, metavar="KB",
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
    w.add_argument("--compression-factor", type=_positive, metavar="F",
                   help="with --compression: the new compression factor (default: assumed)")
    w.add_argument("--decompress-mb-per-s", type=_positive, metavar="R",
                   help="with --compression: its decompression rate, compressed MB/s per core "
                   "(default: measured by the calibration, else assumed)")
    w.add_argument("--branches-fraction", type=_fraction, metavar="F",
                   help="read only the branches holding this fraction of the bytes")
    w.add_argument("--on-site", metavar="FILE",
                   help="the same analysis on another (hypothetical) site description")
    w.add_argument("--separately", action="store_true",
                   help="one scenario per option instead of all of them together")
    p.add_argument("--json", action="store_true", help="print the JSON document on stdout")


# ---------------------------------------------------------------------------------------------
# The command


def run_predict(args: argparse.Namespace) -> int:
    from .common import err_console

    try:
        model, baseline, source, doc = _model(args)
        scenarios = build_scenarios(args, baseline)
        workers = args.workers or default_workers(baseline.cores.cores,
                                                  baseline.cores.threads_per_core)
        from models.scenarios import summarize

        summary = summarize(model, baseline, workers, scenarios, level=args.level,
                            source=source)
    except JsonInputError as e:
        from rich.markup import escape

        err_console.print(f"[red]hep-advisor:[/] {escape(str(e))}", soft_wrap=True,
                          highlight=False, emoji=False, markup=True)
        return EXIT_USAGE
    if args.json:
        from .common import dump_json

        dump_json(prediction_document(summary, doc))
    else:
        from rich.console import Console

        from ..render.model_view import model_view

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
        model, baseline, doc = model_from_document(args.calibration)
        return model, baseline, "calibration", doc
    if not (args.site and args.workload):
        raise InputError("predict needs --calibration FILE, or --site FILE with "
                         "--workload FILE")
    from models.scenarios import site_model
    from models.sites import SpecError, load_site, load_workload

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
    """The scenario options as scenarios (combined into one unless ``--separately``)."""
    from models import scenarios as sc
    from models.sites import SpecError, load_site

    out: list[Scenario] = []
    try:
        if args.merge_mb:
            out.append(sc.merge(args.merge_mb))
        if args.read_ahead_kb:
            out.append(sc.read_ahead(args.read_ahead_kb))
        if args.request_kb:
            out.append(sc.request_size(args.request_kb * 1024))
        if args.cached:
            out.append(sc.cached())
        if args.layout:
            spec, sd, note = sc.parse_storage(args.layout, baseline)
            out.append(sc.devices(spec, sd, (note,)))
        if args.prestage:
            spec, sd, note = sc.parse_storage(args.prestage, baseline)
            out.append(sc.prestaged(spec, sd if sd is not None else sc.SPEC_SD, (note,)))
        if args.compression:
            out.append(sc.compression(args.compression, args.compression_factor,
                                      args.decompress_mb_per_s))
        elif args.compression_factor or args.decompress_mb_per_s:
            raise InputError("--compression-factor and --decompress-mb-per-s need "
                             "--compression ALG")
        if args.branches_fraction:
            out.append(sc.branches(args.branches_fraction))
        if args.on_site:
            out.append(sc.site(load_site(args.on_site)))
        if not args.separately and len(out) > 1:
            out = [sc.combine(*out)]
        for s in out:  # a transform that cannot apply says so now, as one line
            s.apply(baseline)
    except SpecError as e:
        raise InputError(str(e)) from None
    except ValueError as e:
        raise InputError(str(e)) from None
    return out


# ---------------------------------------------------------------------------------------------
# A saved calibration


def model_from_document(path: str) -> tuple[ThroughputModel, Baseline, dict[str, Any]]:
    """Fit the model to a saved ``calibrate --json`` document."""
    from models.scenarios import calibrated_baseline
    from probes.readtests.results import Calibration
    from probes.results import DatasetProfile, SiteProfile

    doc = read_document(path)
    if doc.get("calibration") is None:
        raise InputError(f"{path}: calibration: missing (null): save the output of "
                         "`hep-advisor calibrate --json`, not of `probe`")
    for key in ("site", "dataset"):
        if not isinstance(doc.get(key), dict):
            raise InputError(f"{path}: {key}: missing")
    site = from_jsonable(SiteProfile, doc["site"], path, "site")
    dataset = from_jsonable(DatasetProfile, doc["dataset"], path, "dataset")
    cal = from_jsonable(Calibration, doc["calibration"], path, "calibration")
    try:
        model, baseline = calibrated_baseline(cal, dataset, site)
    except ValueError as e:
        raise InputError(f"{path}: calibration: {e}") from None
    return model, baseline, doc


def read_document(path: str) -> dict[str, Any]:
    try:
        text = Path(path).read_text()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot read: {e}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not JSON: {e.msg} (line {e.lineno})") from None
    if not isinstance(doc, dict) or "schema_version" not in doc:
        raise InputError(f"{path}: schema_version: missing: not a hep-advisor document")
    if doc["schema_version"] != 1:
        raise InputError(f"{path}: schema_version: {doc['schema_version']!r} is not supported "
                         "(this version reads 1)")
    return doc


# ---------------------------------------------------------------------------------------------
# The JSON document


def prediction_document(summary: ModelSummary, source: dict[str, Any] | None
                        ) -> dict[str, Any]:
    """The ``predict --json`` document: the common header, the calibration document's site,
    dataset and calibration blocks where the model came from one (else ``null``), and the
    ``model`` block."""
    from .._version import __version__
    from ..document import PRODUCER_NAME, SCHEMA_VERSION
    from ..jsonio import to_jsonable

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
