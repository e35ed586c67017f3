"""The TUI's Cluster tab, headless: added when the advice has a cluster (``--dask``), with the
per-node table and the cluster scaling plot; absent without one (the six tabs stay)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest
from test_cluster_advice import profile
from tui_helpers import fixture_advice, settle, wait_until

from hep_advisor.pipeline.cluster_calibration import cluster_advice

SIZE = (100, 40)


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory,
                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HEP_ADVISOR_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))


def _run(advice: Any, check: Any) -> None:
    from hep_advisor.tui import make_app

    app = make_app(advice=advice)
    app.animation_level = "none"

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.loaded is not None or app.error is not None,
                             what="the advice")
            await settle(pilot)
            await check(app, pilot)

    asyncio.run(main())


def _text(widget: Any) -> str:
    """What the widget shows, as plain text."""
    from textual.geometry import Region

    size = widget.size
    return "\n".join(s.text for s in widget.render_lines(Region(0, 0, size.width,
                                                                 size.height)))


def test_cluster_tab_shows_nodes_and_the_plot() -> None:
    from textual.widgets import Static, TabbedContent

    from hep_advisor.tui.cluster_tab import ClusterPlot

    cl = cluster_advice(profile([100.0, 100.0, 40.0], shared=150.0, cpu=50.0))
    advice = replace(fixture_advice(), cluster=cl)

    async def check(app: Any, pilot: Any) -> None:
        await wait_until(pilot, lambda: bool(app.query("#cluster-pane")), what="the tab")
        app.query_one(TabbedContent).active = "cluster"
        await settle(pilot)
        assert app.active_tab == "cluster"
        assert "tcp://10.0.0.99:8786" in _text(app.query_one("#cluster-summary", Static))
        text = _text(app.query_one("#cluster-tables", Static))
        assert "node2" in text and "slow" in text and "per node MB/s" in text
        plot = app.query_one(ClusterPlot)
        assert plot.data is not None and plot.data.workers[0] == 1
        drawn = str(plot.render())
        assert drawn.rstrip().splitlines()[-1].lstrip().startswith("nodes")  # the x axis
        assert "workers" not in drawn

    _run(advice, check)


def test_no_cluster_no_tab() -> None:
    async def check(app: Any, pilot: Any) -> None:
        assert not app.query("#cluster-pane")

    _run(fixture_advice(), check)
