"""XRootD servers for the bench: an origin (``root://`` and, with the XrdHttp plugin, ``http://``)
and an XCache (XrdPss + XrdPfc), each run as ``nobody`` inside a network namespace.

Debian's ``xrootd-server`` (and ``xrootd-server-plugins`` for XrdHttp, XrdPss, XrdPfc) provide
the daemon; it refuses to run as root, so it is started as ``ip netns exec NS setpriv
--reuid=nobody ... xrootd -c CFG`` with a parent-death signal (it dies with the process that
started it).  Its configuration, admin, pid and log directories live in the bench's work
directory, owned by ``nobody``; the data directory must be readable by ``nobody``.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from .netns import RemoteBenchError, port_open

#: Where Debian puts the server plugins (XrdHttp, XrdPss, XrdPfc) for this architecture.
PLUGIN_NAMES = ("libXrdHttp-5.so", "libXrdPss-5.so", "libXrdPfc-5.so")
ROOT_PORT = 1094
HTTP_PORT = 8080
#: XrdPfc's RAM for blocks in memory (``pfc.ram``): the bench never gives it less than 1g.
PFC_RAM = "1g"


def nobody() -> tuple[int, int]:
    pw = pwd.getpwnam("nobody")
    return pw.pw_uid, pw.pw_gid


def plugin_dirs() -> list[Path]:
    dirs = [Path(p) for p in ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
                              "/usr/lib64", "/usr/lib")]
    return [d for d in dirs if d.is_dir()]


def status() -> tuple[bool, str]:
    """Whether the XRootD server and its plugins are installed, and a user ``nobody`` exists."""
    exe = shutil.which("xrootd")
    if exe is None:
        return False, "xrootd is not installed (Debian: apt-get install xrootd-server " \
                      "xrootd-server-plugins)"
    try:
        nobody()
    except KeyError:
        return False, "no user 'nobody' to run xrootd as"
    missing = [p for p in PLUGIN_NAMES if not any((d / p).exists() for d in plugin_dirs())]
    if missing:
        return False, f"xrootd plugins missing: {', '.join(missing)} " \
                      "(Debian: xrootd-server-plugins)"
    version = subprocess.run([exe, "-v"], capture_output=True, text=True, timeout=10)
    return True, f"xrootd {(version.stdout or version.stderr).strip()}"


def make_certificate(directory: Path, days: int = 2) -> tuple[Path, Path]:
    """A self-signed certificate for ``127.0.0.1`` (and ``localhost``) and its key, made with
    ``openssl`` in ``directory``: (certificate, key).  The certificate is its own CA (clients
    trust it with ``SSL_CERT_FILE=<certificate>``); the key is readable by ``nobody`` only."""
    exe = shutil.which("openssl")
    if exe is None:
        raise RemoteBenchError("https needs openssl (Debian: apt-get install openssl)")
    directory.mkdir(parents=True, exist_ok=True)
    cert, key = directory / "cert.pem", directory / "key.pem"
    r = subprocess.run(
        [exe, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
         str(cert), "-days", str(days), "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
         "-addext", "basicConstraints=critical,CA:TRUE"],
        capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        tail = (r.stderr.strip().splitlines() or ["failed"])[-1]
        raise RemoteBenchError(f"openssl could not make the bench's certificate: {tail}")
    uid, gid = nobody()
    directory.chmod(0o755)
    os.chown(key, uid, gid)
    key.chmod(0o600)
    cert.chmod(0o644)
    return cert, key


def origin_config(workdir: Path, data_dir: Path, *, http: bool = True,
                  tls: tuple[Path, Path] | None = None) -> str:
    """The origin: ``root://`` on ``ROOT_PORT``; with ``http`` XrdHttp on ``HTTP_PORT``; with
    ``tls`` (certificate, key) XrdHttp also answers TLS (``https://``) on the same port (it
    tells a TLS handshake from plain HTTP by its first bytes)."""
    lines = [
        "all.export /",
        f"oss.localroot {data_dir}",
        f"all.adminpath {workdir / 'admin'}",
        f"all.pidpath {workdir / 'run'}",
        f"xrd.port {ROOT_PORT}",
    ]
    if tls is not None:
        lines += [f"xrd.tls {tls[0]} {tls[1]}", f"xrd.tlsca certfile {tls[0]}"]
    if http:
        lines.append(f"xrd.protocol XrdHttp:{HTTP_PORT} libXrdHttp.so")
    return "\n".join(lines) + "\n"


def xcache_config(workdir: Path, cache_dir: Path, origin: str, *, ram: str = PFC_RAM,
                  block_size: str = "1m", prefetch: int = 0) -> str:
    """XCache in front of ``origin`` (``host:port``): blocks of ``block_size`` kept in
    ``cache_dir``; ``prefetch``: blocks XrdPfc reads ahead per file (0: none)."""
    return "\n".join([
        "all.export /",
        "ofs.osslib libXrdPss.so",
        "pss.cachelib libXrdPfc.so",
        f"pss.origin {origin}",
        f"oss.localroot {cache_dir}",
        f"pfc.ram {ram}",
        f"pfc.blocksize {block_size}",
        f"pfc.prefetch {prefetch}",
        f"all.adminpath {workdir / 'admin'}",
        f"all.pidpath {workdir / 'run'}",
        f"xrd.port {ROOT_PORT}",
    ]) + "\n"


@dataclass
class XRootDServer:
    """One ``xrootd`` process inside namespace ``ns``, with its own directory ``workdir``."""

    name: str
    ns: str
    workdir: Path
    config: str
    address: str  # where it is reached from the host namespace's side of the veth, or lo
    ports: tuple[int, ...] = (ROOT_PORT,)
    proc: subprocess.Popen[bytes] | None = None
    log: Path = field(init=False)

    def __post_init__(self) -> None:
        self.log = self.workdir / "logs" / "xrootd.log"

    def start(self, timeout_s: float = 30.0) -> None:
        uid, gid = nobody()
        for sub in ("admin", "run", "logs"):
            (self.workdir / sub).mkdir(parents=True, exist_ok=True)
            os.chown(self.workdir / sub, uid, gid)
        self.workdir.chmod(0o755)
        cfg = self.workdir / "xrootd.cfg"
        cfg.write_text(self.config)
        cfg.chmod(0o644)
        argv = ["ip", "netns", "exec", self.ns, "setpriv", f"--reuid={uid}", f"--regid={gid}",
                "--clear-groups", "--pdeathsig=KILL", "xrootd", "-c", str(cfg),
                "-l", str(self.log)]
        with open(self.workdir / "stdout.txt", "wb") as out:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        (self.workdir / "launcher.pid").write_text(str(self.proc.pid))
        deadline = time.monotonic() + timeout_s
        while True:
            if self.proc.poll() is not None:
                raise RemoteBenchError(
                    f"{self.name}: xrootd exited ({self.proc.returncode}): {self.log_tail()}")
            if all(port_open(self.ns, ("127.0.0.1", p), 0.5) for p in self.ports):
                return
            if time.monotonic() > deadline:
                raise RemoteBenchError(f"{self.name}: xrootd not ready after {timeout_s:.0f} s: "
                                       f"{self.log_tail()}")
            time.sleep(0.05)

    def log_tail(self, n: int = 8) -> str:
        lines: list[str] = []
        for path in (self.workdir / "stdout.txt", self.log):
            with contextlib.suppress(OSError):
                lines += path.read_text(errors="replace").splitlines()
        return " | ".join(lines[-n:]) or "(no log)"

    def stop(self, errors: list[str]) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                errors.append(f"{self.name}: xrootd (pid {self.proc.pid}) did not stop")
