"""``hep-advisor apply``: outputs verified against the inputs' data, inputs untouched, a damaged
output detected, an interrupted run resumed to the same result."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from hep_advisor.cli import main
from hep_advisor.pipeline.apply import (
    JOURNAL,
    ApplyError,
    VerificationError,
    apply_plan,
    find_hadd,
    journal_digests,
    make_plan,
)
from hep_advisor.pipeline.apply_verify import compare, data_digest, file_sha256

TOOLS = ["uproot", pytest.param("hadd", marks=pytest.mark.root)]


def write_events(path: Path, entries: int = 400, seed: int = 0) -> Path:
    """A small tree ``events``: flat floats and ints, and a jagged collection, written in a
    few baskets."""
    import awkward as ak
    import uproot

    rng = np.random.default_rng(seed)
    with uproot.recreate(path) as f:
        f.mktree("events", {"x": np.float32, "n": np.int32,
                            "trk_pt": ak.types.from_datashape("var * float32",
                                                              highlevel=False)})
        for _ in range(4):
            k = entries // 4
            counts = rng.integers(0, 5, size=k)
            pt = ak.unflatten(np.round(rng.exponential(10, counts.sum()), 1).astype(np.float32),
                              counts)
            f["events"].extend({"x": rng.normal(size=k).astype(np.float32),
                                "n": counts.astype(np.int32), "trk_pt": pt})
    return path


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    d = tmp_path / "in"
    d.mkdir()
    for i in range(4):
        write_events(d / f"f{i}.root", seed=i)
    return d


def _checksums(d: Path) -> dict[str, str]:
    return {p.name: file_sha256(str(p)) for p in sorted(d.iterdir())}


def _tool(tool: str) -> str:
    if tool == "hadd" and find_hadd() is None:
        pytest.skip("ROOT's hadd not found")
    return tool


@pytest.mark.parametrize("tool", TOOLS)
def test_merge_verified_and_inputs_untouched(inputs: Path, tmp_path: Path, tool: str) -> None:
    before = _checksums(inputs)
    files = sorted(str(p) for p in inputs.iterdir())
    size = Path(files[0]).stat().st_size
    plan = make_plan("M001", [str(inputs)], tmp_path / "out", target_mb=2.2 * size / 1e6,
                     tool=_tool(tool))
    assert [len(o.inputs) for o in plan.outputs] == [2, 2]
    seen: list[tuple[int, int]] = []
    result = apply_plan(plan, progress=lambda d, t, m: seen.append((d, t)))
    assert _checksums(inputs) == before and result.inputs_unchanged
    assert [o.state for o in result.outputs] == ["written", "written"]
    assert seen[-1][0] == seen[-1][1] == plan.input_bytes
    # the outputs hold the inputs' data, in order
    for out, group in zip(result.outputs, (files[:2], files[2:]), strict=True):
        assert compare(data_digest(group), data_digest([out.path])) == []
        assert out.entries == 800
    out_dir = tmp_path / "out"
    assert sorted(p.name for p in out_dir.iterdir()) == sorted(
        [JOURNAL, "merged_000.root", "merged_001.root"])
    # a second run skips what was verified
    again = apply_plan(plan)
    assert [o.state for o in again.outputs] == ["skipped", "skipped"]


@pytest.mark.parametrize("tool", TOOLS)
def test_recompress(inputs: Path, tmp_path: Path, tool: str) -> None:
    import uproot

    plan = make_plan("C001", [str(inputs)], tmp_path / "out", algorithm="ZSTD",
                     tool=_tool(tool))
    result = apply_plan(plan)
    assert len(result.outputs) == 4 and result.inputs_unchanged
    with uproot.open(result.outputs[0].path) as f:
        assert f.file.fCompress == 505


def _flip(path: Path) -> None:
    """Flip a few bytes inside the stored data of branch ``x`` (its last basket)."""
    import uproot

    with uproot.open(path) as f:
        b = f["events"]["x"]
        basket = b.basket(b.num_baskets - 1)
        seek = int(b.member("fBasketSeek")[b.num_baskets - 1])
        start, size = seek + basket.member("fKeylen"), basket.member("fNbytes")
    data = bytearray(path.read_bytes())
    for i in range(start + 10, start + size - basket.member("fKeylen"), 7):
        data[i] ^= 0x01
    path.write_bytes(bytes(data))


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size * 2 // 3])


@pytest.mark.parametrize("damage", [_flip, _truncate])
def test_corrupted_output_is_detected(inputs: Path, tmp_path: Path,
                                      damage: Callable[[Path], None]) -> None:
    before = _checksums(inputs)
    out = tmp_path / "out"
    plan = make_plan("R001", [str(inputs)], out, tool="uproot")
    with pytest.raises(VerificationError, match=r"f0\.root: verification failed"):
        apply_plan(plan, after_write=damage)
    # nothing kept under the output's name, no partial file left, inputs untouched
    assert sorted(p.name for p in out.iterdir()) == [JOURNAL]
    assert _checksums(inputs) == before
    # an output damaged after it was verified is found on the next run and written again
    first = apply_plan(plan)
    victim = Path(first.outputs[1].path)
    victim.write_bytes(victim.read_bytes()[: victim.stat().st_size // 2])
    second = apply_plan(plan)
    assert [o.state for o in second.outputs] == ["skipped", "redone", "skipped", "skipped"]
    assert compare(data_digest([str(inputs / "f1.root")]), data_digest([str(victim)])) == []


def test_interrupted_run_resumes_to_the_same_result(inputs: Path, tmp_path: Path) -> None:
    before = _checksums(inputs)
    whole = make_plan("R001", [str(inputs)], tmp_path / "whole", tool="uproot")
    apply_plan(whole)
    plan = make_plan("R001", [str(inputs)], tmp_path / "out", tool="uproot")
    calls = []

    def interrupt_third(tmp: Path) -> None:
        calls.append(tmp)
        if len(calls) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        apply_plan(plan, after_write=interrupt_third)
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == sorted([JOURNAL, "f0.root", "f1.root"])
    resumed = apply_plan(plan)
    assert [o.state for o in resumed.outputs] == ["skipped", "skipped", "written", "written"]
    assert journal_digests(out) == journal_digests(tmp_path / "whole")
    assert _checksums(inputs) == before


def test_never_overwrites_a_file_it_did_not_write(inputs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "f2.root").write_bytes(b"mine")
    plan = make_plan("R001", [str(inputs)], out, tool="uproot")
    with pytest.raises(ApplyError, match="never overwrites"):
        apply_plan(plan)
    assert (out / "f2.root").read_bytes() == b"mine"
    with pytest.raises(ApplyError, match="holds the input"):
        make_plan("R001", [str(inputs)], inputs, tool="uproot")
    with pytest.raises(ApplyError, match="apply knows"):
        make_plan("W001", [str(inputs)], out)


def test_cli_dry_run_and_apply(inputs: Path, tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["apply", "m001", str(inputs), "--to", str(out), "--dry-run",
                 "--target-mb", "100", "--tool", "uproot"]) == 0
    text = capsys.readouterr().out
    assert "merged_000.root  <-  f0.root and 3 more" in text and not out.exists()
    assert main(["apply", "M001", str(inputs), "--to", str(out), "--target-mb", "100",
                 "--tool", "uproot", "--json"]) == 0
    import json

    import jsonschema

    from hep_advisor.document.schema import generate_schema

    doc = json.loads(capsys.readouterr().out)
    assert doc["command"] == "apply" and doc["apply"]["inputs_unchanged"]
    assert doc["apply"]["outputs"][0]["entries"] == 1600
    assert doc["apply"]["plan"][0]["inputs"][0].endswith("f0.root")
    assert "SHA-256" in doc["apply"]["verification"] and not doc["apply"]["dry_run"]
    jsonschema.validate(doc, generate_schema())
    # the plan alone, as JSON: nothing written
    dest = tmp_path / "planned"
    assert main(["apply", "M001", str(inputs), "--to", str(dest), "--dry-run", "--json",
                 "--target-mb", "100", "--tool", "uproot"]) == 0
    plan = json.loads(capsys.readouterr().out)
    jsonschema.validate(plan, generate_schema())
    assert plan["apply"]["dry_run"] and plan["apply"]["outputs"] == [] and not dest.exists()
    assert len(plan["apply"]["plan"]) == 1 and len(plan["apply"]["plan"][0]["inputs"]) == 4
