"""Deciding a small space by simulating every input of it: the fallback of :mod:`.verify`
when the classes of :mod:`.refine` cover the space but cannot be proved exact.

A class is exact only when its conditions pin down how its inputs route tokens (see
:mod:`.encoding`); where a guard, weight or read count depends on data of a place that
several transitions take, the readiness of that transition at moments no sample records
is not encoded, and a bound over the classes is "unknown". When the space holds few
inputs (at most :data:`EXHAUSTIVE_LIMIT`, after its constraints), each is simulated by
the fast engine instead: the run of one input is determined, so the largest (smallest)
latency over all of them is the proved bound, and an input that breaks a property, or
does not finish, is its counterexample. Results decided this way say so in their note, with the input count.
This is explicit-state checking of a finite space, not a formula: it is sound and
complete there and says nothing about larger spaces.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass

from .refine import Budget, Problem
from .witness import input_witness

EXHAUSTIVE_LIMIT = 4096
"""Inputs a space may hold for :func:`simulate_every_input` (16 ** 3: three tokens with
two properties of four values each)."""


@dataclass(frozen=True)
class SimulatedSpace:
    """Every input of a space with its simulated run: ``runs`` pairs each input's Z3
    assignment (``[(variable, value)]``) with its witness (``simulated`` None when the
    input does not finish). ``complete`` is False when the time budget ran out."""

    runs: tuple
    complete: bool

    def __repr__(self) -> str:
        return f"SimulatedSpace({len(self.runs)} inputs, complete={self.complete})"


def _free(problem: Problem) -> list:
    """(Z3 variable, (lo, hi)) of every varying token property of the space."""
    import z3
    out = []
    for p in problem.space.places:
        for values in problem.variables[p.place].values:
            for name, v in values.items():
                if not z3.is_int_value(v):
                    out.append((v, p.properties[name]))
    return out


def space_size(problem: Problem) -> int:
    """How many inputs the space holds, counted over its varying properties' ranges
    (an upper bound when it has constraints)."""
    size = 1
    for _, (lo, hi) in _free(problem):
        size *= hi - lo + 1
    return size


class _OutOfTime(Exception):
    """The time budget ran out while drawing the space's inputs."""


def _assignments(problem: Problem, budget: Budget):
    """Every assignment [(Z3 variable, value)] of the space's variables that meets its
    constraints."""
    import z3
    free = _free(problem)
    if not problem.space.constraints:
        for values in itertools.product(*[range(lo, hi + 1) for _, (lo, hi) in free]):
            yield list(zip((v for v, _ in free), values))
        return
    solver = z3.Solver()
    solver.add(problem.base)
    while True:
        budget.apply(solver)
        verdict = solver.check()
        if verdict == z3.unknown:
            raise _OutOfTime
        if verdict == z3.unsat:
            return
        m = solver.model()
        values = [(v, m.eval(v, model_completion=True).as_long()) for v, _ in free]
        yield values
        solver.add(z3.Or([v != x for v, x in values]) if values else z3.BoolVal(False))


def simulate_every_input(problem: Problem, budget: Budget,
                         limit: int = EXHAUSTIVE_LIMIT) -> SimulatedSpace | None:
    """Every input of ``problem``'s space simulated (see the module docstring); None
    when the space holds more than ``limit`` inputs (counted over its ranges, or, when
    constraints narrow it, by drawing up to ``limit`` + 1 of them). Stops at the first
    input that does not finish (it decides every bound and property)."""
    if space_size(problem) > limit and not problem.space.constraints:
        return None
    try:
        inputs = list(itertools.islice(_assignments(problem, budget), limit + 1))
    except _OutOfTime:
        return SimulatedSpace((), False)
    if len(inputs) > limit:
        return None
    runs = []            # (assignment, witness)
    for values in inputs:
        if budget.over():
            return SimulatedSpace(tuple(runs), False)
        witness = input_witness(problem, values)
        runs.append((values, witness))
        if witness.simulated is None:
            break
    return SimulatedSpace(tuple(runs), not budget.over())


# The symbolic paths counted_space explores before it gives the space to the partition: a
# packet engine's one packet has 8 (its last burst's size times one or several bursts);
# a random net racing its tokens can fork into thousands, minutes of SymPy for nothing.
COUNTED_PATHS = 64
COUNTED_SECONDS = 30.0


def counted_space(model, space, budget: Budget, limit: int = EXHAUSTIVE_LIMIT):
    """A small space whose token counts vary with a size (issue 33: one packet of
    1..1500 B makes ``ceil(bytes/16)`` blocks) as a :class:`Problem` with no classes, to be
    decided by :func:`simulate_every_input` before any class is encoded; None otherwise.

    The encoding of :mod:`.encoding` fixes every count per class, so such a space needs
    a class per count (94 for 1..1500 B, each a Z3 problem of its own firings: 50
    minutes to "unknown"). Simulating each of its at most ``limit`` inputs decides it
    exactly in seconds. A count varies when the symbolic run (:mod:`.symexec`) leaves
    one symbolic: a bundle, which it makes only for counts past ``SMALL_COUNT`` values."""
    import sympy

    from ..interfaces.classes import input_classes
    from .refine import Problem
    from ..interfaces.symexec import AnalysisError, ExplosionError
    variables = space.variables(model)
    problem = Problem(model, space, variables, space.constraint_terms(variables), [], True)
    if space_size(problem) > limit or budget.over():
        return None
    # A few paths, in a fifth of the budget (COUNTED_SECONDS without one), at most: a net
    # that races into many paths is no such space, and the partition decides it.
    left = None if budget.end is None else budget.end - time.monotonic()
    stop = time.monotonic() + (COUNTED_SECONDS if left is None else left / 5)
    try:
        classes = input_classes(model, space, max_classes=COUNTED_PATHS,
                                over=lambda: time.monotonic() > stop)
    except (AnalysisError, ExplosionError):
        return None
    counted = any(sympy.sympify(n).free_symbols for c in classes
                  for n in c.commit_counts().values())
    return problem if counted else None


def decided_note(simulated: SimulatedSpace, why: str) -> str:
    """The note of a result decided by :func:`simulate_every_input`."""
    last = simulated.runs[-1][1] if simulated.runs else None
    done = "the space's inputs until one did not finish:" if last is not None and \
        last.simulated is None else "each of the space's"
    return (f"decided by simulating {done} {len(simulated.runs)} input(s) (the classes' "
            f"encoding cannot exclude other routings: {why})")


__all__ = ["EXHAUSTIVE_LIMIT", "SimulatedSpace", "simulate_every_input", "space_size",
           "decided_note", "counted_space"]
