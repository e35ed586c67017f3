"""TTrees written by ROOT itself, for benchmarks that need data unlike the demo.

:func:`write_flat_root`: flat float trees.  Each file holds one tree ``Events`` of
``branches`` float branches ``b0``, ``b1``, ...; every third branch holds small integers
(compresses well), the rest Gaussian noise.  ROOT runs in a child process, so a benchmark's own
process never loads it.

:func:`write_mixed_root`: a :class:`Layout` of typed scalars, NanoAOD-style jagged collections
with counters, ``std::vector<float>`` branches and split objects (a class declared here,
written with splitlevel 99), with any compression, AutoFlush and basket size.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass

#: (directory, files, entries per file, branches, ROOT compression setting such as 101 or 505),
#: optionally followed by ``TTree::SetAutoFlush``'s argument (entries if > 0, bytes if < 0;
#: absent or ``None``: ROOT's default)
Spec = tuple[str, int, int, int, int] | tuple[str, int, int, int, int, int | None]

_SCRIPT = r"""
import json, os, sys
import ROOT
ROOT.gInterpreter.Declare(r'''
#include "TFile.h"
#include "TTree.h"
#include "TRandom3.h"
#include <string>
#include <vector>
void hep_testbench_flat_write(const char *path, int nbranch, int nent, int comp, int seed,
                              bool set_flush, Long64_t flush) {
   TFile f(path, "RECREATE", "", comp);
   TTree t("Events", "Events");
   if (set_flush) t.SetAutoFlush(flush);
   std::vector<float> v(nbranch);
   for (int i = 0; i < nbranch; ++i) {
      std::string name = "b" + std::to_string(i);
      t.Branch(name.c_str(), &v[i], (name + "/F").c_str());
   }
   TRandom3 r(seed);
   for (int e = 0; e < nent; ++e) {
      for (int i = 0; i < nbranch; ++i)
         v[i] = (i % 3 == 0) ? float(int(r.Gaus(10, 3))) : float(r.Gaus());
      t.Fill();
   }
   t.Write();
   f.Close();
}
''')
specs, name, seed = json.loads(sys.argv[1])
for d, files, entries, branches, comp, *rest in specs:
    flush = rest[0] if rest else None
    os.makedirs(d, exist_ok=True)
    for k in range(files):
        p = os.path.join(d, name.format(k=k))
        if not os.path.exists(p):
            ROOT.hep_testbench_flat_write(p + ".tmp", branches, entries, comp, seed + k,
                                          flush is not None, flush or 0)
            os.rename(p + ".tmp", p)
"""


def write_flat_root(specs: Sequence[Spec | Sequence[object]], *, name: str = "part_{k:03d}.root",
                    seed: int = 1000) -> None:
    """Write each spec's files (``name`` formatted with the file index ``k``; seeds ``seed +
    k``); a file already there is kept, and a file is renamed into place only when complete."""
    payload = json.dumps([[list(s) for s in specs], name, seed])
    subprocess.run([sys.executable, "-c", _SCRIPT, payload], check=True, capture_output=True)


# -- mixed layouts: typed scalars, jagged collections, STL vectors, split objects -------------

#: ROOT leaf type codes the mixed writer knows -> C++ types
LEAF_CPP = {"F": "float", "D": "double", "I": "int", "i": "unsigned int", "L": "Long64_t",
            "l": "ULong64_t", "S": "short", "b": "unsigned char", "O": "bool"}


@dataclass(frozen=True)
class Layout:
    """What one mixed tree ``Events`` holds (every branch filled with reproducible values).

    * ``scalars``: ``(name, leaf code)`` flat branches (``"pt/F"``-style leaf lists; codes in
      :data:`LEAF_CPP`).
    * ``collections``: ``(name, mean multiplicity, fields)`` jagged collections the NanoAOD way:
      a counter branch ``n<name>`` and one leaf-list array branch ``<name>_<field>[n<name>]``
      per field (``fields``: ``(field, leaf code)``).
    * ``vectors``: names of ``std::vector<float>`` branches (STL, not split).
    * ``objects``: ``(name, float members, int members, item fields)`` branches of a class
      declared here (floats ``<name>_f0..``, ints ``<name>_i0..`` and ``std::vector<Item>
      items`` whose ``Item`` has ``item fields`` floats ``<name>_s0..``), written with
      ``splitlevel`` (99: one branch per member, the items' members split into jagged branches).
    * ``auto_flush``: ``TTree::SetAutoFlush`` (entries if > 0, bytes if < 0; ``None``: ROOT's
      default); ``basket_size``: every branch's buffer size in bytes.
    """

    scalars: tuple[tuple[str, str], ...] = ()
    collections: tuple[tuple[str, float, tuple[tuple[str, str], ...]], ...] = ()
    vectors: tuple[str, ...] = ()
    objects: tuple[tuple[str, int, int, int], ...] = ()
    auto_flush: int | None = None
    basket_size: int = 32000
    splitlevel: int = 99

    @property
    def n_branches(self) -> int:
        """Branches the tree holds, as uproot lists them (split objects: the object, each
        member, the items' group and each item member)."""
        n = len(self.scalars) + len(self.vectors)
        n += sum(1 + len(f) for _, _, f in self.collections)
        if self.splitlevel >= 1:
            n += sum(1 + nf + ni + (1 + it if it else 0) for _, nf, ni, it in self.objects)
        else:
            n += len(self.objects)
        return n


def _value(code: str, var: str, h: int) -> str:
    """A C++ statement giving ``var`` a value of leaf type ``code``: floats quantised or noisy
    (by ``h``), integers small, flags mostly false."""
    if code in "FD":
        return (f"{var} = std::round(r.Exp(25.0) * 100.0) / 100.0;" if h % 3 == 0 else
                f"{var} = r.Gaus(0.0, 2.5);" if h % 3 == 1 else
                f"{var} = std::round(r.Uniform(-3.2, 3.2) * 1000.0) / 1000.0;")
    if code == "O":
        return f"{var} = r.Rndm() < {0.02 + 0.05 * (h % 5):.2f};"
    if code in "Ll":
        return f"{var} = 1000000 + e;"
    return f"{var} = r.Poisson({1 + h % 4});"


def _check(layout: Layout) -> None:
    """Raise ``ValueError`` naming the first branch name or leaf code the writer cannot use."""
    names = [n for n, _ in layout.scalars] + list(layout.vectors)
    names += [o[0] for o in layout.objects]
    codes = [c for _, c in layout.scalars]
    for name, _, fields in layout.collections:
        names += [name] + [f for f, _ in fields]
        codes += [c for _, c in fields]
    for n in names:
        if not n.isidentifier():
            raise ValueError(f"branch name {n!r} is not an identifier")
    for c in codes:
        if c not in LEAF_CPP:
            raise ValueError(f"leaf code {c!r} is not one of {''.join(LEAF_CPP)}")


def _cpp(layout: Layout, fn: str) -> str:
    """The C++ writer of ``layout``: ``void fn(path, entries, compression, seed)``."""
    _check(layout)
    decl, body, fill = [], [], []
    for k, (name, nf, ni, it) in enumerate(layout.objects):
        items = " ".join(f"float {name}_s{j};" for j in range(it))
        decl.append(f"struct {fn}_Item{k} {{ {items} }};")
        members = ([f"float {name}_f{j};" for j in range(nf)]
                   + [f"int {name}_i{j};" for j in range(ni)]
                   + ([f"std::vector<{fn}_Item{k}> items;"] if it else []))
        decl.append(f"struct {fn}_Obj{k} {{ {' '.join(members)} }};")
    bs = layout.basket_size
    for k, (name, code) in enumerate(layout.scalars):
        body.append(f"{LEAF_CPP[code]} s{k} = 0; "
                    f't.Branch("{name}", &s{k}, "{name}/{code}", {bs});')
        fill.append(_value(code, f"s{k}", k))
    for c, (name, mean, fields) in enumerate(layout.collections):
        body.append(f"int n{c} = 0; "
                    f't.Branch("n{name}", &n{c}, "n{name}/I", {bs});')
        fill.append(f"n{c} = std::min(int(r.Poisson({mean})), 256);")
        for j, (f, code) in enumerate(fields):
            b = f"{name}_{f}"
            body.append(f"std::vector<{LEAF_CPP[code]}> c{c}_{j}(256); "
                        f't.Branch("{b}", c{c}_{j}.data(), "{b}[n{name}]/{code}", {bs});')
            fill.append(f"for (int x = 0; x < n{c}; ++x) {{ "
                        + _value(code, f"c{c}_{j}[x]", j + c) + " }")
    for k, name in enumerate(layout.vectors):
        body.append(f"std::vector<float> *v{k} = new std::vector<float>(); "
                    f't.Branch("{name}", &v{k}, {bs}, 0);')
        fill.append(f"v{k}->resize(r.Poisson({1 + k % 6})); "
                    f"for (auto &x : *v{k}) {{ {_value('F', 'x', k)} }}")
    for k, (name, nf, ni, it) in enumerate(layout.objects):
        body.append(f"auto *o{k} = new {fn}_Obj{k}(); "
                    f't.Branch("{name}", &o{k}, {bs}, {layout.splitlevel});')
        fill.extend(_value("F", f"o{k}->{name}_f{j}", j) for j in range(nf))
        fill.extend(_value("I", f"o{k}->{name}_i{j}", j) for j in range(ni))
        if it:
            fill.append(f"o{k}->items.resize(std::min(int(r.Poisson({2 + k % 5})), 64)); "
                        f"for (auto &m : o{k}->items) {{ "
                        + " ".join(_value("F", f"m.{name}_s{j}", j) for j in range(it)) + " }")
    flush = ("" if layout.auto_flush is None else
             f"t.SetAutoFlush({layout.auto_flush});")
    return "\n".join([
        "#include <algorithm>", "#include <cmath>", "#include <vector>", '#include "TFile.h"',
        '#include "TTree.h"', '#include "TRandom3.h"', *decl,
        f"void {fn}(const char *path, long entries, int comp, int seed) {{",
        '   TFile f(path, "RECREATE", "", comp);', '   TTree t("Events", "Events");',
        f"   {flush}", *("   " + b for b in body), "   TRandom3 r(seed);",
        "   for (long e = 0; e < entries; ++e) {", *("      " + s for s in fill),
        "      t.Fill();", "   }", "   t.Write();", "   f.Close();", "}"])


_MIXED_SCRIPT = r"""
import json, os, sys, warnings
warnings.simplefilter("ignore")
import ROOT
code, fn, directory, name, files, entries, comp, seed = json.loads(sys.stdin.read())
if not ROOT.gInterpreter.Declare(code):
    sys.exit("ROOT could not compile the writer")
os.makedirs(directory, exist_ok=True)
for k in range(files):
    p = os.path.join(directory, name.format(k=k))
    if not os.path.exists(p):
        getattr(ROOT, fn)(p + ".tmp", entries, comp, seed + k)
        os.rename(p + ".tmp", p)
"""


def write_mixed_root(directory: str, files: int, entries: int, layout: Layout,
                     compression: int, *, name: str = "part_{k:03d}.root", seed: int = 2000,
                     tag: str = "w") -> None:
    """Write ``files`` ROOT files of ``entries`` entries of ``layout`` into ``directory`` with
    ROOT's compression setting ``compression`` (e.g. 101 ZLIB-1, 209 LZMA-9, 404 LZ4-4, 505
    ZSTD-5); file ``k`` is seeded ``seed + k``.  A file already there is kept; a file is renamed
    into place only when complete.  ROOT runs in a child process (``tag`` names its classes).
    A name or leaf code it cannot write: ``ValueError``; ROOT failing: ``RuntimeError``."""
    fn = f"hep_testbench_mixed_{tag}"
    payload = json.dumps([_cpp(layout, fn), fn, directory, name, files, entries, compression,
                          seed])
    r = subprocess.run([sys.executable, "-c", _MIXED_SCRIPT], input=payload, capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise RuntimeError(f"ROOT writer failed for {directory}: {r.stderr.strip()[-400:]}")
