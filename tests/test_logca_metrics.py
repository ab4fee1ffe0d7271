"""LogCA metrics: exactness, the paper's closed forms, Implications 1-7, Table 5 values."""

import math

import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from accelperf import LogCA, ModelError
from accelperf.logca import (granularity_for_speedup, metric_batch, peak_speedup, preset,
                             summary)

# ---------------------------------------------------------------- strategies
log_uniform = lambda lo, hi: st.floats(math.log10(lo), math.log10(hi)).map(lambda e: 10.0**e)


@st.composite
def models(draw, latency=None, beta=None, costs_positive=False):
    zero = st.nothing() if costs_positive else st.just(0.0)
    return LogCA(
        L=draw(st.one_of(zero, log_uniform(1e-3, 1e4))),
        o=draw(st.one_of(zero, log_uniform(1e-2, 1e9))),
        C=draw(log_uniform(1e-2, 1e5)),
        A=draw(log_uniform(1.01, 1e3)),
        beta=draw(beta if beta is not None else st.floats(0.05, 3.0)),
        latency=draw(st.sampled_from(["independent", "dependent"]) if latency is None
                     else st.just(latency)),
    )


def _representable(root):
    return root is not None and 1e-200 < root < 1e100


# ---------------------------------------------------------------- properties
@settings(max_examples=300, deadline=None)
@given(models())
def test_speedup_at_g1_is_one_and_at_g_half_is_half_A(m):
    for result, target in ((m.g1(), 1.0), (m.g_half(), m.A / 2)):
        if not result.exists:
            continue
        assert result.converged
        for root in result.roots:
            if _representable(root):
                assert float(m.speedup(root)) == pytest.approx(target, rel=1e-9)


@settings(max_examples=200, deadline=None)
@given(models())
def test_g_A_reaches_A_with_unbounded_acceleration_and_equals_g_half(m):
    gA, gh = m.g_A(), m.g_half()
    assert gA.exists == gh.exists
    if gA.exists and _representable(gA.root):
        assert gA.root == pytest.approx(gh.root, rel=1e-12)
        assert float(m.amdahl_bound(gA.root)) == pytest.approx(m.A, rel=1e-9)


@settings(max_examples=200, deadline=None)
@given(models(), st.lists(log_uniform(1e-3, 1e12), min_size=1, max_size=20))
def test_speedup_is_bounded_by_A(m, gs):
    s = m.speedup(np.array(gs))
    assert np.all(s < m.A * (1 + 1e-12)) and np.all(s >= 0)


@settings(max_examples=200, deadline=None)
@given(models(beta=st.just(1.0)))
# C - A·L = 1.3e-9: evaluated in doubles, eq. 12 was 1.7e-7 away from the exact root
@example(LogCA(L=0.9999999998719341, o=1.0, C=10.0, A=10.0, beta=1.0, latency="dependent"))
def test_closed_form_equals_exact_root_when_beta_is_one(m):
    for result in (m.g1(), m.g_half(), m.g_A()):
        if result.exists and result.closed_form is not None and _representable(result.root):
            assert result.closed_form == pytest.approx(result.root, rel=1e-9)


@settings(max_examples=200, deadline=None)
@given(models(latency="independent"))
def test_independent_latency_closed_forms_eq_5_6_are_exact_for_any_beta(m):
    assume(m.o + m.L > 0)
    for result in (m.g1(), m.g_half()):
        if _representable(result.root):
            assert result.closed_form == pytest.approx(result.root, rel=1e-9)


@settings(max_examples=200, deadline=None)
@given(st.one_of(models(latency="independent"), models(beta=st.floats(1.0, 3.0))))
def test_monotone_where_the_paper_says_so(m):
    # Granularity-independent latency (§2.1) and β >= 1 (§2.3): speedup never falls.
    g = np.geomspace(1e-2, 1e15, 400)
    s = m.speedup(g)
    assert np.all(np.diff(s) >= -1e-12 * s[1:])
    assert m.peak() is None


@settings(max_examples=200, deadline=None)
@given(models(latency="dependent", beta=st.floats(0.05, 0.99), costs_positive=True))
def test_sub_linear_dependent_curve_rises_then_falls_at_the_peak(m):
    peak = m.peak()
    assert peak is not None
    g = peak.granularity
    assume(1e-150 < g < 1e150)
    assert float(m.speedup(g)) == pytest.approx(peak.speedup, rel=1e-12)
    for side in (g * (1 - 1e-3), g * (1 + 1e-3), g / 10, g * 10):
        assert float(m.speedup(side)) <= peak.speedup * (1 + 1e-12)
    # Dense check that nothing on the curve exceeds the reported peak.
    dense = np.geomspace(g / 1e6, g * 1e6, 2001)
    assert np.max(m.speedup(dense)) <= peak.speedup * (1 + 1e-12)


@settings(max_examples=100, deadline=None)
@given(models(latency="dependent"))
def test_two_methods_agree(m):
    a, b = m.g1(method="chandrupatla"), m.g1(method="brentq")
    assert a.exists == b.exists and a.flag == b.flag
    for x, y in zip(a.roots, b.roots):
        assert x == pytest.approx(y, rel=1e-9)


@settings(max_examples=50, deadline=None)
@given(st.lists(models(), min_size=1, max_size=30))
def test_batch_matches_single_model_results(ms):
    arr = lambda f: np.array([getattr(m, f) for m in ms])
    batch = metric_batch(arr("L"), arr("o"), arr("C"), arr("A"), arr("beta"),
                         np.array([m.dependent for m in ms]), "g1")
    for i, m in enumerate(ms):
        single = m.g1()
        assert bool(batch.exists[i]) == single.exists
        if single.exists:
            assert batch.first[i] == pytest.approx(single.root, rel=1e-12)


# ---------------------------------------------------------------- existence, in words
def test_dependent_linear_existence_and_reasons():
    # K = C(A-1)/A = 9 > L = 1: g1 = o/(K-L) = 1000/8 = 125 exactly, and eq. 11 agrees.
    m = LogCA(L=1, o=1000, C=10, A=10, latency="dependent")
    g1 = m.g1()
    assert g1.root == pytest.approx(125, rel=1e-12) and g1.closed_form == pytest.approx(125)
    # (C/A)/L = 1 is not > 1/β: speedup A/2 = 5 is never reached (limit C/(L + C/A) = 5).
    gh = m.g_half()
    assert not gh.exists and gh.value is None and gh.flag == "below-everywhere"
    assert "approaches" in gh.reason and "C/L = 10" in gh.reason


def test_an_asymptote_equal_to_the_target_within_rounding_is_not_a_crossing():
    # C = A = 1.01, L = 0.01: the speedup tends to C/(L + C/A) = 1, so g1 does not exist;
    # in floats K - L is 9e-16 of K, which once gave a "break-even" at 3e17 bytes.
    m = LogCA(L=0.01, o=1.0, C=1.01, A=1.01, latency="dependent")
    g1 = m.g1()
    assert not g1.exists and g1.flag == "below-everywhere" and "approaches 1" in g1.reason
    # a real gap just above rounding still gives the exact o/(K - L)
    m = LogCA(L=0.01, o=1.0, C=1.02, A=1.01, latency="dependent")
    k = 1.02 * (1.01 - 1) / 1.01
    assert m.g1().root == pytest.approx(1.0 / (k - 0.01), rel=1e-12)


def test_no_offload_cost_means_no_crossing():
    r = LogCA(L=0, o=0, C=5, A=4).g1()
    assert not r.exists and r.flag == "above-everywhere" and "o + L = 0" in r.reason


def test_zero_overhead_sub_linear_dependent_only_falls():
    m = LogCA(L=1, o=0, C=10, A=4, beta=0.5, latency="dependent")
    r = m.g1()
    assert r.exists and r.flag == "converged" and len(r.roots) == 1
    # K g^0.5 = g with K = 7.5  ->  g = 56.25 exactly; speedup above 1 below it.
    assert r.root == pytest.approx(56.25, rel=1e-12)
    assert float(m.speedup(10)) > 1 > float(m.speedup(100))
    assert m.peak() is None


def test_two_crossings_are_reported_with_the_peak():
    m = LogCA(L=1, o=100, C=50, A=30, beta=0.5, latency="dependent")
    r = m.g1()
    assert len(r.roots) == 2 and r.roots[0] < m.peak().granularity < r.roots[1]
    assert all(float(m.speedup(x)) == pytest.approx(1, rel=1e-12) for x in r.roots)
    # Peak at g* = β·o / (L(1-β)) = 0.5·100/0.5 = 100 B.
    assert m.peak().granularity == pytest.approx(100)
    assert "falls back below" in r.reason


def test_g1_needs_A_above_one():
    with pytest.raises(ModelError, match="A = 0.9 is invalid: must be > 1 for g1"):
        LogCA(L=1, o=1, C=1, A=0.9).g1()


def test_granularity_for_any_target_and_its_range():
    m = LogCA(L=3, o=10, C=35, A=6)
    r = granularity_for_speedup(m, 3.0)
    assert float(m.speedup(r.root)) == pytest.approx(3.0, rel=1e-12)
    for bad in (0, 6, 7, -1):
        with pytest.raises(ModelError, match="speedup"):
            granularity_for_speedup(m, bad)


def test_unknown_method_is_rejected():
    with pytest.raises(ModelError, match="method"):
        LogCA(L=1, o=1, C=1, A=2).g1(method="newton-raphson")


def test_exact_root_to_1e9_where_the_newton_step_is_far_off():
    # GEMM on the APU (β = 1.7, dependent): eq. 11 is far from the root.
    m = preset("apu", "gemm")
    r = m.g1()
    assert float(m.speedup(r.root)) == pytest.approx(1.0, rel=1e-9)
    assert r.closed_form is None and "eq. 11" in r.note   # eq. 11 is negative here


# ---------------------------------------------------------------- implications 1-7
def test_implication_1_g1_nearly_independent_of_large_A():
    base = dict(L=1500, o=2.9e4, C=90, beta=1.0)
    g_100, g_1000 = (LogCA(A=a, **base).g1().root for a in (100, 1000))
    assert abs(g_100 - g_1000) / g_1000 < 0.01   # A/(A-1): 1.0101 vs 1.0010


@pytest.mark.parametrize("beta", [0.5, 1.0, 2.0])
def test_implication_2_doubling_C_scales_g1_by_2_to_minus_1_over_beta(beta):
    m = LogCA(L=10, o=500, C=20, A=8, beta=beta)
    ratio = m.with_parameters(C=40).g1().root / m.g1().root
    assert ratio == pytest.approx(2 ** (-1 / beta), rel=1e-9)   # 1/4, 1/2, 1/sqrt(2)


@pytest.mark.parametrize("beta", [0.5, 1.0, 2.0])
def test_implication_3_doubling_A_scales_g_half_by_2_to_1_over_beta(beta):
    m = LogCA(L=10, o=500, C=20, A=8, beta=beta)
    ratio = m.with_parameters(A=16).g_half().root / m.g_half().root
    assert ratio == pytest.approx(2 ** (1 / beta), rel=1e-9)


def test_eq_7_g_half_is_A_minus_1_to_1_over_beta_times_g1():
    m = LogCA(L=10, o=500, C=20, A=8, beta=0.7)
    assert m.g_half().root == pytest.approx((8 - 1) ** (1 / 0.7) * m.g1().root, rel=1e-9)


def test_implication_4_sub_linear_dependent_speedup_decreases_at_large_g():
    m = LogCA(L=0.5, o=1e4, C=100, A=20, beta=0.8, latency="dependent")
    g = np.geomspace(m.peak().granularity, 1e15, 100)
    assert np.all(np.diff(m.speedup(g)) < 0)
    assert m.bound().kind == "latency" and m.large_g_limit() == 0


def test_implication_5_sub_linear_needs_intensity_above_one():
    # C/L = 0.9 < 1 with β < 1: no speedup at any granularity of one byte or more, whatever
    # o and A (for g >= 1, K·g^β <= K·g < L·g). Below one byte the o = 0 curve does exceed 1,
    # since it tends to A as g -> 0: the implication is about real granularities.
    for o in (0.0, 1.0, 1e6):
        for A in (2, 100, 1e4):
            m = LogCA(L=10, o=o, C=9, A=A, beta=0.8, latency="dependent")
            r = m.g1()
            assert not r.exists or max(r.roots) < 1.0
            assert np.max(m.speedup(np.geomspace(1, 1e15, 2000))) < 1
    # Super-linear work breaks even at the same C/L < 1 (§2.3).
    assert LogCA(L=10, o=1e3, C=9, A=100, beta=1.5, latency="dependent").g1().exists


def test_implication_6_half_acceleration_needs_accelerator_intensity_above_one():
    # (C/A)/L = 0.5 < 1 with β = 0.9: A/2 never reached.
    m = LogCA(L=2, o=100, C=40, A=40, beta=0.9, latency="dependent")
    assert not m.g_half().exists
    assert np.max(m.speedup(np.geomspace(1e-3, 1e15, 3000))) < m.A / 2


def test_implication_7_more_acceleration_does_not_help_a_latency_bound_kernel():
    m = LogCA(L=2, o=100, C=40, A=40, beta=1.0, latency="dependent")
    assert not m.g_half().exists and not m.g_A().exists
    g = np.geomspace(1, 1e15, 500)
    for A in (40, 400, 4e4, 4e6):
        s = m.with_parameters(A=A).speedup(g)
        assert np.all(s < m.C / m.L)       # bounded by computational intensity C/L = 20


# ---------------------------------------------------------------- Table 5 by hand
def test_sandy_bridge_aes_by_hand():
    # L=3, o=10, C=35, A=6, β=1.01 (Tables 4, 5).
    # g1 = [(6/5)·(13/35)]^(1/1.01) = 0.445714^0.990099 = 0.449295 B     (eq. 5)
    # g_A/2 = [6·13/35]^(1/1.01) = 2.228571^0.990099 = 2.210959 B        (eq. 6)
    m = preset("sandy-bridge", "aes")
    assert m.g1().root == pytest.approx(0.449295, rel=1e-5)
    assert m.g_half().root == pytest.approx(2.210959, rel=1e-5)
    assert m.bound().kind == "compute" and m.bound().limit == 6


def test_ultrasparc_t2_aes_by_hand():
    # L=1500, o=29000, C=90, A=19, β=1.01.
    # (o+L)/C = 30500/90 = 338.889; g1 = (19/18 · 338.889)^(1/1.01) = 357.716^0.990099
    #   = exp(5.879740/1.01) = exp(5.821525) = 337.486 B
    # g_A/2 = (19 · 338.889)^(1/1.01) = 6438.889^0.990099 = 5903.37 B
    m = preset("ultrasparc-t2", "aes")
    assert m.g1().root == pytest.approx(337.486, rel=1e-5)
    assert m.g_half().root == pytest.approx(5903.37, rel=1e-5)


def test_sparc_t4_instructions_sha_by_hand():
    # L=4, o=111, C=1638, A=32, β=0.97: (o+L)/C = 115/1638 = 0.0702076
    # g1 = (32/31 · 0.0702076)^(1/0.97) = 0.0724723^1.030928 = 0.066822 B
    m = preset("sparc-t4-instr", "sha")
    assert m.g1().root == pytest.approx(0.066822, rel=1e-4)


def test_apu_fft_eq_11_by_hand_and_exact_root():
    # L=15 cycles/B, o=4e8, C=290, A=7, β=1.2 (dependent).
    # eq. 11: (290·0.2·6 + 7·4e8) / (290·1.2·6 − 7·15) = 2800000348 / 1983 = 1412002.19 B
    m = preset("apu", "fft")
    r = m.g1()
    assert r.closed_form == pytest.approx(1412002.19, rel=1e-8)
    assert float(m.speedup(r.root)) == pytest.approx(1, rel=1e-9)
    assert r.root < r.closed_form   # one Newton step from g = 1 overshoots here


def test_discrete_gpu_aes_reports_unreachable_break_even():
    # C/L = 174/3000 = 0.058 with β = 1.01: the break-even lies beyond 2^64 bytes.
    r = preset("discrete-gpu", "aes").g1()
    assert r.exists and r.root > 2.0**64 and "beyond 2^64" in r.note


def test_summary_has_the_cli_contract_keys():
    info = summary(preset("apu", "radix-sort"))
    for key in ("parameters", "g1", "g_half", "g_A", "bound", "peak"):
        assert key in info.to_dict()
    for key in ("value", "exists", "reason", "closed_form"):
        assert key in info.to_dict()["g1"]
    assert info.bound.kind == "latency" and info.peak.speedup > 1
    assert peak_speedup(preset("sandy-bridge", "aes")) is None


def test_presets_unknown_names_list_the_valid_ones():
    with pytest.raises(ModelError, match="valid devices are discrete-gpu, apu"):
        preset("tpu", "aes")
    with pytest.raises(ModelError, match="no Table 5"):
        preset("pcie-crypto", "aes")
    with pytest.raises(ModelError, match="gives it only aes"):
        preset("sandy-bridge", "sha")
    assert preset("ultrasparc-t2", "sha256").C == 10.5e3


def test_a_latency_bound_names_the_expression_of_its_limit():
    # a new user read "speedup → 10 [C/L·g^(β−1)]" as C/L = 10; here C/L = 12.5 and the
    # limit is C/(L + C/A) = 10
    m = LogCA(L=8e-11, o=1e-5, C=1e-9, A=50, beta=1.0, latency="dependent")
    b = m.bound()
    assert b.kind == "latency" and b.limit == pytest.approx(1e-9 / (8e-11 + 1e-9 / 50))
    assert b.expression == "C/(L + C/A), under C/L"
    assert "[C/(L + C/A), under C/L]" in repr(b)
    falling = LogCA(L=8e-11, o=1e-5, C=1e-9, A=50, beta=0.9, latency="dependent")
    assert falling.bound().limit == 0 and falling.bound().expression.startswith("0, ")
