"""Modal screens: the help (packaged Markdown) and the export dialog."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Markdown


def _suffixes() -> str:
    """The export's file suffixes, as a person lists them (``.md, .json or .html``)."""
    from hep_advisor.render.formats import file_formats

    names = [f.suffixes[0] for f in file_formats()]
    return ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else names[0]


def help_text() -> str:
    return resources.files("hep_advisor.tui").joinpath("help.md").read_text(encoding="utf-8")


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark,f1", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help") as box:
            box.border_title = "hep-advisor: help"
            box.border_subtitle = "Esc closes"
            yield Markdown(help_text())


class ExportScreen(ModalScreen["Path | None"]):
    """Asks where to write the report; the format follows the extension (the output formats'
    registry, :mod:`hep_advisor.render.formats`).  Enter writes, Esc cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss_none", "Cancel")]

    def __init__(self, default: Path) -> None:
        super().__init__()
        self.default = default

    def compose(self) -> ComposeResult:
        with Vertical(id="export") as box:
            box.border_title = "Export the report"
            box.border_subtitle = "Enter writes · Esc cancels"
            yield Label(f"File ({_suffixes()}):")
            yield Input(str(self.default), id="export-path")
            yield Label("", id="export-error")

    @on(Input.Submitted, "#export-path")
    def _submit(self, event: Input.Submitted) -> None:
        path = Path(event.value.strip()).expanduser()
        from hep_advisor.render.formats import by_suffix

        if by_suffix(path.suffix) is None:
            self.query_one("#export-error", Label).update(f"Use a {_suffixes()} file name.")
            return
        if path.parent and not path.parent.is_dir():
            self.query_one("#export-error", Label).update(f"No such folder: {path.parent}")
            return
        self.dismiss(path)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
