"""A model against measured cycles: relative error per input against input size
(``accelperf lpn compare --out``)."""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.ticker import PercentFormatter


def error_figure(model: str, sizes, errors, before=None, size_label: str = "input size "
                 "(blocks, tokens or items)") -> Figure:
    """Points: (simulated − measured) / measured for each input, on a log size axis;
    ``before`` (errors of another parameter set, same inputs) drawn as open rings."""
    fig = Figure(figsize=(7.5, 4.2))
    ax = fig.add_subplot()
    if before is not None:
        ax.plot(sizes, [100 * e for e in before], "o", mfc="none", color="0.55",
                label="before")
    ax.plot(sizes, [100 * e for e in errors], "o", color="C0",
            label="model" if before is None else "after")
    ax.axhline(0.0, color="0.4", lw=0.8)
    if min(sizes) > 0 and max(sizes) > 10 * min(sizes):
        ax.set_xscale("log")
    ax.yaxis.set_major_formatter(PercentFormatter())      # decimals as the range needs
    ax.set_xlabel(size_label)
    ax.set_ylabel("error (simulated − measured) / measured")
    mean = sum(abs(e) for e in errors) / len(errors)
    ax.set_title(f"{model}: {len(errors)} inputs, mean |error| {mean:.2%}, "
                 f"max {max(abs(e) for e in errors):.2%}")
    if before is not None:
        ax.legend(frameon=False)
    ax.grid(True, which="major", color="0.9")
    return fig
