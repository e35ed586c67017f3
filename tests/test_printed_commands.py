"""Every command the advice prints runs as printed, whatever the data's paths hold.

Tiny ROOT files are written below directories with awkward names (spaces, both quote kinds,
``$(...)`` and backticks, glob characters, ``#``, non-ASCII, a newline; a linked directory).
Each rule that prints a command naming the files is driven to fire on a context whose inputs
are those paths (as in test_advice, by changing the figure it keys on), and each shell command
runs in ``bash`` with stubs on ``PATH`` that record their arguments NUL-separated (``hadd``,
``vmtouch``, ``blockdev``), and with ROOT's own ``hadd`` where ROOT is installed.  Each run
must exit 0, hand the tool exactly the files the dataset probe finds, as separate arguments,
inject nothing (no file ``X`` or ``Y`` appears) and leave nothing behind in the data, the
working directory or ``$TMPDIR``.  Python snippets are compiled and their path literals read
back; the uproot merge runs for real, the RDataFrame slimming against a stand-in ``ROOT``
module."""

from __future__ import annotations

import ast
import importlib.util
import json
import math
import os
import shlex
import shutil
import subprocess
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from helpers import snapshot, write_flat
from hep_advisor.findings.advice import Advice
from hep_advisor.findings.recommendation import Recommendation
from hep_advisor.probes.files import discover
from hep_advisor.probes.readtests.results import RequestPoint
from hep_advisor.rules import Context
from hep_advisor.rules import files as files_rules
from hep_advisor.rules.branches import branches_rule
from hep_advisor.rules.compression import compression_rule
from hep_advisor.rules.files import merge_rule, rewrite_rule
from hep_advisor.rules.inputs import PLACEHOLDER, inputs_of, word
from hep_advisor.rules.storage import cache_rule, readahead_rule
from hep_advisor.rules.verdict import verdict

DATA = Path(__file__).parent / "data"

#: Directory names: ``plain`` has nothing ROOT reads as syntax (the commands name the files
#: directly), ``awkward`` has ``$``, ``?`` and ``#`` too (the commands go through links).
NAMES = {
    "plain": "it's a \"plain\" dir * [x] ü €",
    "awkward": "my data $(touch X) `touch Y` 'single' \"double\" * ? [a] #h ü\nline",
}
#: File names below each directory (one in a subdirectory), and files that are not ROOT's.
ROOT_FILES = {
    "plain": ("0 a.root", "1 'q' \"dq\".root", "2 [x]*.root", "sub dir/3 ü.root"),
    "awkward": ("0 $(touch X).root", "1 'q' \"dq\".root", "2 [x]*?.root", "sub #/3 ü.root"),
}
OTHER_FILES = ("notes.txt", "4.root.bak")
ENTRIES = 20

STUB_HADD = r'''
import os, sys
log = os.environ["STUB_LOG"]
args = sys.argv[1:]
n = len([f for f in os.listdir(log) if f.endswith(".argv")])
with open(os.path.join(log, f"{n:03d}.hadd.argv"), "wb") as f:
    f.write(b"\0".join(os.fsencode(a) for a in args))
i = 0
while i < len(args) and args[i].startswith("-"):
    i += 2 if args[i] == "-j" else 1
target, inputs = args[i], args[i + 1:]
missing = [a for a in inputs if not os.path.isfile(a)]
if not inputs or missing:
    sys.exit(f"stub hadd: no input, or no such file: {missing!r}")
with open(os.path.join(log, f"{n:03d}.hadd.real"), "wb") as f:  # links are gone afterwards
    f.write(b"\0".join(os.fsencode(os.path.realpath(a)) for a in inputs))
open(target, "wb").close()
'''

STUB_RECORD = r'''
import os, sys
log = os.environ["STUB_LOG"]
name = os.path.basename(sys.argv[0])
n = len([f for f in os.listdir(log) if f.endswith(".argv")])
with open(os.path.join(log, f"{n:03d}.{name}.argv"), "wb") as f:
    f.write(b"\0".join(os.fsencode(a) for a in sys.argv[1:]))
missing = [a for a in sys.argv[1:] if not a.startswith("-") and not a.isdigit()
           and not os.path.exists(a)]
if name == "vmtouch" and missing:
    sys.exit(f"stub vmtouch: no such file: {missing!r}")
'''


@dataclass
class Dataset:
    kind: str
    base: Path  # the awkward directory
    roots: tuple[Path, ...]  # the ROOT files in it

    def inputs(self, style: str) -> tuple[str, ...]:
        if style == "dir":
            return (str(self.base),)
        return tuple(str(p) for p in self.roots)


@pytest.fixture(scope="module")
def advice() -> Advice:
    """Advice from a stored site, dataset and calibration (the tiny demo's small files), its
    tree renamed to the test files' ``t``."""
    from hep_advisor.findings.jsonio import from_jsonable
    from hep_advisor.pipeline.derive import advise_from
    from hep_advisor.probes.readtests.results import Calibration
    from hep_advisor.probes.results import DatasetProfile, SiteProfile

    name = "tui_small_files.json"
    doc = json.loads((DATA / name).read_text())
    site = from_jsonable(SiteProfile, doc["site"], name, "site")
    dataset = from_jsonable(DatasetProfile, doc["dataset"], name, "dataset")
    dataset = replace(dataset, trees=tuple(replace(t, name="t") for t in dataset.trees))
    cal = from_jsonable(Calibration, doc["calibration"], name, "calibration")
    return advise_from(site, dataset, cal, label="small files", inputs=("demo",))


@pytest.fixture(scope="module", params=sorted(NAMES))
def data(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    kind = request.param
    base = tmp_path_factory.mktemp(f"data-{kind}") / NAMES[kind]
    roots = []
    for rel in ROOT_FILES[kind]:
        p = base / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        roots.append(write_flat(p, entries=ENTRIES, branches=2))
    for rel in OTHER_FILES:
        (base / rel).write_text("not ROOT")
    outside = base.parent / "outside"  # reached through a link, as the probe follows them
    outside.mkdir()
    (base / "linked dir").symlink_to(outside)
    write_flat(outside / "5.root", entries=ENTRIES, branches=2)
    roots.append(base / "linked dir" / "5.root")
    return Dataset(kind, base, tuple(roots))


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[Shell]:
    yield Shell(tmp_path)


class Shell:
    """A fresh working directory, ``$TMPDIR`` and stub directory; runs a command in bash."""

    def __init__(self, root: Path, real_hadd: str | None = None) -> None:
        self.root = root
        self.cwd, self.tmp, self.log, self.bin = (root / n for n in ("work", "tmp", "log", "bin"))
        for d in (self.cwd, self.tmp, self.log, self.bin):
            d.mkdir()
        for name, body in (("hadd", STUB_HADD), ("vmtouch", STUB_RECORD),
                           ("blockdev", STUB_RECORD)):
            if name == "hadd" and real_hadd:
                continue
            stub = self.bin / name
            stub.write_text(f"#!{sys.executable}\n{body}")
            stub.chmod(0o755)
        path = [str(self.bin), os.path.dirname(sys.executable), "/usr/bin", "/bin"]
        if real_hadd:
            path.insert(1, os.path.dirname(real_hadd))
        self.env = {"PATH": os.pathsep.join(path), "TMPDIR": str(self.tmp),
                    "STUB_LOG": str(self.log), "HOME": os.environ.get("HOME", str(root)),
                    "LANG": "C.UTF-8"}

    def run(self, command: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(["bash", "-c", command], cwd=self.cwd, env=self.env, text=True,
                              capture_output=True, timeout=120)
        assert done.returncode == 0, f"{command}\n-> {done.returncode}: {done.stderr}"
        return done

    def calls(self, tool: str) -> list[tuple[list[str], list[str]]]:
        """Each call of a stub: its arguments, and (hadd) where its inputs led."""
        out = []
        for argv in sorted(self.log.glob(f"*.{tool}.argv")):
            real = argv.with_suffix(".real")
            out.append((_nul_split(argv), _nul_split(real) if real.exists() else []))
        return out

    def reset(self) -> None:
        for d in (self.cwd, self.log):
            shutil.rmtree(d)
            d.mkdir()


def _nul_split(path: Path) -> list[str]:
    raw = path.read_bytes()
    return [os.fsdecode(a) for a in raw.split(b"\0")] if raw else []


def context(a: Advice, inputs: tuple[str, ...], **params: float) -> Context:
    """The advice's context on ``inputs``, some model parameters replaced, the dataset's
    found files as the live probe gives them."""
    assert a.fitted is not None and a.baseline is not None and a.model is not None
    b = a.baseline
    if params:
        b = replace(b, params=replace(b.params, **params))
    found = tuple(f.path for f in discover(inputs).files)
    return Context(site=a.site, dataset=replace(a.dataset, file_paths=found),
                   calibration=a.calibration, model=a.fitted, baseline=b, summary=a.model,
                   verdict=verdict(b), label=a.label, inputs=inputs)


def expected(inputs: tuple[str, ...]) -> list[str]:
    """The files the dataset probe finds behind ``inputs`` (real paths)."""
    return sorted(os.path.realpath(f.path) for f in discover(inputs).files)


def command(rec: Recommendation | None, needle: str) -> str:
    assert rec is not None, "the rule should fire"
    found = [a.command for a in rec.actions if a.command and needle in a.command]
    assert len(found) == 1, f"one command with {needle!r} in {rec.code}: {rec.actions}"
    return found[0]


def clean(data: Dataset, sh: Shell, before: dict[str, tuple[int, float]],
          outputs: set[str]) -> None:
    """Nothing injected, nothing left behind."""
    for top in (sh.root, data.base.parent):
        for _, dirs, names in os.walk(top):
            assert not {"X", "Y"} & set(dirs + names), "a command substitution ran"
    assert snapshot(data.base.parent) == before, "the data directory changed"
    assert not list(sh.tmp.iterdir()), "left in $TMPDIR"
    assert {p.name for p in sh.cwd.iterdir()} == outputs, "left in the working directory"


def hadd_inputs(calls: list[tuple[list[str], list[str]]]) -> list[list[str]]:
    return [real for _, real in calls]


# -- the merge (M001), the rewrite (R001) and the recompression (C001): hadd -----------------

@pytest.mark.parametrize("style", ["dir", "files"])
def test_merge_hadd_runs_as_printed(advice: Advice, data: Dataset, shell: Shell,
                                    style: str) -> None:
    inputs = data.inputs(style)
    rec = merge_rule(context(advice, inputs, open_s=0.5))
    cmd = command(rec, "hadd")
    assert ("links=" in cmd) == (data.kind == "awkward")
    before = snapshot(data.base.parent)
    shell.run(cmd)
    calls = shell.calls("hadd")
    k = int(cmd.split("i += ")[1].split(")")[0])
    want = expected(inputs)
    groups = hadd_inputs(calls)
    assert sorted(f for g in groups for f in g) == want  # each file once, as its own argument
    assert len(groups) == math.ceil(len(want) / k) and all(len(g) <= k for g in groups)
    targets = [argv[argv.index("-fk") + 1] for argv, _ in calls]
    assert targets == [f"merged_{i:03d}.root" for i in range(len(groups))]
    clean(data, shell, before, set(targets))


@pytest.mark.parametrize("style", ["dir", "files"])
def test_rewrite_and_recompress_run_as_printed(advice: Advice, data: Dataset, shell: Shell,
                                               style: str) -> None:
    inputs = data.inputs(style)
    ctx = context(advice, inputs, basket_s=1e-3, decompress_mb_per_s=0.5)
    tree = ctx.tree
    assert tree is not None
    tiny = replace(tree, baskets=replace(tree.baskets, mean_compressed_bytes=500.0),
                   compression=replace(tree.compression, algorithm="ZLIB"))
    b = ctx.baseline
    ctx = replace(ctx, dataset=replace(ctx.dataset, trees=(tiny,)), baseline=replace(
        b, mean_basket_bytes=500.0, config={**b.config, "baskets": b.config["file_mb"] * 1e6
                                            / 500.0}))
    want = expected(inputs)
    for rec, output in ((rewrite_rule(ctx, merge_applies=False), "rewritten.root"),
                        (compression_rule(ctx), "recompressed.root")):
        cmd = command(rec, "hadd")
        before = snapshot(data.base.parent)
        shell.run(cmd)
        (argv, real), = shell.calls("hadd")
        assert output in argv and sorted(real) == want
        clean(data, shell, before, {output})
        shell.reset()


def _real_hadd() -> str | None:
    spec = importlib.util.find_spec("ROOT")
    if spec is not None and spec.origin:
        here = Path(spec.origin).parent / "bin" / "hadd"
        if here.is_file():
            return str(here)
    return shutil.which("hadd")


@pytest.mark.skipif(_real_hadd() is None, reason="ROOT's hadd is not installed")
def test_commands_run_with_roots_hadd(advice: Advice, data: Dataset, tmp_path: Path) -> None:
    """ROOT reads $, ? and # in a file name as syntax: the commands must still work."""
    import uproot

    sh = Shell(tmp_path, real_hadd=_real_hadd())
    inputs = data.inputs("dir")
    merge = command(merge_rule(context(advice, inputs, open_s=0.5)), "hadd")
    before = snapshot(data.base.parent)
    sh.run(merge)
    merged = sorted(sh.cwd.iterdir())
    assert merged and sum(uproot.open(p)["t"].num_entries for p in merged) == \
        ENTRIES * len(data.roots)
    clean(data, sh, before, {p.name for p in merged})


# -- the uproot merge and the RDataFrame slimming: Python ------------------------------------

def _literals(code: str) -> set[str]:
    return {n.value for n in ast.walk(ast.parse(code))
            if isinstance(n, ast.Constant) and isinstance(n.value, str)}


@pytest.mark.parametrize("style", ["dir", "files"])
def test_uproot_merge_runs_as_printed(advice: Advice, data: Dataset, shell: Shell, style: str,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import uproot

    monkeypatch.setattr(files_rules, "hadd_available", lambda: False)
    inputs = data.inputs(style)
    cmd = command(merge_rule(context(advice, inputs, open_s=0.5)), "uproot")
    script = cmd.split("<<'EOF'\n", 1)[1].rsplit("\nEOF", 1)[0]
    assert set(inputs) <= _literals(script) or \
        {os.path.abspath(p) for p in inputs} <= _literals(script)
    before = snapshot(data.base.parent)
    shell.run(cmd)
    merged = sorted(shell.cwd.iterdir())
    assert sum(uproot.open(p)["t"].num_entries for p in merged) == ENTRIES * len(data.roots)
    clean(data, shell, before, {p.name for p in merged})


def test_snapshot_script_names_the_files(advice: Advice, data: Dataset, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The RDataFrame slimming, run against a stand-in ``ROOT`` that records what the
    TChain is given: every file once, through plain names (links) where ROOT needs them."""
    inputs = data.inputs("dir")
    ctx = context(advice, inputs)
    tree = ctx.tree
    assert tree is not None and tree.branch_profiles
    few = tuple(b.name for b in sorted(tree.branch_profiles, key=lambda b: b.compressed_bytes)[:2])
    cmd = command(branches_rule(replace(ctx, uses=few)), "Snapshot")
    assert set(inputs) <= _literals(cmd) or {os.path.abspath(p) for p in inputs} <= _literals(cmd)
    added: list[tuple[str, str]] = []
    snapshots: list[tuple[Any, ...]] = []

    class Chain:
        def __init__(self, name: str) -> None:
            assert name == "t"

        def AddFile(self, path: str) -> None:
            added.append((path, os.path.realpath(path)))

    class Frame:
        def __init__(self, chain: Chain) -> None:
            pass

        def Snapshot(self, *args: Any) -> None:
            snapshots.append(args)

    fake = types.SimpleNamespace(TChain=Chain, RDataFrame=Frame)
    monkeypatch.setitem(sys.modules, "ROOT", fake)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    exec(compile(cmd, "<B001>", "exec"), {})
    assert sorted(real for _, real in added) == expected(inputs)
    assert all(not set("$?#") & set(p) for p, _ in added)  # what ROOT sees is plain
    assert snapshots == [("t", "slim.root", list(few))]
    assert not list(tmp_path.iterdir()), "the links are removed"


# -- pre-staging (P001) and the read-ahead (A001) -----------------------------------------------

@pytest.mark.parametrize("style", ["dir", "files"])
def test_prestage_commands_run_as_printed(advice: Advice, data: Dataset, shell: Shell,
                                          style: str) -> None:
    inputs = data.inputs(style)
    rec = cache_rule(context(advice, inputs, storage_mb_per_s=5.0, access_ms=10.0))
    before = snapshot(data.base.parent)
    shell.run(command(rec, "cat"))  # real cat: reads the files, fails on a missing one
    shell.run(command(rec, "vmtouch"))
    (argv, _), = shell.calls("vmtouch")
    assert argv[0] == "-t" and argv[1:] == list(inputs)
    clean(data, shell, before, set())


def test_readahead_commands_name_the_device(advice: Advice, shell: Shell) -> None:
    dev = "/dev/disk/by-id/my disk $(touch X) 'q'"
    ctx = context(advice, ("demo",), access_ms=20.0, storage_mb_per_s=100.0)
    b = ctx.baseline
    assert ctx.calibration is not None and ctx.calibration.request_sweep
    m = ctx.calibration.request_sweep[0].measurement
    now = 128 * 1024
    sweep = tuple(RequestPoint(n, "sequential", r, m)
                  for n, r in {now: 30.0, 4 * now: 60.0, 16 * now: 61.0}.items())
    ctx = replace(ctx, baseline=replace(b, access="sequential", config={
        **b.config, "request_bytes": float(now), "file_mb": 500.0}),
        site=replace(ctx.site, storage=tuple(replace(s, read_ahead_kb=128, device=dev)
                                             for s in ctx.site.storage)),
        calibration=replace(ctx.calibration, request_sweep=sweep))
    rec = readahead_rule(ctx)
    shell.run(command(rec, "blockdev"))
    (argv, _), = shell.calls("blockdev")
    assert argv == ["--setra", str(2 * 4 * 128), dev]
    sysfs = shlex.split(command(rec, "/sys/block/"))
    assert sysfs[-2:] == [">", "/sys/block/my disk $(touch X) 'q'/queue/read_ahead_kb"]
    for _, dirs, names in os.walk(shell.root):
        assert "X" not in dirs + names


# -- the words themselves -----------------------------------------------------------------------

def test_words_and_inputs(tmp_path: Path) -> None:
    assert word("-rf.root") == "./-rf.root" and word(PLACEHOLDER) == PLACEHOLDER
    assert shlex.split(word("a 'b' \"c\" $d")) == ["a 'b' \"c\" $d"]
    assert inputs_of(()).placeholder
    d = tmp_path / "d [1]"
    d.mkdir()
    f = write_flat(d / "a.root")
    ins = inputs_of([str(d)])
    assert ins.dirs == (str(d),) and not ins.files and not ins.links
    assert inputs_of([str(tmp_path / "d*")]).dirs == (str(d),)  # a glob, as the probe reads it
    assert inputs_of([str(f)]).files == (str(f),)
    assert inputs_of([str(d)], known=[str(d / "$x.root")]).links  # a file below needs links
