"""The example accelerators and the `accelperf lpn` commands."""

import json

import pytest

from accelperf.lpn import simulate
from accelperf.lpn.library import LIBRARY, build, darwin_latency_formula
from accelperf.lpn.library.fig2 import COMPUTE, LOAD


@pytest.mark.parametrize("name", list(LIBRARY))
def test_every_library_model_runs_its_default_input(name):
    r = simulate(build(name))
    assert r.latency and r.latency > 0 and r.done_tokens > 0


@pytest.mark.parametrize("pair", [
    dict(ref_len=320, query_len=128, steps=180), dict(ref_len=17, query_len=4, steps=1),
    dict(ref_len=1000, query_len=400, steps=999), dict(ref_len=64, query_len=64, steps=70),
])
def test_darwin_latency_equals_the_fig6_formula(pair):
    assert simulate(build("darwin"), pair).latency == darwin_latency_formula(**pair)


def test_darwin_partial_stripe_costs_a_whole_stripe():
    # query 130 = 32 full stripes + 1 partial: 33 stripes of (100 + 6) cycles.
    assert simulate(build("darwin"), dict(ref_len=100, query_len=130, steps=5)).latency == \
        33 * 106 + 6 + 15


def test_fig2_by_hand():
    # load(30 cycles, 2 operands) then compute(12 cycles, 2 operands): fetch 20, dispatch 0,
    # load 20..50, compute waits for the operands: 50..62.
    r = simulate(build("fig2-pipeline"), [(LOAD, 30, 2), (COMPUTE, 12, 2)], trace=True)
    spans = {f.transition: (f.start, f.end) for f in r.trace}
    assert spans["fetch"] == (0, 20) and spans["memory_unit"] == (20, 50)
    assert spans["compute_unit"] == (50, 62) and r.latency == 62


def test_fig2_buffer_of_eight_limits_fetch():
    program = [(COMPUTE, 100, 0)] * 16
    r = simulate(build("fig2-pipeline"), program, trace=True)
    assert r.max_occupancy["instr_buffer"] <= 8
    fetch = [(f.start, f.end) for f in r.trace if f.transition == "fetch"]
    assert fetch[:2] == [(0, 20), (20, 40)] and fetch[2][0] > 40   # third waits for room


def test_block_pipeline_bottleneck_moves_with_compression():
    m = build("block-pipeline")
    assert simulate(m, {"blocks": 100, "nnz": 2}).bottleneck == "colour_convert"
    assert simulate(m, {"blocks": 100, "nnz": 40}).bottleneck == "entropy_decode"
    # Throughput: 40 cycles per block when colour conversion limits, 4 + 3·nnz above.
    assert simulate(m, {"blocks": 400, "nnz": 2}).latency == pytest.approx(400 * 40, rel=0.02)
    assert simulate(m, {"blocks": 400, "nnz": 40}).latency == pytest.approx(400 * 124, rel=0.02)


def test_block_pipeline_input_validation():
    with pytest.raises(Exception, match=r"--input\[1\] \(non-zero coefficients of a block\) = 70 is invalid: a whole number from 0 to 64"):
        simulate(build("block-pipeline"), [3, 70])


def test_credit_link_serialisation_and_credits():
    # One 100-byte message: 1 packet, (24 + 100) / 16 -> 8 cycles, flight 100, receive 2.
    assert simulate(build("credit-link"), [100]).latency == 8 + 100 + 2
    # Many packets: credits (8) and a 100-cycle return limit the rate, not serialisation.
    r = simulate(build("credit-link"), [256 * 64])
    assert r.commits["link.transmit"] == 64 and r.max_occupancy["link.wire"] <= 8


def test_credit_link_composes_in_front_of_the_block_pipeline():
    image = {"blocks": 50, "nnz": 10}
    alone = simulate(build("block-pipeline"), image).latency
    behind = simulate(build("pipeline-over-link"), image).latency
    assert behind > alone and behind - alone < 300     # the link adds its pipeline latency


def test_models_are_independent_objects():
    a, b = build("block-pipeline"), build("block-pipeline")
    assert a is not b and simulate(a, [5] * 10).latency == simulate(b, [5] * 10).latency


# ---------------------------------------------------------------- command line
def test_simulate_json_contract(cli):
    code, out, _ = cli("lpn", "simulate", "block-pipeline", "--json")
    d = json.loads(out)
    assert code == 0
    assert set(d) >= {"latency", "commits", "utilisation", "max_occupancy"}
    assert d["commits"]["idct"] == 192 and 0 < d["utilisation"]["idct"] <= 1


def test_simulate_with_input_and_trace(cli, tmp_path):
    out = tmp_path / "trace.json"
    code, text, _ = cli("lpn", "simulate", "darwin", "--input",
                        '{"ref_len": 100, "query_len": 40, "steps": 10}', "--trace", str(out),
                        "--json")
    assert code == 0 and json.loads(text)["latency"] == darwin_latency_formula(100, 40, 10)
    events = json.loads(out.read_text())["traceEvents"]
    assert any(e["ph"] == "X" and e["name"] == "fill_stripe" for e in events)
    path = tmp_path / "in.json"
    path.write_text(json.dumps([3, 4, 5]))
    code, text, _ = cli("lpn", "simulate", "block-pipeline", "--input", str(path), "--json")
    assert code == 0 and json.loads(text)["done_tokens"] == 3


def test_user_model_file(cli, tmp_path):
    model_file = tmp_path / "mine.py"
    model_file.write_text(
        "from accelperf.lpn import Net\n"
        "def build():\n"
        "    net = Net('mine')\n"
        "    job = net.token_type('Job', 'n')\n"
        "    a, b = net.place('a', job), net.place('b', job)\n"
        "    net.transition('work', inputs={a: 1}, outputs={b: 1}, delay=lambda j: j.n * 2)\n"
        "    net.start, net.done = a, b\n"
        "    net.tokens_from_input = lambda xs: [{'n': x} for x in xs]\n"
        "    net.default_input = [1, 2, 3]\n"
        "    return net\n")
    code, text, _ = cli("lpn", "simulate", f"{model_file}:build", "--json")
    assert code == 0 and json.loads(text)["latency"] == 12
    code, _, err = cli("lpn", "simulate", f"{model_file}:missing")
    assert code == 2 and "has no function 'missing'" in err


def test_show_draws_svg_and_html(cli, tmp_path):
    svg, page = tmp_path / "n.svg", tmp_path / "n.html"
    assert cli("lpn", "show", "fig2-pipeline", "--out", str(svg))[0] == 0
    text = svg.read_text()
    assert text.startswith("<svg") and "instr_buffer" in text and "cap 8" in text
    assert "fetch" in text and "δ=20" in text
    assert cli("lpn", "show", "block-pipeline", "--simulate", "--out", str(page))[0] == 0
    assert "utilisation" in page.read_text() and "bottleneck" in page.read_text()


@pytest.mark.parametrize("argv, words", [
    (["lpn", "simulate", "nope"], "library models are"),
    (["lpn", "simulate", "block-pipeline", "--input", "{not json"], "--input"),
    (["lpn", "simulate", "block-pipeline", "--trace", "t.txt"], "--trace"),
    (["lpn", "simulate", "block-pipeline", "--max-time", "-5"], "--max-time"),
    (["lpn", "show", "block-pipeline", "--out", "x.png"], "--out"),
    (["lpn", "simulate", "darwin", "--input", '{"ref_len": 0, "query_len": 4, "steps": 1}'],
     "a whole number from 1 to"),
])
def test_lpn_bad_input(cli, argv, words):
    code, _, err = cli(*argv)
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1


def test_limit_stops_with_report_and_status_1(cli):
    code, _, err = cli("lpn", "simulate", "block-pipeline", "--max-commits", "10")
    assert code == 1 and "past max_commits = 10" in err and "marking" in err
    assert "colour_convert: needs 1 token in spatial" in err


def test_list_shows_every_models_input_format(cli):
    code, out, _ = cli("lpn", "list")
    assert code == 0
    for name, builder in LIBRARY.items():
        assert name in out and builder().input_format
    assert "instructions [kind" in out          # square brackets survive rich markup


def test_list_into_a_pipe_is_one_plain_line_per_model(cli):
    code, out, _ = cli("lpn", "list")            # capsys: not a terminal, as a pipe
    lines = out.splitlines()
    assert code == 0 and len(lines) == len(LIBRARY)
    assert all(len(line.split("\t")) == 3 for line in lines)
    assert [line.split("\t")[0] for line in lines] == list(LIBRARY)
    assert not any(ch in out for ch in "┃│━")      # no table drawing into a pipe
