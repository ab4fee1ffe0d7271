"""A stream's slope derived from its period recurrence (accelperf.lpn.analysis.steady):
the cycle mean of the max-plus recurrence equals the cycles per token the simulator
shows between two long uniform streams, and its critical cycle names the firings."""

from fractions import Fraction

import pytest
import sympy

from accelperf.lpn import simulate
from accelperf.lpn.analysis.interface import extract_interface
from accelperf.lpn.analysis.schedule import PeriodSchedule, Step
from accelperf.lpn.analysis.space import default_space, space_from_dict
from accelperf.lpn.analysis.steady import stream_slope
from accelperf.lpn.library import build
from extracted import default_interface

S = sympy.Symbol("mean_blocks_symbols", real=True)


@pytest.fixture(scope="module")
def decoder():
    return default_interface("jpeg-decoder")


@pytest.mark.parametrize("symbols", [1, 17, 29, 40, 63])
def test_the_cycle_mean_is_the_simulated_slope_of_a_uniform_stream(decoder, symbols):
    model, iface = decoder
    schedule = iface.classes[0].schedule
    slope = stream_slope(schedule, {"symbols": symbols}, {"symbols": S})
    short, long = (simulate(model, [symbols] * n).latency for n in (600, 1200))
    assert slope.cycles_per_token == Fraction(long - short, 600)
    # the critical cycle's weight per token, at the point, is the slope itself
    assert slope.per_token.xreplace({S: symbols}) == sympy.Rational(
        slope.cycles_per_token.numerator, slope.cycles_per_token.denominator)


def test_the_critical_cycle_names_the_bottleneck_that_holds_the_stream(decoder):
    _, iface = decoder
    schedule = iface.classes[0].schedule
    back_end = stream_slope(schedule, {"symbols": 1}, {"symbols": S})
    assert back_end.per_token == sympy.Rational(526, 6)      # no symbol: the back end
    assert set(back_end.cycle.transitions) == {"idct_y", "idct_cb", "idct_cr",
                                               "colour_convert"}
    front = stream_slope(schedule, {"symbols": 50}, {"symbols": S})
    assert front.per_token == 3 * S + 6 and set(front.cycle.transitions) == {"entropy_decode"}
    assert front.cycle.describe() == "entropy_decode x6 (1 period(s))"


def _step(name, delay, after):
    return Step(name, sympy.Integer(delay), sympy.Integer(0), tuple(after), False)


def test_karp_finds_the_heaviest_cycle_per_period():
    # a -> b within a period; a waits for its own last done (5 a period) and for b of the
    # period before (5 + 3 = 8 a period); c runs alone at 4 a period, two periods back to
    # itself through a relay d of 3 cycles.
    steps = (_step("a", 5, [("done", -1, 0), ("done", -1, 1)]),
             _step("b", 3, [("done", 0, 0)]),
             _step("c", 4, [("done", -1, 2)]))
    slope = stream_slope(PeriodSchedule("s", 2, steps, steps), {}, {})
    assert slope.cycles_per_token == Fraction(8, 2)
    assert slope.cycle.transitions in (("a", "b"), ("b", "a")) and slope.cycle.periods == 1
    slower = (steps[0], steps[1], _step("c", 9, [("done", -1, 2)]))
    slope = stream_slope(PeriodSchedule("s", 2, slower, slower), {}, {})
    assert slope.cycles_per_token == Fraction(9, 2) and slope.cycle.transitions == ("c",)


def test_a_recurrence_without_a_cycle_has_no_slope():
    steps = (_step("a", 5, []), _step("b", 3, [("done", 0, 0)]))
    assert stream_slope(PeriodSchedule("s", 1, steps, steps), {}, {}) is None


def test_a_probe_of_two_periods_gives_the_slope_under_a_stated_assumption():
    """Two MCUs cannot prove the recurrence periodic (no replay), but the coupling term
    is still the critical cycle, saying it assumes the second period repeats."""
    model = build("jpeg-decoder")
    space = space_from_dict(model, {"places": {"blocks": {
        "count": [6, 6000000], "probe": 12, "properties": {"symbols": [1, 63]}}}})
    (c,) = extract_interface(model, space).classes
    assert c.schedule is None
    (coupling,) = [g for g in c.gaps if g.transition == "coupling"]
    assert coupling.gap == sympy.Rational(526, 6)
    assert coupling.bound.endswith("its probe's second period repeating")


def test_a_stream_without_a_recurrence_keeps_a3s_bottleneck():
    model = build("block-pipeline")
    (c,) = extract_interface(model, default_space(model)).classes
    assert c.schedule is None and "coupling" not in {g.transition for g in c.gaps}
    n, s = sympy.Symbol("n_blocks", integer=True, positive=True), \
        sympy.Symbol("mean_blocks_nnz", real=True)
    # A.3's loops alone give the simulator's slope of a uniform stream here
    for nnz in (0, 15, 53):
        short, long = (simulate(model, [nnz] * k).latency for k in (300, 600))
        assert float(c.latency.subs({n: 300, s: nnz})) / 300 == (long - short) / 300
