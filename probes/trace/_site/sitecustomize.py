"""Records the reads of ROOT files made from Python, in the traced program's own processes.

Put first on ``PYTHONPATH`` by ``hep-advisor trace`` (the Python recorder) with
``HEP_ADVISOR_TRACE_DIR`` set; without that variable it does nothing.  It imports nothing of
the project and changes nothing the program sees: it wraps, when the program imports them,

- fsspec's ``LocalFileSystem.cat_file`` (uproot's default source for local files opens,
  seeks and reads once per call; its ``cat_ranges`` calls it once per range): the bytes
  recorded are those the buffered file read from the system (its raw position), as a system
  call tracer sees them, and a range the buffered file reads in two calls (the whole blocks,
  then one buffer fill for the rest) as two reads, its time split between them by bytes;
- uproot's ``FileResource.get`` (``handler=uproot.MultithreadedFileSource``) and the ranges
  uproot's ``MemmapSource`` hands out (``handler=uproot.MemmapSource``: page faults, no read
  calls);
- pyxrootd's ``File.open``/``read``/``vector_read`` (``root://``: uproot's ``XRootDSource``
  and fsspec-xrootd both read through them; a vector read is one request of several ranges);
  a synchronous ``open`` or ``stat`` is timed as a wait for data (its round trips);
- uproot's ``Chunk.wait``: the time a thread waited for data not yet there.

Each process appends its records to ``rec-<pid>.jsonl`` in that directory when it exits, with
the seconds the recorder itself spent (its cost).  At exit, ROOT's own counters
(``TFile::GetFileBytesRead``/``GetFileReadCalls``) are written too where ROOT was imported,
with ROOT's own reads noted by a ``TVirtualPerfStats`` installed once ROOT sets up its C++
side (``_finalSetup``).
An existing ``sitecustomize`` later on the path is then imported as usual.
"""

import os
import sys
import threading
import time

_DIR = os.environ.get("HEP_ADVISOR_TRACE_DIR")
_RECS: list = []  # (kind, path, offset, size, start_epoch, duration_s, thread, group)
_WAITS: list = []  # (thread, start_epoch, duration_s)
_OPENS: dict = {}
_COST = [0.0]
_OPEN_S = [0.0]  # seconds in opening and closing files (fsspec's cat_file)
_READ_CPU = [0.0]  # CPU seconds of the threads inside the wrapped local reads
_READ_CPU_MAIN = [0.0]  # of which the main thread's (its id is the process id)
_GROUP = [0]
_MAIN = threading.main_thread().ident
_PATCHED: set = set()
_clock = time.perf_counter
_thread_time = time.thread_time
_tid = threading.get_native_id  # the kernel's thread id, as strace and /proc name it
_epoch = time.time


_REAL: dict = {}


def _real(path):
    """``os.path.realpath``, once per name (it stats every component)."""
    got = _REAL.get(path)
    if got is None:
        got = _REAL[path] = os.path.realpath(path)
    return got


def _add(kind, path, offset, size, t0, dt, group=0):
    c0 = _clock()
    _RECS.append((kind, path, int(offset), int(size), t0, dt, _tid(), group))
    _COST[0] += _clock() - c0


def _read_cpu(cpu):
    _READ_CPU[0] += cpu
    if _tid() == os.getpid():
        _READ_CPU_MAIN[0] += cpu


def _patch_fsspec_local(mod):
    cls = mod.LocalFileSystem
    inner = cls.cat_file

    def cat_file(self, path, start=None, end=None, **kwargs):
        if kwargs or start is None or end is None or start < 0 or end < 0:
            e0, c0, u0 = _epoch(), _clock(), _thread_time()
            data = inner(self, path, start, end, **kwargs)
            got, block = len(data), 0
        else:  # as fsspec's own, and what the buffered file read from the OS (its raw tell)
            e0, c0, u0 = _epoch(), _clock(), _thread_time()
            f = self.open(path, "rb")
            opened = _clock() - c0
            try:
                f.seek(start)
                data = f.read(end - f.tell())
                raw = getattr(getattr(f, "f", None), "raw", None)
                got = raw.tell() - start if raw is not None else len(data)
                block = getattr(raw, "_blksize", 0) or 0
            finally:
                c2 = _clock()
                f.close()
                _OPEN_S[0] += opened + _clock() - c2
        dt = _clock() - c0
        c1 = _clock()
        _read_cpu(_thread_time() - u0)
        p = _real(self._strip_protocol(path))
        _OPENS[p] = _OPENS.get(p, 0) + 1
        _COST[0] += _clock() - c1
        whole = len(data) - len(data) % block if block > 0 and got > len(data) else 0
        if 0 < whole < got:  # the buffered file made two read calls: the whole blocks
            # directly, then one buffer fill for the rest (the time split by bytes)
            _add("read", p, start, whole, e0, dt * whole / got)
            _add("read", p, start + whole, got - whole, e0 + dt * whole / got,
                 dt * (got - whole) / got)
        else:
            _add("read", p, start or 0, got, e0, dt)
        return data

    cls.cat_file = cat_file


def _patch_uproot_file(mod):
    res = mod.FileResource
    get = res.get

    def wrapped_get(self, start, stop):
        e0, c0, u0 = _epoch(), _clock(), _thread_time()
        data = get(self, start, stop)
        _read_cpu(_thread_time() - u0)
        _add("read", _real(self.file_path), start, len(data), e0, _clock() - c0)
        return data

    res.get = wrapped_get
    mm = mod.MemmapSource
    chunk, chunks = mm.chunk, mm.chunks

    def mm_chunk(self, start, stop):
        _add("mapped", _real(self.file_path), start, stop - start, _epoch(), 0.0)
        return chunk(self, start, stop)

    def mm_chunks(self, ranges, notifications):
        t = _epoch()
        for start, stop in ranges:
            _add("mapped", _real(self.file_path), start, stop - start, t, 0.0)
        return chunks(self, ranges, notifications)

    mm.chunk, mm.chunks = mm_chunk, mm_chunks


def _patch_chunk(mod):
    cls = mod.Chunk
    wait = cls.wait

    def wrapped_wait(self, insist=True):
        if self._raw_data is not None:
            return wait(self, insist)
        e0, c0 = _epoch(), _clock()
        try:
            return wait(self, insist)
        finally:
            _WAITS.append((_tid(), e0, _clock() - c0))

    cls.wait = wrapped_wait


def _timed_callback(callback, done):
    if callback is None:
        return None

    def inner(*args, **kwargs):
        done()
        return callback(*args, **kwargs)

    return inner


def _waited_callback(callback):
    """``callback`` noting the time from now to its call as a wait of the calling thread (a
    request answered asynchronously: its round trips waited for by whoever needs the answer,
    e.g. fsspec's own thread with the program's main thread blocked on it)."""
    tid, e0, c0 = _tid(), _epoch(), _clock()

    def done():
        _WAITS.append((tid, e0, _clock() - c0))

    return _timed_callback(callback, done)


def _patch_xrootd_fs(mod):
    """pyxrootd's ``FileSystem`` requests (stat, query, ...): round trips, waited for."""
    cls = mod.FileSystem
    for name in ("stat", "query", "ping", "locate", "dirlist", "protocol", "statvfs"):
        inner = getattr(cls, name, None)
        if inner is None:
            continue

        def wrapped(self, *args, _inner=inner, callback=None, **kwargs):
            if callback is not None:
                return _inner(self, *args, callback=_waited_callback(callback), **kwargs)
            e0, c0 = _epoch(), _clock()
            try:
                return _inner(self, *args, **kwargs)
            finally:
                _WAITS.append((_tid(), e0, _clock() - c0))

        setattr(cls, name, wrapped)


def _patch_xrootd(mod):
    cls = mod.File
    open_, read, vread, stat = cls.open, cls.read, cls.vector_read, cls.stat

    def wrapped_open(self, url, flags=0, mode=0, timeout=0, callback=None):
        self._hep_url = url
        _OPENS[url] = _OPENS.get(url, 0) + 1
        if callback is not None:
            return open_(self, url, flags, mode, timeout, _waited_callback(callback))
        e0, c0 = _epoch(), _clock()  # the round trips of an open: waited for, as a read
        try:
            return open_(self, url, flags, mode, timeout)
        finally:
            _WAITS.append((_tid(), e0, _clock() - c0))

    def wrapped_stat(self, force=False, timeout=0, callback=None):
        if callback is not None:
            return stat(self, force, timeout, _waited_callback(callback))
        e0, c0 = _epoch(), _clock()
        try:
            return stat(self, force, timeout)
        finally:
            _WAITS.append((_tid(), e0, _clock() - c0))

    def wrapped_read(self, offset=0, size=0, timeout=0, callback=None):
        url = getattr(self, "_hep_url", "?")
        e0, c0 = _epoch(), _clock()
        if callback is None:
            out = read(self, offset, size, timeout)
            _add("read", url, offset, len(out[1] or b""), e0, _clock() - c0)
            return out

        def done():
            _add("read", url, offset, size, e0, _clock() - c0)

        return read(self, offset, size, timeout, _timed_callback(callback, done))

    def wrapped_vread(self, chunks, timeout=0, callback=None):
        url = getattr(self, "_hep_url", "?")
        _GROUP[0] += 1
        group = _GROUP[0]
        e0, c0 = _epoch(), _clock()

        def done():
            dt = _clock() - c0
            for off, size in chunks:
                _add("read", url, off, size, e0, dt, group)

        if callback is None:
            out = vread(self, chunks, timeout)
            done()
            return out
        return vread(self, chunks, timeout, _timed_callback(callback, done))

    cls.open, cls.read, cls.vector_read = wrapped_open, wrapped_read, wrapped_vread
    cls.stat = wrapped_stat


#: A ``TVirtualPerfStats`` that notes each of ROOT's file reads (``TFile::ReadBuffer(s)``
#: call ``gPerfStats->FileReadEvent`` with the read's start, local and remote files alike):
#: its start, duration, position (a remote file without a TTreeCache: ``GetRelOffset`` less
#: the length; otherwise -1, not told), length, thread.
_PERF_CPP = r"""
#include "TVirtualPerfStats.h"
#include "TFile.h"
#include "TTimeStamp.h"
#include <mutex>
#include <cstring>
#include <sstream>
#include <string>
#include <unistd.h>
#include <sys/syscall.h>
namespace hep_advisor_trace {
class Reads : public TVirtualPerfStats {
   std::mutex fMu;
   std::ostringstream fOut;
   Long64_t fBytes = 0, fEvents = 0;
public:
   void FileReadEvent(TFile *f, Int_t len, Double_t start) override {
      double now = TTimeStamp().AsDouble();
      long tid = syscall(SYS_gettid);
      std::lock_guard<std::mutex> g(fMu);
      fOut.precision(17);
      // a remote file's read (TNetXNGFile, TDavixFile) leaves its position after the bytes
      // read; a local TFile's is before or after, depending on the call, and a TTreeCache's
      // vector read (ReadBuffers) is one event for several ranges: not told (-1)
      const char *name = f ? f->GetName() : "?";
      Long64_t at = (f && strstr(name, "://") && !f->GetCacheRead()) ?
                    f->GetRelOffset() - len : -1;
      fOut << start << ' ' << now - start << ' ' << at << ' ' << len << ' ' << tid << ' '
           << name << '\n';
   }
   std::string Dump() { std::lock_guard<std::mutex> g(fMu); return fOut.str(); }
   void SetFile(TFile *) override {}
   void SimpleEvent(EEventType) override {}
   void PacketEvent(const char *, const char *, const char *, Long64_t, Double_t, Double_t,
                    Double_t, Long64_t) override {}
   void FileEvent(const char *, const char *, const char *, const char *, Bool_t) override {}
   void FileOpenEvent(TFile *, const char *, Double_t) override {}
   void UnzipEvent(TObject *, Long64_t, Double_t, Int_t, Int_t) override {}
   void RateEvent(Double_t, Double_t, Long64_t, Long64_t) override {}
   void SetBytesRead(Long64_t n) override { fBytes = n; }
   Long64_t GetBytesRead() const override { return fBytes; }
   void SetNumEvents(Long64_t n) override { fEvents = n; }
   Long64_t GetNumEvents() const override { return fEvents; }
   void PrintBasketInfo(Option_t *) const override {}
   void SetLoaded(TBranch *, size_t) override {}
   void SetLoaded(size_t, size_t) override {}
   void SetLoadedMiss(TBranch *, size_t) override {}
   void SetLoadedMiss(size_t, size_t) override {}
   void SetMissed(TBranch *, size_t) override {}
   void SetMissed(size_t, size_t) override {}
   void SetUsed(TBranch *, size_t) override {}
   void SetUsed(size_t, size_t) override {}
   void UpdateBranchIndices(TObjArray *) override {}
};
Reads *Install() {
   if (gPerfStats) return nullptr;  // the program's own: left alone
   auto *r = new Reads();
   gPerfStats = r;
   return r;
}
}
"""
_PERF: list = [None]
_PERF_TRIED = [False]


def _install_perf(root):
    """ROOT's reads, noted by a ``TVirtualPerfStats`` (the main thread's: ``gPerfStats`` is
    per thread), installed once ROOT's C++ side is set up."""
    c0 = _clock()
    try:
        if root.gInterpreter.Declare(_PERF_CPP):
            _PERF[0] = root.hep_advisor_trace.Install()
    finally:
        _COST[0] += _clock() - c0


def _root_reads():
    perf = _PERF[0]
    if not perf:
        return
    c0 = _clock()
    for line in str(perf.Dump()).splitlines():
        start, dur, off, size, tid, path = line.split(" ", 5)
        _RECS.append(("rootread", path, int(off), int(size), float(start), float(dur),
                      int(tid), 0))
    _PERF[0] = None
    _COST[0] += _clock() - c0


def _hook_root(mod):
    """ROOT's own atexit clean-up runs before one registered earlier: read its counters
    before it (registered after ROOT's import, so run first).  ROOT sets up its C++ side
    lazily (``_finalSetup``, on first use): the read recorder goes in right after it."""
    import atexit

    atexit.register(_snapshot_root)
    facade = type(sys.modules.get("ROOT", mod))  # ROOT puts its facade in its place
    setup = getattr(facade, "_finalSetup", None)
    if setup is None:
        return

    def final_setup(self, *args, **kwargs):
        facade._finalSetup = setup  # once (it may be entered again while it runs)
        out = setup(self, *args, **kwargs)
        if _PERF_TRIED[0]:
            return out
        _PERF_TRIED[0] = True
        try:
            _install_perf(self)
        except Exception as e:  # never break the program: said in the log
            _RECS.append(("error", f"ROOT reads: {type(e).__name__}: {e}", 0, 0, 0.0, 0.0,
                          0, 0))
        return out

    facade._finalSetup = final_setup


_HOOKS = {
    "ROOT": _hook_root,
    "fsspec.implementations.local": _patch_fsspec_local,
    "uproot.source.file": _patch_uproot_file,
    "uproot.source.chunk": _patch_chunk,
    "XRootD.client.file": _patch_xrootd,
    "XRootD.client.filesystem": _patch_xrootd_fs,
}


class _Finder:
    """Patches the modules above right after they are first imported."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name not in _HOOKS or name in _PATCHED:
            return None
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return None
        loader = spec.loader
        exec_module = loader.exec_module

        def exec_and_patch(module):
            exec_module(module)
            _PATCHED.add(name)
            try:
                _HOOKS[name](module)
            except Exception as e:  # never break the program: say so in the log
                _RECS.append(("error", f"{name}: {type(e).__name__}: {e}", 0, 0, 0.0, 0.0,
                              0, 0))

        loader.exec_module = exec_and_patch  # type: ignore[method-assign]
        return spec


_ROOT_COUNTS: list = [None]


def _snapshot_root():
    root = sys.modules.get("ROOT")
    if root is None:
        return
    try:
        _ROOT_COUNTS[0] = {"bytes": int(root.TFile.GetFileBytesRead()),
                           "calls": int(root.TFile.GetFileReadCalls())}
        _root_reads()
    except Exception:
        return


def _root_counters():
    if _ROOT_COUNTS[0] is None:
        _snapshot_root()
    return _ROOT_COUNTS[0]


def _dump():
    import json

    path = os.path.join(str(_DIR), f"rec-{os.getpid()}.jsonl")
    try:
        with open(path, "w") as fh:
            json.dump({"pid": os.getpid(), "main": _MAIN, "cost_s": _COST[0],
                       "open_s": _OPEN_S[0], "read_cpu_s": _READ_CPU[0],
                       "read_cpu_main_s": _READ_CPU_MAIN[0],
                       "opens": _OPENS, "root": _root_counters(),
                       "patched": sorted(_PATCHED)}, fh)
            fh.write("\n")
            for r in _RECS:
                fh.write(json.dumps(r))
                fh.write("\n")
            for w in _WAITS:
                fh.write(json.dumps(("wait", "", 0, 0, w[1], w[2], w[0], 0)))
                fh.write("\n")
    except OSError:
        pass


def _forget():
    """A forked child starts with its parent's records: it keeps only its own."""
    _RECS.clear()
    _WAITS.clear()
    _OPENS.clear()
    _COST[0] = 0.0
    _OPEN_S[0] = 0.0
    _READ_CPU[0] = 0.0
    _READ_CPU_MAIN[0] = 0.0


def _install():
    import atexit

    c0 = _clock()
    sys.meta_path.insert(0, _Finder)
    atexit.register(_dump)
    os.register_at_fork(after_in_child=_forget)
    _COST[0] += _clock() - c0


def _chain():
    """Import the next ``sitecustomize`` on the path (this one shadows it)."""
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None and spec.origin != __file__:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


if _DIR:
    _install()
    try:
        _chain()
    except Exception as e:  # the user's own sitecustomize failed: as without the recorder
        sys.stderr.write(f"sitecustomize: {type(e).__name__}: {e}\n")
