"""Computational density (Steffen 2007): the worked numbers of §4, layers, formulas, CLI."""

import json
import math

import numpy as np
import pytest

from accelperf import ModelError
from accelperf.density import (Algorithm, Hierarchy, Layer, algorithm, all_pairs, dot_product,
                               from_formula, hierarchy, matmul, rate_bound)

MAP_C = hierarchy("src-map-c")


def sigma(alg, layer_name, hier=MAP_C):
    return {r.name: r.sigma for r in rate_bound(alg, hier).layers}[layer_name]


def three_digits(x):
    """The value as the paper prints it: three significant digits."""
    return float(f"{x:.3g}")


def eq7(alg, size, bandwidth):
    """The paper's own arithmetic in §4.2-4.4 neglects latency (eq. 7): σ = ρ(μ)·β."""
    return float(alg.rho(size)) * bandwidth


# ---------------------------------------------------------------- §4 worked numbers
def test_dot_product_layer_1_is_0_8_G():           # (1/8 B)·6.4 GB/s
    assert three_digits(sigma(dot_product(4), "obm-to-block-ram")) == 0.8e9


def test_dot_product_layer_2_follows_the_formula_not_the_paper_slip():
    # The paper prints 0.46 G; its formula gives (1/8)·1.4e9 = 0.175 G (reference file note).
    assert three_digits(eq7(dot_product(4), 28e6, 1.4e9)) == 0.175e9
    assert sigma(dot_product(4), "main-ram-via-snap") == pytest.approx(0.175e9 / 1.001, rel=1e-9)


def test_matmul_layer_1_is_219_G():                 # sqrt(0.6e6)/8^1.5 · 6.4e9
    assert three_digits(sigma(matmul(4), "obm-to-block-ram")) == 219e9


def test_matmul_layer_2_is_303_G_with_the_24_MB_the_paper_used():
    assert three_digits(eq7(matmul(4), 24e6, 1.4e9)) == 303e9
    # With the layer's real 28 MB and eq. 6's latency term: 327 G.
    assert sigma(matmul(4), "main-ram-via-snap") == pytest.approx(
        math.sqrt(28e6) / 8**1.5 * 1.4e9 / 1.001, rel=1e-9)


def test_all_pairs_32_byte_particles():
    assert three_digits(sigma(all_pairs(32), "obm-to-block-ram")) == 1.88e12   # 1.875e12
    assert three_digits(eq7(all_pairs(32), 28e6, 1.4e9)) == 19.1e12
    assert three_digits(sigma(all_pairs(32), "main-ram-via-snap")) == 19.1e12   # with eq. 6


def test_all_pairs_512_byte_particles_and_the_paper_slip():
    # The paper divides by s^2 = 262,144 instead of 2s^2, and rounds 0.6e6/262144 = 2.289 to
    # 2.29 before multiplying by 6.4 GB/s: 2.29 · 6.4e9 = 14.66e9, printed 14.7 G. Unrounded
    # its inputs give 14.65 G.
    assert three_digits(round(0.6e6 / 512**2, 2) * 6.4e9) == 14.7e9
    assert three_digits(0.6e6 / 512**2 * 6.4e9) == 14.6e9
    assert three_digits(sigma(all_pairs(512), "obm-to-block-ram")) == 7.32e9   # its formula


def test_layer_2_latency_factor_is_0_001():
    rates = {r.name: r for r in rate_bound(matmul(4), MAP_C).layers}
    assert rates["main-ram-via-snap"].latency_factor == pytest.approx(0.001, rel=1e-9)
    assert rates["obm-to-block-ram"].latency_factor == 0
    assert rates["fpga-registers"].sigma == math.inf     # layer 0: unbounded, caps nothing


def test_bottlenecks_and_compute_ceiling_of_section_5():
    assert rate_bound(dot_product(4), MAP_C).bottleneck == "main-ram-via-snap"
    assert rate_bound(matmul(4), MAP_C).bottleneck == "obm-to-block-ram"
    assert rate_bound(all_pairs(32), MAP_C).bottleneck == "obm-to-block-ram"
    # 50 MAC units at 100 MHz: matmul is compute-bound by 219 G / 5 G ≈ 43.8x.
    r = rate_bound(matmul(4), MAP_C, compute_ceiling=50 * 100e6)
    assert r.limited_by == "compute" and r.margin == pytest.approx(43.8, rel=1e-3)
    assert r.attainable == 5e9
    d = rate_bound(dot_product(4), MAP_C, compute_ceiling=5e9)
    assert d.limited_by == "memory" and d.attainable == pytest.approx(d.bound)


# ---------------------------------------------------------------- algorithms
def test_densities_of_the_three_algorithms():
    a = np.array([1e3, 1e6])
    assert np.allclose(dot_product(8).rho(a), 1 / 16)
    assert np.allclose(matmul(4).rho(a), np.sqrt(a) / 8**1.5)
    assert np.allclose(all_pairs(32).rho(a), a / 2048)


def test_problem_size_saturates_rho_and_defines_reuse_penalty():
    # 1000x1000 single-precision matmul: M = 2·10^6·4 B, Z = 10^9 multiply-adds.
    alg = matmul(4).with_problem(total_bytes=8e6, total_computations=1e9)
    assert float(alg.rho(8e6)) == pytest.approx(125) and float(alg.rho(1e9)) == 125
    assert float(alg.reuse_penalty(8e6)) == pytest.approx(1.0)
    assert float(alg.reuse_penalty(8e4)) == pytest.approx(10.0)   # ρ grows as sqrt(α)
    with pytest.raises(ModelError, match="needs the problem"):
        matmul(4).reuse_penalty(1e3)
    with pytest.raises(ModelError, match="go together"):
        Algorithm("x", lambda a: a, total_bytes=1.0)


def test_formulas_agree_with_built_ins():
    a = np.geomspace(1e2, 1e8, 9)
    assert np.allclose(from_formula("sqrt(alpha)/(2*s)**1.5", 4).rho(a), matmul(4).rho(a))
    assert np.allclose(from_formula("rho = alpha/(2*s^2)", 32).rho(a), all_pairs(32).rho(a))
    assert np.allclose(from_formula("eta = alpha/(2*s)", 4).rho(a), dot_product(4).rho(a))
    assert np.allclose(algorithm("max(1, log2(alpha))/s", 4).rho(a), np.maximum(1, np.log2(a)) / 4)


@pytest.mark.parametrize("text, words", [
    ("__import__('os').system('true')", "only the listed functions"),
    ("alpha.real", "Attribute is not allowed"),
    ("beta * alpha", "unknown name 'beta'"),
    ("alpha +", "syntax error"),
    ("[alpha]", "List is not allowed"),
    ("alpha if alpha else 1", "IfExp is not allowed"),
    ("'a' * 3", "is not a number"),
    ("alpha % 3", "operator Mod is not allowed"),
    ("sqrt(x=alpha)", "positional arguments"),
])
def test_formula_errors_are_clear(text, words):
    with pytest.raises(ModelError, match="formula") as err:
        from_formula(text)
    assert words in str(err.value)


def test_unknown_algorithm_lists_valid_ones():
    with pytest.raises(ModelError, match="valid algorithms are dot, matmul, allpairs"):
        algorithm("fft")
    with pytest.raises(ModelError, match="operand_bytes"):
        matmul(0)


# ---------------------------------------------------------------- layers and hierarchies
@pytest.mark.parametrize("kwargs, words", [
    (dict(size_bytes=-1), "size_bytes = -1 is invalid: must be >= 0"),
    (dict(bandwidth_bytes_per_s=-5), "bandwidth_bytes_per_s = -5 is invalid: must be > 0"),
    (dict(bandwidth_bytes_per_s=0), "must be > 0"),
    (dict(latency_s=-1e-6), "latency_s = -1e-06 is invalid"),
    (dict(size_bytes=math.nan), "must be a finite number"),
    (dict(size_bytes=math.inf), "must be a finite number"),
    (dict(bandwidth_bytes_per_s=math.nan), "must be a finite number or +inf"),
    (dict(bandwidth_bytes_per_s="fast"), "must be a real number"),
])
def test_invalid_layers_are_rejected_by_name(kwargs, words):
    params = dict(name="l1", size_bytes=1e3, bandwidth_bytes_per_s=1e9, latency_s=0.0)
    params.update(kwargs)
    with pytest.raises(ModelError) as err:
        Layer(**params)
    assert "layer 'l1'" in str(err.value) and words in str(err.value)


def test_zero_size_and_unbounded_layers():
    zero_with_latency = Layer("x", 0, 1e9, 1e-6)
    assert zero_with_latency.rate(matmul(4)) == 0 and zero_with_latency.latency_factor == math.inf
    assert Layer("y", 0, math.inf, 0).rate(matmul(4)) == math.inf
    latency_only = Layer("z", 1e6, math.inf, 1e-6)      # one chunk per λ
    assert latency_only.rate(dot_product(4)) == pytest.approx(1e6 / 8 / 1e-6)


def test_toml_round_trip_and_errors(tmp_path):
    path = tmp_path / "h.toml"
    path.write_text(MAP_C.to_toml(header="test"))
    loaded = Hierarchy.from_toml(path)
    assert [l.to_dict() for l in loaded.layers] == [l.to_dict() for l in MAP_C.layers]
    bad = tmp_path / "bad.toml"
    bad.write_text('[[layer]]\nname = "a"\nsize_bytes = -4\nbandwidth_bytes_per_s = 1e9\n')
    with pytest.raises(ModelError, match="size_bytes = -4"):
        hierarchy(str(bad))
    bad.write_text('[[layer]]\nname = "a"\nsize_bytes = 4\n')
    with pytest.raises(ModelError, match="lacks bandwidth_bytes_per_s"):
        hierarchy(str(bad))
    bad.write_text("this is = = not toml")
    with pytest.raises(ModelError, match="not valid TOML"):
        hierarchy(str(bad))
    with pytest.raises(ModelError, match="no such file"):
        hierarchy(str(tmp_path / "missing.toml"))
    with pytest.raises(ModelError, match="valid built-ins are src-map-c"):
        hierarchy("cray-1")


def test_duplicate_layer_names_rejected():
    with pytest.raises(ModelError, match="appear twice"):
        Hierarchy("h", (Layer("a", 1, 1), Layer("a", 2, 2)))


# ---------------------------------------------------------------- command line
def test_bound_json_contract(cli):
    code, out, _ = cli("density", "bound", "--algorithm", "matmul", "--operand-bytes", "4",
                       "--hierarchy", "src-map-c", "--compute-ceiling", "5e9", "--json")
    d = json.loads(out)
    assert code == 0
    assert set(d) >= {"layers", "bound", "bottleneck", "compute_ceiling", "limited_by"}
    assert d["bottleneck"] == "obm-to-block-ram" and d["limited_by"] == "compute"
    assert d["bound"] == pytest.approx(219e9, rel=5e-4)
    assert [l["name"] for l in d["layers"]][1] == "obm-to-block-ram"
    assert d["layers"][2]["latency_factor"] == pytest.approx(0.001)


def test_bound_formula_and_figure(cli, tmp_path):
    out = tmp_path / "d.svg"
    code, text, _ = cli("density", "bound", "--algorithm", "rho = alpha/(2*s^2)",
                        "--operand-bytes", "32", "--out", str(out), "--json")
    assert code == 0 and out.exists()
    assert json.loads(text)["bound"] == pytest.approx(1.875e12, rel=1e-6)


@pytest.mark.parametrize("argv, words", [
    (["density", "bound", "--algorithm", "fft"], "valid algorithms"),
    (["density", "bound", "--algorithm", "open('x')"], "formula"),
    (["density", "bound", "--algorithm", "dot", "--hierarchy", "nope"], "hierarchy"),
    (["density", "bound", "--algorithm", "dot", "--operand-bytes", "-4"], "--operand-bytes = '-4'"),
    (["density", "bound", "--algorithm", "dot", "--compute-ceiling", "0"], "--compute-ceiling = '0'"),
    (["density", "bound", "--algorithm", "dot", "--problem-bytes", "100"], "go together"),
    (["density", "probe", "--out", "x.json"], "--out"),
])
def test_density_bad_input(cli, argv, words):
    code, _, err = cli(*argv)
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1


def test_layers_given_outermost_first_are_said():
    # accepted without a word: the bound is the same, but the table reads inwards
    inner = Layer("sram", 65536, 256e9, 1e-9)
    outer = Layer("dram", 8e9, 50e9, 1e-7)
    right = rate_bound(matmul(4), Hierarchy("h", (inner, outer)))
    reversed_ = rate_bound(matmul(4), Hierarchy("h", (outer, inner)))
    assert reversed_.bound == right.bound and right.warnings == ()
    assert any("shrink outwards" in w for w in reversed_.warnings)
