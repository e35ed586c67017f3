// C++ helpers of the ROOT engine's read tests (probes/readtests/rootengine.py), declared once
// with gInterpreter.Declare: the GetEntry event loop with a deadline, and the open cost.
#include <chrono>
#include <string>
#include <vector>
#include "TClass.h"
#include "TFile.h"
#include "TKey.h"
#include "TTree.h"
#include "TTreePerfStats.h"

namespace hep_advisor_root {

TTree *find_tree(TFile *f, const std::string &name) {
   if (!name.empty()) {
      TTree *t = nullptr;
      f->GetObject(name.c_str(), t);
      return t;
   }
   TIter next(f->GetListOfKeys());
   while (TKey *key = static_cast<TKey *>(next())) {
      TClass *cl = TClass::GetClass(key->GetClassName());
      if (cl && cl->InheritsFrom(TTree::Class()))
         return dynamic_cast<TTree *>(key->ReadObj());
   }
   return nullptr;
}

// [status, entries done, unzipped bytes, read calls, bytes read, disk s, unzip s, cpu s,
//  real s, loop wall s, cache bytes, tree entries, branches enabled]
// status: 0 ok, 1 cannot open, 2 no tree, 3 unknown branch (its index in out[1])
std::vector<double> read_pass(const std::string &path, const std::string &tree_name,
                              const std::vector<std::string> &branches, Long64_t stop,
                              Long64_t cache_bytes, double max_seconds, bool perf)
{
   std::vector<double> out(13, 0.0);
   TFile *f = TFile::Open(path.c_str(), "READ");
   if (!f || f->IsZombie()) { delete f; out[0] = 1; return out; }
   TTree *t = find_tree(f, tree_name);
   if (!t) { delete f; out[0] = 2; return out; }
   int enabled = 0;
   if (!branches.empty()) {
      for (size_t k = 0; k < branches.size(); ++k) {
         if (!t->GetBranch(branches[k].c_str())) { delete f; out[0] = 3; out[1] = k; return out; }
      }
      t->SetBranchStatus("*", false);
      for (const auto &b : branches) {
         UInt_t found = 0;
         t->SetBranchStatus(b.c_str(), true, &found);
      }
      enabled = branches.size();
   } else {
      enabled = t->GetListOfLeaves()->GetEntries();
   }
   t->SetCacheSize(cache_bytes);
   Long64_t n = t->GetEntries();
   if (stop < 0 || stop > n) stop = n;
   Long64_t calls0 = f->GetReadCalls(), bytes0 = f->GetBytesRead();
   // TTreePerfStats' constructor runs `uname -a` through a pipe (about 5 ms): attach it only
   // to the passes whose figures are wanted
   TTreePerfStats *ps = perf ? new TTreePerfStats("ioperf", t) : nullptr;
   Long64_t unzipped = 0, i = 0;
   auto t0 = std::chrono::steady_clock::now();
   for (; i < stop; ++i) {
      unzipped += t->GetEntry(i);
      if ((i & 15) == 15 &&
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() >
             max_seconds) { ++i; break; }
   }
   double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
   out[1] = i;
   out[2] = unzipped;
   if (ps) {
      ps->Finish();
      out[3] = ps->GetReadCalls();
      out[4] = ps->GetBytesRead();
      out[5] = ps->GetDiskTime();
      out[6] = ps->GetUnzipTime();
      out[7] = ps->GetCpuTime();
      out[8] = ps->GetRealTime();
   } else {  // the file's own counters, from just before the loop
      out[3] = f->GetReadCalls() - calls0;
      out[4] = f->GetBytesRead() - bytes0;
   }
   out[9] = wall;
   out[10] = t->GetCacheSize();
   out[11] = n;
   out[12] = enabled;
   delete ps;
   delete f;
   return out;
}

// seconds for TFile::Open and reading the trees' metadata (every named tree, or the first
// TTree when none is named); negative when the file or a tree is missing
double open_cost(const std::string &path, const std::vector<std::string> &tree_names)
{
   auto t0 = std::chrono::steady_clock::now();
   TFile *f = TFile::Open(path.c_str(), "READ");
   bool ok = f && !f->IsZombie();
   if (ok && tree_names.empty()) ok = find_tree(f, "") != nullptr;
   for (const auto &name : tree_names) {
      if (!ok) break;
      ok = find_tree(f, name) != nullptr;
   }
   double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
   delete f;
   return ok ? s : -1.0;
}

}  // namespace hep_advisor_root
