"""Fitting LogCA to measurements: recovery of known parameters, warnings, CSV, CLI."""

import json
import math

import numpy as np
import pytest

from accelperf import LogCA, ModelError
from accelperf.logca.fit import fit_logca, measured_crossing, power_law
from accelperf.measure.data import read_timings

G = 2.0 ** np.arange(4, 26)          # the paper's 16 B .. 32 MiB


def noisy(times, sigma, seed):
    return times * np.exp(np.random.default_rng(seed).normal(0, sigma, times.size))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_recovers_an_on_chip_accelerator(seed):
    true = LogCA(L=4e-9, o=9e-9, C=3e-9, A=5.0, beta=1.0, unit="seconds")
    fit = fit_logca(G, noisy(true.T0(G), 0.02, seed), noisy(true.T1(G), 0.02, seed + 10),
                    latency="independent", bootstrap=50, seed=seed)
    p = fit.parameters
    assert p["o"].value == pytest.approx(13e-9, rel=0.15)      # o + L is what is identified
    assert p["L"].value == 0 and not p["L"].vary
    assert p["C"].value == pytest.approx(3e-9, rel=0.05)
    assert p["A"].value == pytest.approx(5.0, rel=0.05)
    assert p["beta"].value == pytest.approx(1.0, abs=0.01)
    for name in ("C", "A", "beta"):        # the truth lies within a few standard errors
        true_value = {"C": 3e-9, "A": 5.0, "beta": 1.0}[name]
        assert abs(p[name].value - true_value) < 6 * p[name].stderr + 1e-3 * true_value
    assert fit.mean_error < 0.05
    assert any("o and L cannot be told apart" in w for w in fit.warnings)
    assert not any("falls at the large end" in w for w in fit.warnings)    # noise is not a fall


def test_recovers_an_offload_with_its_echo_run():
    true = LogCA(L=4e-10, o=2e-6, C=2.8e-9, A=12.0, beta=1.0, latency="dependent",
                 unit="seconds")
    g = 2.0 ** np.arange(10, 22)
    echo = true.o + true.L * g
    fit = fit_logca(g, noisy(true.T0(g), 0.01, 4), noisy(true.T1(g), 0.01, 5),
                    noisy(echo, 0.01, 6), latency="dependent", bootstrap=50)
    p = fit.parameters
    assert p["o"].value == pytest.approx(2e-6, rel=0.1) and p["o"].note == "from the echo run"
    assert p["L"].value == pytest.approx(4e-10, rel=0.1)
    assert p["A"].value == pytest.approx(12.0, rel=0.1)
    assert fit.model.latency == "dependent" and fit.mean_error < 0.03


def test_recovers_sub_linear_dependent_without_echo():
    true = LogCA(L=2.0, o=500.0, C=40.0, A=20.0, beta=0.8, latency="dependent")
    fit = fit_logca(G, noisy(true.T0(G), 0.01, 7), noisy(true.T1(G), 0.01, 8),
                    latency="auto", bootstrap=50)
    p = fit.parameters
    assert fit.model.latency == "dependent"
    assert p["beta"].value == pytest.approx(0.8, abs=0.01)
    assert p["L"].value == pytest.approx(2.0, rel=0.1)
    assert p["A"].value == pytest.approx(20.0, rel=0.25)
    # past its peak (g* = βo/(L(1-β)) = 1 KB) this model's speedup falls, and the fitted
    # curve follows it: that is LogCA, not a cache, and draws no warning
    assert fit.speedup_measured[-1] < 0.5 * fit.speedup_measured.max()
    assert not any("falls at the large end" in w for w in fit.warnings)


def test_g1_and_g_half_with_uncertainty():
    true = LogCA(L=0, o=2e-6, C=3e-9, A=5.0, beta=1.0, unit="seconds")
    fit = fit_logca(G, noisy(true.T0(G), 0.01, 9), noisy(true.T1(G), 0.01, 10),
                    latency="independent", bootstrap=100)
    g1_true = true.g1().root
    assert fit.g1.model == pytest.approx(g1_true, rel=0.1)
    assert fit.g1.measured == pytest.approx(g1_true, rel=0.2)
    lo, hi = fit.g1.interval
    assert lo < fit.g1.model < hi and fit.g1.stderr > 0
    assert fit.g_half.model == pytest.approx(true.g_half().root, rel=0.1)


def test_per_call_constant_warning_offers_the_large_g_fit():
    c0 = 3e-8
    t0 = c0 + 2.9e-9 * G
    t1 = 1.3e-8 + 2.9e-9 * G / 5
    fit = fit_logca(G, t0, t1, latency="independent", bootstrap=0)
    assert fit.parameters["beta"].value < 0.99
    warning = next(w for w in fit.warnings if "per-call constant" in w)
    assert "restricted to g >=" in warning and "β =" in warning


def test_other_warnings():
    true = LogCA(L=0, o=1e-8, C=3e-9, A=5.0, unit="seconds")
    g = np.array([16.0, 64, 256, 1024])
    t0 = true.T0(g).copy()
    t0[2] = t0[1] * 0.5                                       # host time falls
    fit = fit_logca(g, t0, true.T1(g), latency="independent", bootstrap=0)
    text = " | ".join(fit.warnings)
    assert "only 4 granularities" in text and "not monotone" in text
    assert "outside the measured range" in text             # g1 is below 16 B here


def test_a_speedup_falling_at_the_large_end_is_named():
    # AES-NI on this VM: the last point's data outgrow the caches and the accelerator slows.
    true = LogCA(L=0, o=2e-9, C=2.6e-9, A=5.0, unit="seconds")
    t0, t1 = true.T0(G), true.T1(G).copy()
    t1[-1] *= 1.11
    fit = fit_logca(G, t0, t1, latency="independent", bootstrap=0)
    warning = next(w for w in fit.warnings if "falls at the large end" in w)
    assert "from 32 MiB on" in warning and "no memory hierarchy" in warning
    assert "over-predicts the speedup at 32 MiB by 1" in warning           # by about 11%
    assert fit.relative_error[-1] > 0.08           # the model over-predicts there, as it says
    # a speedup still rising at the top of the range is not a fall
    rising = LogCA(L=0, o=2e-4, C=2.6e-9, A=5.0, unit="seconds")
    fit = fit_logca(G, rising.T0(G), rising.T1(G), latency="independent", bootstrap=0)
    assert not any("falls at the large end" in w for w in fit.warnings)


def test_negative_overhead_is_reported():
    t0 = 3e-9 * G
    t1 = -5e-9 + t0 / 4          # positive at every measured g, but the intercept is < 0
    fit = fit_logca(G, t0, t1, latency="independent", bootstrap=0)
    assert fit.parameters["o"].value >= 0
    assert any("negative overhead" in w for w in fit.warnings)


def test_frequency_reports_cycles():
    true = LogCA(L=0, o=1e-8, C=3e-9, A=5.0, unit="seconds")
    fit = fit_logca(G, true.T0(G), true.T1(G), latency="independent", frequency_hz=3e9,
                    bootstrap=0)
    assert fit.model.unit == "cycles" and fit.parameters["C"].value == pytest.approx(9, rel=1e-3)
    assert fit.parameters["o"].value == pytest.approx(30, rel=1e-2)


@pytest.mark.parametrize("kwargs, words", [
    (dict(granularity=[16, 32], t_host=[1, 2], t_accel=[1, 1]), "at least 3"),
    (dict(granularity=[16, 32, 64], t_host=[1, 2, -1], t_accel=[1, 1, 1]), "must be finite"),
    (dict(granularity=[16, 32, 64], t_host=[1, 2, 3], t_accel=[1, 1]), "3 numbers"),
    (dict(granularity=[16, 16, 64], t_host=[1, 2, 3], t_accel=[1, 1, 1]), "repeat"),
    (dict(granularity=[16, 32, 64], t_host=[1, 2, 3], t_accel=[1, 1, 1], latency="both"),
     "latency"),
])
def test_bad_fit_input(kwargs, words):
    with pytest.raises(ModelError, match=words):
        fit_logca(**kwargs)


def test_helpers():
    C, beta, _, _ = power_law(G, 3 * G**1.1)
    assert C == pytest.approx(3) and beta == pytest.approx(1.1)
    from scipy import stats
    rng = np.random.default_rng(5)
    for n in (2, 3, 17):                    # two points: no residual, both errors 0
        g = np.geomspace(4096, 2**28, n)
        t = 1e-6 * g**0.9 * np.exp(rng.normal(0, 0.1, n))
        r = stats.linregress(np.log(g), np.log(t))
        assert power_law(g, t) == pytest.approx(
            (math.exp(r.intercept), r.slope, r.intercept_stderr, r.stderr), rel=1e-6, abs=1e-15)
    assert measured_crossing([1, 10, 100], [0.5, 2, 4], 1.0) == pytest.approx(
        10 ** (math.log(2) / math.log(4)), rel=1e-9)
    assert measured_crossing([1, 10], [2, 4], 1.0) is None


# ---------------------------------------------------------------- CSV and command line
def write_csv(path, g, t0, t1, echo=None, header=True):
    lines = ["# core clock hz: 3e9"] if header else []
    lines.append("kernel,mode,granularity_bytes,seconds_min,seconds_median,seconds_max,repeats")
    for mode, times in (("host", t0), ("accel", t1), ("echo", echo)):
        if times is None:
            continue
        for x, t in zip(g, times):
            lines.append(f"aes,{mode},{int(x)},{t * 0.98},{t},{t * 1.05},5")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_read_timings(tmp_path):
    true = LogCA(L=0, o=1e-8, C=3e-9, A=5.0, unit="seconds")
    path = write_csv(tmp_path / "d.csv", G, true.T0(G), true.T1(G))
    t = read_timings(path)
    assert t.granularity.size == 22 and t.echo is None and t.core_clock_hz == 3e9
    assert read_timings(path, "min").host[0] == pytest.approx(true.T0(G)[0] * 0.98)
    bad = tmp_path / "bad.csv"
    bad.write_text("kernel,mode,granularity_bytes\naes,host,16\n")
    with pytest.raises(ModelError, match="missing column"):
        read_timings(bad)
    bad.write_text("kernel,mode,granularity_bytes,seconds_min,seconds_median\n"
                   "aes,turbo,16,1,1\n")
    with pytest.raises(ModelError, match="not host, accel or echo"):
        read_timings(bad)
    with pytest.raises(ModelError, match="data ="):
        read_timings(tmp_path / "missing.csv")
    bad.write_text("kernel;mode;granularity_bytes;seconds_min;seconds_median\n"
                   "aes;host;16;1;1\n")
    with pytest.raises(ModelError, match="separated by semicolons: the file must use commas"):
        read_timings(bad)
    bad.write_text("kernel,mode,granularity_bytes,seconds_min,seconds_median\n"
                   "aes,host,4096.5,1,1\naes,accel,4096.5,1,1\n")
    with pytest.raises(ModelError, match=r"granularity_bytes = '4096.5' is invalid: an "
                                         r"offload moves a whole number of bytes"):
        read_timings(bad)


def test_rows_without_a_partner_are_named_not_dropped_in_silence(tmp_path, cli):
    true = LogCA(L=0, o=1e-8, C=3e-9, A=5.0, unit="seconds")
    path = write_csv(tmp_path / "d.csv", G, true.T0(G), true.T1(G), echo=true.T1(G) / 2)
    lines = path.read_text().splitlines()
    gone = [l for l in lines if l.startswith(("aes,accel,65536,", "aes,echo,1024,"))]
    path.write_text("\n".join(l for l in lines if l not in gone) + "\n")
    t = read_timings(path)
    assert 65536 not in t.granularity and t.echo is None
    assert t.notes == (
        "d.csv: host row(s) at 64 KiB have no accel row at the same granularity and are "
        "left out of the fit",
        "d.csv: the echo (copies-only) rows miss 1 KiB, so all 21 are left out: the fit "
        "uses them only where they cover every granularity")
    code, out, _ = cli("logca", "fit", str(path), "--bootstrap", "0")
    assert code == 0 and "host row(s) at 64 KiB have no accel row" in out
    assert read_timings(write_csv(tmp_path / "e.csv", G, true.T0(G), true.T1(G))).notes == ()
    # microseconds written in the seconds columns: said, once
    small = G[G <= 2**20]
    micro = read_timings(write_csv(tmp_path / "us.csv", small, true.T0(small) * 1e6 + 1,
                                   true.T1(small) * 1e6 + 1))
    assert len(micro.notes) == 1 and "are the times in seconds?" in micro.notes[0]


def test_fit_command_json_contract(cli, tmp_path):
    true = LogCA(L=0, o=1e-8, C=3e-9, A=5.0, unit="seconds")
    path = write_csv(tmp_path / "d.csv", G, noisy(true.T0(G), 0.01, 1),
                     noisy(true.T1(G), 0.01, 2))
    figure = tmp_path / "fit.svg"
    code, out, _ = cli("logca", "fit", str(path), "--latency", "independent", "--frequency",
                       "auto", "--bootstrap", "20", "--json", "--out", str(figure))
    d = json.loads(out)
    assert code == 0 and figure.exists()
    assert set(d["parameters"]) == {"L", "o", "C", "A", "beta"}
    assert set(d["stderr"]) == {"L", "o", "C", "A", "beta"}
    assert {"mean", "max", "per_granularity"} <= set(d["error"])
    assert len(d["error"]["per_granularity"]) == 22
    assert set(d["g1"]) >= {"measured", "model"} and set(d["g_half"]) >= {"measured", "model"}
    assert isinstance(d["warnings"], list) and d["unit"] == "cycles"
    assert d["parameters"]["C"] == pytest.approx(9, rel=0.05)


@pytest.mark.parametrize("argv, words", [
    (["logca", "fit", "nope.csv"], "data = 'nope.csv'"),
    (["logca", "fit", "X", "--frequency", "fast"], "--frequency"),
    (["measure", "aes", "--out", "x.csv", "--mode", "gcm"], "'gcm' is not one of"),
    (["measure", "aes", "--out", "x.csv", "--from", "1MiB", "--to", "1KiB"], "need from < to"),
    (["measure", "offload", "--kernel", "md5", "--out", "x.csv"], "'md5' is not one of"),
])
def test_fit_and_measure_bad_input(cli, argv, words, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    if argv[2] == "X":
        argv = argv[:2] + [str(write_csv(tmp_path / "d.csv", G[:5], G[:5], G[:5]))] + argv[3:]
    code, _, err = cli(*argv)
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1


def test_fit_command_frequency_auto_needs_a_recorded_clock(cli, tmp_path):
    true = LogCA(L=0, o=1e-8, C=3e-9, A=5.0, unit="seconds")
    path = write_csv(tmp_path / "d.csv", G, true.T0(G), true.T1(G), header=False)
    code, _, err = cli("logca", "fit", str(path), "--frequency", "auto")
    assert code == 2 and "records no core clock" in err


# ---------------------------------------------------------------- range, host constant, checks
def test_fit_range_restriction_leaves_points_out():
    true = LogCA(L=0, o=1e-8, C=3e-9, A=5.0, unit="seconds")
    t0, t1 = true.T0(G), true.T1(G)
    fit = fit_logca(G, t0, t1, latency="independent", bootstrap=0, lo=2048, hi=2**24)
    assert fit.granularity[0] == 2048 and fit.granularity[-1] == 2**24
    assert set(fit.excluded) == {float(x) for x in G if x < 2048 or x > 2**24}
    assert "8 granularities left out" in fit.method and fit.to_dict()["excluded_granularities"]
    with pytest.raises(ModelError, match="only 2 granularities at or above 16 MiB"):
        fit_logca(G, t0, t1, lo=2**24)      # not "inside 16 MiB..inf"
    with pytest.raises(ModelError, match="only 2 granularities inside 1 KiB..2 KiB"):
        fit_logca(G, t0, t1, lo=1024, hi=2048)
    with pytest.raises(ModelError, match="need from < to"):
        fit_logca(G, t0, t1, lo=4096, hi=1024)


def test_host_constant_recovers_c0_and_exact_crossings():
    # T0 = c0 + C·g, T1 = c0 + o + C·g/A: the accelerated call pays the constant too
    c0, o, C, A = 3e-8, 1.3e-8, 2.9e-9, 5.0
    t0, t1 = c0 + C * G, c0 + o + C * G / A
    plain = fit_logca(G, t0, t1, latency="independent", bootstrap=0)
    fit = fit_logca(G, t0, t1, latency="independent", bootstrap=0, host_constant=True)
    assert fit.host_constant.value == pytest.approx(c0, rel=1e-6)
    assert fit.parameters["beta"].value == pytest.approx(1, abs=1e-6)
    assert fit.parameters["C"].value == pytest.approx(C, rel=1e-6)
    assert fit.max_error < 1e-6 < plain.max_error
    # g1: c0 + Cg = c0 + o + Cg/A  ⇒  g = o / (C(1 − 1/A))
    assert fit.g1.model == pytest.approx(o / (C * (1 - 1 / A)), rel=1e-6)
    # g_A/2: c0 + Cg = (A/2)(c0 + o + Cg/A)  ⇒  g = (A(c0 + o) − 2c0) / C
    assert fit.g_half.model == pytest.approx((A * (c0 + o) - 2 * c0) / C, rel=1e-6)
    assert np.allclose(fit.speedup(G), t0 / t1, rtol=1e-6)


def test_accelerated_slower_than_the_host_is_warned():
    true = LogCA(L=0, o=1e-8, C=3e-9, A=5.0, unit="seconds")
    fit = fit_logca(G, true.T1(G), true.T0(G), latency="independent", bootstrap=0)  # swapped
    assert fit.model.A < 1
    warning = next(w for w in fit.warnings if "<= 1" in w)
    assert "slower than the host at 22 of 22" in warning and "swapped" in warning
    assert fit.g1.model is None


def test_falloff_is_named_with_a_small_fall_the_model_misses():
    # a 3.5% fall of the last point (as a median of noisy repeats shows it) is still named
    # when the fitted curve over-predicts it by more than 5%
    true = LogCA(L=0, o=2e-9, C=2.6e-9, A=5.0, unit="seconds")
    t0, t1 = true.T0(G), true.T1(G).copy()
    t1[-2:] *= 1.07
    fit = fit_logca(G, t0, t1, latency="independent", bootstrap=0)
    assert any("falls at the large end" in w and "--to" in w for w in fit.warnings)


def test_fit_cli_range_host_constant_and_row_checks(cli, tmp_path):
    c0, o, C, A = 3e-8, 1.3e-8, 2.9e-9, 5.0
    path = write_csv(tmp_path / "d.csv", G, c0 + C * G, c0 + o + C * G / A)
    code, out, _ = cli("logca", "fit", str(path), "--latency", "independent", "--bootstrap",
                       "0", "--host-constant", "--from", "64B", "--to", "16MiB", "--json")
    d = json.loads(out)
    assert code == 0 and d["host_constant"]["value"] == pytest.approx(c0 * 0.98, rel=1e-4)
    assert d["excluded_granularities"] == [16.0, 32.0, 2.0**25]
    # a duplicated row and host/accelerated rows of two kernels are refused by the reader
    text = path.read_text() + "aes,host,1024,1e-6,1e-6,1e-6,5\n"
    path.write_text(text)
    code, _, err = cli("logca", "fit", str(path))
    assert code == 2 and "a second host timing at 1024 B" in err
    mixed = tmp_path / "mixed.csv"
    mixed.write_text(text.replace("aes,accel", "sha,accel").replace(
        "aes,host,1024,1e-6,1e-6,1e-6,5\n", ""))
    code, _, err = cli("logca", "fit", str(mixed))
    assert code == 2 and "mixes kernels aes, sha" in err


def test_a_sub_byte_crossing_prints_as_below_a_byte(cli, tmp_path):
    # no overhead: the fitted o is ~1e-15 s and puts g1 and g_A/2 far below a byte, which
    # the text must not print as a size one could offload ("1.72e-06 B")
    true = LogCA(L=0, o=0, C=3e-9, A=5.0, unit="seconds")
    path = write_csv(tmp_path / "d.csv", G, true.T0(G), true.T1(G))
    code, out, err = cli("logca", "fit", str(path), "--latency", "independent",
                         "--bootstrap", "0")
    assert code == 0, err
    assert "g1: measured —, model < 1 B" in out
    assert "g_A/2: measured —, model < 1 B" in out
    code, out, _ = cli("logca", "fit", str(path), "--latency", "independent",
                       "--bootstrap", "0", "--json")
    assert 0 < json.loads(out)["g1"]["model"] < 1e-3          # the number itself is kept


def test_a_host_constant_fit_names_the_model_that_carries_c0():
    # A new user read fit.model.g1() = 18.5 B and fit.model.speedup(16) = 0.89 where the
    # fit's own g1 was 5.6 B and the speedup 1.46: the LogCA in `model` has no c0.
    c0, o, C, A = 3e-8, 1.3e-8, 2.9e-9, 5.0
    t0, t1 = c0 + C * G, c0 + o + C * G / A
    fit = fit_logca(G, t0, t1, latency="independent", bootstrap=0, host_constant=True)
    full = fit.full_model
    assert float(full.speedup(16)) == pytest.approx(float(t0[0] / t1[0]), rel=1e-6)
    assert full.g1() == pytest.approx(fit.g1.model, rel=1e-9)
    assert float(fit.model.speedup(16)) < 0.7 * float(full.speedup(16))
    assert "full_model" in repr(fit)
    assert fit_logca(G, t0, t1, bootstrap=0).full_model is not None
    from accelperf.logca.regions import optimization_regions
    assert optimization_regions(full).bands       # asked on the curve with c0


def test_fit_data_is_checked_and_sorted_when_made():
    from accelperf.logca.fit import FitData
    t0, t1 = 1e-9 * G, 1e-6 + 2e-10 * G
    order = np.random.default_rng(0).permutation(G.size)
    d = FitData(list(G[order]), t0[order], t1[order])
    assert np.all(np.diff(d.g) > 0) and np.array_equal(d.t0, t0) and np.array_equal(d.t1, t1)
    with pytest.raises(ModelError, match="host times contains nan"):
        FitData(G, np.r_[t0[:-1], np.nan], t1)
    with pytest.raises(ModelError, match="accelerated times must be a list of 22"):
        FitData(G, t0, t1[:-1])
    with pytest.raises(ModelError, match="granularity 16 B repeats"):
        FitData(np.r_[G[:-1], 16.0], t0, t1)
    with pytest.raises(ModelError, match=r"granularity = '4KiB' is invalid.*parse_size"):
        FitData(["4KiB"] * G.size, t0, t1)
    with pytest.raises(ModelError, match="bootstrap = -1 is invalid"):
        fit_logca(G, t0, t1, bootstrap=-1)


def test_a_measured_crossing_outside_the_interval_is_said():
    # a plain fit printed g1 51.1 KiB (95% 44–58.6 KiB) beside a measured 63.4 KiB, silently
    from accelperf.measure.data import read_timings
    t = read_timings("examples/measurements/gpu-h200/gpu-gemm.csv")
    fit = fit_logca(t.granularity, t.host, t.accel, t.echo, bootstrap=40)
    lo, hi = fit.g1.interval
    assert not lo <= fit.g1.measured <= hi                # 443 KiB against 75.8..143 KiB
    assert any("passes 1 at 443 KiB, outside the model's 95% interval" in w
               for w in fit.warnings)
    # exact data: the measured crossing is a log-log interpolation a little off the exact
    # g1, whose interval has no width; the model meets the points, so nothing is said
    true = LogCA(L=0, o=1e-6, C=1e-9, A=5.0, unit="seconds")
    exact = fit_logca(G, true.T0(G), true.T1(G), latency="independent", bootstrap=40)
    assert not exact.g1.interval[0] <= exact.g1.measured <= exact.g1.interval[1]
    assert not any("95% interval" in w for w in exact.warnings)


def test_whatif_starts_from_a_fit_of_the_data(tmp_path, cli):
    # an FPGA vendor had to copy five fitted numbers into `whatif` by hand
    true = LogCA(L=1e-10, o=2e-5, C=2e-9, A=8.0, latency="dependent", unit="seconds")
    path = write_csv(tmp_path / "d.csv", G, true.T0(G), true.T1(G), echo=true.T1(G) / 2)
    code, out, err = cli("logca", "whatif", "--data", str(path), "--set", "o=/2", "--json")
    assert code == 0, err
    t = read_timings(path)
    fitted = fit_logca(t.granularity, t.host, t.accel, t.echo, bootstrap=0).model
    d = json.loads(out)
    assert d["changes"]["o"] == pytest.approx(fitted.o / 2, rel=1e-12)
    assert d["g1"]["before"]["value"] == pytest.approx(fitted.g1().root, rel=1e-9)
    assert d["before"]["o"] == pytest.approx(fitted.o, rel=1e-12)
    code, _, err = cli("logca", "whatif", "--data", str(path), "--set", "o=/2", "--A", "3")
    assert code == 2 and "--data gives the model; drop --A" in err
