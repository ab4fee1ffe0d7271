"""LPN semantics, one test per rule of accelperf.lpn.sim, plus validation and reports."""

import json

import pytest

from accelperf.lpn import (DeadlockError, LimitError, Net, NetError, Out, SimulationError,
                           TraceError, simulate)


def chain(delays, capacity=None, concurrency=1, ii=None, n_jobs=3):
    net = Net("chain")
    job = net.token_type("Job", "size")
    places = [net.place("p0", job)] + [net.place(f"p{i + 1}", job,
                                                 capacity=capacity if i + 1 < len(delays)
                                                 else None)
                                       for i in range(len(delays))]
    for i, d in enumerate(delays):
        net.transition(f"t{i}", inputs={places[i]: 1}, outputs={places[i + 1]: 1}, delay=d,
                       concurrency=concurrency, initiation_interval=ii)
    net.start, net.done = places[0], places[-1]
    net.tokens_from_input = lambda sizes: [{"size": s} for s in sizes]
    net.default_input = [1] * n_jobs
    return net.build()


# ---------------------------------------------------------------- rules
def test_single_server_processes_one_item_at_a_time():
    r = simulate(chain([5]), [1, 1, 1], trace=True)
    assert [(f.start, f.end) for f in r.trace] == [(0, 5), (5, 10), (10, 15)]
    assert r.latency == 15 and r.utilisation["t0"] == 1.0


def test_unbounded_concurrency_processes_all_at_once():
    r = simulate(chain([5], concurrency=None), [1, 1, 1])
    assert r.latency == 5


def test_initiation_interval_pipelines_a_unit():
    # Timing diagram (delay 5, II 2, unbounded):  item0 0..5, item1 2..7, item2 4..9.
    r = simulate(chain([5], concurrency=None, ii=2), [1, 1, 1], trace=True)
    assert [(f.start, f.end) for f in r.trace] == [(0, 5), (2, 7), (4, 9)]
    assert r.latency == 9 and r.utilisation["t0"] == pytest.approx(3 * 2 / 9)


def test_delay_from_token_properties_and_commit_timestamps():
    net = Net("d")
    job = net.token_type("Job", "size")
    a, b = net.place("a", job), net.place("b", job)
    net.transition("work", inputs={a: 1}, outputs={b: Out(1, props=lambda j: {"size": j.size * 2})},
                   delay=lambda j: j.size + 1)
    net.start, net.done = a, b
    net.tokens_from_input = lambda xs: [{"size": x} for x in xs]
    r = simulate(net.build(), [4, 9], trace=True)
    assert [(f.start, f.end) for f in r.trace] == [(0, 5), (5, 15)]


def test_capacity_place_gives_backpressure():
    # p1 holds at most 1 token (counting the one t1 is working on): t0 waits for t1.
    r = simulate(chain([1, 10], capacity=1), [1, 1, 1], trace=True)
    t0 = [(f.start, f.end) for f in r.trace if f.transition == "t0"]
    assert t0 == [(0, 1), (11, 12), (22, 23)]
    assert r.max_occupancy["p1"] == 1 and r.latency == 33


@pytest.mark.parametrize("waiting", [0, 1, 2, 3])
def test_capacity_counts_the_items_in_both_stages(waiting):
    # A slot is taken when t0 starts and given back when t1 finishes (docs/tutorial
    # ten-minutes §1): with both stages busy, capacity k + 2 leaves k items waiting.
    r = simulate(chain([1, 10], capacity=waiting + 2), [1] * 8, trace=True)
    t0 = [f for f in r.trace if f.transition == "t0"]
    t1 = [f for f in r.trace if f.transition == "t1"]
    most = 0
    for t in range(r.latency):
        both_busy = any(f.start <= t < f.end for f in t0) and \
            any(f.start <= t < f.end for f in t1)
        if both_busy:
            most = max(most, sum(f.end <= t for f in t0) - sum(f.start <= t for f in t1))
    assert most == waiting


def test_exact_division_builds_and_stops_the_run_on_a_remainder():
    # "/" is exact division: it traces, and only a value with a remainder fails
    net = Net("halve")
    job = net.token_type("Job", "size")
    a, b = net.place("a", job), net.place("b", job)
    net.transition("halve", inputs={a: 1}, outputs={b: 1}, delay=lambda a: a.size / 2)
    net.start, net.done = a, b
    net.tokens_from_input = lambda xs: [{"size": x} for x in xs]
    model = net.build()
    assert simulate(model, [4, 6]).latency == 5
    with pytest.raises(SimulationError, match=r"3 / 2 is not a whole number.*use //"):
        simulate(model, [4, 3])


def test_zero_delay_chain_commits_at_the_same_time():
    r = simulate(chain([0, 0, 0]), [1, 1], trace=True)
    assert r.latency == 0 and all(f.end == 0 for f in r.trace)
    assert r.total_commits == 6


def test_ties_commit_smallest_id_first_and_contested_tokens_go_to_the_lowest_id():
    net = Net("race")
    sig = net.token_type("S")
    src = net.place("src", sig)
    left, right = net.place("left", sig), net.place("right", sig)
    done = net.place("done", sig)
    net.transition("lower", inputs={src: 1}, outputs={left: 1}, delay=3)
    net.transition("higher", inputs={src: 1}, outputs={right: 1}, delay=3)
    net.transition("join_l", inputs={left: 1}, outputs={done: 1})
    net.transition("join_r", inputs={right: 1}, outputs={done: 1})
    net.start, net.done = src, done
    net.tokens_from_input = lambda n: [()] * n
    r = simulate(net.build(), 3, trace=True)
    # Token 0 goes to `lower`, token 1 to `higher` (lower is busy), token 2 to `lower`.
    assert r.commits["lower"] == 2 and r.commits["higher"] == 1
    order_at_3 = [f.transition for f in r.trace if f.end == 3]
    assert order_at_3 == ["lower", "higher", "join_l", "join_r"]


def test_two_transitions_never_take_the_same_token():
    net = Net("greedy")
    sig = net.token_type("S")
    src, done = net.place("src", sig), net.place("done", sig)
    for name in ("a", "b", "c"):
        net.transition(name, inputs={src: 2}, outputs={done: 2}, delay=1, concurrency=None)
    net.start, net.done = src, done
    net.tokens_from_input = lambda n: [()] * n
    with pytest.raises(DeadlockError) as err:      # 7 tokens: one is left over, reported
        simulate(net.build(), 7)
    assert err.value.result.done_tokens == 6
    assert sum(err.value.result.commits.values()) == 3


def test_guard_routing_and_token_dependent_weights():
    net = Net("dispatch")
    ins = net.token_type("Ins", "kind", "n")
    opnd = net.token_type("Opnd")
    start = net.place("start", ins)
    mem, comp = net.place("mem", ins), net.place("comp", ins)
    operands = net.place("operands", opnd)
    done = net.place("done", ins)
    net.transition("dispatch", inputs={start: 1}, route=[(mem, lambda i: i.kind == 0),
                                                        (comp, lambda i: i.kind == 1)])
    net.transition("load", inputs={mem: 1}, outputs={operands: lambda i: i.n, done: 1},
                   delay=10)
    net.transition("compute", inputs={comp: 1, operands: lambda i, o: i.n},
                   outputs={done: Out(1, copy="comp")}, delay=lambda i, o: 2 * i.n)
    net.start, net.done = start, done
    net.tokens_from_input = lambda prog: [{"kind": k, "n": n} for k, n in prog]
    r = simulate(net.build(), [(0, 3), (1, 3)], trace=True)
    # compute waits for the 3 operands the load makes at 10, then takes 6 cycles.
    assert [(f.transition, f.start, f.end) for f in r.trace if f.transition != "dispatch"] == \
        [("load", 0, 10), ("compute", 10, 16)]
    with pytest.raises(Exception, match="none of its routes"):
        simulate(net.build(), [(2, 1)])


def test_deadlock_reports_marking_and_what_each_transition_waits_for():
    net = Net("stuck")
    job = net.token_type("Job", "size")
    a, b, done = net.place("a", job), net.place("b", job), net.place("done", job)
    net.transition("pair", inputs={a: 2}, outputs={b: 1}, delay=1)
    net.transition("finish", inputs={b: 1}, outputs={done: 1}, guard=lambda j: j.size < 5)
    net.start, net.done = a, done
    net.tokens_from_input = lambda xs: [{"size": x} for x in xs]
    with pytest.raises(DeadlockError) as err:
        simulate(net.build(), [9, 9, 1])
    report = err.value.report
    assert "deadlock at cycle 1" in report
    assert "a: 1 free" in report and "b: 1 free" in report
    assert "pair: needs 2 tokens in a, has 1" in report
    assert "finish: guard is false" in report


def test_expected_done_detects_missing_work():
    with pytest.raises(DeadlockError, match="only 3 of 5 expected"):
        simulate(chain([1]), [1, 1, 1], expected_done=5)


def test_limits_stop_a_runaway_net_with_a_report():
    net = Net("loop")
    sig = net.token_type("S")
    a, b = net.place("a", sig), net.place("b", sig)
    done = net.place("done", sig)
    net.transition("ping", inputs={a: 1}, outputs={b: 1}, delay=1)
    net.transition("pong", inputs={b: 1}, outputs={a: 1}, delay=1)
    net.start, net.done = a, done
    net.tokens_from_input = lambda n: [()] * n
    model = net.build()
    with pytest.raises(LimitError, match="past max_time = 50") as err:
        simulate(model, 1, max_time=50)
    assert "marking" in err.value.report and err.value.result.total_commits >= 49
    with pytest.raises(LimitError, match="max_commits = 100"):
        simulate(model, 1, max_commits=100)
    with pytest.raises(Exception, match="max_time"):
        simulate(model, 1, max_time=-1)


def test_result_and_traces(tmp_path):
    r = simulate(chain([2, 3]), [1, 1], trace=True)
    d = r.to_dict()
    assert d["latency"] == 8 and d["commits"] == {"t0": 2, "t1": 2}
    assert set(d["utilisation"]) == {"t0", "t1"} and d["max_occupancy"]["p0"] == 2
    csv_path = r.write_trace_csv(tmp_path / "t.csv")
    assert csv_path.read_text().splitlines()[0] == "transition,start_cycle,commit_cycle," \
                                                   "duration_cycles"
    chrome = json.loads(r.write_chrome_trace(tmp_path / "t.json").read_text())
    xs = [e for e in chrome["traceEvents"] if e["ph"] == "X"]
    assert len(xs) == 4 and {e["name"] for e in xs} == {"t0", "t1"}
    with pytest.raises(Exception, match="no trace"):
        simulate(chain([1]), [1]).write_trace_csv(tmp_path / "x.csv")


def test_two_models_and_runs_are_independent():
    m1, m2 = chain([1]), chain([7])
    assert simulate(m1, [1, 1]).latency == 2 and simulate(m2, [1]).latency == 7
    assert simulate(m1, [1, 1]).latency == 2


# ---------------------------------------------------------------- build-time validation
def _net():
    net = Net("v")
    job = net.token_type("Job", "size")
    return net, job, net.place("a", job), net.place("done", job)


@pytest.mark.parametrize("make, words", [
    (lambda n, j, a, d: n.transition("t", inputs={"nowhere": 1}, outputs={d: 1}),
     "refers to place 'nowhere'"),
    (lambda n, j, a, d: n.transition("t", inputs={a: 1}, outputs={"void": 1}),
     "refers to place 'void'"),
    (lambda n, j, a, d: n.transition("t", inputs={a: 1}, outputs={d: 1}, delay=-2),
     "delay of transition 't' = -2"),
    (lambda n, j, a, d: n.transition("t", inputs={a: 1}, outputs={d: 1}, delay=2.5),
     "is a float"),
    (lambda n, j, a, d: n.transition("t", inputs={a: 0}, outputs={d: 1}), "must be >= 1"),
    (lambda n, j, a, d: n.transition("t", inputs={a: 1}, outputs={d: 1},
                                     delay=lambda x: x.size if x.size else 1), "plain bool"),
    (lambda n, j, a, d: n.transition("t", inputs={}, outputs={d: 1}), "no input place"),
    (lambda n, j, a, d: n.transition("t", inputs={a: 1}, outputs={d: 1}, concurrency=0),
     "concurrency = 0"),
])
def test_build_errors_name_the_culprit(make, words):
    net, job, a, done = _net()
    net.start, net.done = a, done
    with pytest.raises((NetError, TraceError)) as err:
        make(net, job, a, done)
        net.build()
    assert words in str(err.value)


def test_place_fed_tokens_of_another_type():
    net = Net("types")
    x, y = net.token_type("X", "v"), net.token_type("Y", "w")
    a, b = net.place("a", x), net.place("b", y)
    net.transition("t", inputs={a: 1}, outputs={b: Out(1, copy="a")})
    net.start, net.done = a, b
    with pytest.raises(NetError, match="place 'b' holds Y tokens but transition 't' feeds it X"):
        net.build()
    net2 = Net("types2")
    x2, y2 = net2.token_type("X", "v"), net2.token_type("Y", "w")
    a2, b2 = net2.place("a", x2), net2.place("b", y2)
    net2.transition("t", inputs={a2: 1}, outputs={b2: Out(1, props=lambda t: {"v": t.v})})
    net2.start, net2.done = a2, b2
    with pytest.raises(TraceError, match="properties \\['w'\\], but the producer gives \\['v'\\]"):
        net2.build()


def test_weight_that_can_never_be_met():
    net = Net("cap")
    job = net.token_type("Job", "size")
    a, b, done = net.place("a", job), net.place("b", job, capacity=4), net.place("done", job)
    net.transition("in", inputs={a: 1}, outputs={b: 1})
    net.transition("out", inputs={b: 5}, outputs={done: 1}, delay=1,
                   )
    net.start, net.done = a, done
    with pytest.raises(NetError, match="needs 5 tokens from 'b' at once, but its capacity is 4"):
        net.build()


def test_unfed_place_and_missing_done():
    net = Net("unfed")
    job = net.token_type("Job", "size")
    a, b, done = net.place("a", job), net.place("b", job), net.place("done", job)
    net.transition("t", inputs={a: 1, b: 1}, outputs={done: Out(1, copy="a")})
    net.start = a
    with pytest.raises(NetError, match="no done place"):
        net.build()
    net.done = done
    with pytest.raises(NetError, match="place 'b' is taken from by t but nothing ever puts "
                                       "a token"):            # an input arc: not "read"
        net.build()
    reader = Net("unfed-read")
    job = reader.token_type("Job", "size")
    a, b, done = (reader.place(n, job) for n in ("a", "b", "done"))
    reader.transition("t", inputs={a: 1}, read={b: 1}, outputs={done: Out(1, copy="a")})
    reader.start, reader.done = a, done
    with pytest.raises(NetError, match="place 'b' is read by t but nothing ever puts a token"):
        reader.build()


def test_psi_output_is_checked():
    net = Net("psi")
    job = net.token_type("Job", "size")
    a, d = net.place("a", job), net.place("d", job)
    net.transition("t", inputs={a: 1}, outputs={d: 1})
    net.start, net.done = a, d
    net.tokens_from_input = lambda xs: xs
    model = net.build()
    with pytest.raises(NetError, match="exactly the properties \\['size'\\]"):
        simulate(model, [{"nope": 1}])
    with pytest.raises(NetError, match="token properties are integers"):
        simulate(model, [{"size": 1.5}])
    assert simulate(model, [{"size": 1}, (2,)]).done_tokens == 2


def test_a_run_that_cannot_finish_is_json_on_stdout_too(cli):
    # a script reading `lpn simulate --json` got an empty stdout when the run stopped
    code, out, err = cli("lpn", "simulate", "block-pipeline", "--input",
                         '{"blocks": 40, "nnz": 9}', "--max-commits", "3", "--json")
    d = json.loads(out)
    assert code == 1 and d["ok"] is False and d["stopped"] == "limit"
    assert d["error"].startswith("stopped at cycle") and d["error"] in err
    assert d["total_commits"] == 4 and d["model"] == "block-pipeline"
    code, out, _ = cli("lpn", "simulate", "examples/three_stage.py:pipeline", "--json")
    assert code == 0 and "ok" not in json.loads(out)
