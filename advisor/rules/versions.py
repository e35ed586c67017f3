"""What each printed command or snippet needs, with the versions it was checked with.

Every label says only what was checked: the `root` extra's PyPI wheel (ROOT 6.40.00), uproot
5.7.7 (this package needs uproot >= 5.3), coffea 2026.9.0 and distributed 2026.8.0 (their
APIs read from the released wheels).  That ROOT 6.40 has no PROOF: ``ROOT.TProof`` does not
exist, its ``root-config --features`` lists no ``proof`` and ``root-config --has-proof``
answers "unknown feature".  So PROOF-Lite is offered last, for the ROOT builds that still
ship it, after RDataFrame, uproot, coffea and Dask.
"""

from __future__ import annotations

#: ``hadd`` (ROOT's merger; the options used: ``-j``, ``-O``, ``-fk``, ``-fNNN``).
HADD = ("hadd from ROOT; checked with ROOT 6.40 from PyPI (hep-advisor's root extra), which "
        "installs it in the ROOT package's bin folder, not on PATH")
#: TTree calls in C++ or PyROOT (``SetBranchStatus``, ``SetCacheSize``, ``SetAutoFlush``).
ROOT_TTREE = "ROOT's TTree, C++ or PyROOT; checked with ROOT 6.40"
#: RDataFrame (``Snapshot``, ``RSnapshotOptions``), from Python.
ROOT_RDF = "PyROOT with RDataFrame; checked with ROOT 6.40"
#: Other PyROOT calls (``gEnv``).
PYROOT = "PyROOT; checked with ROOT 6.40"
#: ``ROOT.EnableImplicitMT`` (a ROOT built with ``imt``, as the PyPI wheel is).
ROOT_IMT = ("PyROOT built with imt, for RDataFrame and TTree reads; checked with ROOT 6.40 "
            "from PyPI (hep-advisor's root extra)")
#: PROOF-Lite.
PROOF = ("a ROOT build configured with proof; ROOT 6.40 from PyPI (hep-advisor's root extra) "
         "has no TProof")
#: uproot reading and writing (``iterate``'s ``filter_name`` and ``step_size``,
#: ``recreate(compression=...)``, ``extend``).
UPROOT = "uproot 5; checked with uproot 5.7.7"
#: ``concurrent.futures`` processes, each reading with uproot.
UPROOT_PROCESSES = "Python's concurrent.futures and uproot 5; checked with uproot 5.7.7"
#: ``coffea.processor.FuturesExecutor(workers=N)``.
COFFEA = "coffea's processor API; checked with coffea 2026.9"
#: ``dask.distributed.LocalCluster(n_workers=N, threads_per_worker=1)``.
DASK = "dask.distributed; checked with distributed 2026.8"
#: ``blockdev --setra`` and the sysfs read-ahead file.
BLOCKDEV = "Linux and root privileges; blockdev is util-linux's"
SYSFS = "Linux and root privileges"
#: ``vmtouch``.
VMTOUCH = "vmtouch, a separate tool (not part of ROOT or hep-advisor)"
