"""Layering and packaging: probes and models stay UI-free, the wheel ships all three packages."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_core_packages_do_not_load_rich_or_textual() -> None:
    code = (
        "import sys, probes, models, advisor, advisor.document, advisor.demo;"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('rich', 'textual'));"
        "print(','.join(bad))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == ""


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
