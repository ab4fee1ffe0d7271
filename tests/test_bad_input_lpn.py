"""Bad input to `accelperf lpn ...`: one line on stderr naming what is wrong, exit 2, never
a traceback, a hang or a silent wrong number; and random JSON into every model's Ψ."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accelperf.cli.app import main
from accelperf.errors import ModelError
from accelperf.lpn.inputs.jpeg import SAMPLES
from accelperf.lpn.library import LIBRARY


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad")
    (d / "raises.py").write_text("def build():\n    raise RuntimeError('boom')\n")
    (d / "needs_args.py").write_text("def build(n):\n    return None\n")
    (d / "syntax.py").write_text("x = (\n")
    (d / "not_model.py").write_text("def build():\n    return 5\n")
    (d / "bad_psi.py").write_text(
        "from accelperf.lpn import Net\n"
        "def build():\n"
        "    net = Net('m')\n"
        "    a, b = net.place('a'), net.place('b')\n"
        "    net.transition('t', inputs={a: 1}, outputs={b: 1})\n"
        "    net.start, net.done = a, b\n"
        "    net.tokens_from_input = lambda x: [() for _ in range(x['n'])]\n"
        "    return net\n")
    (d / "binary.dat").write_bytes(b"\x00\x01\x02\xff binary")
    (d / "empty.json").write_text("")
    (d / "truncated.json").write_text('{"a": ')
    (d / "png.jpg").write_bytes(b"\x89PNG\r\n\x1a\n" + b"0" * 40)
    sample = sorted(SAMPLES.glob("*_420.jpg"))[0].read_bytes()
    (d / "cut.jpg").write_bytes(sample[:300])
    (d / "empty.jpg").write_bytes(b"")
    (d / "bad.insns").write_text("insn, load, load, inp, 16, 1\n")
    (d / "bad.csv").write_text("n_words,kind\nx,data\n")
    return d


NAMED = r"is invalid|--input|line \d"     # names the option, field or line at fault


def cases():
    model_inputs = {
        "credit-link": ["[5.7]", "[-5]", "[0]", "[]", '"abc"', '["a"]', "[NaN]", "[Infinity]",
                        '{"a": 1}', "[1e400]", "[true]", "[null]", "[[1]]", "null", "5",
                        "[99999999999999999999999999]", "[-Infinity]"],
        "darwin": ["{}", '{"ref_len": "a", "query_len": 1, "steps": 1}',
                   '{"ref_len": 5.5, "query_len": 1, "steps": 1}',
                   '{"ref_len": -5, "query_len": 1, "steps": 1}',
                   '{"ref_len": 0, "query_len": 1, "steps": 1}',
                   '{"ref_len": NaN, "query_len": 1, "steps": 1}', "[1,2,3]",
                   '{"ref_len": 5, "query_len": 1, "steps": 1, "extra": 2}',
                   '{"ref_len": 5, "query_len": 1e300, "steps": 1}', '"pair"'],
        "fig2-pipeline": ["[]", "[5.5]", '"x"', '[{"kind": 9}]', '{"a":1}', "[[0, 1]]",
                          "[[2, 10, 1]]", "[[0, -1, 1]]", "[[0, 10, 1.5]]", "[[0, 1, 2, 3]]"],
        "block-pipeline": ["{}", '{"width": -1, "height": 8}', '{"width": 1e9, "height": 1e9}',
                           "[1.5]", '"x"', "[65]", "[-1]", '{"blocks": 0, "nnz": 3}',
                           '{"blocks": 3, "nnz": 99}', '{"width": 8, "height": 8, "x": 1}',
                           '{"width": 8, "height": 8, "mean_nnz": "a"}'],
        "pipeline-over-link": ["[-1]", "nope", "[]", "[64.5]"],
        "jpeg-decoder": ["[0]", "[64]", "[]", "[1,2]", "[1.5,1,1,1,1,1]", '{"a": 1}', '"x"',
                         "[1,1,1,1,1,true]", "[1,1,1,1,1,-3]", "[[1],1,1,1,1,1]"],
        "jpeg-decoder-pcie": ["[1,1,1,1,1,1]", "[]"],
        "vta": ["[]", '["garbage"]', "[1]", '"insn, load"',
                '["insn, load, load, inp, 16, 1, 0, 0, 0, 0, 0, 0, 1, 0, x"]',
                '["insn, fly, load, inp, 16, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0"]'],
        "protoacc": ["[]", '{"a": 5}', '{"f": {"type": "scalar"}}', "5"],
        "menshen": ["[]", '[{"n_words": -1, "kind": "data"}]', '[{"n_words": 2}]',
                    '[{"n_words": 2, "kind": "weird"}]', '[[1, 1, 1, 1]]', "[1.5]"],
    }
    # A model's input is checked by its Ψ, which names the field at fault ("--input[0]
    # (message bytes) = 5.7 is invalid", "--input[0] (AC symbols of a block) = 0 is invalid").
    out = [(["lpn", "simulate", m, "--input", text], NAMED)
           for m, texts in model_inputs.items() for text in texts]
    files = [
        ("jpeg-decoder", "png.jpg", "--input"), ("jpeg-decoder", "cut.jpg", "--input"),
        ("jpeg-decoder", "empty.jpg", "--input"), ("jpeg-decoder", "binary.dat", "--input"),
        ("jpeg-decoder", "empty.json", "--input"), ("jpeg-decoder", "truncated.json", "--input"),
        ("credit-link", "binary.dat", "--input"), ("credit-link", "truncated.json", "--input"),
        ("vta", "bad.insns", "line 1"), ("vta", "binary.dat", "--input"),
        ("menshen", "bad.csv", "line 2"), ("menshen", "binary.dat", "--input"),
        ("protoacc", "empty.json", "--input"),
    ]
    out += [(["lpn", "simulate", m, "--input", f"@{f}"], words) for m, f, words in files]
    out = [(argv, NAMED if w == "--input" else w) for argv, w in out]
    out += [(["lpn", "simulate", "jpeg-decoder", "--input", "@"], "--input")]   # a directory
    # an input typed after the model, as the usage line's [INPUT...] suggests
    out += [(["lpn", "simulate", "fig2-pipeline", "[256,64]"],
             "an input is given with --input")]
    models = [("nosuch", "MODEL"), ("@raises.py:build", "boom"),
              ("@needs_args.py:build", "no arguments"), ("@syntax.py:build", "importing"),
              ("@not_model.py:build", "not an LPN model"), ("@nofile.py:build", "no file"),
              ("@raises.py:nosuch", "no function"), ("@:build", "MODEL"),
              ("@bad_psi.py:build", "Ψ")]
    out += [(["lpn", "simulate", m] + (["--input", '{"x": 1}'] if "psi" in m else []), w)
            for m, w in models]
    options = [
        (["--max-time", "-1"], "--max-time"), (["--max-time", "abc"], "--max-time"),
        (["--max-time", "1.5"], "--max-time"), (["--max-commits", "-5"], "--max-commits"),
        (["--max-commits", "nan"], "--max-commits"),
        (["--max-firings-per-cycle", "0"], "--max-firings-per-cycle"),
        (["--trace", "/proc/x.json"], "--trace"), (["--trace", "@x.txt"], "--trace"),
        (["--trace", "/nonexistent-dir/x.json"], "does not exist"), (["--trace", "@"], "--trace"),
        (["--trace", ""], "--trace"), (["--json", "--json"], "--json"),
        (["--max-time", "1e400"], "--max-time"), (["--max-commits", ""], "--max-commits"),
        (["--input", "[1]", "--input", "[2]"], "--input"), (["--bogus"], "--bogus"),
    ]
    out += [(["lpn", "simulate", "credit-link"] + o, w) for o, w in options]
    show = [
        ([], "--out"), (["--out", "/proc/x.svg"], "--out"), (["--out", "@x.png"], "--out"),
        (["--out", "/nonexistent-dir/x.svg"], "does not exist"),
        (["--out", "@x.svg", "--input", "[-1]"], "--input"),
        (["--out", "@x.svg", "--input", "nope"], "--input"), (["--out", "@"], "--out"),
        (["--out", "@x.svg", "--out", "@y.svg"], "--out"),
        (["--parameters", "--simulate"], "--simulate is invalid without --out"),
        (["--parameters", "--input", "@missing.json"],
         r"--input = '.*missing.json' is invalid without --out"),
    ]
    out += [(["lpn", "show", "credit-link"] + o, w) for o, w in show]
    # an option read only beside another is refused without it, never dropped
    space = ["--space", "examples/spaces/vta-mixed.toml", "--bound", "max"]
    measured = ["--measured", "examples/measurements/core_jpeg_train.csv"]
    out += [
        (["lpn", "interface", "vta", "--tolerance", "0.9"],
         r"--tolerance = 0.9 is invalid without --check"),
        (["lpn", "interface", "aes-gcm", "--phases", "--json"],
         "--phases is invalid for aes-gcm: a stream priced token by token has one form"),
        (["lpn", "interface", "aes-gcm", "--plain"], "--plain is invalid for aes-gcm"),
        (["lpn", "verify", "vta"] + space + ["--range", "1..4", "--budget", "latency <= 5"],
         r"--range = '1\.\.4' is invalid without --size"),
        (["lpn", "verify", "vta"] + space + ["--budget", "nonsense(("],
         r"--budget = 'nonsense\(\(' is invalid without --size"),
        (["lpn", "verify", "vta"] + space + ["--optimise"], "--optimise is invalid without --size"),
        (["lpn", "compare", "jpeg-decoder"] + measured + ["--event", "nonexistent"],
         "--event = 'nonexistent' is invalid without --trace"),
        (["lpn", "compare", "jpeg-decoder"] + measured + ["--trace-input", "nothing-here"],
         "--trace-input = 'nothing-here' is invalid without --trace"),
        (["lpn", "compare", "jpeg-decoder", "--measured", "@missing.csv", "--trace",
          "@missing-trace.csv", "--transition", "idct_y"], "--trace = .* no such file"),
        (["lpn", "calibrate", "jpeg-decoder"] + measured + ["--folds", "50"],
         r"--folds = 50 is invalid: between 2 and the number of measured inputs \(10\)"),
    ]
    out += [(["lpn", "show", "nosuch", "--out", "@x.svg"], "MODEL"),
            (["lpn", "list", "--bogus"], "--bogus"), (["lpn", "bogus"], "bogus"),
            (["lpn", "simulate"], "MODEL")]
    return out


CASES = cases()


@pytest.mark.parametrize("argv, words", CASES, ids=[" ".join(a) for a, _ in CASES])
def test_bad_lpn_input_is_one_line_and_exit_2(argv, words, files, capsys):
    argv = [a.replace("@", f"{files}/", 1) if a.startswith("@") else a for a in argv]
    words = words.replace("@", f"{files}/")
    code = main(argv)
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert code == 2, captured.err
    assert len(lines) == 1 and "Traceback" not in captured.err, captured.err
    assert re.search(words, lines[0]), lines[0]
    assert not list(files.glob("x.*")) and not list(files.glob("y.*"))


def test_there_are_enough_cases():
    assert len(CASES) >= 130


def test_a_failed_run_is_status_1_with_its_report(capsys):
    assert main(["lpn", "simulate", "credit-link", "--max-commits", "3"]) == 1
    err = capsys.readouterr().err
    assert "past max_commits = 3" in err and "marking" in err


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-10**20, 10**20) |
    st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=6) |
    st.dictionaries(st.sampled_from(["ref_len", "query_len", "steps", "width", "height",
                                     "blocks", "nnz", "kind", "n_words", "type", "data",
                                     "is_repeated", "x"]) | st.text(max_size=5), inner,
                    max_size=4),
    max_leaves=12)


@pytest.mark.parametrize("name", sorted(LIBRARY))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=JSON)
def test_random_json_into_every_models_psi_is_tokens_or_one_clear_error(name, value):
    model = _model(name)
    try:
        model.marking(value)
    except ModelError as exc:
        assert "\n" not in str(exc) and str(exc)


_MODELS = {}


def _model(name):
    if name not in _MODELS:
        _MODELS[name] = LIBRARY[name]()
    return _MODELS[name]


def _file(d, name, text):
    (d / name).write_text(text)
    return str(d / name)


@pytest.mark.parametrize("make,needle", [
    (lambda d: str(d / "photo.jpg"), "no such file"),
    (lambda d: "photo.jpg", "no such file"),
    (lambda d: _file(d, "empty.jpg", ""), "the file is empty"),
    (lambda d: _file(d, "empty.json", ""), "the file is empty"),
    (lambda d: _file(d, "x.json", "{oops"), "the file is not JSON"),
    (lambda d: str(d), "a directory, not a file"),
    (lambda d: "[1, 2,", "neither a file nor valid JSON"),
])
def test_missing_empty_and_broken_input_files_say_which(tmp_path, capsys, make, needle):
    text = make(tmp_path)
    code = main(["lpn", "simulate", "jpeg-decoder", "--input", text])
    err = capsys.readouterr().err
    assert code == 2 and needle in err and err.count("\n") == 1, err
    assert f"--input = {text!r}" in err


def test_a_check_input_outside_the_space_is_bad_input_not_an_internal_error(capsys):
    # The tutorial's default space takes sizes 0..6 (its example's largest); 99 is outside.
    code = main(["lpn", "interface", "examples/three_stage.py:pipeline", "--plain",
                 "--check", "[1, 2]", "[99]"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert "'[99]' is invalid for --check" in err[0] and "--space" in err[0], err[0]
    assert "internal error" not in err[0]


def test_a_generated_module_run_as_a_script_refuses_an_outside_input_in_one_line(tmp_path):
    import subprocess
    import sys
    module = tmp_path / "iface.py"
    assert main(["lpn", "interface", "examples/three_stage.py:pipeline", "--plain",
                 "--out", str(module)]) == 0
    run = subprocess.run([sys.executable, str(module), "[1, 2]", "[99]"],
                         capture_output=True, text=True)
    assert run.returncode == 2, run.stderr
    assert '"cycles"' in run.stdout and "Traceback" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "'[99]' is invalid" in run.stderr
