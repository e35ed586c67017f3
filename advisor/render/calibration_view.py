"""Rich view of a ``Calibration``: every figure with its spread and the cache state it had."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from probes.readtests.results import Calibration, Measurement

from . import fmt


def _m(m: Measurement | None, digits: int = 0, scale: float = 1.0, unit: str = "") -> str:
    if m is None or m.median is None:
        return fmt.UNKNOWN
    text = f"{m.median * scale:,.{digits}f}{unit}"
    if m.spread is not None:
        text += f" [dim]±{100 * m.spread / 2:.0f}% (n={len(m.samples)})[/]"
    else:
        text += f" [dim](n={len(m.samples)})[/]"
    if m.conditions.cache not in ("cold", "warm"):
        text += f" [yellow]({m.conditions.cache} cache)[/]"
    return text


def _rate(x: float | None) -> str:
    return fmt.num(x, 1 if x is not None and x < 100 else 0)


def _kib(n: int) -> str:
    return f"{n // 1024} KiB" if n < 1 << 20 else f"{n >> 20} MiB"


def calibration_view(cal: Calibration) -> RenderableType:
    g = Table.grid(padding=(0, 2))
    g.add_column(style="bold", no_wrap=True)
    g.add_column(overflow="fold")
    raw = cal.raw_read
    if raw is not None:
        g.add_row("storage (cold)", _m(raw.cold, 0, unit=" MB/s") + "  sequential, 1 MiB reads")
        g.add_row("page cache", _m(raw.warm, 0, unit=" MB/s"))
        g.add_row("small reads", f"{fmt.num(raw.iops_4k)} IOPS (4 KiB random) · access "
                  f"{fmt.num(raw.access_time_ms, 2)} ms · read-ahead makes 4 KiB reads in file "
                  f"order {fmt.ratio(raw.readahead_gain_4k)} faster")
    if cal.open_overhead_s is not None:
        o = cal.open_overhead_s
        g.add_row("open + metadata", f"{_m(o.cold_measurement, 1, 1e3, ' ms')} cold, "
                  f"{_m(o.warm_measurement, 1, 1e3, ' ms')} warm, per file")
    for d in cal.decompression:
        g.add_row(f"decompress {d.algorithm}",
                  f"{_m(d.measurement, 0, unit=' MB/s')} compressed, "
                  f"{fmt.num(d.uncompressed_mb_per_s)} MB/s uncompressed, one core "
                  f"[dim]({d.library}, {d.baskets} baskets)[/]")
    if cal.event_loop is not None:
        e = cal.event_loop
        what = f"analysis {e.analysis}" if e.analysis else f"{e.branches} branches"
        g.add_row("event loop", f"{fmt.num(e.events_per_s)} events/s, "
                  f"{fmt.num(e.compressed_mb_per_s, 1)} MB/s compressed, "
                  f"{fmt.num(e.uncompressed_mb_per_s, 1)} MB/s uncompressed "
                  f"[dim]({e.engine}, {what}; cold {_m(e.cold, 0)}, warm {_m(e.warm, 0)} "
                  "events/s)[/]")
    if cal.call_cost is not None and cal.call_cost.call_s is not None:
        cc = cal.call_cost
        g.add_row("per read call", f"{_m(cc.measurement, 1, 1e3, ' ms')} fixed, then "
                  f"{fmt.num(cc.mb_per_s, 1)} MB/s [dim]({cc.branches} branches; "
                  f"{cc.measurement.conditions.note})[/]")
    if cal.parallel_loop:
        g.add_row("parallel loop", " · ".join(
            f"{p.workers} worker{'s' if p.workers > 1 else ''} {_m(p.measurement, 1, unit=' MB/s')}"
            for p in cal.parallel_loop) + " [dim](warm, whole files)[/]")
    for label, st in (("TTreeCache on", cal.root_cache_on), ("TTreeCache off", cal.root_cache_off)):
        if st is not None:
            g.add_row(label, f"{st.read_calls:,} read calls of {fmt.kb(st.mean_read_bytes)}, "
                      f"{fmt.mb(st.bytes_read)} read; disk {st.disk_time_s:.3f} s, unzip "
                      f"{st.unzip_time_s:.3f} s, real {st.real_time_s:.3f} s "
                      f"[dim](TTreePerfStats, {st.entries:,} entries, {st.cache} cache)[/]")
    if cal.memory is not None:
        m = cal.memory
        g.add_row("fits in RAM", f"{fmt.yes_no(m.fits_in_ram)} ({fmt.mb(m.dataset_bytes)} data, "
                  f"{fmt.gb(m.available_bytes)} available)")
    parts: list[RenderableType] = [g]
    if cal.request_sweep:
        t = Table(title="request size (cold), MB/s", title_justify="left")
        t.add_column("")
        sizes = sorted({p.request_bytes for p in cal.request_sweep})
        for size in sizes:
            t.add_column(_kib(size), justify="right")
        for pattern in ("sequential", "random"):
            row = {p.request_bytes: p.mb_per_s for p in cal.request_sweep if p.pattern == pattern}
            t.add_row(pattern[:4] + ".", *(_rate(row.get(s)) for s in sizes))
        parts.append(t)
    if cal.concurrency:
        t = Table(title="concurrency (cold, own data per worker)", title_justify="left")
        t.add_column("workers", justify="right")
        t.add_column("aggregate MB/s", justify="right")
        t.add_column("per worker", justify="right")
        for c in cal.concurrency:
            per = c.aggregate_mb_per_s / c.workers if c.aggregate_mb_per_s else None
            t.add_row(str(c.workers), _m(c.measurement, 0), fmt.num(per))
        parts.append(t)
    for skip in cal.skipped:
        parts.append(Text(f"skipped {skip.test}: {skip.reason}", style="yellow"))
    status = "[yellow]partial (cancelled)[/]" if cal.partial else "complete"
    title = (f"[bold]calibration[/] — {status}, {cal.elapsed_s:.1f} s of {cal.budget_s:.0f} s "
             f"budget, {fmt.mb(cal.bytes_read)} read from {cal.files_used} files, "
             f"engine {cal.engine}")
    return Panel(Group(*parts), title=title, title_align="left")
