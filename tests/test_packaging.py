"""Layering and packaging: every core module stays UI-free (no Rich, no Textual), the probes
stand alone, the wheel installs one import package (``hep_advisor``) and nothing else, and a
user's own ``models.py``, ``probes/`` or ``advisor.py`` beside a notebook shadows none of it."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


#: The user interface: the modules allowed to load Rich.  The Rich terminal views of the
#: results, and the command line's commands (their console, progress bars and tables).
#: ``hep_advisor.commands.common`` is not among them: ``hep-advisor --help`` builds every parser
#: from it and stays fast.  Every other module of probes, models and advisor is core (UI-free).
RICH_UI = frozenset({
    "hep_advisor.render.advice_view", "hep_advisor.render.calibration_view",
    "hep_advisor.render.model_view", "hep_advisor.render.probe_view",
    "hep_advisor.render.cluster_view", "hep_advisor.render.trace_view",
    "hep_advisor.render.short_view", "hep_advisor.render.explain_view",
    "hep_advisor.commands.calibrate", "hep_advisor.commands.console", "hep_advisor.commands.demo",
    "hep_advisor.commands.predict", "hep_advisor.commands.probe", "hep_advisor.commands.report",
    "hep_advisor.commands.tui",
})
#: The Textual app: the only package allowed to load Textual (its Textual-free parts are
#: checked in tests/test_tui.py).  ``hep_advisor.__main__`` runs the command line when imported.
NOT_IMPORTED = ("hep_advisor.tui", "hep_advisor.__main__")

WALK = """
import importlib, pkgutil
def fail(name):
    raise ImportError(f"cannot walk {name}")
pkg = importlib.import_module("hep_advisor")
names = ["hep_advisor"]
names += [m.name for m in pkgutil.walk_packages(pkg.__path__, "hep_advisor.", onerror=fail)]
print("\\n".join(names))
"""


@functools.cache
def all_modules() -> list[str]:
    """Every module of the package (``pkgutil``: a new module is checked without being
    listed here), but the Textual app's and ``hep_advisor.__main__``."""
    r = subprocess.run([sys.executable, "-c", WALK], capture_output=True, text=True, check=True)
    names = r.stdout.split()
    return [n for n in names if not any(n == x or n.startswith(x + ".") for x in NOT_IMPORTED)]


def loaded_after_importing(modules: list[str], roots: tuple[str, ...]) -> list[str]:
    """Import ``modules`` in a fresh interpreter: the modules of the ``roots`` packages then
    loaded."""
    code = (f"import importlib, sys\nfor m in {modules!r}: importlib.import_module(m)\n"
            f"print(','.join(sorted({{m.split('.')[0] for m in sys.modules}} & {set(roots)!r})))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return [x for x in r.stdout.strip().split(",") if x]


def test_the_walk_finds_the_core() -> None:
    modules = all_modules()
    for name in ("hep_advisor.pipeline.advise", "hep_advisor.rules.workers",
                 "hep_advisor.rules.verdict", "hep_advisor.models.whatif",
                 "hep_advisor.pipeline.cache", "hep_advisor.pipeline.paths",
                 "hep_advisor.demo.report", "hep_advisor.models.scenarios",
                 "hep_advisor.probes.readtests.calibrate", "hep_advisor.commands.common"):
        assert name in modules
    assert not [m for m in modules if m.startswith("hep_advisor.tui")]
    assert set(modules) >= RICH_UI, "a UI module was renamed: update RICH_UI"


def test_every_core_module_is_ui_free() -> None:
    """Every module but the UI's, imported together: neither Rich nor Textual is loaded (the
    core is used from notebooks and scripts without a terminal UI)."""
    core = [m for m in all_modules() if m not in RICH_UI]
    assert loaded_after_importing(core, ("rich", "textual")) == []


def test_the_command_line_does_not_load_textual() -> None:
    assert loaded_after_importing(sorted(RICH_UI), ("textual",)) == []


def test_the_check_sees_a_ui_import() -> None:
    """The check itself: importing a Rich view is reported."""
    loaded = loaded_after_importing(["hep_advisor.render.advice_view"], ("rich", "textual"))
    assert loaded == ["rich"]


def test_probes_import_neither_models_nor_the_advisor() -> None:
    code = (
        "import sys, hep_advisor.probes;"
        "print(','.join(sorted(m for m in sys.modules if m.startswith('hep_advisor.') and "
        "not m.startswith('hep_advisor.probes') and m != 'hep_advisor._version')))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == ""


def test_public_names_reachable_from_advisor() -> None:
    import hep_advisor
    import hep_advisor.probes

    for name in hep_advisor.probes.__all__:
        assert getattr(hep_advisor, name) is getattr(hep_advisor.probes, name)


#: A notebook's folder that holds what physicists' analysis folders often hold: its own
#: ``models.py`` (machine learning), a ``probes/`` package and an ``advisor.py``.
SHADOWS = {"models.py": "MODEL = 1\n", "probes/__init__.py": "", "advisor.py": "X = 1\n"}

NOTEBOOK = (
    "import hep_advisor, models, probes, json;"
    "a = hep_advisor.advise(hep_advisor.demo_dataset(), budget_s=2, cache=False);"
    "print(json.dumps([hep_advisor.__file__, models.__file__, probes.__file__, a.label,"
    " a.dataset.files]))"
)


def _shadowing_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "analysis"
    for rel, text in SHADOWS.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    return folder


@pytest.mark.slow
def test_a_notebook_beside_its_own_models_py_works(tmp_path: Path, tiny_demo: Path) -> None:
    """``import hep_advisor; hep_advisor.advise(hep_advisor.demo_dataset())`` from a folder
    that holds ``models.py``, ``probes/`` and ``advisor.py``: ours are not shadowed, theirs are
    not hidden."""
    import shutil

    from hep_advisor.pipeline.paths import default_demo_dir

    folder = _shadowing_folder(tmp_path)
    env = {**os.environ, "HEP_ADVISOR_CACHE": str(tmp_path / "cache")}
    with pytest.MonkeyPatch.context() as mp:  # the tiny demo, in the default demo's place
        mp.setenv("HEP_ADVISOR_CACHE", env["HEP_ADVISOR_CACHE"])
        shutil.copytree(tiny_demo, default_demo_dir())
    r = subprocess.run([sys.executable, "-c", NOTEBOOK], capture_output=True, text=True,
                       cwd=folder, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    ours, theirs_models, theirs_probes, label, files = json.loads(r.stdout.splitlines()[-1])
    assert not ours.startswith(str(folder))
    assert theirs_models == str(folder / "models.py")
    assert theirs_probes == str(folder / "probes" / "__init__.py")
    assert label and files > 0


@pytest.mark.slow
def test_the_wheel_installs_one_import_package(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(wheels), str(ROOT)],
        check=True, capture_output=True, text=True, timeout=300,
    )
    (wheel,) = wheels.glob("hep_advisor-*.whl")
    import zipfile

    with zipfile.ZipFile(wheel) as zf:
        tops = {n.split("/")[0] for n in zf.namelist()}
        names = zf.namelist()
    assert tops == {"hep_advisor", wheel.name.split("-py3")[0] + ".dist-info"}, tops
    assert not [n for n in names if "testbench" in n]  # the emulated-disk bench: development only
    # the trace's Python recorder and ROOT's C++ loop are data the package needs
    assert "hep_advisor/probes/trace/_site/sitecustomize.py" in names
    assert "hep_advisor/probes/readtests/rootengine.cxx" in names
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target",
                    str(target), str(wheel)], check=True, capture_output=True, timeout=300)
    folder = _shadowing_folder(tmp_path)
    code = (
        "import hep_advisor, hep_advisor.models, hep_advisor.probes, hep_advisor.document.schema;"
        "import hep_advisor.models.replay, hep_advisor.probes.dataset;"
        "print(hep_advisor.__file__); print(hep_advisor.models.__file__);"
        "print(hep_advisor.probes.__file__);"
        "print(len(hep_advisor.document.schema.checked_in_schema()['$defs']))"
    )
    env = {**os.environ, "PYTHONPATH": str(target)}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=folder, env=env, check=True)
    *files, n_defs = r.stdout.split()
    assert all(f.startswith(str(target)) for f in files), files
    assert int(n_defs) > 10
    r = subprocess.run([sys.executable, "-m", "hep_advisor", "--version"], capture_output=True,
                       text=True, cwd=folder, env=env, check=True)
    assert r.stdout.startswith("hep-advisor ")


def test_nothing_imports_the_folders_by_their_own_names() -> None:
    """``advisor``, ``models`` and ``probes`` are folders of the repository, not import names:
    from the repository's root they would import (a second copy of the code), so a slip
    would pass here and fail in a user's installation.  Every import says ``hep_advisor``,
    in code and in the programs the tests and benchmarks run with ``python -c``."""
    import ast
    import re

    folders = ("advisor", "models", "probes")
    quoted = re.compile(r"""["'](?:import|from) +(?:advisor|models|probes)\b|"""
                        r"""["']-m["'], *["'](?:advisor|models|probes)\b""")
    bad = []
    for top in ("advisor", "models", "probes", "tests", "benchmarks", "testbench", "examples"):
        for path in (ROOT / top).rglob("*.py"):
            if "_work" in path.parts or path.is_symlink() or any(
                    p.is_symlink() for p in path.relative_to(ROOT).parents if p != Path(".")):
                continue
            text = path.read_text()
            for node in ast.walk(ast.parse(text)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                    [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level \
                    else []
                bad += [f"{path.relative_to(ROOT)}:{node.lineno}" for n in names
                        if n.split(".")[0] in folders]
            bad += [f"{path.relative_to(ROOT)}: {m.group(0)}" for m in quoted.finditer(text)]
    assert bad == []
