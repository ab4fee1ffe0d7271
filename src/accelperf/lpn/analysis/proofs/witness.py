"""Witnesses and counterexamples (OSDI'24 §4.4): an input a Z3 model picks, written as
the user's input, simulated by the fast engine, and checked against its class."""

from __future__ import annotations

from dataclasses import dataclass

from ....errors import ModelError, invalid
from .encoding import SAMPLE_MAX_COMMITS, VerificationError, simulate_sample
from .refine import Problem, TraceClass, drawn_sample, follow, initial_marking


@dataclass(frozen=True)
class Witness:
    """An input of the space as the user writes it (``input``: Ψ's input when the space
    has an ``input`` formula, else each place's token count or varying properties, see
    :meth:`.space.InputSpace.shown`) and as tokens, with the latency the simulator gives
    it; ``stopped`` says why an input that never ends stopped."""

    input: object
    tokens: dict
    simulated: int | None
    stopped: str = ""

    def to_dict(self) -> dict:
        out = {"input": self.input, "tokens": self.tokens, "simulated": self.simulated}
        return {**out, "stopped": self.stopped} if self.stopped else out


def stopped_key(witness: Witness | None) -> dict:
    """The JSON key of an input that never finishes: why it stopped."""
    return {"stopped": witness.stopped} if witness is not None and witness.stopped else {}


def _user_input(problem: Problem, z3model, sample: dict, marking: dict):
    """The input in Ψ's format, Ψ turning it back into exactly ``marking``; without an
    ``input`` formula, the space's short form of ``sample``."""
    return _written(problem.model, problem.space, problem.variables,
                    lambda t: z3model.eval(t, model_completion=True), sample, marking)


def _written(model, space, variables: dict, evaluate, sample: dict, marking: dict):
    user = space.user_input(variables, evaluate)
    if user is None:
        return space.shown(sample)
    mine = model.marking(user).tokens
    if {p: list(ts) for p, ts in mine.items() if ts} != \
            {p: list(ts) for p, ts in marking.items() if ts}:
        raise invalid(f"{space.origin}: input", space.input,
                      f"a formula whose value ({user!r}) Ψ turns into the witness's "
                      f"tokens {sample}; it gives other tokens")
    return user


@dataclass(frozen=True)
class OnlyInput:
    """A space in which nothing varies holds one input (or none): ``witness`` is that
    input simulated (None when the constraints exclude it); ``variables`` the space's
    tokens, all constants."""

    witness: Witness | None
    variables: dict


def only_input(model, space) -> OnlyInput | None:
    """The one input of a space whose tokens' properties are all fixed, simulated: the
    space is a single class of a single input, so its run is the proof (no solver, and
    no encoding of the run to build). None when some property varies."""
    import z3

    from ...sim import SimulationError
    variables = space.variables(model)
    values = [v for t in variables.values() for vs in t.values for v in vs.values()]
    if not all(z3.is_int_value(v) for v in values):
        return None
    if not all(z3.is_true(z3.simplify(c)) for c in space.constraint_terms(variables)):
        return OnlyInput(None, variables)
    sample = {p.place: [{k: v.as_long() for k, v in vs.items()}
                        for vs in variables[p.place].values] for p in space.places}
    marking = initial_marking(model, space, sample)
    user = _written(model, space, variables, z3.simplify, sample, marking)
    try:
        result = simulate_sample(model, marking, 4 * SAMPLE_MAX_COMMITS)
        latency, stopped = result.latency, "" if result.latency is not None else \
            "no token reached the done place"
    except SimulationError as exc:
        latency, stopped = None, str(exc)
    return OnlyInput(Witness(user, sample, latency, stopped), variables)


def unfinished_witness(problem: Problem) -> Witness:
    """The input that does not run to the end, checked with the fast engine too."""
    from ...sim import SimulationError
    z3model, message = problem.unfinished
    sample = drawn_sample(problem.space, problem.variables, z3model)
    marking = initial_marking(problem.model, problem.space, sample)
    user = _user_input(problem, z3model, sample, marking)
    try:
        result = simulate_sample(problem.model, marking)
        if result.latency is not None:
            raise VerificationError(f"the reference semantics stops on {sample} "
                                    f"({message}) but the fast engine finishes it")
    except SimulationError:
        pass
    return Witness(user, sample, None, message)


def input_witness(problem: Problem, values: list) -> Witness:
    """The input giving each varying property of the space its value in ``values``
    ([(Z3 variable, int)]), simulated by the fast engine, with no class to check it
    against (:mod:`.exhaustive`); ``simulated`` is None, with ``stopped`` saying why,
    when it does not run to the end."""
    import z3

    from ...sim import SimulationError
    model, space = problem.model, problem.space
    pairs = [(v, z3.IntVal(x)) for v, x in values]
    value_of = {v.get_id(): x for v, x in values}

    def evaluate(term):                  # for an input formula of the space (rare)
        return z3.simplify(z3.substitute(term, *pairs) if pairs else term)
    sample = {p.place: [{k: v.as_long() if z3.is_int_value(v) else value_of[v.get_id()]
                         for k, v in vs.items()}
                        for vs in problem.variables[p.place].values] for p in space.places}
    marking = initial_marking(model, space, sample)
    user = _written(model, space, problem.variables, evaluate, sample, marking)
    try:
        result = simulate_sample(model, marking, 4 * SAMPLE_MAX_COMMITS)
    except SimulationError as exc:
        return Witness(user, sample, None, str(exc))
    if result.latency is None:
        return Witness(user, sample, None, "no token reached the done place")
    return Witness(user, sample, result.latency)


def simulate_witness(problem: Problem, cls: TraceClass, z3model, claimed: int | None) -> Witness:
    """The input in ``z3model``, simulated. In an exact class its run must follow its
    class and, when a latency is ``claimed``, take exactly that long: anything else is a
    bug of this module and stops with an error."""
    from ...sim import SimulationError
    model, space = problem.model, problem.space
    sample = drawn_sample(space, problem.variables, z3model)
    marking = initial_marking(model, space, sample)
    user = _user_input(problem, z3model, sample, marking)
    try:
        simulated = simulate_sample(model, marking, 4 * SAMPLE_MAX_COMMITS).latency
    except SimulationError as exc:
        if not cls.exact:
            return Witness(user, sample, None, str(exc))
        raise VerificationError(f"witness {sample} does not run to the end: {exc}") from None
    if not cls.exact:
        return Witness(user, sample, simulated)
    again = follow(model, space, problem.variables, sample, cls.index, None)
    if again.routing != cls.routing or (claimed is not None and simulated != claimed):
        raise VerificationError(
            f"witness {user if user is not None else sample} simulates to {simulated} cycles "
            f"but the proof says {claimed}"
            + ("" if again.routing == cls.routing else
               ": its run routes tokens differently from its class"))
    return Witness(user, sample, simulated)


def why_not_proved(problem: Problem, what: str) -> str:
    """Why a result over ``problem`` is not a proof ("" when it is)."""
    if problem.unfinished is not None:
        z3model, message = problem.unfinished
        drawn = drawn_sample(problem.space, problem.variables, z3model)
        try:        # as the witness is written: in the space's `input` format
            shown = _user_input(problem, z3model, drawn,
                                initial_marking(problem.model, problem.space, drawn))
        except ModelError:          # Ψ refuses it: its tokens say what it is
            shown = drawn
        return (f"an input of the space does not run to the end ({message}): "
                f"{shown} is the counterexample; no {what} holds for it")
    if not problem.complete:
        return (f"{problem.cut_short or 'time budget ran out'}: {what} over the "
                f"{len(problem.classes)} class(es) found so far")
    if problem.gaps:
        shown = problem.gaps[:3]
        more = len(problem.gaps) - len(shown)
        return (f"not proved: {what} over the classes' samples' routings, but the encoding "
                f"cannot exclude other routings: " + "; ".join(shown)
                + (f"; and {more} more" if more else ""))
    return ""
