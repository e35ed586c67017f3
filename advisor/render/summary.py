"""The short report, the answer first, as plain strings: one line per dataset (where its time
goes), each recommendation with its speed-up and the one command to act, the reader the
figures assume, the model check and where the detail is.

The terminal (:mod:`.short_view`), Markdown and HTML views print these pieces, each in its own
markup, so that they say the same thing in the same words; the full cards (``--verbose``,
``hep-advisor explain CODE``) are one step away.
"""

from __future__ import annotations

import math
import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from hep_advisor._version import __version__
from hep_advisor.findings.advice import Advice, Report, Share, Verdict
from hep_advisor.findings.recommendation import Recommendation
from hep_advisor.render import fmt
from hep_advisor.render import report_parts as parts

#: A limit below this share is shown in "other" (where more than one is).
MIN_SHOWN_SHARE = 0.05
#: A recommendation's paths are printed in its command up to this many characters; beyond,
#: ``PATHS`` stands for them.
MAX_PATHS_CHARS = 160
#: What ``apply`` writes, by the rule's change: the directory name the command suggests.
DEST = {"merge": "merged", "rewrite": "rewritten", "compression": "recompressed"}


# -- shares -----------------------------------------------------------------------------------

def share_percents(shares: Sequence[Share]) -> list[int]:
    """Whole percents that add up to the shares' total (largest remainders): 88.5, 9.9 and
    1.2% print as 89, 10 and 1%, never as 88 + 10 + 1 = 99%."""
    raw = [100 * max(0.0, s.share) for s in shares]
    total = round(sum(raw))
    floors = [math.floor(x) for x in raw]
    left = total - sum(floors)
    order = sorted(range(len(raw)), key=lambda i: -(raw[i] - floors[i]))
    for i in order[:max(0, left)]:
        floors[i] += 1
    return floors


def share_pairs(v: Verdict, min_share: float = MIN_SHOWN_SHARE) -> list[tuple[str, int]]:
    """``(limit, percent)``, the largest first, the shares under ``min_share`` summed into
    ``other`` where there are two or more of them; the percents add up to 100."""
    pcts = share_percents(v.shares)
    pairs: list[tuple[str, int]] = list(zip((s.limit for s in v.shares), pcts, strict=True))
    small = [p for s, p in zip(v.shares, pairs, strict=True) if s.share < min_share]
    if len(small) < 2:
        return pairs
    kept = [p for s, p in zip(v.shares, pairs, strict=True) if s.share >= min_share]
    return [*kept, ("other", sum(p for _, p in small))]


def headline(v: Verdict) -> str:
    """The verdict's headline with its share as the views print it (:func:`share_percents`,
    so that the headline and the bars say the same percent)."""
    top = v.shares[0] if v.shares else None
    if top is None:
        return v.headline
    pct = share_percents(v.shares)[0]
    jobs = f"{v.workers} job" + ("s" if v.workers != 1 else "")
    return (f"{top.limit.capitalize()} limits this analysis: {pct}% of the time goes to "
            f"{top.detail.split(' (')[0]} ({jobs}, {fmt.mb_per_s(v.mb_per_s)} predicted)")


def shares_text(v: Verdict, top: int | None = None) -> str:
    """``per-file overhead 89%, decompression 10%, processing 1%``; ``top``: the largest
    ``top`` shares and ``other`` for the rest (a line of the short report)."""
    pairs = share_pairs(v)
    if top is not None and len(pairs) > top + 1:
        pairs = [*pairs[:top], ("other", sum(p for _, p in pairs[top:]))]
    return ", ".join(f"{limit} {pct}%" for limit, pct in pairs)


# -- the datasets -----------------------------------------------------------------------------

@dataclass(frozen=True)
class DatasetRow:
    label: str
    rate: str  # "11.6 MB/s"
    workers: int | None
    shares: str  # "per-file overhead 89%, ..." or why there is no verdict


def dataset_rows(report: Report) -> list[DatasetRow]:
    out = []
    for a in report.advice:
        v = a.verdict
        if v is None:
            why = "; ".join(a.notes) or "the calibration could not be fitted"
            out.append(DatasetRow(a.label, fmt.UNKNOWN, None, f"no verdict: {why}"))
        else:
            out.append(DatasetRow(a.label, fmt.mb_per_s(v.mb_per_s), v.workers,
                                  shares_text(v, top=2)))
    return out


def rate_heading(rows: Sequence[DatasetRow]) -> str:
    """``now, 1 job`` where every dataset runs at the same worker count, else ``now``."""
    counts = {r.workers for r in rows if r.workers is not None}
    if len(counts) == 1:
        n = counts.pop()
        return f"now, {n} job{'s' if n != 1 else ''}"
    return "now"


# -- paths and commands ------------------------------------------------------------------------

def quote_path(path: str) -> str:
    """A path as a shell word, a home directory as ``~/`` (which bash expands)."""
    home = os.path.expanduser("~")
    if home not in ("", "/", "~") and path.startswith(home.rstrip("/") + "/"):
        return "~/" + shlex.quote(path[len(home.rstrip("/")) + 1:])
    return shlex.quote(path)


def _demo_root() -> str:
    from hep_advisor.pipeline.paths import default_demo_dir

    return str(default_demo_dir())


def demo_default() -> tuple[str, ...]:
    """What ``try`` and ``apply`` read when given no PATHS: the demo's small files."""
    return (_demo_root() + "/small_files",)


def is_demo(report: Report) -> bool:
    """Every dataset of ``report`` is one of the default demo's (``explain`` then needs no
    PATHS)."""
    root = _demo_root().rstrip("/") + "/"
    return bool(report.advice) and all(
        a.inputs and all(p.startswith(root) for p in a.inputs) for a in report.advice)


def paths_words(inputs: Sequence[str]) -> str:
    """The inputs as shell words, or ``PATHS`` where they would not fit a line."""
    text = " ".join(quote_path(p) for p in inputs)
    return text if len(text) <= MAX_PATHS_CHARS else "PATHS"


def _advice_of(report: Report, rec: Recommendation) -> Advice | None:
    return next((a for a in report.advice if a.label == rec.dataset), None) \
        or (report.advice[0] if len(report.advice) == 1 else None)


def _paths_arg(advice: Advice | None, default: tuple[str, ...] | None = None) -> str:
    if advice is None or not advice.inputs:
        return " PATHS"
    if default is not None and tuple(advice.inputs) == default:
        return ""
    return " " + paths_words(advice.inputs)


def report_paths(report: Report) -> str:
    """The PATHS a follow-up command (``explain``, ``report --verbose``) needs: none for the
    demo, else the one dataset's inputs."""
    if is_demo(report) or not report.advice:
        return ""
    if len(report.advice) == 1:
        return _paths_arg(report.advice[0])
    return " PATHS"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "data"


@dataclass(frozen=True)
class Act:
    """What the short report offers for one recommendation: ``lead`` (``do it``, ``measure
    it first``) and the command line (``None``: the card has none; ``note`` says what to do)."""

    lead: str
    command: str | None
    note: str = ""
    #: why to measure first (an uncertain gain): said on a line of its own
    caution: str = ""


def _first_command(rec: Recommendation) -> tuple[str, str] | None:
    for act in rec.actions:
        if act.command:
            return act.description, act.command
    return None


def _context(description: str) -> str:
    """``RDataFrame`` from ``RDataFrame: run the event loop ...``: a short name of where the
    command goes, where the description starts with one."""
    head = re.split(r": | — |, ", description, maxsplit=1)[0].strip()
    return head if 0 < len(head) <= 24 and len(head.split()) <= 3 else ""


def action(report: Report, rec: Recommendation) -> Act:
    """The one command to act on ``rec``: ``hep-advisor apply`` for the changes ``apply``
    makes (``try`` where the gain is uncertain: measure first), else the first command of the
    recommendation's actions (its reader or command change)."""
    from hep_advisor.rules.registry import rule

    r = rule(rec.code)
    a = _advice_of(report, rec)
    if r is not None and r.tryable and rec.contradicted is None:
        if rec.severity == "uncertain":
            return Act("measure it first", f"hep-advisor try {rec.code}"
                       f"{_paths_arg(a, demo_default())}")
        dest = _slug(f"{DEST.get(r.change or '', 'out')}-{rec.dataset or rec.code}")
        return Act("do it", f"hep-advisor apply {rec.code}{_paths_arg(a, demo_default())} "
                   f"--to {dest}")
    first = _first_command(rec)
    others = sum(1 for act in rec.actions if act.command) - 1
    measure = r.measure if r is not None else "time the analysis once with the change"
    if first is None:
        lead = "measure it first" if rec.severity == "uncertain" else "do it"
        what = rec.actions[0].description if rec.actions else measure
        return Act(lead, None, what)
    description, command = first
    lines = command.strip().splitlines()
    shown = lines[0] if len(lines) == 1 else f"{lines[0]} ..."
    bits = [b for b in (_context(description),
                        f"{others} more way{'s' if others != 1 else ''}" if others > 0 else "")
            if b]
    note = f"({'; '.join(bits)})" if bits else ""
    if rec.severity == "uncertain":  # not a file change: the one run that measures it
        return Act("time it once with", shown, note)
    return Act("do it", shown, note)


# -- recommendations ---------------------------------------------------------------------------

@dataclass(frozen=True)
class RecRow:
    """One recommendation in the short report: its rank, ``line`` (severity, speed-up with its
    interval, dataset) and what to do."""

    rank: int
    rec: Recommendation
    line: str
    act: Act


def speedup(rec: Recommendation, level: float) -> str:
    return fmt.speedup_level(rec.predicted_speedup, rec.speedup_low, rec.speedup_high, level)


def rec_rows(report: Report) -> tuple[list[RecRow], list[Recommendation]]:
    """The recommendations to act on, ranked, and those marked not recommended (apart)."""
    level = parts.level_of(report)
    several = len(report.advice) > 1
    rows: list[RecRow] = []
    rejected: list[Recommendation] = []
    for rec in report.recommendations:
        if rec.contradicted is not None:
            rejected.append(rec)
            continue
        rank = len(rows) + 1
        bits = [rec.severity, speedup(rec, level)]
        if several and rec.dataset:
            bits.append(rec.dataset)
        if rec.workers > 1 and rec.kind != "workers":
            bits.append(f"at {rec.workers} workers")
        rows.append(RecRow(rank, rec, " · ".join(bits), action(report, rec)))
    return rows, rejected


def rejected_line(rec: Recommendation, several: bool) -> str:
    """``W001 (small files): run 2 workers in parallel`` (the list is headed "not
    recommended: its own measurement says otherwise")."""
    where = f" ({rec.dataset})" if several and rec.dataset else ""
    title = rec.title.removeprefix("Not recommended: ")
    return f"{rec.code}{where}: {title}"


REJECTED_HEAD = "not recommended, its own measurement says otherwise"


# -- the lines around them ---------------------------------------------------------------------

def title_line(report: Report) -> str:
    return f"hep-advisor report · {report.site.hostname} · hep-advisor {__version__}"


def units_line(level: float) -> str:
    return (f"MB = 10^6 bytes · MB/s = compressed MB read per second · intervals: "
            f"{fmt.percent(level)}")


def reader_of(advice: Advice) -> str:
    """The reader an advice's figures are for (``advice.reader``): the program's (``--reader``,
    a trace), the engine's default where none was named (assumed), or the advisor's own loop."""
    r = advice.reader
    if r is None:  # an advice made before the reader was recorded
        engine = advice.calibration.engine if advice.calibration is not None else None
        return "the advisor's own event loop" + (f" ({engine})" if engine else "")
    if r.spec == "advisor":
        return r.description
    if r.spec.startswith("uproot.iterate:step_size="):  # uproot.iterate, step_size='100 MB'
        step = r.spec.split("=", 1)[1].split(",")[0]
        what = f"uproot.iterate, step_size={step if step.isdigit() else repr(step)}"
    else:
        what = r.description
    return what if r.assumed else f"your reader, {what}"


def reader_line(report: Report) -> str:
    """``reader assumed: uproot.iterate, step_size='100 MB' (--reader names yours)``: the
    reader the figures are for, and how to name another where it was assumed (the engine's
    default)."""
    readers = [(a.label, reader_of(a)) for a in report.advice]
    if not readers:
        return "reader assumed: none (no dataset advised on)"
    assumed = any(a.reader is None or a.reader.assumed for a in report.advice)
    head = "reader assumed" if assumed else "reader"
    hint = " (--reader names yours)" if assumed else ""
    if len({r for _, r in readers}) == 1:
        return f"{head}: {readers[0][1]}{hint}"
    return f"{head}: " + "; ".join(f"{label}: {r}" for label, r in readers) + hint


def skipped_line(report: Report, why: str = "--verbose: why") -> str | None:
    """``read tests not measured: garbage collector, TTree -> RNTuple (--verbose: why)``: what
    the calibrations left out (their figures are then assumed), ``None`` where nothing."""
    names: list[str] = []
    for a in report.advice:
        for line in parts.skipped_lines(a):
            name = line.split(": ", 1)[0]
            if name not in names:
                names.append(name)
    if not names:
        return None
    return f"read tests not measured: {', '.join(names)} ({why})"


def footer_line(report: Report) -> str:
    p = report_paths(report)
    return (f"more: --verbose · hep-advisor explain CODE|model-check{p} · "
            f"hep-advisor try CODE{p}")


def nothing_line() -> str:
    return (f"Nothing to change: no recommendation is predicted to gain "
            f"{fmt.times(parts.MIN_SPEEDUP)} or more.")


_WORD = re.compile(r"""(?:'[^']*'|"(?:\\.|[^"\\])*"|[^\s'"])+""")


def command_lines(command: str, width: int, first_prefix: int, indent: int = 6) -> list[str]:
    """``command`` broken between its words into lines of at most ``width`` columns, each but
    the last ending in `` \\`` (a shell line continuation: the lines copy and run as one);
    ``first_prefix``: the columns the first line starts at, ``indent``: the others'.  A word
    longer than a line stays whole."""
    words: list[str] = []
    for w in _WORD.findall(command):  # an option stays with its value: ``--to DIR``
        if words and words[-1].startswith("-") and " " not in words[-1] \
                and not w.startswith("-"):
            words[-1] += " " + w
        else:
            words.append(w)
    lines: list[str] = []
    current = ""
    room = width - first_prefix
    for w in words:
        candidate = f"{current} {w}" if current else w
        if current and len(candidate) + 2 > room:
            lines.append(current + " \\")
            current = w
            room = width - indent
        else:
            current = candidate
    lines.append(current)
    return lines
