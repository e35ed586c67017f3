"""Child processes of the parallel read tests: started as a fresh process would run, and
always ended, whatever happened.

The tests fork (where the platform can), so a child inherits the advisor's heap: the probe's
results, basket maps, earlier tests' objects.  Python's collector in the child would walk all
of it at every full collection, and touching each object's header copies its page (copy on
write): measured here, a one-worker job forked after a 30 s calibration read 0.57-0.86 of
what the same job read from a fresh process, and 0.85-1.05 with the inherited heap frozen
(``benchmarks/lab/check_fork_heap.py``).  A user's worker is a fresh process, so the inherited
objects are frozen (``gc.freeze``: moved to a generation the collector never walks) while the
children start, and unfrozen in the parent after.

:func:`call_bounded` runs one step of a test in a child that is ended at a deadline: a step
whose time cannot be foreseen (uproot writing a sample of 592 branches, LZMA-compressed: 10 s
for 375 entries where 100 branches took 0.7 s) then ends with its share.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing as mp
import signal
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any


def start_processes(procs: Sequence[Any]) -> None:
    """Start ``procs`` (``multiprocessing`` processes) with the parent's heap frozen, so that a
    forked child's collector walks only its own objects, as in a fresh process."""
    gc.freeze()
    try:
        for p in procs:
            p.start()
    finally:
        gc.unfreeze()


def end_processes(procs: Iterable[Any], grace_s: float = 5.0) -> None:
    """Terminate, then kill, every process still alive, and reap them all."""
    for p in procs:
        if p.is_alive():
            p.terminate()
            p.join(timeout=grace_s)
        if p.is_alive():  # pragma: no cover - a child that ignores SIGTERM
            p.kill()
            p.join(timeout=grace_s)


#: In a child of :func:`call_bounded`: its connection to the parent (what
#: :func:`report_partial` sends through)
_TO_PARENT: list[Any] = []
#: A message that carries a partial result, not the child's last
_PARTIAL = "partial"


def report_partial(key: str, value: Any) -> None:
    """In a child of :func:`call_bounded`: send ``value`` (measured so far) to the parent,
    which keeps it where the child is ended before its result (``TimeoutError.partial``).
    Elsewhere: nothing."""
    if _TO_PARENT:
        with contextlib.suppress(Exception):  # a value that does not pickle: not sent
            _TO_PARENT[0].send((_PARTIAL, key, value))


def _child_call(conn: Any, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    _TO_PARENT[:] = [conn]
    try:
        result: tuple[bool, Any] = (True, fn(*args))
    except BaseException as exc:  # every failure goes back to the parent
        result = (False, exc)
    try:
        conn.send(result)
    except Exception as exc:  # an exception that does not pickle
        conn.send((False, RuntimeError(str(exc) or type(exc).__name__)))
    finally:
        conn.close()


def call_bounded(fn: Callable[..., Any], args: tuple[Any, ...], seconds: float,
                 check: Callable[[], None] | None = None, poll_s: float = 0.25) -> Any:
    """``fn(*args)`` in a forked child process, its result (or its exception) back; where it
    takes more than ``seconds`` the child is ended and :class:`TimeoutError` raised.  ``check``
    is called every ``poll_s`` while waiting (it may raise: cancellation).  The child is ended
    whatever happens (Ctrl-C included); what it wrote is the caller's to remove.  What the
    child sent with :func:`report_partial` before it was ended is the ``TimeoutError``'s
    ``partial`` (a dict).  Where the platform cannot fork, ``fn`` runs here, unbounded."""
    if "fork" not in mp.get_all_start_methods():
        return fn(*args)
    ctx: Any = mp.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child_call, args=(send, fn, args), daemon=True)
    end = time.monotonic() + max(seconds, 0.0)
    partial: dict[str, Any] = {}
    try:
        start_processes([proc])
        send.close()
        while True:
            while not receive.poll(max(0.0, min(poll_s, end - time.monotonic()))):
                if check is not None:
                    check()
                if time.monotonic() >= end:
                    exc = TimeoutError(f"more than {seconds:.2g} s")
                    exc.partial = partial  # type: ignore[attr-defined]
                    raise exc
            try:
                message = receive.recv()
            except EOFError:
                proc.join(timeout=5.0)
                raise RuntimeError(f"the child process ended without a result (exit code "
                                   f"{proc.exitcode})") from None
            if len(message) == 3 and message[0] == _PARTIAL:
                partial[message[1]] = message[2]
                continue
            ok, value = message
            break
    finally:
        end_processes([proc])
        receive.close()
    if not ok:
        raise value
    return value
