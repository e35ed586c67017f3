"""Read one RNTuple's metadata: fields, columns, pages, clusters, cluster groups, compression.

Metadata only, through uproot: the anchor, the header and footer envelopes and the page-list
envelope of every cluster group (which lists every page's size and position).  No page is read
or decompressed.

Sizes follow ROOT's ``RNTupleInspector``: a column's compressed bytes are the on-storage bytes
of its pages; its uncompressed bytes are its elements times the size of one element in memory
(``RColumnElementBase::Generate(type)->GetSize()``: a bit is a ``bool``, an index a 64-bit
cluster size, a switch 16 bytes, a truncated or quantised float a ``float``).  Alias columns
(projected fields) hold no data of their own and are not counted.  A top-level field's bytes
are those of its own columns and of every field below it, as the inspector's field tree sums
them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

#: Where uproot files the RNTuple anchor (format 1.x, ROOT >= 6.34).
RNTUPLE_CLASS = "ROOT::RNTuple"
#: The anchor of the pre-release format (ROOT 6.22-6.32), which uproot does not read.
OLD_RNTUPLE_CLASSES = ("ROOT::Experimental::RNTuple",)

#: Bytes of one element in memory, by on-disk column type (RNTuple format 1.0 type codes).
ELEMENT_BYTES: dict[int, int] = {
    0x00: 1,  # Bit: bool
    0x01: 1,  # Byte
    0x02: 1,  # Char
    0x03: 1, 0x04: 1,  # Int8, UInt8
    0x05: 2, 0x06: 2,  # Int16, UInt16
    0x07: 4, 0x08: 4,  # Int32, UInt32
    0x09: 8, 0x0A: 8,  # Int64, UInt64
    0x0B: 4,  # Real16: float in memory
    0x0C: 4,  # Real32
    0x0D: 8,  # Real64
    0x0E: 8, 0x0F: 8,  # Index32, Index64: 64-bit cluster size in memory
    0x10: 16,  # Switch: (64-bit index, 32-bit tag), padded
    0x11: 2, 0x12: 2,  # SplitInt16, SplitUInt16
    0x13: 4, 0x14: 4,  # SplitInt32, SplitUInt32
    0x15: 8, 0x16: 8,  # SplitInt64, SplitUInt64
    0x17: 4,  # SplitReal16: float in memory
    0x18: 4,  # SplitReal32
    0x19: 8,  # SplitReal64
    0x1A: 8, 0x1B: 8,  # SplitIndex32, SplitIndex64
    0x1C: 4,  # Real32Trunc: float in memory
    0x1D: 4,  # Real32Quant: float in memory
}

@dataclass(frozen=True)
class FieldMeta:
    """One top-level field, with every field below it."""

    name: str
    typename: str
    compressed_bytes: int
    uncompressed_bytes: int
    pages: int
    fields: int  # this field and its subfields
    columns: int  # physical columns of this field and its subfields


@dataclass(frozen=True)
class RNTupleMeta:
    """The RNTuple-only figures of one RNTuple in one file."""

    version: str  # the anchor's format version, "epoch.major.minor.patch"
    writer: str  # the header's writer identifier, e.g. "ROOT v6.34.02"
    fields: int  # every field, nested ones included
    columns: int  # physical columns
    pages: int
    page_compressed_max_bytes: int
    page_uncompressed_bytes: int  # sum over pages of elements * in-memory element size
    clusters: int
    cluster_groups: int
    settings: dict[int, int]  # compression setting -> compressed bytes of the pages using it


@dataclass(frozen=True)
class RNTupleRead:
    """What :func:`read_rntuple` finds."""

    entries: int
    fields: tuple[FieldMeta, ...]
    compressed_bytes: int
    uncompressed_bytes: int
    cluster_entries: tuple[int, ...]  # entries of each cluster, in order
    meta: RNTupleMeta


def element_bytes(column_type: int, nbits: int) -> int:
    """In-memory bytes of one element of a column (unknown future types: their stored bits)."""
    known = ELEMENT_BYTES.get(column_type)
    if known is not None:
        return known
    return max(1, (nbits + 7) // 8)


def owners(ntuple: Any) -> tuple[list[int], list[int]]:
    """Each field's top-level ancestor (a top-level field is its own), and each physical
    column's (by column index)."""
    records = list(ntuple.field_records)
    top: list[int] = []
    for i in range(len(records)):
        j, seen = i, 0
        while int(records[j].parent_field_id) != j and seen <= len(records):
            j = int(records[j].parent_field_id)
            seen += 1
        top.append(j)
    return top, [top[int(c.field_id)] for c in ntuple.column_records]


def read_rntuple(ntuple: Any) -> RNTupleRead:
    """Metadata of one uproot RNTuple object (``uproot.models.RNTuple``)."""
    members = ntuple.members
    version = ".".join(str(int(members[k])) for k in (
        "fVersionEpoch", "fVersionMajor", "fVersionMinor", "fVersionPatch"))
    header = ntuple.header
    footer = ntuple.footer
    records = list(ntuple.field_records)
    columns = list(ntuple.column_records)
    top, col_top = owners(ntuple)
    col_elem = [element_bytes(int(c.type), int(c.nbits)) for c in columns]

    comp: Counter[int] = Counter()
    uncomp: Counter[int] = Counter()
    pages: Counter[int] = Counter()
    settings: Counter[int] = Counter()
    page_max = 0
    for cluster in ntuple.page_link_list:
        for col, col_pages in enumerate(cluster):
            if col >= len(columns) or col_pages.suppressed:
                continue
            owner = col_top[col]
            size = col_elem[col]
            nbytes = sum(int(p.locator.num_bytes) for p in col_pages.pages)
            comp[owner] += nbytes
            uncomp[owner] += sum(int(p.num_elements) for p in col_pages.pages) * size
            pages[owner] += len(col_pages.pages)
            if col_pages.pages:
                page_max = max(page_max, *(int(p.locator.num_bytes) for p in col_pages.pages))
            if col_pages.compression_settings is not None:
                settings[int(col_pages.compression_settings)] += nbytes

    n_fields = Counter(top)
    n_columns = Counter(col_top)
    tops = [i for i in range(len(records)) if top[i] == i]
    fields = tuple(
        FieldMeta(
            name=str(records[i].field_name),
            typename=str(records[i].type_name),
            compressed_bytes=comp[i],
            uncompressed_bytes=uncomp[i],
            pages=pages[i],
            fields=n_fields[i],
            columns=n_columns[i],
        )
        for i in tops
    )
    groups = list(footer.cluster_group_records)
    # ROOT's RNTupleDescriptor::GetNEntries: the end of the last cluster group's entry span
    entries = max((int(g.min_entry_num) + int(g.entry_span) for g in groups), default=0)
    cluster_entries = tuple(int(c.num_entries) for c in ntuple.cluster_summaries)
    return RNTupleRead(
        entries=entries,
        fields=fields,
        compressed_bytes=sum(comp.values()),
        uncompressed_bytes=sum(uncomp.values()),
        cluster_entries=cluster_entries,
        meta=RNTupleMeta(
            version=version,
            writer=str(header.writer_identifier),
            fields=len(records),
            columns=len(columns),
            pages=sum(pages.values()),
            page_compressed_max_bytes=page_max,
            page_uncompressed_bytes=sum(uncomp.values()),
            clusters=len(cluster_entries),
            cluster_groups=len(groups),
            settings=dict(settings),
        ),
    )


def main_setting(settings: dict[int, int]) -> int | None:
    """The compression setting of most bytes (None when no page says)."""
    if not settings:
        return None
    return max(settings.items(), key=lambda kv: (kv[1], -kv[0]))[0]
