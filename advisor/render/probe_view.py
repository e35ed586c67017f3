"""Rich views of ``SiteProfile`` and ``DatasetProfile``."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from hep_advisor.probes.results import (
    Compression,
    DatasetProfile,
    ProbeError,
    SiteProfile,
    StorageInfo,
    TreeProfile,
)
from hep_advisor.render import fmt


def _grid() -> Table:
    g = Table.grid(padding=(0, 2))
    g.add_column(style="bold", no_wrap=True)
    g.add_column(overflow="fold")
    return g


def storage_line(s: StorageInfo) -> str:
    if s.fs_class == "remote":
        return f"remote ({s.fs_type})"
    parts = [f"{fmt.text(s.fs_type)} on {fmt.text(s.device)}"]
    if s.mount_point:
        parts[0] += f" at {s.mount_point}"
    if s.physical_devices and s.physical_devices != (s.device,):
        parts.append("disks " + ", ".join(s.physical_devices))
    if s.rotational is not None:
        parts.append("rotational" if s.rotational else "non-rotational")
    if s.read_ahead_kb is not None:
        parts.append(f"read-ahead {fmt.kib(s.read_ahead_kb)}")
    if s.scheduler:
        parts.append(f"scheduler {s.scheduler}")
    raid = [d.raid_level for d in s.stack if d.raid_level]
    if raid:
        parts.append(", ".join(raid))
    t = getattr(s, "throttle", None)
    if t is not None:
        limits = [f"{t.read_mb_per_s:g} MB/s" if t.read_mb_per_s else "",
                  f"{t.read_iops:g} IOPS" if t.read_iops else ""]
        parts.append("cgroup read limit " + ", ".join(x for x in limits if x))
    return " · ".join(parts)


def site_view(site: SiteProfile) -> RenderableType:
    cpu, mem = site.cpu, site.memory
    g = _grid()
    g.add_row("host", f"{site.hostname} ({site.os})")
    g.add_row(
        "cores",
        f"{fmt.text(cpu.physical_cores)} physical, {fmt.text(cpu.logical_cores)} logical"
        + (f" · {cpu.model}" if cpu.model else "")
        + f" · load {fmt.num(cpu.load_avg_1m, 2)}",
    )
    g.add_row("memory", f"{fmt.gb(mem.total_bytes)} total, {fmt.gb(mem.available_bytes)} "
              "available")
    for s in site.storage:
        g.add_row("storage", f"{s.path}\n[dim]{storage_line(s)}[/]")
    return Panel(g, title="[bold]site[/]", title_align="left")


def compression_text(c: Compression) -> str:
    def one(alg: str | None, level: int | None) -> str:
        if alg in (None, "none"):
            return fmt.text(alg)
        return f"{alg}-{level}" if level is not None else str(alg)

    if c.mixture:
        return "mixed: " + ", ".join(
            f"{one(m.algorithm, m.level)} {100 * m.share:.0f}%" for m in c.mixture
        )
    return one(c.algorithm, c.level)


def tree_view(tr: TreeProfile) -> RenderableType:
    g = _grid()
    rntuple = tr.format == "rntuple"
    g.add_row("files", f"{tr.files:,} ({tr.sampled_files:,} opened) · {tr.entries:,} entries · "
              f"{fmt.num(tr.events_per_file)} per file · {tr.branches} "
              f"{'top-level fields' if rntuple else 'branches'}")
    g.add_row("bytes", f"{fmt.mb(tr.compressed_bytes)} on disk, "
              f"{fmt.mb(tr.uncompressed_bytes)} uncompressed "
              f"(factor {fmt.ratio(tr.compression_factor)}) · files "
              f"{fmt.mb(tr.file_bytes.min_bytes)}–{fmt.mb(tr.file_bytes.max_bytes)}")
    g.add_row("compression", f"{compression_text(tr.compression)} "
              f"[dim](from {tr.compression.source.replace('-', ' ')}s)[/]")
    g.add_row("pages" if rntuple else "baskets", f"{tr.baskets.count:,}, mean "
              f"{fmt.kb(tr.baskets.mean_compressed_bytes)} on disk")
    if tr.clusters:
        c = tr.clusters
        spread = f" ({c.min_entries:,}–{c.max_entries:,})" if c.min_entries != c.max_entries else ""
        source = {"autoflush": "fAutoFlush", "ranges": "cluster ranges",
                  "estimated": "ROOT's estimate: no flush recorded",
                  "rntuple": "RNTuple footer"}.get(c.source, c.source)
        groups = ""
        if tr.rntuple is not None:
            groups = f" in {tr.rntuple.cluster_groups:,} cluster group(s)"
        g.add_row("clusters", f"{c.count:,} of {fmt.num(c.mean_entries)} entries{spread}{groups} "
                  f"[dim]({source})[/]")
    if tr.open_s:
        g.add_row("open", f"median {fmt.ms(tr.open_s.median_s)}, p90 {fmt.ms(tr.open_s.p90_s)} "
                  "per file (open + tree metadata)")
    if tr.rntuple is not None:
        r = tr.rntuple
        g.add_row("RNTuple", f"format {', '.join(r.versions)} · {', '.join(r.writers)} · "
                  f"{r.fields} fields, {r.columns} columns · pages mean "
                  f"{fmt.kb(r.mean_page_compressed_bytes)} on disk "
                  f"({fmt.kb(r.mean_page_uncompressed_bytes)} in memory), largest "
                  f"{fmt.kb(r.max_page_compressed_bytes)} · {fmt.num(r.clusters_per_group, 1)} "
                  "clusters per group")
    for note in tr.notes:
        g.add_row("note", f"[yellow]{note}[/]")
    title = f"RNTuple {tr.name}" if rntuple else f"tree {tr.name}"
    return Panel(g, title=f"[bold]{title}[/]", title_align="left")


def branches_table(tree: TreeProfile, top: int = 10) -> Table:
    total = tree.compressed_bytes or 1
    rntuple = tree.format == "rntuple"
    what = "top-level fields" if rntuple else "branches"
    t = Table(title=f"{tree.name}: largest {what} ({min(top, len(tree.branch_profiles))} of "
              f"{len(tree.branch_profiles)})", title_justify="left")
    t.add_column("field" if rntuple else "branch")
    t.add_column("type")
    for col in ("on disk", "share", "factor", *(("pages", "mean page") if rntuple else
                                                ("baskets", "mean basket"))):
        t.add_column(col, justify="right")
    for b in tree.branch_profiles[:top]:
        t.add_row(b.name, b.typename, fmt.mb(b.compressed_bytes),
                  f"{100 * b.compressed_bytes / total:.1f}%", fmt.ratio(b.compression_factor),
                  fmt.num(b.baskets.count), fmt.kb(b.baskets.mean_compressed_bytes))
    return t


def sampling_line(ds: DatasetProfile) -> Text:
    s = ds.sampling
    line = Text()
    line.append(f"{ds.files:,} files", style="bold")
    line.append(f", {fmt.mb(ds.total_bytes)}; ")
    if s.method == "all":
        line.append(f"all {s.opened_files:,} opened")
    else:
        line.append(f"{s.opened_files:,} of {s.stated_files:,} opened (spread over the list); "
                    f"totals extrapolated ×{s.scale_factor:.2f} by bytes", style="yellow")
    if ds.errors:
        line.append(f"; {len(ds.errors)} unusable", style="red")
    return line


def dataset_view(
    ds: DatasetProfile, branches: int = 0, show_errors: bool = True
) -> RenderableType:
    parts: list[RenderableType] = [sampling_line(ds)]
    for tr in ds.trees:
        parts.append(tree_view(tr))
        if branches:
            parts.append(branches_table(tr, branches))
    if ds.errors and show_errors:
        parts.append(errors_view(ds.errors))
    return Panel(Group(*parts), title="[bold]dataset[/]", title_align="left")


def errors_view(errors: tuple[ProbeError, ...]) -> RenderableType:
    t = Table.grid(padding=(0, 1))
    t.add_column(style="red")
    t.add_column(overflow="fold")
    for e in errors:
        t.add_row("✗", f"{e.path}: {e.error}")
    return t
