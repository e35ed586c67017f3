"""Remote files: ``root://`` (XRootD) and ``http(s)://`` (XrdHttp, any HTTP server with ranges).

Clients with one interface (:class:`RemoteClient`: open, read, vector read, ping, close) over
the PyPI ``xrootd`` bindings and ``requests``; the listing of remote directories and globs
(``root://`` only: plain HTTP has no directory listing); and :func:`probe_remote`: a file's
size, the server's kind and version, and the cost of opening it.

Figures measured here are remote: the server's page cache and disk are behind the link and not
the client's, so nothing here claims cold or warm.  Never raises for bad input in the listing
functions: a path that cannot be used becomes a one-line cause.
"""

from __future__ import annotations

import fnmatch
import os
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

ROOT_SCHEMES = ("root", "xroot", "roots")
HTTP_SCHEMES = ("http", "https")
#: seconds a remote call may take before it counts as failed
TIMEOUT_S = 60
ROOT_SUFFIX = ".root"


class RemoteError(Exception):
    """A remote call failed; the message is one line naming the cause."""


def scheme_of(url: str) -> str:
    """``root`` or ``http`` (the protocol family), or ``''`` for anything else."""
    s = urlsplit(url).scheme.lower()
    if s in ROOT_SCHEMES:
        return "root"
    if s in HTTP_SCHEMES:
        return "http"
    return ""


def _root_split(url: str) -> tuple[str, str]:
    """``root://host:port//path`` -> (``root://host:port``, ``/path``)."""
    parts = urlsplit(url)
    path = parts.path
    while path.startswith("//"):
        path = path[1:]
    return f"{parts.scheme}://{parts.netloc}", path or "/"


def _message(status: Any) -> str:
    """An XRootD status as one short line (without the client's '[ERROR] Server responded
    with an error:' preamble)."""
    text = str(status.message).strip().splitlines()[0] if str(status.message).strip() else ""
    for noise in ("[ERROR] Server responded with an error: ", "[ERROR] "):
        text = text.replace(noise, "")
    return text or "XRootD error"


class RemoteClient(Protocol):
    url: str

    def open(self) -> None: ...

    def read(self, offset: int, size: int) -> int: ...

    def vector_read(self, chunks: Sequence[tuple[int, int]]) -> int: ...

    def stream(self, offset: int, size: int, chunk: int, depth: int) -> tuple[int, float]: ...

    def ping(self) -> None: ...

    def size(self) -> int: ...

    def close(self) -> None: ...


class XRootDClient:
    """One file over ``root://`` with the XRootD client (``pip install xrootd``).  The client
    shares one connection per server among all its open files."""

    def __init__(self, url: str) -> None:
        from XRootD import client

        self.url = url
        self._client = client
        self.server, self.path = _root_split(url)
        self.fs = client.FileSystem(self.server)
        self.file: Any = None

    @staticmethod
    def _check(status: Any, what: str) -> None:
        if not status.ok:
            raise RemoteError(f"{what}: {_message(status)}")

    def open(self) -> None:
        from XRootD.client.flags import OpenFlags

        self.file = self._client.File()
        status, _ = self.file.open(self.url, OpenFlags.READ, timeout=TIMEOUT_S)
        self._check(status, "open")

    def read(self, offset: int, size: int) -> int:
        status, data = self.file.read(int(offset), int(size), timeout=TIMEOUT_S)
        self._check(status, "read")
        return len(data)

    def stream(self, offset: int, size: int, chunk: int, depth: int) -> tuple[int, float]:
        """Read ``size`` bytes as ``chunk``-byte reads, ``depth`` in flight: (bytes after the
        first completed read, seconds from that completion to the last)."""
        from concurrent.futures import ThreadPoolExecutor

        parts = [(o, min(chunk, offset + size - o)) for o in range(offset, offset + size, chunk)]

        def one(part: tuple[int, int]) -> tuple[float, int]:
            n = self.read(*part)
            return time.perf_counter(), n

        with ThreadPoolExecutor(max(1, depth)) as pool:
            done = list(pool.map(one, parts))
        first = min(done)
        last = max(t for t, _ in done)
        return sum(n for _, n in done) - first[1], last - first[0]

    def vector_read(self, chunks: Sequence[tuple[int, int]]) -> int:
        status, info = self.file.vector_read([(int(o), int(s)) for o, s in chunks],
                                             timeout=TIMEOUT_S)
        self._check(status, "vector read")
        return int(sum(c.length for c in info.chunks))

    def ping(self) -> None:
        status, _ = self.fs.ping(timeout=TIMEOUT_S)
        self._check(status, "ping")

    def size(self) -> int:
        status, info = self.fs.stat(self.path, timeout=TIMEOUT_S)
        self._check(status, "stat")
        return int(info.size)

    def server_kind(self) -> str:
        from XRootD.client.flags import QueryCode

        status, resp = self.fs.query(QueryCode.CONFIG, "version", timeout=TIMEOUT_S)
        version = resp.decode(errors="replace").strip() if status.ok and resp else ""
        return f"XRootD {version}".strip() if version and version != "version" else "XRootD"

    def close(self) -> None:
        if self.file is not None:
            self.file.close(timeout=TIMEOUT_S)
            self.file = None


class HTTPClient:
    """One file over ``http(s)://`` with ``requests`` (one keep-alive connection): ranges, and
    multi-range GETs as the vector read where the server answers them with a multipart body."""

    def __init__(self, url: str) -> None:
        import requests

        self.url = url
        self.session = requests.Session()
        # https://: trust what the readers trust.  uproot's HTTPSource, aiohttp (fsspec's
        # source) and the ping socket here use Python's ssl, which reads SSL_CERT_FILE;
        # requests would use REQUESTS_CA_BUNDLE or its own bundle: given SSL_CERT_FILE, every
        # request here is verified against it
        ca = os.environ.get("SSL_CERT_FILE")
        self.verify: str | bool = ca if ca and os.path.isfile(ca) else True
        self.headers: dict[str, str] = {}
        self._sock: Any = None
        self._ping_request = b""
        self._t_first = 0.0

    def _get(self, headers: dict[str, str]) -> Any:
        import requests

        try:
            r = self.session.get(self.url, headers=headers, timeout=TIMEOUT_S,
                                 verify=self.verify)
        except requests.RequestException as exc:
            raise RemoteError(f"GET: {_why(exc)}") from None
        if r.status_code not in (200, 206):
            raise RemoteError(f"GET: HTTP {r.status_code} {r.reason}")
        return r

    def open(self) -> None:
        import requests

        try:
            r = self.session.head(self.url, timeout=TIMEOUT_S, allow_redirects=True,
                                  verify=self.verify)
        except requests.RequestException as exc:
            raise RemoteError(f"HEAD: {_why(exc)}") from None
        if r.status_code != 200:
            raise RemoteError(f"HEAD: HTTP {r.status_code} {r.reason}")
        self.headers = dict(r.headers)

    def read(self, offset: int, size: int) -> int:
        r = self._get({"Range": f"bytes={offset}-{offset + size - 1}"})
        if r.status_code != 206:
            raise RemoteError("the server ignores byte ranges (HTTP 200 to a Range request)")
        return len(r.content)

    def vector_read(self, chunks: Sequence[tuple[int, int]]) -> int:
        ranges = ",".join(f"{o}-{o + s - 1}" for o, s in chunks)
        r = self._get({"Range": f"bytes={ranges}"})
        ctype = r.headers.get("Content-Type", "")
        if r.status_code != 206 or (len(chunks) > 1 and "multipart/byteranges" not in ctype):
            raise RemoteError("the server does not answer multi-range requests")
        return len(r.content)

    def stream(self, offset: int, size: int, chunk: int, depth: int) -> tuple[int, float]:
        """One range GET of ``size`` bytes, streamed: (bytes after the first piece, seconds
        from the first piece to the last)."""
        import requests

        headers = {"Range": f"bytes={offset}-{offset + size - 1}"}
        try:
            with self.session.get(self.url, headers=headers, timeout=TIMEOUT_S,
                                  stream=True, verify=self.verify) as r:
                if r.status_code != 206:
                    raise RemoteError(f"GET: HTTP {r.status_code} {r.reason}")
                first_t, first_n, total = 0.0, 0, 0
                for piece in r.iter_content(1 << 16):
                    total += len(piece)
                    if not first_n:
                        first_t, first_n = time.perf_counter(), len(piece)
                last = time.perf_counter()
        except requests.RequestException as exc:
            raise RemoteError(f"GET: {_why(exc)}") from None
        return total - first_n, last - first_t

    def ping(self) -> None:
        """A 1-byte range GET on a socket kept open, timed to the first byte of the answer
        (HTTP has no ping; ``requests`` adds about a millisecond of its own per call, and
        parsing the headers in Python a fifth of one): the rest of the answer is read after."""
        if self._sock is None:
            self._connect()
        assert self._sock is not None
        try:
            self._sock.sendall(self._ping_request)
            first = self._sock.recv(65536)
            self._t_first = time.perf_counter()
            self._drain(first)
        except RemoteError:
            self._close_sock()
            raise
        except OSError as exc:
            self._close_sock()
            raise RemoteError(f"GET: {exc.strerror or type(exc).__name__}") from None

    def timed_ping(self) -> float:
        """Seconds from sending a ping to the first byte of its answer."""
        t0 = time.perf_counter()
        self.ping()
        return self._t_first - t0

    def _connect(self) -> None:
        import socket
        import ssl

        parts = urlsplit(self.url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        sock = socket.create_connection((parts.hostname or "", port), timeout=TIMEOUT_S)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if parts.scheme == "https":
            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=parts.hostname)
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        self._ping_request = (f"GET {target or '/'} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
                              "Range: bytes=0-0\r\n\r\n").encode()
        self._sock = sock

    def _drain(self, data: bytes) -> None:
        """Read the rest of one answer (headers, then Content-Length bytes)."""
        assert self._sock is not None
        while b"\r\n\r\n" not in data:
            more = self._sock.recv(65536)
            if not more:
                raise OSError(0, "connection closed")
            data += more
        head, _, body = data.partition(b"\r\n\r\n")
        status = head.split(b"\r\n", 1)[0].split()
        if len(status) < 2 or status[1] not in (b"200", b"206"):
            raise RemoteError(f"GET: HTTP {b' '.join(status[1:]).decode(errors='replace')}")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        while len(body) < length:
            more = self._sock.recv(65536)
            if not more:
                raise OSError(0, "connection closed")
            body += more

    def _close_sock(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def size(self) -> int:
        if not self.headers:
            self.open()
        try:
            return int(self.headers["Content-Length"])
        except (KeyError, ValueError):
            raise RemoteError("the server gives no Content-Length") from None

    def server_kind(self) -> str:
        if not self.headers:
            self.open()
        return self.headers.get("Server", "HTTP server (unnamed)")

    def close(self) -> None:
        self.session.close()
        self._close_sock()


def _why(exc: Exception) -> str:
    """A failed request in a few words (an untrusted certificate says what to do)."""
    import requests

    if isinstance(exc, requests.exceptions.SSLError):
        return ("SSLError: the server's certificate is not trusted here (point SSL_CERT_FILE "
                "at its CA)")
    return type(exc).__name__


def client_for(url: str) -> XRootDClient | HTTPClient:
    kind = scheme_of(url)
    if kind == "root":
        try:
            return XRootDClient(url)
        except ImportError:
            raise RemoteError("root:// needs the XRootD client (pip install xrootd)") from None
    if kind == "http":
        try:
            return HTTPClient(url)
        except ImportError:
            raise RemoteError("http(s):// needs requests (pip install requests)") from None
    raise RemoteError(f"unsupported URL scheme {urlsplit(url).scheme!r} "
                      "(root://, xroot://, http://, https://)")


def read_head(url: str, size: int) -> bytes:
    """The first ``size`` bytes of a remote file (``OSError`` with the cause if it fails)."""
    client = client_for(url)
    try:
        client.open()
        if isinstance(client, XRootDClient):
            status, data = client.file.read(0, size, timeout=TIMEOUT_S)
            client._check(status, "read")
            return bytes(data)
        r = client._get({"Range": f"bytes=0-{size - 1}"})
        return bytes(r.content[:size])
    except RemoteError as exc:
        raise OSError(str(exc)) from None
    finally:
        client.close()


# -- listing ------------------------------------------------------------------------------------

def _has_magic(s: str) -> bool:
    return any(c in s for c in "*?[")


def unreachable(url: str, timeout_s: float = 10.0) -> str:
    """Why the server of ``url`` takes no TCP connection ('' when it does): a quick check, so
    that a server that is down is one line at once rather than the client's retries."""
    import socket

    parts = urlsplit(url)
    default = 1094 if scheme_of(url) == "root" else (443 if parts.scheme == "https" else 80)
    try:
        host, port = parts.hostname or "", parts.port or default
    except ValueError:
        return "bad port in the URL"
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
    except OSError as exc:
        cause = exc.strerror or type(exc).__name__
        return f"cannot connect to {host}:{port}: {cause.lower()}"
    return ""


def list_remote(url: str) -> tuple[list[tuple[str, int]], list[tuple[str, str]]]:
    """The ROOT files behind a remote file, directory (recursive) or glob: ``([(url, size)],
    [(url, cause)])``.  ``http(s)://``: files only (HTTP has no directory listing)."""
    kind = scheme_of(url)
    if not kind:
        return [], [(url, f"unsupported URL scheme {urlsplit(url).scheme!r} "
                          "(root://, xroot://, http://, https://)")]
    down = unreachable(url)
    if down:
        return [], [(url, down)]
    try:
        client = client_for(url)
    except RemoteError as exc:
        return [], [(url, str(exc))]
    if isinstance(client, HTTPClient):
        if _has_magic(urlsplit(url).path):
            return [], [(url, "HTTP has no directory listing: name the files (no patterns)")]
        try:
            client.open()
            return [(url, client.size())], []
        except RemoteError as exc:
            return [], [(url, str(exc))]
        finally:
            client.close()
    return _list_xrootd(client)


def _list_xrootd(client: XRootDClient) -> tuple[list[tuple[str, int]], list[tuple[str, str]]]:
    from XRootD.client.flags import DirListFlags, StatInfoFlags

    fs, server = client.fs, client.server
    found: list[tuple[str, int]] = []
    errors: list[tuple[str, str]] = []

    def url_of(path: str) -> str:
        return f"{server}/{path}" if path.startswith("/") else f"{server}//{path}"

    def listdir(path: str) -> list[tuple[str, bool, int]] | None:
        status, listing = fs.dirlist(path, DirListFlags.STAT, timeout=TIMEOUT_S)
        if not status.ok:
            errors.append((url_of(path), _message(status)))
            return None
        out = []
        for e in listing or []:
            is_dir = bool(e.statinfo.flags & StatInfoFlags.IS_DIR)
            out.append((e.name, is_dir, int(e.statinfo.size)))
        return sorted(out)

    def walk(path: str, explicit: bool) -> None:
        before = len(found)
        stack = [path]
        while stack:
            d = stack.pop()
            entries = listdir(d)
            if entries is None:
                continue
            sub = []
            for name, is_dir, size in entries:
                full = d.rstrip("/") + "/" + name
                if is_dir:
                    sub.append(full)
                elif name.endswith(ROOT_SUFFIX):
                    found.append((url_of(full), size))
            stack.extend(reversed(sub))
        if explicit and len(found) == before:
            errors.append((url_of(path), "no ROOT files (*.root) in this directory"))

    path = client.path
    if _has_magic(path):
        parts = path.strip("/").split("/")
        bases = ["/"]
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            nxt = []
            for b in bases:
                if not _has_magic(part):
                    nxt.append(b.rstrip("/") + "/" + part)
                    continue
                for name, is_dir, size in listdir(b) or []:
                    if fnmatch.fnmatchcase(name, part):
                        full = b.rstrip("/") + "/" + name
                        if last and not is_dir:
                            found.append((url_of(full), size))
                        elif is_dir:
                            nxt.append(full)
            bases = nxt
        n0 = len(found)
        for b in bases:
            st, info = fs.stat(b, timeout=TIMEOUT_S)
            if st.ok and info.flags & StatInfoFlags.IS_DIR:
                walk(b, explicit=False)
            elif st.ok:
                found.append((url_of(b), int(info.size)))
        if not found and n0 == 0 and not errors:
            errors.append((client.url, "the pattern matches nothing"))
        return found, errors
    status, info = fs.stat(path, timeout=TIMEOUT_S)
    if not status.ok:
        return [], [(client.url, _message(status))]
    if info.flags & StatInfoFlags.IS_DIR:
        walk(path, explicit=True)
        return found, errors
    return [(client.url, int(info.size))], []


# -- probe --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RemoteFileProbe:
    """One remote file: its size, the server's kind, and the open cost (seconds, median of
    ``opens`` opens on an established connection, and the first one, which may also pay the
    connection and login)."""

    url: str
    scheme: str
    server: str
    size_bytes: int
    first_open_s: float
    open_s: float
    opens: int


def probe_remote(url: str, opens: int = 5) -> RemoteFileProbe:
    """Size, server kind and open cost of ``url``; raises :class:`RemoteError` (one line)."""
    client = client_for(url)
    times = []
    try:
        for _ in range(max(1, opens) + 1):
            t0 = time.perf_counter()
            client.open()
            times.append(time.perf_counter() - t0)
            if len(times) == 1:
                size = client.size()
                server = client.server_kind()
            if isinstance(client, XRootDClient):
                client.close()
    finally:
        client.close()
    return RemoteFileProbe(url=url, scheme=scheme_of(url), server=server, size_bytes=size,
                           first_open_s=times[0],
                           open_s=statistics.median(times[1:]) if len(times) > 1 else times[0],
                           opens=len(times) - 1)


__all__ = ["HTTPClient", "RemoteError", "RemoteFileProbe", "XRootDClient", "client_for",
           "list_remote", "probe_remote", "scheme_of"]
