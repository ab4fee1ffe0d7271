"""Proved latency bounds beside simulated latencies (OSDI'24 §5.3.4)."""

from __future__ import annotations

from matplotlib.figure import Figure


def bounds_figure(simulated: list[int], lower, upper, title: str) -> Figure:
    """A histogram of the simulated latencies of random inputs, with the proved best and
    worst case (``lower``/``upper``: BoundResult) as lines labelled with their witnesses'
    simulated latencies."""
    fig = Figure(figsize=(8, 4))
    ax = fig.subplots()
    ax.hist(simulated, bins=30, color="#8fa8c8", edgecolor="white",
            label=f"{len(simulated)} random inputs, simulated")
    for result, colour, word in ((lower, "#2a7a2a", "best"), (upper, "#b22222", "worst")):
        ax.axvline(result.bound, color=colour, lw=2,
                   label=f"proved {word} case {result.bound} cycles "
                         f"(witness simulates to {result.simulated})")
    span = upper.bound - lower.bound
    ax.set_xlim(lower.bound - 0.05 * span, upper.bound + 0.05 * span)
    ax.set_xlabel("latency (cycles)")
    ax.set_ylabel("inputs")
    ax.set_title(title)
    ax.legend(loc="upper center", fontsize=8, frameon=False, bbox_to_anchor=(0.5, -0.18),
              ncol=1)
    fig.subplots_adjust(bottom=0.38)
    return fig
