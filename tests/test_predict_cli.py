"""``hep-advisor predict``: from site and workload descriptions or a saved calibration, worker
lists, scenario options, the table and the JSON, and one-line errors with exit status 2."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from hep_advisor.commands.common import parse_workers
from hep_advisor.commands.predict import (
    add_predict_arguments,
    default_workers,
    run_predict,
)
from hep_advisor.document.report import document_json, make_document
from hep_advisor.probes.readtests.results import (
    Calibration,
    ConcurrencyPoint,
    Conditions,
    DecompressionPoint,
    EventLoop,
    Measurement,
    OpenOverhead,
    RawRead,
    RequestPoint,
)
from hep_advisor.probes.results import (
    BasketStats,
    Compression,
    CpuInfo,
    DatasetProfile,
    MemoryInfo,
    Sampling,
    SiteProfile,
    SizeStats,
    StorageInfo,
    TreeProfile,
)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "sites"
SITE = str(EXAMPLES / "gsi_raid5_ra128k.toml")
ESD = str(EXAMPLES / "esd.toml")
PYTHIA = str(EXAMPLES / "pythia.toml")


def parse(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="hep-advisor predict")
    add_predict_arguments(p)
    return p.parse_args(list(argv))


def predict_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert run_predict(parse(*argv, "--json")) == 0
    return json.loads(capsys.readouterr().out)


# ---------------------------------------------------------------------------------------------
# Worker lists


@pytest.mark.parametrize(("text", "expected"), [
    ("1-4", (1, 2, 3, 4)), ("1,2,4", (1, 2, 4)), ("1-3,8,12,16", (1, 2, 3, 8, 12, 16)),
    ("4,2,2,1", (1, 2, 4)), ("8", (8,)), (" 2 - 3 ", (2, 3)), ("1,2,4-8", (1, 2, 4, 5, 6, 7, 8)),
    ("6-8,1,7", (1, 6, 7, 8)), ("1,", (1,)), ("4096", (4096,)),
])
def test_worker_lists(text: str, expected: tuple[int, ...]) -> None:
    assert parse_workers(text) == expected


@pytest.mark.parametrize(("text", "message"), [
    ("", "no worker count given"), (",", "no worker count given"),
    ("0-4", "start at 1"), ("0", "start at 1"), ("4-1", "from low to high, e.g. 1-4"),
    ("a", "'a' in 'a' is neither"), ("1-x", "neither"), ("-3", "neither"), ("1.5", "neither"),
    ("1-2-3", "neither"), ("1;2", "neither"), ("1-100000", "at most 4096"),
])
def test_bad_worker_lists(text: str, message: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=message):
        parse_workers(text)


@pytest.mark.parametrize("command", ["calibrate", "predict"])
def test_every_command_reads_both_worker_forms(command: str) -> None:
    from hep_advisor.cli import build_parser

    parser = build_parser()
    assert parser.parse_args([command, "--workers", "1,2,4-6"]).workers == (1, 2, 4, 5, 6)
    assert parser.parse_args([command, "--workers", "1-3"]).workers == (1, 2, 3)


def test_default_workers() -> None:
    assert default_workers(8, 2) == (1, 2, 4, 8, 16)
    assert default_workers(6) == (1, 2, 4, 6)
    assert default_workers(1) == (1,)


# ---------------------------------------------------------------------------------------------
# From descriptions


def test_table_with_a_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    code = run_predict(parse("--site", SITE, "--workload", PYTHIA, "--workers", "1,4",
                             "--read-ahead-kb", "8192"))
    out = capsys.readouterr().out
    assert code == 0
    for text in ("model parameters", "aggregate MB/s", "events/s", "speed-up",
                 "what if: read-ahead 8192 KiB", "not measured", "storage_mb_per_s"):
        assert text in out


def test_json_has_the_model_block(capsys: pytest.CaptureFixture[str]) -> None:
    doc = predict_json(capsys, "--site", SITE, "--workload", ESD, "--workers", "1-2,8")
    assert doc["schema_version"] == 1 and doc["command"] == "predict"
    assert doc["site"] is None and doc["calibration"] is None
    model = doc["model"]
    assert model["source"] == "description"
    p = model["parameters"]["decompress_mb_per_s"]
    assert p == {"value": 163.0, "uncertainty": pytest.approx(32.6), "unit":
                 "compressed MB/s per core", "source": "fixed"}
    assert model["parameters"]["cache_mb_per_s"]["source"] == "assumed"
    points = model["predictions"]
    assert [x["workers"] for x in points] == [1, 2, 8]
    first = points[0]
    assert {"workers", "aggregate_mb_per_s", "low", "high", "events_per_s"} <= first.keys()
    assert first["low"] < first["aggregate_mb_per_s"] < first["high"]
    # the GSI study's one ESD job: about 16 MB/s (esd.toml cites the figure and its source)
    assert 16 <= first["aggregate_mb_per_s"] <= 17.7
    assert model["workload"]["branches"] == 406 and model["scenarios"] == []


def test_options_combine_unless_separately(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ("--site", SITE, "--workload", ESD, "--workers", "4", "--merge-mb", "26",
            "--cached", "--layout", "separate:4", "--compression", "LZ4",
            "--branches-fraction", "0.5", "--request-kb", "4096", "--prestage", "nvme",
            "--on-site", str(EXAMPLES / "gsi_separate4.toml"))
    one = predict_json(capsys, *argv)["model"]["scenarios"]
    assert len(one) == 1 and one[0]["name"].count(" + ") == 7
    each = predict_json(capsys, *argv, "--separately")["model"]["scenarios"]
    # the order advisor.whatif applies them in: the data, the reads, where they are, the cache
    assert [s["name"] for s in each] == [
        "merge to 26 MB", "LZ4 compression", "50% of the bytes", "requests of 4 MiB",
        "site GSI 4 separate disks", "on 4 separate disks (data)", "pre-staged to nvme",
        "page cache"]
    for s in each:
        (p,) = s["predictions"]
        assert p["workers"] == 4 and p["speedup_low"] <= p["speedup"] <= p["speedup_high"]
        assert s["assumptions"]


def test_merging_esd_files_is_a_third_faster(capsys: pytest.CaptureFixture[str]) -> None:
    doc = predict_json(capsys, "--site", SITE, "--workload", ESD, "--workers", "1",
                       "--merge-mb", "26")
    (p,) = doc["model"]["scenarios"][0]["predictions"]
    assert p["speedup"] == pytest.approx(4 / 3, rel=0.03)


def test_storage_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_predict(parse("--site", SITE, "--workload", ESD, "--storage", "data",
                             "--workers", "1")) == 0
    capsys.readouterr()


# ---------------------------------------------------------------------------------------------
# Bad input: one line, exit 2


def error_of(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert run_predict(parse(*argv)) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err
    assert lines[0].startswith("hep-advisor: ")
    return lines[0]


def test_a_bad_key_names_file_and_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "site.toml"
    bad.write_text(Path(SITE).read_text().replace('layout = "raid5"', 'layout = "raid9"'))
    line = error_of(capsys, "--site", str(bad), "--workload", ESD)
    assert f"{bad}: site.storage[0].layout: must be one of" in line


@pytest.mark.parametrize(("argv", "message"), [
    (("--site", SITE), "needs --calibration FILE, or --site FILE with --workload FILE"),
    ((), "needs --calibration"),
    (("--site", SITE, "--workload", ESD, "--calibration", "x.json"), "not both"),
    (("--site", SITE, "--workload", "missing.toml"), "missing.toml: no such file"),
    (("--site", SITE, "--workload", ESD, "--storage", "ssd"), "no storage 'ssd'"),
    (("--site", SITE, "--workload", ESD, "--layout", "raid5:2"), "at least 3"),
    (("--site", SITE, "--workload", ESD, "--compression", "zip"), "unknown compression"),
    (("--site", SITE, "--workload", ESD, "--compression-factor", "2"), "need --compression"),
    (("--site", SITE, "--workload", ESD, "--on-site", ESD), "site: missing table [site]"),
    (("--calibration", "nope.json"), "nope.json: no such file"),
])
def test_bad_options(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...],
                     message: str) -> None:
    assert message in error_of(capsys, *argv)


def test_argument_types_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--workers", "0"], ["--merge-mb", "-1"], ["--branches-fraction", "2"],
                 ["--level", "1.5"]):
        with pytest.raises(SystemExit) as exc:
            parse(*argv)
        assert exc.value.code == 2
    capsys.readouterr()


# ---------------------------------------------------------------------------------------------
# From a saved calibration


def m(median: float, cache: str = "cold", workers: int = 1, request: int | None = None,
      unit: str = "MB/s") -> Measurement:
    samples = (median * 0.98, median, median * 1.02)
    return Measurement(unit, samples, median, 0.02,
                       Conditions(cache, workers, request))  # type: ignore[arg-type]


def calibration_document() -> dict:
    """A calibrate --json document of a 70 MB/s disk and a ZLIB dataset of 3 MB files."""
    site = SiteProfile("host", "Linux", CpuInfo(4, 8), MemoryInfo(16_000_000_000, 8_000_000_000),
                       (StorageInfo("/data", "/data", "ext4", "local", "sda", True, 128, None),))
    tree = TreeProfile(
        name="t", files=100, sampled_files=10, entries=10_000, events_per_file=100, branches=22,
        compressed_bytes=300_000_000, uncompressed_bytes=1_050_000_000, compression_factor=3.5,
        compression=Compression("ZLIB", 1, 101, "basket-header"),
        baskets=BasketStats(4000, 8000.0), cluster_entries=100.0, clusters=None,
        file_bytes=SizeStats(100, 300_000_000, 3_000_000, 3e6, 3_000_000), open_s=None)
    dataset = DatasetProfile(files=100, total_bytes=300_000_000, errors=(), trees=(tree,),
                             sampling=Sampling("sampled", 100, 10, 10.0), usable_files=10)
    mib = 1 << 20
    raw = RawRead(cold_mb_per_s=70.0, warm_mb_per_s=3000.0, iops_4k=120.0, access_time_ms=8.3,
                  bandwidth_mb_per_s=70.0, cold=m(70.0, request=mib),
                  warm=m(3000.0, "warm", request=mib))
    sweep = tuple(RequestPoint(r, "random", v, m(v, request=r))
                  for r, v in ((4096, 0.49), (65536, 7.0), (mib, 45.0)))
    conc = tuple(ConcurrencyPoint(w, 70.0, m(70.0, workers=w, request=mib)) for w in (1, 2, 4))
    dec = (DecompressionPoint("ZLIB", 60.0, 210.0, "cramjam", 100, m(60.0)),
           DecompressionPoint("LZ4", 900.0, 2000.0, "cramjam", 100, m(900.0)))
    loop = EventLoop.from_rate("uproot", 22, 600.0, 30_000.0, 105_000.0,
                               m(600.0, unit="events/s"), m(1500.0, "warm", unit="events/s"))
    cal = Calibration(budget_s=60, elapsed_s=50, partial=False, engine="uproot", raw_read=raw,
                      request_sweep=sweep, concurrency=conc,
                      open_overhead_s=OpenOverhead(0.02, 0.005, m(0.02, unit="s"),
                                                   m(0.005, "warm", unit="s")),
                      decompression=dec, event_loop=loop, memory=None)
    return document_json(make_document("calibrate", site, dataset, cal))


@pytest.fixture
def saved(tmp_path: Path) -> Path:
    p = tmp_path / "cal.json"
    p.write_text(json.dumps(calibration_document()))
    return p


def test_predict_from_a_calibration(saved: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = predict_json(capsys, "--calibration", str(saved), "--workers", "1,2,4",
                       "--compression", "LZ4", "--cached", "--separately")
    model = doc["model"]
    assert model["source"] == "calibration" and model["cores"] == 4
    assert doc["calibration"]["engine"] == "uproot" and doc["site"]["hostname"] == "host"
    sources = {k: v["source"] for k, v in model["parameters"].items()}
    assert sources["open_s"] == "measured" and sources["storage_mb_per_s"] == "fitted"
    one = model["predictions"][0]
    assert one["events_per_s"] == pytest.approx(one["aggregate_mb_per_s"] / 0.03)
    lz4, page = model["scenarios"]
    assert any("measured by the calibration" in a for a in lz4["assumptions"])
    assert all(p["speedup"] > 1 for p in page["predictions"])


def test_calibration_table(saved: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_predict(parse("--calibration", str(saved), "--workers", "1-2",
                             "--layout", "separate:2")) == 0
    out = capsys.readouterr().out
    assert "fitted to the calibration" in out and "calibrated storage taken as one" in out


@pytest.mark.parametrize(("mutate", "message"), [
    (lambda d: "not json {", "not JSON"),
    (lambda d: json.dumps({"x": 1}), "schema_version: missing"),
    (lambda d: json.dumps({**d, "calibration": None}), "calibration: missing (null)"),
    (lambda d: json.dumps({**d, "schema_version": 9}), "schema_version: 9 is not supported"),
    (lambda d: json.dumps({**d, "calibration": {**d["calibration"], "engine": 3}}),
     "calibration.engine: must be a str"),
    (lambda d: json.dumps({**d, "dataset": {k: v for k, v in d["dataset"].items()
                                            if k != "trees"}}), "dataset.trees: missing"),
])
def test_bad_calibration_documents(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                   mutate: object, message: str) -> None:
    p = tmp_path / "bad.json"
    p.write_text(mutate(calibration_document()))  # type: ignore[operator]
    line = error_of(capsys, "--calibration", str(p))
    assert f"{p}: " in line and message in line


# ---------------------------------------------------------------------------------------------
# One what-if translator: the options are advisor.whatif's keywords


def test_options_are_the_notebooks_keywords() -> None:
    """``predict``'s options and ``Advice.predict``'s keywords build the same scenarios."""
    from hep_advisor.commands.predict import build_scenarios
    from hep_advisor.models.scenarios import site_model
    from hep_advisor.models.sites import load_site, load_workload
    from hep_advisor.models.whatif import scenarios_from

    _, baseline = site_model(load_site(SITE), load_workload(ESD))
    args = parse("--site", SITE, "--workload", ESD, "--merge-mb", "26", "--request-kb", "64",
                 "--compression", "ZSTD", "--cached", "--separately")
    cli = build_scenarios(args, baseline)
    lib = scenarios_from(baseline, cached=True, compression="ZSTD", request_bytes=65536,
                         merge_mb=26, separately=True)
    assert [s.name for s in cli] == [s.name for s in lib] == [
        "merge to 26 MB", "ZSTD compression", "requests of 64 KiB", "page cache"]
    assert [s.apply(baseline).config for s in cli] == [s.apply(baseline).config for s in lib]


def test_the_page_cache_applies_after_a_device_change(capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    """Cached files are read from memory on whatever devices hold them: the page cache is
    applied last, so another device does not undo it."""
    def speedup(*argv: str) -> float:
        doc = predict_json(capsys, "--site", SITE, "--workload", ESD, "--workers", "4", *argv)
        return float(doc["model"]["scenarios"][0]["predictions"][0]["speedup"])

    cached = speedup("--cached")
    assert speedup("--layout", "nvme", "--cached") == pytest.approx(cached)
    assert speedup("--layout", "nvme") != pytest.approx(cached)


@pytest.mark.parametrize(("kw", "message"), [
    ({"disks": 4}, "unknown what-if keyword"),
    ({"compression_factor": 2.0}, "need compression"),
    ({"branches": 1.5}, "fraction of bytes"),
    ({"storage": "raid5:2"}, "at least 3"),
])
def test_bad_what_if_keywords(kw: dict, message: str) -> None:
    from hep_advisor.models.scenarios import site_model
    from hep_advisor.models.sites import load_site, load_workload
    from hep_advisor.models.whatif import scenario_from

    _, baseline = site_model(load_site(SITE), load_workload(ESD))
    with pytest.raises(ValueError, match=message):
        scenario_from(baseline, **kw)
    assert scenario_from(baseline) is None and scenario_from(baseline, cached=False) is None


def test_documents_are_read_at_the_schema_version(saved: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """``read_document`` checks ``SCHEMA_VERSION`` (not a number of its own)."""
    from hep_advisor.document import report as document

    assert document.read_document(saved)["schema_version"] == document.SCHEMA_VERSION
    monkeypatch.setattr(document, "SCHEMA_VERSION", document.SCHEMA_VERSION + 1)
    with pytest.raises(document.DocumentError, match=f"reads {document.SCHEMA_VERSION}"):
        document.read_document(saved)
    monkeypatch.undo()
    model, baseline, doc = document.model_from_document(saved)
    assert model is not None and baseline.workers >= 1 and doc["command"] == "calibrate"
