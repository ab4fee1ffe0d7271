"""One-shot gates (analysis.one_shot): an inhibitor place only the input fills, emptied
by one stage that runs before everything else, is priced in series; any other inhibitor is
still refused with one line."""

import os
import random
import subprocess
import sys

import pytest
import sympy

from accelperf.lpn import Net, simulate
from accelperf.lpn.analysis.classes import input_classes
from accelperf.lpn.analysis.emit import load_module, module_source
from accelperf.lpn.analysis.interface import extract_interface
from accelperf.lpn.analysis.space import space_from_dict
from accelperf.lpn.analysis.one_shot import one_shot_stages
from accelperf.lpn.analysis.symexec import AnalysisError


def _gated(early_worker=False, header_feeds=False):
    """A header parsed in 2·bytes + 5 cycles gating a 2-stage stream (3·size + 1, then
    4 cycles, one job in flight between them). ``early_worker`` adds a stage on a second
    input that the gate does not hold back; ``header_feeds`` makes the header stage feed
    the stream stage."""
    net = Net("gated")
    job, head = net.token_type("Job", "size"), net.token_type("Head", "bytes")
    jobs, mid, done = net.place("jobs", job), net.place("mid", job), net.place("done", job)
    header = net.place("header", head)
    slot = net.place("slot", initial=[()])
    parsed = net.place("parsed")
    net.transition("parse", inputs={header: 1}, outputs={parsed: 1} if header_feeds else {},
                   delay=lambda h: 2 * h.bytes + 5)
    net.transition("work", inputs={jobs: 1, slot: 1}, outputs={mid: 1}, inhibit={header: 1},
                   delay=lambda jobs: 3 * jobs.size + 1)
    net.transition("finish", inputs={mid: 1}, outputs={done: 1, slot: 1}, delay=4)
    starts = [jobs, header]
    if early_worker:
        side = net.place("side", job)
        net.transition("side_work", inputs={side: 1}, outputs={done: 1}, delay=3)
        starts.append(side)
    if header_feeds:
        net.transition("use", inputs={parsed: 1}, outputs={net.place("used"): 1}, delay=1)
    net.start, net.done = starts, done
    net.tokens_from_input = lambda x: {"jobs": [{"size": s} for s in x["jobs"]],
                                       "header": [{"bytes": b} for b in x["header"]],
                                       **({"side": [{}]} if early_worker else {})}
    return net.build()


SPACE = {"places": {"jobs": {"count": [1, 1000], "properties": {"size": [0, 50]}},
                    "header": {"count": [0, 1], "properties": {"bytes": [0, 1000]}}}}


def test_a_one_shot_gate_is_accepted_and_priced_in_series():
    model = _gated()
    space = space_from_dict(model, SPACE)
    assert one_shot_stages(model, space) == {"parse": "header"}
    (cls,) = input_classes(model, space)
    iface = extract_interface(model, space)
    (ci,) = iface.classes
    n_h, b = (sympy.Symbol("n_header", integer=True, positive=True),
              sympy.Symbol("mean_header_bytes", real=True))
    header = next(p for p in ci.phases if p.transitions == ("parse",))
    assert sympy.simplify(header.latency - n_h * (2 * b + 5)) == 0
    module = load_module(module_source(iface, model, "gated", phases=True))
    rng = random.Random(2)
    for _ in range(6):
        sizes = [rng.randint(0, 50) for _ in range(rng.randint(1, 40))]
        for head in ([], [rng.randint(0, 1000)]):
            x = {"jobs": sizes, "header": head}
            sim = simulate(model, x).latency
            # the gate shifts the rest by the header's delay: exactly additive
            assert sim == simulate(model, {"jobs": sizes, "header": []}).latency + \
                sum(2 * h + 5 for h in head)
            tokens = {"jobs": [{"size": s} for s in sizes],
                      "header": [{"bytes": h} for h in head]}
            by_phase = module.latency(tokens, phases=True)
            plain = module.latency(tokens, phases=False)
            assert abs(by_phase - sim) <= 0.05 * sim and abs(plain - sim) <= 0.1 * sim
            parts = module.phases(tokens)
            assert parts[0][0] == "parse" and parts[0][2] == sum(2 * h + 5 for h in head)


@pytest.mark.parametrize("kwargs, why", [
    ({"early_worker": True}, "side_work may fire before the gate opens"),
    ({"header_feeds": True}, "what its stage 'parse' produces is used by the net")])
def test_a_gate_that_is_not_one_shot_is_refused_in_one_line(kwargs, why):
    model = _gated(**kwargs)
    places = dict(SPACE["places"])
    if kwargs.get("early_worker"):
        places["side"] = {"count": 1}
    space = space_from_dict(model, {"places": places})
    assert one_shot_stages(model, space) == {}
    with pytest.raises(AnalysisError) as err:
        input_classes(model, space)
    message = str(err.value)
    assert "inhibitor arc on 'header'" in message and why in message
    assert "\n" not in message


def test_a_gate_holding_two_tokens_is_refused(tmp_path):
    model = _gated()
    space = space_from_dict(model, {"places": {**SPACE["places"], "header": {
        "count": [0, 2], "properties": {"bytes": [0, 9]}}}})
    with pytest.raises(AnalysisError, match="may start with 2 tokens; a gate holds at most 1"):
        input_classes(model, space)


def test_the_cli_refuses_a_timing_dependent_gate_with_exit_2(tmp_path):
    # The library's PCIe decoder has no header stage; the check is on the one-line error
    # of `lpn interface` for a net whose gate is not one-shot (a user's model file).
    model_file = tmp_path / "gated.py"
    model_file.write_text(
        "from accelperf.lpn import Net\n"
        "def build():\n"
        "    net = Net('gated2')\n"
        "    job = net.token_type('Job', 'size')\n"
        "    jobs, done, gate = net.place('jobs', job), net.place('done'), "
        "net.place('gate')\n"
        "    net.transition('open', inputs={jobs: 1}, outputs={gate: 1}, delay=1)\n"
        "    net.transition('work', inputs={gate: 1}, outputs={done: 1}, "
        "inhibit={gate: 2}, delay=3)\n"
        "    net.start, net.done = jobs, done\n"
        "    net.tokens_from_input = lambda n: [{'size': 1}] * n\n"
        "    return net.build()\n")
    exe = os.path.join(os.path.dirname(sys.executable), "accelperf")
    r = subprocess.run([exe, "lpn", "interface", f"{model_file}:build"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr
    assert "inhibitor arc on 'gate'" in lines[0] and "puts tokens into 'gate'" in lines[0]
