"""Computational-density figures (Steffen 2007, Figs. 1 and 2, plus a rate bar chart)."""

from __future__ import annotations

import math

import numpy as np
from matplotlib.figure import Figure

from ..density import DensityBound
from matplotlib.ticker import LogFormatterSciNotation, LogLocator, NullFormatter

from ..units import format_size


def density_figure(result: DensityBound, title: str | None = None) -> Figure:
    """Left: ρ(α) on log axes with each layer's μ marked and its β on a second axis.
    Right: σ per layer, the bottleneck highlighted, the compute ceiling as a line."""
    fig = Figure(figsize=(11, 4.4))
    left, right = fig.subplots(1, 2, gridspec_kw=dict(width_ratios=[1.4, 1]))
    sized = [l for l in result.layers if l.layer.size_bytes > 0]
    lo = min([l.layer.size_bytes for l in sized] + [1e3]) / 100
    hi = max([l.layer.size_bytes for l in sized] + [1e6]) * 10
    alpha = np.geomspace(lo, hi, 300)
    rho = np.asarray(result.algorithm.rho(alpha), float)
    # A user's formula may be 0, negative or undefined away from the layers (the bound only
    # judges ρ at each μ): draw the positive part on the log axis and leave gaps elsewhere.
    drawable = np.isfinite(rho) & (rho > 0)
    left.plot(alpha, np.where(drawable, rho, np.nan), color="black", lw=2,
              label=f"ρ(α): {result.algorithm.formula}")
    left.set_xscale("log")
    left.set_xlim(lo, hi)               # fixed: an all-gap curve gives autoscale nothing
    if drawable.any():
        left.set_yscale("log")
    else:
        left.set_ylim(0, 1)
        left.text(0.5, 0.5, "ρ(α) is not positive over this range", ha="center",
                  transform=left.transAxes)
    left.set_xlabel("local store α (bytes)")
    left.set_ylabel("ρ (computations / byte)")
    twin = left.twinx()
    twin.set_yscale("log")
    twin.set_ylabel("β (bytes / s)", color="C0")
    for i, rate in enumerate(sized):
        mu, beta = rate.layer.size_bytes, rate.layer.bandwidth_bytes_per_s
        left.axvline(mu, color=f"C{i + 1}", ls=":", lw=1)
        if rate.rho is not None and rate.rho > 0:
            left.plot([mu], [rate.rho], "o", color=f"C{i + 1}", mec="black", zorder=5)
            left.annotate(f"{rate.name}\nμ = {format_size(mu)}", (mu, rate.rho),
                          textcoords="offset points", xytext=(5, 5), fontsize=8,
                          bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.85))
        if math.isfinite(beta):
            twin.plot([mu], [beta], "s", color="C0", ms=7)
    betas = [r.layer.bandwidth_bytes_per_s for r in sized
             if math.isfinite(r.layer.bandwidth_bytes_per_s) and r.layer.bandwidth_bytes_per_s > 0]
    if betas:       # whole decades around the points, so the axis has numbered ticks
        twin.set_ylim(10 ** math.floor(math.log10(min(betas)) - 0.3),
                      10 ** math.ceil(math.log10(max(betas)) + 0.3))
    twin.yaxis.set_major_locator(LogLocator(base=10))
    twin.yaxis.set_major_formatter(LogFormatterSciNotation())
    twin.yaxis.set_minor_formatter(NullFormatter())
    left.plot([], [], "s", color="C0", label="β of the layer (right axis)")
    left.legend(fontsize=8, loc="upper left")
    left.grid(alpha=0.3, which="both")

    names = [r.name for r in result.layers]
    sigmas = [r.sigma for r in result.layers]
    finite = [s for s in sigmas if math.isfinite(s) and s > 0]
    reference = finite + ([result.compute_ceiling] if result.compute_ceiling else [])
    # A layer that sets no limit (σ infinite) gets no bar: a bar of any length would read
    # as a finite rate. Its row says so at the axis's left end instead.
    floor = min(reference) / 10 if reference else 1.0
    heights = [s if math.isfinite(s) else 0.0 for s in sigmas]
    colours = ["#d62728" if n == result.bottleneck else "#9ecae1" for n in names]
    bars = right.barh(names, heights, left=0, color=colours, edgecolor="black")
    for bar, s in zip(bars, sigmas):
        y = bar.get_y() + bar.get_height() / 2
        if math.isfinite(s):
            right.text(bar.get_width(), y, f" {s:.3g}", va="center", fontsize=8)
        else:
            right.text(0.01, y, "no limit (σ unbounded)", va="center", fontsize=8,
                       style="italic", transform=right.get_yaxis_transform())
    if result.compute_ceiling:
        right.axvline(result.compute_ceiling, color="black", ls="--", lw=1.2,
                      label=f"compute ceiling {result.compute_ceiling:.3g}/s")
        right.legend(fontsize=8, loc="lower right")
    if all(h > 0 for h, sg in zip(heights, sigmas) if math.isfinite(sg)):
        right.set_xscale("log")         # a zero-width finite bar has no place on a log axis
        if reference:
            right.set_xlim(floor, max(reference) * 5)
    right.set_xlabel("σ: computations / s allowed by the layer (eq. 6)")
    right.invert_yaxis()
    right.set_title(f"memory bound {result.bound:.3g}/s at {result.bottleneck}\n"
                    f"attainable {result.attainable:.3g}/s ({result.limited_by}-bound)",
                    fontsize=9)
    fig.suptitle(title or f"{result.algorithm.name} on {result.hierarchy.name}")
    fig.tight_layout()
    return fig
