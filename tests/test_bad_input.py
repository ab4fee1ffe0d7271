"""Bad input, the way a new user would type it: every case ends as one line on stderr that
names the option or field, with exit status 2 — no traceback, no hang, no lost work.

The commands run in-process through ``accelperf.cli.main``. Nothing here may measure: the
functions that would time this machine are replaced by ones that fail the test, so every
case must be refused before any work starts.
"""

import math
import os
import types

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accelperf import ModelError
from accelperf.cli import main
from accelperf.density import from_formula, hierarchy, rate_bound
from accelperf.measure import crypto, memory, offload
from accelperf.measure.data import read_timings
from accelperf.units import parse_frequency, parse_size

REAL_PROBE = memory.probe          # the API's own check runs before any probing


def _must_not_run(*args, **kwargs):
    raise AssertionError("a bad-input case started a measurement")


@pytest.fixture(autouse=True)
def no_measurement(monkeypatch):
    """Every timed run, probe and report is replaced by a failure."""
    import accelperf.demo as demo
    monkeypatch.setattr(crypto, "openssl_speed", _must_not_run)
    monkeypatch.setattr(memory, "probe", _must_not_run)
    monkeypatch.setattr(offload, "subprocess", types.SimpleNamespace(run=_must_not_run,
                                                                     Popen=_must_not_run))
    monkeypatch.setattr(demo, "build_demo_report", _must_not_run)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Broken inputs on disk, by name."""
    root = tmp_path_factory.mktemp("bad")
    paths = {"dir": root / "a-directory.toml", "bin": root / "binary.toml",
             "empty": root / "empty.toml", "trunc": root / "truncated.toml",
             "big": root / "big.toml", "file": root / "plain-file",
             "csvdir": root / "x.csv"}
    paths["dir"].mkdir()
    paths["csvdir"].mkdir()
    paths["bin"].write_bytes(bytes(range(256)) * 4)
    paths["empty"].write_text("")
    paths["trunc"].write_text('name = "t"\n[[layer]]\nname = "a')
    with paths["big"].open("wb") as fh:             # sparse: 2 MiB of nothing
        fh.truncate(2 << 20)
    paths["file"].write_text("not a directory\n")
    layer = 'name = "h"\n[[layer]]\nname = "a"\nsize_bytes = {s}\nbandwidth_bytes_per_s = {b}\n'
    for name, text in {
        "negsize": layer.format(s="-4", b="1e9"),
        "nanbw": layer.format(s="4", b="nan"),
        "zerobw": layer.format(s="4", b="0"),
        "strsize": layer.format(s='"big"', b="1e9"),
        "boolsize": layer.format(s="true", b="1e9"),
        "nobw": 'name = "h"\n[[layer]]\nname = "a"\nsize_bytes = 4\n',
        "nolayers": 'name = "h"\n',
        "layerstr": 'name = "h"\nlayer = "x"\n',
        "unknownkey": layer.format(s="4", b="1e9") + "speed = 3\n",
        # a second layer under [[layers]] vanished, and a misspelt key read as missing
        "layers": layer.format(s="4", b="1e9") + '[[layers]]\nname = "b"\nsize_bytes = 8\n'
                                                'bandwidth_bytes_per_s = 1e9\n',
        "nmae": "nmae = 'x'\n" + layer.format(s="4", b="1e9"),
        "bandwith": 'name = "h"\n[[layer]]\nname = "a"\nsize_bytes = 4\n'
                    'bandwith_bytes_per_s = 1e9\n',
        "dupe": layer.format(s="4", b="1e9") + '[[layer]]\nname = "a"\nsize_bytes = 8\n'
                                              'bandwidth_bytes_per_s = 1e9\n',
        "intname": 'name = 5\n[[layer]]\nname = "a"\nsize_bytes = 4\n'
                   'bandwidth_bytes_per_s = 1e9\n',
        "neglat": layer.format(s="4", b="1e9") + "latency_s = -1\n",
        "infsize": layer.format(s="1e309", b="1e9"),
        "items": 'name = "h"\nlayer = [1, 2]\n',
        "two": '[[hierarchy.a.layer]]\nname = "a"\nsize_bytes = 1\nbandwidth_bytes_per_s = 1\n'
               '[[hierarchy.b.layer]]\nname = "a"\nsize_bytes = 1\nbandwidth_bytes_per_s = 1\n',
    }.items():
        paths[name] = root / f"{name}.toml"
        paths[name].write_text(text)
    return {k: str(v) for k, v in paths.items()}


BOUND = ["density", "bound", "--algorithm"]
DOT = BOUND + ["dot"]
AES = ["measure", "aes", "--out", "{ok}/aes.csv"]
SHA = ["measure", "sha256", "--out", "{ok}/sha.csv"]
OFF = ["measure", "offload", "--out", "{ok}/off.csv"]
PROBE = ["density", "probe"]
DEEP = "(" * 250 + "alpha" + ")" * 250

CASES = [
    # ------------------------------------------------------------ top level
    (["--bogus"], "--bogus"),
    (["nonsense"], "nonsense"),
    (["demo", "--out", "/proc/x"], "--out = '/proc/x'"),
    (["demo", "--out", "{file}"], "{file}"),
    (["demo", "--out", "{ok}/missing/deeper"], "does not exist"),
    (["demo", "--out", ""], "--out"),
    (["demo", "--out", "{ok}/a", "--out", "{ok}/b"], "--out was given more than once"),
    (["demo", "--bogus"], "--bogus"),
    (["demo", "extra"], "extra"),
    (["density", "nonsense"], "nonsense"),
    (["measure", "nonsense"], "nonsense"),
    (["measure", "--bogus"], "--bogus"),
    # ------------------------------------------------------------ density bound: formulas
    (BOUND, "--algorithm"),
    (BOUND + [""], "algorithm = ''"),
    (BOUND + ["   "], "algorithm"),
    (BOUND + ["fft"], "valid algorithms"),
    (BOUND + ["rho = -alpha"], "density ρ = -600000"),
    (BOUND + ["rho = sqrt(-alpha)"], "density ρ = nan"),
    (BOUND + ["1/0"], "density ρ = inf"),
    (BOUND + ["0/0"], "density ρ = nan"),
    (BOUND + ["9**9**9**9"], "density ρ = inf"),
    (BOUND + ["exp(alpha)"], "density ρ = inf"),
    (BOUND + ["alpha**alpha"], "density ρ = inf"),
    (BOUND + ["1e309*alpha"], "density ρ = inf"),
    (BOUND + ["log(alpha) - 20"], "density ρ = -"),
    (BOUND + ["eta = -alpha"], "density ρ = -"),
    (BOUND + ["rho = 1e308*alpha"], "density ρ = inf"),
    (BOUND + ["rho = 1e300"], "rate σ = inf"),
    (BOUND + ["+".join(["alpha"] * 20000)], "at most 2000"),
    (BOUND + [DEEP], "formula"),
    (BOUND + ["-" * 500 + "alpha"], "at most 100"),
    (BOUND + ["1" + "0" * 400 + "*alpha"], "beyond 1.8e308"),
    (BOUND + ["alpha % 2"], "operator Mod is not allowed"),
    (BOUND + ["alpha // 2"], "operator FloorDiv is not allowed"),
    (BOUND + ["alpha << 2"], "operator LShift is not allowed"),
    (BOUND + ["~alpha"], "operator Invert is not allowed"),
    (BOUND + ["not alpha"], "operator Not is not allowed"),
    (BOUND + ["__import__('os').system('true')"], "only the listed functions"),
    (BOUND + ["alpha.real"], "Attribute is not allowed"),
    (BOUND + ["lambda: alpha"], "Lambda is not allowed"),
    (BOUND + ["[alpha]"], "List is not allowed"),
    (BOUND + ["alpha if alpha else 1"], "IfExp is not allowed"),
    (BOUND + ["alpha < 2"], "Compare is not allowed"),
    (BOUND + ["'a' * 3"], "is not a number"),
    (BOUND + ["1j * alpha"], "is not a number"),
    (BOUND + ["True * alpha"], "is not a number"),
    (BOUND + ["sqrt(alpha, alpha)"], "takes one argument"),
    (BOUND + ["min(alpha)"], "two or more arguments"),
    (BOUND + ["max()"], "positional arguments"),
    (BOUND + ["sqrt(x=alpha)"], "positional arguments"),
    (BOUND + ["foo(alpha)"], "only the listed functions"),
    (BOUND + ["beta * alpha"], "unknown name 'beta'"),
    (BOUND + ["alpha +"], "syntax error"),
    (BOUND + ["rho = "], "formula"),
    (BOUND + ["rho = alpha; 1"], "syntax error"),
    (BOUND + ["rho = eta = alpha"], "syntax error"),
    (BOUND + ["alpha = 5"], "syntax error"),
    (BOUND + ["alpha\x00"], "null bytes"),
    (BOUND + ["alpha", "--algorithm", "dot"], "--algorithm was given more than once"),
    # ------------------------------------------------------------ density bound: numbers
    (DOT + ["--operand-bytes", "nan"], "--operand-bytes = 'nan'"),
    (DOT + ["--operand-bytes", "inf"], "--operand-bytes = 'inf'"),
    (DOT + ["--operand-bytes", "-inf"], "--operand-bytes"),
    (DOT + ["--operand-bytes", "-4"], "must be > 0"),
    (DOT + ["--operand-bytes", "0"], "must be > 0"),
    (DOT + ["--operand-bytes", "-0"], "must be > 0"),
    (DOT + ["--operand-bytes", "abc"], "must be a real number"),
    (DOT + ["--operand-bytes", ""], "--operand-bytes = ''"),
    (DOT + ["--operand-bytes", "1e400"], "must be a finite number"),
    (DOT + ["--operand-bytes", "1e-320"], "--operand-bytes = '1e-320' is invalid: must be between 0.125"),
    (BOUND + ["matmul", "--operand-bytes", "1e-320"], "--operand-bytes = '1e-320' is invalid: must be between 0.125"),
    (DOT + ["--operand-bytes", "4", "--operand-bytes", "8"], "--operand-bytes was given"),
    (DOT + ["--compute-ceiling", "nan"], "--compute-ceiling = 'nan'"),
    (DOT + ["--compute-ceiling", "inf"], "--compute-ceiling = 'inf'"),
    (DOT + ["--compute-ceiling", "0"], "must be > 0"),
    (DOT + ["--compute-ceiling", "-1"], "must be > 0"),
    (DOT + ["--compute-ceiling", "fast"], "must be a real number"),
    (DOT + ["--problem-bytes", "100"], "go together"),
    (DOT + ["--computations", "100"], "go together"),
    (DOT + ["--problem-bytes", "nan", "--computations", "1"], "--problem-bytes = 'nan'"),
    (DOT + ["--problem-bytes", "1", "--computations", "-5"], "--computations = '-5'"),
    (DOT + ["--problem-bytes", "1", "--computations", "1e999"], "--computations"),
    (DOT + ["--bogus"], "--bogus"),
    (DOT + ["--json", "--json"], "--json was given more than once"),
    (DOT + ["stray"], "stray"),
    # ------------------------------------------------------------ density bound: files
    (DOT + ["--hierarchy", "{dir}"], "is a directory"),
    (DOT + ["--hierarchy", "{bin}"], "not a text file"),
    (DOT + ["--hierarchy", "{empty}"], "expected a list of [[layer]]"),
    (DOT + ["--hierarchy", "{trunc}"], "not valid TOML"),
    (DOT + ["--hierarchy", "{big}"], "at most 1048576 bytes"),
    (DOT + ["--hierarchy", "/dev/zero"], "not a regular file"),
    (DOT + ["--hierarchy", "{ok}/missing.toml"], "no such file"),
    (DOT + ["--hierarchy", ""], "hierarchy = ''"),
    (DOT + ["--hierarchy", "cray-1"], "valid built-ins are src-map-c"),
    (DOT + ["--hierarchy", "{negsize}"], "size_bytes = -4"),
    (DOT + ["--hierarchy", "{nanbw}"], "bandwidth_bytes_per_s = nan"),
    (DOT + ["--hierarchy", "{zerobw}"], "bandwidth_bytes_per_s = 0"),
    (DOT + ["--hierarchy", "{strsize}"], "size_bytes = 'big'"),
    (DOT + ["--hierarchy", "{boolsize}"], "size_bytes = True"),
    (DOT + ["--hierarchy", "{nobw}"], "lacks bandwidth_bytes_per_s"),
    (DOT + ["--hierarchy", "{nolayers}"], "expected a list of [[layer]]"),
    (DOT + ["--hierarchy", "{layerstr}"], "expected a list of [[layer]]"),
    (DOT + ["--hierarchy", "{unknownkey}"], "layer 'a' has unknown key 'speed'"),
    (DOT + ["--hierarchy", "{layers}"], "key 'layers' is invalid: a hierarchy has name, layer "
                                        "(as [[layer]] tables) (did you mean 'layer'?)"),
    (DOT + ["--hierarchy", "{nmae}"], "key 'nmae' is invalid"),
    (DOT + ["--hierarchy", "{bandwith}"], "layer 'a' has unknown key 'bandwith_bytes_per_s' "
                                          "(did you mean 'bandwidth_bytes_per_s'?)"),
    (DOT + ["--hierarchy", "{dupe}"], "appear twice"),
    (DOT + ["--hierarchy", "{intname}"], "hierarchy name = 5"),
    (DOT + ["--hierarchy", "{neglat}"], "latency_s = -1"),
    (DOT + ["--hierarchy", "{infsize}"], "size_bytes = inf"),
    (DOT + ["--hierarchy", "{items}"], "layer 1 (counting from 1) is not a table"),
    (DOT + ["--hierarchy", "{two}"], "defines 2 hierarchies (a, b)"),
    (DOT + ["--hierarchy", "{file}"], "not valid TOML"),
    (BOUND + ["matmul", "--problem-bytes", "1e-300", "--computations", "1e300"],
     "density ρ = inf"),
    (DOT + ["--hierarchy", "src-map-c", "--hierarchy", "src-map-c"], "--hierarchy was given"),
    (DOT + ["--out", "/proc/x.png"], "--out = '/proc/x.png' is invalid: cannot be written"),
    (DOT + ["--out", "{ok}/x.pdf"], "figures are written as .png or .svg"),
    (DOT + ["--out", "{ok}/missing/x.png"], "does not exist"),
    (DOT + ["--out", "{file}/x.png"], "is not a directory"),
    (DOT + ["--out", ""], "--out"),
    (DOT + ["--out", "{ok}/a.png", "--out", "{ok}/b.png"], "--out was given more than once"),
    # ------------------------------------------------------------ density probe
    (PROBE, "--out"),
    (PROBE + ["--out", "/proc/x.toml"], "cannot be written"),
    (PROBE + ["--out", "{ok}/x.json"], "write a .toml file"),
    (PROBE + ["--out", "{ok}/missing/x.toml"], "does not exist"),
    (PROBE + ["--out", "{dir}"], "directory"),
    (PROBE + ["--out", "{ok}/x.toml", "--repeats", "0"], "--repeats"),
    (PROBE + ["--out", "{ok}/x.toml", "--repeats", "101"], "--repeats"),
    (PROBE + ["--out", "{ok}/x.toml", "--repeats", "two"], "--repeats"),
    (PROBE + ["--out", "{ok}/a.toml", "--out", "{ok}/b.toml"], "--out was given"),
    (PROBE + ["--out", "{ok}/x.toml", "--quick", "--quick"], "--quick was given"),
    # ------------------------------------------------------------ measure aes
    (["measure", "aes"], "--out"),
    (["measure", "aes", "--out", "/proc/x.csv", "--from", "1KiB", "--to", "4KiB"],
     "--out = '/proc/x.csv' is invalid: cannot be written"),
    (["measure", "aes", "--out", ""], "--out"),
    (["measure", "aes", "--out", "{ok}/x.txt"], "write a .csv file"),
    (["measure", "aes", "--out", "{csvdir}"], "directory"),
    (["measure", "aes", "--out", "{ok}/missing/x.csv"], "does not exist"),
    (["measure", "aes", "--out", "{file}/x.csv"], "is not a directory"),
    (AES + ["--from", "0B"], "--from = '0B'"),
    (AES + ["--from", "-1KiB"], "--from = '-1KiB'"),
    (AES + ["--from", "abc"], "--from = 'abc'"),
    (AES + ["--from", ""], "--from = ''"),
    (AES + ["--from", "nan"], "--from = 'nan'"),
    (AES + ["--from", "inf"], "--from = 'inf'"),
    (AES + ["--from", "1e400B"], "finite number of bytes"),
    (AES + ["--from", "1e-400B"], "finite number of bytes"),
    (AES + ["--from", "12XB"], "unknown unit"),
    (AES + ["--from", "0x10"], "--from = '0x10'"),
    (AES + ["--from", "1" * 200], "--from = '11111"),
    (AES + ["--from", "0.5B"], "at least 1B"),
    (AES + ["--from", "3B", "--to", "3.5B"], "contains no power of two"),
    (AES + ["--from", "1MiB", "--to", "1KiB"], "need from < to"),
    (AES + ["--from", "1KiB", "--to", "1KiB"], "need from < to"),
    (AES + ["--to", "2TiB"], "at most"),
    (AES + ["--to", "1EiB"], "unknown unit"),
    (AES + ["--from", "1KiB", "--from", "2KiB"], "--from was given more than once"),
    (AES + ["--repeats", "0"], "--repeats"),
    (AES + ["--repeats", "-1"], "--repeats"),
    (AES + ["--repeats", "1.5"], "--repeats"),
    (AES + ["--repeats", "1001"], "--repeats"),
    (AES + ["--repeats", ""], "--repeats"),
    (AES + ["--seconds", "0"], "--seconds"),
    (AES + ["--seconds", "61"], "--seconds"),
    (AES + ["--seconds", "nan"], "--seconds"),
    (AES + ["--mode", "gcm"], "'gcm' is not one of"),
    (AES + ["--mode", ""], "--mode"),
    (AES + ["--host", "none"], "--host"),
    (AES + ["--huge-pages", "--no-huge-pages"], "--huge-pages / --no-huge-pages was given"),
    (AES + ["--json", "--json"], "--json was given more than once"),
    (AES + ["--out", "{ok}/other.csv"], "--out was given more than once"),
    (AES + ["--bogus"], "--bogus"),
    (AES + ["extra"], "extra"),
    # ------------------------------------------------------------ measure sha256
    (["measure", "sha256"], "--out"),
    (["measure", "sha256", "--out", "/proc/x.csv"], "cannot be written"),
    (SHA + ["--mode", "cbc"], "--mode"),
    (SHA + ["--host", "table"], "--host"),
    (SHA + ["--from", "0B"], "--from"),
    (SHA + ["--to", "nonsense"], "--to"),
    (SHA + ["--repeats", "0"], "--repeats"),
    (SHA + ["--seconds", "x"], "--seconds"),
    # ------------------------------------------------------------ measure offload
    (["measure", "offload"], "--out"),
    (["measure", "offload", "--out", "/proc/x.csv"], "cannot be written"),
    (["measure", "offload", "--out", "{ok}/x.json"], "write a .csv file"),
    (OFF + ["--target", "nan"], "--target = 'nan'"),
    (OFF + ["--target", "inf"], "--target = 'inf'"),
    (OFF + ["--target", "-inf"], "--target"),
    (OFF + ["--target", "0"], "--target = '0'"),
    (OFF + ["--target", "-1"], "--target = '-1'"),
    (OFF + ["--target", "61"], "between 0.001 and 60"),
    (OFF + ["--target", "0.0001"], "between 0.001 and 60"),
    (OFF + ["--target", "soon"], "must be a real number"),
    (OFF + ["--kernel", "md5"], "'md5' is not one of"),
    (OFF + ["--from", "0B"], "--from"),
    (OFF + ["--from", "0.25B", "--to", "1KiB"], "at least 1B"),
    (OFF + ["--to", "4GiB"], "at most"),
    (OFF + ["--repeats", "0"], "--repeats"),
    (OFF + ["--kernel", "aes", "--kernel", "sha256"], "--kernel was given more than once"),
]


def _fill(argv, files, ok):
    return [a.format(ok=ok, **files) if "{" in a and "}" in a and "(" not in a else a
            for a in argv]


def test_the_table_is_large_enough():
    assert len(CASES) >= 110


@pytest.mark.parametrize("argv, words", CASES, ids=[" ".join(c[0])[:60] for c in CASES])
def test_bad_input_is_one_line_and_exit_2(cli, files, tmp_path, argv, words):
    argv = _fill(argv, files, str(tmp_path))
    words = _fill([words], files, str(tmp_path))[0]
    code, out, err = cli(*argv)
    lines = err.strip().splitlines()
    assert code == 2, (code, err)
    assert len(lines) == 1 and lines[0].startswith("accelperf: error: "), err
    assert "Traceback" not in err and words in err
    assert out == ""                       # nothing half-printed before the error
    assert sorted(os.listdir(tmp_path)) == []     # no file or directory left behind


def test_no_output_or_directory_is_created_by_a_refused_measurement(cli, tmp_path):
    code, _, _ = cli("measure", "aes", "--out", str(tmp_path / "new" / "aes.csv"))
    assert code == 2 and not (tmp_path / "new").exists()


def test_help_may_be_asked_twice(cli):
    code, out, _ = cli("density", "bound", "--help", "--help")
    assert code == 0 and "--algorithm" in out


def test_a_group_alone_prints_its_help_and_exits_2(cli):
    code, out, err = cli("density")
    assert code == 2 and "Commands:" in out and "bound" in out and err == ""


def test_ctrl_c_anywhere_in_a_command_exits_130(cli, monkeypatch):
    import accelperf.density as density

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(density, "rate_bound", interrupted)
    code, _, err = cli("density", "bound", "--algorithm", "dot")
    assert code == 130 and err.strip().splitlines()[-1] == "accelperf: interrupted"


def test_an_internal_error_is_one_line_with_status_1(cli, monkeypatch):
    import accelperf.density as density

    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug")
    monkeypatch.setattr(density, "rate_bound", broken)
    code, _, err = cli("density", "bound", "--algorithm", "dot")
    assert code == 1 and len(err.strip().splitlines()) == 1
    assert "internal error: ZeroDivisionError: a bug" in err and "Traceback" not in err
    monkeypatch.setenv("ACCELPERF_DEBUG", "1")
    with pytest.raises(ZeroDivisionError):
        main(["density", "bound", "--algorithm", "dot"])


# ---------------------------------------------------------------- Hypothesis: parsers
NUMBERS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(),
                    st.integers(min_value=10**300, max_value=10**400))


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=40), NUMBERS,
                 st.from_regex(r"\s*-?[0-9.eE+-]{0,8}\s*[KMGTkmgti]?[iI]?[bB]?\s*",
                               fullmatch=True)))
def test_size_parser_returns_a_positive_size_or_names_the_option(text):
    try:
        size = parse_size(text, name="--from")
    except ModelError as exc:
        assert str(exc).startswith("--from = ")
        return
    assert math.isfinite(size) and size > 0


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=40), NUMBERS,
                 st.from_regex(r"-?[0-9.eE+-]{0,8}[kKMG]?[hH][zZ]", fullmatch=True)))
def test_frequency_parser_returns_hertz_or_names_the_option(text):
    try:
        hz = parse_frequency(text, name="--frequency")
    except ModelError as exc:
        assert str(exc).startswith("--frequency = ")
        return
    assert math.isfinite(hz) and hz > 0


MAP_C = hierarchy("src-map-c")


def _judge(text):
    """A formula either builds and bounds to a finite (or no-limit) rate >= 0, or is
    refused with a ModelError: never another exception, never a NaN or negative bound."""
    try:
        alg = from_formula(text)
        result = rate_bound(alg, MAP_C)
    except ModelError:
        return None
    assert result.bound >= 0 and not math.isnan(result.bound)
    assert all(r.rho is None or (math.isfinite(r.rho) and r.rho >= 0) for r in result.layers)
    return result


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("alphs0123456789.e+-*/()^ =,qrtmxinbgo_'[]%<")),
               max_size=60))
def test_formula_parser_on_random_text(text):
    _judge(text)


_ATOMS = st.one_of(st.sampled_from(["alpha", "s", "pi", "e", "0", "1", "2.5", "1e308",
                                    "1e-308", "-1"]),
                   st.floats(allow_nan=False, allow_infinity=False).map(repr))
_EXPRESSIONS = st.recursive(
    _ATOMS,
    lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "**"]), inner).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(st.sampled_from(["sqrt", "log", "log2", "log10", "exp", "abs"]), inner).map(
            lambda t: f"{t[0]}({t[1]})"),
        st.tuples(st.sampled_from(["min", "max"]), inner, inner).map(
            lambda t: f"{t[0]}({t[1]}, {t[2]})"),
        inner.map(lambda x: f"-{x}")),
    max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(_EXPRESSIONS, st.sampled_from(["", "rho = ", "eta = "]))
def test_formula_grammar_never_gives_an_undefined_bound(body, prefix):
    _judge(prefix + body)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=30))
def test_cli_size_option_on_random_text_never_measures(text):
    code = main(["measure", "aes", "--out", "/proc/x.csv", "--from", text, "--to", "4KiB"])
    assert code == 2


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])   # read once per example
@given(st.one_of(st.text(max_size=20), NUMBERS.map(str)),
       st.sampled_from(["--operand-bytes", "--compute-ceiling"]))
def test_cli_number_options_on_random_text(capsys, text, option):
    code = main(["density", "bound", "--algorithm", "dot", option, text, "--json"])
    out, err = capsys.readouterr()
    assert code in (0, 2) and "Traceback" not in err
    if code == 2:
        assert len(err.strip().splitlines()) == 1 and option in err
    else:
        assert '"bound"' in out


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=300))
def test_csv_reader_on_random_bytes(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("csv") / "t.csv"
    path.write_bytes(b"kernel,mode,granularity_bytes,seconds_min,seconds_median\n" + data)
    try:
        t = read_timings(path)
    except ModelError as exc:
        assert "data = " in str(exc)
        return
    assert (t.host > 0).all() and (t.accel > 0).all() and len(set(t.granularity)) == len(
        t.granularity)


# ---------------------------------------------------------------- the Python API
def _api_cases():
    from accelperf.density import Algorithm, Hierarchy, Layer, algorithm, matmul
    from accelperf.density.formula import Formula
    from accelperf.measure.crypto import measure_kernel
    from accelperf.units import log_grid, powers_of_two
    map_c = hierarchy("src-map-c")
    return [
        ("algorithm(None)", lambda: algorithm(None), "algorithm = None"),
        ("algorithm('dot', 'x')", lambda: algorithm("dot", "x"), "operand_bytes = 'x'"),
        ("matmul(True)", lambda: matmul(True), "operand_bytes = True"),
        ("matmul(nan)", lambda: matmul(float("nan")), "operand_bytes = nan"),
        ("from_formula(None)", lambda: from_formula(None), "formula = 'None'"),
        ("Algorithm eta=5", lambda: Algorithm("x", eta=5), "eta = 5"),
        ("rho('a')", lambda: matmul().rho("a"), "alpha = 'a'"),
        ("rho(-1)", lambda: matmul().rho(-1), "alpha = -1.0"),
        ("rho(nan)", lambda: matmul().rho(float("nan")), "alpha = nan"),
        ("eta returns text", lambda: Algorithm("x", lambda a: "abc").rho(1.0), "eta of"),
        ("with_problem(-1, 5)", lambda: matmul().with_problem(-1, 5), "total_bytes = -1"),
        ("Layer(None, ...)", lambda: Layer(None, 1, 1), "layer name = None"),
        ("Layer size '1'", lambda: Layer("a", "1", 1), "size_bytes = '1'"),
        ("Hierarchy None layers", lambda: Hierarchy("h", None), "layers = None"),
        ("Hierarchy [1]", lambda: Hierarchy("h", [1]), "must be Layer objects"),
        ("Hierarchy no name", lambda: Hierarchy("", (Layer("a", 1, 1),)), "hierarchy name"),
        ("from_dict([])", lambda: Hierarchy.from_dict("h", []), "list of [[layer]]s"),
        ("hierarchy(5)", lambda: hierarchy(5), "hierarchy = 5"),
        ("rate_bound('dot', ...)", lambda: rate_bound("dot", map_c), "algorithm = 'dot'"),
        ("rate_bound(..., 'h')", lambda: rate_bound(matmul(), "h"), "hierarchy = 'h'"),
        ("rate_bound ceiling 'x'", lambda: rate_bound(matmul(), map_c, "x"), "compute_ceiling"),
        ("Formula on text", lambda: Formula("alpha", ("alpha",))(alpha="x"), "on numbers"),
        ("Formula missing var", lambda: Formula("alpha", ("alpha", "s"))(alpha=1), "needs"),
        ("parse_size(None)", lambda: parse_size(None), "size = 'None'"),
        ("parse_size(-0.0)", lambda: parse_size(-0.0), "size = -0.0"),
        ("parse_size(10**400)", lambda: parse_size(10**400), "an integer of 401 digits"),
        ("parse_frequency(True)", lambda: parse_frequency(True), "frequency = 'True'"),
        ("powers_of_two(1, inf)", lambda: powers_of_two(1, float("inf")), "granularity range"),
        ("powers_of_two('a', 5)", lambda: powers_of_two("a", 5), "granularity range"),
        ("log_grid(1, 10, 0)", lambda: log_grid(1, 10, 0), "points = 0"),
        ("measure_kernel(['aes'])", lambda: measure_kernel(["aes"], [16]), "kernel = ['aes']"),
        ("measure_kernel(None sizes)", lambda: measure_kernel("aes", None), "granularities"),
        ("measure_kernel(repeats=1.5)", lambda: measure_kernel("aes", [16], repeats=1.5),
         "repeats = 1.5"),
        ("probe(repeats='x')", lambda: REAL_PROBE(repeats="x"), "repeats = 'x'"),
        ("read_timings(None)", lambda: read_timings(None), "data = None"),
    ]


@pytest.mark.parametrize("case", range(len(_api_cases())))
def test_api_bad_input_raises_model_error_naming_the_parameter(case):
    name, call, words = _api_cases()[case]
    with pytest.raises(ModelError) as err:
        call()
    assert words in str(err.value), (name, str(err.value))


def test_invalid_raises_even_where_the_raise_is_forgotten():
    """Issue 33 item 6: a Ψ written ``if b < 1: invalid(...)`` refused nothing, because
    invalid() returned the error; it raises it now, with the one-line message and no
    printed context from an exception that was being handled."""
    from accelperf.errors import invalid
    from accelperf.lpn import Net, simulate

    def model():
        net = Net("forgetful")
        req = net.token_type("Request", "bytes")
        start, done = net.place("requests", req), net.place("done", req)
        net.transition("copy", inputs={start: 1}, outputs={done: 1},
                       delay=lambda requests: 1 + requests.bytes)
        net.start, net.done = start, done

        def psi(sizes):
            for b in sizes:
                if not isinstance(b, int) or b < 1:
                    invalid("request size", b, "a whole number of bytes >= 1")   # no raise
            return [{"bytes": b} for b in sizes]
        net.tokens_from_input = psi
        return net.build()

    assert simulate(model(), [3]).latency == 4
    for bad in ([0], [1.5]):
        with pytest.raises(ModelError, match=rf"request size = {bad[0]!r} is invalid"):
            simulate(model(), bad)
    try:
        float("x")
    except ValueError:
        with pytest.raises(ModelError) as caught:
            raise invalid("--size", "x", "a number")
    assert caught.value.__suppress_context__ and caught.value.__cause__ is None
