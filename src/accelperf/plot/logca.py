"""LogCA figures: speedup curves with g1 / g_{A/2} marked and the bounds drawn
(ISCA'17 Figs. 3, 4 and 7)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from ..logca import DEFAULT_RANGE, LogCA, summary
from ..units import log_grid
from .axes import granularity_axis


def speedup_figure(models: LogCA | Sequence[LogCA], lo: float = DEFAULT_RANGE[0],
                   hi: float = DEFAULT_RANGE[1], *, points: int = 400, asymptotes: bool = True,
                   title: str | None = None, figsize=(7.5, 4.8), band=None) -> Figure:
    """Speedup against granularity for one or several models on one axis.

    Each curve carries its g1 (circle) and g_{A/2} (square) where they fall inside the
    range, and its bounds as thin lines of the same colour: the acceleration A, the
    intensity bound C/L·g^(β−1) for granularity-dependent latency (eq. 9) and, for a
    single model, the overhead (Amdahl) bound C·g^β/(o + L1) that the curve hugs at small g.
    ``band`` (an :class:`~accelperf.logca.uncertainty.UncertaintyResult` of the first model)
    is shaded: the 5th to 95th percentile of the speedup over the Monte-Carlo draws.
    """
    models = [models] if isinstance(models, LogCA) else list(models)
    g = log_grid(lo, hi, points)
    fig = Figure(figsize=figsize)
    ax = fig.add_subplot()
    lowest = np.inf
    placed: list[tuple[float, float, str]] = []      # markers drawn so far: (g, speedup, kind)
    for i, model in enumerate(models):
        colour = f"C{i % 10}"
        s = model.speedup(g)
        lowest = min(lowest, float(np.min(s)))
        ax.plot(g, s, color=colour, lw=2, label=model.label)
        if band is not None and i == 0:
            ax.fill_between(band.granularity, band.band["p5"], band.band["p95"], color=colour,
                            alpha=0.25, lw=0, label=f"90% band, {band.samples} draws")
            lowest = min(lowest, float(np.min(band.band["p5"])))
        info = summary(model)
        if asymptotes:
            # one model's bounds are named in the legend (the APU's radix sort showed a
            # dashed and a dash-dot line nobody named); several models' would crowd it
            one = len(models) == 1
            ax.axhline(model.A, color=colour, lw=0.8, ls="--", alpha=0.7,
                       label="acceleration A (eq. 3)" if one else None)
            if model.dependent and model.L > 0:
                ax.plot(g, model.intensity_bound(g), color=colour, lw=0.8, ls="-.", alpha=0.7,
                        label="intensity bound C/L·g^(β−1) (eq. 9)" if one else None)
            if len(models) == 1:
                ax.plot(g, model.amdahl_bound(g), color=colour, lw=0.8, ls=":", alpha=0.8,
                        label="overhead bound C·g^β/(o+L₁)")
        for metric, marker, text in ((info.g1, "o", "g₁"), (info.g_half, "s", "g_A/2")):
            for x in metric.roots:
                if lo <= x <= hi:
                    y = float(model.speedup(x))
                    # Two designs with nearly the same g1 would stack their markers: a later
                    # one is drawn as a ring around the earlier, so both stay visible.
                    under = sum(1 for px, py, pm in placed if pm == marker
                                and abs(np.log10(px / x)) < 0.06 and abs(np.log10(py / y)) < 0.06)
                    placed.append((x, y, marker))
                    ax.plot([x], [y], marker=marker, ms=7 + 5 * under, zorder=5 - under,
                            **(dict(color=colour, mec="black") if not under else
                               dict(mfc="none", mec=colour, mew=2)))
                    if len(models) <= 3:
                        ax.annotate(text, (x, float(model.speedup(x))), textcoords="offset points",
                                    xytext=(4, -12), fontsize=8, color=colour)
        peak = info.peak
        if peak and lo <= peak.granularity <= hi:
            ax.plot([peak.granularity], [peak.speedup], marker="^", color=colour, ms=7,
                    mec="black", zorder=5)
    ax.axhline(1.0, color="0.4", lw=0.8)
    ax.set_yscale("log")
    top = max(m.A for m in models) * 2.5
    ax.set_ylim(max(lowest / 2, top * 1e-7), top)
    granularity_axis(ax, lo, hi)
    ax.set_ylabel("speedup T0 / T1")
    if len(models) == 1:
        b = models[0].bound()
        ax.text(0.02, 0.96, f"{b.kind}-bound: speedup → {b.limit:.3g} ({b.expression})",
                transform=ax.transAxes, va="top", fontsize=9,
                bbox=dict(boxstyle="round", fc="white", ec="0.7"))
    ax.set_title(title or ("LogCA speedup" if len(models) > 1 else models[0].label))
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


def times_figure(model: LogCA, lo: float = DEFAULT_RANGE[0], hi: float = DEFAULT_RANGE[1], *,
                 points: int = 300, measured=None, title: str | None = None) -> Figure:
    """ISCA'17 Fig. 1a: host time T0 = C·g^β and accelerated time T1 = o + L1(g) + C·g^β/A
    against granularity on log-log axes; they cross at g1. ``measured`` = (g, T1) points
    (e.g. simulated) are drawn on top."""
    g = log_grid(lo, hi, points)
    fig = Figure(figsize=(7.5, 4.8))
    ax = fig.add_subplot()
    ax.plot(g, model.T0(g), color="C0", lw=2, label="T0 = C·g^β (host)")
    ax.plot(g, model.T1(g), color="C1", lw=2, label="T1 = o + L1(g) + C·g^β/A (accelerated)")
    ax.plot(g, np.full_like(g, model.o) + model.latency_time(g), color="C1", lw=0.8, ls=":",
            label="o + L1(g) (offload cost)")
    if measured is not None:
        ax.plot(measured[0], measured[1], "o", color="C1", mec="black", ms=5, zorder=5,
                label="simulated T1")
    g1 = model.g1() if model.A > 1 else None
    for x in (g1.roots if g1 is not None and g1.exists else ()):
        if lo <= x <= hi:
            ax.axvline(x, color="0.4", lw=0.8, ls="--")
            ax.annotate("g₁", (x, float(model.T0(x))), textcoords="offset points",
                        xytext=(4, -12), fontsize=8)
    ax.set_yscale("log")
    granularity_axis(ax, lo, hi)
    ax.set_ylabel(f"time per offload ({model.unit})")
    ax.set_title(title or f"Execution times: {model.label} (cf. ISCA'17 Fig. 1a)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    return fig
