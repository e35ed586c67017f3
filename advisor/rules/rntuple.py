"""TTree -> RNTuple (N001), from a measured conversion; and the rules kept silent for RNTuple.

N001 rests on the calibration's ``conversion`` read test
(:mod:`hep_advisor.probes.readtests.conversion`): a sample of the largest TTree (its first clusters
in one file) copied as a TTree and converted to an RNTuple in a temporary directory, and the same
read timed on both.  The rule applies only where that measured gain is at least ``MIN_GAIN``: the
cold one where the temporary files could be evicted (uproot reads an RNTuple's pages one
request each, so a cold RNTuple read can be slower than its TTree twin: the rule is then
silent), else the warm one, and it says so.

The dataset's speed-up comes from a scenario through the fitted model, the bytes changed by
the measured size ratio.  Where the sample was read cold and its temporary directory lies on
the dataset's own device, the whole read (storage, decompression, processing, fixed costs per
call and per basket) runs at the cold gain.  Otherwise (warm, or another device) the CPU terms
run at the warm gain, and the storage is the model's: with uproot each page becomes one
request, of the sample's mean page size (not less than the read-ahead), on the dataset's own
storage.  Opening a file costs what it costs now (not measured for RNTuple).

Rules about a TTree's own mechanics (T001: the TTreeCache; R001: basket sizes and
``fAutoFlush``) do not apply to an RNTuple: :func:`silence_ttree_rules` removes them for an
RNTuple dataset.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from hep_advisor.findings.recommendation import Action, Evidence, Recommendation
from hep_advisor.models.scenarios import Baseline, Scenario
from hep_advisor.probes.readtests.results import ConversionPoint
from hep_advisor.rules.context import Context
from hep_advisor.rules.inputs import python_files
from hep_advisor.rules.rule import Rule

#: The read-ahead a request gets where the site does not say (as the calibration assumes).
DEFAULT_READAHEAD_BYTES = 128 * 1024
#: Recommend the conversion only where the measured read gain is at least this.
MIN_GAIN = 1.05
#: The sample's gain is trusted to this relative standard deviation at least.
MIN_GAIN_SD = 0.05
#: Recommendations about a TTree's own mechanics: silent for an RNTuple dataset.
TTREE_ONLY = ("T001", "R001")
#: What uproot's conversion needs.
UPROOT_WRITER = "uproot >= 5.7 (which writes RNTuple); checked with uproot 5.7.7"
#: What the printed conversion needs.
ROOT_IMPORTER = ("PyROOT with ROOT's RNTupleImporter; checked with ROOT 6.40 (there it is "
                 "ROOT.Experimental.RNTupleImporter and ROOT.RNTupleWriteOptions); the "
                 "RNTuples it writes (format 1.0) are read by ROOT >= 6.34")


def _gain_sd(conv: ConversionPoint) -> float:
    """Relative standard error of the compared gain (its pairs' spread, the median's)."""
    m = conv.measurement
    if m.spread is None or len(m.samples) < 3:
        return 0.25
    return max(MIN_GAIN_SD, 1.2533 * m.spread / 1.349 / math.sqrt(len(m.samples)))


def to_rntuple(conv: ConversionPoint, readahead_bytes: float = DEFAULT_READAHEAD_BYTES
               ) -> Scenario:
    """The scenario: the dataset converted as the sample was (see the module's notes); with
    uproot, one request per page, of the sample's mean page size and at least
    ``readahead_bytes``."""
    g = conv.warm_gain or conv.gain or 1.0
    size = conv.rntuple_bytes / conv.ttree_bytes if conv.ttree_bytes and conv.rntuple_bytes \
        else 1.0
    sd = _gain_sd(conv)
    page = (conv.rntuple_bytes / conv.rntuple_requests
            if conv.rntuple_requests and conv.rntuple_bytes else None)

    whole = conv.cache == "cold" and bool(conv.same_storage) and conv.gain is not None

    def transform(b: Baseline) -> Baseline:
        p = b.params
        config = {**b.config, "file_mb": b.config["file_mb"] * size}
        if whole:  # cold from the dataset's own device: the whole read scales
            gc = float(conv.gain or 1.0)
            params = replace(p, storage_mb_per_s=p.storage_mb_per_s * gc * size,
                             access_ms=p.access_ms / gc,
                             decompress_mb_per_s=p.decompress_mb_per_s * gc * size,
                             process_mb_per_s=p.process_mb_per_s * gc * size,
                             call_s=p.call_s / gc, basket_s=p.basket_s / gc)
            notes = [f"RNTuple reads {gc:.2f}x the TTree's speed cold on the converted sample "
                     f"({conv.entries:,} entries), converted on the dataset's own storage "
                     f"device: the whole read (storage included) scaled by it, "
                     f"±{100 * sd:.0f}%",
                     f"the converted sample is {size:.2f}x the TTree's bytes"]
            changed: tuple[str, ...] = ("storage_mb_per_s", "access_ms", "decompress_mb_per_s",
                                        "process_mb_per_s", "call_s", "basket_s")
            assumed = dict(b.assumed_sd)
            for name in changed:
                assumed[name] = math.hypot(assumed.get(name, 0.0), sd)
            return replace(b, params=params, config=config, mb_per_work=b.mb_per_work * size,
                           file_size_mb=None if b.file_size_mb is None
                           else b.file_size_mb * size, assumed_sd=assumed).note(*notes)
        params = replace(p, decompress_mb_per_s=p.decompress_mb_per_s * g * size,
                         process_mb_per_s=p.process_mb_per_s * g * size,
                         call_s=p.call_s / g, basket_s=p.basket_s / g)
        notes = [f"RNTuple reads {g:.2f}x the TTree's speed warm on the converted sample "
                 f"({conv.entries:,} entries; CPU terms scaled by it, ±{100 * sd:.0f}%)",
                 f"the converted sample is {size:.2f}x the TTree's bytes"]
        if conv.engine == "uproot" and page:
            config["request_bytes"] = float(max(page, readahead_bytes))
            notes.append(f"uproot reads each RNTuple page in a request of its own: "
                         f"{config['request_bytes'] / 1e3:.0f} kB per request "
                         f"(mean page {page / 1e3:.0f} kB)")
        cpu = ("decompress_mb_per_s", "process_mb_per_s", "call_s", "basket_s")
        assumed = dict(b.assumed_sd)
        for name in cpu:
            assumed[name] = math.hypot(assumed.get(name, 0.0), sd)
        return replace(b, params=params, config=config, mb_per_work=b.mb_per_work * size,
                       file_size_mb=None if b.file_size_mb is None else b.file_size_mb * size,
                       mean_basket_bytes=page if page else b.mean_basket_bytes,
                       assumed_sd=assumed).note(*notes)

    return Scenario("RNTuple", "convert the TTrees to RNTuple (as the sample was)", transform,
                    ("the whole dataset converts as its sample did: the same read gain and "
                     "size ratio", "opening a file costs what it costs now"))


def _snippet(ctx: Context, tree: str, setting: int | None) -> str:
    s = setting if setting is not None else 505
    return (
        "import os\n\nimport ROOT\n\n"
        f"files = {python_files(ctx.paths)}\n"
        "os.makedirs('rntuple', exist_ok=True)\n"
        "opts = ROOT.RNTupleWriteOptions()\n"
        f"opts.SetCompression({s})  # the TTrees' own setting\n"
        "for src in files:\n"
        "    dst = os.path.join('rntuple', os.path.basename(src))\n"
        f"    imp = ROOT.Experimental.RNTupleImporter.Create(src, {tree!r}, dst)\n"
        "    imp.SetWriteOptions(opts)\n"
        "    imp.Import()")


def _uproot_snippet(ctx: Context, tree: str, setting: int | None) -> str:
    codec = {1: "ZLIB", 2: "LZMA", 4: "LZ4", 5: "ZSTD"}.get((setting or 0) // 100)
    comp = f"uproot.{codec}({(setting or 0) % 100})" if codec else "None"
    return (
        "import os\n\nimport uproot\n\n"
        f"files = {python_files(ctx.paths)}\n"
        "os.makedirs('rntuple', exist_ok=True)\n"
        "for src in files:\n"
        "    dst = os.path.join('rntuple', os.path.basename(src))\n"
        f"    with uproot.open(src) as f, uproot.recreate(dst, compression={comp}) as out:\n"
        f"        out[{tree!r}] = f[{tree!r}].arrays()  # an RNTuple (uproot >= 5.7)")


def rntuple_rule(ctx: Context) -> Recommendation | None:
    """N001: convert the TTrees to RNTuple, where a converted sample read faster."""
    tree = ctx.tree
    cal = ctx.calibration
    if tree is None or tree.format != "ttree" or cal is None or cal.conversion is None:
        return None
    conv = cal.conversion
    if conv.gain is None or conv.gain < MIN_GAIN:
        return None
    ra = next((s.read_ahead_kb for s in ctx.site.storage if s.read_ahead_kb), None)
    scen = to_rntuple(conv, ra * 1024 if ra else DEFAULT_READAHEAD_BYTES)
    try:
        point = ctx.predict(scen)
    except ValueError:
        return None
    what = conv.cache
    warm_note = ("" if what == "cold" else
                 " The sample was read warm (its temporary files could not be evicted from "
                 "the page cache): the storage's part is predicted, not measured.")
    size = 100 * (conv.rntuple_bytes / conv.ttree_bytes - 1) if conv.ttree_bytes else 0.0
    ev = [
        Evidence(f"read gain on the sample ({what})", round(conv.gain, 3), "x", "measured",
                 f"TTree / RNTuple seconds, median of {len(conv.measurement.samples)} pairs; "
                 f"{conv.entries:,} entries, {conv.branches} branches; {conv.converter}"),
        Evidence("read gain on the sample (warm)", round(conv.warm_gain, 3)
                 if conv.warm_gain is not None else "n/a", "x", "measured"),
        Evidence("size change", round(size, 1), "%", "measured",
                 f"{conv.ttree_bytes:,} bytes as TTree, {conv.rntuple_bytes:,} as RNTuple"),
        Evidence("requests (TTree baskets / RNTuple pages)",
                 f"{conv.ttree_requests} / {conv.rntuple_requests}", "", "measured",
                 "uproot reads each page in a request of its own"),
        Evidence("gain threshold", MIN_GAIN, "x", "threshold"),
    ]
    rec = ctx.make(
        rule=N001, title="Convert the TTrees to RNTuple",
        audience="analyst", point=point, scenario=scen,
        summary=(f"A sample converted to RNTuple read {conv.gain:.2f}x as fast as its TTree "
                 f"({what}, {conv.engine}); the files change size by {size:+.0f}%.{warm_note}"),
        evidence=ev,
        actions=_actions(ctx, tree.name, conv),
        extra_assumptions=(conv.note,))
    return rec


def _actions(ctx: Context, tree: str, conv: ConversionPoint) -> list[Action]:
    """ROOT's importer first; uproot's writer too, first where the sample was converted with
    it (what was measured is what is offered first)."""
    by_uproot = conv.converter.startswith("uproot")
    root = Action.labelled(
        "convert each file with ROOT's RNTupleImporter (new files in ./rntuple, the inputs "
        "untouched), then read them with RNTupleReader, RDataFrame or uproot"
        + ("" if by_uproot else " (the sample was converted so)"),
        _snippet(ctx, tree, conv.compression_setting), ROOT_IMPORTER)
    up = Action.labelled(
        "or with uproot, which writes an RNTuple where arrays are assigned to a name in a new "
        "file (each file read into memory whole)"
        + (" (the sample was converted so)" if by_uproot else ""),
        _uproot_snippet(ctx, tree, conv.compression_setting), UPROOT_WRITER)
    return [up, root] if by_uproot else [root, up]


def silence_ttree_rules(ctx: Context, recs: Sequence[Recommendation | None]
                        ) -> list[Recommendation | None]:
    """The recommendations, less those about a TTree's own mechanics for an RNTuple
    dataset (``TTREE_ONLY``)."""
    tree = ctx.tree
    if tree is None or tree.format != "rntuple":
        return list(recs)
    return [r for r in recs if r is None or r.code not in TTREE_ONLY]


__all__ = ["MIN_GAIN", "TTREE_ONLY", "rntuple_rule", "silence_ttree_rules", "to_rntuple"]


N001 = Rule("N001", "rntuple", "rntuple", "Convert the TTrees to RNTuple",
            trigger="a TTree sample converted to RNTuple read >= 1.05x as fast (measured)",
            prediction="the conversion test's measured speed-up on a sample, applied through the "
                       "rate model",
            measure="time the analysis once with the change applied",
            check=lambda ctx, found: rntuple_rule(ctx))

RULES = (N001,)
