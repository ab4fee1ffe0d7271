"""Issue 37 item 1: rule R2 is stated once (semantics.START_RULE) and every engine follows
it. Each test changes the order in that one place and sees the engine change with it: the
reference's reason for a block, the fast engines' errors, the generated Python and C,
the symbolic explorer's and the Z3 encoding's visits."""

import re
import shutil
import warnings

import pytest
import sympy

from accelperf.lpn import Net, SimulationError, codegen, csource, semantics, simulate
from accelperf.lpn.analysis import encoding
from accelperf.lpn.analysis.space import InputSpace
from accelperf.lpn.analysis.symexec import Explorer
from accelperf.lpn.analysis.symrecords import Path, SymToken

DEFAULT = semantics.START_RULE
DATA = ("guard", "weight", "read", "inhibit")


def reordered(*data):
    """START_RULE with its data steps (c)-(f) in the order ``data``."""
    rest = iter(data)
    return tuple(next(rest) if kind in DATA else kind for kind in DEFAULT)


ORDERS = [DATA, ("inhibit", "guard", "weight", "read"), ("weight", "guard", "read", "inhibit"),
          ("read", "inhibit", "weight", "guard")]


@pytest.fixture(params=ORDERS, ids=lambda o: "-".join(o))
def order(request, monkeypatch):
    monkeypatch.setattr(semantics, "START_RULE", reordered(*request.param))
    return request.param


def gated_net(guard_holds: bool, inhibit_limit=lambda src: src.n + 5):
    """One transition ``t`` with every data step, all on functions of its token: a guard,
    a weight, a read arc on ``gate`` and an inhibitor on ``busy`` (which holds 1 token;
    none when ``inhibit_limit`` is None)."""
    net = Net("gated")
    job = net.token_type("Job", "n")
    src, gate, busy, done = (net.place(n, job) for n in ("src", "gate", "busy", "done"))
    net.transition("t", inputs={src: lambda src: src.n}, outputs={done: 1},
                   guard=(lambda src: src.n >= 0) if guard_holds else (lambda src: src.n < 0),
                   read={gate: lambda src: src.n + 1},
                   inhibit={busy: inhibit_limit} if inhibit_limit else None,
                   delay=lambda src: src.n + 2, initiation_interval=lambda src: src.n + 3)
    net.start, net.done = [src, gate, busy], done
    net.tokens_from_input = lambda k: {"src": [(k,)], "gate": [(0,)] * (k + 1),
                                       "busy": [(0,)]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return net.build()


def first_of(order, blocks):
    return next(blocks[kind] for kind in order if kind in blocks)


def test_the_reference_blocks_at_the_first_failing_step_of_the_rule(order):
    # n = 3: the guard is false, the weight (3) exceeds src's 1 token, the read (4) gate's
    # 0 tokens, and busy's 1 token reaches the inhibitor's limit (1)
    model = gated_net(guard_holds=False, inhibit_limit=lambda src: src.n - 2)
    pid = {p.name: i for i, p in enumerate(model.places)}
    state = semantics.State.initial(model, {pid["src"]: [(3,)], pid["busy"]: [(0,)]})
    got = semantics.check(model, model.transitions[0], state, 0, 0, 0)
    assert got.reason == first_of(order, {
        "guard": "guard is false for the tokens of src, gate",
        "weight": "needs 3 tokens in src, has 1",
        "read": "reads 4 tokens in gate, has 0",
        "inhibit": "inhibited: busy holds 1 tokens, needs fewer than 1"})


@pytest.mark.parametrize("backend", ["python", "compiled"])
def test_the_fast_engines_stop_or_block_as_the_rule_orders(order, backend):
    # The guard is false and the inhibitor's count is below 0 (an error, R2): nothing
    # fires when the guard comes first (src keeps the token it started with: R7 calls
    # that rest), and the run stops with the inhibitor's error else.
    if backend == "compiled" and shutil.which("cc") is None:
        pytest.skip("no C compiler (cc): the compiled engine cannot be built")
    model = gated_net(guard_holds=False, inhibit_limit=lambda src: src.n - 9)
    ref = semantics.run(model, model.marking(1).tokens)
    if order.index("guard") < order.index("inhibit"):
        assert ref.stopped is None and ref.firings == ()
        r = simulate(model, 1, backend=backend)
        assert r.backend == backend and r.total_commits == 0 and r.latency is None
    else:
        with pytest.raises(SimulationError) as err:
            simulate(model, 1, backend=backend)
        assert ref.stopped == "error"
        assert "inhibitor arc on 'busy' = -8: must be >= 0" in ref.message
        assert ref.message in str(err.value)


MARKS = {"guard": "if not (", "weight": "w0 = ", "read": "r0 = ", "inhibit": "i0 = ",
         "delay": "d = ", "interval": "ii = "}
C_MARKS = {"guard": "int64_t g = ", "weight": "int64_t w0 = ", "read": "int64_t r0 = ",
           "inhibit": "int64_t i0 = ", "delay": "int64_t d = ", "interval": "int64_t ii = "}


def _order_in(text: str, marks: dict) -> list[str]:
    return sorted(marks, key=lambda kind: text.index(marks[kind]))


def test_the_generated_python_and_c_check_in_the_rule_order(order):
    model = gated_net(guard_holds=True)
    expected = list(order) + ["delay", "interval"]
    source = codegen.source_of(model, model.transitions[0])
    probe, fire = source.split("\ndef fire(now):")[0], source.split("\ndef fire(now):")[1]
    assert _order_in(probe, MARKS) == expected
    assert _order_in(fire.split("def commit")[0], MARKS) == expected
    c_source, _ = csource.generate(model, with_tokens=False)
    fire_0 = re.search(r"static inline int fire_0\(.*?\n}\n", c_source, re.S).group(0)
    assert _order_in(fire_0, C_MARKS) == expected


def test_a_probe_in_c_answers_after_every_step_when_the_interval_comes_earlier(monkeypatch):
    # (g) before (c): the probe still checks every other step, only the firing is held
    monkeypatch.setattr(semantics, "START_RULE", ("concurrency", "tokens", "earliest") +
                        DATA + ("delay", "interval"))
    model = gated_net(guard_holds=True)
    fire_0 = re.search(r"static inline int fire_0\(.*?\n}\n",
                       csource.generate(model, with_tokens=False)[0], re.S).group(0)
    held = fire_0.index("if (!probe && now < C->NS[0]) return F_HELD;")
    assert held < fire_0.index("int64_t g = ") < fire_0.index("if (probe) return F_FIRED;")


def test_the_symbolic_explorer_visits_the_steps_in_the_rule_order(order, monkeypatch):
    model = gated_net(guard_holds=True, inhibit_limit=None)
    seen = []
    for kind, step in list(Explorer.STEPS.items()):
        def record(self, path, t, s, plan, _step=step):
            seen.append(s.kind)
            return _step(self, path, t, s, plan)
        monkeypatch.setitem(Explorer.STEPS, kind, record)
    explorer = Explorer(model, InputSpace(places=()))
    one = lambda k: [SymToken((sympy.Integer(0),))] * k        # noqa: E731
    path = Path([[SymToken((sympy.Integer(1),))], one(2), one(1), []])
    assert explorer._plan(path, model.transitions[0]) is not None
    assert [kind for kind in seen if kind in DATA] == [k for k in order if k != "inhibit"]
    assert seen == [k for k in semantics.START_RULE if k != "inhibit"]


def test_the_encoding_decides_on_data_in_the_rule_order(order):
    import z3
    model = gated_net(guard_holds=True)
    pid = {p.name: i for i, p in enumerate(model.places)}
    n = z3.Int("n")
    recorder = encoding.Recorder(model, {pid["src"]: [(n,)]}, "x.")
    semantics.run(model, model.marking(1).tokens, observe=recorder)
    # n = 1: the guard n >= 0, the weight n == 1, the read n + 1 == 2, the inhibitor
    # n + 5 == 6, in the order the start rule took them
    decided = [str(c) for c in recorder.condition]
    assert decided[:4] == [{"guard": "0 <= n", "weight": "n == 1", "read": "n + 1 == 2",
                            "inhibit": "n + 5 == 6"}[kind] for kind in order]
