"""Input classes (OSDI'24 §4.1, A.1–A.2): symbolic execution against the simulator."""

import random

import pytest
import sympy

from accelperf.errors import ModelError
from accelperf.lpn import Net, Out, simulate
from accelperf.lpn import semantics
from accelperf.lpn.analysis.classes import input_classes, marking_of, random_member
from accelperf.lpn.analysis.space import default_space, load_space, space_from_dict
from accelperf.lpn.analysis.symexec import AnalysisError, ExplosionError
from accelperf.lpn.library import build
from accelperf.lpn.sim import DeadlockError


def observed_trace(model, tokens, monkeypatch):
    """The reference semantics' abstract trace of one run: per transition, the tokens
    each commit took per input arc and gave per output arc (recorded at R4)."""
    seen = {}
    real_commit = semantics.commit

    def recording(state, firing, inputs):
        t = model.transitions[firing.transition]
        step = (tuple(len(x) for x in firing.locked),
                tuple((model.places[p].name, len(v)) for p, v in firing.produce))
        seen.setdefault(t.name, []).append(step)
        return real_commit(state, firing, inputs)

    monkeypatch.setattr(semantics, "commit", recording)
    run = semantics.run(model, dict(marking_of(model, tokens).tokens))
    return seen, run


SMALL = {  # the shipped spaces with values small enough for the reference semantics
    "darwin": {"constraints": ["alignment.stripes == count(stripes)"], "places": {
        "stripes": {"count": [1, 30], "properties": {"ref_len": [1, 200]}},
        "alignment": {"count": 1, "properties": {"steps": [1, 300], "stripes": [1, 30]}}}},
    "block-pipeline": {"places": {"blocks": {"count": [1, 40], "properties": {"nnz": [0, 64]}}}},
}


def small_space(model):
    if model.name in SMALL:
        return space_from_dict(model, SMALL[model.name])
    return default_space(model)


@pytest.mark.parametrize("name", ["block-pipeline", "darwin", "fig2-pipeline"])
def test_random_inputs_of_each_class_follow_its_abstract_trace(name, monkeypatch):
    model = build(name)
    check_classes_against_simulation(model, small_space(model), monkeypatch)


def check_classes_against_simulation(model, space, monkeypatch):
    """Random members of every class run by the reference semantics give the class's
    abstract trace (and the fast engine its commit counts); returns the classes."""
    classes = input_classes(model, space)
    assert classes
    rng = random.Random(13)
    for cls in classes:
        for _ in range(4):
            member = random_member(cls, model, rng, max_count=40)
            assert member is not None, cls
            tokens, values = member
            assert cls.holds(values)
            seen, run = observed_trace(model, tokens, monkeypatch)
            expected = cls.abstract_trace(values)
            assert seen == expected, (cls, tokens)
            assert (run.stopped == "deadlock") == bool(cls.stuck), (cls, run.message)
            if not cls.stuck:                      # the fast engine agrees on counts
                fast = simulate(model, marking_of(model, tokens))
                assert {t: n for t, n in fast.commits.items() if n} == \
                    {t: len(v) for t, v in expected.items()}
    return classes


def test_fig2_classes_split_on_each_instruction_kind_and_name_deadlocks():
    model = build("fig2-pipeline")
    classes = input_classes(model, default_space(model))
    kinds = sympy.symbols("start_0_kind start_1_kind start_2_kind start_3_kind",
                          integer=True)
    seen = set()
    for cls in classes:
        pattern = tuple(t["kind"] for t in cls.sample["start"])
        assert pattern not in seen                  # one class per kind pattern at most
        seen.add(pattern)
        assert all(cls.holds(dict(zip(kinds, pattern))) for _ in [0])
    assert len(seen) == len(classes)
    stuck = [c for c in classes if c.stuck]
    assert stuck and all("r_compute" in c.stuck or "operands" in " ".join(c.stuck)
                         or c.stuck for c in stuck)
    with pytest.raises(DeadlockError):
        simulate(model, marking_of(model, stuck[0].sample))


def test_stream_class_counts_are_symbolic():
    model = build("darwin")
    (cls,) = input_classes(model, default_space(model))
    counts = cls.commit_counts()
    assert str(counts["fill_stripe"]) == "n_stripes"
    assert str(counts["traceback_step"]) == "alignment_0_steps"
    assert counts["matrix_complete"] == 1


def test_explosion_stops_with_a_clear_message():
    model = build("fig2-pipeline")
    space = space_from_dict(model, {"places": {"start": {
        "count": 8, "properties": {"kind": [0, 1], "cycles": [1, 5], "operands": [1, 1],
                                   "group": [4, 4]}}}})
    with pytest.raises(ExplosionError, match="max_paths = 20"):
        input_classes(model, space, max_classes=20)


def _race_net(left_concurrency=1):
    """Two transitions racing for the jobs in ``a``: ``left`` takes j.size cycles,
    ``right`` 3; each job goes to whichever starts first (the lower id at a tie)."""
    net = Net("race")
    job = net.token_type("Job", "size")
    a, b, c = (net.place(n, job) for n in ("a", "b", "c"))
    net.transition("left", inputs={a: 1}, outputs={b: 1},
                   delay=lambda j: j.size, concurrency=left_concurrency)
    net.transition("right", inputs={a: 1}, outputs={c: 1}, delay=3)
    net.start, net.done = a, b
    net.tokens_from_input = lambda xs: [{"size": x} for x in xs]
    return net.build()


RACE_SPACE = {"places": {"a": {"count": 4, "properties": {"size": [1, 9]}}}}


@pytest.mark.parametrize("concurrency, classes_expected", [(1, 4), (None, 1)])
def test_racing_transitions_are_ordered_by_time(monkeypatch, concurrency, classes_expected):
    """A.2 step 3: two transitions competing for one place's tokens commit one at a time
    in order of their start times; the classes split where that order depends on the
    sizes, and every class matches the simulation on random members."""
    model = _race_net(concurrency)
    space = space_from_dict(model, RACE_SPACE)
    classes = check_classes_against_simulation(model, space, monkeypatch)
    # one server: job 0 to left (a tie at 0, lower id), job 1 to right (left busy), then
    # who is free first (size_0 against 3, ...) decides the rest: left takes 3, 2, 2 or 1
    # of the 4 jobs; with unlimited servers left takes every job at time 0
    assert len(classes) == classes_expected
    shares = sorted(c.commit_counts()["left"] for c in classes)
    assert shares == ([1, 2, 2, 3] if concurrency == 1 else [4])


def test_a_race_whose_times_are_unknown_is_refused_with_their_names():
    """Which of two busy servers frees first is not tracked: refused, not guessed."""
    with pytest.raises(AnalysisError, match="'left' and 'right' race for the token at "
                                            "the head of 'a'"):
        input_classes(_race_net(2), space_from_dict(_race_net(2), RACE_SPACE))


def test_a_race_for_a_stream_is_refused_with_their_names():
    """A stream's tokens are one bundle, so which racer takes the k-th is unknown."""
    model = _race_net()
    space = space_from_dict(model, {"places": {"a": {"count": [1, 50],
                                                     "properties": {"size": [1, 9]}}}})
    with pytest.raises(AnalysisError, match="'a' is shared by left, right"):
        input_classes(model, space)


def test_data_dependent_weight_splits_by_value():
    net = Net("batch")
    job = net.token_type("Job", "k")
    unit = net.token_type("Unit")
    head, items, out = net.place("head", job), net.place("items", unit), net.place("out", job)
    net.transition("gather", inputs={head: 1, items: lambda h, i: h.k},
                   outputs={out: Out(1, copy="head")}, delay=2)
    net.start, net.done = [head, items], out
    model = net.build()
    space = space_from_dict(model, {"places": {
        "head": {"count": 1, "properties": {"k": [1, 3]}},
        "items": {"count": 3, "properties": {}}}})
    classes = input_classes(model, space)
    ks = sorted(c.sample["head"][0]["k"] for c in classes)
    assert ks == [1, 2, 3]
    assert sum(1 for c in classes if c.stuck) == 2     # k < 3 leaves items behind


@pytest.mark.parametrize("data, match", [
    ({"places": {"nowhere": {"count": 1}}}, "places.nowhere = 'nowhere'"),
    ({"places": {"blocks": {"count": [5, 2], "properties": {"nnz": [0, 1]}}}}, "lo <= hi"),
    ({"places": {"blocks": {"count": 2, "properties": {"size": [0, 1]}}}},
     "places.blocks.properties.size"),
    ({"places": {"blocks": {"count": 2, "properties": {"nnz": [0, 9]}}},
      "constraints": ["sum(blocks.zz) <= 3"]}, r"properties \['nnz'\]"),
    ({"places": {"blocks": {"count": 2, "properties": {"nnz": [0, 9]}}},
      "constraints": ["import os"]}, r"constraints\[0\]"),
])
def test_bad_spaces_name_the_parameter(data, match):
    with pytest.raises(ModelError, match=match):
        space_from_dict(build("block-pipeline"), data)


def test_space_file_errors(tmp_path):
    with pytest.raises(ModelError, match="--space"):
        load_space(build("block-pipeline"), tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("places = [")
    with pytest.raises(ModelError, match="--space"):
        load_space(build("block-pipeline"), bad)


@pytest.mark.parametrize("data, match", [
    ({"example": "default", "vary": {"nowhere": {"bytes": [0, 9]}}},
     "vary place = 'nowhere'"),
    ({"example": "default", "vary": {"field_data": {"size": [0, 9]}}}, "properties of Element"),
    ({"example": "default", "vary": {"field_data": {"bytes": [9, 0]}}}, "lo <= hi"),
    ({"example": "missing.json"}, "example = 'missing.json'"),
    ({"example": "default", "places": {}}, "no \\[places\\] table beside example"),
    ({"input": "default", "vary": {"field_data": {"bytes": [0, 9]}}},
     'written example = "default"'),
    ({"vary": {"field_data": {"bytes": [0, 9]}}}, "with example ="),
])
def test_bad_structure_spaces_name_the_parameter(data, match):
    with pytest.raises(ModelError, match=match):
        space_from_dict(build("protoacc"), data)


def test_a_structure_space_keeps_the_inputs_kinds_and_ranges_its_sizes():
    from accelperf.lpn.analysis.space import structure_space
    model = build("protoacc")
    space = structure_space(model, model.default_input)
    data = space.place("field_data")
    assert data.count == (12, 12) and data.properties == {"bytes": (0, 1 << 30)}
    kinds = [v["kind"] for v in space.place("field_descriptors").values]
    assert kinds == [t[0] for t in model.marking().tokens[model.place_id("field_descriptors")]]
    (cls,) = input_classes(model, space)             # one message type: one class
    assert not cls.conditions


def test_default_spaces_of_protoacc_menshen_vta_are_their_examples_structure():
    from accelperf.lpn.analysis.space import default_space
    for name in ("protoacc", "menshen", "vta"):
        model = build(name)
        space = default_space(model)
        assert all(not p.stream and p.values for p in space.places), name
        assert len(input_classes(model, space)) == 1, name
