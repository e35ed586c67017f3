"""The HTML report's building blocks: its stylesheet, escaping, tables, and the plots' axes.

Shared by the report's sections (:mod:`.html`, :mod:`.cluster_parts`, :mod:`.trace_parts`,
:mod:`.trace_svg`), which import it and not each other's pages.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from html import escape

CSS = """
.hepa{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;font-size:14px;
 line-height:1.45;color:#1b1f24;background:#fff;max-width:1100px;padding:4px 8px}
.hepa h1{font-size:1.5em;margin:.4em 0 .2em}
.hepa h2{font-size:1.25em;margin:1.2em 0 .4em;border-bottom:1px solid #d0d7de;padding-bottom:.2em}
.hepa h3{font-size:1.05em;margin:.2em 0 .3em}
.hepa .dim{color:#57606a}
.hepa .counts span{display:inline-block;margin-right:.8em;font-weight:600}
.hepa .counts .critical{color:#b42318}.hepa .counts .warning{color:#9a6700}
.hepa table{border-collapse:collapse;margin:.4em 0 .6em;font-size:.95em}
.hepa th,.hepa td{border:1px solid #d0d7de;padding:2px 8px;text-align:left;vertical-align:top}
.hepa th{background:#f6f8fa}
.hepa td.num,.hepa th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.hepa table.kv th{width:8em;background:none;border:none}
.hepa table.kv td{border:none}
.hepa .bars{display:grid;grid-template-columns:max-content 240px max-content;gap:2px 10px;
 align-items:center;margin:.3em 0 .8em 1em}
.hepa .bar{height:.9em;background:#8250df;border-radius:2px}
.hepa .rec{border:1px solid #d0d7de;border-left:6px solid #0969da;border-radius:6px;
 padding:.5em .9em;margin:.7em 0}
.hepa .rec.critical{border-left-color:#cf222e}.hepa .rec.warning{border-left-color:#bf8700}
.hepa .sev{font-size:.8em;font-weight:700;padding:1px 6px;border-radius:4px;color:#fff;
 background:#0969da;margin-right:.4em}
.hepa .sev.critical{background:#cf222e}.hepa .sev.warning{background:#bf8700}
.hepa code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.92em}
.hepa pre{background:#f6f8fa;border:1px solid #d0d7de;border-radius:6px;padding:6px 10px;
 overflow-x:auto;margin:.3em 0 .5em}
.hepa .speedup{font-weight:700}
.hepa .assume{color:#57606a;font-style:italic}
.hepa .src-measured,.hepa .src-probed{color:#1a7f37}.hepa .src-fitted{color:#0550ae}
.hepa .src-assumed{color:#9a6700}.hepa .src-threshold{color:#8250df}
.hepa .note{color:#9a6700}
.hepa .selfcheck{color:#b42318;border-left:3px solid #cf222e;padding-left:.6em}
.hepa figure{margin:.5em 0}
.hepa svg{max-width:100%;height:auto;font-family:inherit}
.hepa .scaling{display:flex;flex-wrap:wrap;gap:0 2em;align-items:flex-start}
.hepa figure.trace svg{max-width:100%}
.hepa .meta{margin:.1em 0;color:#57606a}
.hepa .meta code{background:#f6f8fa;padding:1px 5px;border-radius:4px}
.hepa .units{margin:.2em 0 .6em;color:#57606a;font-size:.92em}
.hepa table.verdict{border:none;margin:.3em 0 .2em}
.hepa table.verdict th,.hepa table.verdict td{border:none;padding:3px 10px 3px 0;
 vertical-align:middle}
.hepa table.verdict thead th{background:none;color:#57606a;font-weight:400;font-size:.9em}
.hepa table.verdict th.ds{white-space:nowrap}
.hepa .stack{display:flex;width:260px;height:14px;border-radius:3px;overflow:hidden;
 background:#eaeef2}
.hepa .seg{display:inline-block;height:14px}
.hepa .keys{margin:.1em 0 .8em;font-size:.88em;color:#57606a}
.hepa .key{margin-right:1.2em;white-space:nowrap}
.hepa .key .seg{width:10px;height:10px;margin-right:4px;border-radius:2px;vertical-align:-1px}
.hepa .seg-per-file-overhead{background:#8250df}.hepa .seg-decompression{background:#0969da}
.hepa .seg-processing{background:#1a7f37}.hepa .seg-storage{background:#bc4c00}
.hepa .seg-network{background:#cf222e}.hepa .seg-other{background:#8c959f}
.hepa h2 .counts{font-size:.72em;font-weight:600;color:#57606a;margin-left:.6em}
.hepa ol.recs{padding-left:1.6em;margin:.3em 0}
.hepa li.rec{border:1px solid #d0d7de;border-left:6px solid #0969da;border-radius:6px;
 padding:.45em .8em;margin:.55em 0}
.hepa li.rec.critical{border-left-color:#cf222e}.hepa li.rec.warning{border-left-color:#bf8700}
.hepa li.rec.uncertain{border-left-color:#8250df}
.hepa .sev.uncertain{background:#8250df}
.hepa .rec-head strong{font-size:1.05em}
.hepa .rec-line{margin:.15em 0;color:#24292f}
.hepa .act{margin:.25em 0}.hepa .act .lead{font-weight:600}
.hepa code.cmd{background:#f6f8fa;border:1px solid #d0d7de;border-radius:4px;padding:1px 6px;
 overflow-wrap:anywhere}
.hepa .why-uncertain{color:#6639ba;margin:.2em 0;font-size:.95em}
.hepa details{margin:.3em 0}
.hepa details>summary{cursor:pointer;color:#0969da}
.hepa details.section{border-top:1px solid #d0d7de;margin-top:1em;padding-top:.4em}
.hepa details.section>summary{font-size:1.15em;font-weight:600;color:#1b1f24}
.hepa h4{font-size:.95em;margin:.6em 0 .2em}
.hepa .reader{margin:.8em 0 .2em}
.hepa .mc{margin:.2em 0}.hepa .mc.warn{color:#9a6700;font-weight:600}
.hepa .admin{background:#f6f8fa;border:1px solid #d0d7de;border-radius:6px;padding:.2em 1em .6em;
 margin-top:1.2em}
.hepa .admin h2{border:none;margin-top:.4em}
.hepa .admin table{background:#fff}
.hepa table.points td:nth-child(-n+2){white-space:nowrap}
"""

SVG_WIDTH = 640
PLOT_TOP, PLOT_HEIGHT, PLOT_LEFT, PLOT_RIGHT = 34, 230, 64, 22
COLORS = {"predicted": "#0969da", "ideal": "#8c959f", "capacity": "#cf222e",
          "measured": "#1a7f37", "raw": "#bc4c00", "now": "#57606a"}


def e(x: object) -> str:
    return escape(str(x), quote=True)


def table(header: Sequence[str], rows: Iterable[Sequence[str]], numeric: Sequence[int] = (),
           cls: str | None = None) -> str:
    """A table; cells are HTML already (escape before); columns in ``numeric`` right-aligned."""
    def cell(tag: str, i: int, body: str) -> str:
        return f'<{tag} class="num">{body}</{tag}>' if i in numeric else f"<{tag}>{body}</{tag}>"

    head = "<tr>" + "".join(cell("th", i, h) for i, h in enumerate(header)) + "</tr>"
    body = "".join("<tr>" + "".join(cell("td", i, c) for i, c in enumerate(r)) + "</tr>"
                   for r in rows)
    attr = f' class="{e(cls)}"' if cls else ""
    return f"<table{attr}><thead>{head}</thead><tbody>{body}</tbody></table>"


def kv(pairs: Iterable[tuple[str, str]]) -> str:
    note = ' class="note"'
    rows = "".join(f"<tr><th>{e(k)}</th><td{note if k == 'note' else ''}>{e(v)}</td></tr>"
                   for k, v in pairs)
    return f'<table class="kv"><tbody>{rows}</tbody></table>'


# -- the scaling plot --------------------------------------------------------------------------

def nice_step(span: float, target: int = 5) -> float:
    raw = span / max(1, target)
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def ticks_linear(lo: float, hi: float) -> list[float]:
    step = nice_step(hi - lo)
    first = math.ceil(lo / step) * step
    n = math.floor((hi - first) / step + 1e-9) + 1
    return [round(first + i * step, 10) for i in range(max(n, 0))]


def ticks_log(lo: float, hi: float) -> list[float]:
    decades = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
    mults = (1, 2, 5) if len(decades) <= 4 else (1,)
    return [m * 10.0 ** d for d in decades for m in mults if lo <= m * 10.0 ** d <= hi]


def tick_label(v: float) -> str:
    if v >= 1000:
        return f"{v:,.0f}"
    if v >= 1:
        return f"{v:g}"
    return f"{v:.2g}"
