"""Issue 21, the calibration's remaining items: each fitted delay's interval (profile,
bootstrap, linear), fractional measured cycles, the compiled engine's runtime parameters
and the one summary of relative errors."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest

from accelperf.lpn import simulate
from accelperf.lpn.analysis.accuracy import ErrorSummary, check
from accelperf.lpn.calibrate import Fitter, Measurement, calibrate
from accelperf.lpn.library import build
from accelperf.lpn.uncertainty import estimate, profile_threshold

ROOT = Path(__file__).parents[1]
TRAIN = ROOT / "examples/measurements/core_jpeg_train.csv"
TRUE = {"entropy_base": 7, "entropy_per_coeff": 2, "dequant_base": 11, "colour_cycles": 45}
# Each stage of the block pipeline the bottleneck of some stream.
STREAMS = [[64] * 20, [0] * 20, [12] * 20, [30] * 10 + [2] * 10, [1, 2, 3], [50, 0, 50, 0, 50],
           [16] * 8 + [40] * 8, [4] * 30, [64, 0] * 6, [40] * 12, [8, 16, 64] * 4, [2] * 9]


def _measured(noise: float, seed: int) -> list[Measurement]:
    rng = random.Random(seed)
    model = build("block-pipeline", TRUE)
    return [Measurement(f"s{k}", s, simulate(model, s).latency * (1 + rng.gauss(0, noise)))
            for k, s in enumerate(STREAMS)]


def _builder(values):
    return build("block-pipeline", values)


@pytest.mark.parametrize("method", ["profile", "bootstrap", "linear"])
def test_noisy_data_intervals_cover_the_true_delays(method):
    # 1 % measurement noise on three data sets: the 68 % intervals hold the true value in
    # most cases (the benchmark measures the rate over 20), and the noise shows: not every
    # interval is a single value.
    covered, widths = 0, []
    for seed in range(3):
        measured = _measured(0.01, seed)
        fitter = Fitter(_builder, measured)
        rows = np.arange(len(measured))
        values = fitter.fit({n: p.value for n, p in fitter.spec.items()}, list(TRUE), rows)
        found = estimate(method, fitter, values, list(TRUE), rows, list(TRUE))
        assert set(found) == set(TRUE)
        for name, e in found.items():
            assert e.low <= values[name] <= e.high and e.stderr >= 0
            covered += e.low <= TRUE[name] <= e.high
            widths.append(e.high - e.low)
    assert covered >= 0.75 * 12, (method, covered)
    assert max(widths) >= 1


@pytest.mark.parametrize("method", ["profile", "bootstrap"])
def test_noise_free_data_gives_a_single_value_interval(method):
    result = calibrate(_builder, _measured(0.0, 0), uncertainty=method, folds=2)
    assert result.values() == {**result.values(), **TRUE}
    for p in result.parameters:
        assert p.interval == (p.fitted, p.fitted) and p.stderr == 0, p


def test_profile_threshold_is_the_f_bound_at_one_sigma():
    # S_min (1 + F(0.6827; 1, 8) / 8), and F(1, ν) is the square of Student's t at the
    # same two-sided level: t(0.84135; 8) = 1.0666
    from scipy.stats import t
    assert profile_threshold(2.0, 12, 4) == pytest.approx(
        2.0 * (1 + t.ppf(0.5 + 0.6827 / 2, 8) ** 2 / 8), rel=1e-6)
    assert t.ppf(0.5 + 0.6827 / 2, 8) == pytest.approx(1.0666, abs=1e-3)
    assert profile_threshold(0.0, 12, 4) == 0.0


def test_a_confounded_pair_gets_no_interval_and_is_still_named():
    model = build("jpeg-decoder", {"entropy_base": 9})
    measured = [Measurement(f"in{k}", x, simulate(model, x).latency * 1.001)
                for k, x in enumerate([[40] * 6 * k for k in (2, 5, 9, 14)])]
    result = calibrate(lambda v: build("jpeg-decoder", v), measured,
                       fit=["entropy_per_symbol", "entropy_base", "idct_cycles"])
    assert any("cannot tell entropy_per_symbol, entropy_base apart" in w
               for w in result.warnings)
    by_name = {p.name: p for p in result.parameters}
    assert by_name["entropy_per_symbol"].interval is None
    assert by_name["entropy_base"].interval is None
    assert result.to_dict()["parameters"]["entropy_base"]["interval"] is None


def test_fractional_measured_cycles_are_fitted():
    # Averaged counters: the true latency plus half a cycle; the fit still lands on the
    # true delays (the half cycle is the same tiny relative error either side).
    model = build("block-pipeline", TRUE)
    measured = [Measurement(f"s{k}", s, simulate(model, s).latency + 0.5)
                for k, s in enumerate(STREAMS[:6])]
    result = calibrate(_builder, measured, uncertainty="linear", folds=2)
    assert {k: result.values()[k] for k in TRUE} == TRUE
    assert all(r.measured % 1 == 0.5 for r in result.rows)
    assert 0 < result.after.max < 0.01


def test_cli_reads_fractional_cycles_and_prints_intervals(cli, tmp_path):
    model = build("block-pipeline", TRUE)
    lines = ["input,cycles"] + [f'"{json.dumps(s)}",{simulate(model, s).latency + 0.25}'
                                for s in STREAMS[:6]]
    data = tmp_path / "m.csv"
    data.write_text("\n".join(lines) + "\n")
    code, out, err = cli("lpn", "calibrate", "block-pipeline", "--measured", str(data),
                         "--uncertainty", "profile", "--folds", "2", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["uncertainty_method"] == "profile"
    for name, p in result["parameters"].items():
        assert p["fitted"] == TRUE[name]
        lo, hi = p["interval"]
        # half the interval's width, or the linearised one where the interval collapsed
        # to one value on data the fit does not meet exactly (uncertainty.widen)
        assert lo <= p["fitted"] <= hi and p["stderr"] >= (hi - lo) / 2
        assert p["stderr"] > 0
    assert result["inputs"][0]["measured"] % 1 == 0.25
    code, out, _ = cli("lpn", "calibrate", "block-pipeline", "--measured", str(data),
                       "--uncertainty", "linear", "--folds", "2")
    text = " ".join(out.split())                       # the table's title wraps
    assert code == 0 and "68% interval" in text and "uncertainty by linear" in text


@pytest.mark.parametrize("cycles", ["inf", "nan", "-0.5"])
def test_cli_refuses_non_finite_or_negative_cycles(cli, tmp_path, cycles):
    data = tmp_path / "m.csv"
    data.write_text(f'input,cycles\n"[1,2,3]",{cycles}\n')
    code, _, err = cli("lpn", "calibrate", "block-pipeline", "--measured", str(data))
    assert code == 2 and f"cycles = '{cycles}' is invalid" in err
    assert len(err.strip().splitlines()) == 1


def test_cli_refuses_an_unknown_uncertainty_method(cli):
    code, _, err = cli("lpn", "calibrate", "jpeg-decoder", "--measured", str(TRAIN),
                       "--uncertainty", "jackknife")
    assert code == 2 and "jackknife" in err and "Traceback" not in err


def test_calibration_and_interface_accuracy_share_one_error_summary():
    model = build("block-pipeline", TRUE)
    measured = [Measurement("a", [4] * 6, simulate(model, [4] * 6).latency * 1.02)]
    result = calibrate(_builder, measured, fit=["colour_cycles"], uncertainty="linear")
    assert type(result.before) is ErrorSummary
    assert ErrorSummary.of([0.1, -0.3]) == ErrorSummary(0.2, 0.3)

    class Exact:                            # an "interface" that is 10 % slow
        @staticmethod
        def latency(x, phases=None):
            return 1.1 * simulate(model, x).latency
    acc = check(model, Exact, [[4] * 6, [64] * 3])
    assert (acc.mean_error, acc.max_error) == pytest.approx((0.1, 0.1))


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                    reason="no C compiler: the compiled engine is not built")
def test_compiled_engine_takes_parameters_at_run_time():
    from accelperf.lpn.compiled import engine
    from accelperf.lpn.csource import generate
    from accelperf.lpn.inputs import read_jpeg
    image = read_jpeg(ROOT / "examples/images/hopper_64x48_q90_420.jpg")
    a = build("jpeg-decoder")
    b = build("jpeg-decoder", {"idct_cycles": 80, "colour_cycles": 50, "header_base": 58,
                               "header_per_byte": 1, "entropy_per_symbol": 4})
    assert generate(a)[0] == generate(b)[0]           # one library for both vectors
    assert engine(a).path == engine(b).path
    for model in (a, b, a):                           # values are per run, not per load
        assert simulate(model, image, backend="compiled").latency == \
            simulate(model, image).latency
    assert simulate(a, image, backend="compiled").latency != \
        simulate(b, image, backend="compiled").latency


def test_the_fit_gives_the_same_latencies_on_either_engine():
    # The fit runs the compiled engine when it can ("auto"); the Python engine is the
    # fallback without a compiler, and must see the same numbers.
    measured = _measured(0.0, 0)[:6]
    values = {**TRUE, "colour_cycles": 50}
    auto = Fitter(_builder, measured).latencies(values)
    python = Fitter(_builder, measured, backend="python").latencies(values)
    assert auto.tolist() == python.tolist()
