"""The scaling plot with matplotlib (``Advice.plot()``): the same content as the HTML report's
SVG.  matplotlib is optional (the ``plot`` extra) and imported only here, when a plot is drawn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hep_advisor.render import fmt, scaling

if TYPE_CHECKING:
    from hep_advisor.findings.advice import Advice

COLORS = {"predicted": "#0969da", "ideal": "#8c959f", "capacity": "#cf222e",
          "measured": "#1a7f37", "raw": "#bc4c00", "now": "#57606a"}


def _pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError("the scaling plot needs matplotlib: pip install matplotlib "
                          "(or pip install 'hep-advisor[plot]')") from exc
    return plt


def plot_scaling(advice: Advice, ax: Any = None) -> Any:
    """Predicted aggregate MB/s against workers with its interval band, ideal linear scaling
    from the 1-worker prediction, the storage's capacity (from the model) and the measured
    points: the event loop in parallel, and raw cold reads (which skip decompression).
    Draws on ``ax`` (default: a new figure) and returns it."""
    plt = _pyplot()
    d = scaling.scaling_data(advice)
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 5.2), layout="constrained")
    if d.workers:
        ax.fill_between(d.workers, d.low, d.high, color=COLORS["predicted"], alpha=0.18,
                        linewidth=0, label=f"predicted, {fmt.percent(d.level)} interval")
        ax.plot(d.workers, d.predicted, color=COLORS["predicted"], linewidth=2, marker=".",
                label="predicted")
        if d.ideal:
            ax.plot(d.workers, d.ideal, color=COLORS["ideal"], linestyle="--", linewidth=1.5,
                    label=scaling.IDEAL_LABEL + " (from 1 worker)")
        ax.axvline(d.now, color=COLORS["now"], linestyle=":", linewidth=1)
        ax.annotate("now", (d.now, 1), xycoords=("data", "axes fraction"),
                    xytext=(3, -12), textcoords="offset points", color=COLORS["now"],
                    fontsize="small")
    if d.capacity is not None:
        ax.axhline(d.capacity, color=COLORS["capacity"], linestyle="-.", linewidth=1.5,
                   label=f"{scaling.CAPACITY_LABEL}: {fmt.rate(d.capacity)} MB/s "
                   f"({scaling.CAPACITY_NOTE})")
    if d.measured:
        w, y = zip(*d.measured, strict=True)
        ax.plot(w, y, linestyle="none", marker="o", markersize=7, color=COLORS["measured"],
                label=scaling.MEASURED_LABEL)
    if d.raw_reads:
        w, y = zip(*d.raw_reads, strict=True)
        ax.plot(w, y, linestyle="none", marker="s", markersize=7, markerfacecolor="none",
                markeredgewidth=1.6, color=COLORS["raw"], label=scaling.RAW_LABEL)
    if d.log_scale():
        ax.set_yscale("log")
    else:
        ax.set_ylim(bottom=0)
    ax.set_xlabel("workers (jobs in parallel)")
    ax.set_ylabel("aggregate MB/s (compressed)")
    ax.set_title(f"{d.label}: aggregate MB/s against workers")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.grid(True, axis="y", alpha=0.4)
    if not d.empty:  # under the axes, where it hides no point
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(0, -0.14),
                  frameon=False)
    return ax
