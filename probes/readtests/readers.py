"""The program's reader, named (``--reader SPEC``), and the event loop's passes that run it.

A reader spec is ``KIND`` or ``KIND:OPTION=VALUE[,OPTION=VALUE]``:

==========================  =======================================================================
``uproot.iterate``           ``TTree.iterate`` / ``uproot.iterate`` with uproot's default
                             ``step_size="100 MB"`` (a memory size: uproot first reads every
                             selected basket's key to turn it into entries)
``uproot.iterate:step_size=5000``   an entry-count step (no key pre-pass)
``uproot.iterate:step_size=20 MB``  another memory size
``uproot.arrays``            ``TTree.arrays``: every entry of a file in one call
``root.getentry``            a ``TTree::GetEntry`` loop without TTreeCache (``SetCacheSize(0)``)
``root.ttreecache``          the same loop with ROOT's TTreeCache, its automatic size
``root.ttreecache:size=30 MB``  ... of that size
``rdataframe``               an ``RDataFrame`` over the tree, one thread, the branches as columns
==========================  =======================================================================

The uproot readers take ``library=np`` (uproot's default, ``ak``, builds awkward arrays), e.g.
``uproot.iterate:step_size=5000,library=np``.

or the path of a JSON file written by ``hep-advisor trace --json -o FILE``: the reader is then
deduced from what the traced program read (a key pre-pass: a memory-size step; one read per
basket: ``GetEntry`` without cache; coalesced reads: the call its own code makes, found in the
program's text), and the branch set is the branches whose baskets it read.

:func:`parse_reader` raises ``ValueError`` with a one-line cause for a bad spec.  The passes
(:func:`uproot_pass`, :func:`rdataframe_pass`) read a plan once and time it (opening the files
not timed); ROOT's ``GetEntry`` loops are :mod:`.rootengine`'s.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

#: uproot's default ``step_size`` for ``iterate`` (uproot 5).
UPROOT_DEFAULT_STEP = "100 MB"
KINDS = ("uproot.iterate", "uproot.arrays", "root.getentry", "root.ttreecache", "rdataframe")
_OPTIONS: dict[str, tuple[str, ...]] = {
    "uproot.iterate": ("step_size", "library"), "uproot.arrays": ("library",),
    "root.getentry": ("loop",), "root.ttreecache": ("size", "loop"), "rdataframe": ()}
_UNITS = {"b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "kib": 2**10, "mib": 2**20,
          "gib": 2**30}
_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([a-z]*)\s*$", re.IGNORECASE)
EXAMPLES = ("uproot.iterate, uproot.iterate:step_size=5000, uproot.arrays, root.getentry, "
            "root.ttreecache[:size=30 MB], rdataframe, or a trace JSON file")


@dataclass(frozen=True)
class ReaderSpec:
    """How the user's program reads: ``kind`` (one of :data:`KINDS`); ``step_size`` for
    ``uproot.iterate`` (entries, or a memory size such as ``"100 MB"``); ``cache_bytes`` for
    ``root.ttreecache`` (``None``: ROOT's automatic size); ``branches``: the branches it reads,
    where the spec says (a trace), else those the calibration is given; ``source``: the trace
    file it was deduced from; ``how``: how it was deduced (one line each)."""

    kind: str
    step_size: int | str | None = None
    cache_bytes: int | None = None
    #: uproot's ``library``: ``"ak"`` (uproot's default) or ``"np"``
    library: str = "ak"
    #: a ``GetEntry`` loop in ``"cxx"`` (compiled, the default) or ``"python"`` (PyROOT)
    loop: str = "cxx"
    branches: tuple[str, ...] | None = None
    source: str | None = None
    how: tuple[str, ...] = field(default=(), compare=False)
    #: not named by the user: the engine's documented default, assumed (:func:`default_reader`)
    assumed: bool = field(default=False, compare=False)

    @property
    def engine(self) -> str:
        """``"uproot"`` or ``"root"``: the library that reads."""
        return "uproot" if self.kind.startswith("uproot.") else "root"

    @property
    def opens_in_loop(self) -> bool:
        """Whether the calibration's event loop with this reader times the files' opening as
        the program pays it (an ``RDataFrame`` from its construction, a PyROOT loop from
        ``TFile::Open``): its rate then holds the open per file, and nothing is added for it.
        uproot's passes and the compiled ``GetEntry`` loop time the reads alone."""
        return self.kind == "rdataframe" or (self.engine == "root" and self.loop == "python")

    @property
    def step(self) -> int | str:
        """``uproot.iterate``'s ``step_size`` (uproot's default where not given)."""
        return UPROOT_DEFAULT_STEP if self.step_size is None else self.step_size

    @property
    def key_prepass(self) -> bool:
        """Whether the reader first reads every basket's key, one request each (uproot's
        ``iterate`` with a memory-size step, its default)."""
        return self.kind == "uproot.iterate" and isinstance(self.step, str)

    @property
    def root_cache_bytes(self) -> int:
        """``SetCacheSize``'s argument: 0 (no TTreeCache), -1 (ROOT's automatic size) or the
        size; ``rdataframe`` and the uproot readers: -1 (RDataFrame's reader keeps ROOT's
        default)."""
        if self.kind == "root.getentry":
            return 0
        if self.kind == "root.ttreecache" and self.cache_bytes is not None:
            return int(self.cache_bytes)
        return -1

    @property
    def text(self) -> str:
        """The canonical spec (``parse_reader(spec.text)`` gives the same reader, less the
        branch set and source of a trace)."""
        lib = f",library={self.library}" if self.library != "ak" else ""
        if self.kind == "uproot.iterate":
            return f"uproot.iterate:step_size={self.step}{lib}"
        if self.kind == "uproot.arrays" and lib:
            return f"uproot.arrays:{lib[1:]}"
        opts = [f"size={self.cache_bytes}"] if self.kind == "root.ttreecache" and \
            self.cache_bytes is not None else []
        if self.loop != "cxx":
            opts.append(f"loop={self.loop}")
        return f"{self.kind}:{','.join(opts)}" if opts else self.kind

    def describe(self) -> str:
        """One line: the call it stands for."""
        lib = f", library={self.library!r}" if self.library != "ak" else ""
        if self.kind == "uproot.iterate":
            s = self.step
            return (f"uproot iterate, step_size={s!r} (a memory size: key pre-pass){lib}"
                    if isinstance(s, str) else f"uproot iterate, step_size={s:,} entries{lib}")
        py = ", a Python (PyROOT) loop" if self.loop == "python" else ""
        return {"uproot.arrays": f"uproot arrays (each file in one call){lib}",
                "root.getentry": f"ROOT GetEntry loop without TTreeCache{py}",
                "root.ttreecache": f"ROOT GetEntry loop{py} with TTreeCache ("
                + ("automatic size" if self.cache_bytes is None
                   else f"{self.cache_bytes / 1e6:g} MB") + ")",
                "rdataframe": "RDataFrame, one thread"}[self.kind]


#: The reader a program of each engine uses when it says nothing else: uproot's
#: ``uproot.iterate`` with its default ``step_size="100 MB"`` (uproot 5), and ROOT's
#: ``TTree::GetEntry`` loop with the TTreeCache ROOT turns on by default (since 6.04).
DEFAULT_READERS = {"uproot": "uproot.iterate", "root": "root.ttreecache"}


def default_reader(engine: str = "uproot") -> ReaderSpec:
    """The reader assumed where none is named: the engine's documented default
    (:data:`DEFAULT_READERS`), marked ``assumed``."""
    spec = parse_reader(DEFAULT_READERS.get(engine, DEFAULT_READERS["uproot"]))
    return replace(spec, assumed=True,
                   how=(f"not named: {engine}'s default reader assumed ({spec.describe()})",))


def memory_size(text: str) -> int:
    """``"100 MB"``, ``"20MiB"``, ``"5000000"`` -> bytes; ``ValueError`` otherwise."""
    m = _SIZE.match(text)
    unit = m.group(2).lower() if m else ""
    if m is None or unit not in {*_UNITS, ""}:
        raise ValueError(f"not a memory size: {text!r} (e.g. 100 MB, 20 MiB)")
    return int(float(m.group(1)) * _UNITS.get(unit, 1))


def _step(text: str) -> int | str:
    t = text.strip().strip("'\"")
    if re.fullmatch(r"[0-9_]+", t):
        n = int(t.replace("_", ""))
        if n < 1:
            raise ValueError("step_size must be at least 1 entry")
        return n
    size = memory_size(t)
    if size < 1:
        raise ValueError("step_size must be a positive memory size")
    return t


def parse_reader(spec: str) -> ReaderSpec:
    """A :class:`ReaderSpec` from ``KIND[:OPTION=VALUE,...]`` or a trace JSON file (see the
    module).  Raises ``ValueError`` with a one-line cause."""
    text = spec.strip()
    if not text:
        raise ValueError(f"empty reader spec (one of: {EXAMPLES})")
    if text.lower().endswith(".json") or (os.path.isfile(text) and ":" not in text):
        return reader_from_trace(text)
    kind, _, rest = text.partition(":")
    kind = kind.strip().lower()
    if kind not in KINDS:
        raise ValueError(f"unknown reader {kind!r} (one of: {EXAMPLES})")
    options: dict[str, str] = {}
    for part in (p for p in rest.split(",") if p.strip()) if rest else ():
        key, eq, value = (s.strip() for s in part.partition("="))
        if not eq or not value:
            raise ValueError(f"reader {text!r}: {part.strip()!r} is not OPTION=VALUE")
        if key not in _OPTIONS[kind]:
            allowed = ", ".join(_OPTIONS[kind]) or "none"
            raise ValueError(f"reader {text!r}: {kind} has no option {key!r} "
                             f"(options: {allowed})")
        options[key] = value
    try:
        library = options.get("library", "ak").lower()
        if library not in ("ak", "np"):
            raise ValueError(f"library {options['library']!r}: ak or np")
        if kind == "uproot.iterate":
            step = _step(options["step_size"]) if "step_size" in options else None
            return ReaderSpec(kind, step_size=step, library=library)
        if kind == "uproot.arrays":
            return ReaderSpec(kind, library=library)
        loop = options.get("loop", "cxx").lower()
        if loop not in ("cxx", "python"):
            raise ValueError(f"loop {options['loop']!r}: cxx or python")
        size = None
        if kind == "root.ttreecache" and "size" in options:
            value = options["size"]
            size = None if value.lower() == "auto" else memory_size(value)
            if size is not None and size <= 0:
                raise ValueError("size must be positive (or auto)")
        if kind.startswith("root."):
            return ReaderSpec(kind, cache_bytes=size, loop=loop)
    except ValueError as exc:
        raise ValueError(f"reader {text!r}: {exc}") from None
    return ReaderSpec(kind)


# -- a trace ---------------------------------------------------------------------------------
def reader_from_trace(path: str) -> ReaderSpec:
    """The reader of a program traced by ``hep-advisor trace --json -o FILE`` (the document,
    or its ``trace`` block alone).  ``ValueError`` (one line) when it is not such a file."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file (--reader takes one of: {EXAMPLES})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON: {exc.msg} (line {exc.lineno})") from None
    trace = doc.get("trace") if isinstance(doc, dict) and "trace" in doc else doc
    if not isinstance(trace, dict) or not isinstance(trace.get("requests_by_kind"), dict) \
            or not isinstance(trace.get("files"), list):
        raise ValueError(f"{path}: not a trace (write one with `hep-advisor trace --json -o "
                         f"{os.path.basename(path)} -- COMMAND`)")
    return deduce_reader(trace, path)


def _program_text(command: str) -> str:
    """The text of the program files the command names (``.py``, ``.C``, ``.cxx``...),
    and of the command itself."""
    texts = [command]
    try:
        argv = shlex.split(command)
    except ValueError:
        argv = command.split()
    for arg in argv:
        if arg.endswith((".py", ".C", ".cxx", ".cpp", ".cc")) and os.path.isfile(arg):
            try:
                with open(arg, encoding="utf-8", errors="replace") as f:
                    texts.append(f.read(200_000))
            except OSError:
                continue
    return "\n".join(texts)


_STEP_ARG = re.compile(r"step_size\s*=\s*(['\"][^'\"]+['\"]|[0-9_]+)")


def _baskets(paths: Sequence[str], branches: Sequence[str] | None) -> int | None:
    """The baskets of ``branches`` (all where ``None``) in the files, from their maps."""
    from ..basketmap import read_basket_map

    total = 0
    for p in paths:
        try:
            m = read_basket_map(p)
            total += sum(b.baskets for b in m.select(list(branches) if branches else None))
        except Exception:
            return None
    return total


def deduce_reader(trace: dict[str, Any], source: str = "trace") -> ReaderSpec:
    """The reader a traced program used (see the module); ``how`` says on what it rests."""
    kinds = trace["requests_by_kind"]
    files = [f for f in trace["files"] if isinstance(f, dict) and f.get("path")]
    names: list[str] = []
    for f in files:
        names.extend(b for b in f.get("branches", ()) if b not in names)
    branches = tuple(names) or None
    text = _program_text(str(trace.get("command", "")))
    uses_uproot = "uproot" in text
    uses_root = bool(re.search(r"\bROOT\b|TFile|TTree|TChain|\broot\b", text))
    found = _STEP_ARG.search(text)
    library = "np" if re.search(r"library\s*=\s*['\"]np['\"]", text) else "ak"
    # a ROOT loop written in Python (the command runs a .py) pays PyROOT's cost per call
    loop = "python" if re.search(r"\.py\b", str(trace.get("command", ""))) else "cxx"
    keys, basket_reads = int(kinds.get("key", 0)), int(kinds.get("basket", 0))
    how: list[str] = []
    if branches is None:
        how.append("branches: not in the trace (written before it named them): those given")
    else:
        how.append(f"branches: the {len(branches)} whose baskets the trace read")
    if keys > 0:
        step: int | str = UPROOT_DEFAULT_STEP
        if found and found.group(1)[0] in "'\"":
            step = found.group(1).strip("'\"")
        origin = "from the program" if step != UPROOT_DEFAULT_STEP else \
            "uproot's default: assumed"
        how.append(f"{keys} key reads before the data: a memory-size step_size "
                   f"({step!r}, {origin})")
        return ReaderSpec("uproot.iterate", step_size=step, branches=branches,
                          source=source, how=tuple(how), library=library)
    needed = _baskets([str(f["path"]) for f in files], branches)
    if "RDataFrame" in text:
        how.append("the program builds an RDataFrame")
        return ReaderSpec("rdataframe", branches=branches, source=source, how=tuple(how))
    if needed and basket_reads >= 0.8 * needed:
        how.append(f"{basket_reads} basket reads for {needed} baskets: one read per basket "
                   f"(GetEntry without TTreeCache)")
        return ReaderSpec("root.getentry", branches=branches, source=source, how=tuple(how),
                          loop=loop)
    if uses_root and not uses_uproot:
        how.append(f"{basket_reads} reads for {needed or '?'} baskets with ROOT: TTreeCache "
                   f"(automatic size: assumed)")
        return ReaderSpec("root.ttreecache", branches=branches, source=source, how=tuple(how),
                          loop=loop)
    if found and found.group(1)[0] not in "'\"":
        n = int(found.group(1).replace("_", ""))
        how.append(f"no key pre-pass; step_size={n} found in the program")
        return ReaderSpec("uproot.iterate", step_size=n, branches=branches, source=source,
                          how=tuple(how), library=library)
    how.append("no key pre-pass and no entry step found in the program: each file in one "
               "call (arrays)")
    return ReaderSpec("uproot.arrays", branches=branches, source=source, how=tuple(how),
                      library=library)


def with_branches(spec: ReaderSpec | None, branches: Sequence[str] | None
                  ) -> tuple[str, ...] | None:
    """The branches the event loop reads: the trace's where it named them, else
    ``branches``."""
    if spec is not None and spec.branches:
        return spec.branches
    return tuple(branches) if branches else None


# -- the passes ------------------------------------------------------------------------------
def uproot_chunks(tree: Any, spec: ReaderSpec | None, branches: Sequence[str], entry_stop: int,
                  default_step: int) -> Any:
    """The chunks of arrays ``spec`` reads from ``tree`` (its ``library``), first
    ``entry_stop`` entries: ``iterate`` at its step, or ``arrays`` in one call.  Without a
    spec, the advisor's own loop: ``iterate`` at ``default_step`` entries into awkward
    arrays."""
    names = list(branches)
    if spec is None:
        yield from tree.iterate(names, step_size=default_step, entry_stop=entry_stop,
                                library="ak")
        return
    if spec.kind == "uproot.arrays":
        yield tree.arrays(names, entry_stop=entry_stop, library=spec.library)
        return
    yield from tree.iterate(names, step_size=spec.step, entry_stop=entry_stop,
                            library=spec.library)


def label_loop(loop: Any, spec: ReaderSpec | None) -> Any:
    """``loop`` (an ``EventLoop``) naming the reader it ran (JSON ``reader``)."""
    return loop if spec is None else replace(loop, reader=spec.text)


__all__ = ["DEFAULT_READERS", "EXAMPLES", "KINDS", "UPROOT_DEFAULT_STEP", "ReaderSpec",
           "deduce_reader", "default_reader",
           "label_loop", "memory_size", "parse_reader",
           "reader_from_trace", "uproot_chunks", "with_branches"]
