"""Parameters with uncertainty: parsing, reproducible vectorised Monte Carlo, CLI bands."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelperf import LogCA, ModelError
from accelperf.logca import preset
from accelperf.logca.fit import fit_logca
from accelperf.logca.uncertainty import from_fit, monte_carlo, parse_parameter


@pytest.mark.parametrize("text, kind, a, b", [
    ("1500", "fixed", 1500, 0), ("1500±10%", "uniform", 1350, 1650),
    ("1500+-150", "uniform", 1350, 1650), ("1500 +/- 10 %", "uniform", 1350, 1650),
    ("uniform(1, 3)", "uniform", 1, 3), ("normal(100, 5)", "normal", 100, 5),
    ("lognormal(2.9e4, 0.2)", "lognormal", 2.9e4, 0.2), ("LogNormal(2, 1)", "lognormal", 2, 1),
])
def test_parse_forms(text, kind, a, b):
    d = parse_parameter("L", text)
    assert (d.kind, d.a, d.b) == (kind, pytest.approx(a), pytest.approx(b))


@pytest.mark.parametrize("name, text, words", [
    ("L", "abc", "expected a number"), ("L", "1500±200%", "leaves the valid range"),
    ("C", "10±100%", "below 100%"), ("A", "0", "must be > 0"), ("o", "-1", "must be >= 0"),
    ("o", "nan", "must be finite"), ("o", "1e999", "must be finite"),
    ("o", "uniform(3, 1)", "a < b"), ("C", "uniform(0, 1)", "needs a > 0"),
    ("o", "normal(1, 0)", "sd > 0"), ("o", "normal(-100, 1)", "almost no weight"),
    ("o", "lognormal(0, 1)", "median > 0"), ("o", "gamma(1, 2)", "expected a number"),
    ("Q", "1", "one of L, o, C, A, beta"),
])
def test_parse_errors_name_the_option(name, text, words):
    with pytest.raises(ModelError, match=words):
        parse_parameter(name, text)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=30), st.floats(allow_nan=True, allow_infinity=True),
                 st.integers()))
def test_random_input_parses_or_raises_model_error(value):
    try:
        d = parse_parameter("o", value)
    except ModelError as exc:
        assert "--o" in str(exc)
        return
    draws = d.sample(np.random.default_rng(0), 100)
    assert np.all(np.isfinite(draws)) and np.all(draws >= 0)


def test_draws_respect_the_valid_range():
    rng = np.random.default_rng(3)
    assert np.all(parse_parameter("o", "normal(1, 5)").sample(rng, 10000) >= 0)
    assert np.all(parse_parameter("A", "normal(1, 5)").sample(rng, 10000) > 0)
    x = parse_parameter("C", "lognormal(100, 0.2)").sample(rng, 40000)
    assert np.median(x) == pytest.approx(100, rel=0.01)
    assert np.std(np.log(x)) == pytest.approx(0.2, rel=0.02)


def test_fixed_parameters_give_a_zero_width_band_on_the_model():
    m = preset("ultrasparc-t2", "aes")
    r = monte_carlo(m, {"L": parse_parameter("L", "1500")}, samples=50)
    assert np.allclose(r.band["p5"], m.speedup(r.granularity), rtol=1e-12)
    assert np.allclose(r.band["p95"], r.band["p5"], rtol=1e-12)
    assert r.g1.quantiles["p50"] == pytest.approx(m.g1().root, rel=1e-12)


def test_g1_quantiles_follow_eq_5_under_a_uniform_overhead():
    # β = 1, independent latency: g1 = A/(A−1)·(o + L)/C is linear in o, so its quantiles are
    # those of o ~ U(0.8, 1.2)·2.9e4 mapped through eq. 5.
    m = LogCA(L=1500, o=2.9e4, C=90, A=19)
    r = monte_carlo(m, {"o": parse_parameter("o", "2.9e4±20%")}, samples=200_000, seed=7)
    g1 = lambda o: 19 / 18 * (o + 1500) / 90
    q = r.g1.quantiles
    assert q["p5"] == pytest.approx(g1(2.9e4 * (0.8 + 0.4 * 0.05)), rel=2e-3)
    assert q["p50"] == pytest.approx(g1(2.9e4), rel=2e-3)
    assert q["p95"] == pytest.approx(g1(2.9e4 * (0.8 + 0.4 * 0.95)), rel=2e-3)
    assert r.g1.exists_fraction == 1.0


def test_reproducible_with_a_seed_and_different_without():
    m = preset("ultrasparc-t2", "aes")
    d = {"L": parse_parameter("L", "1500±20%"), "A": parse_parameter("A", "normal(19, 3)")}
    a, b = monte_carlo(m, d, samples=500, seed=4), monte_carlo(m, d, samples=500, seed=4)
    c = monte_carlo(m, d, samples=500, seed=5)
    assert np.array_equal(a.g1.samples, b.g1.samples)
    assert not np.array_equal(a.g1.samples, c.g1.samples)
    assert np.all(a.band["p5"] <= a.band["p50"]) and np.all(a.band["p50"] <= a.band["p95"])


def test_acceleration_below_one_in_some_draws_has_no_g1_there():
    m = LogCA(L=10, o=100, C=10, A=1.5)
    r = monte_carlo(m, {"A": parse_parameter("A", "uniform(0.5, 2.5)")}, samples=20000)
    assert r.g1.exists_fraction == pytest.approx(0.75, abs=0.02)     # P(A > 1)


def test_fitted_standard_errors_become_distributions():
    G = 2.0 ** np.arange(4, 26)
    true = LogCA(L=0, o=2e-6, C=3e-9, A=5.0, unit="seconds")
    rng = np.random.default_rng(1)
    noise = lambda t: t * np.exp(rng.normal(0, 0.02, t.size))
    fit = fit_logca(G, noise(true.T0(G)), noise(true.T1(G)), latency="independent",
                    bootstrap=0)
    d = from_fit(fit)
    assert d["L"].kind == "fixed" and d["C"].kind == "lognormal" and d["o"].kind == "normal"
    assert d["A"].b == pytest.approx(fit.parameters["A"].stderr / fit.parameters["A"].value)
    r = monte_carlo(fit.model, d, samples=2000)
    assert r.g1.quantiles["p5"] < fit.g1.model < r.g1.quantiles["p95"]


def test_curve_cli_band_json_and_figure(cli, tmp_path):
    code, out, _ = cli("logca", "curve", "--preset", "ultrasparc-t2", "--kernel", "aes",
                       "--L", "1500±20%", "--o", "lognormal(2.9e4, 0.2)", "--draws", "500",
                       "--seed", "3", "--from", "64B", "--to", "64KiB", "--json")
    d = json.loads(out)
    u = d["uncertainty"]
    assert code == 0 and u["samples"] == 500 and u["seed"] == 3
    assert set(u["distributions"]) == {"L", "o"} and u["distributions"]["o"]["kind"] == \
        "lognormal"
    p5, p95 = (np.array(u["band_at_granularity_bytes"][k]) for k in ("p5", "p95"))
    assert len(p5) == len(d["granularity_bytes"]) == 11
    central = np.array(d["speedup"]["ultrasparc-t2/aes"])
    assert np.all(p5 < central) and np.all(central < p95)
    assert u["g1"]["p5"] < 337.5 < u["g1"]["p95"] and u["g1"]["exists_fraction"] == 1.0
    path = tmp_path / "band.svg"
    code, _, err = cli("logca", "curve", "--preset", "ultrasparc-t2", "--kernel", "aes",
                       "--L", "1500±20%", "--out", str(path))
    assert code == 0 and "90% band" in path.read_text() and "wrote" in err


def test_uncertain_parameters_need_one_model(cli):
    code, _, err = cli("logca", "curve", "--preset", "ultrasparc-t2", "--preset", "sparc-t3",
                       "--kernel", "aes", "--L", "1500±20%")
    assert code == 2 and "bands are drawn for one model" in err


def test_fit_cli_monte_carlo(cli, tmp_path):
    from test_fit import noisy, write_csv
    G = 2.0 ** np.arange(4, 26)
    true = LogCA(L=0, o=1e-8, C=3e-9, A=5.0, unit="seconds")
    path = write_csv(tmp_path / "d.csv", G, noisy(true.T0(G), 0.01, 1), noisy(true.T1(G), 0.01, 2))
    code, out, _ = cli("logca", "fit", str(path), "--latency", "independent", "--bootstrap", "0",
                       "--monte-carlo", "300", "--json")
    d = json.loads(out)
    assert code == 0 and d["uncertainty"]["samples"] == 300
    assert len(d["uncertainty"]["speedup_band"]["p5"]) == 22
