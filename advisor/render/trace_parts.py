"""The trace's section of a report (``report --trace FILE``) and of ``hep-advisor trace``'s own
output, as data every view shares (the summary, the requests by kind, the phases, the time
split, the findings), and as Markdown and HTML (with the requests-over-time picture as inline
SVG).  No Rich, no Textual: the terminal view is :mod:`.trace_view`, the TUI's tab
:mod:`hep_advisor.tui.trace`."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hep_advisor.findings.trace import Trace

KINDS = ("basket", "key", "metadata", "other")
SPLIT_NOTE = {
    "io": "measured: time inside the read calls",
    "decompression": "derived: a sample of the baskets read, decompressed and timed",
    "user": "measured CPU time less decompression",
    "cpu_wait": "measured (schedstat): a busy machine",
    "parallel": "measured (threads sampled): other threads' work while the main one was busy, "
                "counted above once too many",
    "other_disk": "sampled: the main thread waiting for a disk outside the reads (libraries, "
                  "modules: a cold start)",
}
NO_FINDING = ("No reader change predicted to help: each reader rule replayed its change on "
              "this trace and none gained 5% or more.")


def mb(n: int | None) -> str:
    return "—" if n is None else f"{n / 1e6:,.2f} MB"


def sec(x: float | None) -> str:
    return "—" if x is None else f"{x:,.2f} s"


def summary_lines(t: Trace) -> list[tuple[str, str]]:
    """The trace in a few labelled lines."""
    amp = "—" if t.amplification is None else f"{t.amplification:.2f}×"
    out = [("command", t.command), ("exit code", str(t.exit_code)),
           ("wall", f"{sec(t.wall_s)} traced (tracer cost about {t.overhead:.0%}: "
                    + ("its own measured time" if t.recorder == "python" else
                       "the time strace held the program stopped, sampled in the run; "
                       "under 0.2 s, a measured cost per call times the calls")
                    + ")"),
           ("cpu", sec(t.cpu_s)),
           *([("after the run", f"{sec(t.after_s)} to map the reads, time a sample of "
               f"decompression and replay the changes ({t.after_s / max(t.wall_s, 1e-9):.0%} "
               "of the program's traced wall time)")] if t.after_s is not None else []),
           ("cold", "yes: the named ROOT files were dropped from the page cache first"
            if t.cold else "no (as the page cache found them)"),
           ("read", f"{sum(f.requests for f in t.files):,} requests, "
                    f"{mb(sum(f.bytes for f in t.files))} from {len(t.files)} file"
                    f"{'s' if len(t.files) != 1 else ''}; amplification {amp} (bytes read ÷ "
                    f"bytes of the baskets touched); re-read {mb(t.reread_bytes)}")]
    if t.block_reads is not None:
        out.append(("device", f"{t.block_reads:,} reads, {mb(t.block_bytes)} served by the "
                    "files' block devices during the run (all programs)"))
    return out


def kind_rows(t: Trace) -> list[tuple[str, str, str]]:
    b = t.bytes_by_kind
    return [(name, f"{getattr(t.requests_by_kind, name):,}",
             mb(getattr(b, name)) if b is not None else "—") for name in KINDS]


def phase_rows(t: Trace) -> list[tuple[str, str, str, str, str]]:
    return [(p.name, f"{p.start_s:.2f} s", f"{p.end_s:.2f} s", f"{p.requests:,}", mb(p.bytes))
            for p in t.phases]


def untraced_wall_s(t: Trace) -> float:
    return t.wall_s / (1 + t.overhead) if t.overhead > -1 else t.wall_s


def split_rows(t: Trace) -> list[tuple[str, float | None, str]]:
    """(part, seconds, how it was found): the time split, ``unexplained`` last."""
    from hep_advisor.findings.trace import split_check

    s = t.time_split
    rows: list[tuple[str, float | None, str]] = [
        ("waiting for reads", s.io, SPLIT_NOTE["io"]),
        ("decompression", s.decompression, SPLIT_NOTE["decompression"]),
        ("the program's own work", s.user, SPLIT_NOTE["user"])]
    if s.cpu_wait is not None:
        rows.append(("waiting for a core", s.cpu_wait, SPLIT_NOTE["cpu_wait"]))
    if s.other_disk is not None:
        rows.append(("waiting for a disk elsewhere", s.other_disk, SPLIT_NOTE["other_disk"]))
    if s.parallel is not None:
        rows.append(("threads at once", s.parallel, SPLIT_NOTE["parallel"]))
    rows.append(("unexplained", s.unexplained,
                 f"{split_check(t):.0%} of the untraced wall time"))
    return rows


def finding_speedup(f: Any) -> str:
    return (f"predicted {f.predicted_speedup:.2f}× ({f.speedup_low:.2f}–"
            f"{f.speedup_high:.2f})")


def finding_argument(f: Any) -> str | None:
    arg, value = getattr(f, "argument", None), getattr(f, "value", None)
    if not arg:
        return None
    return f"{arg} = {value}" if value is not None else arg


def evidence_line(x: Any) -> str:
    """``name: value unit [source] — note``, the value as the report prints evidence."""
    from hep_advisor.render.report_parts import evidence_value

    note = f" — {x.note}" if getattr(x, "note", None) else ""
    return f"{x.name}: {evidence_value(x.value, x.unit or '')} [{x.source}]{note}"


def change_language(change: str) -> str:
    """``cpp`` for a ROOT macro line, ``python`` otherwise."""
    return "cpp" if change.rstrip().endswith(";") or "->" in change else "python"


def file_rows(t: Trace, limit: int = 8) -> tuple[str, list[tuple[str, ...]]]:
    """The files' table title (naming their common directory once) and rows."""
    paths = [f.path for f in t.files]
    common = os.path.commonpath(paths) if len(paths) > 1 and all(
        p.startswith("/") for p in paths) else ""
    if common in paths:  # one file's path is the prefix of the others: no directory to name
        common = os.path.dirname(common)
    named = common not in ("", "/")
    rows: list[tuple[str, ...]] = [
        (os.path.relpath(f.path, common) if named else f.path, f"{f.opens:,}",
         f"{f.requests:,}", mb(f.bytes), mb(f.bytes_needed)) for f in t.files[:limit]]
    if len(t.files) > limit:
        rows.append((f"… {len(t.files) - limit} more", "", "", "", ""))
    return (f"files (in {common})" if named else "files"), rows


FILE_HEADER = ("file", "opens", "requests", "read", "baskets touched")
PHASE_HEADER = ("phase", "from", "to", "requests", "bytes")


# -- Markdown ----------------------------------------------------------------------------------

def trace_markdown(t: Trace) -> list[str]:
    from hep_advisor.render.mdkit import esc, fence, table

    out = ["## Trace: the program as it ran", ""]
    out += table(["", ""], ([f"**{k}**", esc(v)] for k, v in summary_lines(t)))
    out += table(["requests by kind", "requests", "bytes"],
                 ([esc(c) for c in r] for r in kind_rows(t)), "lrr")
    out += table(list(PHASE_HEADER), ([esc(c) for c in r] for r in phase_rows(t)), "lrrrr")
    out += table(["where the time went", "seconds", "how"],
                 ([esc(p), esc(sec(s)), esc(how)] for p, s, how in split_rows(t)), "lrl")
    out += ["### Reader changes", ""]
    if not t.findings:
        out += [esc(NO_FINDING), ""]
    for f in t.findings:
        out += [f"#### `{esc(f.code)}` {esc(f.title)}", "", f"**{esc(finding_speedup(f))}**", ""]
        arg = finding_argument(f)
        if arg:
            out += [f"Argument: `{arg.replace('`', '')}`", ""]
        out += fence(f.change, change_language(f.change))
        out.append("")
        out += [f"- {esc(evidence_line(x))}" for x in f.evidence]
        if f.evidence:
            out.append("")
    out += [f"> **Note:** {esc(n)}" for n in t.notes]
    if t.notes:
        out.append("")
    return out


# -- HTML --------------------------------------------------------------------------------------

def trace_html_section(t: Trace, heading: bool = True) -> str:
    from hep_advisor.render.htmlkit import e
    from hep_advisor.render.htmlkit import kv as _kv
    from hep_advisor.render.htmlkit import table as _table
    from hep_advisor.render.trace_svg import trace_svg

    out = ["<h2>Trace: the program as it ran</h2>"] if heading else []
    out.append(_kv(summary_lines(t)))
    svg = trace_svg(t)
    if svg:
        out.append(f'<figure class="trace">{svg}</figure>')
    else:
        out.append('<p class="dim">No picture: this trace was saved without its requests '
                   "(trace it again with this version).</p>")
    out.append('<div class="scaling">')
    out.append(_table(["requests by kind", "requests", "bytes"],
                      ([e(c) for c in r] for r in kind_rows(t)), numeric=(1, 2)))
    out.append(_table(list(PHASE_HEADER), ([e(c) for c in r] for r in phase_rows(t)),
                      numeric=(1, 2, 3, 4)))
    out.append("</div>")
    title, rows = file_rows(t)
    out.append(_table([title, *FILE_HEADER[1:]], ([e(c) for c in r] for r in rows),
                      numeric=(1, 2, 3, 4)))
    out.append(_table(["where the time went", "seconds", "how"],
                      ([e(p), e(sec(s)), f'<span class="dim">{e(how)}</span>']
                       for p, s, how in split_rows(t)), numeric=(1,)))
    out.append("<h3>Reader changes</h3>")
    if not t.findings:
        out.append(f"<p>{e(NO_FINDING)}</p>")
    for f in t.findings:
        arg = finding_argument(f)
        items = "".join(f"<li>{e(evidence_line(x))}</li>" for x in f.evidence)
        out.append(
            f'<section class="rec"><h3><code>{e(f.code)}</code> {e(f.title)}</h3>'
            f'<p><span class="speedup">{e(finding_speedup(f))}</span></p>'
            + (f'<p class="dim">argument: <code>{e(arg)}</code></p>' if arg else "")
            + f'<pre><code class="language-{change_language(f.change)}">{e(f.change)}'
            "</code></pre>"
            + (f'<ul class="dim">{items}</ul>' if items else "") + "</section>")
    out += [f'<p class="note">{e(n)}</p>' for n in t.notes]
    return "".join(out)


def trace_html(trace: Any, reads: Sequence[Any] | None = None) -> str:
    """A self-contained page (``hep-advisor trace -o FILE.html``): the report's Trace section
    (summary, picture, requests by kind, phases, time split, findings).  ``reads``: the
    attributed reads, for a trace made without its picture."""
    from dataclasses import replace

    from hep_advisor._version import __version__
    from hep_advisor.findings.trace_picture import request_picture
    from hep_advisor.render.htmlkit import CSS
    from hep_advisor.render.htmlkit import e as _e

    if getattr(trace, "picture", None) is None and reads is not None:
        trace = replace(trace, picture=request_picture(reads, trace.wall_s))
    return ("<!DOCTYPE html>\n"
            '<html lang="en"><head><meta charset="utf-8"/>'
            '<meta name="viewport" content="width=device-width, initial-scale=1"/>'
            f"<title>hep-advisor trace: {_e(trace.command)}</title><style>{CSS}</style>"
            "</head>\n"
            f'<body><div class="hepa">\n<h1>hep-advisor trace</h1>'
            f'<p class="dim">hep-advisor {_e(__version__)}</p>\n'
            f"{trace_html_section(trace, heading=False)}\n</div></body></html>\n")
