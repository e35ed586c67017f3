"""The datasets of ``bench_advice_true.py``: five written by ROOT and one by uproot, each unlike
the demo (ROOT ESD-like, 205 branches, 64 files of about 1 MB, read with uproot) and unlike each
other in branch count, file size, codec, branch kinds and cluster layout.  Written once into
``/tmp/validate/data`` (a dataset whose directory holds all its files is kept).  The uproot-written
one (``upw``) was added after the model had been worked on the five for several rounds: data
it was not tuned on."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from testbench.rootwriter import Layout, write_mixed_root

DATA = Path("/tmp/validate/data")
#: The plain analysis the benchmarks time, a program run by path (``python ANALYSIS FILES.json``).
ANALYSIS = Path(__file__).with_name("advice_true_analysis.py")


def _coll(name: str, mean: float, n: int, *, prefix: str, kinds: str
          ) -> tuple[str, float, tuple[tuple[str, str], ...]]:
    """A jagged collection for :class:`Layout`: ``n`` fields ``<prefix>0..`` whose leaf codes
    cycle through ``kinds``, ``mean`` entries an event."""
    return (name, mean, tuple((f"{prefix}{j}", kinds[j % len(kinds)]) for j in range(n)))


def _nano() -> Layout:
    """NanoAOD-like: many small branches of mixed types, HLT flags, jagged collections with
    counters (``nJet``, ``Jet_pt[nJet]``), ROOT's default AutoFlush."""
    scalars: list[tuple[str, str]] = [("run", "i"), ("luminosityBlock", "i"), ("event", "l")]
    scalars += [(f"MET_v{k}", "F") for k in range(12)] + [(f"PV_v{k}", "F") for k in range(10)]
    scalars += [(f"PV_n{k}", "I") for k in range(8)] + [(f"Pileup_v{k}", "F") for k in range(6)]
    scalars += [(f"L1_bit{k}", "O") for k in range(120)] + [(f"HLT_path{k}", "O")
                                                            for k in range(200)]
    scalars += [(f"Flag_f{k}", "O") for k in range(25)] + [(f"qual{k}", "b") for k in range(6)]
    kinds = "FFFFFIbF"

    coll = partial(_coll, prefix="v", kinds=kinds)

    colls = (coll("Jet", 6.0, 24), coll("Muon", 1.5, 28), coll("Electron", 1.5, 28),
             coll("Photon", 1.2, 18), coll("Tau", 0.8, 18), coll("FatJet", 0.7, 18),
             coll("GenPart", 25.0, 8), coll("GenJet", 6.0, 6), coll("TrigObj", 8.0, 10),
             coll("SV", 2.0, 12), coll("IsoTrack", 1.0, 10), coll("SubJet", 1.4, 10))
    return Layout(scalars=tuple(scalars), collections=colls)


def _split() -> Layout:
    """Split objects (a class with members and a vector of items, splitlevel 99) only."""
    return Layout(objects=(("evt", 20, 10, 0), ("trk", 5, 2, 12), ("jet", 8, 4, 15),
                           ("hit", 2, 2, 20)), auto_flush=5000)


def _wide() -> Layout:
    """1,200 flat scalars (float, double, int), small baskets, 2 MB clusters."""
    kinds = "FFFDI"
    return Layout(scalars=tuple((f"x{k}", kinds[k % 5]) for k in range(1200)),
                  auto_flush=-2_000_000, basket_size=8000)


def _tiny() -> Layout:
    """70 scalars and one 29-field collection: 100 branches, for tiny files."""
    return Layout(scalars=tuple((f"e{k}", "FI"[k % 2]) for k in range(70)),
                  collections=(("Hit", 5.0, tuple((f"h{j}", "FFI"[j % 3])
                                                  for j in range(29))),))


def _vectors() -> Layout:
    """250 scalars and 50 ``std::vector<float>`` branches (not split), clusters of 2,000
    entries, 16 KB baskets."""
    return Layout(scalars=tuple((f"s{k}", "FFI"[k % 3]) for k in range(250)),
                  vectors=tuple(f"vec{k}" for k in range(50)), auto_flush=2000,
                  basket_size=16000)


def _fatjets() -> Layout:
    """Held out (stop 32): a CMS-like mix of doubles, shorts and three wide collections, large
    baskets (64 KB), AutoFlush 10,000 entries."""
    scalars = tuple((f"evt_d{k}", "DDFS"[k % 4]) for k in range(40))

    coll = partial(_coll, prefix="v", kinds="FFDI")

    return Layout(scalars=scalars, collections=(coll("FatJet", 2.5, 60), coll("PF", 12.0, 16),
                                                coll("Lep", 1.2, 40)),
                  auto_flush=10_000, basket_size=64_000)


def _jagged57() -> Layout:
    """Held out (issue 57): three wide jagged collections and a few scalars, 16 KB baskets,
    AutoFlush 4,000 entries."""
    coll = partial(_coll, prefix="q", kinds="FFDIF")

    return Layout(scalars=tuple((f"ev{k}", "IDF"[k % 3]) for k in range(12)),
                  collections=(coll("Trk", 9.0, 20), coll("Clu", 4.0, 20), coll("Seg", 2.5, 16)),
                  auto_flush=4000, basket_size=16_000)


def _vecs57() -> Layout:
    """Held out (issue 57): 80 scalars and 30 ``std::vector<float>`` branches, 5 MB clusters."""
    return Layout(scalars=tuple((f"t{k}", "FDI"[k % 3]) for k in range(80)),
                  vectors=tuple(f"w{k}" for k in range(30)), auto_flush=-5_000_000)


def _big57() -> Layout:
    """Held out (issue 57): one large file of 40 scalars, ROOT's default AutoFlush."""
    return Layout(scalars=tuple((f"b{k}", "FFFDI"[k % 5]) for k in range(40)))


def _jets58() -> Layout:
    """Held out (issue 58): a NanoAOD-like schema unlike ``nano``: 30 float scalars, 150
    trigger flags and four jagged collections (one of 40 candidates an event), 32 KB baskets,
    AutoFlush 2,500 entries."""
    coll = partial(_coll, prefix="f", kinds="FFFIb")

    return Layout(scalars=(*((f"s{k}", "F") for k in range(30)),
                           *((f"HLT_p{k}", "O") for k in range(150))),
                  collections=(coll("Jet", 5.0, 15), coll("Muon", 2.0, 10),
                               coll("Ele", 2.0, 10), coll("PFCand", 40.0, 6)),
                  auto_flush=2500, basket_size=32_000)


def _objs58() -> Layout:
    """Held out (issue 58): split objects and ten ``std::vector<float>`` branches, 64 KB
    baskets, AutoFlush 20,000 entries."""
    return Layout(objects=(("mu", 12, 4, 8), ("vtx", 6, 3, 0)),
                  vectors=tuple(f"v{k}" for k in range(10)),
                  auto_flush=20_000, basket_size=64_000)


def _big58() -> Layout:
    """Held out (issue 58): one large file of 60 scalars, ROOT's default AutoFlush."""
    return Layout(scalars=tuple((f"c{k}", "FFDII"[k % 5]) for k in range(60)))


def _nano59() -> Layout:
    """Held out (issue 58, second set): 60 scalars, 300 flags, a jet collection and a heavy
    track collection (60 an event), 16 KB baskets, ROOT's default AutoFlush."""
    coll = partial(_coll, prefix="p", kinds="FIFF")

    return Layout(scalars=(*((f"m{k}", "FI"[k % 2]) for k in range(60)),
                           *((f"flag{k}", "O") for k in range(300))),
                  collections=(coll("Jet", 8.0, 10), coll("Track", 60.0, 8)),
                  basket_size=16_000)


def _objs59() -> Layout:
    """Held out (issue 58, second set): split objects and twenty ``std::vector<float>``, 8 KB
    baskets, AutoFlush 1,000 entries."""
    return Layout(objects=(("trk", 8, 2, 10), ("cal", 15, 5, 0)),
                  vectors=tuple(f"u{k}" for k in range(20)),
                  auto_flush=1000, basket_size=8000)


def _huge59() -> Layout:
    """Held out (issue 58, second set): one very large file of 100 scalars."""
    return Layout(scalars=tuple((f"h{k}", "FDIFF"[k % 5]) for k in range(100)))


def _tiny59() -> Layout:
    """Held out (issue 58, second set): 120 float scalars and a 6-field hit collection."""
    return Layout(scalars=tuple((f"t{k}", "F") for k in range(120)),
                  collections=(("Hit", 3.0, tuple((f"q{j}", "FFI"[j % 3]) for j in range(6))),))


def _flat60() -> Layout:
    """Held out (issue 58, third set): 250 scalars (float, double, int, short), 24 KB
    baskets, AutoFlush 6,000 entries."""
    return Layout(scalars=tuple((f"z{k}", "FDIS"[k % 4]) for k in range(250)),
                  auto_flush=6000, basket_size=24_000)


def _coll60() -> Layout:
    """Held out (issue 58, third set): collections only (a 100-candidate one), 5 scalars,
    48 KB baskets, AutoFlush 500 entries."""
    coll = partial(_coll, prefix="w", kinds="FFIF")

    return Layout(scalars=tuple((f"g{k}", "F") for k in range(5)),
                  collections=(coll("Ele", 3.0, 20), coll("Pho", 2.0, 12),
                               coll("PF", 100.0, 4)),
                  auto_flush=500, basket_size=48_000)


def _mixed61() -> Layout:
    """Held out (issue 58, fourth set): 90 scalars, 15 ``std::vector<float>`` and a
    12-field collection, 40 KB baskets, AutoFlush 3,000 entries."""
    return Layout(scalars=tuple((f"r{k}", "DFI"[k % 3]) for k in range(90)),
                  vectors=tuple(f"s{k}" for k in range(15)),
                  collections=(("Cand", 6.0, tuple((f"c{j}", "FIF"[j % 3]) for j in range(12))),),
                  auto_flush=3000, basket_size=40_000)


def _nano62() -> Layout:
    """Held out (issue 58, fifth set): 60 scalars (float, int, double, short), 8
    ``std::vector<float>``, a jet and a muon collection, 20 KB baskets, AutoFlush 1,000."""
    coll = partial(_coll, prefix="k", kinds="FIFD")

    return Layout(scalars=tuple((f"a{k}", "FIDS"[k % 4]) for k in range(60)),
                  vectors=tuple(f"v{k}" for k in range(8)),
                  collections=(coll("Jet", 5.0, 10), coll("Mu", 2.0, 8)),
                  auto_flush=1000, basket_size=20_000)


def _giga62() -> Layout:
    """Held out (issue 58, fifth set): one file of about 1.2 GB, 120 scalars, ROOT's default
    AutoFlush."""
    return Layout(scalars=tuple((f"g{k}", "FDIFI"[k % 5]) for k in range(120)))


def _small62() -> Layout:
    """Held out (issue 58, fifth set): 30 scalars and a 6-field hit collection, 8 KB
    baskets."""
    return Layout(scalars=tuple((f"b{k}", "FD"[k % 2]) for k in range(30)),
                  collections=(("Hit", 4.0, tuple((f"h{j}", "FFI"[j % 3]) for j in range(6))),),
                  basket_size=8000)


def _objs63() -> Layout:
    """Held out (issue 58, sixth set): split objects (a hit and a cluster class) and six
    ``std::vector<float>``, 16 KB baskets, AutoFlush 2,500 entries."""
    return Layout(objects=(("hit", 12, 3, 4), ("clu", 6, 2, 0)),
                  vectors=tuple(f"w{k}" for k in range(6)),
                  auto_flush=2500, basket_size=16_000)


def _lzma63() -> Layout:
    """Held out (issue 58, sixth set): one file of 50 scalars, ROOT's default AutoFlush."""
    return Layout(scalars=tuple((f"x{k}", "FDFIS"[k % 5]) for k in range(50)))


def _root64() -> Layout:
    """Held out (issue 57, seventh set, ROOT programs): 40 scalars and 4
    ``std::vector<float>``, 32 KB baskets."""
    return Layout(scalars=tuple((f"s{k}", "FDI"[k % 3]) for k in range(40)),
                  vectors=tuple(f"v{k}" for k in range(4)), basket_size=32_000)


def _big65() -> Layout:
    """Held out (eighth set): 80 scalars (float, double, int, short), 64 KB baskets, 10 MB
    clusters, in files of about 200 MB."""
    return Layout(scalars=tuple((f"m{k}", "FDIS"[k % 4]) for k in range(80)),
                  auto_flush=-10_000_000, basket_size=64_000)


def _tiny65() -> Layout:
    """Held out (eighth set): 40 scalars (short, float, double, char) and two collections (a
    20-an-event track collection of 8 fields, a 3-an-event vertex one of 5), 4 KB baskets."""
    coll = partial(_coll, prefix="t", kinds="FFIF")

    return Layout(scalars=tuple((f"z{k}", "SFDb"[k % 4]) for k in range(40)),
                  collections=(coll("Trk", 20.0, 8), coll("Vtx", 3.0, 5)), basket_size=4000)


def _vec65() -> Layout:
    """Held out (eighth set): 60 doubles and ints and 20 ``std::vector<float>`` branches,
    24 KB baskets, AutoFlush 4,000 entries."""
    return Layout(scalars=tuple((f"q{k}", "DI"[k % 2]) for k in range(60)),
                  vectors=tuple(f"u{k}" for k in range(20)), auto_flush=4000,
                  basket_size=24_000)


def _nano65() -> Layout:
    """Held out (eighth set): a NanoAOD-like schema unlike the others: 40 scalars, 250
    trigger flags, five collections (a 30-an-event PF candidate one), ROOT's default
    AutoFlush and baskets."""
    coll = partial(_coll, prefix="w", kinds="FIFbF")

    return Layout(scalars=(*((f"ev{k}", "FIDl"[k % 4]) for k in range(40)),
                           *((f"HLT_t{k}", "O") for k in range(250))),
                  collections=(coll("Jet", 5.5, 20), coll("Muon", 1.8, 16),
                               coll("Electron", 1.2, 16), coll("Tau", 0.6, 12),
                               coll("PFCand", 30.0, 5)))


def _flat66() -> Layout:
    """Held out (ninth set, GetEntry programs): 120 scalars (float, int, long, double), 16 KB
    baskets, AutoFlush 2,000 entries."""
    return Layout(scalars=tuple((f"p{k}", "FILD"[k % 4]) for k in range(120)),
                  auto_flush=2000, basket_size=16_000)


def _coll66() -> Layout:
    """Held out (ninth set, GetEntry programs): 30 scalars and two collections (12 and 4 an
    event), 48 KB baskets, ROOT's default AutoFlush."""
    coll = partial(_coll, prefix="y", kinds="FDFI")

    return Layout(scalars=tuple((f"h{k}", "FIS"[k % 3]) for k in range(30)),
                  collections=(coll("Cl", 12.0, 10), coll("Mu", 4.0, 8)), basket_size=48_000)


def _mid67() -> Layout:
    """Held out (tenth set): 60 scalars (double, float, long, int) and three
    ``std::vector<float>``, 24 KB baskets, AutoFlush 20,000 entries, files of about 60 MB."""
    return Layout(scalars=tuple((f"r{k}", "DFlI"[k % 4]) for k in range(60)),
                  vectors=tuple(f"w{k}" for k in range(3)), auto_flush=20_000,
                  basket_size=24_000)


def _small67() -> Layout:
    """Held out (tenth set): 25 scalars (int, float, short) and a 10-an-event cluster
    collection of 6 fields, 6 KB baskets."""
    coll = partial(_coll, prefix="c", kinds="FIF")

    return Layout(scalars=tuple((f"e{k}", "IFS"[k % 3]) for k in range(25)),
                  collections=(coll("Hit", 10.0, 6),), basket_size=6000)


def _jag67() -> Layout:
    """Held out (tenth set): collections only (40, 8 and 2 an event), 64 KB baskets,
    AutoFlush 1,500 entries."""
    coll = partial(_coll, prefix="k", kinds="FDIF")

    return Layout(collections=(coll("Trk", 40.0, 9), coll("Clu", 8.0, 12),
                               coll("Lep", 2.0, 14)), auto_flush=1500, basket_size=64_000)


def _ge68() -> Layout:
    """Held out (eleventh set, GetEntry programs): 50 scalars (int, float, double) and two
    collections (15 and 3 an event), 40 KB baskets."""
    coll = partial(_coll, prefix="g", kinds="FIDF")

    return Layout(scalars=tuple((f"a{k}", "IFD"[k % 3]) for k in range(50)),
                  collections=(coll("Pf", 15.0, 6), coll("Ph", 3.0, 9)), basket_size=40_000)


def _lz69() -> Layout:
    """Held out (twelfth set, GetEntry programs): 90 scalars (float, double, int, short), 20 KB
    baskets, AutoFlush 5,000 entries."""
    return Layout(scalars=tuple((f"v{k}", "FDIS"[k % 4]) for k in range(90)),
                  auto_flush=5000, basket_size=20_000)


def _root70() -> Layout:
    """Held out (thirteenth set): 70 scalars (float, int, double, char), two
    ``std::vector<float>`` and a 7-an-event collection of 5 fields, 12 KB baskets, AutoFlush
    3,500 entries."""
    coll = partial(_coll, prefix="p", kinds="FIFD")

    return Layout(scalars=tuple((f"o{k}", "FIDb"[k % 4]) for k in range(70)),
                  vectors=("vA", "vB"), collections=(coll("Cal", 7.0, 5),),
                  auto_flush=3500, basket_size=12_000)


def _few70() -> Layout:
    """Held out (thirteenth set): 50 scalars (double, float, short), 10 KB baskets, in
    small files."""
    return Layout(scalars=tuple((f"n{k}", "DFS"[k % 3]) for k in range(50)),
                  basket_size=10_000)


def _big70() -> Layout:
    """Held out (thirteenth set): one large file of 45 scalars (float, long, double), 48 KB
    baskets, ROOT's default AutoFlush."""
    return Layout(scalars=tuple((f"g{k}", "FlD"[k % 3]) for k in range(45)),
                  basket_size=48_000)


def _ge70() -> Layout:
    """Held out (thirteenth set, GetEntry programs): 110 scalars (float, double, int, short),
    14 KB baskets, AutoFlush 4,000 entries."""
    return Layout(scalars=tuple((f"k{k}", "FDIS"[k % 4]) for k in range(110)),
                  auto_flush=4000, basket_size=14_000)


def _root71() -> Layout:
    """Held out (fourteenth set): 90 scalars (int, float, double) and four
    ``std::vector<float>``, 28 KB baskets, AutoFlush 6,000 entries."""
    return Layout(scalars=tuple((f"t{k}", "IFD"[k % 3]) for k in range(90)),
                  vectors=tuple(f"x{k}" for k in range(4)), auto_flush=6000,
                  basket_size=28_000)


def _coll71() -> Layout:
    """Held out (fourteenth set): 20 scalars and two collections (25 and 5 an event), 36 KB
    baskets, AutoFlush 2,500 entries."""
    coll = partial(_coll, prefix="q", kinds="FFID")

    return Layout(scalars=tuple((f"u{k}", "FIS"[k % 3]) for k in range(20)),
                  collections=(coll("Pfc", 25.0, 7), coll("Vx", 5.0, 4)), auto_flush=2500,
                  basket_size=36_000)


def _root72() -> Layout:
    """Held out (fifteenth set): 60 scalars (short, double, float, int), three
    ``std::vector<float>`` and a 9-an-event collection of 6 fields, 18 KB baskets, AutoFlush
    4,500 entries."""
    coll = partial(_coll, prefix="w", kinds="FDFI")

    return Layout(scalars=tuple((f"r{k}", "SDFI"[k % 4]) for k in range(60)),
                  vectors=("yA", "yB", "yC"), collections=(coll("Clu", 9.0, 6),),
                  auto_flush=4500, basket_size=18_000)


def _mid72() -> Layout:
    """Held out (fifteenth set): two larger files of 30 scalars (double, double, float, long),
    64 KB baskets, ROOT's default AutoFlush."""
    return Layout(scalars=tuple((f"m{k}", "DDFl"[k % 4]) for k in range(30)),
                  basket_size=64_000)


def _few73() -> Layout:
    """Held out (sixteenth set): 40 scalars (float, int, double) and a 4-an-event collection of
    3 fields, 8 KB baskets, in small files."""
    coll = partial(_coll, prefix="z", kinds="FI")

    return Layout(scalars=tuple((f"e{k}", "FID"[k % 3]) for k in range(40)),
                  collections=(coll("Mu", 4.0, 3),), basket_size=8000)


def _root73() -> Layout:
    """Held out (sixteenth set): 80 scalars (double, float, short, float) and two
    ``std::vector<float>``, 40 KB baskets, AutoFlush 8,000 entries."""
    return Layout(scalars=tuple((f"h{k}", "DFSF"[k % 4]) for k in range(80)),
                  vectors=("wA", "wB"), auto_flush=8000, basket_size=40_000)


def _root74() -> Layout:
    """Held out (seventeenth set): 50 scalars (float, long, double, float), one
    ``std::vector<float>`` and a 6-an-event collection of 5 fields, 24 KB baskets, AutoFlush
    6,000 entries."""
    coll = partial(_coll, prefix="k", kinds="FIFD")

    return Layout(scalars=tuple((f"s{k}", "FlDF"[k % 4]) for k in range(50)),
                  vectors=("vA",), collections=(coll("Trk", 6.0, 5),), auto_flush=6000,
                  basket_size=24_000)


def _many74() -> Layout:
    """Held out (seventeenth set): 30 scalars (int, float, double), 12 KB baskets."""
    return Layout(scalars=tuple((f"c{k}", "IFD"[k % 3]) for k in range(30)),
                  basket_size=12_000)


def _root75() -> Layout:
    """Held out (eighteenth set): 120 scalars (short, double, int) and two
    ``std::vector<float>``, 64 KB baskets, AutoFlush 20,000 entries."""
    return Layout(scalars=tuple((f"q{k}", "SDI"[k % 3]) for k in range(120)),
                  vectors=("uA", "uB"), auto_flush=20_000, basket_size=64_000)


def _few75() -> Layout:
    """Held out (eighteenth set): 20 scalars (float, int) and a 3-an-event collection of 4
    fields, 8 KB baskets."""
    coll = partial(_coll, prefix="m", kinds="FFI")
    return Layout(scalars=tuple((f"e{k}", "FI"[k % 2]) for k in range(20)),
                  collections=(coll("Hit", 3.0, 4),), basket_size=8000)


def _root76() -> Layout:
    """Held out (nineteenth set): 40 scalars (double, int, long), a 10-an-event collection of 5
    fields and a 2-an-event one of 3, 20 KB baskets, AutoFlush 3,000 entries."""
    coll = partial(_coll, prefix="w", kinds="FDI")
    return Layout(scalars=tuple((f"s{k}", "DIl"[k % 3]) for k in range(40)),
                  collections=(coll("Cand", 10.0, 5), coll("Lep", 2.0, 3)), auto_flush=3000,
                  basket_size=20_000)


def _big76() -> Layout:
    """Held out (nineteenth set): one large file of 60 scalars (float, double), 128 KB
    baskets, ROOT's default AutoFlush."""
    return Layout(scalars=tuple((f"b{k}", "FD"[k % 2]) for k in range(60)),
                  basket_size=128_000)


def _root77() -> Layout:
    """Held out (twentieth set): 70 scalars (short, float) and three ``std::vector<float>``,
    32 KB baskets, AutoFlush 10,000 entries."""
    return Layout(scalars=tuple((f"r{k}", "SF"[k % 2]) for k in range(70)),
                  vectors=("vA", "vB", "vC"), auto_flush=10_000, basket_size=32_000)


def _many77() -> Layout:
    """Held out (twentieth set): 25 scalars (int, double), 16 KB baskets, in small files."""
    return Layout(scalars=tuple((f"n{k}", "ID"[k % 2]) for k in range(25)),
                  basket_size=16_000)


@dataclass(frozen=True)
class Dataset:
    name: str
    layout: Layout
    files: int
    entries: int
    compression: int  # ROOT's setting: algorithm * 100 + level
    what: str
    writer: str = "root"  # or "uproot" (:func:`_write_uproot`; ``layout`` unused), "rdf"
    #: "uproot-flat" and "rdf" writers: the float, double and int columns, and the entries per
    #: ``extend`` (uproot: a basket per branch each)
    columns: tuple[int, int, int] = (0, 0, 0)
    chunk: int = 0

    @property
    def path(self) -> Path:
        return DATA / self.name


DATASETS: dict[str, Dataset] = {d.name: d for d in (
    Dataset("nano", _nano(), 10, 1500, 209,
            "NanoAOD-like mix, LZMA-9, ROOT's default AutoFlush"),
    Dataset("split", _split(), 3, 25_000, 106, "split objects (splitlevel 99), ZLIB-6, "
            "AutoFlush 5,000 entries"),
    Dataset("wide", _wide(), 2, 5000, 404, "1,200 flat scalars, LZ4-4, 8 KB baskets, 2 MB "
            "clusters"),
    Dataset("tiny", _tiny(), 120, 500, 505, "tiny files: 100 branches, ZSTD-5"),
    Dataset("vectors", _vectors(), 1, 30_000, 101, "one file: scalars and std::vector<float>, "
            "ZLIB-1, AutoFlush 2,000 entries, 16 KB baskets"),
    Dataset("upw", Layout(), 6, 20_000, 104, "written by uproot: 173 branches (float, double, "
            "int, a jagged collection), ZLIB-4, a basket per branch per 2,500 entries",
            writer="uproot"),
    # held out: written in stop 32 after this stop's model changes, never worked on
    Dataset("fatjets", _fatjets(), 8, 12_000, 501, "held out: 159 branches (doubles, shorts, "
            "three wide collections), ZSTD-1, 64 KB baskets, AutoFlush 10,000 entries"),
    Dataset("upl", Layout(), 3, 50_000, 404, "held out, written by uproot: LZ4-4, 173 "
            "branches, a basket per branch per 2,500 entries, 3 larger files", writer="uproot"),
    # held out for issue 57 (the default reader): written after that change was frozen, never
    # worked on; unlike the eight above in writer, branch count, size, layout and codec
    Dataset("h57snap", Layout(), 12, 40_000, 505, "held out (issue 57), written by "
            "RDataFrame::Snapshot: 52 columns, ZSTD-5", writer="rdf", columns=(40, 8, 4)),
    Dataset("h57wide", Layout(), 2, 12_000, 101, "held out (issue 57), written by uproot: "
            "2,000 float branches, ZLIB-1, a basket per branch per 3,000 entries",
            writer="uproot-flat", columns=(2000, 0, 0), chunk=3000),
    Dataset("h57big", _big57(), 1, 1_200_000, 401, "held out (issue 57): one 150 MB file, 40 "
            "scalars, LZ4-1, ROOT's default AutoFlush"),
    Dataset("h57tiny", Layout(), 300, 400, 206, "held out (issue 57), written by uproot: 300 "
            "files of 400 entries, 40 branches, LZMA-6", writer="uproot-flat",
            columns=(30, 6, 4), chunk=400),
    Dataset("h57jag", _jagged57(), 6, 8000, 109, "held out (issue 57): three jagged "
            "collections (59 branches), ZLIB-9, 16 KB baskets, AutoFlush 4,000 entries"),
    Dataset("h57vecs", _vecs57(), 4, 15_000, 509, "held out (issue 57): 80 scalars and 30 "
            "std::vector<float>, ZSTD-9, 5 MB clusters"),
    # held out for issue 58 (one engine): written after the engine was frozen, before any of
    # its results were seen; unlike all of the above in writer, branch count, size, layout
    # and codec
    Dataset("h58snap", Layout(), 5, 60_000, 404, "held out (issue 58), written by "
            "RDataFrame::Snapshot: 80 columns, LZ4-4", writer="rdf", columns=(30, 30, 20)),
    Dataset("h58k2", Layout(), 1, 6000, 503, "held out (issue 58), written by uproot: one "
            "file of 2,000 branches (float, double, int), ZSTD-3, a basket per branch per "
            "1,500 entries", writer="uproot-flat", columns=(1200, 500, 300), chunk=1500),
    Dataset("h58big", _big58(), 1, 2_400_000, 106, "held out (issue 58): one large file, 60 "
            "scalars, ZLIB-6, ROOT's default AutoFlush"),
    Dataset("h58jets", _jets58(), 6, 5000, 507, "held out (issue 58): NanoAOD-like, 150 flags "
            "and four jagged collections, ZSTD-7, 32 KB baskets, AutoFlush 2,500 entries"),
    Dataset("h58many", Layout(), 150, 1500, 106, "held out (issue 58), written by uproot: 150 "
            "files of 1,500 entries, 60 branches, ZLIB-6, a basket per branch per 300 "
            "entries", writer="uproot-flat", columns=(40, 10, 10), chunk=300),
    Dataset("h58objs", _objs58(), 3, 50_000, 201, "held out (issue 58): split objects and "
            "ten std::vector<float>, LZMA-1, 64 KB baskets, AutoFlush 20,000 entries"),
    # the second set for issue 58: written after the engine's one-worker time was fixed on the
    # first set's evidence, before any of these was run
    Dataset("h59rdf", Layout(), 20, 20_000, 101, "held out (issue 58, second set), written "
            "by RDataFrame::Snapshot: 20 files of 20 columns, ZLIB-1", writer="rdf",
            columns=(10, 5, 5)),
    Dataset("h59u900", Layout(), 3, 4000, 203, "held out (issue 58, second set), written by "
            "uproot: 900 branches, LZMA-3, a basket per branch per 1,000 entries",
            writer="uproot-flat", columns=(600, 200, 100), chunk=1000),
    Dataset("h59huge", _huge59(), 1, 2_500_000, 409, "held out (issue 58, second set): one "
            "large file, 100 scalars, LZ4-9, ROOT's default AutoFlush"),
    Dataset("h59nano", _nano59(), 4, 8000, 104, "held out (issue 58, second set): "
            "NanoAOD-like, 300 flags, jets and 60 tracks an event, ZLIB-4, 16 KB baskets"),
    Dataset("h59objs", _objs59(), 8, 6000, 204, "held out (issue 58, second set): split "
            "objects and 20 std::vector<float>, LZMA-4, 8 KB baskets, AutoFlush 1,000 "
            "entries"),
    Dataset("h59tiny", _tiny59(), 200, 300, 101, "held out (issue 58, second set): 200 tiny "
            "ROOT files, 127 branches, ZLIB-1"),
    # the third set for issue 58: written after the fixes the second set showed (one
    # process's time on a rate limiter; T001 from the program's reader), before any of it ran
    Dataset("h60flat", _flat60(), 3, 30_000, 504, "held out (issue 58, third set): 250 "
            "scalars, ZSTD-4, 24 KB baskets, AutoFlush 6,000 entries"),
    Dataset("h60uj", Layout(), 10, 3000, 401, "held out (issue 58, third set), written by "
            "uproot: 400 branches (float, int), LZ4-1, a basket per branch per 750 entries",
            writer="uproot-flat", columns=(300, 0, 100), chunk=750),
    Dataset("h60rdfz", Layout(), 4, 150_000, 501, "held out (issue 58, third set), written "
            "by RDataFrame::Snapshot: 10 columns, 150,000 entries a file, ZSTD-1",
            writer="rdf", columns=(6, 2, 2)),
    Dataset("h60coll", _coll60(), 5, 4000, 207, "held out (issue 58, third set): "
            "collections only (100 candidates an event), LZMA-7, 48 KB baskets, AutoFlush "
            "500 entries"),
    # the fourth set for issue 58: after the third set's fixes (the paced replay's excess on
    # the device; W001 past the cores only where measured), before any of it ran
    Dataset("h61mix", _mixed61(), 7, 12_000, 102, "held out (issue 58, fourth set): scalars, "
            "vectors and a collection, ZLIB-2, 40 KB baskets, AutoFlush 3,000 entries"),
    Dataset("h61u", Layout(), 5, 9000, 506, "held out (issue 58, fourth set), written by "
            "uproot: 150 branches (double, int), ZSTD-6, a basket per branch per 3,000 entries",
            writer="uproot-flat", columns=(0, 100, 50), chunk=3000),
    Dataset("h61rdf", Layout(), 8, 80_000, 403, "held out (issue 58, fourth set), written by "
            "RDataFrame::Snapshot: 36 columns, LZ4-3", writer="rdf", columns=(20, 10, 6)),
    # the fifth set for issue 58 (and 57: ROOT programs too): after the whole-run parallel
    # efficiency, RDataFrame's compilation paid once per run and the calibration's RDataFrame
    # of Histo1D, before any of it ran
    Dataset("h62rdf", Layout(), 6, 100_000, 104, "held out (issue 58, fifth set), written by "
            "RDataFrame::Snapshot: 24 columns, ZLIB-4", writer="rdf", columns=(12, 8, 4)),
    Dataset("h62uz", Layout(), 12, 5000, 202, "held out (issue 58, fifth set), written by "
            "uproot: 250 branches (float, double, int), LZMA-2, a basket per branch per 1,500 "
            "entries", writer="uproot-flat", columns=(150, 50, 50), chunk=1500),
    Dataset("h62nano", _nano62(), 16, 4000, 507, "held out (issue 58, fifth set): 60 "
            "scalars, 8 vectors, jets and muons, ZSTD-7, 20 KB baskets, AutoFlush 1,000"),
    Dataset("h62small", _small62(), 80, 1000, 109, "held out (issue 58, fifth set): 80 small "
            "files, 30 scalars and a hit collection, ZLIB-9, 8 KB baskets"),
    Dataset("h62giga", _giga62(), 1, 3_200_000, 401, "held out (issue 58, fifth set): one "
            "file of about 1.2 GB, 120 scalars, LZ4-1, ROOT's default AutoFlush"),
    # the sixth set for issue 58: after the engine's error on held-out data entered every
    # interval (the fifth set: 19 of 20 within 20%, 12 of 20 inside), before any of it ran
    Dataset("h63snapz", Layout(), 3, 400_000, 503, "held out (issue 58, sixth set), written "
            "by RDataFrame::Snapshot: 8 columns, 400,000 entries a file, ZSTD-3", writer="rdf",
            columns=(4, 2, 2)),
    Dataset("h63ul", Layout(), 4, 6000, 406, "held out (issue 58, sixth set), written by "
            "uproot: 600 branches (float, double, int), LZ4-6, a basket per branch per 2,000 "
            "entries", writer="uproot-flat", columns=(400, 100, 100), chunk=2000),
    Dataset("h63objs", _objs63(), 10, 5000, 103, "held out (issue 58, sixth set): split "
            "objects and vectors, ZLIB-3, 16 KB baskets, AutoFlush 2,500 entries"),
    Dataset("h63lzma", _lzma63(), 1, 1_500_000, 201, "held out (issue 58, sixth set): one "
            "file of 50 scalars, LZMA-1, ROOT's default AutoFlush"),
    Dataset("h63many", Layout(), 40, 3000, 101, "held out (issue 58, sixth set), written by "
            "uproot: 40 files of 173 branches with a jagged collection, ZLIB-1",
            writer="uproot"),
    # the seventh set, for the ROOT programs (issue 57): after a GetEntry loop's set-up on its
    # first file joined what a run pays once, before any of it ran
    Dataset("h64ge", Layout(), 8, 20_000, 502, "held out (issue 57, seventh set), written by "
            "uproot: 300 branches (float, double, int), ZSTD-2, a basket per branch per 5,000 "
            "entries", writer="uproot-flat", columns=(200, 50, 50), chunk=5000),
    Dataset("h64root", _root64(), 6, 50_000, 105, "held out (issue 57, seventh set): 40 "
            "scalars and 4 vectors, ZLIB-5, 32 KB baskets"),
    Dataset("h64snap", Layout(), 5, 200_000, 402, "held out (issue 57, seventh set), written "
            "by RDataFrame::Snapshot: 16 columns, LZ4-2", writer="rdf", columns=(8, 4, 4)),
    # the eighth set (issues 57 and 58): after the per-call cost from split calls, before any
    # of it ran
    Dataset("h65ulz", Layout(), 3, 4000, 505, "held out (eighth set), written by uproot: "
            "2,000 branches (float, double, int), ZSTD-5, a basket per branch per 1,000 "
            "entries", writer="uproot-flat", columns=(1400, 300, 300), chunk=1000),
    Dataset("h65snap", Layout(), 6, 300_000, 108, "held out (eighth set), written by "
            "RDataFrame::Snapshot: 30 columns, ZLIB-8", writer="rdf", columns=(20, 5, 5)),
    Dataset("h65big", _big65(), 2, 700_000, 405, "held out (eighth set): two files of about "
            "200 MB, 80 scalars, LZ4-5, 10 MB clusters"),
    Dataset("h65tiny", _tiny65(), 60, 1500, 508, "held out (eighth set): 60 small files of "
            "40 scalars and two collections, ZSTD-8, 4 KB baskets"),
    Dataset("h65vec", _vec65(), 12, 15_000, 203, "held out (eighth set): doubles, ints and "
            "vectors, LZMA-3, AutoFlush 4,000 entries"),
    Dataset("h65nano", _nano65(), 8, 5000, 204, "held out (eighth set): a NanoAOD-like "
            "schema (364 branches), LZMA-4, ROOT's default AutoFlush"),
    # the ninth set, for the GetEntry programs (issue 57): after ROOT's CPU terms were scaled
    # to the measured GetEntry loop, before any of it ran
    Dataset("h66flat", _flat66(), 20, 8000, 107, "held out (ninth set): 120 scalars, ZLIB-7, "
            "16 KB baskets, AutoFlush 2,000 entries"),
    Dataset("h66coll", _coll66(), 5, 40_000, 408, "held out (ninth set): 30 scalars and two "
            "collections, LZ4-8, 48 KB baskets"),
    Dataset("h66up", Layout(), 6, 10_000, 407, "held out (ninth set), written by uproot: 500 "
            "branches (float, double, int), LZ4-7, a basket per branch per 2,500 entries",
            writer="uproot-flat", columns=(300, 100, 100), chunk=2500),
    # the tenth set (issues 57 and 58): the same code as the eighth set's uproot path (the
    # GetEntry scaling since touches ROOT programs only), defined before any of it ran
    Dataset("h67uw", Layout(), 5, 8000, 106, "held out (tenth set), written by uproot: 900 "
            "branches (float, double, int), ZLIB-6, a basket per branch per 4,000 entries",
            writer="uproot-flat", columns=(500, 300, 100), chunk=4000),
    Dataset("h67rdf", Layout(), 4, 250_000, 201, "held out (tenth set), written by "
            "RDataFrame::Snapshot: 45 columns, LZMA-1", writer="rdf", columns=(25, 12, 8)),
    Dataset("h67mid", _mid67(), 3, 150_000, 502, "held out (tenth set): 60 scalars and 3 "
            "vectors, ZSTD-2, 24 KB baskets, AutoFlush 20,000 entries"),
    Dataset("h67small", _small67(), 40, 2000, 402, "held out (tenth set): 40 small files of "
            "25 scalars and a hit collection, LZ4-2, 6 KB baskets"),
    Dataset("h67jag", _jag67(), 6, 12_000, 103, "held out (tenth set): collections only "
            "(40, 8 and 2 an event), ZLIB-3, 64 KB baskets, AutoFlush 1,500 entries"),
    Dataset("h67upc", Layout(), 15, 6000, 109, "held out (tenth set), written by uproot: 15 "
            "files of 173 branches with a jagged collection, ZLIB-9 (defined as ZSTD-9)",
            writer="uproot"),
    # the eleventh set, for the GetEntry programs (issue 57): after a GetEntry program's
    # one-time cost was measured in a fresh process, before any of it ran
    Dataset("h68root", _ge68(), 10, 20_000, 104, "held out (eleventh set): 50 scalars and two "
            "collections, ZLIB-4, 40 KB baskets"),
    Dataset("h68up", Layout(), 4, 10_000, 202, "held out (eleventh set), written by uproot: "
            "350 branches (float, double, int), LZMA-2, a basket per branch per 2,000 entries",
            writer="uproot-flat", columns=(200, 100, 50), chunk=2000),
    Dataset("h68snap", Layout(), 5, 150_000, 504, "held out (eleventh set), written by "
            "RDataFrame::Snapshot: 24 columns, ZSTD-4", writer="rdf", columns=(12, 6, 6)),
    # the twelfth set, for the GetEntry programs (issue 57): after a GetEntry loop's time was
    # split into ROOT's own decompression and a cost per entry, before any of it ran
    Dataset("h69lz", _lz69(), 6, 25_000, 205, "held out (twelfth set): 90 scalars, LZMA-5, "
            "20 KB baskets, AutoFlush 5,000 entries"),
    Dataset("h69uz", Layout(), 5, 12_000, 109, "held out (twelfth set), written by uproot: "
            "240 branches (float, double, int), ZLIB-9, a basket per branch per 3,000 entries",
            writer="uproot-flat", columns=(120, 80, 40), chunk=3000),
    Dataset("h69rdf", Layout(), 3, 300_000, 407, "held out (twelfth set), written by "
            "RDataFrame::Snapshot: 40 columns, LZ4-7", writer="rdf", columns=(20, 12, 8)),
    # the thirteenth set (issues 57 and 58): after T001 replays the lines it prints (a
    # TTreeCache whose branches are added by hand: no learning phase), before any of it ran;
    # the first six for the plain uproot program (no --reader), the last three for GetEntry
    Dataset("h70snap", Layout(), 4, 120_000, 105, "held out (thirteenth set), written by "
            "RDataFrame::Snapshot: 60 columns, ZLIB-5", writer="rdf", columns=(30, 20, 10)),
    Dataset("h70u1k", Layout(), 3, 5000, 403, "held out (thirteenth set), written by uproot: "
            "1,100 branches (float, double, int), LZ4-3, a basket per branch per 2,500 entries",
            writer="uproot-flat", columns=(700, 250, 150), chunk=2500),
    Dataset("h70root", _root70(), 8, 10_000, 506, "held out (thirteenth set): 70 scalars, 2 "
            "vectors and a collection, ZSTD-6, 12 KB baskets, AutoFlush 3,500 entries"),
    Dataset("h70few", _few70(), 25, 1200, 208, "held out (thirteenth set): 25 small files of "
            "50 scalars, LZMA-8, 10 KB baskets"),
    Dataset("h70big", _big70(), 1, 900_000, 102, "held out (thirteenth set): one file of "
            "about 100 MB, 45 scalars, ZLIB-2, 48 KB baskets"),  # (defined as "about 180")
    Dataset("h70upc", Layout(), 20, 4000, 108, "held out (thirteenth set), written by uproot: "
            "20 files of 173 branches with a jagged collection, ZLIB-8", writer="uproot"),
    Dataset("h70gez", _ge70(), 6, 20_000, 503, "held out (thirteenth set): 110 scalars, "
            "ZSTD-3, 14 KB baskets, AutoFlush 4,000 entries"),
    Dataset("h70geu", Layout(), 5, 9000, 402, "held out (thirteenth set), written by uproot: "
            "420 branches (float, double, int), LZ4-2, a basket per branch per 1,800 entries",
            writer="uproot-flat", columns=(250, 120, 50), chunk=1800),
    Dataset("h70gsnap", Layout(), 4, 200_000, 202, "held out (thirteenth set), written by "
            "RDataFrame::Snapshot: 28 columns, LZMA-2", writer="rdf", columns=(14, 8, 6)),
    # the fourteenth set (issues 57 and 58): after a merge's replay holds today's data (its
    # last, short group of inputs replayed too), before any of it ran; the plain uproot program
    Dataset("h71snap", Layout(), 6, 90_000, 508, "held out (fourteenth set), written by "
            "RDataFrame::Snapshot: 35 columns, ZSTD-8", writer="rdf", columns=(20, 10, 5)),
    Dataset("h71u650", Layout(), 4, 6000, 103, "held out (fourteenth set), written by uproot: "
            "650 branches (float, double, int), ZLIB-3, a basket per branch per 1,200 entries",
            writer="uproot-flat", columns=(400, 150, 100), chunk=1200),
    Dataset("h71root", _root71(), 5, 30_000, 405, "held out (fourteenth set): 90 scalars and "
            "4 vectors, LZ4-5, 28 KB baskets, AutoFlush 6,000 entries"),
    Dataset("h71many", Layout(), 60, 800, 504, "held out (fourteenth set), written by uproot: "
            "60 files of 800 entries, 45 branches, ZSTD-4, a basket per branch per 400 "
            "entries", writer="uproot-flat", columns=(30, 10, 5), chunk=400),
    Dataset("h71coll", _coll71(), 7, 8000, 107, "held out (fourteenth set): 20 scalars and "
            "two collections, ZLIB-7, 36 KB baskets, AutoFlush 2,500 entries"),
    Dataset("h71ucol", Layout(), 8, 9000, 101, "held out (fourteenth set), written by uproot: "
            "8 files of 173 branches with a jagged collection, ZLIB-1 (defined as LZMA-1)",
            writer="uproot"),
    # the fifteenth set (issues 57 and 58): after the warm loop's unexplained time is charged
    # per basket for small baskets (not per MB), before any of it ran; the plain uproot program
    Dataset("h72snap", Layout(), 5, 100_000, 404, "held out (fifteenth set), written by "
            "RDataFrame::Snapshot: 50 columns, LZ4-4", writer="rdf", columns=(25, 15, 10)),
    Dataset("h72u800", Layout(), 3, 7500, 507, "held out (fifteenth set), written by uproot: "
            "800 branches (float, double, int), ZSTD-7, a basket per branch per 1,500 entries",
            writer="uproot-flat", columns=(500, 200, 100), chunk=1500),
    Dataset("h72tiny", Layout(), 45, 1000, 401, "held out (fifteenth set), written by uproot: "
            "45 files of 1,000 entries, 60 branches, LZ4-1, a basket per branch per 250 "
            "entries", writer="uproot-flat", columns=(35, 15, 10), chunk=250),
    Dataset("h72root", _root72(), 6, 25_000, 106, "held out (fifteenth set): 60 scalars, 3 "
            "vectors and a collection, ZLIB-6, 18 KB baskets, AutoFlush 4,500 entries"),
    Dataset("h72ucol", Layout(), 12, 6000, 103, "held out (fifteenth set), written by uproot: "
            "12 files of 173 branches with a jagged collection, ZLIB-3 (defined as ZSTD-3)",
            writer="uproot"),
    Dataset("h72mid", _mid72(), 2, 300_000, 206, "held out (fifteenth set): two files of 30 "
            "scalars, LZMA-6, 64 KB baskets"),
    # the sixteenth set (issues 57 and 58): after a disk's access time is taken from the
    # reader's own cold loop where the replay was slower than it, before any of it ran; the
    # plain uproot program
    Dataset("h73snap", Layout(), 4, 120_000, 502, "held out (sixteenth set), written by "
            "RDataFrame::Snapshot: 70 columns, ZSTD-2", writer="rdf", columns=(40, 20, 10)),
    Dataset("h73rdf", Layout(), 5, 200_000, 101, "held out (sixteenth set), written by "
            "RDataFrame::Snapshot: 24 columns, ZLIB-1", writer="rdf", columns=(12, 8, 4)),
    Dataset("h73u400", Layout(), 4, 8000, 203, "held out (sixteenth set), written by uproot: "
            "400 branches (float, double, int), LZMA-3, a basket per branch per 2,000 entries",
            writer="uproot-flat", columns=(250, 100, 50), chunk=2000),
    Dataset("h73few", _few73(), 30, 2000, 506, "held out (sixteenth set): 30 small files of "
            "40 scalars and a collection, ZSTD-6, 8 KB baskets"),
    Dataset("h73root", _root73(), 4, 40_000, 403, "held out (sixteenth set): 80 scalars and 2 "
            "vectors, LZ4-3, 40 KB baskets, AutoFlush 8,000 entries"),
    Dataset("h73ucol", Layout(), 10, 7000, 406, "held out (sixteenth set), written by uproot: "
            "10 files of 173 branches with a jagged collection, LZ4-6", writer="uproot"),
    # the seventeenth set (issue 58): after the access time's interval spans the request
    # sweep's figure and the reader's cold loop's, and the concurrency sweep joined the
    # self-check, before any of it ran; the plain uproot program
    Dataset("h74snap", Layout(), 3, 150_000, 201, "held out (seventeenth set), written by "
            "RDataFrame::Snapshot: 36 columns, LZMA-1", writer="rdf", columns=(20, 10, 6)),
    Dataset("h74u250", Layout(), 5, 12_000, 103, "held out (seventeenth set), written by "
            "uproot: 250 branches (float, double, int), ZLIB-3, a basket per branch per 3,000 "
            "entries", writer="uproot-flat", columns=(150, 60, 40), chunk=3000),
    Dataset("h74root", _root74(), 3, 60_000, 504, "held out (seventeenth set): 50 scalars, a "
            "vector and a collection, ZSTD-4, 24 KB baskets, AutoFlush 6,000 entries"),
    Dataset("h74ucol", Layout(), 8, 9000, 102, "held out (seventeenth set), written by uproot: "
            "8 files of 173 branches with a jagged collection, ZLIB-2", writer="uproot"),
    Dataset("h74many", _many74(), 25, 3000, 108, "held out (seventeenth set): 25 small files "
            "of 30 scalars, ZLIB-8, 12 KB baskets"),
    # added to the seventeenth set after its first five had run, the code unchanged: a sixth
    Dataset("h74w2k", Layout(), 2, 4000, 503, "held out (seventeenth set, the sixth), written "
            "by uproot: 2,000 branches (float, double, int), ZSTD-3, a basket per branch per "
            "1,000 entries", writer="uproot-flat", columns=(1200, 500, 300), chunk=1000),
    # the eighteenth set, defined with the loop's sample replayed by the self-check, before
    # either ran: every dimension unlike the seventeenth's
    Dataset("h75snap", Layout(), 2, 250_000, 404, "held out (eighteenth set), written by "
            "RDataFrame::Snapshot: 44 columns, LZ4-4", writer="rdf", columns=(12, 24, 8)),
    Dataset("h75u600", Layout(), 3, 6000, 505, "held out (eighteenth set), written by "
            "uproot: 600 branches (float, double, int), ZSTD-5, a basket per branch per 2,000 "
            "entries", writer="uproot-flat", columns=(360, 180, 60), chunk=2000),
    Dataset("h75root", _root75(), 2, 80_000, 105, "held out (eighteenth set): 120 scalars and "
            "2 vectors, ZLIB-5, 64 KB baskets, AutoFlush 20,000 entries"),
    Dataset("h75ucol", Layout(), 12, 5000, 107, "held out (eighteenth set), written by uproot: "
            "12 files of 173 branches with a jagged collection, ZLIB-7 (defined as LZMA-7)",
            writer="uproot"),
    Dataset("h75few", _few75(), 40, 1500, 401, "held out (eighteenth set): 40 small files of "
            "20 scalars and a collection, LZ4-1, 8 KB baskets"),
    # the nineteenth set, defined with the uproot writer's codecs mended and the code frozen at
    # the eighteenth set's predictions, before any of it ran: every dimension unlike the
    # eighteenth's; the plain uproot program, an entry step, RDataFrame and GetEntry with
    # ROOT's default TTreeCache
    Dataset("h76snap", Layout(), 3, 120_000, 104, "held out (nineteenth set), written by "
            "RDataFrame::Snapshot: 90 columns, ZLIB-4", writer="rdf", columns=(50, 25, 15)),
    Dataset("h76u1k5", Layout(), 2, 4000, 201, "held out (nineteenth set), written by "
            "uproot: 1,500 branches (float, double, int), LZMA-1, a basket per branch per 800 "
            "entries", writer="uproot-flat", columns=(900, 400, 200), chunk=800),
    Dataset("h76root", _root76(), 6, 25_000, 508, "held out (nineteenth set): 40 scalars and "
            "two collections, ZSTD-8, 20 KB baskets, AutoFlush 3,000 entries"),
    Dataset("h76ucol", Layout(), 5, 15_000, 204, "held out (nineteenth set), written by "
            "uproot: 5 files of 173 branches with a jagged collection, LZMA-4", writer="uproot"),
    Dataset("h76big", _big76(), 1, 1_200_000, 402, "held out (nineteenth set): one file of "
            "60 scalars, LZ4-2, 128 KB baskets"),
    # the twentieth set, defined after the nineteenth had run, the code unchanged (the
    # eighteenth set's predictions), before any of it ran: unlike the nineteenth in every
    # dimension; the plain uproot program and a GetEntry loop without a cache
    Dataset("h77snap", Layout(), 4, 100_000, 203, "held out (twentieth set), written by "
            "RDataFrame::Snapshot: 30 columns, LZMA-3", writer="rdf", columns=(16, 8, 6)),
    Dataset("h77u300", Layout(), 6, 10_000, 501, "held out (twentieth set), written by "
            "uproot: 300 branches (float, double, int), ZSTD-1, a basket per branch per 5,000 "
            "entries", writer="uproot-flat", columns=(180, 80, 40), chunk=5000),
    Dataset("h77root", _root77(), 3, 50_000, 405, "held out (twentieth set): 70 scalars and "
            "3 vectors, LZ4-5, 32 KB baskets, AutoFlush 10,000 entries"),
    Dataset("h77ucol", Layout(), 20, 3000, 506, "held out (twentieth set), written by "
            "uproot: 20 files of 173 branches with a jagged collection, ZSTD-6",
            writer="uproot"),
    Dataset("h77many", _many77(), 80, 2500, 102, "held out (twentieth set): 80 small files "
            "of 25 scalars, ZLIB-2, 16 KB baskets"),
)}

#: the uproot-written dataset's branches: flat float32, float64, int32, and one jagged
#: collection of float32 fields (uproot writes its counter ``nTrk`` and ``Trk_<field>``)
_UPW_FLOATS, _UPW_DOUBLES, _UPW_INTS, _UPW_TRK = 100, 30, 30, 12
_UPW_CHUNK = 2500  # entries per ``extend``: one basket per branch, one cluster, each


#: uproot's codec for ROOT's algorithm number (the setting's hundreds)
_CODECS = {1: "ZLIB", 2: "LZMA", 4: "LZ4", 5: "ZSTD"}


def _write_uproot(d: Dataset) -> None:
    """``d.files`` files of ``d.entries`` entries written with ``uproot.recreate`` (ZLIB, LZMA,
    LZ4 or ZSTD at ``d.compression``'s level), one ``extend`` per ``_UPW_CHUNK`` entries;
    values rounded as measured quantities are, so that they compress.  A file is renamed into
    place only when complete; one already there is kept.  (Until the nineteenth set this writer
    took every setting but 4xx as ZLIB: the datasets defined with LZMA or ZSTD before it are
    defined here with the ZLIB level they were written with.)"""
    import awkward as ak
    import numpy as np
    import uproot

    d.path.mkdir(parents=True, exist_ok=True)
    for k in range(d.files):
        final = d.path / f"part_{k:03d}.root"
        if final.exists():
            continue
        rng = np.random.default_rng(3000 + k)
        tmp = final.with_suffix(".root.part")
        codec = getattr(uproot, _CODECS[d.compression // 100])
        with uproot.recreate(tmp, compression=codec(d.compression % 100)) as f:
            for start in range(0, d.entries, _UPW_CHUNK):
                n = min(_UPW_CHUNK, d.entries - start)
                cols: dict[str, object] = {}
                for i in range(_UPW_FLOATS):
                    cols[f"f{i}"] = np.round(rng.normal(50, 20, n), 2).astype(np.float32)
                for i in range(_UPW_DOUBLES):
                    cols[f"d{i}"] = np.round(rng.exponential(30, n), 4)
                for i in range(_UPW_INTS):
                    cols[f"i{i}"] = rng.poisson(3 + i, n).astype(np.int32)
                counts = rng.poisson(4.0, n)
                total = int(counts.sum())
                cols["Trk"] = ak.zip({f"x{j}": ak.unflatten(
                    np.round(rng.normal(0, 10, total), 2).astype(np.float32), counts)
                    for j in range(_UPW_TRK)})
                if start == 0:  # a TTree (assigning a dict makes an RNTuple in uproot 5.7)
                    f.mktree("Events", {c: v.type if isinstance(v, ak.Array) else v.dtype
                                        for c, v in cols.items()})
                f["Events"].extend(cols)
        tmp.rename(final)


def _write_uproot_flat(d: Dataset) -> None:
    """``d.files`` files of ``d.columns`` flat float32, float64 and int32 branches, written with
    uproot (ZLIB, LZ4 or LZMA at ``d.compression``'s level), one ``extend`` per ``d.chunk``
    entries; values rounded so that they compress."""
    import numpy as np
    import uproot

    floats, doubles, ints = d.columns
    d.path.mkdir(parents=True, exist_ok=True)
    for k in range(d.files):
        final = d.path / f"part_{k:03d}.root"
        if final.exists():
            continue
        rng = np.random.default_rng(5700 + k)
        tmp = final.with_suffix(".root.part")
        codec = getattr(uproot, _CODECS[d.compression // 100])(d.compression % 100)
        with uproot.recreate(tmp, compression=codec) as f:
            types = {**{f"f{i}": np.float32 for i in range(floats)},
                     **{f"d{i}": np.float64 for i in range(doubles)},
                     **{f"i{i}": np.int32 for i in range(ints)}}
            tree = f.mktree("Events", types)  # a TTree (a dict assigned makes an RNTuple)
            for start in range(0, d.entries, d.chunk):
                n = min(d.chunk, d.entries - start)
                cols: dict[str, object] = {}
                for i in range(floats):
                    cols[f"f{i}"] = np.round(rng.normal(40, 15, n), 2).astype(np.float32)
                for i in range(doubles):
                    cols[f"d{i}"] = np.round(rng.exponential(20, n), 4)
                for i in range(ints):
                    cols[f"i{i}"] = rng.poisson(2 + i, n).astype(np.int32)
                tree.extend(cols)
        tmp.rename(final)


#: The RDataFrame writer (run in a child: ROOT stays out of the benchmark's process).
_RDF = """
import sys, ROOT
ROOT.gROOT.SetBatch(True)
path, files, entries, floats, doubles, ints, alg, level = sys.argv[1:9]
ROOT.gRandom.SetSeed(57)
for k in range(int(files)):
    df = ROOT.RDataFrame(int(entries))
    cols = []
    for i in range(int(floats)):
        df = df.Define(f"c{i}", "float(std::round(gRandom->Gaus(10, 3) * 100) / 100)")
        cols.append(f"c{i}")
    for i in range(int(doubles)):
        df = df.Define(f"e{i}", "std::round(gRandom->Exp(20) * 1e4) / 1e4")
        cols.append(f"e{i}")
    for i in range(int(ints)):
        df = df.Define(f"n{i}", f"int(gRandom->Poisson({2 + i}))")
        cols.append(f"n{i}")
    opts = ROOT.RDF.RSnapshotOptions()
    opts.fCompressionAlgorithm = int(alg)
    opts.fCompressionLevel = int(level)
    v = ROOT.std.vector["std::string"]()
    for c in cols:
        v.push_back(c)
    out = f"{path}/part_{k:03d}.root"
    df.Snapshot("Events", out + ".part", v, opts)
    import os
    os.rename(out + ".part", out)
"""


def _write_rdf(d: Dataset) -> None:
    """``d.files`` files written by ``RDataFrame::Snapshot`` (ROOT's own writer as analyses
    use it), ``d.columns`` float, double and int columns, at ``d.compression``."""
    import subprocess

    if d.path.exists() and len(list(d.path.glob("part_*.root"))) >= d.files:
        return
    d.path.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-c", _RDF, str(d.path), str(d.files), str(d.entries),
                    *map(str, d.columns), str(d.compression // 100), str(d.compression % 100)],
                   check=True)


def write(name: str) -> Path:
    """The dataset's directory, written first if it is not complete."""
    d = DATASETS[name]
    if d.writer == "uproot":
        _write_uproot(d)
    elif d.writer == "uproot-flat":
        _write_uproot_flat(d)
    elif d.writer == "rdf":
        _write_rdf(d)
    else:
        write_mixed_root(str(d.path), d.files, d.entries, d.layout, d.compression, tag=name)
    return d.path


def branch_count(d: Dataset) -> int:
    """The branches the dataset's tree holds, as uproot lists them."""
    if d.writer == "uproot":
        return _UPW_FLOATS + _UPW_DOUBLES + _UPW_INTS + 1 + _UPW_TRK
    if d.writer in ("uproot-flat", "rdf"):
        return sum(d.columns)
    return d.layout.n_branches


if __name__ == "__main__":
    import time

    for n in sys.argv[1:] or list(DATASETS):
        t0 = time.perf_counter()
        p = write(n)
        files = sorted(p.glob("*.root"))
        mb = sum(f.stat().st_size for f in files) / 1e6
        print(f"{n}: {branch_count(DATASETS[n])} branches, {len(files)} files, {mb:.1f} MB "
              f"({mb / len(files):.2f} MB each), {time.perf_counter() - t0:.0f} s", flush=True)
