"""Remote data for the test bench: XRootD, XrdHttp and XCache behind an emulated wide-area link.

:mod:`.bench` ties together the network namespaces and TBF shaping (:mod:`.netns`), the latency
proxy (:mod:`.latency_proxy`) and the servers (:mod:`.xrootd`); see :class:`RemoteBench`.
Linux and root only, and Debian's ``xrootd-server`` with ``xrootd-server-plugins``:
:func:`availability` says whether it can run.
"""

from __future__ import annotations

from .bench import RemoteBench, availability, cleanup_stale, remote_bench
from .netns import RemoteBenchError

__all__ = ["RemoteBench", "RemoteBenchError", "availability", "cleanup_stale", "remote_bench"]
