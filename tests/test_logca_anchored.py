"""The fitted speedup anchored at its measured sizes (accelperf.logca.anchored, issue 36)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from accelperf.errors import ModelError
from accelperf.logca.anchored import AnchoredSpeedup
from accelperf.logca.holdout import interpolate_neighbours
from accelperf.logca.model import LogCA


@dataclass(frozen=True)
class Curve:
    """A speedup curve given as a function, for tests."""

    f: object

    def speedup(self, g):
        return self.f(np.asarray(g, float))


G = np.geomspace(4096, 2**26, 9)


def test_it_passes_through_every_measured_point_and_is_the_model_where_that_fits():
    model = LogCA(L=2e-11, o=2e-5, C=1e-9, A=30, beta=1.0, unit="seconds",
                  latency="dependent")
    measured = model.speedup(G) * np.exp(0.3 * np.sin(np.arange(G.size)))
    a = AnchoredSpeedup.of(model, G, measured)
    np.testing.assert_allclose(a.speedup(G), measured, rtol=1e-12)
    exact = AnchoredSpeedup.of(model, G, model.speedup(G))
    between = np.sqrt(G[:-1] * G[1:])
    np.testing.assert_allclose(exact.speedup(between), model.speedup(between), rtol=1e-12)


def test_a_constant_model_anchored_is_the_neighbour_interpolation():
    s = np.array([0.2, 0.5, 3.0, 2.0, 9.0, 8.0, 7.0, 12.0, 15.0])
    a = AnchoredSpeedup.of(Curve(lambda g: np.full_like(g, 2.0)), G, s)
    between = np.sqrt(G[:-1] * G[1:])
    np.testing.assert_allclose(a.speedup(between), interpolate_neighbours(G, s, between),
                               rtol=1e-12)


def test_g1_lies_where_the_points_cross_1_even_where_the_model_pays_off_at_1_byte():
    # above 1 at a byte (a host constant over the copies' cost, no floor), below 1 at the
    # least measured size, as the H100 FFT's every-other-size fit was
    dip = Curve(lambda g: 1.5 / (1 + np.sqrt(g / 500)) + g / 20000)
    s = np.array([0.8, 2.4, 2.7, 3.2, 7.6, 16.0, 15.5, 14.6, 14.0])
    a = AnchoredSpeedup.of(dip, G, s)
    assert float(dip.speedup(1.0)) > 1
    g1 = a.g1()
    assert G[0] < g1 < G[1]
    assert float(a.speedup(g1)) == pytest.approx(1.0, abs=1e-9)


def test_g1_is_none_where_the_curve_never_passes_1():
    a = AnchoredSpeedup.of(Curve(lambda g: np.full_like(g, 0.5)), G, np.full(G.size, 0.4))
    assert a.g1() is None


def test_bad_anchor_points_are_refused():
    with pytest.raises(ModelError, match="anchor points"):
        AnchoredSpeedup.of(Curve(lambda g: g), G, np.full(G.size - 1, 1.0))
    with pytest.raises(ModelError, match="anchor points"):
        AnchoredSpeedup.of(Curve(lambda g: g), G, np.zeros(G.size))
