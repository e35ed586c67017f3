"""The Python recorder on a remote file read through fsspec-xrootd: the requests it answers
asynchronously (the file's open, its stat, the server's query before a vector read), made by
fsspec's own thread while the program's main thread waits, are recorded as that thread's
waits, and the time split counts them.  Real XRootD behind the emulated 20 ms link; a tiny
file.  Skipped where the bench cannot run."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from testbench.remote import RemoteBench, availability

pytestmark = pytest.mark.remote

_OK, _REASON = availability()
if not _OK:
    pytest.skip(f"remote bench unavailable: {_REASON}", allow_module_level=True)
if any(importlib.util.find_spec(m) is None for m in ("XRootD", "fsspec_xrootd")):
    pytest.skip("the `remote` extra is not installed", allow_module_level=True)

RTT_S = 0.02
PROGRAM = """\
import sys, uproot
with uproot.open(sys.argv[1]) as f:
    print(len(f["Events"].arrays(["x"], library="np")["x"]))
"""


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    import uproot

    src = tmp_path_factory.mktemp("remote") / "waits.root"
    with uproot.recreate(src, compression=None) as f:
        f.mktree("Events", {"x": np.float32})
        f["Events"].extend({"x": np.arange(5000, dtype=np.float32)})
    with RemoteBench(rtt_ms=RTT_S * 1e3, rate_mbit=100.0) as b:
        served = b.add_file(src)
        yield b.root_url(served.name)


def test_asynchronous_requests_are_recorded_waits(url: str, tmp_path: Path) -> None:
    from hep_advisor.pipeline.trace import threads
    from hep_advisor.probes.trace import run_traced

    prog = tmp_path / "read.py"
    prog.write_text(PROGRAM)
    cap = run_traced([sys.executable, str(prog), url], recorder="python")
    assert cap.exit_code == 0
    # fsspec's thread opened the file and asked the server before reading: round trips the
    # main thread waited for, outside its own reads
    assert cap.other_waits, "no asynchronous request recorded"
    assert sum(d for _, d in cap.other_waits) >= RTT_S
    tt = threads(cap)
    if tt is not None:  # sampled: their waits count as the other threads' time
        assert tt.other_waits >= RTT_S
