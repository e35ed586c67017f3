"""Every read test, once: its name, label, budget weight, engines, result and run order.

This list is the single source the rest derives from: the budget weights of
:class:`~probes.readtests.runner.Session`, the run order of
:func:`~probes.readtests.calibrate.calibrate`, the labels of the progress bars and of the
TUI's Calibrate tab, the rows of the calibration view.  Plain data, import-light (no numpy,
no uproot): the CLI and the TUI read the labels before anything heavy is loaded.

Each test has a *step*, ``"module:function"`` inside ``hep_advisor.probes.readtests``, called as
``step(ctx, share_s)`` with a :class:`~probes.readtests.runner.Context` and the seconds of
the budget it may take; what it returns is stored in the :class:`Calibration` field ``field``
(where ``field`` is ``None`` the result is combined with others: the cold and warm sequential
reads and the request sweep make ``Calibration.raw_read``).
"""

from __future__ import annotations

from dataclasses import dataclass

BOTH = ("uproot", "root")
UPROOT = ("uproot",)


@dataclass(frozen=True)
class ReadTest:
    """One read test: ``name`` is what ``ProgressEvent.test``, ``Skipped.test`` and the
    budget use; ``weight`` its share of the budget (renormalised over the tests that run);
    ``engines`` those it runs with (with another engine its share flows to the tests after
    it, and ``why_not``, where given, is listed in ``Calibration.skipped``); ``min_s`` the
    least time it is worth starting with."""

    name: str
    label: str
    weight: float
    step: str
    field: str | None
    result: str
    engines: tuple[str, ...] = BOTH
    why_not: str = ""
    #: seconds the smallest useful measurement takes (on small files): every test's share is
    #: its minimum and its weight's part of the budget beyond the minimums; a test whose
    #: minimum is more than what is left of the budget is skipped, with the reason
    min_s: float = 0.1


#: The read tests, in the order they run.
READ_TESTS: tuple[ReadTest, ...] = (
    ReadTest("raw_read", "storage, cold", 0.12, "steps:raw_read", None, "Measurement",
             min_s=0.05),
    ReadTest("request_sweep", "request sizes", 0.09, "steps:request_sweep_", "request_sweep",
             "RequestPoint", min_s=0.1),
    ReadTest("concurrency", "concurrency", 0.11, "steps:concurrency", "concurrency",
             "ConcurrencyPoint", min_s=0.2),
    ReadTest("open_cost", "open cost", 0.06, "steps:open_cost", "open_overhead_s",
             "OpenOverhead", min_s=0.5),
    ReadTest("first_touch", "fresh memory", 0.005, "steps:first_touch", "first_touch",
             "FirstTouch", min_s=0.1),
    ReadTest("decompression", "decompression", 0.10, "steps:decompression", "decompression",
             "DecompressionPoint", min_s=0.2),
    ReadTest("event_loop", "event loop", 0.19, "steps:event_loop", "event_loop", "EventLoop",
             min_s=0.2),
    ReadTest("call_cost", "per-call cost", 0.07, "steps:call_cost", "call_cost", "CallCost",
             UPROOT, min_s=1.5),
    ReadTest("basket_cost", "per-basket cost", 0.03, "steps:basket_cost", "basket_cost",
             "BasketCost", UPROOT,
             "measured for uproot only: ROOT's per-basket cost (C++) differs from uproot's "
             "and is not separated here", min_s=0.8),
    ReadTest("key_cost", "per-key cost", 0.02, "steps:key_cost", "key_cost", "KeyCost",
             UPROOT, "measured for uproot only: ROOT reads no basket keys before its "
             "baskets", min_s=0.3),
    ReadTest("collector", "garbage collector", 0.03, "collector:step", "collector",
             "Collector", UPROOT, "measured for uproot only: the cycles it collects are "
             "uproot's models of each file", min_s=2.5),
    ReadTest("parallel_loop", "parallel loop", 0.10, "steps:parallel_loop", "parallel_loop",
             "ParallelPoint", UPROOT, min_s=0.6),
    # weights of the request sweep (0.16) and the concurrency sweep (0.16) lowered for it, and
    # by 0.01 each again for the per-key test (the request sweep's by 0.005 more for the
    # first-touch test, and by 0.015 each for the garbage collector's test); the event
    # loop's (0.22) by 0.03 for the parallel loop's (0.07): at --budget 30 its share of 2 s
    # left out the k workers' run on 4 files of 1 MB (one run of one worker took 1 s).  The
    # collector runs before the parallel loop: the loop's workers are fresh processes that
    # pay the collections per file too, and its plan counts them (planned without them, the
    # single worker's run on 16 files of 0.3 MB overran its share by their 20 ms a file and
    # left the k workers' run out)
    ReadTest("conversion", "TTree -> RNTuple", 0.08, "conversion:conversion", "conversion",
             "ConversionPoint", min_s=0.5),
    ReadTest("page_cache", "page cache", 0.04, "steps:page_cache", None, "Measurement",
             min_s=0.05),
)

#: name -> test
BY_NAME: dict[str, ReadTest] = {t.name: t for t in READ_TESTS}
#: name -> budget weight
WEIGHTS: dict[str, float] = {t.name: t.weight for t in READ_TESTS}
#: name -> the seconds its smallest useful measurement takes
MIN_S: dict[str, float] = {t.name: t.min_s for t in READ_TESTS}
#: name -> label, in the order the tests run
LABELS: dict[str, str] = {t.name: t.label for t in READ_TESTS}


def tests_for(engine: str) -> tuple[ReadTest, ...]:
    """The tests that run with ``engine``, in order."""
    return tuple(t for t in READ_TESTS if engine in t.engines)


__all__ = ["BY_NAME", "LABELS", "MIN_S", "READ_TESTS", "WEIGHTS", "ReadTest", "tests_for"]
