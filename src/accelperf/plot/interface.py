"""Performance interfaces against simulation: predicted vs simulated latency (Table 3)."""

from __future__ import annotations

from matplotlib.figure import Figure


def accuracy_scatter(results: dict, title: str | None = None) -> Figure:
    """One point per input: simulated cycles (x) against the interface's prediction (y),
    plain and by phase, per model (``results``: {model: (plain Accuracy, phased
    Accuracy)}); the diagonal is an exact prediction."""
    fig = Figure(figsize=(6.4, 5.6))
    ax = fig.subplots()
    lo, hi = float("inf"), 0.0
    for colour, (name, (plain, phased)) in zip(("C0", "C1", "C2", "C3", "C4"),
                                               results.items()):
        for acc, marker, label in ((plain, "o", "plain"), (phased, "x", "by phase")):
            xs = [r.simulated for r in acc.rows]
            ys = [r.predicted for r in acc.rows]
            ax.scatter(xs, ys, marker=marker, color=colour, s=22,
                       facecolors="none" if marker == "o" else None,
                       label=f"{name}, {label} (mean {acc.mean_error:.1%}, "
                             f"max {acc.max_error:.1%})")
            lo, hi = min([lo] + xs + ys), max([hi] + xs + ys)
    ax.plot([lo, hi], [lo, hi], color="grey", lw=1, ls="--")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("simulated latency (cycles)")
    ax.set_ylabel("interface's latency (cycles)")
    ax.legend(fontsize=7, loc="upper left")
    ax.set_title(title or "Performance interfaces against simulation of the same LPN")
    return fig
