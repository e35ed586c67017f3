"""TTree -> RNTuple, measured on a sample: the read test behind the N001 recommendation.

A sample of the dataset's largest TTree (the first whole clusters of its largest file, about
``SAMPLE_BYTES`` compressed of the selected branches, at least one cluster) is written into a
new directory of the system's temporary directory, twice, with the dataset's own compression
setting: as a TTree (ROOT's ``TTree::CopyTree``, which keeps the branches' basket sizes and
the cluster size; with uproot, ``mktree`` and one ``extend`` per original cluster), and as an
RNTuple converted from that TTree (ROOT's ``RNTupleImporter`` where ROOT can be imported; else
uproot, whose ``f[name] = arrays`` writes an RNTuple since 5.7).  Both copies lie on the same
storage and are written the same way, so what differs is the format.  The directory is always
removed, also on Ctrl-C or cancellation, and the user's files are only read.

Then the same read is timed on both, alternating (TTree, RNTuple, RNTuple, TTree, ...): the
engine's own (uproot: ``arrays`` of the selected branches, or of the fields they became; ROOT:
the TTree's ``GetEntry`` loop with its default TTreeCache, and ``RNTupleReader::LoadEntry``),
opening not timed.  Cold pairs evict both files first; they are compared only where
``mincore`` confirmed the eviction for both (a ``tmpfs`` temporary directory cannot be
evicted: the pairs are then warm, and say so).  Warm pairs follow.  The figures are per pair,
TTree seconds / RNTuple seconds: a gain over 1 means the RNTuple reads faster.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..results import TreeProfile
from ..rootfile import one_line
from .pagecache import Eviction, evict
from .raw import cache_state
from .results import CacheState, Conditions, ConversionPoint
from .rntuple_loop import NotForRNTuple, page_locations
from .runner import Context, OutOfTime, Session, measurement

TEST = "conversion"
#: Compressed bytes of the selected branches the sample holds (whole clusters, at least one).
SAMPLE_BYTES = 8_000_000
#: The least sample, and the compressed MB per second of the test's share it holds at most
#: (converting twice, then four reads per pair, cold and warm).
MIN_SAMPLE_BYTES = 1_000_000
SAMPLE_MB_PER_S = 1.0
#: The share from which ROOT is imported for the conversion (where it is not loaded already).
ROOT_SHARE_S = 6.0
#: The whole sample's conversion and one round of reads take about this many times the
#: conversion of its quarter (a fixed part per branch, and a part per entry).
CONVERT_AND_READ = 3.0
#: Below this calibration budget the test is not made (it returns ``None``, silently: a
#: conversion and its reads do not fit in the share a shorter budget gives it).
MIN_BUDGET_S = 30.0
#: Seconds ``import ROOT`` and its set-up take, about (ROOT is used only where they fit).
ROOT_IMPORT_S = 3.0
#: Fraction of what is left after converting that goes to the cold pairs.
COLD_FRACTION = 0.6

ROOT_CODE = r"""
#include <TFile.h>
#include <TTree.h>
#include <ROOT/RNTupleImporter.hxx>
#include <ROOT/RNTupleWriteOptions.hxx>
#include <chrono>
#include <memory>
#include <string>

namespace hep_advisor_convert {
// The first `entries` entries of `tree` in `src`, written as the TTree `name` of `dst` with
// compression `setting`; returns the entries written (negative: cannot open / no tree).
long copy_tree(const char *src, const char *tree, const char *dst, const char *name,
               long entries, int setting)
{
   std::unique_ptr<TFile> in(TFile::Open(src, "READ"));
   if (!in || in->IsZombie()) return -1;
   auto *t = in->Get<TTree>(tree);
   if (!t) return -2;
   TFile out(dst, "RECREATE", "", setting);
   auto *c = t->CopyTree("", "", entries);
   c->SetName(name);
   c->Write();
   long n = c->GetEntries();
   out.Close();
   return n;
}
// The TTree `name` of `src` as the RNTuple `name` of `dst`, with compression `setting`.
void import_tree(const char *src, const char *name, const char *dst, int setting)
{
   auto imp = ROOT::Experimental::RNTupleImporter::Create(src, name, dst);
   ROOT::RNTupleWriteOptions opts;
   opts.SetCompression(setting);
   imp->SetWriteOptions(opts);
   imp->SetIsQuiet(true);
   imp->Import();
}
}
"""
def _root() -> Any:
    """ROOT with the RNTuple loop and the conversion helpers declared."""
    from .rntuple_loop import import_root_rntuple
    from .rootengine import declare_once

    return declare_once(import_root_rntuple(), ROOT_CODE, "the conversion helpers")


def root_version() -> str | None:
    """ROOT's version (``6.40.00``) where ROOT is imported or importable, else ``None``."""
    try:
        from .rootengine import import_root

        return str(import_root().gROOT.GetVersion())
    except Exception:
        return None


def _uproot_version() -> str:
    import uproot

    return str(uproot.__version__)


# -- the sample ------------------------------------------------------------------------------
def sample_entries(tree: Any, branches: Sequence[str], max_bytes: float) -> int:
    """Entries of the first whole clusters of an uproot TTree holding about ``max_bytes`` of
    ``branches``; where the first cluster alone holds more than twice that, the first part of
    it that does (at least one entry)."""
    n = int(tree.num_entries)
    zipped = sum(int(tree[b].member("fZipBytes")) for b in branches) or 1
    want = max(1, min(n, int(n * max_bytes / zipped)))
    try:
        ends = [int(x) for x in tree.common_entry_offsets() if 0 < int(x) <= n]
    except Exception:
        ends = []
    fits = [e for e in ends if e <= want]
    if fits and fits[-1] >= want / 2:
        return fits[-1]
    return want


def _cluster_ends(tree: Any, entries: int) -> list[int]:
    try:
        edges = [int(x) for x in tree.common_entry_offsets()]
    except Exception:
        edges = [0, entries]
    ends = [e for e in edges if 0 < e < entries] + [entries]
    return ends


def write_uproot_pair(src: str, tree_name: str, branches: Sequence[str], entries: int,
                      ttree_path: str, rntuple_path: str, setting: int | None) -> str:
    """The sample as a TTree (``mktree`` + one ``extend`` per cluster) and as an RNTuple, with
    uproot; returns the name both carry."""
    import uproot

    name = tree_name.rsplit("/", 1)[-1]
    comp = _uproot_compression(setting)
    with uproot.open(src) as f:
        tree = f[tree_name]
        ends = _cluster_ends(tree, entries)
        arrays = tree.arrays(list(branches), entry_stop=entries, library="ak")
    with uproot.recreate(ttree_path, compression=comp) as out:
        start = 0
        for end in ends:
            chunk = {b: arrays[b][start:end] for b in branches}
            if start == 0:
                out.mktree(name, {b: chunk[b].type.content for b in branches})
            out[name].extend(chunk)
            start = end
    with uproot.recreate(rntuple_path, compression=comp) as out:
        out[name] = {b: arrays[b] for b in branches}
    return name


def _uproot_compression(setting: int | None) -> Any:
    from ..rootfile import ALGORITHM_CODES
    from .rootcodec import root_codec

    if not setting:
        return None
    alg, level = divmod(int(setting), 100)
    name = ALGORITHM_CODES.get(alg)  # a setting below 100: ZLIB at that level, as in ROOT
    return root_codec(name, level) if name in ("ZLIB", "LZMA", "LZ4", "ZSTD") else None


def _bounded(session: Session, seconds: float, reason: str, fn: Callable[..., Any],
             args: tuple[Any, ...]) -> Any:
    """``fn(*args)`` in a child process ended after ``seconds`` (:func:`.procs.call_bounded`);
    :class:`OutOfTime` with ``reason`` where it did not end in time."""
    from .procs import call_bounded

    try:
        return call_bounded(fn, args, seconds, check=session.check)
    except TimeoutError:
        raise OutOfTime(reason) from None


def write_root_pair(src: str, tree_name: str, entries: int, ttree_path: str,
                    rntuple_path: str, setting: int | None) -> str:
    """The sample as a TTree (``CopyTree``) and as an RNTuple (``RNTupleImporter``)."""
    root = _root()
    name = tree_name.rsplit("/", 1)[-1]
    s = int(setting) if setting is not None else 505
    n = int(root.hep_advisor_convert.copy_tree(src, tree_name, ttree_path, name, entries, s))
    if n < 0:
        raise ValueError(f"ROOT cannot copy tree {tree_name!r} of {src}")
    root.hep_advisor_convert.import_tree(ttree_path, name, rntuple_path, s)
    return name


# -- the reads -------------------------------------------------------------------------------
def _fields_of(path: str, name: str, branches: Sequence[str]) -> list[str]:
    """The RNTuple's top-level fields the branches became (all of them where none match)."""
    import uproot

    with uproot.open(path) as f:
        keys = list(f[name].keys())
    chosen = [b for b in branches if b in keys]
    return chosen or keys


def _uproot_read(path: str, name: str, names: Sequence[str]) -> float:
    import uproot

    with uproot.open(path) as f:
        obj = f[name]
        t0 = time.perf_counter()
        arrays = obj.arrays(list(names), library="ak")
        s = time.perf_counter() - t0
    del arrays
    return s


def _root_ttree_read(path: str, name: str, branches: Sequence[str]) -> float:
    from .rootengine import import_root

    root = import_root()
    names = root.std.vector["std::string"]()
    for b in branches:
        names.push_back(b)
    out = [float(x) for x in root.hep_advisor_root.read_pass(path, name, names, -1, -1, 1e30,
                                                               False)]
    if int(out[0]) != 0:
        raise ValueError(f"ROOT cannot read tree {name!r} of {path}")
    return out[9]


def _root_rntuple_read(path: str, name: str, fields: Sequence[str]) -> float:
    root = _root()
    names = root.std.vector["std::string"]()
    for x in fields:
        names.push_back(x)
    s = float(root.hep_advisor_rntuple.loop(path, name, names, 1 << 62))
    if s < 0:
        raise ValueError(f"ROOT cannot read RNTuple {name!r} of {path}")
    return s


def _ttree_facts(path: str, name: str, branches: Sequence[str]) -> tuple[int, int]:
    """(stored bytes, baskets) of the branches in the TTree copy."""
    import uproot

    with uproot.open(path) as f:
        t = f[name]
        return (sum(int(t[b].member("fZipBytes")) for b in branches),
                sum(int(t[b].num_baskets) for b in branches))


def _rntuple_facts(path: str, name: str, fields: Sequence[str]) -> tuple[int, int]:
    """(stored bytes, pages) of the fields in the RNTuple, from its page lists."""
    import uproot

    from ..rntuple import read_rntuple

    with uproot.open(path) as f:
        nt = f[name]
        meta = read_rntuple(nt)
        chosen = set(fields)
        pages = sum(fm.pages for fm in meta.fields if fm.name in chosen)
        nbytes = sum(fm.compressed_bytes for fm in meta.fields if fm.name in chosen)
        if not pages:
            pages = len(page_locations(nt))
    return nbytes, pages


def _gains(tt: Sequence[float], rn: Sequence[float]) -> list[float]:
    return [a / b for a, b in zip(tt, rn, strict=False) if a > 0 and b > 0]


def extrapolate(big_s: float, small_s: float, big: int, small: int, target: int
                ) -> float | None:
    """Seconds to read ``target`` entries from the reads of ``big`` and ``small`` entries: a
    fixed part and a part per entry (``None`` where the two do not give a positive rate)."""
    if big <= small or big_s <= small_s:
        return None
    per = (big_s - small_s) / (big - small)
    fixed = max(0.0, big_s - per * big)
    return fixed + per * target


def _pair_gains(tt: Sequence[float], rn: Sequence[float], tt_small: Sequence[float],
                rn_small: Sequence[float], big: int, small: int, target: int) -> list[float]:
    """Per pair: TTree / RNTuple seconds for ``target`` entries (extrapolated from the two
    sample sizes where ``target`` differs from ``big`` and both extrapolate), else measured."""
    out = []
    for a, b, c, d in zip(tt, rn, tt_small, rn_small, strict=False):
        x = extrapolate(a, c, big, small, target) if target != big else None
        y = extrapolate(b, d, big, small, target) if target != big else None
        if x is not None and y is not None and x > 0 and y > 0:
            out.append(x / y)
        elif a > 0 and b > 0:
            out.append(a / b)
    return out


def measure_conversion(
    session: Session,
    path: str,
    tree_name: str,
    branches: Sequence[str] | None,
    share_s: float,
    setting: int | None,
    engine: str = "uproot",
    converter: str | None = None,
    sample_bytes: float = SAMPLE_BYTES,
    tmp_root: str | None = None,
    target_entries: int | None = None,
) -> ConversionPoint:
    """Convert a sample of ``tree_name`` in ``path`` and time the same read on both formats.

    The sample (``entries``) and its first quarter are converted, and the reads of both sizes
    timed in every pair, so that each format's time splits into a fixed part (per branch or
    field, per read) and a part per entry: the gain is then given for a read of
    ``target_entries`` (default: the sample's), the size of the analysis' reads.
    ``converter`` is ``"root"`` or ``"uproot"`` (default: ROOT where it is imported already
    or its import fits in the share, else uproot); ``tmp_root`` the directory the temporary
    one is made in (default: the system's)."""
    import uproot

    clock = session.clock
    t0 = clock()
    session.check()
    session.report(TEST, 0.0, "choosing the sample")
    with uproot.open(path) as f:
        tree = f[tree_name]
        from .readplan import leaf_branches

        chosen = list(branches) if branches else leaf_branches(tree)
        entries = sample_entries(tree, chosen, sample_bytes)
    small = max(1, entries // 4)
    target = int(target_entries) if target_entries else entries
    if converter is None:
        converter = "root" if ("ROOT" in sys.modules or share_s >= 2 * ROOT_IMPORT_S) and \
            root_version() is not None else "uproot"
    if engine == "root" or converter == "root":
        session.need(0.5 if "ROOT" in sys.modules else ROOT_IMPORT_S, "importing ROOT")
    tmp = tempfile.mkdtemp(prefix="hep-advisor-convert-", dir=tmp_root)
    try:
        same_storage: bool | None = os.stat(tmp).st_dev == os.stat(path).st_dev
    except OSError:
        same_storage = None
    try:
        tt_path = os.path.join(tmp, "ttree.root")
        rn_path = os.path.join(tmp, "rntuple.root")
        tt_small_path = os.path.join(tmp, "ttree_small.root")
        rn_small_path = os.path.join(tmp, "rntuple_small.root")
        session.report(TEST, 0.1, f"converting {entries:,} entries ({converter})")
        c0 = time.perf_counter()
        # the quarter first: its time says whether the whole sample's conversion fits
        if converter == "root":
            write_root_pair(path, tree_name, small, tt_small_path, rn_small_path, setting)
        else:
            # uproot's writing time is not foreseeable (per branch and per compressed basket:
            # LZMA's set-up is paid per basket): a child ended where the quarter alone would
            # leave the whole sample's conversion and reads no room
            left = session.left()
            _bounded(session, left / CONVERT_AND_READ,
                     f"no time for converting {entries:,} entries: a quarter of them took "
                     f"more than {left / CONVERT_AND_READ:.2g} s ({CONVERT_AND_READ:g}x that, "
                     f"the whole and its reads, is more than the {left:.2g} s left of its "
                     "share of the budget)", write_uproot_pair,
                     (path, tree_name, chosen, small, tt_small_path, rn_small_path, setting))
        session.check()
        quarter_s = time.perf_counter() - c0
        session.need(CONVERT_AND_READ * quarter_s, f"converting {entries:,} entries")
        if converter == "root":
            name = write_root_pair(path, tree_name, entries, tt_path, rn_path, setting)
            label = f"ROOT {root_version()} TTree::CopyTree + RNTupleImporter"
        else:
            left = session.left()
            name = _bounded(session, left, f"no time for converting {entries:,} entries: "
                            f"it took more than the {left:.2g} s left of its share of the "
                            "budget", write_uproot_pair,
                            (path, tree_name, chosen, entries, tt_path, rn_path, setting))
            label = f"uproot {_uproot_version()} mktree + f[name] = arrays"
        convert_s = time.perf_counter() - c0
        session.check()
        fields = _fields_of(rn_path, name, chosen)
        tt_bytes, tt_req = _ttree_facts(tt_path, name, chosen)
        rn_bytes, rn_req = _rntuple_facts(rn_path, name, fields)

        def reader(p: str, rntuple: bool) -> Callable[[], float]:
            names = fields if rntuple else chosen
            if engine == "root":
                if rntuple:
                    return lambda: _root_rntuple_read(p, name, names)
                return lambda: _root_ttree_read(p, name, names)
            return lambda: _uproot_read(p, name, names)

        files = (tt_path, rn_path, tt_small_path, rn_small_path)
        reads = [reader(tt_path, False), reader(rn_path, True), reader(tt_small_path, False),
                 reader(rn_small_path, True)]
        for read in reads:  # warm-up: interpretations, kernels; evicted before cold pairs
            read()
        evictions: list[Eviction] = []
        cold_s: list[list[float]] = [[], [], [], []]
        warm_s: list[list[float]] = [[], [], [], []]
        left = max(0.0, share_s - (clock() - t0))

        def one_round(out: list[list[float]], cold: bool) -> float:
            k = len(out[0])
            order = list(range(4)) if k % 2 == 0 else [1, 0, 3, 2]
            for i in order:
                if cold:
                    evictions.extend(evict(p) for p in files)
                out[i].append(reads[i]())
            return out[0][-1] / max(out[1][-1], 1e-9)

        session.repeat(lambda: one_round(cold_s, True), COLD_FRACTION * left, TEST,
                       "cold reads, TTree and RNTuple", min_samples=2)
        cold_ok: CacheState = cache_state(evictions)
        session.repeat(lambda: one_round(warm_s, False), max(0.0, share_s - (clock() - t0)),
                       TEST, "warm reads, TTree and RNTuple", min_samples=1)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    cold = cold_ok == "cold"
    use = cold_s if cold else warm_s
    gains = _pair_gains(use[0], use[1], use[2], use[3], entries, small, target)
    warm_gains = _pair_gains(warm_s[0], warm_s[1], warm_s[2], warm_s[3], entries, small,
                             target)
    sample_gains = _gains(use[0], use[1])
    what = "cold" if cold else "warm"
    reader_text = ("ROOT: TTree GetEntry loop (default TTreeCache) and RNTupleReader::LoadEntry"
                   if engine == "root" else "uproot: arrays() of the branches / fields")
    why_warm = "" if cold else (
        "; the temporary files could not be evicted from the page cache (mincore "
        f"said {cold_ok}): the compared reads are warm")
    scaled = (f"; gains for reads of {target:,} entries (the analysis' reads), from reads of "
              f"{entries:,} and {small:,} entries (a fixed part and a part per entry per "
              f"format); on the sample itself: {statistics.median(sample_gains):.2f}x"
              if target != entries and sample_gains else "")
    note = (f"{entries:,} entries of {os.path.basename(path)} converted in a temporary "
            f"directory ({tmp_root or tempfile.gettempdir()}); {reader_text}; opening not "
            f"timed; pairs alternate which format is read first{scaled}{why_warm}")
    cond = Conditions(cache="cold" if cold else "warm", workers=1,
                      bytes_per_sample=tt_bytes + rn_bytes, note=note)
    session.report(TEST, 1.0, "conversion done",
                   figure=f"RNTuple/TTree read: {statistics.median(gains):.2f}x ({what})"
                   if gains else None)
    return ConversionPoint(
        engine=engine, converter=label, compression_setting=setting, entries=entries,
        branches=len(chosen), cache="cold" if cold else "warm",
        gain=statistics.median(gains) if gains else None,
        warm_gain=statistics.median(warm_gains) if warm_gains else None,
        ttree_bytes=tt_bytes, rntuple_bytes=rn_bytes, ttree_requests=tt_req,
        rntuple_requests=rn_req, convert_s=convert_s,
        measurement=measurement(gains, "x", cond),
        ttree=measurement(list(use[0]), "s", cond),
        rntuple=measurement(list(use[1]), "s", cond),
        note=note, target_entries=target,
        sample_gain=statistics.median(sample_gains) if sample_gains else None,
        same_storage=same_storage,
    )


def analysis_entries(tree: TreeProfile, branches: Sequence[str] | None) -> int | None:
    """Entries one read of the analysis covers: a file's, at most one step of the event loop
    (``eventloop.DEFAULT_STEP_BYTES`` uncompressed of the branches read)."""
    from .eventloop import DEFAULT_STEP_BYTES

    if not tree.entries or not tree.files:
        return None
    per_file = tree.entries / tree.files
    unc = tree.uncompressed_bytes
    if branches:
        chosen = set(branches)
        unc = sum(b.uncompressed_bytes for b in tree.branch_profiles if b.name in chosen) or unc
    per_entry = unc / tree.entries if unc else 0.0
    step = DEFAULT_STEP_BYTES / per_entry if per_entry > 0 else per_file
    return max(1, int(min(per_file, step)))


def _largest_with(paths: Sequence[str], name: str) -> str:
    """The first of ``paths`` (largest first) holding the tree ``name``."""
    import uproot

    for p in paths:
        try:
            with uproot.open(p) as f:
                if name in f:
                    return p
        except Exception:
            continue
    raise OutOfTime(f"no file of the first {len(paths)} holds the tree {name!r}")


def conversion(ctx: Context, share_s: float) -> ConversionPoint | None:
    """The registry's step: the largest TTree's sample, from its largest file read here;
    skipped, with the reason, with a budget under ``MIN_BUDGET_S``."""
    tree = ctx.tree
    if tree.format == "rntuple":
        raise NotForRNTuple("the dataset is an RNTuple already")
    if ctx.session.budget_s < MIN_BUDGET_S:
        raise OutOfTime(f"a budget under {MIN_BUDGET_S:.0f} s leaves no room to convert a "
                        "sample (N001 needs --budget 30 or more)")
    local = [f for f in ctx.files if os.path.isfile(f)]
    if not local:
        raise OutOfTime("no local file to take a sample from")
    path = _largest_with(sorted(local[:16], key=os.path.getsize, reverse=True), tree.name)
    # ROOT's importer where ROOT is loaded or its import fits; the sample sized to the share
    root_ok = "ROOT" in sys.modules or share_s >= ROOT_SHARE_S
    converter = "root" if root_ok and root_version() is not None else "uproot"
    sample = min(SAMPLE_BYTES, max(MIN_SAMPLE_BYTES, SAMPLE_MB_PER_S * 1e6 * share_s))
    try:
        return measure_conversion(ctx.session, path, tree.name, ctx.branches, share_s,
                                  tree.compression.setting, engine=ctx.engine,
                                  converter=converter, sample_bytes=sample,
                                  target_entries=analysis_entries(tree, ctx.branches))
    except (OutOfTime, KeyboardInterrupt):
        raise
    except ImportError as exc:
        raise OutOfTime(f"ROOT is needed here: {one_line(exc)}") from exc


__all__ = ["SAMPLE_BYTES", "conversion", "measure_conversion", "root_version",
           "sample_entries", "write_root_pair", "write_uproot_pair"]
