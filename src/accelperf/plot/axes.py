"""Shared axis styling: granularity axes labelled in bytes, powers of two."""

from __future__ import annotations

import math

from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter


def size_label(nbytes: float, _pos=None) -> str:
    """Compact binary label for a power-of-two tick: 16B, 1KiB, 32MiB."""
    if nbytes <= 0:
        return ""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            value = nbytes / scale
            return f"{value:g}{unit}"
    return f"{nbytes:g}B"


def granularity_axis(ax, lo: float, hi: float, label: str = "granularity (bytes)") -> None:
    """Log-2 x axis from lo to hi with ticks every few powers of two, labelled as sizes."""
    ax.set_xscale("log", base=2)
    ax.set_xlim(lo, hi)
    first, last = math.ceil(math.log2(lo)), math.floor(math.log2(hi))
    span = max(last - first, 1)
    step = 1 if span <= 12 else 2 if span <= 24 else max(1, span // 12)
    ticks = [2.0**e for e in range(first, last + 1, step)]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(size_label))
    ax.xaxis.set_minor_formatter(NullFormatter())
    for tick in ax.get_xticklabels():
        tick.set_rotation(45)
        tick.set_horizontalalignment("right")
    ax.set_xlabel(label)
