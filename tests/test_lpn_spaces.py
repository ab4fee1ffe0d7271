"""One input space, one space file format (issues 23 and 27): every shipped space file
loads for every command, witnesses read as the input the user gave, and a space in which
nothing varies is decided by simulating its one input."""

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings

from accelperf.errors import ModelError
from accelperf.lpn import semantics
from accelperf.lpn.analysis import refine
from accelperf.lpn.analysis.space import load_space, space_from_dict
from accelperf.lpn.analysis.verify import latency_bound, prove
from accelperf.lpn.library import build
from accelperf.lpn.loader import load_model

from lpn_random import nets

ROOT = Path(__file__).resolve().parents[1]
SPACES = ROOT / "examples" / "spaces"
PIPELINE = f"{ROOT / 'examples' / 'three_stage_pipeline.py'}:build"
PIPELINE_SPACE = str(SPACES / "three-stage-50-to-100-items.toml")
USER_MODELS = {"three-stage": PIPELINE}


@pytest.mark.parametrize("path", sorted(SPACES.glob("*.toml")), ids=lambda p: p.name)
def test_every_shipped_space_file_follows_the_one_format(path):
    """Each file names its model and loads against it through the one reader."""
    import tomllib
    name = tomllib.loads(path.read_text())["model"]
    space = load_space(load_model(USER_MODELS.get(name, name)), path)
    assert space.places and space.model == name


def test_the_same_space_file_serves_interface_and_verify(cli):
    """Issue 27's pipeline: `input = "count(items)"` with `count = "50..100"` works for
    both commands; the interface finds 5 cycles per item (compute is the bottleneck)."""
    code, out, err = cli("lpn", "interface", PIPELINE, "--space", PIPELINE_SPACE, "--json")
    assert code == 0, err
    assert "5*n_items" in out
    code, out, err = cli("lpn", "verify", PIPELINE, "--space", PIPELINE_SPACE, "--prove",
                         "latency <= 600", "--json")
    assert code == 0, err
    assert json.loads(out)["holds"] is True


def test_a_refutation_prints_the_count_the_user_gave_and_exits_1(cli):
    """latency = 5 n + 3 (fetch 2, compute 5 per item, writeback 1): 'latency <= 400'
    first fails at 80 items, and the counterexample reads 80, not 80 tokens."""
    code, out, _ = cli("lpn", "verify", PIPELINE, "--space", PIPELINE_SPACE, "--prove",
                       "latency <= 400")
    assert code == 1
    assert "counterexample: 80 with latency = 403" in out


def test_without_input_a_witness_is_each_places_count_or_varying_properties(tmp_path, cli):
    bare = tmp_path / "bare.toml"
    bare.write_text('[places.items]\ncount = "50..100"\n')
    code, out, _ = cli("lpn", "verify", PIPELINE, "--space", str(bare), "--bound", "max")
    assert code == 0 and "witness: {'items': 100} simulates to 503 cycles" in out
    jpeg = build("jpeg-decoder")
    space = space_from_dict(jpeg, {"places": {"blocks": {
        "count": 6, "properties": {"symbols": [1, 63]}}}})
    worst = latency_bound(jpeg, space, "max")
    assert worst.witness.input == {"blocks": [63] * 6}


def test_a_space_where_nothing_varies_is_decided_without_the_class_search(monkeypatch):
    """Every token of the pipeline is alike: each of the 51 counts is one input, so the
    proof is 51 simulations; the class search (partition) is never entered."""
    def no_search(*args, **kwargs):
        raise AssertionError("partition was called")
    monkeypatch.setattr("accelperf.lpn.analysis.verify.partition", no_search)
    model = load_model(PIPELINE)
    space = load_space(model, PIPELINE_SPACE)
    proof = prove(model, space, "latency <= 503")
    assert proof.holds is True and proof.classes == 51
    worst, best = latency_bound(model, space, "max"), latency_bound(model, space, "min")
    assert (worst.bound, worst.witness.input, best.bound, best.witness.input) == \
        (503, 100, 253, 50)
    assert worst.status == best.status == "proved"


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(nets(max_places=4, max_transitions=4))
def test_the_one_input_of_a_fixed_space_is_the_reference_run(drawn):
    """A space fixing every property: the bound is the reference semantics' latency, or
    "does not finish" exactly when the reference run stops."""
    model, given_tokens, description = drawn
    space = space_from_dict(model, {"places": {
        p: {"count": len(v), "properties": {"a": [v[0][0]] * 2, "b": [v[0][1]] * 2}}
        for p, v in given_tokens.items()}})
    tokens = {p: [v[0]] * len(v) for p, v in given_tokens.items()}
    ref = semantics.run(model, model.marking(tokens).tokens, max_time=60, max_commits=400,
                        max_firings_per_cycle=60)
    assume(ref.stopped in (None, "deadlock"))   # not endless runs (slow to re-simulate)
    r = latency_bound(model, space, "max")
    if ref.stopped is None and ref.latency is not None:
        assert (r.status, r.bound, r.simulated) == ("proved", ref.latency, ref.latency), \
            description
    else:
        assert r.status == "does not finish" and r.witness.stopped, description


@pytest.mark.parametrize("text, needle", [
    ('input = "default"\n[vary.items]\n', 'written example = "default"'),
    ('[vary.items]\n', "with example ="),
    ('example = "default"\n[places.items]\ncount = 1\n', "no [places] table"),
    ('[places.items]\ncount = "1..1000"\n', "at most 64 combinations"),
    ('input = "count(nothing)"\n[places.items]\ncount = 2\n', "input = 'count(nothing)'"),
    ('[places.items]\ncount = -1\n', "places.items.count"),
])
def test_bad_space_files_are_one_line_exit_2(tmp_path, cli, text, needle):
    path = tmp_path / "s.toml"
    path.write_text(text)
    code, _, err = cli("lpn", "verify", PIPELINE, "--space", str(path), "--bound", "max")
    assert code == 2 and err.count("\n") == 1 and needle in err, err


def test_a_missing_space_file_says_no_such_file(tmp_path):
    with pytest.raises(ModelError, match="no such file"):
        load_space(build("jpeg-decoder"), tmp_path / "missing.toml")


def test_sizing_reads_the_budget_helpers_from_their_owners():
    """Issue 26: sizing takes Budget and initial_marking as public names."""
    import accelperf.lpn.analysis.sizing as sizing
    assert sizing.Budget is refine.Budget and sizing.initial_marking is refine.initial_marking


def test_an_endless_sample_is_recognised_before_it_is_followed(monkeypatch):
    """A loop that never reaches done: the class search hands the sample to the fast
    engine first, so the (slow) recorder never follows its 50,000 commits."""
    from accelperf.lpn import Net

    def no_recorder(*args, **kwargs):
        raise AssertionError("the recorder followed an endless sample")
    monkeypatch.setattr(refine, "Recorder", no_recorder)
    net = Net("spin")
    tok = net.token_type("Tok", "a")
    loop, done = net.place("loop", tok), net.place("done", tok)
    net.transition("spin", inputs={loop: 1}, outputs={loop: 1}, delay=lambda t: t.a + 1)
    net.transition("never", inputs={done: 2}, outputs={done: 1})
    net.start, net.done = loop, done
    net.tokens_from_input = lambda values: [{"a": v} for v in values]
    model = net.build()
    space = space_from_dict(model, {"places": {"loop": {"count": 1,
                                                        "properties": {"a": [0, 3]}}}})
    r = latency_bound(model, space, "max")
    assert r.status == "does not finish" and r.witness.simulated is None
    assert "max_commits" in r.witness.stopped
