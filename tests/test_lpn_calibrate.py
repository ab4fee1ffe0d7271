"""Named delay parameters, `lpn calibrate` and `lpn compare` (issue 21)."""

from __future__ import annotations

import csv
import json
import tomllib
import random
from pathlib import Path

import pytest

from accelperf.errors import ModelError
from accelperf.lpn import Net, simulate
from accelperf.lpn.calibrate import Measurement, align_trace, calibrate
from accelperf.lpn.inputs import read_jpeg
from accelperf.lpn.library import LIBRARY, build
from accelperf.lpn.library.protoacc import DEFAULT_MESSAGE

ROOT = Path(__file__).parents[1]
MEASURED = ROOT / "examples/measurements/core_jpeg_verilator.csv"
TRAIN = ROOT / "examples/measurements/core_jpeg_train.csv"
PARAMS = ROOT / "examples/params/core_jpeg.toml"
TRACES = ROOT / "examples/measurements/core_jpeg_traces"


def _rows(path):
    with path.open(newline="") as fh:
        return list(csv.DictReader(line for line in fh if not line.startswith("#")))


# ---------------------------------------------------------------- parameters
def test_library_models_declare_the_papers_delays_with_the_authors_defaults():
    jpeg = {p.name: p.value for p in build("jpeg-decoder").parameters}
    assert jpeg == {"entropy_per_symbol": 3, "entropy_base": 6, "idct_cycles": 66,
                    "colour_cycles": 65, "header_per_byte": 0, "header_base": 0}
    assert {p.name: p.value for p in build("fig2-pipeline").parameters} == {"fetch_cycles": 20}
    assert {p.name for p in build("block-pipeline").parameters} == {
        "entropy_base", "entropy_per_coeff", "dequant_base", "colour_cycles"}
    assert {p.name: p.value for p in build("menshen").parameters} == {
        "stage_cycles": 15, "deparser_cycles": 6, "subparser_cycles": 3,
        "get_segments_cycles": 3, "fifo_cycles": 1}
    assert {p.name: p.value for p in build("darwin").parameters} == {
        "traceback_step_cycles": 3}
    link = {"link_bytes_per_cycle": 16, "link_header_bytes": 24, "link_flight_cycles": 100,
            "link_receive_cycles": 2}
    assert {p.name: p.value for p in build("credit-link").parameters} == link
    assert {p.name: p.value for p in build("pipeline-over-link").parameters} == {
        **link, "entropy_base": 4, "entropy_per_coeff": 3, "dequant_base": 8,
        "colour_cycles": 40}
    assert {p.name: p.value for p in build("jpeg-decoder-pcie").parameters} == {
        "pcie_process_ns": 7, "pcie_link_latency_ns": 405, "pcie_memory_latency_ns": 90,
        "pcie_tlp_overhead_bytes": 30,
        **{k: v for k, v in jpeg.items() if not k.startswith("header_")}}
    assert {p.name: p.value for p in build("protoacc").parameters} == {
        "mem_latency": 10, "descriptor_fetch_cycles": 2, "submessage_adt_cycles": 2,
        "scalar_load_cycles": 2, "string_header_cycles": 4, "repeated_array_cycles": 3,
        "key_cycles": 1, "end_of_message_cycles": 2, "write_bytes_per_cycle": 16,
        "write_top_end_cycles": 4}
    assert {p.name: p.value for p in build("vta").parameters} == {
        "read_base_cycles": 21, "read_cycles_per_instruction": 2, "dram_base_cycles": 22,
        "inp_cycles_per_element": 2, "wgt_cycles_per_element": 32,
        "acc_cycles_per_element": 8, "sync_cycles": 2, "compute_base_cycles": 6,
        "store_ticks_per_element": 27}


@pytest.mark.parametrize("name", sorted(LIBRARY))
def test_every_library_parameter_is_documented_and_reaches_the_timing(name):
    # Each declared delay must act: a very different value (1000) changes the latency of
    # the model's default input, so no parameter is declared but left unused.
    model = build(name)
    assert model.parameters, f"{name} declares no parameters"
    latency = simulate(model, model.default_input).latency
    for p in model.parameters:
        assert p.doc and p.value == p.default
        changed = simulate(build(name, {p.name: 1000}), model.default_input).latency
        assert changed != latency, f"{name}: {p.name} does not reach the timing"


def test_the_link_keyword_arguments_set_the_parameter_defaults():
    from accelperf.lpn.library import credit_link
    from accelperf.lpn.params import build_with
    model = build_with(lambda: credit_link(flight_cycles=60), {"link_receive_cycles": 7})
    assert model.parameter("link_flight_cycles").default == 60
    assert model.parameter("link_receive_cycles").value == 7
    with pytest.raises(ModelError, match="link_bytes_per_cycle = 0 is invalid: an integer >= 1"):
        build("credit-link", {"link_bytes_per_cycle": 0})


def test_cli_show_lists_the_new_models_parameters(cli):
    for name, some in (("protoacc", "mem_latency"), ("vta", "store_ticks_per_element"),
                       ("credit-link", "link_flight_cycles"),
                       ("jpeg-decoder-pcie", "pcie_link_latency_ns")):
        code, out, _ = cli("lpn", "show", name, "--parameters")
        assert code == 0 and some in out


def test_a_parameter_changes_exactly_the_delays_that_use_it():
    blocks = [60] * 60                       # entropy-bound: 3 cycles per symbol
    base = simulate(build("jpeg-decoder"), blocks).latency
    slower = simulate(build("jpeg-decoder", {"entropy_per_symbol": 4}), blocks).latency
    assert slower - base == 60 * 60          # one more cycle per symbol of every block
    model = build("jpeg-decoder", {"idct_cycles": 70})
    assert model.parameter("idct_cycles").value == 70
    assert model.parameter("idct_cycles").default == 66
    assert {t.name: t.delay.args for t in model.transitions}["idct_y"] == (70, "idct_cycles")


def test_the_header_stage_costs_nothing_by_default_and_its_bytes_when_set():
    image = read_jpeg(ROOT / "examples/images/hopper_64x48_q90_420.jpg")
    assert image.header_bytes == 695        # the RTL testbench counts the same bytes
    plain = simulate(build("jpeg-decoder"), image).latency
    assert plain == simulate(build("jpeg-decoder"), [int(s) for s in image.symbols]).latency
    timed = simulate(build("jpeg-decoder", {"header_per_byte": 1, "header_base": 5}), image)
    assert timed.latency == plain + 695 + 5


def test_user_models_declare_parameters_too():
    def model():
        net = Net("two")
        work = net.token_type("Job", "size")
        a, b = net.place("a", work), net.place("b", work)
        per = net.parameter("per_item", 2, doc="cycles per item")
        net.transition("t", inputs={a: 1}, outputs={b: 1}, delay=lambda x: per * x.size + 1)
        net.start, net.done = a, b
        net.tokens_from_input = lambda sizes: [{"size": s} for s in sizes]
        return net.build()
    from accelperf.lpn.params import build_with
    assert simulate(build_with(model, {}), [3, 4]).latency == 7 + 9
    assert simulate(build_with(model, {"per_item": 5}), [3, 4]).latency == 16 + 21
    with pytest.raises(ModelError, match="declares per_item"):
        build_with(model, {"per_iten": 5})


@pytest.mark.parametrize("params, match", [
    ({"idct": 70}, "declares colour_cycles, entropy_base"),
    ({"idct_cycles": -1}, "idct_cycles = -1 is invalid: an integer >= 0"),
    ({"idct_cycles": 1.5}, "an integer >= 0"),
])
def test_bad_parameter_values_are_one_line_errors(params, match):
    with pytest.raises(ModelError, match=match):
        build("jpeg-decoder", params)


# ---------------------------------------------------------------- the fit
def _synthetic(name, true, inputs):
    model = build(name, true)
    return [Measurement(f"in{k}", x, simulate(model, x).latency) for k, x in enumerate(inputs)]


@pytest.mark.parametrize("name, true, fit", [
    ("block-pipeline", {"entropy_base": 7, "entropy_per_coeff": 2, "dequant_base": 11,
                        "colour_cycles": 45}, None),
    ("fig2-pipeline", {"fetch_cycles": 27}, None),
    ("credit-link", {"link_flight_cycles": 83, "link_receive_cycles": 5},
     ["link_flight_cycles", "link_receive_cycles"]),
    ("protoacc", {"mem_latency": 13, "string_header_cycles": 6},
     ["mem_latency", "string_header_cycles"]),
    ("vta", {"dram_base_cycles": 25, "wgt_cycles_per_element": 30},
     ["dram_base_cycles", "wgt_cycles_per_element"]),
    ("jpeg-decoder", {"entropy_per_symbol": 4, "idct_cycles": 71, "header_base": 30},
     ["entropy_per_symbol", "idct_cycles", "header_base"]),
])
def test_synthetic_perturbed_parameters_are_recovered_exactly(name, true, fit):
    rng = random.Random(5)
    if name == "block-pipeline":
        # Each stage the bottleneck of some input: dense, empty, mixed and short streams.
        # (From random streams alone the fit can stop in a local minimum ~0.1 % off.)
        inputs = [[64] * 20, [0] * 20, [12] * 20, [30] * 10 + [2] * 10, [1, 2, 3],
                  [50, 0, 50, 0, 50]]
    elif name == "fig2-pipeline":
        inputs = [None, [[0, 5, 1], [1, 7, 1], [0, 9, 2], [1, 3, 2]]]
    elif name == "credit-link":
        inputs = [[64], [4096, 256, 100], [64 * 1024], [300] * 20]
    elif name == "protoacc":
        inputs = [DEFAULT_MESSAGE, {"s": {"type": "scalar", "is_repeated": False, "data": [8]}},
                  {"t": {"type": "nonscalar", "is_repeated": True, "data": [40] * 7}},
                  [DEFAULT_MESSAGE] * 3]
    elif name == "vta":
        # Prefixes of the shipped stream that end on a whole cycle (a store takes 27/8
        # cycles, and a measured latency is whole cycles).
        program = (ROOT / "examples/inputs/program.insns").read_text().splitlines()
        inputs = [None, program] + [program[:k] for k in (4, 16, 19, 22, 25)]
    else:
        inputs = [read_jpeg(ROOT / "examples/images" / f) for f in
                  ("hopper_64x48_q50_420.jpg", "hopper_64x48_q90_420.jpg",
                   "present_128x128_q85_420.jpg")]
        inputs += [[rng.randint(1, 63) for _ in range(6 * rng.randint(1, 8))] for _ in range(4)]
    measured = _synthetic(name, true, inputs)
    result = calibrate(lambda values: build(name, values), measured, fit=fit)
    assert {k: result.values()[k] for k in true} == true
    assert result.after.max == 0 and result.before.max > 0
    # Folds are refitted from scratch on fewer inputs, so a fold that cannot pin every
    # delay mispredicts the inputs it holds out (block-pipeline: 6 inputs, 4 delays).
    assert result.cross_validated is not None
    assert result.cross_validated.max >= result.after.max


def test_confounded_and_unused_parameters_are_named():
    # Only the entropy decoder's total per block matters when every block has the same
    # symbols: per-symbol and base cannot be told apart; nothing here has a header.
    measured = _synthetic("jpeg-decoder", {"entropy_base": 9},
                          [[40] * 6 * k for k in (2, 5, 9)])
    result = calibrate(lambda v: build("jpeg-decoder", v), measured,
                       fit=["entropy_per_symbol", "entropy_base", "header_base"])
    text = " ".join(result.warnings)
    assert "cannot tell entropy_per_symbol, entropy_base apart" in text
    assert "no measured input is sensitive to header_base" in text
    assert result.after.max == 0


def test_calibrated_jpeg_decoder_matches_its_rtl_on_the_images_it_was_not_fitted_on():
    # The shipped parameter file was fitted on core_jpeg_train.csv (10 images, 6..780
    # blocks); every other RTL measurement, photos of 21,600 blocks and 16x16 images
    # included, is validation. Issue 21's targets: mean <= 0.5 %, max <= 1.5 %.
    import tomllib
    values = tomllib.loads(PARAMS.read_text())["parameters"]
    model, authors = build("jpeg-decoder", values), build("jpeg-decoder")
    train = {r["input"] for r in _rows(TRAIN)}
    errors, before = [], []
    for row in _rows(MEASURED):
        if row["input"] in train:
            continue
        image = read_jpeg(MEASURED.parent / row["input"])
        cycles = int(row["cycles"])
        errors.append(abs(simulate(model, image, backend="auto").latency - cycles) / cycles)
        before.append(abs(simulate(authors, image, backend="auto").latency - cycles) / cycles)
    assert len(errors) >= 30
    assert sum(errors) / len(errors) <= 0.005 and max(errors) <= 0.015
    assert max(before) > 0.3                 # the authors' model: ~50 % off on 16x16


def test_trace_alignment_finds_the_first_divergence():
    a = align_trace([10, 20, 30, 40], [10, 20, 33, 46, 50], "hw", "lpn")
    assert a.first_divergence == 2 and a.first_change == 2 and a.gaps == (0, 0, 3, 6)
    assert "first diverges at event 2 by +3 cycles" in a.summary()
    assert "counts differ" in a.summary()
    assert align_trace([5, 6], [5, 6]).first_divergence is None


# ---------------------------------------------------------------- the commands
def test_cli_calibrate_writes_params_that_simulate_reads(cli, tmp_path):
    from shared_fits import reusing_calibrations
    out = tmp_path / "p.toml"
    with reusing_calibrations():        # the README's and the calibration page's run
        code, stdout, _ = cli("lpn", "calibrate", "jpeg-decoder", "--measured", str(TRAIN),
                              "--out", str(out), "--json")
    assert code == 0
    result = json.loads(stdout)
    assert set(result) >= {"parameters", "before", "after", "cross_validated", "worst"}
    assert result["folds"] == 5
    assert set(result["parameters"]["idct_cycles"]) >= {"default", "fitted", "stderr"}
    assert result["after"]["max"] < 0.01 < result["before"]["max"]
    # The IDCT and colour delays are hard to separate on these images but the Jacobian
    # has full rank: "poorly determined" (wide intervals), not "cannot tell apart".
    assert all(p["identified"] for p in result["parameters"].values())
    assert not any("cannot tell" in w for w in result["warnings"])
    assert "coverage" in tomllib.loads(out.read_text())
    code, stdout, _ = cli("lpn", "simulate", "jpeg-decoder", "--params", str(out), "--input",
                          str(ROOT / "examples/images/hopper_64x48_q90_420.jpg"), "--json")
    assert code == 0
    assert abs(json.loads(stdout)["latency"] - 8444) / 8444 < 0.01      # RTL: 8444 cycles
    code, stdout, _ = cli("lpn", "show", "jpeg-decoder", "--params", str(out),
                          "--param", "idct_cycles=70", "--parameters")
    assert code == 0 and "idct_cycles" in stdout and "70" in stdout


def test_the_default_folds_on_fewer_inputs_leave_one_out_and_say_so(cli, tmp_path):
    # the default 5 on 4 inputs is not refused, as a typed --folds 5 is
    data = tmp_path / "m.csv"
    data.write_text("input,cycles\n" + "".join(f'"[{n},{n},{n},{n},{n},{n}]",{c}\n' for n, c
                                               in ((1, 5000), (2, 5200), (3, 5400), (9, 6500))))
    args = ("lpn", "calibrate", "jpeg-decoder", "--measured", str(data), "--fit",
            "idct_cycles", "--uncertainty", "linear")
    code, stdout, err = cli(*args, "--json")
    assert code == 0, err
    assert json.loads(stdout)["folds"] == 4
    code, stdout, err = cli(*args)
    assert code == 0 and "(4 folds, each refitted" in stdout, stdout
    code, _, err = cli(*args, "--folds", "5")
    assert code == 2 and "--folds = 5 is invalid: between 2 and the number of measured " \
                         "inputs (4)" in err, err


def test_cli_compare_table_plot_and_trace(cli, tmp_path):
    fig = tmp_path / "errors.svg"
    trace = TRACES / "hopper_64x48_q90_420.csv"
    code, stdout, _ = cli("lpn", "compare", "jpeg-decoder", "--params", str(PARAMS),
                          "--measured", str(TRAIN), "--out", str(fig), "--trace", str(trace),
                          "--trace-input", "../images/hopper_64x48_q90_420.jpg",
                          "--transition", "colour_convert", "--json")
    assert code == 0 and fig.read_text().startswith("<?xml")
    result = json.loads(stdout)
    assert len(result["inputs"]) == len(_rows(TRAIN)) and result["error"]["max"] < 0.01
    hardware = [int(r["cycle"]) for r in _rows(trace) if r["event"] == "colour_convert"]
    assert result["trace"]["hardware_events"] == len(hardware)
    assert result["trace"]["model_events"] == 48             # 64x48: 12 MCUs x 4 blocks
    assert len(result["trace"]["gaps"]) == min(len(hardware), 48)


def test_params_reach_interface_classes_and_logca(cli):
    code, out, _ = cli("lpn", "interface", "fig2-pipeline", "--param", "fetch_cycles=40",
                       "--json")
    assert code == 0 and "40" in out
    code, out0, _ = cli("logca", "from-lpn", "jpeg-decoder-pcie", "--host-C", "12.5",
                        "--sizes", "4KiB..64KiB", "--json")
    fitted = tomllib.loads(PARAMS.read_text())["parameters"]    # the PCIe model has no
    decoder = [f"{k}={v}" for k, v in fitted.items() if not k.startswith("header_")]  # header
    code1, out1, _ = cli("logca", "from-lpn", "jpeg-decoder-pcie", "--host-C", "12.5",
                         "--sizes", "4KiB..64KiB", *[a for kv in decoder for a in ("--param", kv)],
                         "--json")
    assert code == code1 == 0
    t1 = lambda out: [p["t1_simulated"] for p in json.loads(out)["points"]]
    assert all(s > f for s, f in zip(t1(out1), t1(out0)))   # the RTL's slower back end
    code, _, err = cli("lpn", "classes", "jpeg-decoder", "--param", "idct=1")
    assert code == 2 and "declares" in err


def _bad_csv(tmp_path, text):
    path = tmp_path / "m.csv"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("case, args, match", [
    ("no columns", lambda t: ["--measured", _bad_csv(t, "file,time\na.jpg,3\n")],
     "columns input,cycles"),
    ("psi fails", lambda t: ["--measured", _bad_csv(t, 'input,cycles\n"[1,1,1]",30\n')],
     "line 2"),
    # the file's line, comments counted; a row short of a field says so (not "None")
    ("short row", lambda t: ["--measured", _bad_csv(
        t, '# from the RTL\ninput,cycles\n"[1,1,1,1,1,1]",700\n"[1,1,1,1,1,1]"\n')],
     "--measured line 4 ([1,1,1,1,1,1]) is invalid: it has 1 field(s), the header has 2 "
     "(input, cycles)"),
    ("long row", lambda t: ["--measured", _bad_csv(t, 'input,cycles\n"[1,1,1,1,1,1]",700,5\n')],
     "--measured line 2 ([1,1,1,1,1,1]) is invalid: it has 3 field(s), the header has 2"),
    ("non-positive", lambda t: ["--measured", _bad_csv(t, 'input,cycles\n"[1,1,1,1,1,1]",0\n')],
     "cycles = '0' is invalid"),
    ("non-numeric", lambda t: ["--measured", _bad_csv(t, 'input,cycles\n"[1,1,1,1,1,1]",x\n')],
     "cycles = 'x' is invalid"),
    ("too few rows", lambda t: ["--measured", _bad_csv(t, 'input,cycles\n"[1,1,1,1,1,1]",700\n')],
     "1 row(s) for 6 parameters"),
    ("unknown --fit", lambda t: ["--measured", str(TRAIN), "--fit", "idct"], "--fit = 'idct'"),
    ("unknown --param", lambda t: ["--measured", str(TRAIN), "--param", "idct=3"],
     "'idct' is invalid"),
    ("unknown in toml", lambda t: ["--measured", str(TRAIN), "--params",
                                   _bad_csv(t, "[parameters]\nidct = 3\n")], "'idct' is invalid"),
    ("negative delay", lambda t: ["--measured", str(TRAIN), "--param", "idct_cycles=-4"],
     "idct_cycles = -4 is invalid"),
    ("bad toml", lambda t: ["--measured", str(TRAIN), "--params", _bad_csv(t, "x = = 3")],
     "not valid TOML"),
])
def test_calibrate_bad_input_is_one_line_exit_2_nothing_written(cli, tmp_path, case, args,
                                                                match):
    out = tmp_path / "p.toml"
    code, stdout, err = cli("lpn", "calibrate", "jpeg-decoder", *args(tmp_path),
                            "--out", str(out))
    assert code == 2, (case, err)
    assert match in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()


@pytest.mark.parametrize("args, match", [
    (["--trace", str(TRACES / "hopper_64x48_q90_420.csv")], "--trace and --transition go"),
    (["--trace", str(TRACES / "hopper_64x48_q90_420.csv"), "--transition", "idct"],
     "--transition = 'idct' is invalid"),
    (["--trace", str(TRACES / "hopper_64x48_q90_420.csv"), "--transition", "idct_y",
      "--event", "pixels"], "no 'pixels' events"),
    (["--trace", str(TRACES / "hopper_64x48_q90_420.csv"), "--transition", "idct_y",
      "--trace-input", "photo.jpg"], "--trace-input = 'photo.jpg' is invalid"),
    (["--out", "errors.pdf"], "written as .png or .svg"),
])
def test_compare_bad_input_is_one_line_exit_2(cli, args, match):
    code, _, err = cli("lpn", "compare", "jpeg-decoder", "--measured", str(TRAIN), *args)
    assert code == 2 and match in err and len(err.strip().splitlines()) == 1, err


def test_a_trace_paired_with_another_input_exits_1(cli):
    # a wrong --trace-input printed "counts differ ... first diverges" and exited 0
    args = ("lpn", "compare", "jpeg-decoder", "--params", str(PARAMS), "--measured",
            str(TRAIN), "--trace", str(TRACES / "astronaut_128x128_q90_420.csv"),
            "--trace-input", "../images/hopper_64x48_q90_420.jpg", "--transition", "idct_y")
    code, out, err = cli(*args)
    assert code == 1 and "counts differ" in out
    assert "was the trace taken on that input (--trace-input)?" in err
    code, out, _ = cli(*args, "--json")
    assert code == 1 and json.loads(out)["trace"]["hardware_events"] != 48
    # the right input by another path to the same file is the row
    same = str((TRAIN.parent / "../images/hopper_64x48_q90_420.jpg").resolve())
    code, _, err = cli("lpn", "compare", "jpeg-decoder", "--params", str(PARAMS),
                       "--measured", str(TRAIN), "--trace",
                       str(TRACES / "hopper_64x48_q90_420.csv"), "--trace-input", same,
                       "--transition", "idct_y")
    assert code == 0, err


def test_no_cross_validation_says_why(cli, tmp_path):
    # "— (too few inputs)" with 6 inputs and 6 parameters read as a contradiction of the
    # docs' "fewer than 5 inputs: one per fold"
    data = tmp_path / "m.csv"
    data.write_text("input,cycles\n" + "".join(f'"[{n},{n},{n},{n},{n},{n}]",{c}\n' for n, c
                                               in ((1, 5000), (2, 5200), (3, 5400))))
    code, stdout, err = cli("lpn", "calibrate", "jpeg-decoder", "--measured", str(data),
                            "--fit", "idct_cycles,entropy_base,colour_cycles",
                            "--uncertainty", "linear")
    assert code in (0, 1), err
    assert "cross-validated: — (too few inputs: leaving a fold out would leave fewer " \
           "inputs to fit than parameters to fit" in " ".join(stdout.split())
