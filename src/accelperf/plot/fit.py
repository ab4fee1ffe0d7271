"""The measured speedup against the fitted LogCA curve (ISCA'17 Fig. 7)."""

from __future__ import annotations

import math

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from ..logca.fit import FitResult
from .axes import granularity_axis


def fit_figure(result: FitResult, title: str | None = None, extra=(), band=None) -> Figure:
    """Points: measured speedup; line: the fitted model; markers: g1 and g_A/2.
    ``extra`` are further LogCA models drawn for comparison (e.g. a paper preset); ``band``
    (an UncertaintyResult over the measured granularities) is shaded, 5th to 95th
    percentile."""
    lo, hi, grid, fig, ax = _measured_axes(result, "C0", 300)
    if band is not None:
        ax.fill_between(band.granularity, band.band["p5"], band.band["p95"], color="C0",
                        alpha=0.2, lw=0, label=f"90% band, {band.samples} draws of the fit")
    ax.plot(grid, result.speedup(grid), color="C0", lw=2,
            label=f"LogCA fit (mean error {result.mean_error:.1%}, max {result.max_error:.1%})")
    for crossing, marker, text in ((result.g1, "D", "g₁"), (result.g_half, "s", "g_A/2")):
        if crossing.model is not None and lo <= crossing.model <= hi:
            y = float(result.speedup(crossing.model))
            ax.plot([crossing.model], [y], marker, color="black", ms=7, zorder=6)
            ax.annotate(text, (crossing.model, y), textcoords="offset points", xytext=(5, -12))
    for i, other in enumerate(extra, start=1):
        ax.plot(grid, other.speedup(grid), color=f"C{i}", lw=1.5, ls="--", label=other.label)
    ax.axhline(1.0, color="0.5", lw=0.8)
    ax.axhline(result.model.A, color="C0", lw=0.8, ls=":")
    return _finish(fig, ax, lo, hi, title or "Measured speedup and the fitted LogCA model")


def _draw_bounds(ax, bounds, lo: float, hi: float) -> None:
    """Each layer's bound (ISCA'17 Fig. 4's asymptote, asked of the data living in that
    layer) as a dashed level over the sizes where the data live there."""
    for k, b in enumerate(bounds):
        end = bounds[k + 1].start if k + 1 < len(bounds) else hi
        start, end, limit = max(b.start, lo), min(end, hi), b.bound.limit
        if start < end and math.isfinite(limit) and limit > 0:
            where = f", data in {b.layer.name}" if len(bounds) > 1 else ""
            ax.hlines(limit, start, end, colors=f"C{(k + 2) % 10}", linestyles="--", lw=1.2,
                      label=f"{b.bound.kind} bound{where}: {limit:.3g}")


def _measured_axes(result, colour: str, points: int):
    """(lo, hi, grid, figure, axes) with the measured speedups drawn: the range is the
    measured one widened twofold each way."""
    g = result.granularity
    lo, hi = float(g.min()) / 2, float(g.max()) * 2
    fig = Figure(figsize=(7.5, 4.6))
    ax = fig.add_subplot()
    ax.plot(g, result.speedup_measured, "o", color=colour, label="measured", zorder=5)
    return lo, hi, np.geomspace(lo, hi, points), fig, ax


def _finish(fig, ax, lo, hi, title, subs=(1.0, 2.0, 5.0), legend="lower right") -> Figure:
    """Log speedup axis, granularity axis, title, grid and legend of a fit figure."""
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=subs))
    # %g: ScalarFormatter picked one format for every tick and printed 0.3 and 0.5 as 0
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    granularity_axis(ax, lo, hi)
    ax.set_ylabel("speedup T0 / T1")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc=legend)
    fig.tight_layout()
    return fig


def hierarchy_fit_figure(result, title: str | None = None, band=None, bounds=()) -> Figure:
    """Measured speedup (points) with plain LogCA and LogCA with the memory hierarchy
    (lines), each with its errors in the legend; dotted verticals where the working set
    w·g reaches a layer's capacity, with the layer's name; ``band`` (an UncertaintyResult
    of the chosen model) shaded; ``bounds`` (:func:`.layerbounds.layer_bounds`) drawn."""
    g = result.granularity
    lo, hi = float(g.min()) / 2, float(g.max()) * 2
    grid = np.geomspace(lo, hi, 400)
    fig = Figure(figsize=(7.5, 4.6))
    ax = fig.add_subplot()
    ax.plot(g, result.speedup_measured, "o", color="black", label="measured", zorder=5)
    if band is not None:
        ax.fill_between(band.granularity, band.band["p5"], band.band["p95"], color="C0",
                        alpha=0.2, lw=0, label=f"90% band, {band.samples} draws of the fit")
    styles = {"plain": ("C1", "--", "plain LogCA"), "hierarchical": ("C0", "-", "with the hierarchy")}
    for cand in (result.plain, result.hierarchical):
        if cand is None:
            continue
        colour, ls, text = styles[cand.kind]
        mean, worst = result.errors_of(cand)
        chosen = ", chosen by AIC" if cand.kind == result.chosen else ""
        ax.plot(grid, cand.model.speedup(grid), color=colour, ls=ls, lw=2,
                label=f"{text} (mean error {mean:.1%}, max {worst:.1%}{chosen})")
    model = result.hierarchical.model if result.hierarchical is not None else None
    if model is not None:
        for k, layer in enumerate(model.layers[:-1]):
            x = model.transition(k)
            if lo <= x <= hi and math.isfinite(x):
                ax.axvline(x, color="0.5", lw=0.8, ls=":")
                ax.annotate(f"{layer.name} full", (x, 0.98), xycoords=("data", "axes fraction"),
                            rotation=90, fontsize=7, color="0.35", xytext=(-9, 0),
                            textcoords="offset points", va="top")
    if result.g1.model is not None and lo <= result.g1.model <= hi:
        ax.plot([result.g1.model], [1.0], "D", color="black", ms=6, zorder=6)
        ax.annotate("g₁", (result.g1.model, 1.0), textcoords="offset points", xytext=(5, -12))
    ax.axhline(1.0, color="0.5", lw=0.8)
    _draw_bounds(ax, bounds, lo, hi)
    return _finish(fig, ax, lo, hi, title or "Measured speedup, LogCA with and without the "
                                             "memory hierarchy", subs=(1.0, 2.0, 3.0, 5.0))


def chosen_fit_figure(result, title: str | None = None, bounds=()) -> Figure:
    """A fit whose terms were chosen by cross-validation (:class:`.choose.ChosenFit`):
    measured speedup (points), the model (line), g1 with its jackknife 95% interval (shaded)
    and the terms kept in the legend; ``bounds`` (:func:`.layerbounds.layer_bounds`) drawn."""
    lo, hi, grid, fig, ax = _measured_axes(result, "black", 400)
    kept = ", ".join(t.term for t in result.terms if t.kept)
    name = f"LogCA + {kept}" if kept else "plain LogCA"
    # two lines: with four or five terms one line ran past the axes and squeezed the plot
    ax.plot(grid, result.speedup(grid), color="C0", lw=2,
            label=f"{name}\n(error {result.mean_error:.1%} in sample, "
                  f"{result.cv_error:.1%} cross-validated)")
    anchored = result.anchored_g1
    if anchored is not None and lo <= anchored <= hi:
        ax.plot([anchored], [1.0], "o", mfc="none", mec="C3", ms=9, mew=1.5, zorder=6,
                label="g₁ anchored at the measured points")
    c = result.g1
    if c.interval is not None:
        ax.axvspan(max(c.interval[0], lo), min(c.interval[1], hi), color="C0", alpha=0.12,
                   lw=0, label="g₁, 95% jackknife interval")
    if c.model is not None and lo <= c.model <= hi:
        ax.plot([c.model], [1.0], "D", color="black", ms=6, zorder=6, label="g₁ of the model")
        ax.annotate("g₁", (c.model, 1.0), textcoords="offset points", xytext=(5, -12))
    ax.axhline(1.0, color="0.5", lw=0.8)
    _draw_bounds(ax, bounds, lo, hi)
    return _finish(fig, ax, lo, hi, title or "Measured speedup and LogCA with the terms "
                                             "the data earn", subs=(1.0, 2.0, 3.0, 5.0),
                   legend="best")
