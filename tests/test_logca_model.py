import math

import numpy as np
import pytest

from accelperf import LogCA, ModelError


def test_times_and_speedup_follow_eqs_1_2():
    m = LogCA(L=3, o=10, C=35, A=6, beta=1.0)
    g = np.array([1.0, 16.0, 4096.0])
    assert np.allclose(m.T0(g), 35 * g)
    assert np.allclose(m.T1(g), 10 + 3 + 35 * g / 6)
    assert np.allclose(m.speedup(g), 35 * g / (13 + 35 * g / 6))


def test_dependent_latency_eq_8():
    m = LogCA(L=2, o=100, C=50, A=10, beta=0.8, latency="dependent")
    g = np.array([4.0, 1e6])
    expected = 50 * g**0.8 / (100 + 2 * g + 50 * g**0.8 / 10)
    assert np.allclose(m.speedup(g), expected, rtol=1e-14)


def test_speedup_is_vectorised_and_keeps_shape():
    m = LogCA(L=1, o=1, C=1, A=4)
    assert m.speedup(np.ones((3, 4))).shape == (3, 4)
    assert np.ndim(m.speedup(8.0)) == 0


@pytest.mark.parametrize("field, value, words", [
    ("L", -1, "L = -1 is invalid: must be >= 0"),
    ("o", -5, "o = -5 is invalid: must be >= 0"),
    ("C", 0, "C = 0 is invalid: must be > 0"),
    ("A", -2, "A = -2 is invalid: must be > 0"),
    ("beta", 0, "beta = 0 is invalid: must be > 0"),
    ("L", math.nan, "must be a finite number"),
    ("o", math.inf, "must be a finite number"),
    ("C", "12", "must be a real number"),
    ("latency", "sometimes", "must be 'independent' or 'dependent'"),
    ("unit", "furlongs", "must be 'cycles' or 'seconds'"),
    ("frequency_hz", -1.0, "frequency_hz = -1.0 is invalid"),
])
def test_validation_names_parameter_and_range(field, value, words):
    params = dict(L=1, o=1, C=1, A=2)
    params[field] = value
    with pytest.raises(ModelError) as err:
        LogCA(**params)
    assert words in str(err.value)


def test_model_is_immutable():
    m = LogCA(L=1, o=1, C=1, A=2)
    with pytest.raises(AttributeError):
        m.L = 3


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf])
def test_bad_granularity_is_rejected(bad):
    with pytest.raises(ModelError, match="granularity"):
        LogCA(L=1, o=1, C=1, A=2).speedup([1.0, bad])


def test_limits_eqs_3_4_9_10():
    ind = LogCA(L=3, o=10, C=35, A=6)
    assert ind.large_g_limit() == 6                                   # eq. 3
    assert ind.speedup(1e15) == pytest.approx(6, rel=1e-9)
    assert ind.small_g_limit() == pytest.approx(35 / (13 + 35 / 6))   # eq. 4 at g = 1
    assert ind.small_g_limit() < 35 / 13
    lin = LogCA(L=2, o=10, C=30, A=6, latency="dependent")
    assert lin.large_g_limit() == pytest.approx(30 / (2 + 5))          # eq. 9, β = 1
    assert lin.speedup(1e15) == pytest.approx(30 / 7, rel=1e-9)
    assert lin.small_g_limit() == pytest.approx(6 * 30 / (6 * 12 + 30))  # eq. 10
    sub = LogCA(L=2, o=10, C=30, A=6, beta=0.5, latency="dependent")
    assert sub.large_g_limit() == 0 and sub.speedup(1e18) < 1e-6
    sup = LogCA(L=2, o=10, C=30, A=6, beta=1.5, latency="dependent")
    assert sup.large_g_limit() == 6 and sup.speedup(1e18) == pytest.approx(6, rel=1e-6)


def test_bounds_lie_above_the_curve():
    m = LogCA(L=2, o=1e4, C=30, A=6, beta=0.9, latency="dependent")
    g = np.geomspace(16, 2**25, 200)
    assert np.all(m.speedup(g) <= m.intensity_bound(g))   # eq. 9
    assert np.all(m.speedup(g) <= m.amdahl_bound(g))
    assert np.all(m.speedup(g) < m.A)


def test_cycles_seconds_round_trip_keeps_speedup():
    m = LogCA(L=1500, o=2.9e4, C=90, A=19, beta=1.01, frequency_hz=1.16e9)
    s = m.to_seconds()
    assert s.unit == "seconds" and s.o == pytest.approx(2.9e4 / 1.16e9)
    g = np.geomspace(16, 2**25, 50)
    assert np.allclose(s.speedup(g), m.speedup(g), rtol=1e-12)
    back = s.to_cycles()
    assert back.C == pytest.approx(90) and back.unit == "cycles"
    assert back.g1().root == pytest.approx(m.g1().root, rel=1e-12)


def test_conversion_needs_a_frequency():
    with pytest.raises(ModelError, match="frequency_hz"):
        LogCA(L=1, o=1, C=1, A=2).to_seconds()


def test_with_parameters_validates_and_rejects_unknown():
    m = LogCA(L=1, o=1, C=1, A=2)
    assert m.with_parameters(o=5).o == 5
    with pytest.raises(ModelError, match="unknown LogCA parameter"):
        m.with_parameters(Q=1)
    with pytest.raises(ModelError, match="o = -1"):
        m.with_parameters(o=-1)
