"""Every LogCA metric on the hierarchical model (issue 24, item 1): regions, design and the
uncertainty of a fit, exact against plain LogCA with one layer; and the fit's exact
Jacobian."""

import json
import math
from pathlib import Path

import numpy as np
import pytest

from accelperf import LogCA
from accelperf.logca.design import (feasibility_curve, hierarchical_feasibility,
                                    hierarchical_metric, parse_target, solve_design,
                                    solve_hierarchical_design)
from accelperf.logca.fit import fit_logca
from accelperf.logca.hierarchy import HierarchicalLogCA, MemoryLayer
from accelperf.logca.hierfit import fit_hierarchical, log_speedup_gradient
from accelperf.logca.layerbounds import layer_bounds
from accelperf.logca.regions import hierarchical_regions, optimization_regions
from accelperf.logca.uncertainty import from_fit, monte_carlo, monte_carlo_hierarchy
from test_logca_hierarchy import (BASE, G, LAYERS, MiB, bent, synthetic,  # noqa: F401 (bent:
                                  write_toml)                               # a fixture)

ONE = (MemoryLayer("memory", math.inf),)
SHIPPED = Path(__file__).resolve().parent.parent / "src/accelperf/data/measurements"
BENT = HierarchicalLogCA(BASE, LAYERS, (0.02, 0.10), (0.05, 0.25), (0.3, 2.0), working_set=3,
                         sharpness=3)


@pytest.fixture(scope="module")
def shipped_fit():
    """The shipped full-range AES offload with this machine's probed layers (about a
    second of CPU)."""
    from accelperf.density import hierarchy
    from accelperf.logca.hierarchy import layers_from_hierarchy
    from accelperf.measure.data import read_timings
    t = read_timings(SHIPPED / "aes_offload_inprocess.csv", "min")
    layers = layers_from_hierarchy(hierarchy(str(SHIPPED / "this-machine.toml")))
    return fit_hierarchical(t.granularity, t.host, t.accel, layers, t.echo, host_constant=True)


# ---------------------------------------------------------------------- one layer: plain, exact
@pytest.mark.parametrize("plain", [
    LogCA(L=3, o=10, C=35, A=6),
    LogCA(L=0.25e-9, o=8e-6, C=1e-9, A=5, beta=1.1, latency="dependent", unit="seconds"),
    LogCA(L=1500, o=2.9e4, C=90, A=19, beta=0.8),
])
def test_one_layer_regions_and_design_are_plain_logca_to_1e_12(plain):
    one = HierarchicalLogCA(plain, ONE)
    mine, theirs = hierarchical_regions(one), optimization_regions(plain)
    for p, r in theirs.regions.items():
        assert mine.regions[p].present == r.present
        np.testing.assert_allclose(np.ravel(mine.regions[p].intervals), np.ravel(r.intervals),
                                   rtol=1e-12)
    for target in ("g1<=64B", "g_half<=8KiB", "speedup(64KiB)>=2"):
        a, b = solve_hierarchical_design(one, target), solve_design(plain, target)
        for p, sol in b.solutions.items():
            assert (a.solutions[p].value is None) == (sol.value is None)
            if sol.value is not None:
                assert a.solutions[p].value == pytest.approx(sol.value, rel=1e-12)
    x = hierarchical_feasibility(one, "g1<=64B", "o", "L", points=5)
    y = feasibility_curve(plain, "g1<=64B", "o", "L", points=5)
    np.testing.assert_allclose(x.y, y.y, rtol=1e-12)


def test_one_layer_uncertainty_is_the_plain_fits_to_1e_12():
    t0, t1, echo = synthetic(BENT)
    plain = fit_logca(G, t0, t1, echo, bootstrap=0)
    one = fit_hierarchical(G, t0, t1, ONE, t_echo=echo)
    mine = monte_carlo_hierarchy(one, G, samples=500, seed=3)
    theirs = monte_carlo(plain.model, from_fit(plain), G, samples=500, seed=3)
    for k in ("p5", "p50", "p95"):
        np.testing.assert_allclose(mine.band[k], theirs.band[k], rtol=1e-12)
    np.testing.assert_allclose(mine.g1.samples, theirs.g1.samples, rtol=1e-12)


# ---------------------------------------------------------------------- the fit's Jacobian
def test_the_fits_jacobian_is_exact(shipped_fit):
    """∂ ln speedup/∂x against central differences at the shipped fit's solution, every
    column (per-layer steps, working sets, sharpnesses, C, A, o, L, c0)."""
    cand = shipped_fit.hierarchical
    x0 = cand.x
    g = shipped_fit.granularity
    exact = log_speedup_gradient(cand, g)
    from accelperf.logca.hierfit import model_of_vector
    layers, dependent = cand.model.layers, cand.model.base.dependent
    for i in range(x0.size):
        h = 1e-6 * max(abs(x0[i]), 1e-3 if i >= 9 else abs(x0[i]) or 1e-9)
        up, down = x0.copy(), x0.copy()
        up[i] += h
        down[i] -= h
        numeric = np.log(model_of_vector(up, layers, dependent).speedup(g) /
                         model_of_vector(down, layers, dependent).speedup(g)) / (2 * h)
        scale = max(np.abs(numeric).max(), 1e-12)
        assert np.abs(exact[:, i] - numeric).max() <= 1e-5 * scale + 1e-9, i


# ---------------------------------------------------------------------- regions
def test_regions_of_a_bent_model():
    """The boundaries are where the gain is the threshold; a per-layer step pays only past
    its layer's bend; the per-layer names label the bands."""
    r = hierarchical_regions(BENT, lo=4096, hi=2**30)
    assert "a[L3]" in r.regions and "l[L3]" in r.regions
    for p, region in r.regions.items():
        better = BENT.improved(p, 10)
        for a, b in region.intervals:
            for x in (a, b):
                if 4096 < x < 2**30:
                    gain = float(better.speedup(x) / BENT.speedup(x)) - 1
                    assert gain == pytest.approx(0.2, abs=1e-9), (p, x)
    l3 = r.regions["l[L3]"]
    assert l3.present and l3.start > BENT.transition(1) / 8      # pays once the data outgrow L3
    assert any("l[L3]" in b.members for b in r.bands)


def test_one_layer_g_A_is_plain_logcas():
    plain = LogCA(L=3, o=10, C=35, A=6, beta=1.2)
    assert HierarchicalLogCA(plain, ONE).g_A() == plain.g_A().root


def test_the_peak_of_a_bent_curve():
    """The bent model rises to A-ish, then the copies past the L2 and L3 pull it down: the
    peak is a maximum (no point of a fine grid higher, flat to first order there)."""
    g, s = BENT.peak()
    grid = np.geomspace(1, 1e15, 20000)
    assert s >= float(np.max(BENT.speedup(grid))) * (1 - 1e-9)
    assert float(BENT.speedup(g * 1.001)) <= s and float(BENT.speedup(g / 1.001)) <= s
    assert 4096 < g < 2 * MiB


# ---------------------------------------------------------------------- bounds
@pytest.mark.parametrize("plain", [LogCA(L=3, o=10, C=35, A=6),
                                   LogCA(L=1500, o=2.9e4, C=90, A=19, beta=0.8,
                                         latency="dependent")])
def test_one_layer_bound_is_plain_logcas(plain):
    from accelperf.logca.metrics import bound_type
    (only,) = layer_bounds(HierarchicalLogCA(plain, ONE))
    assert only.bound == bound_type(plain) and only.start == 0


def test_bounds_per_layer():
    """Each layer's plain model has the layer's costs; past every cache its limit is the
    hierarchical model's own (eq. 3: A·H∞/Q∞ with constant latency)."""
    m = HierarchicalLogCA(LogCA(L=0, o=1e-5, C=1e-9, A=4, unit="seconds"), LAYERS,
                          (0.1, 0.2), (0.3, 0.5))
    bounds = layer_bounds(m)
    assert [b.layer.name for b in bounds] == ["L2", "L3", "DRAM"]
    assert bounds[1].bound.limit == pytest.approx(4 * 1.1 / 1.3, rel=1e-12)
    assert bounds[-1].bound.limit == pytest.approx(m.large_g_limit(), rel=1e-12)
    assert float(m.speedup(2.0**44)) == pytest.approx(m.large_g_limit(), rel=1e-6)
    assert bounds[2].start == pytest.approx(m.transition(1))


# ---------------------------------------------------------------------- design
@pytest.mark.parametrize("target", ["speedup(64MiB)>=1.5", "g1<=8KiB"])
def test_design_on_a_bent_model_meets_the_target_exactly(target):
    goal = parse_target(target)
    result = solve_hierarchical_design(BENT, goal)
    solved = [s for s in result.solutions.values() if s.value is not None and not s.reason]
    assert solved
    for s in solved:
        moved = hierarchical_metric(BENT.with_value(s.parameter, s.value), goal)
        assert moved == pytest.approx(goal.value, rel=1e-9), s
    if goal.metric == "speedup":            # the copies beyond L3 are what to cut at 64 MiB
        assert result.solutions["l[L3]"].value < BENT.link_steps[1]


def test_feasibility_with_a_per_layer_parameter():
    curve = hierarchical_feasibility(BENT, "speedup(64MiB)>=1.5", "A", "l[L3]", points=6)
    goal = parse_target("speedup(64MiB)>=1.5")
    ok = np.isfinite(curve.y)
    assert ok.sum() >= 2
    for x, y in zip(curve.x[ok], curve.y[ok]):
        m = BENT.with_value("A", x).with_value("l[L3]", y)
        assert float(m.speedup(64 * MiB)) == pytest.approx(goal.value, rel=1e-9)


# ---------------------------------------------------------------------- uncertainty
def test_uncertainty_of_the_shipped_fit_is_its_linearised_covariance(shipped_fit):
    """The band's spread is the delta method's ∇ln s·Σ·∇ln sᵀ; g1's is the implicit
    derivative, checked against moving one per-layer step and solving g1 again."""
    cand, model = shipped_fit.hierarchical, shipped_fit.model
    g = shipped_fit.granularity
    u = monte_carlo_hierarchy(shipped_fit, g, samples=20000, seed=1)
    grad = log_speedup_gradient(cand, g)
    sd = np.sqrt(np.diag(grad @ cand.covariance @ grad.T))
    z90 = 1.6448536269514722
    np.testing.assert_allclose(np.log(u.band["p95"] / u.band["p5"]) / (2 * z90), sd, rtol=0.05)
    assert np.all(u.band["p5"] < model.speedup(g)) and np.all(model.speedup(g) < u.band["p95"])
    assert u.g1.quantiles["p50"] == pytest.approx(model.g1(), rel=0.01)
    # the implicit derivative of g1 along the step a[registers<-L1]
    n = len(model.layers) - 1
    name = f"a[{model.layers[0].name}]"
    column = 9 + n
    g1 = model.g1()
    step = 1e-4
    slope = math.log(model.speedup(g1 * 1.000001) / model.speedup(g1 / 1.000001)) / 2e-6
    predicted = -log_speedup_gradient(cand, g1)[0, column] * step / slope
    moved = model.with_value(name, model.value_of(name) + step).g1()
    assert math.log(moved / g1) == pytest.approx(predicted, rel=1e-3)


# ---------------------------------------------------------------------- the commands
# (the fixture ``bent``: measurements of the same model as BENT, and its L2/L3 file)
def test_regions_design_and_fit_draws_with_a_hierarchy(cli, bent, tmp_path):
    data, hier = bent
    out = tmp_path / "regions.png"
    code, stdout, err = cli("logca", "regions", "--hierarchy", str(hier), "--data", str(data),
                            "--from", "4KiB", "--to", "128MiB", "--json")
    assert code == 0, err
    d = json.loads(stdout)
    assert d["regions"]["l[L3]"]["present"] and d["warnings"]
    code, _, err = cli("logca", "regions", "--hierarchy", str(hier), "--data", str(data),
                       "--out", str(out))
    assert code == 0 and out.stat().st_size > 1000, err
    code, stdout, err = cli("logca", "design", "--target", "speedup(64MiB)>=1.5", "--hierarchy",
                            str(hier), "--data", str(data), "--pair", "A,l[L3]",
                            "--points", "4", "--json")
    assert code == 0, err
    d = json.loads(stdout)
    assert d["solutions"]["l[L3]"] is not None and len(d["feasibility"]["y"]) == 4
    code, stdout, err = cli("logca", "fit", str(data), "--hierarchy", str(hier),
                            "--monte-carlo", "500", "--json")
    assert code == 0, err
    u = json.loads(stdout)["uncertainty"]
    assert u["g1"]["p5"] < u["g1"]["p50"] < u["g1"]["p95"]
    code, stdout, err = cli("logca", "bounds", "--hierarchy", str(hier), "--data", str(data),
                            "--json")
    assert code == 0, err
    d = json.loads(stdout)
    assert [b["layer"] for b in d["layers"]] == ["L2", "L3", "beyond L3"]
    code, stdout, err = cli("logca", "show", "--hierarchy", str(hier), "--data", str(data),
                            "--json")
    assert code == 0, err
    d = json.loads(stdout)
    assert d["metrics"]["g1"]["model"] == pytest.approx(d["metrics"]["g1"]["measured"], rel=0.1)


@pytest.mark.parametrize("args, words", [
    (["regions", "--hierarchy", "{hier}"], "needs --data"),
    (["bounds", "--probe"], "needs --data"),
    (["regions", "--hierarchy", "{hier}", "--data", "{data}", "--out", "{tmp}/r.png",
      "--sensitivity"], "--sensitivity draws plain LogCA"),
    (["regions", "--hierarchy", "{bad}", "--data", "{data}"], "layer 'L2'"),
    (["design", "--target", "g1<=1KiB", "--data", "{data}"], "--data needs --hierarchy"),
    (["design", "--target", "g1<=1KiB", "--hierarchy", "{hier}", "--data", "{data}", "--pair",
      "A,a[L9]"], "--pair = 'a[L9]' is invalid"),
    (["design", "--target", "g1<=1KiB", "--hierarchy", "{hier}", "--data", "{data}",
      "--preset", "x"], "drop --preset"),
])
def test_bad_input_on_the_new_paths_is_one_line_and_exit_2(cli, bent, tmp_path, args, words):
    data, hier = bent
    bad = write_toml(tmp_path / "bad.toml", [("L3", 32 * MiB), ("L2", MiB)])
    argv = [a.format(data=data, hier=hier, bad=bad, tmp=tmp_path) for a in args]
    code, _, err = cli("logca", *argv)
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1, err


def test_parameters_at_the_fits_bounds_are_named(shipped_fit):
    """A step the data do not pin runs to the fit's bound; its note says so (the shipped
    fit's copies past the L3: l[L3<-DRAM] = 10, the bound)."""
    notes = {k: p.note or "" for k, p in shipped_fit.parameters.items()}
    flagged = [k for k, n in notes.items() if "at the fit's bound" in n]
    assert "l[L3<-DRAM]" in flagged
    assert "w[L2<-L3]" not in flagged


def test_a_layer_the_data_cannot_pin_is_named_on_the_new_commands(cli, bent, tmp_path):
    """The sizes start at 4 KiB: an L1 of 2 KiB has no measured size below its bend; the
    answer uses the other layers and says so."""
    data, _ = bent
    hier = write_toml(tmp_path / "l1.toml", [("L1", 2048), ("L2", MiB), ("L3", 32 * MiB)])
    for command in (["regions"], ["bounds"], ["show"], ["design", "--target", "g1<=8KiB"]):
        code, stdout, err = cli("logca", *command, "--hierarchy", str(hier), "--data",
                                str(data), "--json")
        assert code == 0, err
        warnings = json.loads(stdout)["warnings"]
        assert any("layer 'L1' (2 KiB) left out" in w for w in warnings), warnings


def test_a_layers_reach_is_asked_of_the_curve_while_the_data_are_in_it():
    """A new user read "90% of it reached at 1.87 MiB" on the row of a layer that starts at
    22.6 MiB: the reach was the layer's plain model's, not the curve's inside the layer."""
    m = HierarchicalLogCA(LogCA(L=0, o=1e-5, C=1e-9, A=4, unit="seconds"), LAYERS,
                          (0.1, 0.2), (0.3, 0.5))
    for k, b in enumerate(layer_bounds(m)):
        r = b.reach
        end = m.transition(k) if k < len(LAYERS) - 1 else 2.0**48
        assert r.end == pytest.approx(end) and r.outermost == (k == len(LAYERS) - 1)
        if r.granularity is None:
            grid = np.geomspace(max(b.start, 1), end, 2000)
            assert float(np.max(m.speedup(grid))) < 0.9 * b.bound.limit
            assert r.speedup_at_end == pytest.approx(float(m.speedup(end)))
            assert "does not reach" in r.describe()
        else:
            assert b.start <= r.granularity <= end
            if r.granularity == max(b.start, 1):       # reached as the data arrive
                assert float(m.speedup(r.granularity)) >= 0.9 * b.bound.limit
            else:
                assert float(m.speedup(r.granularity)) == pytest.approx(0.9 * b.bound.limit)
                assert float(m.speedup(r.granularity * 0.999)) < 0.9 * b.bound.limit


def test_a_hierarchical_model_answers_bound_as_logca_does():
    # a notebook user found no .bound() on the model `choose` returns
    m = HierarchicalLogCA(LogCA(L=0, o=1e-5, C=1e-9, A=4, unit="seconds"), LAYERS,
                          (0.1, 0.2), (0.3, 0.5))
    assert m.bound() == layer_bounds(m)[-1].bound
    assert m.bound().limit == pytest.approx(m.large_g_limit(), rel=1e-12)
    plain = LogCA(L=1500, o=2.9e4, C=90, A=19, beta=0.8, latency="dependent")
    assert HierarchicalLogCA(plain, ONE).bound() == plain.bound()
