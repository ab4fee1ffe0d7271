"""lpn verify --interface on modules written by `accelperf lpn interface --out` (issue 13's
generated interfaces): their formulas read back as Z3 terms and the accuracy proof of
OSDI'24 §5.3.4 (|E - latency| < 43% of latency on every 18-block input)."""

import importlib.util
import json
from pathlib import Path

import pytest

from accelperf.cli.app import main
from accelperf.errors import ModelError
from accelperf.lpn import simulate
from accelperf.lpn.analysis.formula import generated_interface_term
from accelperf.lpn.analysis.space import load_space
from accelperf.lpn.analysis.verify import within
from accelperf.lpn.library import build

ROOT = Path(__file__).resolve().parents[1]
SPACE = ROOT / "examples" / "spaces" / "jpeg-decoder-18-blocks.toml"


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = tmp_path_factory.mktemp("iface") / "jpeg_iface.py"
    assert main(["lpn", "interface", "jpeg-decoder", "--plain", "--out", str(out)]) == 0
    return out


def run_module(path):
    spec = importlib.util.spec_from_file_location("generated_iface", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_generated_jpeg_interface_is_proved_within_43_percent(generated):
    jpeg = build("jpeg-decoder")
    space = load_space(jpeg, SPACE)
    term = generated_interface_term(generated.read_text(), space.variables(jpeg))
    assert within(lambda _x: term, space, jpeg, 0.43).holds is True
    # A tighter tolerance fails; the counterexample's E is what the module itself says,
    # and its latency what the simulator says.
    module = run_module(generated)
    failed = within(lambda _x: term, space, jpeg, 0.10)
    assert failed.holds is False
    cx = failed.counterexample
    assert module.latency(cx.input) == pytest.approx(failed.values["E"])
    assert simulate(jpeg, cx.input).latency == failed.values["latency"]
    assert abs(failed.values["E"] - cx.simulated) >= 0.10 * cx.simulated


def test_the_term_equals_the_module_on_inputs(generated):
    import z3
    jpeg = build("jpeg-decoder")
    space = load_space(jpeg, SPACE)
    tokens = space.variables(jpeg)
    term = generated_interface_term(generated.read_text(), tokens)
    module = run_module(generated)
    for counts in ([1] * 18, [63] * 18, list(range(1, 19)), [40, 2] * 9):
        pins = [v["symbols"] == c for v, c in zip(tokens["blocks"].values, counts)]
        s = z3.Solver()
        s.add(pins)
        assert s.check() == z3.sat
        value = s.model().eval(term, model_completion=True)
        assert float(value.as_fraction()) == pytest.approx(module.latency(counts))


def test_cli_interface_proof_of_a_generated_module(generated, capsys):
    code = main(["lpn", "verify", "jpeg-decoder", "--space", str(SPACE), "--interface",
                 str(generated), "--within", "0.43", "--json"])
    assert code == 0 and json.loads(capsys.readouterr().out)["holds"] is True


def test_outside_the_interface_space_any_accuracy_fails(tmp_path, generated):
    """Inputs the module refuses (here: fewer blocks than its SPACE allows) get no
    prediction, so the proof fails there instead of assuming one."""
    import z3
    source = generated.read_text().replace("6 <= a['n_blocks']", "20 <= a['n_blocks']")
    jpeg = build("jpeg-decoder")
    space = load_space(jpeg, SPACE)
    term = generated_interface_term(source, space.variables(jpeg))
    assert within(lambda _x: term, space, jpeg, 0.43).holds is False
    assert term.arg(2).eq(z3.Real("E_outside"))


@pytest.mark.parametrize("tolerance,priced", [(0.10, True), (0.43, False)])
def test_a_counterexample_shows_no_made_up_prediction(tmp_path, generated, capsys,
                                                       tolerance, priced):
    """A new user verified on a space wider than the module's and read E = (1 + W)·latency
    for every W: the solver's value for E_outside. An input the module prices is preferred
    (the interface's own error); else E is shown as none, with the reason."""
    narrow = tmp_path / "narrow.py"
    narrow.write_text(generated.read_text()
                      .replace("'1 <= mean_blocks_symbols <= 63'", "'1 <= mean_blocks_symbols <= 30'")
                      .replace("1 <= a['mean_blocks_symbols'] <= 63",
                               "1 <= a['mean_blocks_symbols'] <= 30"))
    code = main(["lpn", "verify", "jpeg-decoder", "--space", str(SPACE), "--interface",
                 str(narrow), "--within", str(tolerance), "--json"])
    d = json.loads(capsys.readouterr().out)
    assert code == 1 and d["holds"] is False
    symbols = d["counterexample"]
    mean = sum(symbols) / len(symbols)
    if priced:
        assert mean <= 30 and d["values"]["E"] == pytest.approx(
            run_module(narrow).latency(symbols)) and "E = —" not in d["note"]
    else:
        assert mean > 30 and d["values"]["E"] is None and "E = —: the interface gives no " \
            "value for this input" in d["note"]


@pytest.mark.parametrize("edit,needle", [
    (lambda s: s.replace("PHASES = False", "PHASES = True"), "phase-aware"),
    (lambda s: s.replace("STREAMS_0 = {'blocks'", "STREAMS_0 = {'pixels'"), "'pixels'"),
    (lambda s: s.replace("TYPES = [", "OTHER = ["), "not a module written"),
    (lambda s: s.replace("def _sums_0(", "def _other_0("), "no function _sums_0"),
    (lambda s: s.replace("SPACE_0 = [", "OTHER_0 = ["), "no table SPACE_0"),
])
def test_bad_generated_modules_are_one_line_errors(generated, edit, needle):
    jpeg = build("jpeg-decoder")
    space = load_space(jpeg, SPACE)
    with pytest.raises(ModelError) as info:
        generated_interface_term(edit(generated.read_text()), space.variables(jpeg))
    assert needle in str(info.value) and "\n" not in str(info.value)


def test_a_generated_interface_with_token_by_token_properties(tmp_path):
    """Darwin's interface reads the one alignment token's steps by name (FIXED) beside
    the stripes' mean (STREAMS); its 6 classes of the space are all proved or refuted,
    and a counterexample's E is the module's own value."""
    out = tmp_path / "darwin_iface.py"
    assert main(["lpn", "interface", "darwin", "--plain", "--out", str(out)]) == 0
    darwin = build("darwin")
    space = load_space(darwin, ROOT / "examples" / "spaces" / "darwin-16x-steps.toml")
    term = generated_interface_term(out.read_text(), space.variables(darwin))
    assert within(lambda _x: term, space, darwin, 0.43).holds is True
    failed = within(lambda _x: term, space, darwin, 0.10)
    assert failed.holds is False and failed.classes == 6
    assert run_module(out).latency(failed.counterexample.input) == \
        pytest.approx(failed.values["E"])
    assert simulate(darwin, failed.counterexample.input).latency == failed.values["latency"]


# ---------------------------------------------------------------- typed modules (Protoacc)
ONE_SIZE = ROOT / "examples" / "spaces" / "protoacc-one-size.toml"


def _sized(message, n):
    """``message`` with every field element ``n`` bytes (an input of ONE_SIZE's space)."""
    return {name: {**field, "data": _sized(field["data"], n) if field["type"] ==
                   "submessage" else [n] * len(field["data"])}
            for name, field in message.items()}


@pytest.fixture(scope="module")
def protoacc_typed(tmp_path_factory):
    """Protoacc's module of two input types (Fig. 5's message formats): its default
    message first, then forty_scalars; and the space of default messages of one size."""
    from accelperf.lpn.analysis.emit import typed_module_source
    from protoacc_types import protoacc_types
    model, _, ifaces = protoacc_types()
    out = tmp_path_factory.mktemp("proto") / "proto_typed.py"
    # plain: the tests below turn it into the phase-aware module by editing PHASES
    out.write_text(typed_module_source(ifaces, model, "protoacc", phases=False))
    return model, load_space(model, ONE_SIZE), out


def test_a_typed_module_reads_as_the_type_the_input_has(protoacc_typed):
    """The term is the module's own value on inputs of the space (its first type that
    matches: default), and the space's inputs are of that type only."""
    import z3
    from accelperf.lpn.analysis.formula import generated_interface
    model, space, path = protoacc_typed
    tokens = space.variables(model)
    gi = generated_interface(path.read_text(), tokens)
    assert [name for name, _ in gi.types] == ["default"]
    module = run_module(path)
    phased = generated_interface(path.read_text().replace("PHASES = False", "PHASES = True"),
                                 tokens)
    sizes = [v["bytes"] for v in tokens["field_data"].values]
    for n in (0, 15, 16, 47):
        value = z3.simplify(z3.substitute(gi.term, *[(v, z3.IntVal(n)) for v in sizes]))
        x = _sized(model.default_input, n)
        assert float(value.as_fraction()) == pytest.approx(module.latency([x])), n
        # by phase: a message type has no stream, its one phase is the plain formula
        assert z3.simplify(z3.substitute(phased.term, *[(v, z3.IntVal(n)) for v in sizes])
                           ).eq(value)


def test_a_typed_module_is_proved_and_a_broken_one_refuted(protoacc_typed, tmp_path, capsys):
    model, space, path = protoacc_typed
    code = main(["lpn", "verify", "protoacc", "--space", str(ONE_SIZE), "--interface",
                 str(path), "--within", "0.2", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["holds"] is True, out
    assert "input type(s) of the space: default" in out["note"]
    # hand-broken: the default type's formula doubled
    source = path.read_text()
    head, rest = source.split("def _latency_0(a):\n", 1)
    body, tail = rest.split("\n\n\n", 1)
    lines = body.splitlines()
    lines[-1] = lines[-1].replace("return ", "return 2 * ", 1)
    broken = tmp_path / "broken.py"
    broken.write_text(head + "def _latency_0(a):\n" + "\n".join(lines) + "\n\n\n" + tail)
    code = main(["lpn", "verify", "protoacc", "--space", str(ONE_SIZE), "--interface",
                 str(broken), "--within", "0.2", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["holds"] is False, out
    assert out["values"]["type"] == "default"
    x = _sized(model.default_input, out["counterexample_tokens"]["field_data"][0]["bytes"])
    sim = out["values"]["latency"]
    assert sim == simulate(model, [x]).latency
    assert run_module(broken).latency([x]) == pytest.approx(out["values"]["E"])
    assert abs(out["values"]["E"] - sim) >= 0.2 * sim


def test_the_emitted_protoacc_module_on_a_small_space(tmp_path, capsys):
    """`accelperf lpn interface protoacc --out` (one type, per-token sums of
    floor(bytes/16), derived critical paths): proved within 0.01% on the 48 one-size
    inputs, i.e. exact there (a refutation with its counterexample is the hand-broken
    module's test above)."""
    out = tmp_path / "proto.py"
    assert main(["lpn", "interface", "protoacc", "--plain", "--out", str(out)]) == 0
    capsys.readouterr()
    args = ["lpn", "verify", "protoacc", "--space", str(ONE_SIZE), "--interface", str(out),
            "--json", "--within"]
    assert main(args + ["0.0001"]) == 0
    proved = json.loads(capsys.readouterr().out)
    assert proved["holds"] is True
    model = build("protoacc")
    for size in (0, 16, 47):
        x = _sized(model.default_input, size)
        assert run_module(out).latency([x]) == simulate(model, [x]).latency


def test_a_space_of_no_type_of_the_module_is_bad_input(protoacc_typed, tmp_path, capsys):
    model, space, path = protoacc_typed
    import re
    source = re.sub(r"    \('default', STREAMS_0,.*?\]\),\n", "", path.read_text(), count=1,
                    flags=re.S)
    assert "('default', STREAMS_0" not in source and "('forty_scalars'" in source
    bad = tmp_path / "forty_only.py"
    bad.write_text(source)
    code = main(["lpn", "verify", "protoacc", "--space", str(ONE_SIZE), "--interface",
                 str(bad), "--within", "0.2"])
    err = capsys.readouterr().err
    assert code == 2 and "fit none of its input types" in err and "forty_scalars" in err


def test_a_formula_with_an_inline_floor_is_read(tmp_path):
    """A one-field payload is not summed: its class's formula writes math.floor inline
    (floor(payload/16) + 59), which the proof reads as Z3's exact integer part (it was
    refused as "not part of the formula language"); the term equals the module."""
    import z3
    from accelperf.lpn.analysis.space import space_from_dict
    model = build("protoacc")
    blob = {"key": {"type": "scalar", "is_repeated": False, "data": [8]},
            "payload": {"type": "nonscalar", "is_repeated": False, "data": [4096]}}
    space = space_from_dict(model, {
        "example": blob, "vary": {"field_data": {"bytes": [0, 4095]}},
        "constraints": ["field_data[0].bytes == 8", "field_data[2].bytes == 1"]})
    out = tmp_path / "blob.py"
    from accelperf.lpn.analysis.emit import module_source
    from accelperf.lpn.analysis.interface import extract_interface
    out.write_text(module_source(extract_interface(model, space), model, "protoacc",
                                 phases=True))
    assert "math.floor(" in out.read_text()
    tokens = space.variables(model)
    term = generated_interface_term(out.read_text(), tokens)
    payload = tokens["field_data"].values[1]["bytes"]
    others = [(tokens["field_data"].values[i]["bytes"], z3.IntVal(v)) for i, v in
              ((0, 8), (2, 1))]
    module = run_module(out)
    for n in (0, 15, 16, 4095):
        value = z3.simplify(z3.substitute(term, (payload, z3.IntVal(n)), *others))
        x = {**blob, "payload": {**blob["payload"], "data": [n]}}
        assert float(value.as_fraction()) == module.latency([x]) == \
            simulate(model, [x]).latency, n
