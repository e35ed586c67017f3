"""One record per rule, one registry of output formats, and the import layers.

The rules' records drive the recommendations, ``try``, ``apply`` and what narrows an
interval; the output formats' registry drives ``report --format`` and the TUI's export.  The
import-layers contract (``.importlinter``) runs here too, so that a new arrow upward fails the
tests as it fails CI.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_every_code_has_one_record_in_its_family_module() -> None:
    from hep_advisor.rules.registry import FAMILIES, RULES

    codes = [r.code for fam in FAMILIES for r in fam.RULES]
    assert len(codes) == len(set(codes)) == len(RULES)
    for fam in FAMILIES:
        for r in fam.RULES:
            assert re.fullmatch(r"[A-Z]\d{3}", r.code)
            assert fam.__name__.endswith(("." + r.family, ".reader_changes"))
            assert r.title and r.trigger and r.prediction and r.measure
            assert (r.check is None) == (r.source != "calibration")


def test_the_records_say_what_try_and_apply_handle() -> None:
    from hep_advisor.pipeline.apply import ApplyError, make_plan
    from hep_advisor.rules.registry import RULES, tryable

    assert tryable() == ("M001", "R001", "C001")
    assert {RULES[c].change for c in tryable()} == {"merge", "rewrite", "compression"}
    with pytest.raises(ApplyError, match="apply knows M001, R001, C001"):
        make_plan("W001", [], "/nonexistent")


def test_the_codes_table_in_the_docs_is_the_registrys() -> None:
    from hep_advisor.rules.registry import table

    assert table() in (ROOT / "docs" / "rules.md").read_text(), \
        "run `python -m hep_advisor.rules.registry` and update docs/rules.md"


def test_the_rules_made_by_the_rule_context_carry_their_records_code_and_kind() -> None:
    """``Context.make`` takes the record: the code and the kind of every recommendation come
    from it, never from a second spelling in the rule's function."""
    for path in (ROOT / "advisor" / "rules").glob("*.py"):
        text = path.read_text()
        assert not re.search(r"\.make\([^)]*\bcode=", text), path.name


def test_output_formats_come_from_one_registry() -> None:
    import argparse

    from hep_advisor.commands.report import add_report_arguments
    from hep_advisor.render.formats import FORMATS, by_suffix, file_formats

    p = argparse.ArgumentParser()
    add_report_arguments(p)
    fmt = next(a for a in p._actions if a.dest == "format")
    assert list(fmt.choices or ()) == list(FORMATS)
    assert [f.name for f in file_formats()] == ["md", "json", "html"]
    assert by_suffix(".HTM") is FORMATS["html"] and by_suffix(".txt") is None


@pytest.mark.slow
def test_the_import_layers_hold() -> None:
    """``lint-imports`` (import-linter): the layers one way, no import circle, Rich and
    Textual only in the views.  It reads every import, those inside functions too."""
    exe = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    r = subprocess.run([exe, "--no-cache"], capture_output=True, text=True, cwd=ROOT,
                       timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "4 kept, 0 broken" in r.stdout
