"""`logca design`: targets solved backwards; every answer plugged back gives the target."""

import json
import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from accelperf import LogCA, ModelError
from accelperf.logca import preset
from accelperf.logca.design import (check_pair, evaluate, feasibility_curve, parse_target,
                                    solve_design)

log_uniform = lambda lo, hi: st.floats(math.log10(lo), math.log10(hi)).map(lambda e: 10.0**e)


def metric_of(model, target):
    return float(evaluate(target, model.L, model.o, model.C, model.A, model.beta,
                          model.dependent))


def within_1e9_or_its_conditioning(model, parameter, value, target):
    """The metric at the answer equals the target to 1e-9, or to what the metric's
    conditioning allows: where it is steep in the parameter (A a few 1e-8 above 1, or
    C·(A−1) ≈ A·L, where eq. 11's denominator cancels) a relative change of one ulp of the
    parameter moves it by κ·eps (κ = |d ln metric / d ln parameter|), and the metric's own
    evaluation in doubles is off by as much: within a few of those steps no double does
    measurably better."""
    at = lambda v: metric_of(model.with_parameters(**{parameter: v}), target)
    got = at(value)
    if got == pytest.approx(target.value, rel=1e-9):
        return True
    h = 1e-9                      # small: near its pole the metric ends a little further
    kappa = max((abs(math.log(at(value * (1 + d)) / got)) / h for d in (h, -h)
                 if math.isfinite(at(value * (1 + d)))), default=0.0)
    eps = np.finfo(float).eps
    return abs(got / target.value - 1) <= 1e-9 + 4 * kappa * eps


def check_plugged_back(model, result):
    target = result.target
    for p, sol in result.solutions.items():
        if sol.value is None:
            assert sol.reason
            continue
        changed = model.with_parameters(**{p: sol.value})
        if sol.value == 0:
            assert target.met(metric_of(changed, target)) and "only with" in sol.reason
            continue
        if sol.reason is None:
            assert within_1e9_or_its_conditioning(model, p, sol.value, target), p
            continue
        # an edge where the metric stops existing: met on one side, absent on the other
        inside, outside = (0.999, 1.001) if sol.direction == "at most" else (1.001, 0.999)
        met = model.with_parameters(**{p: sol.value * inside})
        gone = model.with_parameters(**{p: sol.value * outside})
        assert target.met(metric_of(met, target)) and math.isnan(metric_of(gone, target))
        if p == "A" and target.metric == "g1" and sol.value == pytest.approx(1, abs=1e-6):
            assert "holds for every A > 1" in sol.reason     # no g1 without acceleration
        else:
            assert "Implication 4" in sol.reason


@settings(max_examples=80, deadline=None)
# C·(A−1) − A·L = 0.0097 at the answer: κ = 2.9e6, the answer 1.4e-9 from 1024
@example(L=1.0, o=1.0, C=3162.2776601683795, A=10.0, beta=1.0, dependent=True,
         target="g1<=1KiB")
@given(L=log_uniform(1e-2, 1e4), o=log_uniform(1, 1e8), C=log_uniform(0.1, 1e4),
       A=log_uniform(1.1, 300), beta=st.floats(0.4, 2.0), dependent=st.booleans(),
       target=st.sampled_from(["g1<=1KiB", "g1<=64B", "g_half<=8KiB", "g_A<=1MiB",
                               "speedup(64KiB)>=5", "speedup(4KiB)>=1.5", "g1>=4KiB"]))
def test_answers_plug_back_to_the_target(L, o, C, A, beta, dependent, target):
    m = LogCA(L=L, o=o, C=C, A=A, beta=beta, latency="dependent" if dependent else "independent")
    check_plugged_back(m, solve_design(m, target))


@pytest.mark.parametrize("target", ["g1<=1KiB", "g1<=64B", "speedup(64KiB)>=5",
                                    "g_half<=8KiB", "speedup(1MiB)>=2"])
@pytest.mark.parametrize("device, kernel", [("ultrasparc-t2", "aes"), ("apu", "radix-sort"),
                                            ("apu", "gemm"), ("sparc-t4-instr", "sha")])
def test_presets_plug_back(device, kernel, target):
    m = preset(device, kernel)
    check_plugged_back(m, solve_design(m, target))


def test_t2_g1_budget_by_hand():
    # Eq. 5 with β = 1.01: g1 = (A/(A−1)·(o+L)/C)^(1/β) = 64  ⇒  o = (64^1.01·C·(A−1)/A) − L
    m = preset("ultrasparc-t2", "aes")
    r = solve_design(m, "g1<=64B")
    o = 64**1.01 * 90 * 18 / 19 - 1500
    assert r.solutions["o"].value == pytest.approx(o, rel=1e-12)
    assert r.solutions["o"].direction == "at most"
    assert r.solutions["C"].value == pytest.approx(19 / 18 * 30500 / 64**1.01, rel=1e-12)
    # L alone cannot: with L = 0, g1 = (19/18·29000/90)^(1/1.01) ≈ 321 B > 64 B
    assert r.solutions["L"].value is None and "the overhead alone exceeds" in \
        r.solutions["L"].reason and "321 B" in r.solutions["L"].reason
    assert r.solutions["A"].value is None and "unbounded acceleration" in \
        r.solutions["A"].reason


def test_speedup_above_A_is_impossible_for_every_parameter_but_A():
    r = solve_design(preset("ultrasparc-t2", "aes"), "speedup(4KiB)>=25")
    for p in "LoC":
        assert r.solutions[p].value is None and "never exceeds A = 19" in r.solutions[p].reason
        assert not r.solutions[p].possible
    assert r.solutions["A"].value is None      # even unbounded A: the overhead bound is 13


def test_edge_where_g1_stops_existing():
    # β = 0.5 with growing latency: raising L merges g1 with the falling crossing at the peak
    m = LogCA(L=1, o=1, C=1, A=10, beta=0.5, latency="dependent")
    r = solve_design(m, "g1<=1KiB")
    L = r.solutions["L"]
    assert L.direction == "at most" and L.reason is not None
    check_plugged_back(m, r)


def test_target_met_for_every_value():
    r = solve_design(LogCA(L=0, o=0, C=5, A=3), "speedup(4KiB)>=2")
    # no offload cost: the speedup is A = 3 at every size, whatever C
    assert r.met_now and r.solutions["C"].value is None and "every value" in \
        r.solutions["C"].reason and r.solutions["C"].possible
    assert r.solutions["o"].value == pytest.approx(3413.33333, rel=1e-9)  # 2 = 5g/(o + 5g/3)
    assert r.solutions["A"].value == pytest.approx(2.0)


def test_repr_says_whether_the_target_is_met_and_on_which_side():
    t2 = preset("ultrasparc-t2", "aes")                   # g1 = 337 B
    missed = repr(solve_design(t2, "g1<=64B"))
    assert "not met now (g1 = 337 B)" in missed
    assert "o at most 4189" in missed and "C at least 482.5" in missed
    assert "L none" in missed and "A none" in missed    # no value of them reaches 64 B
    met = repr(solve_design(t2, "g1<=1KiB"))
    assert "met already (g1 = 337 B)" in met and "A at least 1.447" in met
    # every value of C meets it: "any", not "none"
    assert "C any" in repr(solve_design(LogCA(L=0, o=0, C=5, A=3), "speedup(4KiB)>=2"))


def test_feasibility_curve_points_plug_back():
    m = preset("ultrasparc-t2", "aes")
    curve = feasibility_curve(m, "g1<=64B", "o", "L", points=25)
    target = parse_target("g1<=64B")
    solved = np.isfinite(curve.y)
    assert solved.sum() >= 5 and curve.y_direction == "at most"
    for x, y in zip(curve.x[solved], curve.y[solved]):
        assert metric_of(m.with_parameters(o=float(x), L=float(y)), target) == \
            pytest.approx(64, rel=1e-9)
    # L must fall as o grows towards the single-parameter answer, then nothing is left
    assert np.all(np.diff(curve.y[solved]) < 0)
    assert np.all(curve.x[~solved] > solve_design(m, "g1<=64B").solutions["o"].value)


@pytest.mark.parametrize("text, words", [
    ("g2<=1KiB", "expected METRIC OP VALUE"), ("g1=1KiB", "expected METRIC OP VALUE"),
    ("g1<=lots", "--target size"), ("speedup(4KiB)>=-1", "finite number > 0"),
    ("speedup(4XB)>=2", "speedup(SIZE)"), ("speedup(4KiB)>=nan", "finite number > 0"),
    ("speedup(4KiB)>=x", "is not a speedup"),
])
def test_bad_targets(text, words):
    with pytest.raises(ModelError, match=words.replace("(", r"\(").replace(")", r"\)")):
        parse_target(text)


def test_bad_pairs():
    assert check_pair("o,L") == ("o", "L")
    for bad in ("o", "o,o", "o,Q", "o,L,C"):
        with pytest.raises(ModelError, match="--pair"):
            check_pair(bad)


def test_design_json_contract_and_figure(cli, tmp_path):
    fig = tmp_path / "feasible.png"
    code, out, err = cli("logca", "design", "--preset", "ultrasparc-t2", "--kernel", "aes",
                         "--target", "g1<=64B", "--pair", "o,L", "--points", "12", "--json",
                         "--out", str(fig))
    d = json.loads(out)
    assert code == 0 and fig.read_bytes()[:4] == b"\x89PNG" and "wrote" in err
    assert {"target", "solutions", "reasons"} <= set(d)
    assert set(d["solutions"]) == {"L", "o", "C", "A"} and d["solutions"]["L"] is None
    assert d["reasons"]["o"] is None and "overhead alone" in d["reasons"]["L"]
    assert len(d["feasibility"]["x"]) == 12


def test_design_human_output(cli):
    code, out, _ = cli("logca", "design", "--preset", "ultrasparc-t2", "--kernel", "aes",
                       "--target", "g1<=64B")
    assert code == 0 and "impossible" in out and "at most 4188.57" in out


def test_g1_target_on_a_slower_accelerator_has_no_answer_in_L_or_o():
    r = solve_design(LogCA(L=1, o=1, C=1, A=0.5), "g1<=1KiB")
    assert r.current is None and not r.met_now
    assert r.solutions["o"].value is None and r.solutions["A"].value is not None
    assert r.solutions["A"].value > 1


def test_a_target_reads_a_space_before_its_unit_and_says_how_it_was_read(cli):
    assert parse_target("g1 <= 4 KiB").value == parse_target("g1<=4KiB").value == 4096
    assert parse_target("speedup(1 MiB) >= 10").at == 2**20
    assert parse_target("g1<=4KB").read_as == "g1 <= 4000 B"        # not 4096, said
    M = ["--L", "3000", "--o", "50000", "--C", "5", "--A", "8", "--name", "my-acc"]
    code, out, _ = cli("logca", "design", *M, "--target", "g1<=4KB")
    assert code == 0 and "target g1<=4KB (read as g1 <= 4000 B) is not met" in out


def test_a_target_no_parameter_can_meet_exits_1(cli):
    # every row "impossible" and exit 0: a script could not tell it from success
    M = ["--L", "3000", "--o", "50000", "--C", "5", "--A", "8"]
    code, out, _ = cli("logca", "design", *M, "--target", "speedup(1MiB)>=100")
    assert code == 1 and out.count("impossible") == 4
    code, out, _ = cli("logca", "design", *M, "--target", "speedup(1MiB)>=100", "--json")
    assert code == 1 and json.loads(out)["met_now"] is False
    assert cli("logca", "design", *M, "--target", "speedup(1MiB)>=10")[0] == 0


def test_the_feasible_side_is_shaded_to_the_axis():
    # shading that stopped above the axis bottom read as "some L is required"
    from accelperf.plot.design import feasibility_figure
    m = LogCA(L=3000, o=50000, C=5, A=8)
    curve = feasibility_curve(m, "g1<=4KiB", "o", "L", points=30)
    assert curve.y_direction == "at most"
    ax = feasibility_figure(curve).axes[0]
    shaded = ax.collections[0].get_paths()[0].vertices[:, 1]
    assert ax.get_ylim()[0] == pytest.approx(float(np.min(shaded)))
    # and the design now stays in view
    x, y = ax.lines[-1].get_xdata()[0], ax.lines[-1].get_ydata()[0]
    assert ax.get_xlim()[0] <= x <= ax.get_xlim()[1] and ax.get_ylim()[0] <= y <= ax.get_ylim()[1]
