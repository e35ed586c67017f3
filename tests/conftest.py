"""Shared fixtures: tiny datasets written in temporary directories."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import write_flat
from hep_advisor.demo import make_datasets


@pytest.fixture(scope="session")
def tiny_demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo datasets at the ``tiny`` scale, written once per test session with uproot."""
    return make_datasets(tmp_path_factory.mktemp("demo") / "tiny", scale="tiny", jobs=1)


@pytest.fixture
def flat_file(tmp_path: Path) -> Path:
    return write_flat(tmp_path / "good.root")
