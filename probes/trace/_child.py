"""Run a command as a child, then record its wall time, CPU time, I/O counters and exit code.

Run as a script (``python _child.py RESULT.json COMMAND [ARGS...]``) under the tracer, so that
it imports nothing of the project.  The child's ``/proc/<pid>/io`` and the time its main
thread waited for a core (``schedstat``) are read before it is reaped (``waitid(WNOWAIT)``);
its CPU times (it and its reaped descendants) come from ``wait4``.
Ctrl-C reaches the child (same process group); this wrapper waits for it and passes its exit
status on (128 + signal number for a signal).
"""

import json
import os
import signal
import sys
import time


def _io(pid: int) -> dict:
    out = {}
    try:
        with open(f"/proc/{pid}/io") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                out[key.strip()] = int(value)
    except (OSError, ValueError):
        pass
    return out


def main() -> int:
    result, argv = sys.argv[1], sys.argv[2:]
    record: dict = {"start_epoch": time.time()}
    t0 = time.monotonic()
    try:
        pid = os.posix_spawnp(argv[0], argv, os.environ)
    except OSError as e:
        record["error"] = f"{argv[0]}: {e.strerror or e}"
        with open(result, "w") as fh:
            json.dump(record, fh)
        return 127
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the child gets it; wait for it
    try:  # for the sampler outside the trace (probes.trace.sampler)
        with open(result + ".pid", "w") as fh:
            fh.write(f"{pid} {t0}")
    except OSError:
        pass
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    record["wall_s"] = time.monotonic() - t0
    record["io"] = _io(pid)
    try:  # on a core, waiting for one (run queue), in ns: the main thread only
        with open(f"/proc/{pid}/schedstat") as fh:
            fields = fh.read().split()
            record["main_cpu_s"] = int(fields[0]) / 1e9
            record["runqueue_s"] = int(fields[1]) / 1e9
    except (OSError, ValueError, IndexError):
        pass
    _, status, usage = os.wait4(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    record.update(exit_code=code if code >= 0 else 128 - code,
                  user_s=usage.ru_utime, system_s=usage.ru_stime, pid=pid)
    with open(result, "w") as fh:
        json.dump(record, fh)
    return int(record["exit_code"])


if __name__ == "__main__":
    sys.exit(main())
