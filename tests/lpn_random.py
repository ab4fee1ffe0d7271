"""Random Latency Petri Nets for property tests: every construct of the semantics, small.

``nets()`` draws a net and an input; tests run it through the reference semantics and
through an engine and compare. Functions are drawn from a small menu that covers head and
later tokens, token counts, weights that may be 0, negative values (an error the run must
report) and inexact division.
"""

from __future__ import annotations

import warnings

from hypothesis import assume
from hypothesis import strategies as st

from accelperf.lpn import Net, NetError, Out, count, where
from accelperf.lpn.analysis.check import ModelCheckWarning

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
        with warnings.catch_warnings():      # odd nets are the point: no check warnings
            warnings.simplefilter("ignore", ModelCheckWarning)
            model = net.build()
    except NetError:                         # e.g. a weight above a capacity: never fires
        assume(False)
    return model, given, "\n".join(lines)


def acyclic_net(seed: int, n_places: int = 4, n_trans: int = 4, max_tokens: int = 2):
    """(model, input tokens, description) of a random net drawn by ``random.Random(seed)``
    from the same menus as :func:`nets` (functions, guards, producers, reads, inhibitors,
    capacities, concurrency, intervals), with arcs only from lower- to higher-numbered
    places, so that every run ends; the last place is the done place and the last
    transition feeds it. The input puts 1..``max_tokens`` tokens on p0 and p1, small
    enough to simulate every input of the space (each property 0..3). Addressed by seed,
    so a test can take a few nets of a population without drawing the rest; None when
    the drawn net does not build (e.g. a weight above a capacity)."""
    import random
    rng = random.Random(seed)
    net = Net("acyclic")
    tok = net.token_type("Tok", *PROPS)
    places = [net.place(f"p{i}", tok, capacity=rng.choice([None, None, None, 1, 2, 3]))
              for i in range(n_places)]
    menu, lines = NUMBERS + COUNTED, []
    for k in range(n_trans):
        last = k == n_trans - 1
        top = n_places - 2                          # inputs come from before the done place
        inputs = sorted(rng.sample(range(top + 1), rng.choice([1, 1, 2])))
        weights = {}
        for p in inputs:
            i = rng.randrange(2 * len(menu))
            weights[places[p]] = 1 if i >= len(menu) else menu[i][1]
            lines.append(f"t{k} takes {'1' if i >= len(menu) else menu[i][0]} from p{p}")
        later = list(range(max(inputs) + 1, n_places))
        outs = [n_places - 1] if last else rng.sample(later, min(len(later),
                                                                 rng.choice([1, 1, 2])))
        outputs = []
        for p in outs:
            c = rng.choice([1, 1, 2, "f"])
            count_spec = NUMBERS[2][1] if c == "f" else c
            if rng.random() < 0.5:
                text, producer = rng.choice(PRODUCERS)
                outputs.append((places[p], Out(count_spec, props=producer)))
            else:
                text, count_spec = f"copy of p{inputs[0]}", 1 if c == "f" else min(c, 1)
                outputs.append((places[p], Out(count_spec, copy=f"p{inputs[0]}")))
            lines.append(f"t{k} puts {c} x {text} into p{p}")
        options = {}
        if rng.randrange(3) == 0:
            p = rng.randrange(n_places - 1)
            options["read"] = {places[p]: rng.choice([1, 2, NUMBERS[6][1]])}
            lines.append(f"t{k} reads p{p}")
        if rng.randrange(4) == 0:
            p = rng.randrange(n_places - 1)
            options["inhibit"] = {places[p]: rng.randint(1, 3)}
            lines.append(f"t{k} inhibited by p{p}")
        if rng.randrange(3) == 0:
            text, guard = rng.choice(GUARDS)
            options["guard"] = guard
            lines.append(f"t{k} guard {text}")
        d = rng.choice([0, 1, 2, 3, "f", "g"])
        delay = NUMBERS[2][1] if d == "f" else NUMBERS[9][1] if d == "g" else d
        concurrency = rng.choice([1, 1, 2, None])
        ii = rng.choice([None, None, 1, 2, "f"])
        interval = NUMBERS[2][1] if ii == "f" else ii
        lines.append(f"t{k} delay {d} concurrency {concurrency} interval {ii}")
        net.transition(f"t{k}", inputs=weights, outputs=outputs, delay=delay,
                       concurrency=concurrency, initiation_interval=interval, **options)
    net.start = places
    net.done = places[-1]
    total = rng.randint(1, max_tokens)
    first = rng.randint(1, total) if total > 1 else 1
    given = {"p0": [(0, 0)] * first}
    if total > first:
        given["p1"] = [(0, 0)] * (total - first)
    net.tokens_from_input = lambda tokens: tokens
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ModelCheckWarning)
            model = net.build()
    except NetError:
        return None
    return model, given, "\n".join(lines)


def every_input(given: dict):
    """Every input with the token counts of ``given`` and each property 0..3:
    {place: [(a, b), ...]}, 16 ** (number of tokens) of them."""
    import itertools
    slots = [(p, i) for p, v in given.items() for i in range(len(v))]
    for values in itertools.product(range(4), repeat=2 * len(slots)):
        tokens = {p: [None] * len(v) for p, v in given.items()}
        for k, (p, i) in enumerate(slots):
            tokens[p][i] = (values[2 * k], values[2 * k + 1])
        yield tokens


def exhaustive_extremes(model, given: dict, max_commits: int = 4000):
    """(largest latency, its input, smallest latency, its input, inputs simulated) over
    :func:`every_input` by the reference semantics; None as soon as one input does not
    run to the end."""
    from accelperf.lpn import semantics
    top = bottom = None
    n = 0
    for tokens in every_input(given):
        run = semantics.run(model, model.marking(tokens).tokens, max_commits=max_commits)
        n += 1
        if run.stopped is not None or run.latency is None:
            return None
        if top is None or run.latency > top[0]:
            top = (run.latency, tokens)
        if bottom is None or run.latency < bottom[0]:
            bottom = (run.latency, tokens)
    return top[0], top[1], bottom[0], bottom[1], n
