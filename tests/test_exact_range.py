"""Exact whole-number arrays for an interface's rational expressions
(:mod:`accelperf.lpn.analysis.interfaces.exact_range`): at every point the very float
and truth value SymPy gives, and a refusal (``Inexact``) for what they cannot keep exact;
the stream label computed from them is the one SymPy's point-by-point path gives."""

import dataclasses
import random

import numpy as np
import pytest
import sympy

from accelperf.lpn.analysis.interfaces import stream_emit, token_stream
from accelperf.lpn.analysis.interfaces.exact_range import (Inexact, exact_values, to_floats,
                                                           whole_range)
from accelperf.lpn.analysis.space import default_space
from accelperf.lpn.library import build

X, Y = sympy.symbols("x y")
POINTS = np.arange(-20, 21, dtype=np.int64)


def _number(rng, depth):
    if depth == 0 or rng.random() < 0.2:
        small = sympy.Rational(rng.randint(-99, 99), rng.randint(1, 17))
        return rng.choice([X, X, Y, small, sympy.Rational(rng.randint(1, 5), 3 ** 38)])
    a, b = _number(rng, depth - 1), _number(rng, depth - 1)
    return rng.choice([a + b, a * b, a - b, sympy.floor(a), sympy.ceiling(b),
                       sympy.Max(a, b, 3), sympy.Min(a, b), a ** 2])


def _condition(rng, depth):
    a, b = _number(rng, depth), _number(rng, depth)
    c = rng.choice([sympy.Eq(a, b), sympy.Ne(a, b), a < b, a <= b, a > b, a >= b,
                    sympy.Eq(sympy.floor(a / 4), sympy.floor(X / 4))])
    if rng.random() < 0.3:
        return rng.choice([sympy.And(c, X > 0), sympy.Or(c, X < -3), sympy.Not(c)])
    return c


def _sympy_points(expr) -> list:
    return [sympy.sympify(expr).xreplace({X: x, Y: 7}) for x in POINTS.tolist()]


def test_every_point_is_the_float_and_truth_sympy_gives():
    rng = random.Random(88)
    exact = 0
    for k in range(60):
        expr = _condition(rng, 3) if k % 3 == 0 else _number(rng, 3)
        try:
            got = exact_values(expr, {X: POINTS, Y: 7}, POINTS.size)
        except Inexact:
            continue                              # a number past 2**62: SymPy's turn
        exact += 1
        if isinstance(got, np.ndarray):
            assert got.tolist() == [bool(at) for at in _sympy_points(expr)], expr
        else:
            floats = [float(at) for at in _sympy_points(expr)]
            assert to_floats(got).tolist() == floats, expr
    assert exact >= 40


@pytest.mark.parametrize("expr", [X * sympy.Rational(5, 3 ** 38), 2 ** 60 + X,
                                  (X + sympy.Rational(1, 3)) * 2 ** 55])
def test_numbers_past_a_double_round_as_sympy_rounds(expr):
    # past 2**53 a numerator or denominator is no exact double: int / int per point
    got = exact_values(expr, {X: POINTS}, POINTS.size)
    assert max(got.den, got.largest()) > 2 ** 53
    assert to_floats(got).tolist() == [float(at) for at in _sympy_points(expr)]


@pytest.mark.parametrize("expr", [X * 0.5, sympy.sqrt(X), sympy.Symbol("z") + X, 1 / X,
                                  X ** 4 * sympy.Integer(2) ** 60, sympy.Mod(X, 3)])
def test_what_would_not_stay_exact_is_refused(expr):
    with pytest.raises(Inexact):
        exact_values(expr, {X: POINTS}, POINTS.size)


def test_a_range_past_the_bound_is_refused():
    with pytest.raises(Inexact):
        whole_range(2 ** 62, 2 ** 62 + 3)
    assert whole_range(-2, 2).tolist() == [-2, -1, 0, 1, 2]


def with_ranges(iface, **ranges):
    """``iface`` with its stream's property ranges replaced."""
    places = tuple(dataclasses.replace(p, properties={**p.properties, **ranges})
                   if p.place == iface.place else p for p in iface.space.places)
    return dataclasses.replace(iface, space=dataclasses.replace(iface.space, places=places))


def sympy_runs(iface, monkeypatch):
    with monkeypatch.context() as patch:
        def refused(*args):
            raise Inexact("the SymPy path, for comparison")
        patch.setattr(stream_emit, "_top_stages_at_once", refused)
        return stream_emit.bottleneck_runs(iface)


@pytest.fixture(scope="module")
def link():
    model = build("pipeline-over-link")             # two varying properties: bytes, nnz
    return token_stream.extract_stream_interface(model, default_space(model))


def test_the_label_at_array_speed_is_sympy_s_on_the_small_streams(link, monkeypatch):
    model = build("block-pipeline")
    block = token_stream.extract_stream_interface(model, default_space(model))
    for iface in (block, with_ranges(link, bytes=(80, 80)), with_ranges(link, nnz=(33, 33)),
                  with_ranges(link, nnz=(0, 0))):
        runs = stream_emit.bottleneck_runs(iface)
        assert runs and runs == sympy_runs(iface, monkeypatch)
    assert stream_emit.bottleneck_runs(block)[1] == (("entropy_decode", "colour_convert"),
                                                    12, 12)      # 3·12 + 4 = 40: a tie


def test_a_stage_sympy_must_evaluate_takes_the_sympy_path(monkeypatch):
    # a float coefficient is not whole-number arithmetic: the same runs, point by point
    model = build("block-pipeline")
    iface = token_stream.extract_stream_interface(model, default_space(model))
    c = iface.classes[0]
    stages = tuple(dataclasses.replace(s, work=s.work * sympy.Float(1.0))
                   if s.transition == "entropy_decode" else s for s in c.stages)
    floated = dataclasses.replace(iface, classes=(dataclasses.replace(c, stages=stages),))
    with pytest.raises(Inexact):
        stream_emit._top_stages_at_once(floated, "nnz", 0, 64, {})
    assert stream_emit.bottleneck_runs(floated) == stream_emit.bottleneck_runs(iface)
