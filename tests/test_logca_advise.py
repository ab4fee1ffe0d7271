"""`logca advise`: the answer at one size, checked against direct evaluation of the model."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelperf import LogCA
from accelperf.logca import preset
from accelperf.logca.advise import advise, binding_bound, rank
from accelperf.logca.metrics import bound_reach

log_uniform = lambda lo, hi: st.floats(math.log10(lo), math.log10(hi)).map(lambda e: 10.0**e)


def improved_speedup(model, parameter, factor, g):
    value = getattr(model, parameter)
    changed = value / factor if parameter in "Lo" else value * factor
    return float(model.with_parameters(**{parameter: changed}).speedup(g))


@settings(max_examples=150, deadline=None)
@given(L=log_uniform(1e-2, 1e4), o=log_uniform(1, 1e8), C=log_uniform(0.1, 1e4),
       A=log_uniform(1.1, 300), beta=st.floats(0.3, 2.0), dependent=st.booleans(),
       at=log_uniform(16, 2**30))
def test_advice_matches_direct_evaluation(L, o, C, A, beta, dependent, at):
    m = LogCA(L=L, o=o, C=C, A=A, beta=beta, latency="dependent" if dependent else "independent")
    a = advise(m, at)
    s = float(m.speedup(at))
    assert a.speedup == pytest.approx(s, rel=1e-12) and a.pays == (s > 1)
    for p in "LoCA":
        gain = improved_speedup(m, p, 10, at) / s - 1
        assert a.gains[p] == pytest.approx(gain, rel=1e-9, abs=1e-12)
        if abs(gain - 0.2) > 1e-9:
            assert (p in a.limited_by) == (gain >= 0.2)
    assert list(a.limited_by) == sorted(a.limited_by, key=lambda p: -a.gains[p])
    host = float(m.T0(at))
    bounds = [m.A, host / m.o, host / float(m.latency_time(at))]
    assert a.bound_value == pytest.approx(min(bounds)) and s <= a.bound_value * (1 + 1e-12)
    if a.break_even is not None and 0 < a.break_even < 1e100:
        assert float(m.speedup(a.break_even)) == pytest.approx(1.0, rel=1e-9)
        assert float(m.speedup(a.break_even * 1.01)) > 1


def test_ultrasparc_t2_at_4KiB_by_hand():
    # speedup = 90·4096^1.01 / (30500 + 90·4096^1.01/19); 4096^1.01 = 4096·e^(0.01·ln 4096)
    m = preset("ultrasparc-t2", "aes")
    host = 90 * 4096 ** 1.01
    a = advise(m, 4096)
    assert a.speedup == pytest.approx(host / (30500 + host / 19), rel=1e-12)
    assert a.pays and a.bound == "overhead" and a.bound_value == pytest.approx(host / 29000)
    assert a.limited_by == ("C", "o", "A") and a.break_even == pytest.approx(337.486, rel=1e-5)


def test_bound_names():
    m = preset("sandy-bridge", "aes")       # on-chip: the acceleration binds early
    assert binding_bound(m, 4096)[0] == "acceleration"
    dep = LogCA(L=2, o=10, C=30, A=60, beta=0.8, latency="dependent")
    assert binding_bound(dep, 2**20)[0] == "latency"        # eq. 9's C/L·g^(β−1)
    assert binding_bound(dep, 2**20)[1] == pytest.approx(15 * (2**20) ** -0.2)


def test_never_and_everywhere():
    never = advise(LogCA(L=10, o=100, C=9, A=50, beta=0.8, latency="dependent"), 4096)
    assert not never.pays and never.break_even is None and "never reaches" in \
        never.break_even_reason
    free = advise(LogCA(L=0, o=0, C=5, A=3), 64)
    assert free.pays and free.break_even == 0.0
    slow = advise(LogCA(L=1, o=1, C=1, A=0.5), 64)
    assert not slow.pays and slow.break_even is None and "never faster" in slow.break_even_reason


def test_rank_orders_by_speedup():
    models = [preset(d, "aes") for d in ("ultrasparc-t2", "sparc-t4-instr", "discrete-gpu")]
    ranked = rank(models, 4096)
    assert [a.model.label for a in ranked] == ["sparc-t4-instr/aes", "ultrasparc-t2/aes",
                                               "discrete-gpu/aes"]
    assert [a.speedup for a in ranked] == sorted((float(m.speedup(4096)) for m in models),
                                                 reverse=True)


def test_advise_json_single_and_ranked(cli):
    code, out, _ = cli("logca", "advise", "--preset", "ultrasparc-t2", "--kernel", "aes",
                       "--at", "4KiB", "--json")
    d = json.loads(out)
    assert code == 0 and {"at", "speedup", "pays", "bound", "limited_by", "break_even"} <= set(d)
    assert d["at"] == 4096 and d["limited_by"] == ["C", "o", "A"]
    assert d["speedup"] == pytest.approx(float(preset("ultrasparc-t2", "aes").speedup(4096)))
    code, out, _ = cli("logca", "advise", "--preset", "ultrasparc-t2", "--preset",
                       "sparc-t4-instr", "--kernel", "aes", "--at", "4KiB", "--json")
    rows = json.loads(out)
    assert code == 0 and isinstance(rows, list) and [r["rank"] for r in rows] == [1, 2]
    assert rows[0]["model"] == "sparc-t4-instr/aes" and rows[0]["speedup"] > rows[1]["speedup"]


def test_advise_human_output(cli):
    code, out, _ = cli("logca", "advise", "--preset", "discrete-gpu", "--kernel", "aes",
                       "--at", "4KiB")
    text = " ".join(out.split())                 # rich wraps at the terminal's width
    assert code == 0 and "never in" in text and "overhead" in text and "beyond 2^64" in text


# ---------------------------------------------------------------- bounds and times
def test_bound_reach_says_when_the_limit_is_out_of_reach(cli):
    gpu = preset("discrete-gpu", "aes")
    r = bound_reach(gpu)
    assert not r.practical and r.speedup_at_practical < 0.1
    assert "beyond any practical size" in r.describe()
    t2 = bound_reach(preset("ultrasparc-t2", "aes"))
    assert t2.practical and float(preset("ultrasparc-t2", "aes").speedup(t2.granularity)) == \
        pytest.approx(0.9 * 19, rel=1e-9)
    code, out, _ = cli("logca", "bounds", "--preset", "discrete-gpu", "--kernel", "aes",
                       "--json")
    assert code == 0 and json.loads(out)["reach"]["practical"] is False


def test_times_json_is_eq_1(cli):
    m = preset("apu", "fft")
    code, out, _ = cli("logca", "times", "--preset", "apu", "--kernel", "fft", "--json")
    d = json.loads(out)
    g = np.array(d["granularity_bytes"])
    assert code == 0 and d["unit"] == "cycles" and g.size == 22
    assert np.allclose(d["T0"], 290 * g**1.2, rtol=1e-12)
    assert np.allclose(d["T1"], 4e8 + 15 * g + 290 * g**1.2 / 7, rtol=1e-12)
    assert np.allclose(np.array(d["T0"]) / np.array(d["T1"]), m.speedup(g), rtol=1e-12)


def test_times_figure(cli, tmp_path):
    path = tmp_path / "times.svg"
    code, _, err = cli("logca", "times", "--preset", "ultrasparc-t2", "--kernel", "aes",
                       "--out", str(path))
    assert code == 0 and path.read_text().startswith("<?xml") and "wrote" in err
