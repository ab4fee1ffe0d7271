"""A fitted speedup curve anchored at the measured sizes (issue 36: prediction between sizes).

A fitted LogCA curve S_m(g) misses its own training points where the host's time has a
feature no term of the model carries (a thread pool that switches on between two sizes, a
plateau of the host time while the copies grow; examples/measurements/gpu-h200-harness/). The
neighbour interpolation (:func:`.holdout.interpolate_neighbours`) follows the points but
draws a straight line in (ln g, ln S) between them, missing the model's curvature (the
floor's corner, a layer's bend). The anchored curve keeps both: the model's shape, shifted at
each measured size onto the measurement,

    ln S_a(g) = ln S_m(g) + r(g),     r(g_i) = ln S(g_i) − ln S_m(g_i),

with r piecewise linear in ln g between the measured sizes and held at its end value beyond
them (regression with interpolated residuals, "regression kriging" with a linear kernel).
It passes through every measured point; where the model fits its points (r ≈ 0) it is the
model; for a model that is a power law between two neighbours it is the neighbour
interpolation. It adds no parameter, so the model's parameters and metrics keep their
meaning; only prediction at a size and g1 read the anchored curve.

g1 here is the first size where S_a passes 1 upwards (a scan of 64 points per decade over
the measured range and one decade beyond each end, then Brent's method to 1e-12 in ln g; a
curve at or above 1 over the whole scan gives the scan's start, a bound: it pays off below
the least size measured):
between two measured sizes whose speedups lie either side of 1 it is the crossing of the
model's shape pinned to both, and between two on the same side of 1 there is none: never
one the points contradict (the fitted curve alone gave
g1 = 1 B on the H100 FFT's every-other sizes, where its own 4 KiB point measured 0.80).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize

from ..errors import invalid

SCAN_PER_DECADE = 64


@dataclass(frozen=True)
class AnchoredSpeedup:
    """``model``'s speedup shifted onto the measured speedups at ``granularity``."""

    model: object                              # anything with speedup(g)
    granularity: np.ndarray = field(repr=False)
    residual: np.ndarray = field(repr=False)   # ln measured − ln model at each size

    @classmethod
    def of(cls, model, granularity, measured) -> "AnchoredSpeedup":
        g = np.asarray(granularity, float)
        s = np.asarray(measured, float)
        if g.size < 1 or g.shape != s.shape or np.any(s <= 0) or np.any(g <= 0):
            raise invalid("anchor points", f"{g.size} sizes",
                          "as many positive speedups as positive sizes, at least one")
        order = np.argsort(g)
        with np.errstate(all="ignore"):
            fitted = np.asarray(model.speedup(g[order]), float)
        return cls(model, g[order], np.log(s[order]) - np.log(fitted))

    def speedup(self, g):
        g = np.asarray(g, float)
        with np.errstate(all="ignore"):
            base = np.asarray(self.model.speedup(g), float)
        return base * np.exp(np.interp(np.log(g), np.log(self.granularity), self.residual))

    def g1(self) -> float | None:
        """The first g (from a decade below the least measured size to a decade above the
        largest) where the anchored speedup passes 1 upwards; None where it never does."""
        lo, hi = self.granularity[0] / 10, self.granularity[-1] * 10
        grid = np.geomspace(lo, hi, int(SCAN_PER_DECADE * math.log10(hi / lo)) + 1)
        s = np.asarray(self.speedup(grid), float) - 1
        up = np.flatnonzero((s[:-1] < 0) & (s[1:] >= 0))
        if up.size == 0:
            return float(lo) if s[0] >= 0 else None
        measured = np.asarray(self.speedup(self.granularity), float)
        for i in up:
            root = math.exp(optimize.brentq(lambda x: float(self.speedup(math.exp(x))) - 1,
                                            math.log(grid[i]), math.log(grid[i + 1]),
                                            xtol=1e-12))
            if self._shown_by_points(root, measured):
                return root
        return None

    def _shown_by_points(self, g: float, measured: np.ndarray) -> bool:
        """Whether a crossing at g is one the measured points show: beyond them, the
        model's shape says where; between two of them, only if their speedups lie either
        side of 1 (the model's shape bulging above 1 between two points both below it is no
        crossing: on the CPU standing in for a GPU, speedups of 0.40 and 0.76 gave g1 =
        75.5 KiB between them)."""
        j = int(np.searchsorted(self.granularity, g))
        if j == 0 or j == self.granularity.size:
            return True
        return bool(measured[j - 1] < 1 <= measured[j])
