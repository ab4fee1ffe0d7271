"""Judging a LogCA fit on sizes it was not fitted to: predictions against measurements, the
model-free baseline (the two neighbouring sizes), the alternate split and k-fold folds.

* ``predict``: the relative speedup error ``S_model(g)/S_measured(g) − 1`` at each test size,
  its mean and max of absolute values (the figure every fit reports in-sample).
* ``interpolate_neighbours``: the baseline a model must beat. The speedup at a held-out size
  is read off the straight line through its two neighbouring training sizes in
  (ln g, ln speedup) — power laws, which LogCA's pieces are, are straight there. Beyond the
  training range the line through the two nearest sizes is extended.
* ``alternate_split``: every other size for training (the first, third, ...), the rest held
  out: each held-out size has a training size on both sides wherever it can.
* ``fold_indices``: k interleaved folds (size i in fold i mod k), so every fold's held-out
  sizes spread over the range; k = n is leave-one-size-out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import invalid


@dataclass(frozen=True)
class PredictedPoint:
    granularity_bytes: float
    measured_speedup: float
    predicted_speedup: float

    @property
    def relative_error(self) -> float:
        return self.predicted_speedup / self.measured_speedup - 1.0

    def to_dict(self) -> dict:
        return {"granularity_bytes": self.granularity_bytes,
                "measured_speedup": self.measured_speedup,
                "predicted_speedup": self.predicted_speedup}


@dataclass(frozen=True)
class Prediction:
    """Predicted against measured speedups at the test sizes."""

    points: tuple[PredictedPoint, ...]

    @property
    def errors(self) -> np.ndarray:
        return np.abs([p.relative_error for p in self.points])

    @property
    def mean(self) -> float:
        return float(np.mean(self.errors))

    @property
    def max(self) -> float:
        return float(np.max(self.errors))

    def to_dict(self) -> dict:
        return {"mean": self.mean, "max": self.max,
                "per_granularity": [p.to_dict() for p in self.points]}

    def __repr__(self) -> str:
        return (f"Prediction({len(self.points)} sizes: error mean {self.mean:.1%}, "
                f"max {self.max:.1%})")


@dataclass(frozen=True)
class PredictionCheck:
    """A fit judged on sizes it did not see: its curve's prediction, the same curve anchored
    at its measured sizes (:mod:`.anchored`), and the model-free baseline beside them, the
    line through the two neighbouring fitted sizes (:func:`interpolate_neighbours`). A model
    is worth its parameters there only where it beats that line."""

    model: Prediction
    anchored: Prediction
    neighbour_interpolation: Prediction

    def to_dict(self) -> dict:
        return {"model": self.model.to_dict(), "anchored": self.anchored.to_dict(),
                "neighbour_interpolation": self.neighbour_interpolation.to_dict()}

    def __repr__(self) -> str:
        return (f"PredictionCheck({len(self.model.points)} sizes: error mean model "
                f"{self.model.mean:.1%}, anchored {self.anchored.mean:.1%}, neighbour "
                f"interpolation {self.neighbour_interpolation.mean:.1%})")


def predict(speedup, granularity, measured) -> Prediction:
    """``speedup`` (a function of g) against the measured speedups at ``granularity``."""
    g = np.asarray(granularity, float)
    s = np.asarray(measured, float)
    with np.errstate(all="ignore"):
        model = np.asarray(speedup(g), float)
    return Prediction(tuple(PredictedPoint(float(a), float(b), float(c))
                            for a, b, c in zip(g, s, model)))


def interpolate_neighbours(g_train, s_train, g) -> np.ndarray:
    """The speedup at ``g`` on the line through the two neighbouring training sizes in
    (ln g, ln speedup), extended from the two nearest beyond the training range."""
    x, y = np.log(np.asarray(g_train, float)), np.log(np.asarray(s_train, float))
    if x.size < 2:
        raise invalid("training sizes", x.size, "at least 2 to interpolate between")
    order = np.argsort(x)
    x, y = x[order], y[order]
    t = np.log(np.asarray(g, float))
    i = np.clip(np.searchsorted(x, t) - 1, 0, x.size - 2)
    slope = (y[i + 1] - y[i]) / (x[i + 1] - x[i])
    return np.exp(y[i] + slope * (t - x[i]))


def alternate_split(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(training, held-out) indices of n sorted sizes: every other one from the first."""
    idx = np.arange(n)
    return idx[::2], idx[1::2]


def fold_indices(n: int, k: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """k interleaved (training, held-out) index pairs of n sizes; k = n leaves one out."""
    if not 2 <= k <= n:
        raise invalid("folds", k, f"between 2 and the number of sizes ({n})")
    idx = np.arange(n)
    return [(idx[idx % k != f], idx[idx % k == f]) for f in range(k)]
