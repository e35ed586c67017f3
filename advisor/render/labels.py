"""Names of the read tests as people read them (the CLI's bars, the TUI's Calibrate tab).
Import-light: the TUI loads it before its first screen."""

from __future__ import annotations

#: ``ProgressEvent.test`` -> label, in the order the tests run.
TEST_LABELS = {
    "raw_read": "storage, cold",
    "request_sweep": "request sizes",
    "concurrency": "concurrency",
    "open_cost": "open cost",
    "decompression": "decompression",
    "event_loop": "event loop",
    "call_cost": "per-call cost",
    "parallel_loop": "parallel loop",
    "basket_cost": "per-basket cost",
    "page_cache": "page cache",
}
