"""A new user's own model, built from the docs alone (a DMA + compute engine whose requests
of N bytes make ceil(N/64) beats): what the commands must do with it, found by that user."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

ENGINE = '''
from accelperf.errors import invalid
from accelperf.lpn import Net, Out


def engine(reader=None, params=None):
    net = Net("dma-compute", params=params,
              input_format="a JSON list of request sizes in bytes")
    dma_cpb = net.parameter("dma_cycles_per_beat", 1, doc="DMA cycles per 64-B beat")
    comp_cpb = net.parameter("compute_cycles_per_beat", 3, doc="compute cycles per beat")
    wb = net.parameter("writeback_cycles", 10, doc="writeback cycles per request")
    req = net.token_type("Request", "bytes")
    beat = net.token_type("Beat", "beats")
    requests = net.place("requests", req)
    to_read = net.place("to_read", beat)
    buf = net.place("buf", beat, capacity=6)
    computed = net.place("computed", beat)
    done = net.place("done", req)
    net.transition("dma_issue", inputs={requests: 1}, delay=0, outputs={
        to_read: Out(lambda requests: (requests.bytes + 63) // 64,
                     props=lambda requests: {"beats": (requests.bytes + 63) // 64})})
    net.transition("dma", inputs={to_read: 1}, outputs={buf: 1}, delay=dma_cpb)
    net.transition("compute", inputs={buf: 1}, outputs={computed: 1}, delay=comp_cpb)
    net.transition("writeback", inputs={computed: lambda computed: computed.beats},
                   outputs={done: Out(1, props={"bytes": 0})}, delay=wb)
    net.start, net.done = requests, done

    def psi(sizes):
        if not isinstance(sizes, list) or not sizes:
            raise invalid("requests", sizes, "a list of at least one size in bytes")
        for b in sizes:
            if isinstance(b, bool) or not isinstance(b, int) or not 1 <= b <= 2**20:
                raise invalid("request size", b, "a whole number of bytes from 1 to 2**20")
        return [{"bytes": b} for b in sizes]

    net.tokens_from_input = psi
    if reader is not None:
        from accelperf.lpn.declared import Declared
        net.declared = Declared(reader=reader)
    net.default_input = [256, 64, 1024]
    return net.build()


def psi_list(sizes):
    return [{"bytes": b} for b in sizes]


def psi_dict(sizes):
    return {"requests": [{"bytes": b} for b in sizes]}


def engine_list_reader(params=None):
    return engine(reader=psi_list, params=params)


def engine_dict_reader(params=None):
    return engine(reader=psi_dict, params=params)
'''

STREAM = '''input = "list(requests.bytes)"

[places.requests]
count = [1, 1000]
count_range = "stream"
by_token = true
properties = { bytes = [1, 4096] }
'''

ONE = '''input = "list(requests.bytes)"

[places.requests]
count = 1
properties = { bytes = [1, 4096] }
'''


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("user")
    (d / "dma_engine.py").write_text(ENGINE)
    (d / "stream.toml").write_text(STREAM)
    (d / "one.toml").write_text(ONE)
    (d / "zero.toml").write_text(STREAM.replace("by_token = true\n", "")
                                 .replace("[1, 4096]", "[0, 1024]"))
    return d


def _engine(files):
    spec = importlib.util.spec_from_file_location("user_dma_engine", files / "dma_engine.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.engine()


# ---------------------------------------------------------------- 1: the default space
def test_the_default_space_starts_where_a_token_can_finish(files):
    """A request of 0 bytes makes no beats and never reaches done: the default space (0 to
    the example's largest value) once held it, and the interface crashed on it."""
    from accelperf.lpn.analysis.interfaces.token_stream import StreamInterface, interface_for
    from accelperf.lpn.analysis.space import default_space
    model = _engine(files)
    space = default_space(model)
    assert space.place("requests").properties["bytes"] == (1, 1024)
    assert isinstance(interface_for(model, space), StreamInterface)


def test_a_space_holding_a_token_that_never_finishes_is_refused_in_one_line(cli, files):
    code, out, err = cli("lpn", "interface", f"{files}/dma_engine.py:engine",
                         "--space", str(files / "zero.toml"))
    assert code == 2 and "internal error" not in err
    assert f"{files / 'zero.toml'}" in err and "never reaches the done place 'done'" in err
    assert "InputSpace(" not in err


# ---------------------------------------------------------------- 2, 3: --check's input
@pytest.mark.parametrize("given", ['[64]', '{"requests": [{"bytes": 64}]}'])
def test_check_reads_the_input_through_the_models_own_psi(cli, files, tmp_path, given):
    """Without a standalone reader the stream module refused `[64]`; tokens were refused
    by Ψ before the simulation, which takes them."""
    out_file = tmp_path / "iface.py"
    code, out, err = cli("lpn", "interface", f"{files}/dma_engine.py:engine", "--space",
                         str(files / "stream.toml"), "--out", str(out_file),
                         "--check", given, "--json")
    assert code == 0, err
    assert json.loads(out)["inputs"][0]["simulated"] == 14
    run = subprocess.run([sys.executable, str(out_file), "[64, 4096]"],
                         capture_output=True, text=True, cwd=files.parent)
    assert run.returncode == 0 and float(run.stdout) == 206


@pytest.mark.parametrize("space", ["stream.toml", "one.toml"])
@pytest.mark.parametrize("reader", ["engine_list_reader", "engine_dict_reader"])
def test_a_standalone_reader_may_give_either_of_psis_shapes(cli, files, tmp_path, space,
                                                             reader):
    out_file = tmp_path / "iface.py"
    code, out, err = cli("lpn", "interface", f"{files}/dma_engine.py:{reader}", "--space",
                         str(files / space), "--out", str(out_file), "--check", "[64]",
                         "--json")
    assert code == 0, err
    run = subprocess.run([sys.executable, "-S", str(out_file), "[64]"],   # no accelperf
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "14" in run.stdout


# ---------------------------------------------------------------- 4: calibrate
def test_a_fit_that_predicts_nothing_it_did_not_see_is_marked(cli, files, tmp_path):
    """Physically impossible data (a 4096-byte request 1 cycle slower than a 64-byte
    one): the fit bends to 15 % on the inputs it fitted and is 1255 % off on each one
    held out. It once exited 0 without a word and wrote a plain parameter file."""
    data = tmp_path / "m.csv"
    data.write_text('input,cycles\n[64],19\n[4096],20\n"[64,64]",32\n"[1,1,1,1]",60\n')
    out = tmp_path / "p.toml"
    code, stdout, err = cli("lpn", "calibrate", f"{files}/dma_engine.py:engine",
                            "--measured", str(data), "--out", str(out))
    assert code == 0, err
    warning = "the fit does not predict inputs it was not fitted on: cross-validated max"
    assert warning in stdout + err
    assert out.read_text().startswith(f"# WARNING: not a calibration to use: {warning}")


def test_unpredictive_is_the_refusal_limit_and_far_above_the_fit():
    from accelperf.lpn.analysis.interfaces.accuracy import ErrorSummary
    from accelperf.lpn.calibrate import unpredictive
    fit = ErrorSummary.of([0.15, -0.10])
    assert unpredictive(ErrorSummary.of([12.55, 0.2]), fit, ()) is not None
    assert unpredictive(ErrorSummary.of([0.24, 0.1]), fit, ()) is None   # within 25 %
    assert unpredictive(ErrorSummary.of([0.28]), ErrorSummary.of([0.2]), ()) is None
    assert unpredictive(None, fit, ()) is None


# ---------------------------------------------------------------- 7: an undecided bound
@pytest.mark.parametrize("which, said", [("max", "max latency ≥ 146 cycles (a lower bound: "
                                                 "undecided, 256 class(es)"),
                                         ("min", "min latency ≤ 146 cycles (an upper bound: "
                                                 "undecided, 256 class(es)")])
def test_an_undecided_bound_is_not_headlined_as_a_number(capsys, which, said):
    """`lpn verify --bound max` out of time printed `max latency 146 cycles (unknown, ...)`
    where the true max is 155: what the classes solved so far reached, not the bound."""
    from accelperf.cli.lpn_verify import _print_verdict
    from accelperf.lpn.analysis.proofs.verify import BoundResult
    _print_verdict("dma-compute", BoundResult(which, 146, None, 256, 45.0, "unknown",
                                              "time budget ran out"))
    assert said in " ".join(capsys.readouterr().out.split())


# ---------------------------------------------------------------- 11: a model's own imports
def test_a_model_file_imports_a_module_beside_it(cli, tmp_path):
    """`PATH.py:FUNC` once failed with ModuleNotFoundError on `import timing` of a
    timing.py next to it, which `python PATH.py` finds."""
    import sys
    (tmp_path / "user_timing.py").write_text("WRITEBACK = 7\n")
    (tmp_path / "engine.py").write_text(
        "from accelperf.lpn import Net\n"
        "import user_timing\n\n\n"
        "def build():\n"
        "    net = Net('beside')\n"
        "    start, done = net.place('start'), net.place('done')\n"
        "    net.transition('t', inputs={start: 1}, outputs={done: 1},\n"
        "                   delay=user_timing.WRITEBACK)\n"
        "    net.start, net.done = start, done\n"
        "    net.tokens_from_input = lambda n: [() for _ in range(n)]\n"
        "    net.default_input = 1\n"
        "    return net\n")
    before = list(sys.path)
    code, out, err = cli("lpn", "simulate", f"{tmp_path}/engine.py:build", "--json")
    assert code == 0, err
    assert json.loads(out)["latency"] == 7
    assert sys.path == before          # the folder is not left on the path


# ---------------------------------------------------------------- 12: lpn classes
def test_classes_of_a_stream_its_values_steer_name_both_ways_out(cli, files, tmp_path):
    space = tmp_path / "no_by_token.toml"
    space.write_text(STREAM.replace("by_token = true\n", ""))
    code, _, err = cli("lpn", "classes", f"{files}/dma_engine.py:engine", "--space", str(space))
    assert code == 2 and "give that place a fixed count" in err
    assert "by_token = true" in err
    code, out, err = cli("lpn", "classes", f"{files}/dma_engine.py:engine", "--space",
                         str(files / "stream.toml"))
    assert code == 0 and f"over {files / 'stream.toml'}" in out, err
