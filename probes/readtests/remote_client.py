"""The reader's own client through the link (:class:`~.remote_results.RemoteClientCost`).

The link's pings and the local CPU test leave out what the reader's client costs beyond them
on each request, file and basket: on the test bench ROOT's basket reads at a 1 ms link took
1.6-2.0 ms against a 1.07 ms ping, and uproot over ``root://`` spent tens of ms per file more
than the same reads from a local copy.  Here the reader reads the file of the CPU test (its
``ranges``: the baskets, taken from the local copy) through the link, with its own client:

- basket reads one at a time, the file's first baskets in file order;
- open, get the tree, close (the client's own counts of the reads it made);
- every branch read (uproot ``arrays()``; ROOT's ``GetEntry`` loop, default TTreeCache),
  each pass beside the same pass on the local copy (paired, the order alternating: the
  machine's load at the time is in both, and the difference is the client's).

uproot runs in this process (its default source, and ``XRootDSource`` over ``root://``); ROOT
runs in a child process (ROOT's XRootD client and the Python ``XRootD`` bindings do not share a
process safely).  Nothing is written; a first untimed pass connects and builds the class
models.  Each part is scaled to the time given and skipped, with a note, where it does not fit.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

from ..remote_files import RemoteError, scheme_of
from .remote_results import RemoteClientCost
from .runner import Cancelled

#: basket reads one at a time, at most
REQUESTS = 16
#: whole-file read passes (with their opens), at most
READS = 5
#: ROOT's read segments without a cache, at most (more than four: their quartiles stand, one
#: disturbed segment does not decide the term; 3 let one low sample zero it on a loaded machine)
SEGMENTS = 8
#: passes over the link a client's test needs at least (its first, one paired pass and the
#: paired local pass), in units of one remote pass
MIN_PASSES = 3

Range = tuple[int, int]  # (offset, size)


def basket_ranges(path: str, tree_name: str) -> list[Range]:
    """Every basket of ``tree_name`` in the local file ``path``, (seek, bytes incl. key), in
    file order."""
    import uproot

    out = []
    with uproot.open(path) as f:
        for b in f[tree_name].itervalues(recursive=True):
            seeks = b.member("fBasketSeek")
            sizes = b.member("fBasketBytes")
            out += [(int(seeks[i]), int(sizes[i])) for i in range(b.num_baskets)]
    return sorted(out)


def measure_clients(url: str, tree_name: str, local: str, engine: str, budget_s: float, *,
                    cancel: threading.Event | None = None, one_pass_s: float = 0.0,
                    start_s: float = 0.0, skipped: list[tuple[str, str]] | None = None
                    ) -> tuple[RemoteClientCost, ...]:
    """The reader's client(s) on ``url`` (one entry per client; ``engine`` ``uproot``: its
    default source, and ``XRootDSource`` over ``root://``; ``root``: ROOT's); ``local``: a
    local copy of the file (its baskets; ROOT's one-time set-up).

    Within ``budget_s``: a client needs at least its first pass and one paired pass (about
    ``MIN_PASSES`` x ``one_pass_s``, a pass over the link; ROOT's: ``start_s`` more, its
    process' start); one that does not fit is left out with a line in ``skipped``, uproot's
    ``XRootDSource`` (the alternative source) before its default."""
    ranges = basket_ranges(local, tree_name)
    need = MIN_PASSES * one_pass_s
    if engine == "root":
        if budget_s < need + start_s:
            _skip(skipped, "root", budget_s, need + start_s)
            return ()
        return (_root_cost(url, tree_name, local, budget_s, len(ranges)),)
    clients: list[tuple[str, Any]] = [("uproot", None)]
    if scheme_of(url) == "root":
        import uproot

        clients.append(("uproot XRootDSource", uproot.source.xrootd.XRootDSource))
    while clients and budget_s < need * len(clients):
        _skip(skipped, clients.pop()[0], budget_s, need * (len(clients) + 1))
    t_end = time.perf_counter() + budget_s
    out = []
    for i, (name, handler) in enumerate(clients):
        share = (t_end - time.perf_counter()) / (len(clients) - i)
        out.append(_uproot_cost(name, url, tree_name, local, ranges, handler, share, cancel))
    return tuple(out)


def _skip(skipped: list[tuple[str, str]] | None, client: str, left_s: float,
          need_s: float) -> None:
    if skipped is not None:
        skipped.append((f"remote reader's client: {client}",
                        f"{max(left_s, 0):.1f} s of the budget left, about {need_s:.1f} s "
                        "needed: its costs over the link beyond the ping are not in the "
                        "prediction (give a larger --budget)"))


def _uproot_cost(name: str, url: str, tree_name: str, path: str, ranges: Sequence[Range],
                 handler: Any, budget_s: float, cancel: threading.Event | None
                 ) -> RemoteClientCost:
    import uproot

    opts = {"handler": handler} if handler is not None else {}
    t_end = time.perf_counter() + budget_s
    t0 = time.perf_counter()
    try:
        with uproot.open(url, **opts) as f:  # the first in this process: connect, models
            tree = f[tree_name]
            warm_s = time.perf_counter() - t0
            tree.arrays()
            first_s = time.perf_counter() - t0
            requests: list[float] = []
            src = f.file.source
            n_req = _fit(REQUESTS, warm_s, (t_end - time.perf_counter()) / 4)
            for off, size in ranges[:n_req]:
                _check(cancel)
                a = time.perf_counter()
                src.chunk(off, off + size)
                requests.append(time.perf_counter() - a)
        opens: list[float] = []
        reads: list[float] = []
        local: list[tuple[float, float]] = []
        counts = (0, 0, 0, 0)
        for k in range(READS):
            _check(cancel)
            t0 = time.perf_counter()
            if k % 2:  # the same load, locally; which goes first alternates
                o, r, counts = _uproot_pass(uproot, url, tree_name, opts)
                lo, lr, _ = _uproot_pass(uproot, path, tree_name, {})
            else:
                lo, lr, _ = _uproot_pass(uproot, path, tree_name, {})
                o, r, counts = _uproot_pass(uproot, url, tree_name, opts)
            local.append((lo, lr))
            opens.append(o)
            reads.append(r)
            if time.perf_counter() + (time.perf_counter() - t0) > t_end:
                break  # the next pair would not fit
    except (Cancelled, KeyboardInterrupt):
        raise
    except Exception as exc:  # the client failed: one line, the calibration goes on
        raise RemoteError(f"{url}: {name}: {type(exc).__name__}: {exc}") from None
    return RemoteClientCost(
        client=name, request_ms=_med_ms(requests),
        request_bytes=int(statistics.median([s for _, s in ranges[:len(requests)]]))
        if requests else 0,
        request_samples=tuple(1e3 * x for x in requests), open_s=statistics.median(opens),
        open_requests=counts[0], open_bytes=counts[1], read_s=statistics.median(reads),
        read_requests=counts[2], read_bytes=counts[3], read_samples=tuple(reads),
        baskets=len(ranges), note="uproot " + uproot.__version__ + (
            "; the source's counts of requests and bytes; requests: the source's chunk() of "
            "one basket (no decompression)"), first_s=first_s,
        open_samples=tuple(opens), local_open_samples=tuple(o for o, _ in local),
        local_read_samples=tuple(r for _, r in local))


def _uproot_pass(uproot: Any, where: str, tree_name: str, opts: dict[str, Any]
                 ) -> tuple[float, float, tuple[int, int, int, int]]:
    """Open + tree + close (s), every branch read (s), and the source's counts (requests and
    bytes of the open, of the read)."""
    t0 = time.perf_counter()
    f = uproot.open(where, **opts)
    try:
        tree = f[tree_name]
        t1 = time.perf_counter()
        src = f.file.source
        o_req, o_bytes = src.num_requests, src.num_requested_bytes
        tree.arrays()
        t2 = time.perf_counter()
        counts = (o_req, o_bytes, src.num_requests - o_req, src.num_requested_bytes - o_bytes)
    finally:
        t3 = time.perf_counter()
        f.close()
        t4 = time.perf_counter()
    return t1 - t0 + t4 - t3, t2 - t1, counts


#: ROOT's side, in a child process: argv = JSON {url, tree, local, deadline (``time.time()``),
#: calls, reads}; prints JSON.  As a ROOT job over the link runs: ROOT's one-time set-up paid on
#: the local copy and the connection made (an open of a file that is not there), all untimed;
#: then timed: the first open and read of the file in the process (with the loop's first
#: compile, as a job's first file pays its own; the harness's other calls bound before), reads
#: without a cache (4 branches at a time, the next 4 once a file's are read; ``calls`` read calls
#: a segment: ROOT's synchronous basket reads; each segment less the same entries of the local
#: copy read right after it), then open + read passes.
ROOT_CHILD = r"""
import json, sys, time
import ROOT
ROOT.gErrorIgnoreLevel = ROOT.kFatal
a = json.loads(sys.argv[1])
ROOT.gInterpreter.Declare('''
#include "TFile.h"
#include "TTree.h"
long long hep_advisor_client_loop(TTree *t) {
   long long n = t->GetEntries(), b = 0;
   for (long long i = 0; i < n; ++i) b += t->GetEntry(i);
   return b;
}
''')
# the harness's own functions apart: cling compiles a declaration's functions together on the
# first call of one, and the job's first file pays its loop's compile alone
ROOT.gInterpreter.Declare('''
long long hep_advisor_client_calls(TTree *t, TFile *f, long long i, long long calls) {
   long long n = t->GetEntries(), c0 = f->GetReadCalls();
   for (; i < n && f->GetReadCalls() - c0 < calls; ++i) t->GetEntry(i);
   return i;
}
void hep_advisor_client_range(TTree *t, long long i0, long long i1) {
   for (long long i = i0; i < i1; ++i) t->GetEntry(i);
}
''')
t_end = time.perf_counter() + (a["deadline"] - time.time())
f = ROOT.TFile.Open(a["local"])
f.IsZombie(), f.GetReadCalls(), f.GetBytesRead()  # the harness's calls bound (cppyy), untimed
f.Get(a["tree"]).GetEntry(0)
f.Close()
try:  # not there: connects and logs in
    ROOT.TFile.Open(a["url"] + ".hep-advisor-connect")
except OSError:
    pass

def one(where):
    s = time.perf_counter()
    try:
        f = ROOT.TFile.Open(where)
    except OSError:
        f = None
    if not f or f.IsZombie():
        print(json.dumps({"error": "ROOT could not open the file"}))
        sys.exit(0)
    t = f.Get(a["tree"])
    s1 = time.perf_counter()
    c0, b0 = f.GetReadCalls(), f.GetBytesRead()
    ROOT.hep_advisor_client_loop(t)
    s2 = time.perf_counter()
    counts = [c0, b0, f.GetReadCalls() - c0, f.GetBytesRead() - b0]
    f.Close()
    s3 = time.perf_counter()
    return s1 - s + s3 - s2, s2 - s1, counts

o, r, counts = one(a["url"])
first = o + r
f = ROOT.TFile.Open(a["url"])
t = f.Get(a["tree"])
t.SetCacheSize(0)
# the same entries of the same branches of the local copy, right after each segment: the loop's
# own cost (decompression, GetEntry over the branches switched off) is taken off the segment
lf = ROOT.TFile.Open(a["local"])
lt = lf.Get(a["tree"])
lt.SetCacheSize(0)
names = [b.GetName() for b in t.GetListOfBranches()]
req, calls, nbytes, i, g = [], 0, 0, 0, 0
while len(req) < a["segments"] and (g == 0 or i < t.GetEntries() or 4 * g < len(names)):
    if g == 0 or i >= t.GetEntries():  # the next 4 branches, from the first entry
        for tree in (t, lt):
            tree.SetBranchStatus("*", 0)
            for n in names[4 * g:4 * g + 4]:
                tree.SetBranchStatus(n, 1)
        g, i = g + 1, 0
    c0, b0 = f.GetReadCalls(), f.GetBytesRead()
    i0 = i
    s = time.perf_counter()
    i = ROOT.hep_advisor_client_calls(t, f, i, a["calls"])
    dt = time.perf_counter() - s
    s = time.perf_counter()
    ROOT.hep_advisor_client_range(lt, i0, i)
    dt_local = time.perf_counter() - s
    k = f.GetReadCalls() - c0
    if k:
        req.append((dt - dt_local) / k)
        calls += k
        nbytes += f.GetBytesRead() - b0
    if time.perf_counter() + dt > t_end - first:
        break
f.Close()
lf.Close()
opens, reads, local = [], [], []
for k in range(a["reads"]):
    if k and time.perf_counter() + first > t_end:
        break
    if k % 2:  # the same load, locally; which goes first alternates
        o, r, counts = one(a["url"])
        local.append(one(a["local"])[:2])
    else:
        local.append(one(a["local"])[:2])
        o, r, counts = one(a["url"])
    opens.append(o)
    reads.append(r)
print(json.dumps({"requests": req, "request_bytes": nbytes // max(calls, 1), "first": first,
                  "opens": opens, "reads": reads, "counts": counts, "local": local,
                  "version": ROOT.gROOT.GetVersion()}))
"""


def _root_cost(url: str, tree_name: str, local: str, budget_s: float,
               baskets: int) -> RemoteClientCost:
    arg = json.dumps({"url": url, "tree": tree_name, "local": local,
                      "deadline": time.time() + budget_s,  # the process' start included
                      "calls": REQUESTS // 2, "segments": SEGMENTS, "reads": READS})
    limit = max(60.0, 4 * budget_s)
    try:
        r = subprocess.run([sys.executable, "-c", ROOT_CHILD, arg], capture_output=True,
                           text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        raise RemoteError(f"{url}: ROOT's client took over {limit:.0f} s") from None
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if r.returncode != 0 or not lines:
        tail = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}"
        raise RemoteError(f"{url}: ROOT's client: {tail}")
    d = json.loads(lines[-1])
    if "error" in d:
        raise RemoteError(f"{url}: {d['error']}")
    req = d["requests"]
    return RemoteClientCost(
        client="root", request_ms=_med_ms(req), request_bytes=int(d["request_bytes"]),
        request_samples=tuple(1e3 * x for x in req), open_s=statistics.median(d["opens"]),
        open_requests=int(d["counts"][0]), open_bytes=int(d["counts"][1]),
        read_s=statistics.median(d["reads"]), read_requests=int(d["counts"][2]),
        read_bytes=int(d["counts"][3]), read_samples=tuple(d["reads"]), baskets=baskets,
        note=f"ROOT {d['version']} in a child process; TFile's counts of read calls and bytes; "
             "requests: the GetEntry loop without a cache on 4 branches, less the same "
             "entries read from the local copy right after (decompression and the loop "
             "taken off)", request_decoded=False, first_s=float(d["first"]),
        open_samples=tuple(float(o) for o in d["opens"]),
        local_open_samples=tuple(float(o) for o, _ in d["local"]),
        local_read_samples=tuple(float(r) for _, r in d["local"]))


def _fit(n: int, one_s: float, budget_s: float) -> int:
    """How many of ``n`` reads fit in ``budget_s`` at about ``one_s`` each (at least 1)."""
    return int(max(1, min(n, budget_s / max(one_s, 1e-4))))


def _med_ms(xs: Sequence[float]) -> float | None:
    return 1e3 * statistics.median(xs) if xs else None


def _check(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise Cancelled()


__all__ = ["basket_ranges", "measure_clients"]


def default_iterate_error(url: str, tree_name: str) -> str | None:
    """uproot's default ``iterate`` (``step_size="100 MB"``, the default source) over the link,
    on the first basket of the tree's first branch that has one (its key pre-pass reads that
    basket's key, then the basket: two round trips): ``None`` where it reads, else the error
    in one line, as a user's program would meet it."""
    import uproot

    from ..rootfile import one_line

    try:
        with uproot.open(url) as f:
            tree = f[tree_name]
            branch = next((b for b in tree.itervalues(recursive=True)
                           if b.num_baskets > 0 and not b.branches), None)
            if branch is None:
                return None
            stop = int(branch.member("fBasketEntry")[1]) or 1
            for _ in tree.iterate([branch.name], step_size="100 MB", entry_stop=stop):
                break
    except Exception as exc:  # the failure is the finding: said, not raised
        return f"{type(exc).__name__}: {one_line(exc)}"
    return None
