"""`accelperf lpn check` and the checks Net.build() runs (issue 26 item 3): each kind of
finding on a net made to have it, none on the library, exit statuses of the command."""
from __future__ import annotations

import json
import warnings

import pytest
from accelperf.lpn import Net, Out
from accelperf.lpn.analysis.check import ModelCheckWarning, check, structural_findings
from accelperf.lpn.analysis.classes import input_classes
from accelperf.lpn.analysis.space import space_from_dict
from accelperf.lpn.library import LIBRARY


def _build(net):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelCheckWarning)
        return net.build()


def _line(name="line"):
    """start -> work -> done, a healthy net to spoil."""
    net = Net(name)
    job = net.token_type("Job", "size")
    start, done = net.place("start", job), net.place("done", job)
    net.transition("work", inputs={start: 1}, outputs={done: 1}, delay=lambda start: start.size)
    net.start, net.done = start, done
    net.tokens_from_input = lambda sizes: [{"size": s} for s in sizes]
    net.default_input = [1, 2]
    return net, job, start, done


def _kinds(findings):
    return sorted((f.kind, f.element) for f in findings)


def test_a_healthy_net_has_no_finding_and_builds_silently():
    net, *_ = _line()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelCheckWarning)
        model = net.build()
    assert check(model) == []


@pytest.mark.parametrize("name", sorted(LIBRARY))
def test_library_models_have_no_finding(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelCheckWarning)
        model = LIBRARY[name]()
    assert check(model) == [], [str(f) for f in check(model)]


def test_a_done_place_nothing_fills():
    net = Net("no-done")
    job = net.token_type("Job", "size")
    start, mid, done = (net.place(n, job) for n in ("start", "mid", "done"))
    net.transition("work", inputs={start: 1}, outputs={mid: 1}, delay=1)
    net.transition("sink", inputs={mid: 1}, delay=1)
    net.start, net.done = start, done
    [finding] = structural_findings(_build(net))
    assert (finding.kind, finding.element) == ("no-done", "place 'done'")
    assert "output arc into 'done'" in finding.fix


def test_a_self_sustaining_zero_delay_loop_and_the_place_it_fills():
    net, job, start, done = _line("spin")
    tick = net.token_type("Tick")
    ring = net.place("ring", tick, initial=[{}])
    junk = net.place("junk", tick)
    net.transition("spin", inputs={ring: 1}, outputs={ring: 1, junk: 1}, delay=0)
    with pytest.warns(ModelCheckWarning) as record:
        model = net.build()
    assert sorted(str(w.message).split(": ")[1] for w in record) == ["unbounded",
                                                                     "zero-delay-loop"]
    assert _kinds(check(model)) == [("unbounded", "place 'junk'"),
                                    ("zero-delay-loop", "transitions 'spin'")]


def _polling(name="poll"):
    """A new user's engine with a poll loop: one token circles `ring` with delay 1."""
    net, job, start, done = _line(name)
    ring = net.place("ring", net.token_type("Tick"), initial=[{}])
    net.transition("poll", inputs={ring: 1}, outputs={ring: 1}, delay=1)
    return net


def test_a_loop_with_a_delay_that_never_stops_is_reported():
    """It once passed with "no findings": the run goes on after the work is done, until
    max_commits, 85 s later on the Python engine."""
    with pytest.warns(ModelCheckWarning, match="endless: transitions 'poll'"):
        model = _polling().build()
    findings = check(model)
    assert _kinds(findings) == [("endless", "transitions 'poll'")]
    assert "never ends" in findings[0].message


@pytest.mark.parametrize("backend", ["python", "compiled"])
def test_a_run_stopped_past_max_commits_says_when_the_work_was_done(backend):
    from accelperf.lpn import simulate
    from accelperf.lpn.outcome import LimitError
    from accelperf.lpn.semantics import run
    model = _build(_polling())
    with pytest.raises(LimitError) as caught:
        simulate(model, [3, 4], max_commits=500, backend=backend)
    headline = str(caught.value).splitlines()[0]
    assert "2 token(s) had reached the done place 'done', the last at cycle 7" in headline
    assert "the commits are mostly poll (" in headline and "never stops" in headline
    assert run(model, model.marking([3, 4]).tokens, max_commits=500).message == headline


def test_an_interface_of_a_net_that_never_stops_names_the_loop():
    from accelperf.lpn.analysis.interfaces.symexec import AnalysisError
    from accelperf.lpn.analysis.interfaces.token_stream import interface_for
    from accelperf.lpn.analysis.space import default_space
    model = _build(_polling())
    with pytest.raises(AnalysisError, match=r"without ending, mostly poll \("):
        interface_for(model, default_space(model))


def test_an_input_that_never_finishes_is_written_as_the_space_writes_inputs():
    """The verifier's note gave the counterexample as tokens ({'start': [{'size': 1},
    ...]}) though the space says how an input is written."""
    from accelperf.lpn.analysis.proofs.verify import latency_bound
    model = _build(_polling())
    space = space_from_dict(model, {"input": "list(start.size)", "places": {
        "start": {"count": 2, "properties": {"size": [1, 3]}}}})
    result = latency_bound(model, space, "max")
    assert result.status == "does not finish"
    assert "[1, 1] is the counterexample" in result.note, result.note


def test_a_loop_that_a_guard_or_an_outside_input_can_stop_is_not_reported():
    net, job, start, done = _line("turns")
    turn = net.token_type("Turn", "i")
    pointer = net.place("pointer", turn, initial=[{"i": 0}])
    net.transition("advance", inputs={pointer: 1}, delay=0, guard=lambda pointer: pointer.i < 3,
                   outputs={pointer: Out(1, props=lambda pointer: {"i": pointer.i + 1})})
    gate = net.place("gate", net.token_type("Gate"), initial=[{}])
    net.transition("pass", inputs={gate: 1, start: 1}, outputs={gate: 1, done: 1}, delay=0)
    assert check(_build(net)) == []


def test_a_transition_on_a_loop_no_token_ever_enters():
    net, job, start, done = _line("ghost")
    limbo = net.place("limbo", job)
    net.transition("ghost", inputs={limbo: 1}, outputs={limbo: 1}, delay=1)
    assert _kinds(check(_build(net))) == [("never-fires", "transition 'ghost'")]


def test_psi_tokens_no_transition_takes():
    net, job, start, done = _line("psi")
    side = net.place("side", job)
    net.tokens_from_input = lambda sizes: {"start": [{"size": s} for s in sizes],
                                           "side": [{"size": 0}]}
    findings = check(_build(net))
    assert _kinds(findings) == [("psi-unused", "place 'side'")]
    assert "1 token(s)" in findings[0].message


def test_a_place_no_arc_touches():
    net, job, start, done = _line("typo")
    net.place("c", job)                  # declared, never wired
    with pytest.warns(ModelCheckWarning, match="unconnected: place 'c'"):
        model = net.build()
    assert _kinds(check(model)) == [("unconnected", "place 'c'")]
    assert _kinds(structural_findings(model)) == [("unconnected", "place 'c'")]


def test_a_transition_no_input_of_the_space_fires():
    net = Net("guarded")
    job = net.token_type("Job", "size")
    start, done = net.place("start", job), net.place("done", job)
    net.transition("big", inputs={start: 1}, outputs={done: 1}, delay=9,
                   guard=lambda start: start.size > 100)
    net.transition("small", inputs={start: 1}, outputs={done: 1}, delay=1,
                   guard=lambda start: start.size <= 100)
    net.start, net.done = start, done
    net.tokens_from_input = lambda sizes: [{"size": s} for s in sizes]
    model = _build(net)
    assert check(model) == []                       # structurally both can fire
    space = space_from_dict(model, {"places": {"start": {"count": 2,
                                                         "properties": {"size": [1, 8]}}}})
    assert _kinds(check(model, input_classes(model, space))) == [
        ("never-fires", "transition 'big'")]


def test_a_space_whose_inputs_deadlock_is_a_finding():
    # `lpn check --space` said "no findings" where every input of the space deadlocks
    net = Net("pairs")
    job = net.token_type("Job", "size")
    start, q, done = net.place("start", job), net.place("q", job), net.place("done", job)
    net.transition("produce", inputs={start: 1}, outputs={q: 1}, delay=2)
    net.transition("consume", inputs={q: 2}, outputs={done: 2}, delay=5,
                   guard=lambda q: q.size < 100)
    net.start, net.done = start, done
    net.tokens_from_input = lambda sizes: [{"size": s} for s in sizes]
    model = _build(net)
    for count, stuck in ((3, True), (2, False)):
        space = space_from_dict(model, {"places": {"start": {
            "count": count, "properties": {"size": [1, 8]}}}})
        found = [f for f in check(model, input_classes(model, space))
                 if f.kind == "deadlocks"]
        assert bool(found) is stuck
        if stuck:
            assert "every one of its 1 input class(es) deadlocks: class 0" in found[0].message
            assert "leaves work in q" in found[0].message


@pytest.fixture
def _run(cli):
    def run(*args):
        code, out, err = cli("lpn", "check", *args)
        return code, out + err
    return run


def test_cli_exit_status_0_for_a_clean_model(_run):
    code, out = _run("jpeg-decoder")
    assert code == 0 and "no findings" in out


def test_cli_exit_status_1_and_json_naming_each_finding(tmp_path, _run):
    src = tmp_path / "spin.py"
    src.write_text(
        "from accelperf.lpn import Net\n"
        "def build():\n"
        "    net = Net('spin')\n"
        "    job = net.token_type('Job', 'size')\n"
        "    tick = net.token_type('Tick')\n"
        "    start, done = net.place('start', job), net.place('done', job)\n"
        "    ring = net.place('ring', tick, initial=[{}])\n"
        "    junk = net.place('junk', tick)\n"
        "    net.transition('work', inputs={start: 1}, outputs={done: 1}, delay=1)\n"
        "    net.transition('spin', inputs={ring: 1}, outputs={ring: 1, junk: 1}, delay=0)\n"
        "    net.start, net.done = start, done\n"
        "    net.tokens_from_input = lambda xs: [{'size': x} for x in xs]\n"
        "    return net.build()\n")
    code, out = _run(f"{src}:build", "--json")
    assert code == 1
    data = json.loads(out[:out.rindex("}") + 1])
    assert data["ok"] is False
    assert {(f["kind"], f["element"]) for f in data["findings"]} == {
        ("unbounded", "place 'junk'"), ("zero-delay-loop", "transitions 'spin'")}
    code, out = _run(f"{src}:build")
    assert code == 1 and out.count("warning: ") == 2 and out.count("fix: ") == 2


def test_cli_bad_model_is_exit_2(_run):
    code, out = _run("no-such-model")
    assert code == 2 and out.count("\n") == 1
