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


def test_no_g1_between_two_points_that_are_both_below_1():
    """A model whose shape bulges above 1 between two measured sizes both below 1 (the CPU
    standing in for a GPU: 0.40 and 0.76 gave an anchored g1 of 75.5 KiB between them)."""
    bump = Curve(lambda g: 0.5 + 3.0 * np.exp(-np.log(g / (G[1] * 1.4)) ** 2 / 0.05))
    s = np.full(G.size, 0.5)
    a = AnchoredSpeedup.of(bump, G, s)
    grid = np.geomspace(G[0], G[-1], 2000)
    assert float(np.max(a.speedup(grid))) > 1                # the shape does pass 1 there
    assert a.g1() is None
    s[5:] = 2.0                                              # a real crossing further on
    g1 = AnchoredSpeedup.of(bump, G, s).g1()
    assert G[4] < g1 < G[5]


# ---------------------------------------------------------------- the g1 to quote
def test_the_g1_to_quote_is_the_anchored_one_where_the_points_cross_1():
    from accelperf.logca.quote import g1_to_quote
    g = np.array([1e3, 2e3, 4e3, 8e3])
    q = g1_to_quote(g, [0.5, 0.8, 1.2, 2.0], model_g1=2.5e3, anchored_g1=3.1e3)
    assert q.granularity == 3.1e3 and q.basis == "anchored"
    assert "between 1.95 KiB (0.8) and 3.91 KiB (1.2)" in q.reason
    back = g1_to_quote(g, [0.5, 1.2, 1.1, 0.9], model_g1=None, anchored_g1=1.5e3)
    assert back.granularity == 1.5e3 and "below 1 again at 7.81 KiB (0.9)" in back.reason
    spike = g1_to_quote(g, [0.5, 1.2, 0.8, 0.9], model_g1=None, anchored_g1=1.5e3)
    assert spike.granularity is None and spike.basis == "unreliable"
    assert str(spike).startswith("no reliable g1 (only 1.95 KiB measures a speedup above 1")
    # a noisy CPU run said "only 8 KiB measures a speedup above 1" where 256 KiB did too
    g = 2.0 ** np.arange(12, 20)
    noisy = g1_to_quote(g, [0.9, 1.1, 0.9, 0.9, 0.9, 0.9, 1.6, 0.4], None, None)
    assert noisy.basis == "unreliable" and "only" not in noisy.reason
    assert "above it at 8 KiB (1.1), 256 KiB (1.6), first at 8 KiB" in noisy.reason


def test_the_g1_to_quote_says_when_it_is_an_extrapolation_or_none():
    from accelperf.logca.quote import g1_to_quote
    g = np.array([1e3, 2e3, 4e3, 8e3])
    never = g1_to_quote(g, [0.1, 0.2, 0.3, 0.4], model_g1=None, anchored_g1=None)
    assert never.granularity is None and str(never).startswith("none (the measured speedup "
                                                               "stays below 1 (0.4 at")
    beyond = g1_to_quote(g, [0.1, 0.2, 0.3, 0.4], model_g1=1e5, anchored_g1=None)
    assert beyond.basis == "model, extrapolated" and "measure larger sizes" in beyond.reason
    always = g1_to_quote(g, [1.5, 2, 3, 4], model_g1=None, anchored_g1=None)
    assert str(always).startswith("below the sizes measured (pays off at every size")
    assert g1_to_quote(g, [1.5, 2, 3, 4], 200.0, None).granularity == 200.0
