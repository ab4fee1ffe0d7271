"""Optimization regions, what-if and case studies (ISCA'17 §3.2, §5.4)."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelperf import LogCA, ModelError
from accelperf.logca import preset
from accelperf.logca.casestudies import run_case_study
from accelperf.logca.regions import PARAMETERS, gain_array, optimization_regions, regions_batch
from accelperf.logca.whatif import apply_changes, what_if


def brute_force_membership(model, factor, threshold, g):
    """Is each parameter a bottleneck at each g? By direct evaluation of both models."""
    out = {}
    base = model.speedup(g)
    for p in PARAMETERS:
        changed = {"L": model.L / factor, "o": model.o / factor, "C": model.C * factor,
                   "A": model.A * factor}[p]
        out[p] = model.with_parameters(**{p: changed}).speedup(g) / base - 1 >= threshold
    return out


def exact_membership(analysis, g):
    return {p: np.array([any(a <= x <= b for a, b in analysis.regions[p].intervals) for x in g])
            for p in PARAMETERS}


log_uniform = lambda lo, hi: st.floats(math.log10(lo), math.log10(hi)).map(lambda e: 10.0**e)


@settings(max_examples=60, deadline=None)
@given(L=log_uniform(1e-2, 1e4), o=log_uniform(1, 1e9), C=log_uniform(1e-1, 1e4),
       A=log_uniform(1.5, 300), beta=st.floats(0.2, 2.0), dependent=st.booleans(),
       factor=st.floats(2, 50), threshold=st.floats(0.05, 1.0))
def test_region_boundaries_agree_with_a_dense_sweep(L, o, C, A, beta, dependent, factor,
                                                     threshold):
    m = LogCA(L=L, o=o, C=C, A=A, beta=beta, latency="dependent" if dependent else "independent")
    analysis = optimization_regions(m, factor, threshold)
    g = np.geomspace(16, 2**25, 4001)
    brute, exact = brute_force_membership(m, factor, threshold, g), exact_membership(analysis, g)
    for p in PARAMETERS:
        disagree = g[brute[p] != exact[p]]
        # Disagreement only within a hair of an exact boundary (floating point at the edge).
        edges = [x for span in analysis.regions[p].intervals for x in span]
        for x in disagree:
            assert min(abs(math.log(x / e)) for e in edges) < 1e-6
        assert analysis.regions[p].present == bool(brute[p].any()) or len(disagree)


def test_boundaries_are_exact_roots_of_the_gain():
    m = preset("ultrasparc-t2", "aes")
    a = optimization_regions(m)
    for i, p in enumerate(PARAMETERS):
        if a.regions[p].cutoff is not None:
            gain = gain_array(a.regions[p].cutoff, m.L, m.o, m.C, m.A, m.beta, m.dependent, i, 10)
            assert gain == pytest.approx(0.2, abs=1e-12)


def test_ultrasparc_t2_regions_by_hand():
    # o's gain (o+L+x)/(o/10+L+x) = 1.2 with x = C·g^β/A: 0.2x = 30500 - 1.2·4400 -> x = 126100,
    # g = (126100·19/90)^(1/1.01) = 24066 B (the paper's grid reads "32KB").
    # A's gain (D+x)/(D+x/10) = 1.2 with D = 30500: 0.88x = 6100 -> x = 6931.8,
    # g = (6931.8·19/90)^(1/1.01) = 1361.5 B (the paper's grid reads "2KB").
    a = optimization_regions(preset("ultrasparc-t2", "aes"))
    assert a.regions["o"].cutoff == pytest.approx(24066.45, rel=1e-5)
    assert a.regions["A"].cutoff == pytest.approx(1361.50, rel=1e-5)
    assert not a.regions["L"].present                    # closely coupled: L cannot matter
    assert [b.parameters for b in a.bands] == ["oC", "oCA", "CA", "A"]
    assert a.bands[0].start == 16 and a.bands[-1].end == 2**25


def test_tiny_latency_on_chip_accelerator_has_no_latency_region():
    a = optimization_regions(LogCA(L=1, o=1e4, C=50, A=10, beta=1.0))
    assert not a.regions["L"].present and a.regions["L"].max_gain < 0.2


def test_factor_one_gives_no_regions():
    a = optimization_regions(preset("sparc-t4-engine", "aes"), factor=1.0)
    assert not any(r.present for r in a.regions.values())
    assert [b.parameters for b in a.bands] == [""]


@pytest.mark.parametrize("kwargs, words", [
    (dict(factor=0.5), "factor = 0.5 is invalid: must be a finite number >= 1"),
    (dict(factor=math.nan), "factor"),
    (dict(threshold=0), "threshold = 0 is invalid"),
    (dict(threshold=-0.1), "threshold"),
    (dict(lo=100, hi=10), "granularity range"),
])
def test_arguments_are_validated(kwargs, words):
    with pytest.raises(ModelError, match=words):
        optimization_regions(preset("ultrasparc-t2", "aes"), **kwargs)


def test_batch_equals_single_design_analysis():
    models = [preset(d, "aes") for d in ("ultrasparc-t2", "sparc-t3", "sparc-t4-engine",
                                         "sparc-t4-instr", "sandy-bridge", "apu")]
    arr = lambda f: np.array([getattr(m, f) for m in models])
    batch = regions_batch(arr("L"), arr("o"), arr("C"), arr("A"), arr("beta"),
                          np.array([m.dependent for m in models]))
    for d, m in enumerate(models):
        single = optimization_regions(m)
        for i, p in enumerate(PARAMETERS):
            edges = [x for s in single.regions[p].intervals for x in s if 16 < x < 2**25]
            assert np.allclose(batch.boundaries[d][i], edges, rtol=1e-12)


def test_non_monotone_gain_gives_an_interior_latency_region():
    # Super-linear work with growing latency: L's gain rises and then falls. L·g passes
    # o = 1000 at 333 B and is overtaken by C·g^1.7/A = 0.001·g^1.7 near 92 KB.
    m = LogCA(L=3, o=1000, C=0.03, A=30, beta=1.7, latency="dependent")
    r = optimization_regions(m, lo=16, hi=2**30).regions["L"]
    assert r.present and 16 < r.start < r.end < 2**30


def test_samples_table_holds_gains_at_the_paper_points():
    a = optimization_regions(preset("ultrasparc-t2", "aes"))
    assert len(a.samples) == 22 and set(a.gains) == set(PARAMETERS)
    d = a.to_dict()
    assert d["regions"]["o"]["present"] and d["regions"]["o"]["from"] == 16
    assert d["bands"][0]["parameters"] == "oC"


# ---------------------------------------------------------------- what-if
def test_what_if_changes_and_results():
    w = what_if(preset("sparc-t3", "aes"), ["o=435", "L=500"])
    assert w.after.o == 435 and w.after.L == 500 and w.before.o == 2.7e4
    # Independent latency: g1 scales with (o + L) exactly (eq. 5): 935/28500 ... to the 1/β.
    assert w.g1[1].root / w.g1[0].root == pytest.approx((935 / 28500) ** (1 / 1.01), rel=1e-9)
    assert np.all(w.speedup_after >= w.speedup_before)


def test_what_if_relative_changes():
    m = preset("ultrasparc-t2", "aes")
    after, updates = apply_changes(m, ["A=*2", "L=/10", "latency=dependent"])
    assert after.A == 38 and after.L == 150 and after.latency == "dependent"


@pytest.mark.parametrize("change, words", [
    ("o", "expected NAME=VALUE"), ("Q=3", "NAME must be one of"), ("o=abc", "not a number"),
    ("o=-3", "o = -3.0 is invalid"), ("A=*0", "factor must be"), ("latency=/2", "latency takes"),
])
def test_what_if_bad_changes(change, words):
    with pytest.raises(ModelError, match=words):
        what_if(preset("sparc-t3", "aes"), [change])


# ---------------------------------------------------------------- case studies
def test_crypto_case_study_shows_the_interface_improving():
    r = run_case_study("crypto")
    cut = {row.design.split("/")[0]: row for row in r.cutoffs()}
    o_cut = [cut[d].regions["o"].cutoff for d in ("ultrasparc-t2", "sparc-t3", "sparc-t4-engine",
                                             "sparc-t4-instr")]
    assert o_cut == sorted(o_cut, reverse=True)    # overhead region shrinks design by design
    assert "pcie-crypto" in r.omitted
    assert cut["sparc-t4-instr"].regions["A"].start == 16  # acceleration pays from the start


def test_gpu_case_study_lists_missing_hsa():
    r = run_case_study("gpu")
    assert [a.model.label for a in r.analyses] == ["discrete-gpu/gemm", "apu/gemm"]
    assert "hsa-gpu" in r.omitted


def test_unknown_case_study():
    with pytest.raises(ModelError, match="valid case studies are crypto, gpu"):
        run_case_study("fpga")


# ---------------------------------------------------------------- command line


def test_regions_json_contract(cli):
    code, out, _ = cli("logca", "regions", "--preset", "ultrasparc-t2", "--kernel", "aes",
                       "--json")
    d = json.loads(out)
    assert code == 0 and d["factor"] == 10 and d["threshold"] == 0.2
    for p in PARAMETERS:
        assert set(d["regions"][p]) >= {"present", "from", "to", "cutoff"}
    assert d["bands"][0] == {"from": 16.0, "to": pytest.approx(1361.5, rel=1e-4),
                             "parameters": "oC"}


def test_regions_samples_option(cli):
    code, out, _ = cli("logca", "regions", "--preset", "ultrasparc-t2", "--kernel", "aes",
                       "--samples", "50", "--json")
    d = json.loads(out)
    assert code == 0 and len(d["samples"]["granularity"]) == 50
    assert d["regions"]["o"]["cutoff"] == pytest.approx(24066.45, rel=1e-5)   # unchanged


def test_regions_figures(cli, tmp_path):
    out = tmp_path / "regions.svg"
    code, _, err = cli("logca", "regions", "--preset", "ultrasparc-t2", "--kernel", "aes",
                       "--out", str(out), "--sensitivity")
    assert code == 0 and out.exists() and (tmp_path / "regions-sensitivity.svg").exists()


@pytest.mark.parametrize("argv, words", [
    (["logca", "regions", "--preset", "apu", "--kernel", "aes", "--factor", "0.5"], "factor"),
    (["logca", "regions", "--preset", "apu", "--kernel", "aes", "--threshold", "-1"],
     "threshold"),
    (["logca", "regions", "--preset", "apu", "--kernel", "aes", "--sensitivity"], "needs --out"),
    (["logca", "regions", "--preset", "apu", "--kernel", "aes", "--samples", "many"], "--samples"),
    (["logca", "whatif", "--preset", "sparc-t3", "--kernel", "aes"], "--set is missing"),
    (["logca", "whatif", "--preset", "sparc-t3", "--kernel", "aes", "--set", "o=-1"], "o = -1"),
    (["logca", "case-study", "fpga"], "'fpga' is not one of"),
    (["logca", "bounds", "--preset", "apu", "--kernel", "aes", "--out", "b.gif"], "--out"),
])
def test_bad_input_one_line_exit_2(cli, argv, words):
    code, _, err = cli(*argv)
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1


def test_whatif_and_case_study_commands(cli, tmp_path):
    code, out, _ = cli("logca", "whatif", "--preset", "sparc-t3", "--kernel", "aes",
                       "--set", "o=435", "--set", "L=500", "--json", "--out",
                       str(tmp_path / "w.png"))
    d = json.loads(out)
    assert code == 0 and d["changes"] == {"o": 435.0, "L": 500.0}
    assert d["g1"]["after"]["value"] < d["g1"]["before"]["value"]
    code, out, _ = cli("logca", "case-study", "crypto", "--json", "--out",
                       str(tmp_path / "c.svg"))
    d = json.loads(out)
    assert code == 0 and len(d["designs"]) == 4 and "pcie-crypto" in d["omitted"]
    assert (tmp_path / "c.svg").exists()
    code, out, _ = cli("logca", "bounds", "--preset", "apu", "--kernel", "radix-sort",
                       "--json")
    assert code == 0 and json.loads(out)["bound"] == "latency"


def test_whatif_compares_the_sizes_asked_for(cli):
    # the table jumps by 8x (512 KiB, then 4 MiB): 1 MiB needed --json
    code, out, _ = cli("logca", "whatif", "--L", "3000", "--o", "50000", "--C", "5",
                       "--A", "8", "--set", "A=11.1246", "--at", "1MiB", "--at", "4KiB")
    rows = [l for l in out.splitlines() if "speedup at" in l]
    assert code == 0 and [r.split("│")[1].strip() for r in rows] == \
        ["speedup at 4 KiB", "speedup at 1 MiB"]
    assert rows[1].split("│")[3].strip() == "10"


def test_an_overridden_preset_is_labelled_as_changed(cli):
    code, out, _ = cli("logca", "show", "--preset", "sparc-t3", "--kernel", "aes",
                       "--L", "3000", "--o", "50000")
    assert code == 0 and "sparc-t3/aes with L, o changed" in out
    code, out, _ = cli("logca", "show", "--preset", "sparc-t3", "--kernel", "aes",
                       "--L", "3000", "--name", "mine")
    assert code == 0 and "mine" in out and "changed" not in out
    code, out, _ = cli("logca", "show", "--preset", "sparc-t3", "--kernel", "aes",
                       "--L", "1500")                         # the preset's own L
    assert code == 0 and "sparc-t3/aes" in out and "changed" not in out
