"""The large-end check of a LogCA fit: a measured speedup that falls where the data outgrow
a cache, which plain LogCA (no memory hierarchy) cannot follow; :mod:`.hierfit` models it."""

from __future__ import annotations

import numpy as np

from ..units import format_size


def tail_warnings(g, t0, t1, s_meas, s_model) -> list[str]:
    """Step 4c: a measured speedup that falls at the large end (a cache outgrown), which
    LogCA cannot follow. Checked the same way whichever statistic (min or median) the times
    are: a clear fall (5%) with any over-prediction, or a smaller one (2%) that the model
    over-predicts by more than 5%."""
    n = len(g)
    over = s_model[-1] / s_meas[-1] - 1
    falling = falling_tail(s_meas) if over > 0.025 else 0
    if not falling and over > 0.05:
        falling = falling_tail(s_meas, drop=0.02)
    if not falling:
        return []
    first = n - falling
    before, last = first - 1, n - 1
    return [
        f"the measured speedup falls at the large end: {s_meas[last]:.3g} at "
        f"{format_size(g[last])} against {np.median(s_meas[n // 2:first]):.3g} over "
        f"{format_size(g[n // 2])}..{format_size(g[before])}, from {format_size(g[first])} "
        f"on (accelerated {g[before] / t1[before] / 1e9:.3g} -> {g[last] / t1[last] / 1e9:.3g}"
        f" GB/s, host {g[before] / t0[before] / 1e9:.3g} -> {g[last] / t0[last] / 1e9:.3g} "
        f"GB/s). The data have likely outgrown a cache; LogCA has no memory hierarchy, and "
        f"the fitted curve over-predicts the speedup at {format_size(g[last])} by {over:.0%}"
        f" (fit with --to {format_size(g[before])} to leave it out, or with --hierarchy FILE "
        f"or --probe to model the layers)"]


def falling_tail(speedup, drop: float = 0.05) -> int:
    """How many of the largest granularities have a measured speedup more than ``drop``
    below the median of the upper half before them (LogCA's speedup never falls with g)."""
    s = np.asarray(speedup)
    n = s.size
    tail = 0
    while tail < n // 4 and n // 2 < n - tail - 1:
        reference = np.median(s[n // 2:n - tail - 1])
        if s[n - tail - 1] >= (1 - drop) * reference:
            break
        tail += 1
    return tail
