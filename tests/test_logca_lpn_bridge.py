"""LPN → LogCA: fitting L, o and A to simulated offload latencies."""

import json

import numpy as np
import pytest

from accelperf import LogCA, ModelError
from accelperf.logca.lpn_bridge import (BLOCK_BYTES, fit_from_latency, host_from_times,
                                        mapping)

SIZES = [64, 256, 1024, 4096, 2**14, 2**16, 2**20]


@pytest.mark.parametrize("latency", ["independent", "dependent"])
def test_recovers_a_known_model_with_its_transfer_run(latency):
    true = LogCA(L=0.5 if latency == "dependent" else 900, o=300, C=12.5, A=25, beta=1.0,
                 latency=latency)
    r = fit_from_latency(lambda g: float(true.T1(g)), SIZES, host_C=12.5,
                         transfer_at=lambda g: 40 + float(true.latency_time(g)))
    assert r.dependent == (latency == "dependent")
    assert r.model.A == pytest.approx(25, rel=1e-9) and r.max_error < 1e-9
    if latency == "dependent":      # o is the whole fixed cost, fitted from T1
        assert r.model.L == pytest.approx(0.5) and r.model.o == pytest.approx(300, rel=1e-9)
        assert "grows with g" in r.dependent_reason
    else:                           # a constant transfer is all L (its 40 cycles included)
        assert r.model.L == pytest.approx(940) and r.model.o + r.model.L == pytest.approx(1200)
        assert "does not grow" in r.dependent_reason


def test_sub_linear_host_tells_the_latency_kinds_apart_without_a_transfer_run():
    true = LogCA(L=2.0, o=500, C=40, A=20, beta=0.8, latency="dependent")
    r = fit_from_latency(lambda g: float(true.T1(g)), SIZES, host_C=40, host_beta=0.8)
    assert r.dependent and r.model.L == pytest.approx(2.0, rel=1e-6)
    assert r.errors["dependent"] < 1e-9 < r.errors["independent"]


def test_beta_one_without_transfer_says_it_cannot_tell():
    r = fit_from_latency(lambda g: 262 + 1.0 * g, SIZES, host_C=12.5)
    assert "cannot be told apart" in r.dependent_reason and r.max_error < 1e-9


def test_bad_simulations_are_named():
    with pytest.raises(ModelError, match="produced no end-to-end latency"):
        fit_from_latency(lambda g: None, SIZES, host_C=1)
    with pytest.raises(ModelError, match="finite number of cycles"):
        fit_from_latency(lambda g: -5.0, SIZES, host_C=1)
    with pytest.raises(ModelError, match="no compute term"):
        fit_from_latency(lambda g: 100.0 + 0 * g, SIZES, host_C=1)
    with pytest.raises(ModelError, match="at least 3 distinct"):
        fit_from_latency(lambda g: g, [64, 64, 128], host_C=1)
    with pytest.raises(ModelError, match="host-C"):
        fit_from_latency(lambda g: g, SIZES, host_C=float("nan"))


def test_host_from_times_is_the_power_law():
    g = np.array(SIZES, float)
    C, beta = host_from_times(g, 3.0 * g**1.2)
    assert C == pytest.approx(3.0) and beta == pytest.approx(1.2)


def test_jpeg_mapping_is_whole_blocks():
    mp = mapping("pipeline-over-link")
    image, actual = mp.input_at(1000)
    assert image == {"blocks": 25, "nnz": 12} and actual == 25 * BLOCK_BYTES
    assert mp.input_at(1)[0]["blocks"] == 1
    assert mp.transfer == "credit-link" and mp.transfer_input_at(1000) == [40] * 25
    with pytest.raises(ModelError, match="mapping exists for"):
        mapping("darwin")


def test_crossings_outside_the_simulated_sizes_are_called_extrapolations():
    # o = 300, C = 12.5, A = 25 (independent latency): g1 = o / (C (1 - 1/A)) = 25 B,
    # below the smallest size simulated; g_A/2 = A o / C = 600 B, inside
    t1 = lambda g: 300 + 12.5 * g / 25
    low = fit_from_latency(t1, [64, 1024, 2**14], host_C=12.5)
    assert low.model.g1().root == pytest.approx(25, rel=1e-6)
    assert low.model.g_half().root == pytest.approx(600, rel=1e-6)
    assert len(low.warnings) == 1 and "g1 = 25 B lies outside the simulated range 64 B.." \
        in low.warnings[0] and "extrapolation" in low.warnings[0]
    assert low.to_dict()["warnings"] == list(low.warnings) and "1 warning(s)" in repr(low)
    inside = fit_from_latency(t1, [16, 64, 1024, 2**14], host_C=12.5)
    assert inside.warnings == ()


def test_from_lpn_prints_the_extrapolation_warning(cli):
    # pipeline-over-link from 80 B: g1 is about 23 B, below the smallest size simulated
    code, out, _ = cli("logca", "from-lpn", "pipeline-over-link", "--sizes", "64B..4KiB",
                       "--host-C", "12.5")
    assert code == 0 and "warning: the model's g1 = " in out and "extrapolation" in out


def test_a_net_without_a_mapping_is_pointed_to_fit_from_latency(cli):
    code, _, err = cli("logca", "from-lpn", "darwin", "--host-C", "12.5")
    assert code == 2 and "mapping exists for" in err and "fit_from_latency" in err
    assert len(err.strip().splitlines()) == 1


def test_from_lpn_matches_the_simulator(cli):
    from accelperf.lpn import simulate
    from accelperf.lpn.loader import load_model
    code, out, _ = cli("logca", "from-lpn", "pipeline-over-link", "--sizes", "64B..16KiB",
                       "--host-C", "12.5", "--json")
    d = json.loads(out)
    assert code == 0 and d["granularity_dependent"] is True and d["unit"] == "cycles"
    assert d["transfer_model"] == "credit-link" and len(d["points"]) == 9
    model = load_model("pipeline-over-link")
    for p in d["points"][::4]:          # the points are the simulator's own latencies
        blocks = int(p["granularity"]) // BLOCK_BYTES
        assert p["t1_simulated"] == simulate(model, {"blocks": blocks, "nnz": 12}).latency
    # the decoder is pipelined behind the link: T1 is linear in g and the fit reproduces it
    assert d["fit_error"]["t1_max"] < 1e-6
    L, o, A = (d["parameters"][k] for k in ("L", "o", "A"))
    for p in d["points"]:
        g = p["granularity"]
        assert o + L * g + 12.5 * g / A == pytest.approx(p["t1_simulated"], rel=1e-6)


def test_from_lpn_figure_and_host_csv(cli, tmp_path):
    host = tmp_path / "host.csv"
    host.write_text("granularity_bytes,host_cycles\n" + "".join(
        f"{g},{12.5 * g}\n" for g in (64, 1024, 16384)))
    fig = tmp_path / "lpn.png"
    code, out, err = cli("logca", "from-lpn", "pipeline-over-link", "--sizes", "64B,1KiB,16KiB",
                         "--host-csv", str(host), "--no-transfer", "--out", str(fig))
    assert code == 0 and fig.read_bytes()[:4] == b"\x89PNG"
    assert "cannot be told apart" in " ".join(out.split())
    code, _, err = cli("logca", "from-lpn", "pipeline-over-link", "--sizes", "64B,1KiB,16KiB",
                       "--host-csv", str(host), "--host-beta", "2.5")
    assert code == 2 and "--host-beta = 2.5 is not used with --host-csv" in err


def test_link_parameters_reach_the_link_alone(cli):
    """L is read off the link-alone model: a link given as 1 B/cycle with --param must be
    that slow there too (it was built with its defaults, 0.49 cycles/B to 1 KiB, and the slower link
    was put into o and A)."""
    runs = []
    for extra in ((), ("--param", "link_bytes_per_cycle=1")):
        code, out, err = cli("logca", "from-lpn", "pipeline-over-link", "--sizes",
                             "64B..1KiB", "--host-C", "10", *extra, "--json")
        assert code == 0, err
        runs.append(json.loads(out)["parameters"]["L"])
    default, slow = runs
    assert default == pytest.approx(0.488, rel=1e-3) and slow > 2 * default


def test_jpeg_decoder_behind_pcie(cli):
    # the OSDI'24 decoder reading a synthetic 4:2:0 JPEG over PCIe Gen3 x16
    from accelperf.lpn import simulate
    from accelperf.lpn.loader import load_model
    mp = mapping("jpeg-decoder-pcie")
    image, scan = mp.input_at(4096)
    assert image.chroma == "4:2:0" and image.blocks % 6 == 0 and mp.transfer is None
    assert scan == pytest.approx(image.blocks * 10.54, abs=1) and image.size == 692 + scan + 2
    code, out, _ = cli("logca", "from-lpn", "jpeg-decoder-pcie", "--sizes", "1KiB..64KiB",
                       "--host-C", "100", "--json")
    d = json.loads(out)
    assert code == 0 and len(d["points"]) == 7
    model = load_model("jpeg-decoder-pcie")
    first = d["points"][0]
    assert first["t1_simulated"] == simulate(model, mapping("jpeg-decoder-pcie").input_at(
        1024)[0]).latency
    # the back end decodes an MCU every 526 cycles whatever the link: T1 is nearly linear in
    # the scan's bytes, and LogCA follows it to a fraction of a percent
    assert d["fit_error"]["t1_max"] < 0.01
    assert "cannot be told apart" in d["reason"]
