"""Computational-density figures (Steffen 2007, Figs. 1 and 2, plus a rate bar chart)."""

from __future__ import annotations

import math

import numpy as np
from matplotlib.figure import Figure

from ..density import DensityBound
from matplotlib.ticker import NullFormatter

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
                          textcoords="offset points", xytext=(5, 5), fontsize=8)
        if math.isfinite(beta):
            twin.plot([mu], [beta], "s", color="C0", ms=7)
    twin.yaxis.set_minor_formatter(NullFormatter())
    left.plot([], [], "s", color="C0", label="β of the layer (right axis)")
    left.legend(fontsize=8, loc="lower right")
    left.grid(alpha=0.3, which="both")

    names = [r.name for r in result.layers]
    sigmas = [r.sigma for r in result.layers]
    finite = [s for s in sigmas if math.isfinite(s) and s > 0]
    reference = finite + ([result.compute_ceiling] if result.compute_ceiling else [])
    cap = max(reference) * 10 if reference else 1.0   # where a "no limit" bar ends
    heights = [s if math.isfinite(s) else cap for s in sigmas]
    colours = ["#d62728" if n == result.bottleneck else "#9ecae1" for n in names]
    bars = right.barh(names, heights, color=colours, edgecolor="black")
    for bar, s in zip(bars, sigmas):
        right.text(bar.get_width(), bar.get_y() + bar.get_height() / 2,
                   " no limit" if not math.isfinite(s) else f" {s:.3g}", va="center",
                   fontsize=8)
    if result.compute_ceiling:
        right.axvline(result.compute_ceiling, color="black", ls="--", lw=1.2,
                      label=f"compute ceiling {result.compute_ceiling:.3g}/s")
        right.legend(fontsize=8, loc="lower right")
    if all(h > 0 for h in heights):     # a zero-width bar has no place on a log axis
        right.set_xscale("log")
    right.set_xlabel("σ: computations / s allowed by the layer (eq. 6)")
    right.invert_yaxis()
    right.set_title(f"memory bound {result.bound:.3g}/s at {result.bottleneck}; "
                    f"attainable {result.attainable:.3g}/s ({result.limited_by}-bound)",
                    fontsize=9)
    fig.suptitle(title or f"{result.algorithm.name} on {result.hierarchy.name}")
    fig.tight_layout()
    return fig
