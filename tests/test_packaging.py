"""Layering and packaging: every core module of probes, models and advisor stays UI-free (no
Rich, no Textual), probes stand alone, the wheel ships all three packages."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


#: The user interface: the modules allowed to load Rich.  The Rich terminal views of the
#: results, and the command line's commands (their console, progress bars and tables).
#: ``advisor.commands.common`` is not among them: ``hep-advisor --help`` builds every parser
#: from it and stays fast.  Every other module of probes, models and advisor is core (UI-free).
RICH_UI = frozenset({
    "advisor.render.advice_view", "advisor.render.calibration_view",
    "advisor.render.model_view", "advisor.render.probe_view", "advisor.render.cluster_view",
    "advisor.render.trace_view",
    "advisor.commands.calibrate", "advisor.commands.console", "advisor.commands.demo",
    "advisor.commands.predict", "advisor.commands.probe", "advisor.commands.report",
    "advisor.commands.tui",
})
#: The Textual app: the only package allowed to load Textual (its Textual-free parts are
#: checked in tests/test_tui.py).  ``advisor.__main__`` runs the command line when imported.
NOT_IMPORTED = ("advisor.tui", "advisor.__main__")

WALK = """
import importlib, pkgutil
def fail(name):
    raise ImportError(f"cannot walk {name}")
names = []
for top in ("probes", "models", "advisor"):
    pkg = importlib.import_module(top)
    names.append(top)
    names += [m.name for m in pkgutil.walk_packages(pkg.__path__, top + ".", onerror=fail)]
print("\\n".join(names))
"""


@functools.cache
def all_modules() -> list[str]:
    """Every module of the three packages (``pkgutil``: a new module is checked without being
    listed here), but the Textual app's and ``advisor.__main__``."""
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
    for name in ("advisor.core", "advisor.recommend.parallel", "advisor.verdict",
                 "advisor.whatif", "advisor.cache", "advisor.paths", "advisor.demo.report",
                 "models.scenarios", "probes.readtests.calibrate", "advisor.commands.common"):
        assert name in modules
    assert not [m for m in modules if m.startswith("advisor.tui")]
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
    assert loaded_after_importing(["advisor.render.advice_view"], ("rich", "textual")) == ["rich"]


def test_probes_import_neither_models_nor_advisor() -> None:
    code = (
        "import sys, probes;"
        "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('models', 'advisor'))))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == ""


def test_public_names_reachable_from_advisor() -> None:
    import advisor
    import probes

    for name in probes.__all__:
        assert getattr(advisor, name) is getattr(probes, name)


@pytest.mark.slow
def test_installed_wheel_provides_the_three_packages(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(wheels), str(ROOT)],
        check=True, capture_output=True, text=True, timeout=300,
    )
    (wheel,) = wheels.glob("hep_advisor-*.whl")
    import zipfile

    with zipfile.ZipFile(wheel) as zf:  # the emulated-disk bench is development-only
        assert not [n for n in zf.namelist() if "testbench" in n]
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target",
                    str(target), str(wheel)], check=True, capture_output=True, timeout=300)
    code = (
        "import advisor, models, probes, advisor.schema, json;"
        "print(advisor.__file__); print(models.__file__); print(probes.__file__);"
        "print(len(advisor.schema.checked_in_schema()['$defs']))"
    )
    env = {**os.environ, "PYTHONPATH": str(target)}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=tmp_path, env=env, check=True)
    *files, n_defs = r.stdout.split()
    assert all(f.startswith(str(target)) for f in files), files
    assert int(n_defs) > 10
    r = subprocess.run([sys.executable, "-m", "advisor", "--version"], capture_output=True,
                       text=True, cwd=tmp_path, env=env, check=True)
    assert r.stdout.startswith("hep-advisor ")
