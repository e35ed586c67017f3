"""The terminal view of a trace (Rich): what the program read, what it cost, what to change."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..trace import Trace, split_check


def _mb(n: int | None) -> str:
    return "—" if n is None else f"{n / 1e6:,.2f} MB"


def _s(x: float | None) -> str:
    return "—" if x is None else f"{x:,.2f} s"


def summary_table(t: Trace) -> Table:
    tab = Table.grid(padding=(0, 2))
    tab.add_column(style="bold")
    tab.add_column()
    tab.add_row("command", Text(t.command))
    tab.add_row("exit code", str(t.exit_code))
    tab.add_row("wall", f"{_s(t.wall_s)} traced (tracer cost about {t.overhead:.0%}, "
                "estimated from a measured cost per traced call)")
    tab.add_row("cpu", _s(t.cpu_s))
    tab.add_row("cold", "yes: the named ROOT files were dropped from the page cache first"
                if t.cold else "no (as the page cache found them)")
    amp = "—" if t.amplification is None else f"{t.amplification:.2f}×"
    tab.add_row("read", f"{sum(f.requests for f in t.files):,} requests, "
                f"{_mb(sum(f.bytes for f in t.files))}; amplification {amp} (bytes read ÷ "
                f"bytes of the baskets touched); re-read {_mb(t.reread_bytes)}")
    if t.block_reads is not None:
        tab.add_row("device", f"{t.block_reads:,} reads, {_mb(t.block_bytes)} served by the "
                    "files' block devices during the run (all programs)")
    return tab


def kinds_table(t: Trace) -> Table:
    tab = Table(title="requests by kind", title_justify="left")
    tab.add_column("kind")
    tab.add_column("requests", justify="right")
    tab.add_column("bytes", justify="right")
    b = t.bytes_by_kind
    for name in ("basket", "key", "metadata", "other"):
        tab.add_row(name, f"{getattr(t.requests_by_kind, name):,}",
                    _mb(getattr(b, name)) if b is not None else "—")
    return tab


def files_table(t: Trace, limit: int = 8) -> Table:
    import os

    paths = [f.path for f in t.files]
    common = os.path.commonpath(paths) if len(paths) > 1 and all(
        p.startswith("/") for p in paths) else ""
    if common in paths:  # one file's path is the prefix of the others: no directory to name
        common = os.path.dirname(common)
    title = f"files (in {common})" if common not in ("", "/") else "files"
    tab = Table(title=title, title_justify="left")
    for col, just in (("file", "left"), ("opens", "right"), ("requests", "right"),
                      ("read", "right"), ("baskets touched", "right")):
        tab.add_column(col, justify=just,  # type: ignore[arg-type]
                       overflow="fold" if col == "file" else "ellipsis")
    for f in t.files[:limit]:
        name = os.path.relpath(f.path, common) if title != "files" else f.path
        tab.add_row(name, f"{f.opens:,}", f"{f.requests:,}", _mb(f.bytes), _mb(f.bytes_needed))
    if len(t.files) > limit:
        tab.add_row(f"… {len(t.files) - limit} more", "", "", "", "")
    return tab


def phases_table(t: Trace) -> Table:
    tab = Table(title="phases", title_justify="left")
    for col in ("phase", "from", "to", "requests", "bytes"):
        tab.add_column(col, justify="left" if col == "phase" else "right")
    for p in t.phases:
        tab.add_row(p.name, f"{p.start_s:.2f} s", f"{p.end_s:.2f} s", f"{p.requests:,}",
                    _mb(p.bytes))
    return tab


def split_table(t: Trace) -> Table:
    s = t.time_split
    tab = Table(title="where the time went", title_justify="left")
    tab.add_column("part")
    tab.add_column("seconds", justify="right")
    tab.add_column("how", style="dim")
    tab.add_row("waiting for reads", _s(s.io), "measured: time inside the read calls")
    tab.add_row("decompression", _s(s.decompression),
                "derived: a sample of the baskets read, decompressed and timed")
    tab.add_row("the program's own work", _s(s.user), "measured CPU time less decompression")
    if s.cpu_wait is not None:
        tab.add_row("waiting for a core", _s(s.cpu_wait), "measured (schedstat): a busy "
                    "machine")
    tab.add_row("unexplained", _s(s.unexplained),
                f"{split_check(t):.0%} of the untraced wall time")
    return tab


def findings_view(t: Trace) -> RenderableType:
    if not t.findings:
        return Text("No reader change predicted to help (each rule replayed: see the docs "
                    "for what U001 and U005 look for).", style="dim")
    parts: list[RenderableType] = []
    for f in t.findings:
        body = Table.grid(padding=(0, 1))
        body.add_column()
        body.add_row(Text(f"predicted {f.predicted_speedup:.2f}× "
                          f"({f.speedup_low:.2f}–{f.speedup_high:.2f})", style="bold"))
        body.add_row(Text("change:", style="bold"))
        body.add_row(Text(f.change, style="cyan"))
        for e in f.evidence:
            unit = f" {e.unit}" if e.unit else ""
            note = f" — {e.note}" if e.note else ""
            body.add_row(Text(f"• {e.name}: {e.value}{unit} [{e.source}]{note}", style="dim"))
        parts.append(Panel(body, title=f"{f.code}  {f.title}", title_align="left"))
    return Group(*parts)


def trace_view(t: Trace) -> RenderableType:
    notes = [Text(f"note: {n}", style="yellow") for n in t.notes]
    return Group(summary_table(t), kinds_table(t), files_table(t), phases_table(t),
                 split_table(t), findings_view(t), *notes)
