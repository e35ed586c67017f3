"""The example notebook runs end to end: every code cell, in order, on the demo data.

No Jupyter is needed: the cells are executed as a kernel would run them, in one namespace,
and each cell's last expression is rendered the way Jupyter would (``_repr_html_`` first).
The demo data the notebook finds by default are written at the tiny scale into a temporary
cache directory beforehand, so the test stays fast and touches nothing of the user's.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from hep_advisor._version import __version__
from hep_advisor.demo import make_datasets

NOTEBOOK = Path(__file__).resolve().parent.parent / "examples" / "advisor.ipynb"


def run_cell(source: str, ns: dict[str, Any]) -> Any:
    tree = ast.parse(source)
    last = tree.body[-1] if tree.body else None
    if isinstance(last, ast.Expr):
        tree.body = tree.body[:-1]
        exec(compile(tree, "<cell>", "exec"), ns)
        return eval(compile(ast.Expression(last.value), "<cell>", "eval"), ns)
    exec(compile(tree, "<cell>", "exec"), ns)
    return None


def display(value: Any) -> str:
    for method in ("_repr_html_", "__repr__"):
        fn = getattr(value, method, None)
        if fn is not None:
            out = fn()
            if out is not None:
                return str(out)
    return ""


def test_notebook_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HEP_ADVISOR_CACHE", str(tmp_path))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    make_datasets(tmp_path / f"demo-{__version__}-uproot", scale="tiny", jobs=1)
    nb = json.loads(NOTEBOOK.read_text())
    assert nb["nbformat"] == 4
    ns: dict[str, Any] = {"__name__": "__main__"}
    shown = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        value = run_cell("".join(cell["source"]), ns)
        if value is not None:
            shown.append(display(value))
    advice = ns["advice"]
    assert advice.verdict is not None
    assert shown and "<" in shown[0] and advice.verdict.limit in shown[0]  # the HTML view
    out = capsys.readouterr().out
    assert "workers:" in out and "MB/s" in out
    assert not list(tmp_path.glob("calibrations/.tmp-*"))
