"""RNTuple files written by ROOT, and the check of the probe against ROOT's own figures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hep_advisor.probes.rootfile import inspect_file

#: One RNTuple "ntpl": scalars of many column types (half-precision, truncated and quantised
#: floats among them), vectors, a vector of vectors, a string, a variant, an array and a
#: struct-like nested record; ``per_cluster`` entries per cluster, ``per_group`` clusters per
#: cluster group, compression ``setting``.
WRITE_CODE = r"""
#include <ROOT/RField.hxx>
#include <ROOT/RNTupleModel.hxx>
#include <ROOT/RNTupleWriteOptions.hxx>
#include <ROOT/RNTupleWriter.hxx>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace hep_advisor_rntuple_test {
long write(const char *path, const char *name, int setting, long entries, long per_cluster,
           int per_group)
{
   auto model = ROOT::RNTupleModel::Create();
   auto i = model->MakeField<std::int32_t>("i");
   auto f = model->MakeField<float>("f");
   auto b = model->MakeField<bool>("b");
   auto v = model->MakeField<std::vector<float>>("v");
   auto vv = model->MakeField<std::vector<std::vector<double>>>("vv");
   auto s = model->MakeField<std::string>("s");
   auto u8 = model->MakeField<std::uint8_t>("u8");
   auto i16 = model->MakeField<std::int16_t>("i16");
   auto i64 = model->MakeField<std::int64_t>("i64");
   auto var = model->MakeField<std::variant<int, double>>("var");
   auto arr = model->MakeField<std::array<float, 3>>("arr");
   auto pairs = model->MakeField<std::vector<std::pair<int, float>>>("pairs");
   {
      auto h = std::make_unique<ROOT::RField<float>>("half");
      h->SetHalfPrecision();
      model->AddField(std::move(h));
      auto t = std::make_unique<ROOT::RField<float>>("trunc");
      t->SetTruncated(20);
      model->AddField(std::move(t));
      auto q = std::make_unique<ROOT::RField<double>>("quant");
      q->SetQuantized(16, {0., 100.});
      model->AddField(std::move(q));
   }
   auto half = model->GetDefaultEntry().GetPtr<float>("half");
   auto trunc = model->GetDefaultEntry().GetPtr<float>("trunc");
   auto quant = model->GetDefaultEntry().GetPtr<double>("quant");
   ROOT::RNTupleWriteOptions opts;
   opts.SetCompression(setting);
   auto writer = ROOT::RNTupleWriter::Recreate(std::move(model), name, path, opts);
   for (long e = 0; e < entries; ++e) {
      *i = e;
      *f = 0.5f * e;
      *b = e % 3;
      *u8 = e % 200;
      *i16 = e % 3000;
      *i64 = e * 1000003;
      v->assign(e % 7, 1.5f * e);
      vv->clear();
      for (int k = 0; k < e % 3; ++k)
         vv->push_back(std::vector<double>(k + 1, 0.25 * e));
      *s = std::string(e % 11, 'x');
      if (e % 2)
         *var = int(e);
      else
         *var = 0.5 * e;
      (*arr)[0] = e;
      (*arr)[1] = 2 * e;
      (*arr)[2] = 3 * e;
      pairs->assign(e % 4, std::make_pair(int(e), 0.1f * e));
      *half = 0.01f * e;
      *trunc = 0.001f * e;
      *quant = (e % 1000) * 0.1;
      writer->Fill();
      if (per_cluster > 0 && (e + 1) % per_cluster == 0) {
         const long cluster = (e + 1) / per_cluster;
         writer->CommitCluster(per_group > 0 && cluster % per_group == 0);
      }
   }
   return entries;
}
}
"""

_declared = False


def write_rntuple(root: Any, path: Path, setting: int = 505, entries: int = 5000,
                  per_cluster: int = 700, per_group: int = 3, name: str = "ntpl") -> Path:
    global _declared
    if not _declared:
        assert root.gInterpreter.Declare(WRITE_CODE)
        _declared = True
    n = root.hep_advisor_rntuple_test.write(str(path), name, setting, entries, per_cluster,
                                              per_group)
    assert n == entries
    return path


def root_figures(root: Any, path: Path, name: str) -> dict[str, Any]:
    """What ROOT says of one RNTuple: RNTupleReader and RNTupleInspector."""
    reader = root.RNTupleReader.Open(name, str(path))
    desc = reader.GetDescriptor()
    insp = root.Experimental.RNTupleInspector.Create(name, str(path))
    fields = {}
    top = desc.GetFieldZero()
    for fdesc in desc.GetFieldIterable(top):
        fname = str(fdesc.GetFieldName())
        fi = insp.GetFieldTreeInspector(fname)
        fields[fname] = (int(fi.GetCompressedSize()), int(fi.GetUncompressedSize()))
    pages = 0
    for col in range(insp.GetDescriptor().GetNPhysicalColumns()):
        pages += int(insp.GetColumnInspector(col).GetNPages())
    return {
        "entries": int(reader.GetNEntries()),
        "compressed": int(insp.GetCompressedSize()),
        "uncompressed": int(insp.GetUncompressedSize()),
        "clusters": int(desc.GetNClusters()),
        "cluster_groups": int(desc.GetNClusterGroups()),
        "fields": fields,
        "pages": pages,
    }


def assert_rntuple_matches_root(root: Any, path: Path, name: str) -> None:
    want = root_figures(root, path, name)
    (meta,) = [t for t in inspect_file(str(path)).trees if t.name == name]
    assert meta.format == "rntuple"
    assert meta.rntuple is not None
    assert meta.entries == want["entries"]
    assert meta.compressed_bytes == want["compressed"]
    assert meta.uncompressed_bytes == want["uncompressed"]
    assert meta.rntuple.clusters == want["clusters"]
    assert meta.rntuple.cluster_groups == want["cluster_groups"]
    assert meta.rntuple.pages == want["pages"]
    got = {b.name: (b.compressed_bytes, b.uncompressed_bytes) for b in meta.branches}
    assert got == want["fields"]
    assert sum(n * c for n, c in meta.cluster_sizes) == meta.entries
