"""The plain analysis of ``bench_advice_true.py --program rdataframe|getentry``, as a ROOT user
writes it: an ``RDataFrame`` with one ``Histo1D`` per branch read (one thread unless told), or a
compiled ``TTree::GetEntry`` loop over the branches read (``SetBranchStatus``; TTreeCache off
unless told, as ``--reader root.getentry`` describes it; ``--cache -1``: ROOT's default).

    python -m benchmarks.validation.advice_true_root FILES.json --reader rdataframe|getentry
        --branches A,B [--tree Events] [--threads N] [--cache BYTES] [--entries START:STOP]
        [--start-at UNIX_TIME]

``--threads N``: ``ROOT.EnableImplicitMT(N)`` first (W001's printed line for a ROOT reader).
``--cache BYTES``: the loop's ``SetCacheSize(BYTES)`` and ``AddBranchToCache("*", true)``
(T001's printed lines); ``--cache -1``: the cache left as ROOT sets it (its default TTreeCache,
as ``--reader root.ttreecache`` describes it). ``--entries``: read only that entry range of the
(single) file (a worker's share). ``--start-at``: wait until then before reading. ROOT's import
and the loop's compilation come before the clock starts (a compiled program has them done); the
RDataFrame's own just-in-time compilation is the program's and is timed. Prints one JSON line:
events, the reading's start and end (``time.time()``), seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings

LOOP = r"""
#include <string>
#include <vector>
#include "TFile.h"
#include "TTree.h"
long long hepbench_getentry(const std::vector<std::string> &files, const std::string &tree,
                            const std::vector<std::string> &branches, long long cache,
                            long long first, long long last) {
  long long n = 0;
  for (const auto &path : files) {
    TFile *f = TFile::Open(path.c_str(), "READ");
    if (!f || f->IsZombie()) return -1;
    TTree *t = nullptr;
    f->GetObject(tree.c_str(), t);
    if (!t) return -2;
    t->SetBranchStatus("*", false);
    for (const auto &b : branches) t->SetBranchStatus(b.c_str(), true);
    if (cache >= 0) {  // else ROOT's default TTreeCache, left alone
      t->SetCacheSize(cache);
      if (cache != 0) t->AddBranchToCache("*", true);
    }
    long long stop = last >= 0 ? last : t->GetEntries();
    for (long long i = first; i < stop; ++i) t->GetEntry(i);
    n += stop - first;
    f->Close();
    delete f;
  }
  return n;
}
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files")
    ap.add_argument("--reader", choices=("rdataframe", "getentry"), required=True)
    ap.add_argument("--branches", required=True)
    ap.add_argument("--tree", default="Events")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--cache", type=int, default=0)
    ap.add_argument("--entries", default=None)
    ap.add_argument("--start-at", type=float, default=None)
    args = ap.parse_args()
    with open(args.files) as fh:
        files = json.load(fh)
    branches = args.branches.split(",")
    os.environ.setdefault("ROOT_MAX_THREADS", str(max(args.threads, 1)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import ROOT
    ROOT.gROOT.SetBatch(True)
    if args.threads > 1:
        ROOT.EnableImplicitMT(args.threads)
    first, last = (int(x) for x in args.entries.split(":")) if args.entries else (0, -1)
    vec = ROOT.std.vector["std::string"]
    fv, bv = vec(), vec()
    for f in files:
        fv.push_back(f)
    for b in branches:
        bv.push_back(b)
    if args.reader == "getentry" and not ROOT.gInterpreter.Declare(LOOP):
        raise SystemExit("the GetEntry loop did not compile")
    if args.start_at:
        time.sleep(max(0.0, args.start_at - time.time()))
    t0 = time.time()
    if args.reader == "getentry":
        n = int(ROOT.hepbench_getentry(fv, args.tree, bv, args.cache, first, last))
        if n < 0:
            raise SystemExit(f"the GetEntry loop could not read {files} ({n})")
    else:
        df = ROOT.RDataFrame(args.tree, fv)
        if args.entries:
            df = df.Range(first, last)
        count = df.Count()
        hists = [df.Histo1D(b) for b in branches]
        n = int(count.GetValue())
        for h in hists:
            h.GetValue()
    t1 = time.time()
    print(json.dumps({"events": n, "start": t0, "end": t1, "seconds": t1 - t0}))


if __name__ == "__main__":
    main()
