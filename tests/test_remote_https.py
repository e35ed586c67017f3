"""``https://`` on the remote bench: XrdHttp with TLS, its certificate self-signed by the bench
(``RemoteBench(https=True)``), behind an emulated 10 ms, 100 Mbit/s link.  Clients trust it
through ``SSL_CERT_FILE`` (Python's ssl: uproot's ``HTTPSource``, aiohttp under fsspec, and
``hep-advisor``'s own probe) or an explicit SSL context passed to fsspec; without it they
refuse, and ``hep-advisor`` says why in one line.  Clients run in child processes: aiohttp
builds its default SSL context once, when imported.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from testbench.remote import RemoteBench, availability, cleanup_stale

pytestmark = pytest.mark.remote

_OK, _REASON = availability()
if not _OK:
    pytest.skip(f"remote bench unavailable: {_REASON}", allow_module_level=True)
if any(importlib.util.find_spec(m) is None for m in ("aiohttp", "fsspec", "requests")):
    pytest.skip("the `remote` extra is not installed", allow_module_level=True)

REPO = Path(__file__).resolve().parents[1]
RTT_MS = 10.0
N = 20_000

#: argv: URL; prints one JSON line: what each reader got
CHILD = r"""
import json, sys
import uproot
url = sys.argv[1]
out = {}
for name, opts in (("fsspec", {}), ("HTTPSource", {"handler": uproot.source.http.HTTPSource})):
    try:
        with uproot.open(url, **opts) as f:
            out[name] = float(f["Events"]["x"].array(library="np").sum())
    except Exception as exc:
        out[name] = type(exc).__name__
sys.path.insert(0, sys.argv[2])
from hep_advisor.probes.readtests.link import measure_link
from hep_advisor.probes.remote_files import RemoteError
try:
    rc = measure_link(url, 6)
    out["rtt_ms"] = rc.rtt_ms
    out["vector"] = rc.vector_reads.supported if rc.vector_reads else None
except RemoteError as exc:
    out["error"] = str(exc)
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RemoteBench, float]]:
    import uproot

    cleanup_stale()
    path = tmp_path_factory.mktemp("https") / "small.root"
    x = np.random.default_rng(9).random(N, dtype=np.float32)
    with uproot.recreate(path) as f:
        f["Events"] = {"x": x, "y": np.arange(N, dtype=np.float64)}
    with RemoteBench(rtt_ms=RTT_MS, rate_mbit=100, https=True) as b:
        b.add_file(path)
        yield b, float(x.sum())


def _child(url: str, ca: str | None) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")}
    if ca is not None:
        env["SSL_CERT_FILE"] = ca
    r = subprocess.run([sys.executable, "-c", CHILD, url, str(REPO)], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    out: dict[str, object] = json.loads(r.stdout.strip().splitlines()[-1])
    return out


def test_readers_trust_the_bench_certificate(bench: tuple[RemoteBench, float]) -> None:
    b, total = bench
    url = b.https_url("small.root")
    assert url.startswith("https://127.0.0.1:")
    out = _child(url, str(b.ca_file))
    assert out["fsspec"] == pytest.approx(total, rel=1e-6)
    assert out["HTTPSource"] == pytest.approx(total, rel=1e-6)
    assert "error" not in out, out
    assert abs(float(out["rtt_ms"]) / RTT_MS - 1) <= 0.10  # type: ignore[arg-type]
    assert out["vector"] is True  # XrdHttp answers multi-range GETs over TLS too
    assert b.stats()["http"]["down"] > 0


def test_untrusted_certificate_is_refused_in_one_line(bench: tuple[RemoteBench, float]) -> None:
    b, _ = bench
    out = _child(b.https_url("small.root"), None)
    assert isinstance(out["fsspec"], str) and isinstance(out["HTTPSource"], str)  # refused
    error = str(out["error"])
    assert "SSL_CERT_FILE" in error and "\n" not in error


def test_explicit_ssl_context_through_fsspec(bench: tuple[RemoteBench, float]) -> None:
    """fsspec's HTTP file system passes ``ssl=`` to aiohttp: no environment needed."""
    import ssl

    import uproot

    b, total = bench
    ctx = ssl.create_default_context(cafile=str(b.ca_file))
    with uproot.open(b.https_url("small.root"), ssl=ctx) as f:
        assert float(f["Events"]["x"].array(library="np").sum()) == pytest.approx(total,
                                                                                rel=1e-6)


def test_plain_http_still_served(bench: tuple[RemoteBench, float]) -> None:
    """XrdHttp tells TLS from plain HTTP on the one port."""
    import requests

    b, _ = bench
    r = requests.get(b.http_url("small.root"), headers={"Range": "bytes=0-3"}, timeout=30)
    assert r.status_code == 206 and r.content == b"root"
