"""The scaling plot with matplotlib (``Advice.plot()``): the same content, axes and marks as the
HTML report's SVG and the TUI's plot (:meth:`~.scaling.ScalingData.plot_range`,
:meth:`~.scaling.ScalingData.marks`).  matplotlib is optional (the ``plot`` extra) and
imported only here, when a plot is drawn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hep_advisor.render import fmt, scaling

if TYPE_CHECKING:
    from hep_advisor.findings.advice import Advice

COLORS = {"predicted": "#0969da", "capacity": "#cf222e", "measured": "#1a7f37",
          "raw": "#bc4c00", "mark": "#57606a"}


def _pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError("the scaling plot needs matplotlib: pip install matplotlib "
                          "(or pip install 'hep-advisor[plot]')") from exc
    return plt


def plot_scaling(advice: Advice, ax: Any = None) -> Any:
    """Predicted aggregate MB/s against workers in its shaded interval, the measured points
    (the event loop in parallel; raw cold reads, which skip decompression), the knee and the
    cores as dashed verticals, and the storage's capacity (from the model); a series far above
    the curve is named in the legend with its value, not drawn.  Draws on ``ax`` (default: a
    new figure) and returns it."""
    plt = _pyplot()
    d = scaling.scaling_data(advice)
    r = d.plot_range()
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 5.4), layout="constrained")
    if d.workers:
        ax.fill_between(d.workers, d.low, d.high, color=COLORS["predicted"], alpha=0.2,
                        linewidth=0, label=f"{fmt.percent(d.level)} interval")
        ax.plot(d.workers, d.predicted, color=COLORS["predicted"], linewidth=2.5, marker=".",
                label="predicted")
    for m in d.marks():
        ax.axvline(m.workers, color=COLORS["mark"], linestyle=(0, (4, 3)), linewidth=1.1)
        ax.annotate(m.label, (m.workers, 1), xycoords=("data", "axes fraction"),
                    xytext=(0, 4), textcoords="offset points", ha="center", va="bottom",
                    color=COLORS["mark"], fontsize="small", annotation_clip=False)
    if d.capacity is not None and r.capacity_drawn:
        ax.axhline(d.capacity, color=COLORS["capacity"], linestyle="-.", linewidth=1.5,
                   label=f"{scaling.CAPACITY_LABEL}: {scaling.CAPACITY_NOTE}")
        below = d.capacity > 0.93 * r.ymax  # at the top of the axes: the words under it
        ax.annotate(f"{scaling.CAPACITY_LABEL}: {fmt.mb_per_s(d.capacity)}",
                    (1, d.capacity), xycoords=("axes fraction", "data"),
                    xytext=(-4, -4 if below else 3), textcoords="offset points", ha="right",
                    va="top" if below else "bottom", color=COLORS["capacity"],
                    fontsize="small")
    if d.raw_reads and r.raw_drawn:
        w, y = zip(*d.raw_reads, strict=True)
        ax.plot(w, y, linestyle="none", marker="s", markersize=7, markerfacecolor="white",
                markeredgewidth=1.6, color=COLORS["raw"], label=scaling.RAW_LABEL)
    if d.measured:
        w, y = zip(*d.measured, strict=True)
        ax.plot(w, y, linestyle="none", marker="o", markersize=7, color=COLORS["measured"],
                markeredgecolor="white", label=scaling.MEASURED_LABEL)
    for what in r.off_scale:  # named, with its value: drawn to scale it would flatten the rest
        ax.plot([], [], linestyle="none", marker="$\\uparrow$", color=COLORS["capacity"],
                label=f"{what}, off the scale (not drawn)")
    ax.set_ylim(0, r.ymax)
    ax.set_xlim(1 - max(0.25, 0.04 * (r.xmax - 1)), r.xmax + max(0.25, 0.04 * (r.xmax - 1)))
    ax.set_xlabel(scaling.X_AXIS)
    ax.annotate(scaling.UNITS_NOTE, (0.5, 0), xycoords="axes fraction", xytext=(0, -42),
                textcoords="offset points", ha="center", va="top", color=COLORS["mark"],
                fontsize="small", annotation_clip=False)
    ax.set_ylabel(scaling.Y_AXIS)
    ax.set_title(f"{d.label}: predicted read rate against workers", pad=18)
    ax.set_xticks(r.xticks())
    ax.set_yticks(r.yticks)
    ax.grid(True, axis="y", alpha=0.4)
    if not d.empty:  # under the axes, where it hides no point
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(0, -0.2),
                  frameon=False)
    return ax
