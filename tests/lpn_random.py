"""Random Latency Petri Nets for property tests: every construct of the semantics, small.

``nets()`` draws a net and an input; tests run it through the reference semantics and
through an engine and compare. Functions are drawn from a small menu that covers head and
later tokens, token counts, weights that may be 0, negative values (an error the run must
report) and inexact division.
"""

from __future__ import annotations

from hypothesis import assume
from hypothesis import strategies as st

from accelperf.lpn import Net, NetError, Out, count, where

PROPS = ("a", "b")

# (text for failure output, function of the argument places' proxies)
NUMBERS = [
    ("1", lambda *x: 1),
    ("2", lambda *x: 2),
    ("x0.a % 3", lambda *x: x[0].a % 3),
    ("x0.b", lambda *x: x[0].b),
    ("x0.a - 2", lambda *x: x[0].a - 2),
    ("max(x0.a, x0.b) // 2", lambda *x: max(x[0].a, x[0].b) // 2),
    ("where(x0.b > 1, 1, 0)", lambda *x: where(x[0].b > 1, 1, 0)),
    ("x0[1].a % 2", lambda *x: x[0][1].a % 2),
    ("x0.a / 2", lambda *x: x[0].a / 2),
    ("abs(x0.a - x0.b) % 4", lambda *x: abs(x[0].a - x[0].b) % 4),
]
COUNTED = [("count(p1) % 3", lambda *x: count("p1") % 3),
           ("min(count(p0), 2)", lambda *x: min(count("p0"), 2))]
GUARDS = [
    ("x0.a % 2 == 0", lambda *x: x[0].a % 2 == 0),
    ("x0.b <= 2", lambda *x: x[0].b <= 2),
    ("count(p2) < 3", lambda *x: count("p2") < 3),
]
PRODUCERS = [
    ("{a: x0.a + 1, b: x0.b}", lambda *x: {"a": x[0].a + 1, "b": x[0].b}),
    ("{a: x0.b, b: x0.a % 3}", lambda *x: {"a": x[0].b, "b": x[0].a % 3}),
    ("{a: 0, b: 1}", lambda *x: {"a": 0, "b": 1}),
]


@st.composite
def nets(draw, max_places: int = 5, max_transitions: int = 5):
    """(model, input tokens {place name: [(a, b), ...]}, description)."""
    n_places = draw(st.integers(3, max_places))
    n_trans = draw(st.integers(1, max_transitions))
    net = Net("random")
    tok = net.token_type("Tok", *PROPS)
    places = []
    for i in range(n_places):
        capacity = draw(st.sampled_from([None, None, None, 1, 2, 3]))
        places.append(net.place(f"p{i}", tok, capacity=capacity))
    lines = []
    small = st.integers(0, 3)
    menu = NUMBERS + COUNTED
    fed = []
    for k in range(n_trans):
        inputs = draw(st.lists(st.sampled_from(range(n_places)), min_size=1, max_size=2,
                               unique=True))
        weights = {}
        fed.append(inputs[0])
        for p in inputs:
            i = draw(st.sampled_from(range(2 * len(menu))))     # half the time: 1
            weights[places[p]] = 1 if i >= len(menu) else menu[i][1]
            lines.append(f"t{k} takes {'1' if i >= len(menu) else menu[i][0]} from p{p}")
        outs = draw(st.lists(st.sampled_from(range(n_places)), max_size=2, unique=True))
        outputs = []
        for p in outs:
            c = draw(st.sampled_from([0, 1, 1, 2, "f"]))
            count_spec = NUMBERS[2][1] if c == "f" else c
            if draw(st.booleans()):
                text, producer = draw(st.sampled_from(PRODUCERS))
                outputs.append((places[p], Out(count_spec, props=producer)))
            else:
                text = f"copy of p{inputs[0]}"
                count_spec = 1 if c == "f" else min(c, 1)
                outputs.append((places[p], Out(count_spec, copy=f"p{inputs[0]}")))
            lines.append(f"t{k} puts {c} x {text} into p{p}")
        options = {}
        if draw(st.integers(0, 3)) == 0:
            p = draw(st.sampled_from(range(n_places)))
            n = draw(st.sampled_from([1, 2, NUMBERS[6][1]]))
            options["read"] = {places[p]: n}
            lines.append(f"t{k} reads p{p}")
        if draw(st.integers(0, 3)) == 0:
            p = draw(st.sampled_from(range(n_places)))
            options["inhibit"] = {places[p]: draw(st.integers(1, 3))}
            lines.append(f"t{k} inhibited by p{p}")
        if draw(st.integers(0, 2)) == 0:
            text, guard = draw(st.sampled_from(GUARDS))
            options["guard"] = guard
            lines.append(f"t{k} guard {text}")
        d = draw(st.sampled_from([0, 1, 2, 3, "f", "g"]))
        delay = NUMBERS[2][1] if d == "f" else NUMBERS[9][1] if d == "g" else d
        concurrency = draw(st.sampled_from([1, 1, 2, None]))
        ii = draw(st.sampled_from([None, None, 1, 2, "f"]))
        interval = NUMBERS[2][1] if ii == "f" else ii
        lines.append(f"t{k} delay {d} concurrency {concurrency} interval {ii}")
        net.transition(f"t{k}", inputs=weights, outputs=outputs, delay=delay,
                       concurrency=concurrency, initiation_interval=interval, **options)
    net.start = places                       # Ψ may put tokens anywhere
    net.done = places[draw(st.integers(1, n_places - 1))]
    given = {}
    for p in sorted(set(fed))[:3] + draw(st.lists(st.sampled_from(range(n_places)),
                                                   max_size=1)):
        given[f"p{p}"] = draw(st.lists(st.tuples(small, small), min_size=1, max_size=6))
    net.tokens_from_input = lambda tokens: tokens
    try:
        model = net.build()
    except NetError:                         # e.g. a weight above a capacity: never fires
        assume(False)
    return model, given, "\n".join(lines)
