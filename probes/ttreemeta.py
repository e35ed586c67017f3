"""A fast reader of the few TTree and TBranch members the probe needs.

uproot deserialises every member of every TBranch and TLeaf into Python objects: about 0.3 ms a
branch, so 60 ms for a 200-branch tree, which dominated probing many small files.  This module
reads the same streamed record (the TTree key's payload) and keeps only the entries, the byte
counts, the cluster members and each branch's basket arrays, skipping everything else by its
byte count.  It knows the current layouts (TTree class versions 19 and 20, TBranch 12 and 13,
TBranchElement 9 and 10, any TLeaf); anything else (another class version, a branch class such
as TBranchObject, baskets stored inside the record, a reference it cannot follow) raises
:class:`Unsupported`, and the caller falls back to uproot's full reader.  The objects it returns
answer the calls :mod:`hep_advisor.probes.rootfile` makes of uproot's (``member``, ``has_member``,
``itervalues``, ``typename``), so the probe's arithmetic is shared by both paths.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

import numpy as np

K_BYTE_COUNT_MASK = 0x40000000
K_BYTE_COUNT_VMASK = 0x4000
K_CLASS_MASK = 0x80000000
K_NEW_CLASS_TAG = 0xFFFFFFFF
K_IS_REFERENCED = 1 << 4
K_MAP_OFFSET = 2

_U16 = struct.Struct(">H")
_U32 = struct.Struct(">I")
_I32 = struct.Struct(">i")
_TOBJECT = struct.Struct(">II")
_TTREE = struct.Struct(">qqqqqdiiiiIqqqqqq")  # fEntries ... fEstimate (versions 19, 20)
#: fCompress fBasketSize fEntryOffsetLen fWriteBasket fEntryNumber
_TBRANCH13_A = struct.Struct(">iiiiq")
#: fOffset fMaxBaskets fSplitLevel fEntries fFirstEntry fTotBytes fZipBytes
_TBRANCH13_B = struct.Struct(">iIiqqqq")
_TBRANCH12 = struct.Struct(">iiiiqiIiqqqq")
_TLEAF = struct.Struct(">iii??")  # fLen fLenType fOffset fIsRange fIsUnsigned

#: C++ types of the basic leaf classes (signed; unsigned where fIsUnsigned).
LEAF_TYPES = {
    "TLeafO": ("bool", "bool"), "TLeafB": ("int8_t", "uint8_t"),
    "TLeafS": ("int16_t", "uint16_t"), "TLeafI": ("int32_t", "uint32_t"),
    "TLeafL": ("int64_t", "uint64_t"), "TLeafG": ("int64_t", "uint64_t"),
    "TLeafF": ("float", "float"), "TLeafD": ("double", "double"),
    "TLeafF16": ("Float16_t", "Float16_t"), "TLeafD32": ("Double32_t", "Double32_t"),
    "TLeafC": ("char*", "char*"),
}


class Unsupported(Exception):
    """A layout this reader does not handle: use uproot's reader instead."""


#: What :meth:`_Reader.object_any` returns for a reference to an object already read.
REFERENCE = object()


class FastBranch:
    """The members of one branch that the probe reads, as uproot's ``TBranch.member`` gives
    them."""

    embedded_baskets: tuple[()] = ()

    def __init__(self, name: str, members: dict[str, Any], typename: str,
                 branches: list[FastBranch]) -> None:
        self.name = name
        self.members = members
        self.typename = typename
        self.branches = branches

    def member(self, name: str, none_if_missing: bool = False) -> Any:
        if none_if_missing:
            return self.members.get(name)
        return self.members[name]

    def has_member(self, name: str) -> bool:
        return name in self.members

    def itervalues(self, recursive: bool = True) -> Iterator[FastBranch]:
        for b in self.branches:
            yield b
            if recursive:
                yield from b.itervalues(recursive=True)


class FastTree(FastBranch):
    def __init__(self, name: str, class_version: int, members: dict[str, Any],
                 branches: list[FastBranch]) -> None:
        super().__init__(name, members, "", branches)
        self.class_version = class_version
        self.num_entries = int(members["fEntries"])


class _Reader:
    def __init__(self, data: bytes, keylen: int) -> None:
        self.d = memoryview(data)
        self.i = 0
        self.keylen = keylen
        self.classes: dict[int, str] = {}  # class-tag position -> class name

    # -- primitives ------------------------------------------------------------------------

    def u8(self) -> int:
        v = self.d[self.i]
        self.i += 1
        return v

    def u16(self) -> int:
        v: int = _U16.unpack_from(self.d, self.i)[0]
        self.i += 2
        return v

    def u32(self) -> int:
        v: int = _U32.unpack_from(self.d, self.i)[0]
        self.i += 4
        return v

    def i32(self) -> int:
        v: int = _I32.unpack_from(self.d, self.i)[0]
        self.i += 4
        return v

    def fields(self, s: struct.Struct) -> tuple[Any, ...]:
        v = s.unpack_from(self.d, self.i)
        self.i += s.size
        return v

    def string(self) -> str:
        n = self.u8()
        if n == 255:
            n = self.i32()
        s = bytes(self.d[self.i : self.i + n]).decode(errors="surrogateescape")
        self.i += n
        return s

    def array(self, n: int, dtype: str) -> np.ndarray:
        a = np.frombuffer(self.d, dtype=dtype, count=n, offset=self.i)
        self.i += a.nbytes
        return a

    def cstring(self) -> str:
        end = bytes(self.d[self.i : self.i + 512]).find(b"\0")
        if end < 0:
            raise Unsupported("class name not terminated")
        s = bytes(self.d[self.i : self.i + end]).decode()
        self.i += end + 1
        return s

    # -- object framing --------------------------------------------------------------------

    def version(self) -> tuple[int, int]:
        """A byte count and version: (version, end of the object)."""
        bc = self.u32()
        if not bc & K_BYTE_COUNT_MASK:
            raise Unsupported("an object without a byte count")
        end = self.i + (bc & ~K_BYTE_COUNT_MASK)
        return self.u16(), end

    def skip_versioned(self) -> None:
        _, end = self.version()
        self.i = end

    def tobject(self) -> None:
        v = self.u16()
        if v & K_BYTE_COUNT_VMASK:
            self.i += 4
        _unique, bits = self.fields(_TOBJECT)
        if bits & K_IS_REFERENCED:
            self.i += 2

    def tnamed(self) -> str:
        _, end = self.version()
        self.tobject()
        name = self.string()
        self.i = end
        return name

    def objarray_header(self) -> tuple[int, int]:
        """A TObjArray's header: (number of objects, end of the array)."""
        _, end = self.version()
        self.tobject()
        self.string()
        n = self.i32()
        self.i32()  # lower bound
        return n, end

    def object_any(self) -> Any:
        """ROOT's ``ReadObjectAny``: ``None`` (a null pointer), :data:`REFERENCE` (an object
        already read), or a new object of a new or known class, read when it is a branch or a
        leaf (anything else is unsupported)."""
        bcnt = self.u32()
        end: int | None = None
        if bcnt & K_BYTE_COUNT_MASK and bcnt != K_NEW_CLASS_TAG:
            start = self.i
            end = start + (bcnt & ~K_BYTE_COUNT_MASK)
            tag = self.u32()
        else:
            start = self.i - 4
            tag = bcnt
        if not tag & K_CLASS_MASK:
            if tag == 0:
                return None
            if end is not None:
                self.i = end
            return REFERENCE
        if end is None:
            raise Unsupported("a new object without a byte count")
        if tag == K_NEW_CLASS_TAG:
            classname = self.cstring()
            self.classes[start + self.keylen + K_MAP_OFFSET] = classname
        else:
            ref = tag & ~K_CLASS_MASK
            if ref not in self.classes:
                raise Unsupported(f"class reference {ref} defined in a skipped part")
            classname = self.classes[ref]
        obj: Any
        if classname == "TBranch":
            obj = self.tbranch()
        elif classname == "TBranchElement":
            obj = self.tbranch_element()
        elif classname.startswith("TLeaf"):
            obj = self.leaf(classname)
        else:
            raise Unsupported(f"a {classname} where branches or leaves are expected")
        if self.i != end:
            raise Unsupported(f"{classname} did not end where its byte count says")
        return obj

    # -- the classes -----------------------------------------------------------------------

    def leaf(self, classname: str) -> str:
        """A leaf: its C++ type, as uproot names the basic ones."""
        _, end = self.version()
        _, base_end = self.version()  # TLeaf
        self.tnamed()
        length, _len_type, _offset, _is_range, unsigned = self.fields(_TLEAF)
        count = self.object_any()
        if self.i > base_end:
            raise Unsupported("TLeaf overran its byte count")
        self.i = end
        signed_t, unsigned_t = LEAF_TYPES.get(classname, (classname, classname))
        t = unsigned_t if unsigned else signed_t
        if count is not None:
            return f"{t}[]"
        if length > 1:
            return f"{t}[{length}]"
        return t

    def tbranch_element(self) -> FastBranch:
        version, end = self.version()
        if version != 10:
            raise Unsupported(f"TBranchElement class version {version}")
        b = self.tbranch()
        class_name = self.string()
        self.string()  # fParentName
        self.string()  # fClonesName
        self.i += 22  # fCheckSum, fClassVersion, fID, fType, fStreamerType, fMaximum
        self.object_any()  # fBranchCount
        self.object_any()  # fBranchCount2
        if self.i != end:
            raise Unsupported("TBranchElement did not end where its byte count says")
        if class_name:
            b.typename = class_name
        return b

    def tbranch(self) -> FastBranch:
        version, end = self.version()
        name = self.tnamed()
        self.skip_versioned()  # TAttFill
        m: dict[str, Any] = {}
        if version == 13:
            (m["fCompress"], _, _, m["fWriteBasket"], _) = self.fields(_TBRANCH13_A)
            self.skip_versioned()  # fIOFeatures
            (_, max_baskets, _, m["fEntries"], _, m["fTotBytes"], m["fZipBytes"]) = self.fields(
                _TBRANCH13_B)
        elif version == 12:
            (m["fCompress"], _, _, m["fWriteBasket"], _, _, max_baskets, _, m["fEntries"], _,
             m["fTotBytes"], m["fZipBytes"]) = self.fields(_TBRANCH12)
        else:
            raise Unsupported(f"TBranch class version {version}")
        n, arr_end = self.objarray_header()
        subbranches = [self.object_any() for _ in range(n)]
        if self.i != arr_end:
            raise Unsupported("fBranches did not end where its byte count says")
        n, arr_end = self.objarray_header()
        leaves = [self.object_any() for _ in range(n)]
        if self.i != arr_end:
            raise Unsupported("fLeaves did not end where its byte count says")
        n, arr_end = self.objarray_header()
        for _ in range(n):  # fBaskets: null slots, unless baskets are kept in the record
            if self.u32() != 0:
                raise Unsupported("baskets stored inside the TTree record")
        if self.i != arr_end:
            raise Unsupported("fBaskets did not end where its byte count says")
        if self.u8() != 1:
            raise Unsupported("no fBasketBytes array")
        m["fBasketBytes"] = self.array(max_baskets, ">i4")
        if self.u8() != 1:
            raise Unsupported("no fBasketEntry array")
        self.array(max_baskets, ">i8")
        if self.u8() not in (1, 2):  # ROOT writes 2, uproot 1: both 64-bit, as uproot reads
            raise Unsupported("no fBasketSeek array")
        m["fBasketSeek"] = self.array(max_baskets, ">i8")
        self.string()  # fFileName
        if self.i != end:
            raise Unsupported("TBranch did not end where its byte count says")
        named = [leaf for leaf in leaves if isinstance(leaf, str)]
        typename = named[0] if len(named) == 1 else ("unknown" if not named else "struct")
        branches = [b for b in subbranches if isinstance(b, FastBranch)]
        if len(branches) != len(subbranches):
            raise Unsupported("a subbranch given by reference")
        return FastBranch(name, m, typename, branches)

    def ttree(self) -> FastTree:
        version, _ = self.version()
        if version not in (19, 20):
            raise Unsupported(f"TTree class version {version}")
        name = self.tnamed()
        for _ in range(3):  # TAttLine, TAttFill, TAttMarker
            self.skip_versioned()
        m: dict[str, Any] = {}
        (m["fEntries"], m["fTotBytes"], m["fZipBytes"], _, _, _, _, _, _, _,
         m["fNClusterRange"], _, _, _, _, m["fAutoFlush"], _) = self.fields(_TTREE)
        n = int(m["fNClusterRange"])
        self.u8()
        m["fClusterRangeEnd"] = self.array(n, ">i8")
        self.u8()
        m["fClusterSize"] = self.array(n, ">i8")
        if version == 20:
            self.skip_versioned()  # fIOFeatures
        count, arr_end = self.objarray_header()
        branches = [self.object_any() for _ in range(count)]
        if self.i != arr_end:
            raise Unsupported("fBranches did not end where its byte count says")
        if not all(isinstance(b, FastBranch) for b in branches):
            raise Unsupported("a branch given by reference")
        return FastTree(name, version, m, branches)


def read_tree(data: bytes, keylen: int) -> FastTree:
    """The TTree streamed in ``data`` (a TKey's uncompressed payload, after a ``keylen``-byte
    key header).  Raises :class:`Unsupported` for a layout it does not handle."""
    try:
        return _Reader(data, keylen).ttree()
    except Unsupported:
        raise
    except (struct.error, ValueError, IndexError, UnicodeDecodeError) as exc:
        raise Unsupported(f"unexpected bytes: {exc}") from None
