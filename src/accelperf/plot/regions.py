"""Optimization-region charts (ISCA'17 Figs. 5, 6, 10, 11)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from ..logca import DEFAULT_RANGE, LogCA
from ..logca.regions import PARAMETERS, RegionAnalysis, improved
from .axes import granularity_axis

PARAMETER_COLOURS = {"L": "#8c6bb1", "o": "#2b8cbe", "C": "#41ab5d", "A": "#e34a33"}
PARAMETER_NAMES = {"L": "latency", "o": "overhead", "C": "computational index",
                   "A": "acceleration"}


# Per-layer parameters of a hierarchical model (a[L3<-DRAM], ...) take these in turn.
LAYER_COLOURS = ("#fd8d3c", "#8c510a", "#c51b7d", "#35978f", "#737373", "#bf812d")


def _colour(analysis: RegionAnalysis, p: str) -> str:
    if p in PARAMETER_COLOURS:
        return PARAMETER_COLOURS[p]
    extra = [q for q, r in analysis.regions.items() if q not in PARAMETER_COLOURS and r.present]
    return LAYER_COLOURS[extra.index(p) % len(LAYER_COLOURS)]


def _short(analysis: RegionAnalysis, p: str) -> str:
    """A per-layer parameter as the chart writes it: a1 for the first layer's a[...], l3
    for the third's l[...] (the legend spells them out); LogCA's letters as they are."""
    if "[" not in p:
        return p
    same = [q for q in analysis.regions if q.startswith(p[:2])]
    return f"{p[0]}{same.index(p) + 1}"


def _band_label(analysis: RegionAnalysis, band) -> str:
    if not band.members:
        return band.parameters
    return ("" if all(len(p) == 1 for p in band.members) else " ").join(
        _short(analysis, p) for p in band.members)


def _band_colour(analysis: RegionAnalysis, band):
    """Mix the colours of the parameters in a band (a blend reads as 'several at once')."""
    names = band.members or tuple(band.parameters)
    if not names:
        return (1, 1, 1, 0)
    rgb = np.mean([[int(_colour(analysis, p)[i:i + 2], 16) / 255 for i in (1, 3, 5)]
                   for p in names], axis=0)
    return (*rgb, 0.28)


def draw_regions(ax, analysis: RegionAnalysis, *, arrows: bool = True, legend: bool = True,
                 points: int = 400) -> None:
    """Fig. 6 on ``ax``: the speedup curve over bands coloured by their bottlenecks, with a
    horizontal arrow per parameter spanning where it pays and a tick at its cut-off."""
    m, lo, hi = analysis.model, analysis.lo, analysis.hi
    g = np.geomspace(lo, hi, points)
    s = m.speedup(g)
    for band in analysis.bands:
        ax.axvspan(band.start, band.end, color=_band_colour(analysis, band), lw=0)
        label = _band_label(analysis, band)
        # octaves a label needs: the paper's "oCA" fits in 0.6, per-layer names take more
        width = 0.6 if label == band.parameters else 0.2 * len(label)
        if band.parameters and np.log2(band.end / band.start) > width:
            ax.text(np.sqrt(band.start * band.end), 0.5, label,
                    transform=ax.get_xaxis_transform(), ha="center", va="center",
                    fontsize=11, fontweight="bold", color="0.15")
        elif band.parameters:           # too thin to hold its name: point at it from below
            mid = np.sqrt(band.start * band.end)
            ax.annotate(label, xy=(mid, 0.3), xytext=(mid * 1.8, 0.18),
                        xycoords=("data", "axes fraction"), textcoords=("data", "axes fraction"),
                        fontsize=9, fontweight="bold", color="0.15",
                        arrowprops=dict(arrowstyle="-", color="0.3", lw=0.8))
            ax.axvspan(band.start, band.end, ymin=0.27, ymax=0.33, color="0.2", lw=0)
    ax.plot(g, s, color="black", lw=2)
    ax.set_yscale("log")
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_ylim(max(float(s.min()) / 3, m.A * 1e-7), m.A * 3)
    if arrows:
        present = [p for p in analysis.regions if analysis.regions[p].present]
        for k, p in enumerate(present):
            y = 0.93 - 0.07 * k
            r = analysis.regions[p]
            for a, b in r.intervals:
                ax.annotate("", xy=(b, y), xytext=(a, y), xycoords=("data", "axes fraction"),
                            arrowprops=dict(arrowstyle="<->", color=_colour(analysis, p), lw=1.5))
            if r.cutoff is not None:
                ax.axvline(r.cutoff, color=_colour(analysis, p), lw=0.8, ls=":")
            ax.text(r.intervals[0][0], y + 0.012, f" {_short(analysis, p)}",
                    transform=ax.get_xaxis_transform(),
                    color=_colour(analysis, p), fontsize=8, va="bottom")
    granularity_axis(ax, lo, hi)
    ax.set_ylabel("speedup")
    if legend:
        from matplotlib.patches import Patch
        handles = [Patch(color=_colour(analysis, p), alpha=0.5,
                         label=f"{_short(analysis, p)}: "
                               f"{PARAMETER_NAMES[p] if p in PARAMETER_NAMES else _layer_name(p)}")
                   for p in analysis.regions if analysis.regions[p].present]
        ax.legend(handles=handles, fontsize=7, loc="lower right")


def _layer_name(p: str) -> str:
    if p == "floor":
        return "the accelerator kernel's least time (launch, occupancy)"
    what = {"a": "accelerator's extra cost", "l": "copies' extra cost"}[p[0]]
    return f"{p}, {what} beyond {p[2:-1]}"


def regions_figure(analysis: RegionAnalysis, title: str | None = None) -> Figure:
    """One design's optimization regions (Fig. 6)."""
    fig = Figure(figsize=(8, 4.6))
    ax = fig.add_subplot()
    draw_regions(ax, analysis)
    ax.set_title(title or f"Optimization regions: {analysis.model.label} "
                          f"({analysis.factor:g}x improvement, ≥{analysis.threshold:.0%} gain)")
    fig.tight_layout()
    return fig


def sensitivity_figure(model: LogCA, factor: float = 10.0, lo: float = DEFAULT_RANGE[0],
                       hi: float = DEFAULT_RANGE[1], points: int = 300) -> Figure:
    """Fig. 5: the base curve and the curve with each parameter improved, four panels."""
    g = np.geomspace(lo, hi, points)
    base = model.speedup(g)
    fig = Figure(figsize=(10, 7))
    axes = fig.subplots(2, 2, sharex=True, sharey=True)
    for i, (p, ax) in enumerate(zip(PARAMETERS, axes.ravel())):
        L, o, C, A = improved(model.L, model.o, model.C, model.A, i, factor)
        better = model.with_parameters(L=float(L), o=float(o), C=float(C), A=float(A))
        ax.plot(g, base, color="black", lw=1.8, label="base")
        verb = "÷" if p in "Lo" else "×"
        ax.plot(g, better.speedup(g), color=PARAMETER_COLOURS[p], lw=1.8,
                label=f"{p} {verb} {factor:g}")
        ax.set_yscale("log")
        granularity_axis(ax, lo, hi, label="granularity" if i >= 2 else "")
        ax.set_title(f"({'abcd'[i]}) {PARAMETER_NAMES[p]}", fontsize=10)
        ax.legend(fontsize=8, loc="lower right")
        ax.grid(alpha=0.3)
    fig.suptitle(f"Effect of a {factor:g}x improvement in each parameter: {model.label}")
    fig.tight_layout()
    return fig


def case_study_figure(analyses: Sequence[RegionAnalysis], title: str) -> Figure:
    """One region chart per design, stacked on a shared granularity axis (Figs. 10, 11)."""
    n = len(analyses)
    fig = Figure(figsize=(8.5, 2.4 * n + 0.8))
    axes = np.atleast_1d(fig.subplots(n, 1, sharex=True))
    for k, (ax, analysis) in enumerate(zip(axes, analyses)):
        draw_regions(ax, analysis, legend=(k == n - 1))
        ax.set_title(f"({'abcdefgh'[k]}) {analysis.model.label}", fontsize=10, loc="left")
        if k < n - 1:
            ax.set_xlabel("")
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def comparison_figure(before: LogCA, after: LogCA, lo: float, hi: float,
                      title: str) -> Figure:
    """What-if: the curve before and after a change, with g1 and g_A/2 marked on each."""
    from .logca import speedup_figure
    return speedup_figure([before, after], lo, hi, title=title)
