"""Interfaces over a stream whose tokens' counts depend on their values, priced token by
token (issue 33 items 1-2): the AES-GCM engine over any number of packets."""

import json
import os
import random
import subprocess
import sys

import pytest

from accelperf.lpn import simulate
from accelperf.lpn.analysis import stream_emit, token_stream
from accelperf.lpn.analysis.emit import load_module
from accelperf.lpn.analysis.space import default_space, space_from_dict
from accelperf.lpn.analysis.token_stream import StreamInterface
from accelperf.lpn.library import build
from accelperf.lpn.loader import load_model
from extracted import request_key, reusing_extractions


@pytest.fixture(scope="module", autouse=True)
def one_extraction():
    """The module's tests, the command line included, share one extraction and label (as
    `lpn interface aes-gcm` asks: the shipped space, the default max_classes)."""
    with reusing_extractions():
        yield


@pytest.fixture(scope="module")
def extracted():
    model = build("aes-gcm")
    iface = token_stream.interface_for(model, default_space(model))
    source = stream_emit.stream_module_source(iface, model, "aes-gcm", 1e9)
    return model, iface, source, load_module(source)


def test_an_extraction_is_reused_only_for_the_same_request():
    model = build("aes-gcm")
    space = default_space(model)
    key = request_key(model, space)
    assert request_key(load_model("aes-gcm", {}), default_space(model)) == key
    header = model.parameter("header_cycles").value
    assert request_key(load_model("aes-gcm", {"header_cycles": header + 1}), space) != key
    assert request_key(build("fig2-pipeline"), space) != key
    assert request_key(model, space, max_classes=8) != key
    other = space_from_dict(model, {"places": {"packets": {
        "count": [1, 100000], "count_range": "stream", "properties": {"bytes": [1, 1500]}}}})
    assert request_key(model, other) != key


def test_a_reused_extraction_is_what_a_fresh_one_gives():
    from accelperf.lpn.analysis.emit import module_source
    from accelperf.lpn.analysis.interface import extract_interface
    model = build("vta")                        # a model extracted in milliseconds
    fresh = module_source(extract_interface(model, default_space(model)), model, "vta")
    first = token_stream.interface_for(model, default_space(model))
    again = token_stream.interface_for(build("vta"), default_space(build("vta")))
    assert again is first and module_source(first, model, "vta") == fresh


def test_the_natural_model_gets_an_interface_for_any_number_of_packets(extracted):
    _, iface, _, module = extracted
    assert isinstance(iface, StreamInterface)
    assert iface.count == (1, 100000) and iface.place == "packets"
    # every token class fitted exactly where its stages are timed
    assert all(c.exact for c in iface.classes)
    assert module.COUNT == (1, 100000)


def test_unseen_lists_are_within_two_percent(extracted):
    # seeded lists of 1, 3 and 4 packets of 64..9000 B, a seed not used while developing
    model, iface, _, module = extracted
    rng = random.Random(330033)
    worst = 0.0
    for n in (1, 3, 4):
        for _ in range(4):
            sizes = [rng.randint(64, 9000) for _ in range(n)]
            simulated = simulate(model, sizes).latency
            predicted = module.latency(sizes)
            assert predicted == iface.latency([{"bytes": b} for b in sizes])
            worst = max(worst, abs(predicted - simulated) / simulated)
            # each term is a lower bound of the simulation here (no stage idles)
            assert max(module.terms(sizes).values()) <= simulated
    assert worst <= 0.02


def test_fill_and_drain_are_terms(extracted):
    # Four 64-B packets: 132 cycles. The max of works alone, Max(80, 4·16), is 39.4% low.
    model, _, _, module = extracted
    assert simulate(model, [64] * 4).latency == 132
    assert module.latency([64] * 4) == 132
    terms = module.terms([64] * 4)
    assert terms["header"] == 132 and module.bottleneck([64] * 4) == "header"
    assert module.bottleneck([1500, 9000, 64]) == "ghash"


def test_the_bottleneck_label_names_ghash_and_where_the_header_takes_over(extracted):
    _, iface, source, _ = extracted
    label = stream_emit.bottleneck_label(iface)
    assert label == "ghash; header at bytes 1..64; header = ghash at bytes 65..80"
    assert label in source


def test_the_label_at_array_speed_is_sympy_s_point_by_point(extracted, monkeypatch):
    # bytes 1..300 hold all three runs (1..64, 65..80, 81..): SymPy's path in 0.3 s
    from test_exact_range import sympy_runs, with_ranges
    part = with_ranges(extracted[1], bytes=(1, 300))
    runs = stream_emit.bottleneck_runs(part)
    assert runs == sympy_runs(part, monkeypatch)
    assert runs == [(("header",), 1, 64), (("header", "ghash"), 65, 80), (("ghash",), 81, 300)]


def test_the_module_runs_bare_and_refuses_bad_input(extracted, tmp_path):
    _, _, source, _ = extracted
    path = tmp_path / "iface.py"
    path.write_text(source)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    ok = subprocess.run([sys.executable, "-I", str(path), json.dumps([64, 1500, 576, 40])],
                        capture_output=True, text=True, env=env)
    assert ok.returncode == 0 and float(ok.stdout) == 608
    for bad in ("[0]", "[9001]", "[]"):
        r = subprocess.run([sys.executable, "-I", str(path), bad], capture_output=True,
                           text=True, env=env)
        assert r.returncode == 2 and r.stderr.startswith("error:") and "Traceback" not in r.stderr


def test_cli_checks_every_term_against_simulation(tmp_path):
    from click.testing import CliRunner
    from accelperf.cli import cli
    out = tmp_path / "iface.py"
    r = CliRunner().invoke(cli, ["lpn", "interface", "aes-gcm", "--out", str(out), "--check",
                                 "[64,64,64,64]", "[64,1500,576,40]", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output[r.output.index("{"):])
    assert doc["max_error"] == 0
    assert doc["bottleneck"] == {"[64,64,64,64]": "header", "[64,1500,576,40]": "ghash"}
    assert doc["terms"]["[64,1500,576,40]"]["ghash"] == 604
    assert doc["failed_assumptions"] == {}
    assert out.exists()


@pytest.mark.parametrize("options", [[], ["--json"]])
def test_cli_computes_the_label_once_for_the_module_and_the_screen(options, tmp_path,
                                                                   monkeypatch):
    # the label is seconds of work over 9,000 sizes: the module's docstring and the
    # printed summary share one computation
    from click.testing import CliRunner
    from accelperf.cli import cli
    calls, label = [], stream_emit.bottleneck_label      # the memo: no new computation

    def counted(iface):
        calls.append(iface)
        return label(iface)

    monkeypatch.setattr(stream_emit, "bottleneck_label", counted)
    out = tmp_path / "iface.py"
    r = CliRunner().invoke(cli, ["lpn", "interface", "aes-gcm", "--out", str(out), *options])
    assert r.exit_code == 0, r.output
    assert len(calls) == 1
    text = label(calls[0])
    assert f"Bottleneck over the space: {text}." in out.read_text()
    if options:
        d = json.loads(r.output[r.output.index("{"):])
        assert d["bottleneck"] == text
        assert d["classes"][0]["conditions"][0].startswith("Eq(")   # SymPy's text, to parse
    else:
        assert f"bottleneck: {text}" in r.output
        # the conditions as they read (a new user found `Eq(ceiling(...), 1)` hard to read)
        assert "Eq(" not in r.output and "Ne(" not in r.output
        assert "token class 0 (ceiling(packets_0_bytes/16) - " in r.output
        assert ") == 1 and 4*floor(" in r.output


def test_the_explorer_panel_prices_n_alike_packets(extracted):
    """explore --space: the panel's JavaScript (per class, the max of the stage terms for
    n packets alike) against the simulation, run in Node where it is installed."""
    import shutil
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js (node) is not installed: the page's JavaScript cannot be run")
    from accelperf.explore.formulas import stream_formulas
    model, iface, _, _ = extracted
    classes = [c.to_dict() for c in stream_formulas(iface)]
    cases = [(4, 64), (2, 9000), (3, 65), (5, 1473), (1, 1)]
    program = "\n".join([
        f"const classes = {json.dumps(classes)};",
        "const out = [];",
        f"for (const [n, b] of {json.dumps(cases)}) {{",
        "  const n_packets = n, packets_0_bytes = b;",
        "  const c = classes.find((k) => k.condition_js.every((x) => eval(x)));",
        "  out.push(eval(c.latency_js));",
        "}",
        "process.stdout.write(JSON.stringify(out));"])
    done = subprocess.run([node, "-e", program], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got == [simulate(model, [b] * n).latency for n, b in cases]


def test_bad_stream_options_are_one_line(tmp_path):
    from accelperf.cli import main
    from accelperf.errors import ModelError
    model = build("aes-gcm")
    for entry in ({"count": 1, "by_token": True}, {"count": [1, 9], "by_token": "yes"}):
        with pytest.raises(ModelError, match="by_token"):
            space_from_dict(model, {"places": {"packets": entry}})
    assert main(["explore", "--model", "none", "--space", "x.toml", "--out",
                 str(tmp_path / "e.html")]) == 2


def test_a_forced_form_is_refused_for_a_stream_even_when_its_extraction_is_remembered(
        extracted, capsys):
    from accelperf.cli import main
    for flag in ("--phases", "--plain"):
        assert main(["lpn", "interface", "aes-gcm", flag, "--json"]) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and len(captured.err.strip().splitlines()) == 1
        assert f"{flag} is invalid for aes-gcm: a stream priced token by token has one " \
               f"form" in captured.err


def test_emitted_stream_module_is_unchanged(extracted):
    from golden_modules import assert_same_module
    assert_same_module("aes-gcm", extracted[2])
