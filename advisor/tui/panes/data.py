"""Data: trees and branches in a sortable, filterable table."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import DataTable, Input, Static

from hep_advisor.render import fmt
from hep_advisor.tui.panes.base import show_if_loaded

if TYPE_CHECKING:
    from hep_advisor.probes.results import DatasetProfile
    from hep_advisor.render.scaling import ScalingData
    from hep_advisor.tui.source import Loaded, Probed


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    numeric: bool = True


COLUMNS = (Column("branch", "branch", False), Column("type", "type", False),
           Column("compressed", "bytes"), Column("factor", "factor"),
           Column("baskets", "baskets"), Column("basket", "basket"), Column("share", "share"))
TREE = Column("tree", "tree", False)
#: Column widths (cells); the branch names take what is left, at least ``MIN_NAME``.
WIDTHS = {"tree": 10, "type": 9, "compressed": 9, "factor": 7, "baskets": 8, "basket": 8,
          "share": 7}
MIN_NAME = 12


@dataclass(frozen=True)
class BranchRow:
    tree: str
    branch: str
    type: str
    compressed: int
    factor: float | None
    baskets: int
    basket: float | None
    share: float

    def value(self, key: str) -> Any:
        return getattr(self, key)

    def cells(self, with_tree: bool) -> list[str | Text]:
        out: list[str | Text] = [self.tree] if with_tree else []
        out += [self.branch, self.type, _right(fmt.mb(self.compressed, 2)),
                _right(fmt.ratio(self.factor)), _right(f"{self.baskets:,}"),
                _right(fmt.kb(self.basket)), _right(f"{100 * self.share:.1f}%")]
        return out


def _right(text: str) -> Text:
    return Text(text, justify="right")


def branch_rows(ds: DatasetProfile) -> list[BranchRow]:
    """One row per branch profiled, its share being of all the bytes the dataset's trees hold
    (what an analysis reading every branch reads)."""
    total = sum(t.compressed_bytes for t in ds.trees) or 1
    return [BranchRow(t.name, b.name, b.typename, b.compressed_bytes, b.compression_factor,
                      b.baskets.count, b.baskets.mean_compressed_bytes,
                      b.compressed_bytes / total)
            for t in ds.trees for b in t.branch_profiles]


class DataPane(Vertical):
    """The branches of every tree: ``s`` cycles the sort column (again: reverses), ``/``
    filters by name or type; clicking a header sorts by it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "cycle_sort", "Sort"), Binding("slash", "focus_filter", "Filter"),
        Binding("S", "reverse_sort", "Reverse", show=False)]

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.rows: list[BranchRow] = []
        self.sort_key = "compressed"
        self.sort_reverse = True
        self.filter_text = ""
        self.with_tree = False

    def compose(self) -> ComposeResult:
        yield Input(placeholder="Filter branches by name or type (/)", id="data-filter",
                    compact=True)
        yield Static("Loading: probing the files…", id="data-summary")
        yield DataTable(id="branches", zebra_stripes=True, cursor_type="row")

    def on_mount(self) -> None:
        show_if_loaded(self)

    @property
    def table(self) -> DataTable[Any]:
        return self.query_one("#branches", DataTable)

    @property
    def shown_rows(self) -> list[BranchRow]:
        """The rows shown, filtered and sorted."""
        q = self.filter_text.lower().strip()
        rows = [r for r in self.rows
                if not q or q in r.branch.lower() or q in r.type.lower() or q in r.tree.lower()]
        col = next((c for c in (TREE, *COLUMNS) if c.key == self.sort_key), COLUMNS[2])

        def key(r: BranchRow) -> Any:
            v = r.value(col.key)
            if col.numeric:
                return (v is not None, v if v is not None else 0.0)
            return str(v).lower()

        return sorted(rows, key=key, reverse=self.sort_reverse)

    def show(self, loaded: Loaded, scaling: ScalingData | None) -> None:
        self.show_dataset(loaded.advice.dataset)

    def show_probed(self, probed: Probed) -> None:
        """The dataset probe, before the read tests."""
        self.show_dataset(probed.dataset)

    def show_dataset(self, ds: DatasetProfile) -> None:
        self.rows = branch_rows(ds)
        self.with_tree = len({r.tree for r in self.rows}) > 1
        trees = "; ".join(
            f"{'RNTuple' if t.format == 'rntuple' else 'TTree'} {t.name}: {t.files} files, "
            f"{t.entries:,} entries, {t.branches} "
            f"{'fields' if t.format == 'rntuple' else 'branches'}, {fmt.mb(t.compressed_bytes)} "
            f"({fmt.ratio(t.compression_factor)})" for t in ds.trees)
        listed = len(self.rows)
        total = sum(t.branches for t in ds.trees)
        if listed < total:
            trees += f" · {listed} of {total} branches profiled"
        self.query_one("#data-summary", Static).update(Content.styled(trees, "$text-muted"))
        self.refresh_table()

    def refresh_table(self) -> None:
        table = self.table
        table.clear(columns=True)
        cols = ((TREE,) if self.with_tree else ()) + COLUMNS
        fixed = sum(WIDTHS[c.key] + 2 for c in cols if c.key != "branch")
        longest = max((len(r.branch) for r in self.rows), default=MIN_NAME)
        room = (table.size.width or self.app.size.width) - fixed - 2 - 2
        name_w = max(MIN_NAME, min(longest, room))
        for c in cols:
            arrow = ("▼" if self.sort_reverse else "▲") if c.key == self.sort_key else ""
            label = Text(c.label + arrow, justify="right" if c.numeric else "left")
            table.add_column(label, key=c.key, width=name_w if c.key == "branch" else
                             WIDTHS[c.key])
        for r in self.shown_rows:
            table.add_row(*r.cells(self.with_tree), key=f"{r.tree}/{r.branch}")
        shown = table.row_count
        table.border_subtitle = f"{shown} of {len(self.rows)} branches" if self.rows else ""

    def sort_by(self, key: str) -> None:
        if key == self.sort_key:
            self.sort_reverse = not self.sort_reverse
        else:
            self.sort_key = key
            col = next(c for c in (TREE, *COLUMNS) if c.key == key)
            self.sort_reverse = col.numeric  # the largest numbers first, names A to Z
        self.refresh_table()

    def action_cycle_sort(self) -> None:
        cols = [c.key for c in ((TREE,) if self.with_tree else ()) + COLUMNS]
        nxt = cols[(cols.index(self.sort_key) + 1) % len(cols)] if self.sort_key in cols \
            else cols[0]
        self.sort_by(nxt)

    def action_reverse_sort(self) -> None:
        self.sort_by(self.sort_key)

    def action_focus_filter(self) -> None:
        self.query_one("#data-filter", Input).focus()

    def on_resize(self) -> None:
        if self.rows:
            self.refresh_table()

    @on(Input.Changed, "#data-filter")
    def _filter(self, event: Input.Changed) -> None:
        self.filter_text = event.value
        self.refresh_table()

    @on(Input.Submitted, "#data-filter")
    def _to_table(self) -> None:
        self.table.focus()

    @on(DataTable.HeaderSelected, "#branches")
    def _header(self, event: DataTable.HeaderSelected) -> None:
        self.sort_by(str(event.column_key.value))
