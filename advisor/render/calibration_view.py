"""Rich view of a ``Calibration``: every figure with its spread and the cache state it had."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from hep_advisor.models.calcosts import basket_cost, loop_file_extra
from hep_advisor.probes.readtests.pace import pace_line
from hep_advisor.probes.readtests.registry import LABELS, READ_TESTS, ReadTest
from hep_advisor.probes.readtests.results import Calibration, Measurement
from hep_advisor.render import fmt


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


def _g(m: Measurement) -> str:
    """A measurement of any unit: its median to 3 significant figures, with its spread."""
    if m.median is None:
        return fmt.UNKNOWN
    spread = f" ±{100 * m.spread / 2:.0f}%" if m.spread is not None else ""
    return f"{m.median:.3g} {m.unit} [dim]{spread} (n={len(m.samples)})[/]"


def _rate(x: float | None) -> str:
    return fmt.num(x, 1 if x is not None and x < 100 else 0)


def _kib(n: int) -> str:
    return f"{n // 1024} KiB" if n < 1 << 20 else f"{n >> 20} MiB"


Row = tuple[str, str]


def _raw_rows(cal: Calibration) -> list[Row]:
    raw = cal.raw_read
    if raw is None:
        return []
    return [("storage (cold)", _m(raw.cold, 0, unit=" MB/s") + "  sequential, 1 MiB reads"),
            ("small reads", f"{fmt.num(raw.iops_4k)} IOPS (4 KiB random) · access "
             f"{fmt.num(raw.access_time_ms, 2)} ms · read-ahead makes 4 KiB reads in file "
             f"order {fmt.ratio(raw.readahead_gain_4k)} faster")]


def _page_cache_rows(cal: Calibration) -> list[Row]:
    raw = cal.raw_read
    return [("page cache", _m(raw.warm, 0, unit=" MB/s"))] if raw is not None else []


def _open_rows(cal: Calibration) -> list[Row]:
    o = cal.open_overhead_s
    if o is None:
        return []
    return [("open + metadata", f"{_m(o.cold_measurement, 1, 1e3, ' ms')} cold, "
             f"{_m(o.warm_measurement, 1, 1e3, ' ms')} warm, per file")]


def _decompression_rows(cal: Calibration) -> list[Row]:
    rows = [(f"decompress {d.algorithm}",
             f"{_m(d.measurement, 0, unit=' MB/s')} compressed, "
             f"{fmt.num(d.uncompressed_mb_per_s)} MB/s uncompressed, one core "
             f"[dim]({d.library}, {d.baskets} baskets)[/]") for d in cal.decompression]
    up = cal.unpacking
    if up is not None:
        rows.append(("unpacking", f"{fmt.num(up.compressed_mb_per_s, 1)} MB/s compressed, "
                     f"one core [dim](uproot, {up.baskets} baskets of {up.branches} branches "
                     "decompressed in memory)[/]"))
    return rows


def _event_loop_rows(cal: Calibration) -> list[Row]:
    rows: list[Row] = []
    if cal.event_loop is not None:
        e = cal.event_loop
        what = f"analysis {e.analysis}" if e.analysis else f"{e.branches} branches"
        rows.append(("event loop", f"{fmt.num(e.events_per_s)} events/s, "
                     f"{fmt.num(e.compressed_mb_per_s, 1)} MB/s compressed, "
                     f"{fmt.num(e.uncompressed_mb_per_s, 1)} MB/s uncompressed "
                     f"[dim]({e.engine}, {what}; cold {_m(e.cold, 0)}, warm {_m(e.warm, 0)} "
                     "events/s)[/]"))
        if e.refault_per_mb is not None:
            rows.append(("loop's memory", f"{e.refault_per_mb:.2f} MB faulted per MB read, "
                         f"each warm pass [dim](steps of up to {fmt.num(e.step_mb, 1)} MB: "
                         "memory unmapped and mapped again, already in the loop's rate)[/]"))
    for label, st in (("TTreeCache on", cal.root_cache_on), ("TTreeCache off", cal.root_cache_off)):
        if st is not None:
            rows.append((label, f"{st.read_calls:,} read calls of {fmt.kb(st.mean_read_bytes)}, "
                         f"{fmt.mb(st.bytes_read)} read; disk {st.disk_time_s:.3f} s, unzip "
                         f"{st.unzip_time_s:.3f} s, real {st.real_time_s:.3f} s "
                         f"[dim](TTreePerfStats, {st.entries:,} entries, {st.cache} cache)[/]"))
    return rows


def _call_cost_rows(cal: Calibration) -> list[Row]:
    cc = cal.call_cost
    if cc is None:
        return []
    rows: list[Row] = []
    if cc.split is not None and cc.split_call_s is not None:
        rows.append(("one more read call", f"{_m(cc.split, 1, 1e3, ' ms')} [dim]("
                     f"{cc.branches} branches; {cc.split.conditions.note})[/]"))
    if cc.call_s is None:
        return rows
    first = (f"; a file's first call {1e3 * cc.first_call_s:.1f} ms more"
             if cc.first_call_s is not None else "")
    per_file = loop_file_extra(cal)
    if per_file is not None:
        first += (f"; the event loop {1e3 * per_file:.1f} ms a file beyond a later call of a "
                  "whole file (counted per file)")
    return [("per read call", f"{_m(cc.measurement, 1, 1e3, ' ms')} fixed, then "
             f"{fmt.num(cc.mb_per_s, 1)} MB/s [dim]({cc.branches} branches; "
             f"{cc.measurement.conditions.note}{first})[/]"), *rows]


def _basket_cost_rows(cal: Calibration) -> list[Row]:
    bc = cal.basket_cost
    if bc is None or bc.basket_s is None:
        return []
    rows = [("per basket", f"{_m(bc.measurement, 1, 1e6, ' µs')} fixed, then "
             f"{fmt.num(bc.mb_per_s, 1)} MB/s [dim]({bc.baskets} baskets per repetition, "
             "warm)[/]")]
    algs = {d.algorithm for d in cal.decompression if d.source == "dataset"}
    net = basket_cost(cal, algs.pop()) if len(algs) == 1 else None
    if net is not None and net is not bc and net.mb_per_s:
        rows.append(("per basket, net", f"{_m(net.measurement, 1, 1e6, ' µs')} [dim](what the "
                     f"model takes: the groups' times less {1e3 / net.mb_per_s:.2f} ms per MB "
                     "for decompression and unpacking)[/]"))
    return rows


def _key_cost_rows(cal: Calibration) -> list[Row]:
    kc = cal.key_cost
    if kc is None or kc.key_s is None:
        return []
    return [("per basket key", f"{_m(kc.measurement, 1, 1e6, ' µs')} [dim](a memory-size "
             f"step's pre-pass: {kc.keys} keys per repetition, warm)[/]")]


def _first_touch_rows(cal: Calibration) -> list[Row]:
    ft = cal.first_touch
    if ft is None or ft.s_per_mb is None:
        return []
    m = ft.measurement
    spread = f"±{100 * m.spread / 2:.0f}% " if m.spread is not None else ""
    return [("fresh memory", f"{1e3 * ft.s_per_mb:.2f} ms per MB [dim]{spread}(n={len(m.samples)}"
             "; a new process's first write of each page: what a program pays for its arrays' "
             "peak)[/]")]


def _collector_rows(cal: Calibration) -> list[Row]:
    c = cal.collector
    if c is None or c.per_file_s is None:
        return []
    return [("garbage collector", f"{1e3 * c.per_file_s:.1f} ms per file [dim](Python's full "
             f"collections in a fresh interpreter reading {c.files} files with uproot: "
             f"{1e3 * c.freeing_s:.1f} ms freeing each file's cycles, {1e3 * c.walk_s:.1f} ms "
             f"walking the heap; added to the warm open)[/]")]


def _parallel_rows(cal: Calibration) -> list[Row]:
    if not cal.parallel_loop:
        return []
    return [("parallel loop", " · ".join(
        f"{p.workers} worker{'s' if p.workers > 1 else ''} {_m(p.measurement, 1, unit=' MB/s')}"
        for p in cal.parallel_loop) + " [dim](warm, whole files)[/]")]


#: The grid's rows of each read test (by registry name); the request sweep and the
#: concurrency sweep are tables of their own.
_ROWS: dict[str, Callable[[Calibration], list[Row]]] = {
    "raw_read": _raw_rows,
    "request_sweep": lambda cal: [],
    "concurrency": lambda cal: [],
    "open_cost": _open_rows,
    "first_touch": _first_touch_rows,
    "decompression": _decompression_rows,
    "event_loop": _event_loop_rows,
    "call_cost": _call_cost_rows,
    "basket_cost": _basket_cost_rows,
    "key_cost": _key_cost_rows,
    "parallel_loop": _parallel_rows,
    "collector": _collector_rows,
    "page_cache": _page_cache_rows,
}


def _generic_rows(cal: Calibration, test: ReadTest) -> list[Row]:
    """A test this view has no rows of its own for: its result's measurement (or each
    point's), by the test's label."""
    value: Any = getattr(cal, test.field, None) if test.field else None
    items = value if isinstance(value, tuple) else (value,) if value is not None else ()
    shown = [_g(m) for m in (getattr(v, "measurement", None) for v in items)
             if isinstance(m, Measurement)]
    return [(test.label, " · ".join(shown))] if shown else []


def calibration_rows(cal: Calibration) -> list[Row]:
    """The figures of every read test, in the order the tests run, then the memory fit."""
    rows: list[Row] = []
    for test in READ_TESTS:
        own = _ROWS.get(test.name)
        rows += own(cal) if own is not None else _generic_rows(cal, test)
    if cal.memory is not None:
        m = cal.memory
        rows.append(("fits in RAM", f"{fmt.yes_no(m.fits_in_ram)} ({fmt.mb(m.dataset_bytes)} "
                     f"data, {fmt.gb(m.available_bytes)} available)"))
    if cal.machine is not None:
        rows.append(("machine", pace_line(cal.machine)))
    from hep_advisor.rules.remote import link_rows  # remote data: the link's figures

    return rows + link_rows(cal)


def calibration_view(cal: Calibration) -> RenderableType:
    g = Table.grid(padding=(0, 2))
    g.add_column(style="bold", no_wrap=True)
    g.add_column(overflow="fold")
    for label, text in calibration_rows(cal):
        g.add_row(label, text)
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
        label = LABELS.get(skip.test, skip.test.replace("_", " "))
        parts.append(Text(f"not measured: {label}: {skip.reason}", style="yellow"))
    status = "[yellow]partial (cancelled)[/]" if cal.partial else "complete"
    title = (f"[bold]calibration[/] — {status}, {cal.elapsed_s:.1f} s of {cal.budget_s:.0f} s "
             f"budget, {fmt.mb(cal.bytes_read)} read from {cal.files_used} files, "
             f"engine {cal.engine}")
    return Panel(Group(*parts), title=title, title_align="left")
