"""Command-palette entries (Ctrl+P): the tabs, export, re-run, cancel, copy, theme, help."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Provider

from hep_advisor.render.formats import file_formats


class AdvisorCommands(Provider):
    """The advisor's own commands, beside Textual's system commands."""

    def commands(self) -> Iterator[tuple[str, str, Callable[[], object]]]:
        app: Any = self.app  # the AdvisorApp (hep_advisor.tui.app), which imports this module
        for tab, title in app.TABS:
            yield (f"Go to {title}", f"show the {title} tab",
                   partial(app.action_show_tab, tab))
        for extra, title in (("cluster", "Cluster"), ("trace", "Trace")):  # when shown
            if app.query(f"TabPane#{extra}"):
                yield (f"Go to {title}", f"show the {title} tab",
                       partial(app.action_show_tab, extra))
        for f in file_formats():
            yield (f"Export the report as {f.label}", f.description,
                   partial(app.action_export, f.name))
        yield ("Re-run the read tests", "calibrate again, ignoring the cached calibration",
               app.action_recalibrate)
        yield ("Cancel the read tests", "stop calibrating and advise on what was measured",
               app.action_cancel)
        yield ("Copy the selected command", "copy the highlighted recommendation's command",
               app.action_copy_command)
        yield ("Toggle light and dark theme", "switch between textual-light and textual-dark",
               app.action_toggle_theme)
        yield ("Help: keys and screens", "show the help screen", app.action_help)

    async def discover(self) -> Hits:
        for name, help_text, callback in self.commands():
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback in self.commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, text=name, help=help_text)
