"""ROOT over ``root://``: is the first file read in a process dearer once, or each new file?

    flock /tmp/hep-bench.lock python benchmarks/check_root_first_read.py

On ``bench_remote_predict.py``'s dataset ``c`` behind an emulated 1 ms, 1 Gbit/s link
(``testbench.remote``), a fresh ROOT process with the bench's warm-up (ROOT's set-up on a local
copy, a failed open that logs in) opens and reads (``GetEntry`` loop, default TTreeCache) a
sequence of files, each timed: ``A A B A C`` (a file again, then new ones) and ``B C D E F``
(new files only), with every branch and with 10 of the 100; three processes each.  Prints the
milliseconds per file.  The remote model charges the client's first open and read beyond the
later ones once per process (``ClientTerms.process_s``); this tells whether a new file pays it
again.  Nothing is left behind.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

CHILD = r"""
import json, sys, time
import ROOT
ROOT.gErrorIgnoreLevel = ROOT.kFatal
a = json.loads(sys.argv[1])
ROOT.gInterpreter.Declare('''
#include "TFile.h"
#include "TTree.h"
long long hep_loop(TTree *t) {
   long long n = t->GetEntries(), b = 0;
   for (long long i = 0; i < n; ++i) b += t->GetEntry(i);
   return b;
}
''')
f = ROOT.TFile.Open(a["local"])  # ROOT's one-time set-up, untimed
f.Get("Events").GetEntry(0)
f.Close()
try:  # no such file: connects and logs in, untimed
    ROOT.TFile.Open(a["login"])
except OSError:
    pass
out = []
for u in a["urls"]:
    s = time.perf_counter()
    f = ROOT.TFile.Open(u)
    t = f.Get("Events")
    if a["sub"]:
        t.SetBranchStatus("*", 0)
        for b in a["sub"]:
            t.SetBranchStatus(b, 1)
    ROOT.hep_loop(t)
    f.Close()
    out.append(time.perf_counter() - s)
print(json.dumps(out))
"""


def main() -> int:
    from bench_remote_predict import write_datasets

    from testbench.remote import cleanup_stale, remote_bench

    cleanup_stale()
    work = Path(tempfile.mkdtemp(prefix="hep-check-first-", dir="/var/tmp"))
    work.chmod(0o755)
    try:
        data = write_datasets(work, ["c"])["c"]
        with remote_bench(1.0, 1000, data_dir=work) as bench:
            u = [bench.root_url(f"c/{f.name}") for f in data]
            seqs = {"A A B A C": [u[0], u[0], u[1], u[0], u[2]],
                    "B C D E F": [u[1], u[2], u[3], u[4], u[5]]}
            for sub in (None, [f"b{i}" for i in range(10)]):
                for name, seq in seqs.items():
                    for _ in range(3):
                        arg = json.dumps({"local": str(data[0]), "urls": seq, "sub": sub,
                                          "login": bench.root_url("no-such-file.root")})
                        res = subprocess.run([sys.executable, "-c", CHILD, arg],
                                             capture_output=True, text=True, timeout=300)
                        times = json.loads(res.stdout.strip().splitlines()[-1])
                        print("10%" if sub else "all", name,
                              ", ".join(f"{x * 1e3:.1f}" for x in times), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
