"""The advice on the demo datasets: what ``hep-advisor report`` shows when given no path.

Asking for these is asking for the demo: the default demo datasets are written to the cache
directory on first use (``ensure_demo``) and reused afterwards.  The core
(``hep_advisor.pipeline.advise``) never writes them itself.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hep_advisor.demo.datasets import Progress
    from hep_advisor.findings.advice import Report
    from hep_advisor.probes.readtests.runner import ProgressCallback

#: ``hep_advisor.pipeline.advise.DEFAULT_BUDGET_S`` (the core is imported when a report runs: it is
#: heavy)
DEFAULT_BUDGET_S = 60.0
#: The demo datasets a report covers when it is given no path: (label, path under the demo).
DEMO_DATASETS = (("small files", "small_files"), ("plain merge", "merged"),
                 ("LZMA file", "flat/pythia_lzma7.root"))


def demo_dataset(name: str = "small_files", progress: Progress | None = None) -> Path:
    """The path of one default demo dataset (``small_files``, ``merged`` or
    ``flat/pythia_lzma7.root``, ...), the demo written first if it is not there yet:
    ``hep_advisor.advise(demo_dataset())``."""
    from hep_advisor.demo.datasets import ensure_demo

    path = ensure_demo(progress=progress) / name
    if not path.exists():
        raise ValueError(f"the demo has no dataset {name!r}; it has "
                         f"{', '.join(rel for _, rel in DEMO_DATASETS)}, ...")
    return path


def demo_report(budget_s: float = DEFAULT_BUDGET_S, progress: ProgressCallback | None = None,
                cancel: threading.Event | None = None, cache: bool = True,
                recalibrate: bool = False, engine: str = "uproot",
                demo_dir: str | Path | None = None) -> Report:
    """The report on the demo datasets (small files, their plain merge, the LZMA file),
    sharing ``budget_s`` between them.  ``demo_dir``: demo datasets already written there
    (default: the default demo, written on first use)."""
    from hep_advisor.demo.datasets import ensure_demo
    from hep_advisor.findings.advice import Report
    from hep_advisor.pipeline.advise import advise
    from hep_advisor.probes import probe_site

    root = Path(demo_dir) if demo_dir is not None else ensure_demo()
    site = probe_site([str(root)])
    each = budget_s / len(DEMO_DATASETS)
    advice = []
    for label, rel in DEMO_DATASETS:
        if cancel is not None and cancel.is_set():
            break
        advice.append(advise([str(root / rel)], budget_s=each, engine=engine, site=site,
                             progress=progress, cancel=cancel, cache=cache,
                             recalibrate=recalibrate, label=label))
    return Report(site=site, advice=tuple(advice))


__all__ = ["DEMO_DATASETS", "demo_dataset", "demo_report"]
