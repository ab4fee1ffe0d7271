"""Design feasibility: the boundary of the (x, y) parameter pairs that meet a target."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from ..logca.design import FeasibilityCurve


def feasibility_figure(curve: FeasibilityCurve, title: str | None = None) -> Figure:
    """The boundary curve on log axes, the feasible side shaded and the current design
    marked."""
    fig = Figure(figsize=(6.8, 4.8))
    ax = fig.add_subplot()
    ok = np.isfinite(curve.y)
    x, y = curve.x[ok], curve.y[ok]
    ax.plot(x, y, color="C0", lw=2, label=f"{curve.target.text} met exactly")
    # A per-layer step of a hierarchical model (a[L3<-DRAM]) is a relative extra cost
    # above -1, which may be negative: a linear axis, and "at most" shades down to -1.
    step_y = "[" in curve.y_parameter
    if x.size:
        top, bottom = max(float(y.max()) * 10, 1e-300), max(float(y.min()) / 10, 1e-300)
        if step_y:
            bottom = -1.0
        edge = bottom if curve.y_direction == "at most" else top
        ax.fill_between(x, y, edge, color="C0", alpha=0.2, lw=0, label="meets the target")
        # the shading runs to the axis: an unshaded margin below "at most" read as a bound
        ax.set_ylim(**({"bottom": edge} if curve.y_direction == "at most" else {"top": edge}))
    m = curve.model
    value = getattr(m, "value_of", None) or (lambda name: getattr(m, name))
    ax.plot([value(curve.x_parameter)], [value(curve.y_parameter)], "o",
            color="C3", mec="black", ms=8, zorder=5, label=f"{m.label} now")
    ax.set_xscale("linear" if "[" in curve.x_parameter else "log")
    ax.set_yscale("linear" if step_y else "log")
    ax.set_xlabel(curve.x_parameter)
    ax.set_ylabel(curve.y_parameter)
    ax.set_title(title or f"Which ({curve.x_parameter}, {curve.y_parameter}) meet "
                          f"{curve.target.text}")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    return fig
