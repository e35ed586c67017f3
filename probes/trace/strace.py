"""The system calls of a traced program, from ``strace`` output.

:func:`strace_argv` builds the tracer's command line (every process and thread, absolute
timestamps, each call's duration, file descriptors shown with their paths, no buffer
contents); :func:`parse` turns its output into :class:`Syscall` records of reads and opens.
The offset of a plain ``read``/``readv`` comes from following each descriptor's position
(``openat`` starts it at 0, ``lseek`` sets it, reads advance it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

#: The calls traced: opens, reads (with their positions) and mappings of files.
TRACED_CALLS = ("openat", "open", "read", "pread64", "readv", "preadv", "preadv2", "lseek",
                "close", "mmap")


@dataclass(frozen=True)
class Syscall:
    """One completed call on a file: ``call`` is ``open``, ``read`` or ``mmap``."""

    pid: int
    call: str
    path: str
    offset: int
    size: int  # bytes returned by a read (0 for an open)
    start: float  # epoch seconds
    duration: float  # seconds


def strace_argv(strace: str, output: str, command: Sequence[str],
                seccomp: bool = True) -> list[str]:
    argv = [strace, "-f", "-qq", "-y", "-s", "0", "-ttt", "-T"]
    if seccomp:  # only the traced calls stop the program: a smaller overhead
        argv.append("--seccomp-bpf")
    return [*argv, "-e", "trace=" + ",".join(TRACED_CALLS), "-o", output, *command]


_LINE = re.compile(r"^(?:(\d+)\s+)?(\d+\.\d+)\s+(.*)$")
_CALL = re.compile(r"^(\w+)\((.*)$")
_RESUMED = re.compile(r"^<\.\.\. (\w+) resumed>(.*)$")
_FD = re.compile(r"^(-?\d+)<(.*?)>(?=[,)])")
_RESULT = re.compile(r"\)\s+=\s+(-?\d+)(?:<(.*?)>)?(?:\s+\w+\s+\([^)]*\))?\s+<(\d+\.\d+)>$")
_DURATION = re.compile(r"<(\d+\.\d+)>$")


def _unescape(path: str) -> str:
    if "\\" not in path:
        return path
    return path.encode("latin-1", "backslashreplace").decode("unicode_escape").encode(
        "latin-1").decode("utf-8", "replace")


def _last_int_arg(args: str) -> int:
    """The last argument of a call (``pread64``'s and ``preadv``'s offset)."""
    body = args[: args.rfind(")")]
    if body.count(",") == 0:
        return 0
    tail = body.rsplit(",", 1)[1].strip()
    try:
        return int(tail, 0)
    except ValueError:
        return 0


def parse(lines: Iterable[str]) -> list[Syscall]:
    """Reads, opens and mappings of files, in the order they completed."""
    pending: dict[str, tuple[float, str]] = {}
    pos: dict[tuple[str, str], int] = {}  # (fd, path) -> position
    out: list[Syscall] = []
    for raw in lines:
        m = _LINE.match(raw.rstrip("\n"))
        if not m:
            continue
        pid_text, ts_text, rest = m.groups()
        pid_key = pid_text or "0"
        ts = float(ts_text)
        r = _RESUMED.match(rest)
        if r:
            if pid_key not in pending:
                continue
            ts, head = pending.pop(pid_key)
            text = head + r.group(2)
        else:
            if rest.endswith("<unfinished ...>"):
                pending[pid_key] = (ts, rest[: -len("<unfinished ...>")].rstrip())
                continue
            text = rest
        c = _CALL.match(text)
        if not c:
            continue
        call, args = c.groups()
        res = _RESULT.search(text)
        if not res:
            continue
        value = int(res.group(1))
        duration = float(res.group(3))
        pid = int(pid_key)
        if call in ("openat", "open"):
            if value >= 0 and res.group(2):
                path = _unescape(res.group(2))
                pos[(str(value), path)] = 0
                out.append(Syscall(pid, "open", path, 0, 0, ts, duration))
            continue
        if call == "mmap":
            parts = args.split(", ")
            if len(parts) >= 6:
                fd = _FD.match(parts[4] + ",")
                if fd and int(fd.group(1)) >= 0:
                    length = int(parts[1], 0) if parts[1].isdigit() else 0
                    out.append(Syscall(pid, "mmap", _unescape(fd.group(2)),
                                       _last_int_arg(args), length, ts, duration))
            continue
        fd = _FD.match(args)
        if not fd:
            continue
        key = (fd.group(1), _unescape(fd.group(2)))
        if call == "lseek":
            if value >= 0:
                pos[key] = value
        elif call == "close":
            pos.pop(key, None)
        elif value >= 0 and call in ("read", "readv"):
            offset = pos.get(key, 0)
            pos[key] = offset + value
            out.append(Syscall(pid, "read", key[1], offset, value, ts, duration))
        elif value >= 0 and call in ("pread64", "preadv", "preadv2"):
            body = args[: args.rfind(")")]
            fields = [f.strip() for f in body.rsplit(",", 2)]
            raw_off = fields[-2] if call == "preadv2" else fields[-1]
            try:
                offset = int(raw_off, 0)
            except ValueError:
                offset = 0
            out.append(Syscall(pid, "read", key[1], offset, value, ts, duration))
    return out
