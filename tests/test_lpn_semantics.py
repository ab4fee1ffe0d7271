"""The fast engine against the reference semantics, trace for trace; and one timing
example per construct (the same examples the README shows)."""

import re

import pytest
from hypothesis import HealthCheck, given, settings

from accelperf.lpn import (DeadlockError, LimitError, Net, Out, SimulationError, count,
                           simulate)
from accelperf.lpn import semantics
from accelperf.lpn.library import LIBRARY
from lpn_random import nets

LIMITS = dict(max_time=60, max_commits=400, max_firings_per_cycle=60)


def engine_run(model, marking, backend="python", **limits) -> semantics.Run:
    """The fast engine's outcome in the reference's terms."""
    stopped, message = None, ""
    try:
        r = simulate(model, marking, trace=True, backend=backend, **limits)
    except SimulationError as exc:
        r, message = exc.result, str(exc)
        stopped = ("deadlock" if isinstance(exc, DeadlockError) else
                   "error" if not isinstance(exc, LimitError) else
                   "max_time" if "max_time" in message else
                   "max_commits" if "past max_commits" in message else "stalled")
    return semantics.Run(r.trace, r.latency, r.end_time, r.commits, r.final_marking,
                         r.done_tokens, stopped, message)


def assert_same(model, marking, backend="python", **limits):
    ref = semantics.run(model, marking.tokens, **limits)
    fast = engine_run(model, marking, backend, **limits)
    assert fast.stopped == ref.stopped, (fast.message, ref.message)
    assert fast.message == ref.message
    assert fast.firings == ref.firings
    assert (fast.latency, fast.end_time, fast.commits, fast.done_tokens) == \
        (ref.latency, ref.end_time, ref.commits, ref.done_tokens)
    if ref.stopped != "error":
        assert fast.final_marking == ref.final_marking
    return ref


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.filter_too_much])
@given(nets())
def test_engine_follows_the_reference_on_random_nets(drawn):
    model, given_tokens, description = drawn
    marking = model.marking(given_tokens)
    assert_same(model, marking, **LIMITS)


@pytest.mark.parametrize("name", sorted(LIBRARY))
def test_engine_follows_the_reference_on_the_library(name):
    model = LIBRARY[name]()
    marking = model.marking()
    ref = assert_same(model, marking)
    assert ref.stopped is None and ref.latency is not None


# ---------------------------------------------------------------- one example per construct
def _signal_net(name):
    net = Net(name)
    return net, net.token_type("Job", "n")


def test_read_arc_waits_for_tokens_but_neither_locks_nor_takes_them():
    # `gate` holds a token from cycle 4 on; `work` reads it (needs 1 present), twice.
    net, job = _signal_net("read")
    src, gate, done = net.place("src", job), net.place("gate", job), net.place("done", job)
    arm = net.place("arm", job)
    net.transition("open", inputs={arm: 1}, outputs={gate: 1}, delay=4)
    net.transition("work", inputs={src: 1}, read={gate: 1}, outputs={done: 1}, delay=2)
    net.start, net.done = [src, arm], done
    net.tokens_from_input = lambda n: {"src": [(0,)] * n, "arm": [(0,)]}
    r = simulate(net.build(), 2, trace=True)
    assert [(f.transition, f.start, f.end) for f in r.trace] == \
        [("open", 0, 4), ("work", 4, 6), ("work", 6, 8)]
    assert r.final_marking["gate"] == 1           # read, never taken


def test_inhibitor_arc_holds_a_transition_while_a_place_is_full():
    # `fill` may not start while `busy` holds 1 or more tokens (free or locked).
    net, job = _signal_net("inhibit")
    src, busy, done = net.place("src", job), net.place("busy", job), net.place("done", job)
    net.transition("drain", inputs={busy: 1}, outputs={done: 1}, delay=5)
    net.transition("fill", inputs={src: 1}, inhibit={busy: 1}, outputs={busy: 1}, delay=1)
    net.start, net.done = src, done
    net.tokens_from_input = lambda n: [(0,)] * n
    r = simulate(net.build(), 2, trace=True)
    assert [(f.transition, f.start, f.end) for f in r.trace] == \
        [("fill", 0, 1), ("drain", 1, 6), ("fill", 6, 7), ("drain", 7, 12)]


def test_threshold_needs_n_tokens_present_and_takes_w():
    # A read on an input place is a threshold: start at 4 tokens, take 1.
    net, job = _signal_net("threshold")
    src, done = net.place("src", job), net.place("done", job)
    net.transition("take", inputs={src: 1}, read={src: 4}, outputs={done: 1}, delay=1)
    net.start, net.done = src, done
    net.tokens_from_input = lambda n: [(0,)] * n
    with pytest.raises(DeadlockError, match="left in src") as err:
        simulate(net.build(), 5, trace=True)
    r = err.value.result                             # 3 tokens stay below the threshold
    assert [(f.start, f.end) for f in r.trace] == [(0, 1), (1, 2)]
    assert r.final_marking["src"] == 3 and r.done_tokens == 2
    assert "take: reads 4 tokens in src, has 3" in err.value.report


def test_weight_zero_takes_nothing_and_later_tokens_and_counts_are_readable():
    # VTA-style pop flags: an instruction pops a dependency token only when its flag is 1.
    net = Net("pop")
    ins = net.token_type("Ins", "pop", "cycles")
    dep = net.token_type("Dep")
    insns, deps, done = net.place("insns", ins), net.place("deps", dep), net.place("done", ins)
    net.transition("exec", inputs={insns: 1, deps: lambda insns: insns.pop},
                   outputs={done: Out(1, copy="insns")},
                   delay=lambda insns: insns.cycles + count("deps"))
    net.start, net.done = [insns, deps], done
    net.tokens_from_input = lambda x: {"insns": x, "deps": [()]}
    r = simulate(net.build(), [(0, 3), (1, 3), (0, 3)], trace=True)
    # 3 + 1 token in deps; the pop takes it; then 3 + 0 (count taken at each start).
    assert [(f.start, f.end) for f in r.trace] == [(0, 4), (4, 8), (8, 11)]

    net = Net("peek")
    job = net.token_type("Job", "n")
    src, done = net.place("src", job), net.place("done", job)
    net.transition("pair", inputs={src: 2}, outputs={done: 1}, delay=lambda s: s[1].n)
    net.start, net.done = src, done
    net.tokens_from_input = lambda xs: [(x,) for x in xs]
    r = simulate(net.build(), [9, 2, 9, 5], trace=True)
    assert [(f.start, f.end) for f in r.trace] == [(0, 2), (2, 7)]


def test_data_dependent_initiation_interval():
    # A pipelined unit: the next item may start `n` cycles after this one started.
    net, job = _signal_net("ii")
    src, done = net.place("src", job), net.place("done", job)
    net.transition("pipe", inputs={src: 1}, outputs={done: 1}, delay=10, concurrency=None,
                   initiation_interval=lambda s: s.n)
    net.start, net.done = src, done
    net.tokens_from_input = lambda xs: [(x,) for x in xs]
    r = simulate(net.build(), [3, 1, 4], trace=True)
    assert [(f.start, f.end) for f in r.trace] == [(0, 10), (3, 13), (4, 14)]
    assert r.utilisation["pipe"] == pytest.approx(8 / 14)


def test_exact_division_stops_the_run_naming_transition_and_values():
    net, job = _signal_net("div")
    src, done = net.place("src", job), net.place("done", job)
    net.transition("halve", inputs={src: 1}, outputs={done: 1}, delay=lambda s: s.n / 2)
    net.start, net.done = src, done
    net.tokens_from_input = lambda xs: [(x,) for x in xs]
    model = net.build()
    assert simulate(model, [4, 6]).latency == 5
    with pytest.raises(SimulationError, match=r"transition 'halve' at cycle 2: 3 / 2 is not "
                                              r"a whole number"):
        simulate(model, [4, 3])


# ---------------------------------------------------------------- end of a run
def credit_net():
    """A producer with 2 credits feeding a consumer that returns them; start and done
    markers in sinks. Written the natural way: no resource flags."""
    net = Net("credits")
    job = net.token_type("Job", "n")
    sig = net.token_type("Signal")
    src, link, done = net.place("src", job), net.place("link", job), net.place("done", job)
    credits = net.place("credits", sig, initial=[()] * 2)
    lock = net.place("lock", sig, initial=[()])
    started = net.place("started", sig)
    net.transition("send", inputs={src: 1, credits: 1, lock: 1},
                   outputs={link: Out(1, copy="src"), lock: 1, started: 1}, delay=3)
    net.transition("receive", inputs={link: 1}, outputs={done: Out(1, copy="link"),
                                                         credits: 1}, delay=5)
    net.start, net.done = src, done
    net.tokens_from_input = lambda xs: [(x,) for x in xs]
    return net.build()


def test_credits_locks_and_sinks_back_at_rest_are_not_a_deadlock():
    r = simulate(credit_net(), [1, 2, 3])
    assert r.done_tokens == 3 and r.latency == 18     # receive: 3-8, 8-13, 13-18
    assert r.final_marking == {"src": 0, "link": 0, "done": 3, "credits": 2, "lock": 1,
                               "started": 3}


def test_work_left_behind_is_still_a_deadlock():
    net = Net("stuck-credit")
    job = net.token_type("Job", "n")
    src, mid, done = net.place("src", job), net.place("mid", job), net.place("done", job)
    credits = net.place("credits", initial=[()])
    net.transition("a", inputs={src: 1, credits: 1}, outputs={mid: Out(1, copy="src")})
    net.transition("b", inputs={mid: 2}, outputs={done: 1})
    net.start, net.done = src, done
    net.tokens_from_input = lambda xs: [(x,) for x in xs]
    with pytest.raises(DeadlockError, match="tokens are left in src, mid") as err:
        simulate(net.build(), [1, 2])
    assert err.value.result.final_marking["credits"] == 0
    assert "b: needs 2 tokens in mid, has 1" in err.value.report


def zero_delay_loop():
    net = Net("spin")
    sig = net.token_type("S")
    a, b, done = net.place("a", sig), net.place("b", sig), net.place("done", sig)
    net.transition("ping", inputs={a: 1}, outputs={b: 1})
    net.transition("pong", inputs={b: 1}, outputs={a: 1})
    net.transition("never", inputs={b: 2}, outputs={done: 1})
    net.start, net.done = a, done
    net.tokens_from_input = lambda n: [()] * n
    return net.build()


def test_a_zero_delay_loop_stops_even_with_only_max_time():
    with pytest.raises(LimitError, match="1000 firings started without the clock moving") as err:
        simulate(zero_delay_loop(), 1, max_time=100, max_firings_per_cycle=1000)
    assert err.value.result.total_commits == 1000 and "marking" in err.value.report


def test_a_run_without_limits_has_a_default_commit_limit(monkeypatch):
    monkeypatch.setattr("accelperf.lpn.sim.DEFAULT_MAX_FIRINGS_PER_CYCLE", 10**9)
    monkeypatch.setattr("accelperf.lpn.sim.DEFAULT_MAX_COMMITS", 5000)
    with pytest.raises(LimitError, match="max_commits = 5000"):
        simulate(zero_delay_loop(), 1)


def test_a_prepared_marking_runs_like_the_input_it_came_from():
    model = credit_net()
    marking = model.marking([4, 5])
    assert simulate(model, marking).latency == simulate(model, [4, 5]).latency == 13
    other = LIBRARY["fig2-pipeline"]()
    with pytest.raises(Exception, match="made for model 'credits'"):
        simulate(other, marking)


def test_psi_is_checked_in_bulk_and_accepts_numpy_integers():
    np = pytest.importorskip("numpy")
    model = credit_net()
    assert model.marking(list(np.arange(3))).tokens[model.start] == ((0,), (1,), (2,))
    with pytest.raises(Exception, match="value 5.7"):
        model.marking([1, 5.7])


def test_importing_the_lpn_package_stays_light():
    import subprocess
    import sys
    code = ("import accelperf.lpn, sys; print(sorted(m for m in ('scipy', 'matplotlib', "
            "'accelperf.logca', 'sympy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_cli_reports_the_final_marking_and_exit_status(capsys):
    import json

    from accelperf.cli.app import main
    assert main(["lpn", "simulate", "credit-link", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["final_marking"]["link.credits"] == 8 and out["final_marking"]["received"] == 5
    assert main(["lpn", "simulate", "credit-link", "--max-commits", "10"]) == 1
    assert "past max_commits = 10" in capsys.readouterr().err


def test_pictures_draw_read_and_inhibitor_arcs_and_computed_intervals():
    from accelperf.lpn.viz import net_svg
    net, job = _signal_net("drawn")
    src, busy, gate, done = (net.place(n, job) for n in ("src", "busy", "gate", "done"))
    net.transition("fill", inputs={src: 1}, inhibit={busy: 1}, read={gate: 2},
                   outputs={busy: 1}, initiation_interval=lambda src: src.n)
    net.transition("drain", inputs={busy: 1}, outputs={done: 1}, delay=5)
    net.start, net.done = [src, gate], done
    drawn = net_svg(net.build())
    legend = re.search(r'<g class="legend".*?</g>', drawn).group(0)
    svg = drawn.replace(legend, "")
    assert svg.count('stroke-dasharray="5,3"') == 1 and svg.count("url(#inhibit)") == 1
    assert "reads" in legend and "inhibits" in legend   # the marks are explained
    assert "≥ 2" in svg and "&lt; 1" in svg and "II src.n" in svg


def test_arc_labels_are_drawn_over_the_nodes_and_fit_between_them():
    """Issue 33 item 7: a computed count such as (packets.bytes + 15) // 16 was centred on
    its 99 px arc and drawn before the nodes, which hid both of its ends."""
    from accelperf.lpn.viz import DX, LABEL_CHAR_PX, R, W, net_svg
    net = Net("headers")
    pkt, blk = net.token_type("Packet", "bytes"), net.token_type("Block")
    packets, payload = net.place("packets", pkt), net.place("payload", blk)
    done = net.place("done", blk)
    net.transition("header", inputs={packets: 1}, delay=20, outputs={
        payload: Out(lambda packets: (packets.bytes + 15) // 16, props={})})
    net.transition("ghash", inputs={payload: 1}, outputs={done: 1}, delay=4)
    net.start, net.done = packets, done
    svg = net_svg(net.build())
    label = re.search(r'<text class="halo" fill="#a33".*?</text>', svg, re.S).group(0)
    last_node = max(svg.rfind("<rect"), svg.rfind("<circle"))
    assert svg.index(label) > last_node                       # on top of every node
    lines = re.findall(r"<tspan[^>]*>([^<]*)</tspan>", label)
    assert len(lines) == 2 and " ".join(lines) == "((packets.bytes + 15) // 16)"
    room = DX - W / 2 - R
    assert all(len(line) * LABEL_CHAR_PX <= room for line in lines)


def test_a_large_net_is_drawn_grouped_by_unit():
    from accelperf.lpn.library import build
    from accelperf.lpn.viz import group_of, groups, net_svg
    assert group_of("f3_string_header") == "f3" and group_of("link.fly") == "link"
    assert group_of("stage0") is None and group_of("advance") is None
    model = build("protoacc")
    assert sorted(groups(model)) == [f"f{i}" for i in range(1, 7)]
    svg = net_svg(model, simulate(model))
    boxes = svg.count("<rect")
    assert "6 units drawn as one box each" in svg and boxes == len(model.transitions) - 6 * 14 + 6
    assert "14 transitions" in svg and "f3_string_header" in svg      # members in the tooltip
    assert net_svg(model, grouped=False).count("<rect") == len(model.transitions)
