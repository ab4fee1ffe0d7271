"""The compiled engine against the reference semantics and the Python engine: the same
traces, results, limits, reports and error texts; int64 range; choosing a backend."""

import dataclasses
import json
from collections import deque
import os
import warnings

import pytest
from hypothesis import HealthCheck, given, settings

from accelperf.errors import ModelError
from accelperf.lpn import (DeadlockError, LimitError, Net, Out, SimulationError, count,
                           simulate)
from accelperf.lpn import compiled
from accelperf.lpn.library import LIBRARY
from lpn_random import nets
from test_lpn_semantics import LIMITS, assert_same, credit_net, zero_delay_loop

pytestmark = pytest.mark.skipif(compiled.compiler_missing() is not None,
                                reason=f"compiled backend: {compiled.compiler_missing()}")


@pytest.fixture(autouse=True, scope="module")
def private_cache(tmp_path_factory):
    """The nets these tests draw are compiled into a cache of their own, not the user's."""
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache"))
    yield
    if old is None:
        del os.environ["XDG_CACHE_HOME"]
    else:
        os.environ["XDG_CACHE_HOME"] = old


def same_result(model, marking, **options):
    """Both engines on one input: equal results, or equal errors, reports and results.
    Returns the compiled run's result and its error (None when it finished)."""
    outcomes = []
    for backend in ("python", "compiled"):
        try:
            outcomes.append(simulate(model, marking, trace=True, backend=backend, **options))
        except SimulationError as exc:
            outcomes.append(exc)
    py, c = outcomes
    error = None
    if isinstance(py, SimulationError) or isinstance(c, SimulationError):
        assert type(c) is type(py) and str(c) == str(py)
        assert c.report == py.report
        error, py, c = c, py.result, c.result
    assert c.backend == "compiled" and py.backend == "python"
    assert dataclasses.replace(c, backend="python") == py
    assert c.trace == py.trace and c.utilisation == py.utilisation
    return c, error


# Each drawn net is compiled (about 0.3 s): fewer examples than the Python engine's test.
FEW = settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))


@FEW
@given(nets())
def test_compiled_follows_the_reference_on_random_nets(drawn):
    model, given_tokens, _ = drawn
    assert_same(model, model.marking(given_tokens), backend="compiled", **LIMITS)
    same_result(model, model.marking(given_tokens), **LIMITS)


@pytest.mark.parametrize("name", sorted(LIBRARY))
def test_compiled_follows_the_reference_on_the_library(name):
    model = LIBRARY[name]()
    marking = model.marking()
    ref = assert_same(model, marking, backend="compiled")
    assert ref.stopped is None and ref.latency is not None
    assert same_result(model, marking)[0].latency == ref.latency


def test_a_large_input_gives_the_python_engines_result():
    model = LIBRARY["block-pipeline"]()
    r, _ = same_result(model, model.marking({"width": 256, "height": 256, "mean_nnz": 20}))
    assert r.total_commits == 4 * 3 * 32 * 32


def test_deadlock_reports_are_the_python_engines():
    net = Net("stuck")
    job = net.token_type("Job", "n")
    src, mid, done = net.place("src", job), net.place("mid", job), net.place("done", job)
    net.transition("a", inputs={src: 1}, outputs={mid: 1}, delay=lambda s: s.n)
    net.transition("b", inputs={mid: 2}, outputs={done: 1})
    net.start, net.done = src, done
    net.tokens_from_input = lambda xs: [(x,) for x in xs]
    model = net.build()
    with pytest.raises(DeadlockError, match="tokens are left in mid") as err:
        simulate(model, [1, 2, 3], backend="compiled")
    assert "b: needs 2 tokens in mid, has 1" in err.value.report
    assert "mid: 1 free, 0 locked, head {'n': 3}" in err.value.report
    same_result(model, model.marking([1, 2, 3]))
    same_result(model, model.marking([1, 2]), expected_done=2)


@pytest.mark.parametrize("model,given,limits,commits", [
    (zero_delay_loop, 1, dict(max_time=100, max_firings_per_cycle=1000), 1000),
    (zero_delay_loop, 1, dict(max_commits=77), 78),
    (credit_net, [5, 6, 7], dict(max_time=9), 3)])  # send 0-3, 3-6; receive 3-8
def test_limits_stop_both_engines_alike(model, given, limits, commits):
    r, error = same_result(model(), model().marking(given), **limits)
    assert isinstance(error, LimitError) and r.total_commits == commits


def test_limit_errors_are_limit_errors():
    with pytest.raises(LimitError, match="1000 firings started without the clock moving"):
        simulate(zero_delay_loop(), 1, max_firings_per_cycle=1000, backend="compiled")


def arithmetic_net(delay):
    net = Net("arith")
    job = net.token_type("Job", "a", "b")
    src, done = net.place("src", job), net.place("done", job)
    net.transition("op", inputs={src: 1}, outputs={done: 1}, delay=delay)
    net.start, net.done = src, done
    net.tokens_from_input = lambda xs: list(xs)
    return net.build()


@pytest.mark.parametrize("a,b", [(7, 2), (-7, 2), (7, -2), (-7, -2), (6, -3), (-6, 3)])
def test_floor_division_and_modulo_round_like_python(a, b):
    # C truncates toward zero; Python floors: -7 // 2 == -4, -7 % 2 == 1.
    model = arithmetic_net(lambda s: (s.a // s.b) * 100 + s.a % s.b + 1000)
    marking = model.marking([(a, b)])
    r, _ = same_result(model, marking)
    assert r.latency == (a // b) * 100 + a % b + 1000


@pytest.mark.parametrize("a,b,text", [(7, 0, "7 // 0: division by zero"),
                                      (9, 2, "9 / 2 is not a whole number"),
                                      (5, 0, "5 % 0: modulo by zero")])
def test_evaluation_errors_have_the_python_text(a, b, text):
    model = arithmetic_net(lambda s: where_op(s, text))
    with pytest.raises(SimulationError, match=f"transition 'op' at cycle 0: {text}"):
        simulate(model, [(a, b)], backend="compiled")
    same_result(model, model.marking([(a, b)]))


def where_op(s, text):
    return s.a // s.b if "//" in text else s.a / s.b if "/" in text else s.a % s.b


def test_operands_fail_in_pythons_order():
    # Both operands fail; Python reports the left one first, and so must C.
    model = arithmetic_net(lambda s: s.a // s.b + s.a % s.b)
    with pytest.raises(SimulationError, match="3 // 0: division by zero"):
        simulate(model, [(3, 0)], backend="compiled")


def test_values_outside_int64_are_refused_not_wrapped():
    model = arithmetic_net(lambda s: s.a * s.b)
    with pytest.raises(ModelError, match=r"token value = 9223372036854775808 in place 'src'"):
        simulate(model, [(2**63, 1)], backend="compiled")
    with pytest.raises(SimulationError, match=r"4611686018427387904 \* 4 leaves the compiled "
                                              r"backend's int64 range"):
        simulate(model, [(2**62, 4)], backend="compiled")
    assert simulate(model, [(2**62, 4)]).latency == 2**64      # Python: unbounded



def test_tokens_reach_the_engine_as_given_by_every_path():
    """lpn_flatten (C) takes lists and tuples of tokens; anything else goes the Python
    way; both give the same values, in place order, and refuse what is not int64."""
    model = arithmetic_net(lambda s: s.a * s.b)
    engine = compiled.engine(model)
    given = [(i, -3 * i) for i in range(1000)] + [(-2**63, 2**63 - 1)]
    marking = model.marking(given)
    src = model.place_id("src")
    expected = [v for tok in given for v in tok]
    for kind in (list, tuple, deque):         # deque: neither, so the Python path
        tokens = {**marking.tokens, src: kind(given)}
        counts, values = engine._arrays(dataclasses.replace(marking, tokens=tokens))
        assert counts[src] == len(given) and values.tolist() == expected
    for bad, text in (((5, 2**64), "token value = 18446744073709551616 in place 'src'"),
                      ((5,), "tokens of place 'src' are invalid: each a tuple of 2 int"),
                      ((5, "x"), "tokens of place 'src' are invalid: each a tuple of 2 int")):
        for kind in (list, tuple, deque):
            tokens = {**marking.tokens, src: kind(given[:3] + [bad] + given[3:])}
            with pytest.raises(ModelError, match=text):
                engine._arrays(dataclasses.replace(marking, tokens=tokens))


def test_another_interpreter_converts_the_tokens_in_python(monkeypatch, tmp_path):
    """tokens.c needs CPython's C API: elsewhere the engine is built without it."""
    monkeypatch.setattr(compiled, "_CPYTHON", False)
    model = arithmetic_net(lambda s: s.a * s.b)
    engine = compiled.CompiledEngine(model, cache=tmp_path)
    assert engine.flatten is None and "lpn_flatten" not in engine.source
    given = [(i, -3 * i) for i in range(100)]
    counts, values = engine._arrays(model.marking(given))
    assert values.tolist() == [v for tok in given for v in tok]

def test_counts_later_tokens_zero_weights_and_routes():
    net = Net("mix")
    job = net.token_type("Job", "k", "v")
    src, even, odd, done = (net.place(n, job) for n in ("src", "even", "odd", "done"))
    net.transition("split", inputs={src: 2}, outputs=[],
                   route=[(even, lambda s: s[1].k % 2 == 0), (odd, lambda s: s.k >= 0,
                                                              lambda s: s.v % 3)],
                   delay=lambda s: s[1].v + count("src"), concurrency=2)
    net.transition("e", inputs={even: 1}, outputs={done: 1}, delay=3)
    net.transition("o", inputs={odd: 1}, outputs={done: 1}, delay=lambda odd: odd.v)
    net.start, net.done = src, done
    net.tokens_from_input = lambda xs: list(xs)
    model = net.build()
    r, error = same_result(model, model.marking([(i, 3 * i + 1) for i in range(12)]))
    assert error is None and r.done_tokens > 0



def wide_net(n: int):
    """n transitions sharing a pool of 3 credits, each passing a job on to a transition
    declared far from it (37 i + 11 mod n) until its hops run out."""
    net = Net(f"wide{n}")
    job = net.token_type("Job", "hops", "w")
    places = [net.place(f"p{i}", job) for i in range(n)]
    pool = net.place("pool", initial=[()] * 3)
    done = net.place("done", job)
    for i in range(n):
        net.transition(
            f"t{i}", inputs={places[i]: 1, pool: 1}, outputs={pool: 1},
            route=[(done, lambda j, _p: j.hops == 0, Out(1, copy=f"p{i}")),
                   (places[(37 * i + 11) % n], lambda j, _p: j.hops > 0,
                    Out(1, props=lambda j, _p: {"hops": j.hops - 1, "w": j.w * 3 % 11}))],
            delay=lambda j, _p, i=i: (j.w + i) % 7)
    net.done = done
    net.tokens_from_input = lambda xs: {f"p{k}": [(hops, w)] for k, hops, w in xs}
    return net.build()


@pytest.mark.parametrize("n", [64, 65, 150])
def test_nets_wider_than_one_word_of_the_dirty_set(n):
    """The compiled engine keeps the transitions to re-check as bits, 64 to a word: jobs
    hop between transitions in different words and compete for one pool, so the smallest
    id must win across words as in the Python engine's heap."""
    model = wide_net(n)
    jobs = [(k, 5 + k % 4, k % 11) for k in range(0, n, 3)]
    r, error = same_result(model, model.marking(jobs))
    assert error is None and r.done_tokens == len(jobs)
    last_word = range(64 * ((n - 1) // 64), n)           # n = 64: bit 63 of word 0
    assert sum(r.commits[f"t{i}"] for i in last_word) > 0

# ---------------------------------------------------------------------- choosing a backend
def test_auto_uses_the_compiled_engine_when_it_can():
    assert simulate(credit_net(), [1, 2], backend="auto").backend == "compiled"


def test_without_a_compiler_auto_falls_back_with_a_note(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))           # no cc, gcc or clang
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # nothing compiled before
    monkeypatch.setattr(compiled, "_ENGINES", {})
    assert compiled.compiler_missing() is not None
    with pytest.warns(RuntimeWarning, match="ran the Python engine: .*no C compiler"):
        r = simulate(credit_net(), [1, 2], backend="auto")
    assert r.backend == "python" and r.latency == simulate(credit_net(), [1, 2]).latency
    with pytest.raises(compiled.CompilerError, match="no C compiler"):
        simulate(credit_net(), [1, 2], backend="compiled")


def test_a_bad_backend_name_is_one_clear_error():
    with pytest.raises(ModelError, match="backend = 'fast' is invalid: one of python, "
                                         "compiled, auto"):
        simulate(credit_net(), [1], backend="fast")


def test_the_net_is_compiled_once_not_per_input(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(compiled, "_ENGINES", {})
    model = credit_net()
    calls = []
    real = compiled.subprocess.run
    monkeypatch.setattr(compiled.subprocess, "run", lambda *a, **k: calls.append(a) or
                        real(*a, **k))
    for xs in ([1], [1, 2, 3], list(range(50))):
        simulate(model, xs, backend="compiled")
    assert len(calls) == 1
    monkeypatch.setattr(compiled, "_ENGINES", {})          # a new process: the cached library
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert simulate(credit_net(), [4], backend="compiled").latency == 8
    assert len(calls) == 1 and len(list((tmp_path / "accelperf" / "lpn").glob("*.so"))) == 1


def test_models_built_again_with_other_values_share_one_loaded_library(monkeypatch):
    """A calibration builds its model once per parameter vector: the library is compiled,
    looked up and loaded once, and each run still takes its own model's values."""
    from accelperf.lpn.library import build
    loads = []
    real = compiled.ctypes.CDLL
    monkeypatch.setattr(compiled.ctypes, "CDLL", lambda *a, **k: loads.append(a) or
                        real(*a, **k))
    monkeypatch.setattr(compiled, "_LOADED", {})
    models = [build("jpeg-decoder", params={"idct_cycles": c}) for c in (66, 70, 66)]
    engines = [compiled.engine(m) for m in models]
    assert len(loads) == 1 and engines[0].lib is engines[1].lib is engines[2].lib
    blocks = [63, 1, 1, 15, 2, 2]
    got = [simulate(m, blocks, backend="compiled").latency for m in models]
    assert got == [simulate(m, blocks, backend="python").latency for m in models]
    assert got[0] == got[2] != got[1]


def test_cli_backend_option(capsys):
    from accelperf.cli.app import main
    assert main(["lpn", "simulate", "credit-link", "--backend", "compiled", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["backend"] == "compiled" and out["final_marking"]["received"] == 5
    assert main(["lpn", "simulate", "credit-link", "--backend", "nope"]) == 2


def test_cli_auto_without_a_compiler_notes_the_fallback_once(cli, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(compiled, "_ENGINES", {})
    code, out, err = cli("lpn", "simulate", "credit-link", "--backend", "auto", "--json")
    assert code == 0 and json.loads(out)["backend"] == "python"
    assert err.strip().splitlines() == [
        "note: --backend auto runs the Python engine: no C compiler found ($CC, cc, gcc or "
        "clang on PATH)"]


def test_a_long_python_run_suggests_the_compiled_engine(cli, monkeypatch):
    """A new user waited 100 s, in silence, for an AES-GCM stream the compiled engine runs
    26 times faster (28.9 s against 1.1 s for 10,000 packets of 9,000 bytes)."""
    import accelperf.cli.lpn as lpn_cli
    monkeypatch.setattr(lpn_cli, "SLOW_PYTHON_SECONDS", -1.0)      # every run is "long"
    said = "--backend compiled runs the same net in C"
    for backend, noted in (("python", True), ("compiled", False), ("auto", False)):
        code, out, err = cli("lpn", "simulate", "credit-link", "--backend", backend)
        assert code == 0 and (said in err) is noted, err
    monkeypatch.setattr(lpn_cli, "SLOW_PYTHON_SECONDS", 10.0)
    assert said not in cli("lpn", "simulate", "credit-link")[2]
