"""LogCA with a memory hierarchy (issue 24): the model, its fit and the choice by AIC."""

import json
import math
import re

import numpy as np
import pytest

from accelperf import LogCA, ModelError
from accelperf.density.hierarchy import Hierarchy, Layer
from accelperf.logca.fit import fit_logca
from accelperf.logca.hierarchy import (HierarchicalLogCA, MemoryLayer, layers_from_hierarchy,
                                       miss_share)
from accelperf.logca.hierfit import fit_hierarchical

MiB = 2**20
LAYERS = (MemoryLayer("L2", 1 * MiB), MemoryLayer("L3", 32 * MiB), MemoryLayer("DRAM", math.inf))
BASE = LogCA(L=0.25e-9, o=8e-6, C=1.0e-9, A=5, latency="dependent", unit="seconds")
G = 2.0 ** np.arange(12, 28)          # 4 KiB .. 128 MiB, as the committed dataset


def synthetic(model, noise=0.003, seed=1):
    rng = np.random.default_rng(seed)
    jitter = lambda: np.exp(rng.normal(0, noise, G.size))          # noqa: E731
    echo = model.base.o + model.base.L * G * model.link_factor(G)
    return model.T0(G) * jitter(), model.T1(G) * jitter(), echo * jitter()


@pytest.mark.parametrize("plain", [
    LogCA(L=3, o=10, C=35, A=6),
    LogCA(L=0.25e-9, o=8e-6, C=1e-9, A=5, beta=1.1, latency="dependent", unit="seconds"),
    LogCA(L=1500, o=2.9e4, C=90, A=19, beta=0.8),
])
def test_one_layer_is_plain_logca_to_1e_12(plain):
    one = HierarchicalLogCA(plain, (MemoryLayer("memory", math.inf),))
    g = np.geomspace(1, 2**30, 200)
    for attr in ("T0", "T1", "speedup"):
        np.testing.assert_allclose(getattr(one, attr)(g), getattr(plain, attr)(g), rtol=1e-12)
    assert one.g1() == pytest.approx(plain.g1().root, rel=1e-12)
    assert one.g_half() == pytest.approx(plain.g_half().root, rel=1e-12)
    assert one.large_g_limit() == plain.large_g_limit()
    assert one.local_model(4096) is plain


def test_one_layer_file_is_plain_logca_in_the_fit():
    """A hierarchy of one layer fits exactly what fit_logca fits."""
    t0, t1, echo = synthetic(HierarchicalLogCA(BASE, LAYERS, (0.0, 0.1), (0.0, 0.3)))
    plain = fit_logca(G, t0, t1, echo, bootstrap=0)
    one = fit_hierarchical(G, t0, t1, (MemoryLayer("memory", math.inf),), t_echo=echo)
    assert one.chosen == "plain" and one.hierarchical is None
    np.testing.assert_allclose(one.speedup_model, plain.speedup_model, rtol=1e-12)


def test_transition_is_a_logistic_in_log_size():
    g = np.array([MiB / 8, MiB / 2, MiB, 2 * MiB, 8 * MiB])
    m = miss_share(g, capacity=2 * MiB, working_set=2.0, sharpness=3.0)
    assert m[2] == pytest.approx(0.5)                     # w·g = μ: half way
    assert m[1] == pytest.approx(1 - m[3])                # symmetric in log size
    assert np.all(np.diff(m) > 0) and m[0] < 0.01 and m[-1] > 0.99
    step = miss_share(g, 2 * MiB, 2.0, 200.0)            # s → ∞: the density model's step
    assert list(step.round(6)) == [0, 0, 0.5, 1, 1]


def test_speedup_bends_where_the_data_outgrow_a_layer():
    m = HierarchicalLogCA(BASE, LAYERS, (0.02, 0.10), (0.05, 0.25), (0.3, 2.0), working_set=3,
                          sharpness=3)
    inside, outside = m.speedup(2 * MiB), m.speedup(2**32)
    plain = HierarchicalLogCA(BASE, LAYERS)
    assert outside < inside * 0.95 and plain.speedup(2**32) > plain.speedup(2 * MiB)
    assert m.large_g_limit() == pytest.approx(float(m.speedup(1e15)), rel=1e-6)
    assert m.layer_at(1 * MiB).name == "L3" and m.layer_at(64 * MiB).name == "DRAM"
    local = m.local_model(64 * MiB)                       # one size, the plain equations
    assert float(local.speedup(64 * MiB)) == pytest.approx(float(m.speedup(64 * MiB)), rel=1e-12)
    assert float(m.speedup(m.g1())) == pytest.approx(1.0, rel=1e-10)


def test_fit_recovers_the_layers_and_chooses_them_by_aic():
    true = HierarchicalLogCA(BASE, LAYERS, (0.02, 0.10), (0.05, 0.25), (0.3, 2.0), working_set=3,
                             sharpness=3)
    r = fit_hierarchical(G, *synthetic(true)[:2], LAYERS, t_echo=synthetic(true)[2])
    assert r.chosen == "hierarchical" and r.hierarchical.aic < r.plain.aic - 2
    assert r.max_error < 0.01 and r.errors_of(r.plain)[1] > 2 * r.max_error
    p = r.parameters
    for name, value in (("h[L3]", 0.10), ("a[L3]", 0.25), ("w[L3]", 3.0), ("A", 5.0)):
        assert p[name].value == pytest.approx(value, abs=4 * p[name].stderr + 0.01 * value)
        assert 0 < p[name].stderr < 0.2 * value
    assert r.g1.model == pytest.approx(true.g1(), rel=0.03)
    assert any("layer 'L3'" in w and "the speedup goes from" in w for w in r.warnings)


def test_the_copies_bend_on_their_own():
    """The echo run's copies outgrow L3 at another size than the computations (their own
    w' and s'): the fit finds both bends, and by default the copies share the
    computations' bend."""
    same = HierarchicalLogCA(BASE, LAYERS, (0.02, 0.10), (0.05, 0.25), (0.3, 2.0),
                             working_set=3, sharpness=3)
    assert same.link_working_set == same.working_set and same.link_sharpness == same.sharpness
    true = HierarchicalLogCA(BASE, LAYERS, (0.02, 0.10), (0.05, 0.25), (0.3, 2.0),
                             working_set=3, sharpness=3, link_working_set=(3, 0.75),
                             link_sharpness=(3, 8))
    assert float(true.link_factor(16 * MiB)) < float(same.link_factor(16 * MiB)) - 0.5
    t0, t1, echo = synthetic(true)
    r = fit_hierarchical(G, t0, t1, LAYERS, t_echo=echo)
    assert r.chosen == "hierarchical" and r.max_error < 0.01
    p = r.parameters
    for name, value in (("w[L3]", 3.0), ("w'[L3]", 0.75), ("l[L3]", 2.0)):
        assert p[name].value == pytest.approx(value, abs=4 * p[name].stderr + 0.05 * value)


def test_plain_data_keep_plain_logca():
    plain = HierarchicalLogCA(BASE, LAYERS)                # all steps 0: no bend
    r = fit_hierarchical(G, *synthetic(plain, seed=3)[:2], LAYERS, t_echo=synthetic(plain, seed=3)[2])
    assert r.chosen == "plain"
    assert any("does not earn" in w for w in r.warnings)


def test_a_layer_with_too_few_sizes_is_left_out_with_a_warning():
    layers = (MemoryLayer("registers", 512),) + LAYERS
    true = HierarchicalLogCA(BASE, LAYERS, (0.02, 0.10), (0.05, 0.25), (0.3, 2.0), working_set=3,
                             sharpness=3)
    t0, t1, echo = synthetic(true)
    r = fit_hierarchical(G, t0, t1, layers, t_echo=echo)
    assert r.left_out == ("registers",)
    assert any(w.startswith("layer 'registers' (512 B) left out") and "0 below" in w
               for w in r.warnings)
    small = fit_hierarchical(G[:9], t0[:9], t1[:9], LAYERS, t_echo=echo[:9])   # up to 1 MiB
    assert "L3" in small.left_out


def test_unsorted_or_overlapping_layers_are_refused_naming_the_layer():
    h = Hierarchy("bad", (Layer("L1", 32768, 1e11), Layer("L2", 16384, 5e10),
                          Layer("DRAM", 1e9, 1e10)))
    with pytest.raises(ModelError, match="layer 'L2'.*unsorted or overlapping"):
        layers_from_hierarchy(h)
    h = Hierarchy("same", (Layer("L1", 32768, 1e11), Layer("L2", 32768, 5e10)))
    with pytest.raises(ModelError, match="layer 'L2'"):
        layers_from_hierarchy(h)


def test_layers_from_a_density_hierarchy():
    """Each layer's store is a capacity to outgrow; beyond the last is where its link reads."""
    h = Hierarchy("m", (Layer("registers<-L1", 0, 1e12), Layer("L1<-L2", 32768, 1e11),
                        Layer("L3<-DRAM", 32 * MiB, 1e10)))
    layers = layers_from_hierarchy(h)
    assert [l.name for l in layers] == ["L1<-L2", "L3<-DRAM", "DRAM"]
    assert [l.capacity_bytes for l in layers] == [32768, 32 * MiB, math.inf]
    plain = Hierarchy("p", (Layer("memory", 1e12, 1e10),))
    assert [l.name for l in layers_from_hierarchy(plain)] == ["memory", "beyond memory"]


def test_bad_model_input():
    with pytest.raises(ModelError, match="host_steps"):
        HierarchicalLogCA(BASE, LAYERS, (0.1,), (0.1, 0.1))
    with pytest.raises(ModelError, match="layer 'L2'"):
        HierarchicalLogCA(BASE, LAYERS, (-1.5, 0.1), (0.1, 0.1))
    with pytest.raises(ModelError, match="working_set"):
        HierarchicalLogCA(BASE, LAYERS, working_set=0)


# ---------------------------------------------------------------------- the commands
def write_csv(path, t0, t1, echo=None):
    rows = ["kernel,mode,granularity_bytes,seconds_min,seconds_median,seconds_max,repeats"]
    series = [("host", t0), ("accel", t1)] + ([("echo", echo)] if echo is not None else [])
    for mode, times in series:
        rows += [f"aes,{mode},{int(g)},{t:.12g},{t:.12g},{t:.12g},1" for g, t in zip(G, times)]
    path.write_text("\n".join(rows) + "\n")
    return path


def write_toml(path, sizes):
    text = 'name = "t"\n' + "".join(
        f'[[layer]]\nname = "{n}"\nsize_bytes = {s}\nbandwidth_bytes_per_s = 1e10\n'
        for n, s in sizes)
    path.write_text(text)
    return path


@pytest.fixture
def bent(tmp_path):
    true = HierarchicalLogCA(BASE, LAYERS, (0.02, 0.10), (0.05, 0.25), (0.3, 2.0), working_set=3,
                             sharpness=3)
    data = write_csv(tmp_path / "bent.csv", *synthetic(true))
    hier = write_toml(tmp_path / "h.toml", [("L2", MiB), ("L3", 32 * MiB)])
    return data, hier


def test_fit_command_with_a_hierarchy(cli, bent, tmp_path):
    data, hier = bent
    out = tmp_path / "fit.png"
    code, stdout, err = cli("logca", "fit", str(data), "--hierarchy", str(hier), "--out", str(out))
    assert code == 0, err
    assert out.stat().st_size > 1000
    assert "with the hierarchy (chosen)" in stdout and "h[L3]" in stdout
    assert "data outgrow layer 'L3'" in stdout
    code, stdout, _ = cli("logca", "fit", str(data), "--hierarchy", str(hier), "--json")
    d = json.loads(stdout)
    assert d["chosen"] == "hierarchical" and d["error"]["max"] < 0.01
    assert d["parameters"]["a[L3]"]["stderr"] > 0


def test_curve_and_advise_with_a_hierarchy(cli, bent, tmp_path):
    data, hier = bent
    code, stdout, err = cli("logca", "curve", "--hierarchy", str(hier), "--data", str(data),
                            "--from", "4KiB", "--to", "128MiB", "--json")
    assert code == 0, err
    d = json.loads(stdout)
    plain, hierarchical = d["speedup"]["plain LogCA"], d["speedup"]["with the hierarchy"]
    assert hierarchical[-1] < plain[-1] * 0.95           # it bends past the L3
    code, stdout, err = cli("logca", "advise", "--at", "64MiB", "--hierarchy", str(hier),
                            "--data", str(data), "--json")
    assert code == 0, err
    advice = json.loads(stdout)
    assert advice["speedup"] == pytest.approx(hierarchical[G.tolist().index(64 * MiB)], rel=1e-9)
    assert 8 * 2**10 < advice["break_even"] < 32 * 2**10


@pytest.mark.parametrize("args, words", [
    (["fit", "{data}", "--hierarchy", "{hier}", "--probe"], "--hierarchy and --probe both"),
    (["fit", "{data}", "--hierarchy", "{bad}"], "layer 'L2'"),
    (["curve", "--hierarchy", "{hier}"], "needs --data"),
    (["advise", "--at", "1MiB", "--data", "{data}"], "--data needs --hierarchy"),
    (["advise", "--at", "1MiB", "--hierarchy", "{hier}", "--data", "{data}", "--preset", "x"],
     "drop --preset"),
])
def test_bad_hierarchy_input_is_one_line_and_exit_2(cli, bent, tmp_path, args, words):
    data, hier = bent
    bad = write_toml(tmp_path / "bad.toml", [("L3", 32 * MiB), ("L2", MiB)])
    argv = [a.format(data=data, hier=hier, bad=bad) for a in args]
    code, _, err = cli("logca", *argv)
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1, err


def test_probe_that_cannot_separate_a_layer_is_named(cli, bent, monkeypatch):
    """--probe: a layer the probe could not tell from main memory is named in a note, and
    the fit still runs on the layers it measured."""
    from accelperf.measure import memory
    levels = tuple(memory.LevelMeasurement(memory.CacheLevel(name, size), size // 2, bw,
                                           (bw, bw), lat, (lat, lat))
                   for name, size, bw, lat in (("L1", 32768, 1e11, 1e-9),
                                               ("L2", MiB, 5e10, 5e-9),
                                               ("L3", 32 * MiB, 2e10, 95e-9),
                                               ("DRAM", 2**34, 1e10, 100e-9)))
    monkeypatch.setattr(memory, "probe", lambda **_: memory.ProbeResult(levels, 2048, "test", 1))
    data, _ = bent
    code, stdout, err = cli("logca", "fit", str(data), "--probe")
    assert code == 0, err
    assert "note: the probe: L3 (32 MiB as the operating system reports it)" in stdout
    assert "l[L3<-DRAM]" in stdout


def test_sub_byte_crossings_of_a_hierarchy_fit_print_as_below_a_byte(cli, bent, tmp_path,
                                                                   monkeypatch):
    # the fitted crossings replaced by a sub-byte g1 and g_A/2 (no overhead): both the fit's
    # lines and the `show` table print "< 1 B", not "2e-19 B"
    data, hier = bent
    monkeypatch.setattr(HierarchicalLogCA, "g1", lambda self: 2e-19)
    monkeypatch.setattr(HierarchicalLogCA, "g_half", lambda self: 0.4)
    code, stdout, err = cli("logca", "fit", str(data), "--hierarchy", str(hier))
    assert code == 0, err
    lines = {line.split(":")[0]: line for line in stdout.splitlines() if ": measured" in line}
    assert lines["g1"].endswith("model < 1 B") and lines["g_A/2"].endswith("model < 1 B")
    code, stdout, err = cli("logca", "show", "--hierarchy", str(hier), "--data", str(data))
    assert code == 0, err
    rows = {line.split("│")[1].strip(): line.split("│")[3].strip()
            for line in stdout.splitlines() if line.count("│") == 5}
    assert rows["g1"] == rows["g_A/2"] == "< 1 B" and "e-19" not in stdout


def test_a_layered_fit_whose_cost_falls_through_zero_is_refused(cli):
    """On the H200 GEMM the layered fit's accelerator cost per byte fell 88.6% beyond the
    L1d and 15.3% beyond L1d x16: past 1 MiB its kernel took a negative time, and
    `logca advise --at 1MiB` ended in a ZeroDivisionError. The layered candidate is refused
    with a warning that says why, and the plain model answers."""
    from pathlib import Path
    gpu = Path(__file__).resolve().parents[1] / "examples" / "measurements" / "gpu-h200"
    code, out, err = cli("logca", "advise", "--hierarchy", str(gpu / "host-layers.toml"),
                         "--data", str(gpu / "gpu-gemm.csv"), "--at", "1MiB", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["speedup"] > 1
    (said,) = [w for w in d["warnings"] if "through zero" in w]
    # the digits move with the CPU's SIMD paths (numpy's AVX2 kernels put them at 89.3% and
    # 14.5%), so within 1.5 points of each
    falls = re.search(r"accelerator cost per byte falls ([\d.]+)% beyond L1d and ([\d.]+)% "
                      r"beyond L1d x16", said)
    assert falls, said
    assert float(falls[1]) == pytest.approx(88.6, abs=1.5)
    assert float(falls[2]) == pytest.approx(15.3, abs=1.5)
    assert said.endswith("refused (a time cannot be negative), the plain model is kept")


@pytest.mark.parametrize("beta,beta_A,dependent,limit", [
    (1.0, None, True, "ratio"), (1.0, 0.9, True, "ratio"),     # the copies lead, as β
    (1.2, 1.1, False, math.inf), (1.0, 1.2, True, 0.0),         # the kernel's own exponent
    (1.3, None, True, "ratio"), (0.9, None, True, 0.0)])         # β > 1: A·H/Q; β < 1: 0
def test_the_large_g_limit_is_the_limit_of_the_curve(beta, beta_A, dependent, limit):
    # It was the speedup at 1e15 B for a kernel floor or dependent copies: a curve with
    # β = 1.0004 "reached" 7.986 there, where its speedup is 5.72.
    base = LogCA(L=0.25e-9, o=8e-6, C=1.0e-9, A=5, beta=beta,
                 latency="dependent" if dependent else "independent", unit="seconds")
    m = HierarchicalLogCA(base, LAYERS, (0.02, 0.10), (0.05, 0.25), (0.3, 2.0), working_set=3,
                          sharpness=3, floor=2e-5, accel_beta=beta_A, host_constant=1e-6)
    got = m.large_g_limit()
    if limit == "ratio":
        far = [float(m.speedup(g)) for g in (1e40, 1e200)]     # β_A = 0.9: slow, as g^-0.1
        assert got == pytest.approx(far[1], rel=1e-9) and 0 < got < math.inf
    else:
        assert got == limit
        far = [float(m.speedup(g)) for g in (1e40, 1e80)]
        assert (far[1] > 1e3 * far[0]) if limit == math.inf else (far[1] < 1e-3 * far[0])


def test_a_curve_that_still_rises_at_the_range_end_has_no_peak():
    rising = HierarchicalLogCA(LogCA(L=1e-10, o=2e-5, C=2e-9, A=8, beta=1.0004,
                                     latency="dependent", unit="seconds"), LAYERS, floor=1e-6)
    assert rising.peak() == (None, None)
    falling = HierarchicalLogCA(BASE, LAYERS, (0.02, 0.10), (0.05, 0.25), (0.3, 2.0),
                                working_set=3, sharpness=3)
    g, s = falling.peak()
    assert s > float(falling.speedup(1e15))
