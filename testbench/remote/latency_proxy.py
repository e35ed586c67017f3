"""A TCP proxy that delays each direction by a set time: the latency half of the emulated link.

These kernels have no ``netem``, so the link's bandwidth comes from TBF shaping on a veth pair
(:mod:`.netns`) and its latency from this proxy.  Each chunk read from one side is written to the
other ``delay`` seconds after it arrived (one reader and one writer thread per direction), so a
request/response pays ``2 * delay`` on top of the path's own round trip, and a bulk transfer
flows at the shaped rate.  The proxy ends TCP on both sides: the sender's window never sees the
delay (slow start and window-limited throughput are not emulated; a single stream gets the full
rate at any latency).  What a window does to one stream on a long link (its rate capped at
window / round trip, so that parallel streams gain) can be set instead as a rate per connection
and direction (``conn_rate_bps``, bytes/s; 0: none), paced by the writer; the veth's TBF still
caps the sum.

It runs as its own process (``python -m testbench.remote.latency_proxy SPEC``, SPEC a JSON
object: listeners, each ``{"name", "listen": [host, port], "listen_ns", "connect": [host,
port], "connect_ns", "delayed"}``, an optional probe server ``{"ns", "listen": [host, port]}``
and ``delay_s``), prints one JSON line with the bound ports once it listens, then takes
commands on stdin: ``delay SECONDS`` (for chunks read from then on), ``connrate BYTES_PER_S``
(0: none), ``stats`` (a JSON line of bytes and connections per listener), ``quit``.  It exits
when stdin closes or its parent dies.

The probe server (inside the far namespace) answers 9-byte requests, an op byte and a
big-endian uint64 ``n``: ``E`` echoes one byte (a round trip), ``S`` sends ``n`` bytes (a
download), ``R`` reads ``n`` bytes, then answers one byte (an upload).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import queue
import signal
import socket
import struct
import sys
import threading
import time
from typing import Any

from .netns import in_netns

CHUNK = 256 * 1024
QUEUE_CHUNKS = 256  # at most 64 MiB held per direction: then the reader stops, TCP pushes back
PACE = 16 * 1024  # with a rate per connection, data goes out in slices of this size
PROBE_HEADER = struct.Struct("!cQ")
_PR_SET_PDEATHSIG = 1
_PR_SET_TIMERSLACK = 29


def _prctl(option: int, value: int) -> None:
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


class _Stats:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.up = 0  # client -> server
        self.down = 0
        self.connections = 0

    def add(self, up: bool, n: int) -> None:
        with self.lock:
            if up:
                self.up += n
            else:
                self.down += n


class Proxy:
    def __init__(self, spec: dict[str, Any]) -> None:
        self.delay = float(spec.get("delay_s", 0.0))
        self.conn_rate = float(spec.get("conn_rate_bps", 0.0))
        self.spec = spec
        self.stats: dict[str, _Stats] = {}
        self.ports: dict[str, int] = {}
        self._servers: list[socket.socket] = []

    # -- listening ---------------------------------------------------------------------------

    def _listen(self, ns: str | None, host: str, port: int) -> socket.socket:
        with in_netns(ns):
            srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind((host, port))
        srv.listen(64)
        self._servers.append(srv)
        return srv

    def start(self) -> None:
        for lst in self.spec.get("listeners", []):
            srv = self._listen(lst.get("listen_ns"), *lst["listen"])
            name = lst["name"]
            self.stats[name] = _Stats()
            self.ports[name] = srv.getsockname()[1]
            threading.Thread(target=self._accept, args=(srv, lst), daemon=True).start()
        probe = self.spec.get("probe")
        if probe:
            srv = self._listen(probe.get("ns"), *probe["listen"])
            self.ports["probe-server"] = srv.getsockname()[1]
            threading.Thread(target=self._accept_probe, args=(srv,), daemon=True).start()

    def _accept(self, srv: socket.socket, lst: dict[str, Any]) -> None:
        while True:
            try:
                client, _ = srv.accept()
            except OSError:
                return
            threading.Thread(target=self._connect, args=(client, lst), daemon=True).start()

    def _connect(self, client: socket.socket, lst: dict[str, Any]) -> None:
        try:
            with in_netns(lst.get("connect_ns")):
                server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            server.settimeout(10)
            server.connect(tuple(lst["connect"]))
            server.settimeout(None)
        except OSError:
            client.close()
            return
        for s in (client, server):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        stats = self.stats[lst["name"]]
        with stats.lock:
            stats.connections += 1
        delayed = bool(lst.get("delayed", True))
        done = threading.Barrier(2, action=lambda: _close(client, server))
        for src, dst, up in ((client, server, True), (server, client, False)):
            threading.Thread(target=self._pipe, args=(src, dst, up, delayed, stats, done),
                             daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket, up: bool, delayed: bool,
              stats: _Stats, done: threading.Barrier) -> None:
        q: queue.Queue[tuple[float, bytes] | None] = queue.Queue(QUEUE_CHUNKS)
        writer = threading.Thread(target=self._write, args=(q, src, dst), daemon=True)
        writer.start()
        try:
            while True:
                data = src.recv(CHUNK)
                if not data:
                    break
                stats.add(up, len(data))
                q.put((time.monotonic() + (self.delay if delayed else 0.0), data))
        except OSError:
            _abort(src, dst)
        q.put(None)
        writer.join()
        with contextlib.suppress(threading.BrokenBarrierError):
            done.wait()

    def _write(self, q: queue.Queue[tuple[float, bytes] | None], src: socket.socket,
               dst: socket.socket) -> None:
        failed = False
        free = 0.0  # with a rate per connection: when the next slice may go
        while True:
            item = q.get()
            if item is None:
                break
            if failed:
                continue
            due, data = item
            rate = self.conn_rate
            slices = [data] if rate <= 0 else [data[i:i + PACE] for i in range(0, len(data),
                                                                              PACE)]
            for part in slices:
                start = max(due, free) if rate > 0 else due
                wait = start - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                try:
                    dst.sendall(part)
                except OSError:
                    failed = True
                    _abort(src, dst)
                    break
                if rate > 0:
                    free = start + len(part) / rate
        if not failed:
            with contextlib.suppress(OSError):
                dst.shutdown(socket.SHUT_WR)

    # -- the probe server --------------------------------------------------------------------

    def _accept_probe(self, srv: socket.socket) -> None:
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            threading.Thread(target=_serve_probe, args=(conn,), daemon=True).start()

    # -- control -----------------------------------------------------------------------------

    def stats_json(self) -> str:
        out = {}
        for name, st in self.stats.items():
            with st.lock:
                out[name] = {"up": st.up, "down": st.down, "connections": st.connections}
        return json.dumps({"stats": out, "delay_s": self.delay,
                           "conn_rate_bps": self.conn_rate})

    def serve_commands(self) -> None:
        for line in sys.stdin:
            words = line.split()
            if not words:
                continue
            if words[0] == "delay" and len(words) == 2:
                self.delay = max(0.0, float(words[1]))
                print(json.dumps({"delay_s": self.delay}), flush=True)
            elif words[0] == "connrate" and len(words) == 2:
                self.conn_rate = max(0.0, float(words[1]))
                print(json.dumps({"conn_rate_bps": self.conn_rate}), flush=True)
            elif words[0] == "stats":
                print(self.stats_json(), flush=True)
            elif words[0] == "quit":
                break
            else:
                print(json.dumps({"error": f"unknown command {line.strip()!r}"}), flush=True)
        for srv in self._servers:
            srv.close()


def _close(*socks: socket.socket) -> None:
    for s in socks:
        with contextlib.suppress(OSError):
            s.close()


def _abort(*socks: socket.socket) -> None:
    for s in socks:
        with contextlib.suppress(OSError):
            s.shutdown(socket.SHUT_RDWR)


def _recv_exact(conn: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        part = conn.recv(n - len(buf))
        if not part:
            raise EOFError
        buf += part
    return bytes(buf)


def _serve_probe(conn: socket.socket) -> None:
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    zeros = memoryview(bytes(CHUNK))
    with conn:
        try:
            while True:
                op, n = PROBE_HEADER.unpack(_recv_exact(conn, PROBE_HEADER.size))
                if op == b"E":
                    conn.sendall(b"e")
                elif op == b"S":
                    while n > 0:
                        k = min(n, CHUNK)
                        conn.sendall(zeros[:k])
                        n -= k
                elif op == b"R":
                    while n > 0:
                        part = conn.recv(min(n, CHUNK))
                        if not part:
                            return
                        n -= len(part)
                    conn.sendall(b"r")
                else:
                    return
        except (OSError, EOFError):
            return


def main(argv: list[str]) -> int:
    spec = json.loads(argv[0])
    _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    _prctl(_PR_SET_TIMERSLACK, 1000)  # 1 us: the delays' sleeps end on time
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    proxy = Proxy(spec)
    proxy.start()
    print(json.dumps({"ports": proxy.ports}), flush=True)
    proxy.serve_commands()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
