"""The verify benchmark's provable population (issue 23 item 4): random acyclic nets with
shared places that finish on every input of a small space. Their classes cannot be proved
exact (a guard or weight reads data of a place several transitions take), so the verifier
decides them by simulating every input (lpn/analysis/exhaustive.py); each proved bound is
re-checked here against the reference semantics on every input."""

import pytest

from accelperf.lpn import semantics
from accelperf.lpn.analysis.exhaustive import simulate_every_input
from accelperf.lpn.analysis.refine import Budget, partition
from accelperf.lpn.analysis.space import space_from_dict
from accelperf.lpn.analysis.verify import latency_bound, prove, shared_places
from lpn_random import acyclic_net, every_input, exhaustive_extremes


def small_space(model, given):
    return space_from_dict(model, {"places": {
        p: {"count": len(v), "properties": {"a": [0, 3], "b": [0, 3]}}
        for p, v in given.items()}})


def reference_latency(model, tokens):
    run = semantics.run(model, model.marking(tokens).tokens, max_commits=4000)
    return run.latency if run.stopped is None else None


def as_tuples(witness_tokens):
    return {p: [(t["a"], t["b"]) for t in ts] for p, ts in witness_tokens.items()}


# seed: (worst case, best case, inputs) by the reference semantics on every input
POPULATION = {30: (2, 0, 16), 41: (3, 1, 16), 44: (3, 0, 16), 72: (2, 2, 16),
              119: (5, 3, 256)}


@pytest.mark.parametrize("seed", sorted(POPULATION))
def test_population_bounds_are_proved_and_rechecked(seed):
    model, given, _ = acyclic_net(seed)
    assert shared_places(model)
    top, _, bottom, _, inputs = exhaustive_extremes(model, given)
    assert (top, bottom, inputs) == POPULATION[seed]
    space = small_space(model, given)
    for which, truth in (("max", top), ("min", bottom)):
        r = latency_bound(model, space, which, timeout=60)
        assert r.status == "proved" and r.bound == truth, r
        assert reference_latency(model, as_tuples(r.witness.tokens)) == truth
        assert f"simulating each of the space's {inputs} input(s)" in r.note
    latencies = [reference_latency(model, x) for x in every_input(given)]
    assert max(latencies) == top and min(latencies) == bottom


@pytest.mark.parametrize("seed", [41, 119])
def test_population_properties_one_cycle_off_are_refuted(seed):
    model, given, _ = acyclic_net(seed)
    top, bottom, _ = POPULATION[seed]
    space = small_space(model, given)
    assert prove(model, space, f"latency <= {top}", timeout=60).holds is True
    assert prove(model, space, f"latency >= {bottom}", timeout=60).holds is True
    for prop, breaks in ((f"latency <= {top - 1}", lambda x: x > top - 1),
                         (f"latency >= {bottom + 1}", lambda x: x < bottom + 1)):
        r = prove(model, space, prop, timeout=60)
        assert r.holds is False, r
        simulated = reference_latency(model, as_tuples(r.counterexample.tokens))
        assert breaks(simulated) and r.values["latency"] == simulated


def test_a_space_above_the_limit_is_not_enumerated():
    """The fallback is for small spaces only: above the limit the result stays
    'unknown' (never a guess)."""
    model, given, _ = acyclic_net(119)
    space = small_space(model, given)
    problem = partition(model, space, budget=Budget(60))
    assert problem.gaps                                   # why the classes are not exact
    assert simulate_every_input(problem, Budget(60), limit=255) is None
    every = simulate_every_input(problem, Budget(60), limit=256)
    assert every.complete and len(every.runs) == 256
