"""Network namespaces, veth pairs and TBF shaping (``ip`` and ``tc``, as root).

Everything this bench makes is named after the process that made it, so that
:func:`stale_namespaces` can find what a killed run left: namespaces
``hep-advisor-<pid>-<n>-<role>`` (deleting one also deletes the veth pairs with an end inside
it).  Sockets are opened inside a namespace by switching the calling thread into it for the
``socket()`` call only (:func:`socket_in`): a socket stays in the namespace it was made in, so
one process can listen on the host's loopback and connect from inside a namespace, or the other
way round.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import shutil
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from ..common import EmulatedDiskError, run_tool

NETNS_PREFIX = "hep-advisor-"
NETNS_DIR = Path("/var/run/netns")
TOOLS = ("ip", "tc", "setpriv")
CLONE_NEWNET = 0x40000000
_NETNS_RE = re.compile(rf"^{re.escape(NETNS_PREFIX)}(\d+)-(\d+)-([a-z]+)$")
_setns_lock = threading.Lock()


class RemoteBenchError(RuntimeError):
    """Setting up, using or removing the remote-data bench failed."""


def tool(argv: list[str], *, check: bool = True, timeout: float = 30.0) -> str:
    """Run ``ip``/``tc``/...; its stdout, or :class:`RemoteBenchError` with its stderr."""
    try:
        return run_tool(argv, check=check, timeout=timeout)
    except EmulatedDiskError as exc:
        raise RemoteBenchError(str(exc)) from exc


def netns_name(tag: str, role: str) -> str:
    return f"{NETNS_PREFIX}{tag}-{role}"


def namespaces() -> list[str]:
    """Names of the named network namespaces (``ip netns list``)."""
    out = tool(["ip", "netns", "list"], check=False)
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def create(name: str) -> None:
    """A fresh namespace with its loopback up."""
    tool(["ip", "netns", "add", name])
    tool(["ip", "-n", name, "link", "set", "lo", "up"])


def pids(name: str) -> list[int]:
    out = tool(["ip", "netns", "pids", name], check=False)
    return [int(p) for p in out.split() if p.isdigit()]


def delete(name: str, errors: list[str]) -> None:
    """Kill what runs inside, then delete the namespace (and the veth ends inside it)."""
    for pid in pids(name):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while pids(name) and time.monotonic() < deadline:
        time.sleep(0.05)
    if name not in namespaces():
        return
    try:
        tool(["ip", "netns", "del", name])
    except RemoteBenchError as exc:
        errors.append(str(exc))


def veth(host_if: str, ns: str, ns_if: str, host_ip: str, ns_ip: str, prefix: int = 30) -> None:
    """A veth pair: ``host_if`` (with ``host_ip``) here, ``ns_if`` (with ``ns_ip``) in ``ns``."""
    tool(["ip", "link", "add", host_if, "type", "veth", "peer", "name", ns_if, "netns", ns])
    tool(["ip", "addr", "add", f"{host_ip}/{prefix}", "dev", host_if])
    tool(["ip", "link", "set", host_if, "up"])
    tool(["ip", "-n", ns, "addr", "add", f"{ns_ip}/{prefix}", "dev", ns_if])
    tool(["ip", "-n", ns, "link", "set", ns_if, "up"])


def tbf_params(rate_bit: float) -> tuple[int, int]:
    """(burst, limit) in bytes for a TBF at ``rate_bit``: a burst of 1 ms of traffic (at least
    16 KiB, so that a few full-size packets pass), and a queue of 100 ms (at least 1 MiB, so that
    a local TCP sender, whose window does not see the proxy's delay, is not cut by drops)."""
    burst = max(16 * 1024, int(rate_bit / 8 * 0.001))
    limit = max(1024 * 1024, int(rate_bit / 8 * 0.100)) + burst
    return burst, limit


def shape(dev: str, rate_bit: float | None, ns: str | None = None) -> None:
    """Put (or replace) a TBF of ``rate_bit`` on ``dev``'s egress; ``None``: remove it."""
    base = ["tc"] if ns is None else ["ip", "netns", "exec", ns, "tc"]
    if rate_bit is None:
        tool([*base, "qdisc", "del", "dev", dev, "root"], check=False)
        return
    burst, limit = tbf_params(rate_bit)
    tool([*base, "qdisc", "replace", "dev", dev, "root", "tbf", "rate", f"{int(rate_bit)}bit",
          "burst", str(burst), "limit", str(limit)])


def qdisc(dev: str, ns: str | None = None) -> str:
    base = ["tc"] if ns is None else ["ip", "netns", "exec", ns, "tc"]
    return tool([*base, "qdisc", "show", "dev", dev], check=False).strip()


def used_ipv4() -> set[str]:
    """The ``a.b.c`` prefixes of the IPv4 addresses and routes of the host namespace."""
    out = tool(["ip", "-4", "-o", "addr", "show"], check=False)
    out += tool(["ip", "-4", "route", "show"], check=False)
    return {m.group(1) for m in re.finditer(r"\b(\d+\.\d+\.\d+)\.\d+", out)}


# -- sockets inside a namespace ---------------------------------------------------------------

def _setns(fd: int) -> None:
    if hasattr(os, "setns"):  # Python >= 3.12
        os.setns(fd, CLONE_NEWNET)
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


@contextlib.contextmanager
def in_netns(name: str | None) -> Iterator[None]:
    """Switch the calling thread into namespace ``name`` (``None``: stay) for the block."""
    if name is None:
        yield
        return
    with _setns_lock:
        own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        target = os.open(NETNS_DIR / name, os.O_RDONLY)
        try:
            _setns(target)
            try:
                yield
            finally:
                _setns(own)
        finally:
            os.close(target)
            os.close(own)


def socket_in(name: str | None, family: int = socket.AF_INET) -> socket.socket:
    """A TCP socket made inside namespace ``name`` (``None``: this thread's)."""
    with in_netns(name):
        return socket.socket(family, socket.SOCK_STREAM)


def connect_in(name: str | None, addr: tuple[str, int], timeout: float = 5.0) -> socket.socket:
    sock = socket_in(name)
    sock.settimeout(timeout)
    try:
        sock.connect(addr)
    except BaseException:
        sock.close()
        raise
    sock.settimeout(None)
    return sock


def port_open(name: str | None, addr: tuple[str, int], timeout: float = 1.0) -> bool:
    try:
        connect_in(name, addr, timeout).close()
    except OSError:
        return False
    return True


# -- availability and stale namespaces --------------------------------------------------------

def status(tag: str) -> tuple[bool, str]:
    """Whether namespaces, veth pairs and TBF work here: makes and deletes a trial namespace."""
    if not sys.platform.startswith("linux"):
        return False, f"network namespaces need Linux (this is {sys.platform})"
    if os.geteuid() != 0:
        return False, "network namespaces and TBF shaping need root"
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        return False, f"missing tools: {', '.join(missing)} (Debian: iproute2, util-linux)"
    name = netns_name(tag, "check")
    errors: list[str] = []
    try:
        create(name)
        tool(["ip", "-n", name, "link", "add", "c0", "type", "veth", "peer", "name", "c1"])
        shape("c0", 1e8, ns=name)
    except RemoteBenchError as exc:
        return False, f"network namespace, veth or tc tbf unavailable: {exc}"
    finally:
        if name in namespaces():
            delete(name, errors)
    return True, "netns, veth and tc tbf work"


def stale_namespaces(is_stale: Callable[[int], bool]) -> list[str]:
    out = []
    for name in namespaces():
        m = _NETNS_RE.match(name)
        if m and is_stale(int(m.group(1))):
            out.append(name)
    return out
