"""Every logca command: a bad input gives one line on stderr and exit status 2 (issue 15).

Placeholders in the argument lists are files made per test: {csv} a valid measurement,
{dir} a directory, {dirsvg} a directory named like a figure, {empty} an empty file, {binary} random bytes, {huge} timings of 1e308,
{nan} a NaN timing, {slow} nothing but a header, {mixed} host and accelerated rows of two
kernels, {host} a host-times CSV for from-lpn, {badhost} one without its columns.
"""

import contextlib
import io
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelperf.cli.app import main

T2 = ["--preset", "ultrasparc-t2", "--kernel", "aes"]
GPU_SORT = str(Path(__file__).resolve().parent.parent / "examples" / "measurements" /
               "gpu-h200" / "gpu-sort.csv")
EXPLICIT = ["--L", "1", "--o", "100", "--C", "50", "--A", "30"]


def explicit(**changes):
    values = dict(L="1", o="100", C="50", A="30")
    values.update(changes)
    out = []
    for k, v in values.items():
        if v is not None:
            out += [f"--{k}", v]
    return out


NUMERIC = [("L", "-3"), ("L", "nan"), ("L", "inf"), ("L", "1e308"), ("o", "-inf"),
           ("o", "NaN"), ("o", "1e200"), ("C", "0"), ("C", "-1"), ("C", "1e308"), ("C", "1e-320"),
           ("A", "0"), ("A", "-2"), ("A", "inf"), ("A", "1e308"), ("L", "one"), ("o", ""),
           ("C", "0x10")]

CASES = [
    # show: every numeric option, huge and tiny values
    *[(["logca", "show", *explicit(**{k: v})], f"--{k}" if v in ("one", "", "0x10") else k)
      for k, v in NUMERIC],
    (["logca", "show", *EXPLICIT, "--beta", "0"], "beta"),
    (["logca", "show", *EXPLICIT, "--beta", "-1"], "beta"),
    (["logca", "show", *EXPLICIT, "--beta", "nan"], "beta"),
    (["logca", "show", *EXPLICIT, "--beta", "1e308"], "beta"),
    (["logca", "show", *EXPLICIT, "--beta", "1e-300"], "beta"),
    (["logca", "show", *explicit(A="1")], "A = 1.0 is invalid"),
    (["logca", "show", *EXPLICIT, "--A", "1"], "--A was given more than once"),
    (["logca", "show", *EXPLICIT, "--frequency", "0"], "--frequency"),
    (["logca", "show", *EXPLICIT, "--frequency", "-3GHz"], "--frequency"),
    (["logca", "show", *EXPLICIT, "--frequency", "infGHz"], "--frequency"),
    (["logca", "show", *EXPLICIT, "--latency", "sometimes"], "--latency"),
    (["logca", "show", *EXPLICIT, "--unit", "furlongs"], "--unit"),
    (["logca", "show", "--C", "1e308"], "missing --L, --o, --A"),
    (["logca", "show"], "missing --L"),
    (["logca", "show", "--preset", "tpu", "--kernel", "aes"], "valid devices"),
    (["logca", "show", "--preset", "pcie-crypto", "--kernel", "aes"], "no Table 5"),
    (["logca", "show", "--preset", "sandy-bridge", "--kernel", "sha"], "gives it only aes"),
    (["logca", "show", "--preset", "apu", "--kernel", "md5"], "valid kernels"),
    (["logca", "show", "--kernel", "aes"], "--kernel needs --preset"),
    (["logca", "show", "--preset", "apu", "--preset", "sparc-t3", "--kernel", "aes"],
     "describes one model"),
    (["logca", "show", "--preset", "apu", "--kernel", "aes", "--kernel", "fft", "--kernel",
      "gemm"], "--kernel was given 3 times"),
    (["logca", "show", *EXPLICIT, "--bogus"], "No such option"),
    # curve
    (["logca", "curve", *T2, "--from", "9XB"], "--from"),
    (["logca", "curve", *T2, "--from", "0B"], "--from"),
    (["logca", "curve", *T2, "--from", "-16B"], "--from"),
    (["logca", "curve", *T2, "--to", "infB"], "--to"),
    (["logca", "curve", *T2, "--from", "1MiB", "--to", "1KiB"], "need from < to"),
    (["logca", "curve", *T2, "--points", "1"], "--points"),
    (["logca", "curve", *T2, "--points", "many"], "--points"),
    (["logca", "curve", *T2, "--out", "x.pdf"], "--out"),
    (["logca", "curve", *T2, "--out", "/proc/x.png"], "cannot be written"),
    (["logca", "curve", *T2, "--out", "{dir}/missing/x.png"], "does not exist"),
    (["logca", "curve", *T2, "--out", "{dirsvg}"], "is a directory"),
    (["logca", "curve", *T2, "--L", "1500±200%"], "--L"),
    (["logca", "curve", *T2, "--o", "lognormal(0, 1)"], "--o"),
    (["logca", "curve", *T2, "--A", "normal(1, -1)"], "--A"),
    (["logca", "curve", *T2, "--C", "uniform(5, 1)"], "--C"),
    (["logca", "curve", *T2, "--o", "gamma(1,2)"], "--o"),
    (["logca", "curve", *T2, "--L", "1500±10%", "--draws", "0"], "--draws"),
    (["logca", "curve", *T2, "--L", "1500±10%", "--seed", "-1"], "--seed"),
    # regions, bounds, whatif, case-study
    (["logca", "regions", *T2, "--factor", "nan"], "factor"),
    (["logca", "regions", *T2, "--factor", "0.5"], "factor"),
    (["logca", "regions", *T2, "--threshold", "inf"], "threshold"),
    (["logca", "regions", *T2, "--threshold", "-0.2"], "threshold"),
    (["logca", "regions", *T2, "--samples", "1"], "--samples"),
    (["logca", "regions", *T2, "--samples", "lots"], "--samples"),
    (["logca", "regions", *T2, "--sensitivity"], "--sensitivity needs --out"),
    (["logca", "regions", *T2, "--out", "/proc/r.svg"], "cannot be written"),
    (["logca", "regions", "--C", "1e308", "--L", "1", "--o", "1", "--A", "2"], "C = 1e+308"),
    (["logca", "bounds", *T2, "--from", "2MiB", "--to", "1MiB"], "need from < to"),
    (["logca", "bounds", *explicit(A="nan")], "A = nan"),
    (["logca", "bounds", *T2, "--out", "b.csv"], "--out"),
    (["logca", "whatif", *T2], "--set is missing"),
    (["logca", "whatif", *T2, "--set", "o"], "expected NAME=VALUE"),
    (["logca", "whatif", *T2, "--set", "o=1e308"], "o = 1e+308"),
    (["logca", "whatif", *T2, "--set", "A=*0"], "factor must be"),
    (["logca", "whatif", *T2, "--set", "A=/nan"], "factor must be"),
    (["logca", "whatif", *T2, "--set", "Q=1"], "NAME must be one of"),
    (["logca", "case-study", "fpga"], "'fpga' is not one of"),
    (["logca", "case-study", "crypto", "--factor", "nan"], "factor"),
    (["logca", "case-study", "gpu", "--threshold", "0"], "threshold"),
    (["logca", "case-study", "gpu", "--out", "/proc/c.png"], "cannot be written"),
    # advise
    (["logca", "advise", *T2], "Missing option '--at'"),
    (["logca", "advise", *T2, "--at", "0B"], "--at"),
    (["logca", "advise", *T2, "--at", "nanB"], "--at"),
    (["logca", "advise", *T2, "--at", "4KiB", "--factor", "1"], "factor"),
    (["logca", "advise", *T2, "--at", "4KiB", "--factor", "inf"], "factor"),
    (["logca", "advise", *T2, "--at", "4KiB", "--threshold", "nan"], "threshold"),
    (["logca", "advise", *explicit(C="-1"), "--at", "4KiB"], "C = -1.0"),
    (["logca", "advise", "--preset", "tpu", "--kernel", "aes", "--at", "4KiB"], "valid devices"),
    # design
    (["logca", "design", *T2], "Missing option '--target'"),
    (["logca", "design", *T2, "--target", "g2<=1KiB"], "--target"),
    (["logca", "design", *T2, "--target", "g1<=-1KiB"], "--target"),
    (["logca", "design", *T2, "--target", "speedup(4KiB)>=inf"], "--target"),
    (["logca", "design", *T2, "--target", "speedup()>=2"], "--target"),
    (["logca", "design", *T2, "--target", "g1<=1KiB", "--pair", "o"], "--pair"),
    (["logca", "design", *T2, "--target", "g1<=1KiB", "--pair", "o,o"], "--pair"),
    (["logca", "design", *T2, "--target", "g1<=1KiB", "--pair", "o,beta"], "--pair"),
    (["logca", "design", *T2, "--target", "g1<=1KiB", "--out", "f.png"], "--out needs --pair"),
    (["logca", "design", *T2, "--target", "g1<=1KiB", "--pair", "o,L", "--out", "/proc/f.png"],
     "cannot be written"),
    (["logca", "design", *T2, "--target", "g1<=1KiB", "--points", "2"], "--points"),
    # times
    (["logca", "times", *T2, "--points", "0"], "--points"),
    (["logca", "times", *T2, "--out", "t.txt"], "--out"),
    (["logca", "times", *explicit(o="-1")], "o = -1.0"),
    (["logca", "times", *T2, "--from", "1GiB", "--to", "1MiB"], "need from < to"),
    # fit
    (["logca", "fit", "nope.csv"], "data = 'nope.csv'"),
    (["logca", "fit", GPU_SORT, "--cv", "1"], "--cv = 1 is invalid"),
    (["logca", "fit", GPU_SORT, "--cv", "50"], "--cv = 50 is invalid"),
    (["logca", "fit", GPU_SORT, "--select", "--cv", "50"], "--cv = 50 is invalid"),
    (["logca", "fit", GPU_SORT, "--predict", "nope.csv"], "--predict = 'nope.csv'"),
    (["logca", "fit", "{dir}"], "is a directory"),
    (["logca", "fit", "{empty}"], "empty"),
    (["logca", "fit", "{binary}"], "data ="),
    (["logca", "fit", "{huge}"], "1e+308' is invalid: must be a finite number > 0 and <= 86400 (seconds per operation"),
    (["logca", "fit", "{nan}"], "must be a finite number > 0"),
    (["logca", "fit", "{slow}"], "host and accel rows"),
    (["logca", "fit", "{mixed}"], "mixes kernels aes, sha"),
    (["logca", "fit", "{csv}", "--frequency", "fast"], "--frequency"),
    (["logca", "fit", "{csv}", "--frequency", "-1GHz"], "--frequency"),
    (["logca", "fit", "{csv}", "--frequency", "auto"], "records no core clock"),
    (["logca", "fit", "{csv}", "--from", "1MiB", "--to", "1KiB"], "need from < to"),
    (["logca", "fit", "{csv}", "--from", "64MiB"], "only 0 granularities"),
    (["logca", "fit", "{csv}", "--bootstrap", "-1"], "--bootstrap"),
    (["logca", "fit", "{csv}", "--monte-carlo", "-5"], "--monte-carlo"),
    (["logca", "fit", "{csv}", "--statistic", "mean"], "--statistic"),
    (["logca", "fit", "{csv}", "--latency", "both"], "--latency"),
    (["logca", "fit", "{csv}", "--out", "/proc/fit.png"], "cannot be written"),
    (["logca", "fit", "{csv}", "--out", "fit.pdf"], "--out"),
    # from-lpn
    (["logca", "from-lpn", "darwin", "--host-C", "12.5"], "mapping exists for"),
    (["logca", "from-lpn", "pipeline-over-link"], "--host-C is missing"),
    (["logca", "from-lpn", "pipeline-over-link", "--host-C", "nan"], "host-C"),
    (["logca", "from-lpn", "pipeline-over-link", "--host-C", "-1"], "host-C"),
    (["logca", "from-lpn", "pipeline-over-link", "--host-C", "1", "--host-beta", "0"], "host-beta"),
    (["logca", "from-lpn", "pipeline-over-link", "--host-C", "1", "--sizes", "64B"], "--sizes"),
    (["logca", "from-lpn", "pipeline-over-link", "--host-C", "1", "--sizes", "1MiB..1KiB"],
     "need from < to"),
    (["logca", "from-lpn", "pipeline-over-link", "--host-C", "1", "--sizes", "1B..1TiB"],
     "at most 16 MiB"),
    (["logca", "from-lpn", "pipeline-over-link", "--host-C", "1", "--sizes", "1B..1B,2B"],
     "--sizes"),
    (["logca", "from-lpn", "pipeline-over-link", "--host-C", "1", "--sizes", "a,b,c"], "--sizes"),
    (["logca", "from-lpn", "pipeline-over-link", "--host-C", "1", "--host-csv", "{host}"],
     "both given"),
    (["logca", "from-lpn", "pipeline-over-link", "--host-csv", "{badhost}"], "host_cycles"),
    (["logca", "from-lpn", "pipeline-over-link", "--host-csv", "missing.csv"], "--host-csv"),
    (["logca", "from-lpn", "pipeline-over-link", "--host-C", "1", "--out", "/proc/l.png"],
     "cannot be written"),
    # presets and the group itself
    (["logca", "presets", "--bogus"], "No such option"),
    (["logca", "nothing"], "No such command"),
]


@pytest.fixture
def files(tmp_path):
    header = "kernel,mode,granularity_bytes,seconds_min,seconds_median,seconds_max,repeats\n"
    rows = lambda t0, t1, k1="aes": "".join(
        f"aes,host,{g},{t0(g)},{t0(g)},{t0(g)},3\n{k1},accel,{g},{t1(g)},{t1(g)},{t1(g)},3\n"
        for g in 2 ** np.arange(4, 14))
    paths = {"dir": tmp_path / "folder", "empty": tmp_path / "empty.csv",
             "binary": tmp_path / "binary.csv", "csv": tmp_path / "ok.csv",
             "huge": tmp_path / "huge.csv", "nan": tmp_path / "nan.csv",
             "slow": tmp_path / "header.csv", "mixed": tmp_path / "mixed.csv",
             "host": tmp_path / "host.csv", "badhost": tmp_path / "badhost.csv",
             "dirsvg": tmp_path / "figure.svg"}
    paths["dir"].mkdir()
    paths["dirsvg"].mkdir()
    paths["empty"].write_text("")
    paths["binary"].write_bytes(bytes(range(256)) * 4)
    paths["csv"].write_text(header + rows(lambda g: 3e-9 * g, lambda g: 1e-8 + 6e-10 * g))
    paths["huge"].write_text(header + rows(lambda g: 1e308, lambda g: 1e-8))
    paths["nan"].write_text(header + rows(lambda g: math.nan, lambda g: 1e-8))
    paths["slow"].write_text(header)
    paths["mixed"].write_text(header + rows(lambda g: 3e-9 * g, lambda g: 1e-8, "sha"))
    paths["host"].write_text("granularity_bytes,host_cycles\n64,800\n1024,12800\n")
    paths["badhost"].write_text("size,time\n64,800\n")
    return {k: str(v) for k, v in paths.items()}


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv, words", CASES, ids=[" ".join(a[1:])[:70] for a, _ in CASES])
def test_bad_input_is_one_line_and_exit_2(argv, words, files, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    argv = [a.format(**files) if "{" in a and "(" not in a else a for a in argv]
    code, _, err = run(argv, capsys)
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert words in err, err


def test_the_table_is_large_enough():
    assert len(CASES) >= 70
    commands = {argv[1] for argv, _ in CASES}
    assert commands >= {"show", "curve", "regions", "bounds", "whatif", "case-study", "fit",
                        "presets", "advise", "design", "times", "from-lpn"}


def test_nothing_is_written_when_the_input_is_bad(files, capsys, tmp_path):
    out = tmp_path / "never.png"
    code, _, _ = run(["logca", "design", *T2, "--target", "g9<=1", "--pair", "o,L", "--out",
                      str(out)], capsys)
    assert code == 2 and not out.exists()


def test_json_with_out_does_both(files, capsys, tmp_path):
    out = tmp_path / "curve.csv"
    code, stdout, err = run(["logca", "curve", *T2, "--out", str(out), "--json"], capsys)
    assert code == 0 and out.exists() and '"granularity_bytes"' in stdout and "wrote" in err


# ---------------------------------------------------------------- option parsers, at random
def run_captured(argv):
    """(status, stderr) with stdout and stderr captured per call (Hypothesis examples cannot
    share pytest's function-scoped capsys)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, err.getvalue()


def check_clean(code, err):
    assert code in (0, 2) and "Traceback" not in err
    if code == 2:
        assert len(err.strip().splitlines()) == 1


@settings(max_examples=150, deadline=None)
@given(option=st.sampled_from(["--L", "--o", "--C", "--A", "--beta"]),
       value=st.one_of(st.text(max_size=20), st.floats().map(repr),
                       st.integers(-10**400, 10**400).map(str)))
def test_random_model_values_never_crash(option, value):
    values = dict(zip(["--L", "--o", "--C", "--A", "--beta"], ["1", "100", "50", "30", "1"]))
    values[option] = value
    check_clean(*run_captured(["logca", "show"] + [x for kv in values.items() for x in kv]))


@settings(max_examples=100, deadline=None)
@given(text=st.one_of(st.text(max_size=30), st.from_regex(
    r"(g1|g_half|speedup\([0-9]{1,3}KiB\))(<=|>=|<|>)-?[0-9.e+]{1,8}(B|KiB)?", fullmatch=True)))
def test_random_targets_and_sizes_never_crash(text):
    for argv in (["logca", "design", *T2, "--target", text],
                 ["logca", "advise", *T2, "--at", text],
                 ["logca", "curve", *T2, "--L", text, "--draws", "20", "--json"]):
        check_clean(*run_captured(argv))
