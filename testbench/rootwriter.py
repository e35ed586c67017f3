"""Flat float TTrees written by ROOT itself, for benchmarks that need data unlike the demo.

Each file holds one tree ``Events`` of ``branches`` float branches ``b0``, ``b1``, ...; every
third branch holds small integers (compresses well), the rest Gaussian noise.  ROOT runs in a
child process, so a benchmark's own process never loads it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence

#: (directory, files, entries per file, branches, ROOT compression setting such as 101 or 505)
Spec = tuple[str, int, int, int, int]

_SCRIPT = r"""
import json, os, sys
import ROOT
ROOT.gInterpreter.Declare(r'''
#include "TFile.h"
#include "TTree.h"
#include "TRandom3.h"
#include <string>
#include <vector>
void hep_testbench_flat_write(const char *path, int nbranch, int nent, int comp, int seed) {
   TFile f(path, "RECREATE", "", comp);
   TTree t("Events", "Events");
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
for d, files, entries, branches, comp in specs:
    os.makedirs(d, exist_ok=True)
    for k in range(files):
        p = os.path.join(d, name.format(k=k))
        if not os.path.exists(p):
            ROOT.hep_testbench_flat_write(p + ".tmp", branches, entries, comp, seed + k)
            os.rename(p + ".tmp", p)
"""


def write_flat_root(specs: Sequence[Spec | Sequence[object]], *, name: str = "part_{k:03d}.root",
                    seed: int = 1000) -> None:
    """Write each spec's files (``name`` formatted with the file index ``k``; seeds ``seed +
    k``); a file already there is kept, and a file is renamed into place only when complete."""
    payload = json.dumps([[list(s) for s in specs], name, seed])
    subprocess.run([sys.executable, "-c", _SCRIPT, payload], check=True, capture_output=True)
