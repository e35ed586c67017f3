"""What-ifs from keywords: the one translator from plain values to the scenarios of
``hep_advisor.models.scenarios``, for ``Advice.predict`` (notebooks), the TUI's what-if controls and
``hep-advisor predict``'s options.

The scenarios apply in one fixed order, whatever order the keywords come in: first what the
data are (merged files, compression, the bytes read), then how they are read (read-ahead,
request size), then where they are (another site, other devices, pre-staged), and the page
cache last (a cached file is read from memory wherever it lives).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hep_advisor.models import scenarios as sc
from hep_advisor.models.scenarios import Baseline, PredictionPoint, Scenario
from hep_advisor.models.throughput import ThroughputModel

#: The keywords :func:`scenarios_from` understands, in the order their scenarios apply.
#: ``merge_mb``: merge the files to about MB each; ``compression``: recompress with ZLIB, LZ4,
#: ZSTD, LZMA or none (``compression_factor``, ``decompress_mb_per_s``: its factor and
#: decompression rate, default measured or assumed); ``branches``: read only the branches
#: holding this fraction of the bytes; ``read_ahead_kb``: the device read-ahead;
#: ``request_bytes``: every read this size (a TTreeCache); ``site``: the same analysis on
#: another site (a ``SiteSpec`` or its TOML file); ``storage``: the data on other devices
#: (``LAYOUT[:COUNT[:KIND]]`` or ``KIND``: ``separate:4``, ``raid5:4:hdd``, ``nvme``);
#: ``prestage``: copied ahead of use to such a storage; ``cached``: in the page cache.
KEYWORDS = ("merge_mb", "compression", "compression_factor", "decompress_mb_per_s",
            "branches", "read_ahead_kb", "request_bytes", "site", "storage", "prestage",
            "cached")


def scenarios_from(baseline: Baseline, *, separately: bool = False,
                   **kw: Any) -> list[Scenario]:
    """The scenarios the keywords ask for, combined into one (or one per keyword with
    ``separately``); ``[]``: no change.  A keyword given as ``None``, ``False`` or ``0`` asks
    for nothing.  Unknown keywords, bad values and changes that cannot apply to ``baseline``
    raise ``ValueError`` with one line naming the keyword or the value."""
    unknown = set(kw) - set(KEYWORDS)
    if unknown:
        raise ValueError(f"unknown what-if keyword(s): {', '.join(sorted(unknown))}; expected "
                         f"{', '.join(KEYWORDS)}")
    out: list[Scenario] = []
    if kw.get("merge_mb"):
        out.append(sc.merge(float(kw["merge_mb"])))
    if kw.get("compression"):
        factor, rate = kw.get("compression_factor"), kw.get("decompress_mb_per_s")
        out.append(sc.compression(str(kw["compression"]),
                                  None if factor is None else float(factor),
                                  None if rate is None else float(rate)))
    elif kw.get("compression_factor") or kw.get("decompress_mb_per_s"):
        raise ValueError("compression_factor and decompress_mb_per_s need compression")
    if kw.get("branches"):
        out.append(sc.branches(float(kw["branches"])))
    if kw.get("read_ahead_kb"):
        out.append(sc.read_ahead(float(kw["read_ahead_kb"])))
    if kw.get("request_bytes"):
        out.append(sc.request_size(float(kw["request_bytes"])))
    if kw.get("site"):
        out.append(sc.site(_site_spec(kw["site"])))
    if kw.get("storage"):
        spec, sd, statement = sc.parse_storage(str(kw["storage"]), baseline)
        out.append(sc.devices(spec, sd, (statement,)))
    if kw.get("prestage"):
        spec, sd, statement = sc.parse_storage(str(kw["prestage"]), baseline)
        out.append(sc.prestaged(spec, sd if sd is not None else sc.SPEC_SD, (statement,)))
    if kw.get("cached"):
        out.append(sc.cached())
    if not separately and len(out) > 1:
        out = [sc.combine(*out)]
    for s in out:  # a change that cannot apply says so now, as one line
        s.apply(baseline)
    return out


def scenario_from(baseline: Baseline, **kw: Any) -> Scenario | None:
    """The keywords' scenarios combined into one (``None``: no change); see
    :func:`scenarios_from`."""
    out = scenarios_from(baseline, **kw)
    return out[0] if out else None


def predict(model: ThroughputModel, baseline: Baseline,
            workers: int | Sequence[int] | None = None, level: float = 0.9,
            **kw: Any) -> list[PredictionPoint]:
    """Predictions at each worker count (default: the baseline's) with the what-if applied,
    and the speed-up over the baseline at the baseline's own worker count."""
    counts = [workers] if isinstance(workers, int) else list(workers or [baseline.workers])
    scenario = scenario_from(baseline, **kw) or Scenario("as now", "no change", lambda b: b)
    out: list[PredictionPoint] = []
    for n in counts:
        pinned = sc.combine(scenario, sc.workers(int(n)), name=scenario.name)
        out.extend(sc.predict_scenarios(model, baseline, [pinned], level=level)[0].predictions)
    return out


def _site_spec(value: Any) -> Any:
    """A ``SiteSpec`` as it is, or one read from its TOML file (``SpecError``, a
    ``ValueError``, names the file and key when it cannot be used)."""
    if isinstance(value, (str, Path)):
        from hep_advisor.models.sites import load_site

        return load_site(str(value))
    return value
