"""The input classes of a space, found by refinement (OSDI'24 §4.4): a sample is drawn
outside the classes found so far, followed (:mod:`.encoding`), and its class's conditions
excluded, until no input is left (:func:`partition`). A sample the fast engine does not
run to the end is the counterexample at once, without being followed."""

from __future__ import annotations

import time
from dataclasses import dataclass

from ....errors import invalid
from ...net import Model
from ...semantics import run as reference_run
from .encoding import (SAMPLE_MAX_COMMITS, OutOfTime, Recorder, VerificationError, maximum,
                       simulate_sample, unfollowed)
from ..input_class import InputClass
from ..space import InputSpace

DEFAULT_MAX_CLASSES = 256
"""Classes after which :func:`partition` stops: the space is too varied to enumerate. A
budget like the time budget, not a check of the space (which is valid, only too varied
to prove class by class): a result over the classes found so far is "unknown" and its
note names the limit (:func:`class_limit`)."""


def class_limit(max_classes: int) -> str:
    """Why a class search stopped at ``max_classes`` with inputs left (the note's reason)."""
    return (f"the space has more than {max_classes} input classes (the class search's "
            f"limit): narrow the ranges, split the space, or tie properties together with "
            f"constraints")

TraceClass = InputClass
"""The name this module's classes had: they are :class:`.input_class.InputClass` with
refinement's fields filled."""


def initial_marking(model: Model, space: InputSpace, sample: dict) -> dict:
    """{place id: [property tuples]} (the reference engine's form): the model's own
    initial tokens, then the sample's in the space's places (:meth:`.Model.with_tokens`)."""
    given = {p.place: sample.get(p.place, ()) for p in space.places}   # absent: no tokens
    return {pid: list(ts) for pid, ts in model.with_tokens(given).tokens.items()}


class _Unfinished(Exception):
    """A sample run that does not reach its end (deadlock, error or a limit, R7-R8)."""

    def __init__(self, sample: dict, message: str):
        super().__init__(message)
        self.sample, self.message = sample, message


def follow(model: Model, space: InputSpace, variables: dict, sample: dict, index: int = 0,
           budget=None):
    """The class of ``sample`` ({place: [{prop: value}]}): run the reference semantics on
    it and encode what the run did (see :mod:`.encoding`). A sample that does not
    run to the end raises :class:`VerificationError` (``partition`` reports it as a
    counterexample)."""
    try:
        return _follow(model, space, variables, sample, index, budget)
    except _Unfinished as exc:
        raise VerificationError(f"the input {sample} of the space does not run to the "
                                f"end: {exc.message}") from None


def _endless(model: Model, marking: dict) -> str | None:
    """Why the fast engine does not run ``marking`` to the end (None when it does). An
    endless sample would otherwise be followed, token by token and with its Z3 terms,
    for all :data:`SAMPLE_MAX_COMMITS` commits (minutes on a small net); the fast engine
    says so in about a second, and the witness is checked by it again."""
    from ...sim import SimulationError
    try:
        result = simulate_sample(model, marking)
    except SimulationError as exc:
        return str(exc)
    return None if result.latency is not None else "no token reached the done place"


def _follow(model, space, variables, sample, index, budget):
    import z3
    marking = initial_marking(model, space, sample)
    why = _endless(model, marking)
    if why is not None:
        raise _Unfinished(sample, why)
    symbolic = {}
    for p in space.places:
        pid = model.place_id(p.place)
        props = model.places[pid].token_type.properties
        own = [tuple(map(z3.IntVal, t)) for t in model.initial.get(pid, [])]
        symbolic[pid] = own + [tuple(v[k] for k in props) for v in variables[p.place].values]
    prefix = f"c{index}."
    recorder = Recorder(model, symbolic, prefix, budget)
    result = reference_run(model, marking, observe=recorder, max_commits=SAMPLE_MAX_COMMITS)
    if result.stopped is not None or result.latency is None:
        raise _Unfinished(sample, result.message or "no token reached the done place")
    recorder.finish()
    gaps = [f"{name}'s guard, weights or read counts read tokens or counts that change "
            f"at moments no sample records" for name in unfollowed(model)]
    latency = z3.Int(f"{prefix}latency")
    timing = recorder.timing + maximum(latency, recorder.into_done)
    return InputClass(index, tuple(recorder.condition), sample=sample,
                      order=tuple(recorder.order), timing=tuple(timing), latency=latency,
                      sample_latency=result.latency,
                      routing=tuple(map(tuple, recorder.routing)),
                      firings=len(result.firings),
                      gaps=tuple(dict.fromkeys(gaps + recorder.gaps)))


def drawn_sample(space: InputSpace, variables: dict, z3model) -> dict:
    return {p.place: [{k: z3model.eval(v, model_completion=True).as_long()
                       for k, v in values.items()} for values in variables[p.place].values]
            for p in space.places}


class Budget:
    """A wall-clock budget shared by the queries of one command (None: no limit)."""

    def __init__(self, seconds):
        self.end = None if seconds is None else time.monotonic() + seconds

    def left_ms(self) -> int | None:
        if self.end is None:
            return None
        return max(1, int((self.end - time.monotonic()) * 1000))

    def over(self) -> bool:
        return self.end is not None and time.monotonic() >= self.end

    def apply(self, solver) -> None:
        ms = self.left_ms()
        if ms is not None:
            solver.set(timeout=ms)


@dataclass
class Problem:
    model: Model
    space: InputSpace
    variables: dict
    base: list
    classes: list
    complete: bool
    unfinished: tuple | None = None      # (Z3 model, message): an input that never ends
    cut_short: str = ""                  # why the search stopped with inputs left, when
    #                                      not the time budget (the class limit)

    @property
    def gaps(self) -> list[str]:
        """What the classes could not pin down, each said once."""
        return list(dict.fromkeys(g for c in self.classes for g in c.gaps))

    @property
    def proved(self) -> bool:
        """Every input of the space is in a class whose formula is exact for it."""
        return self.complete and self.unfinished is None and not self.gaps


def partition(model: Model, space: InputSpace, *, max_classes: int = DEFAULT_MAX_CLASSES,
              budget: Budget | None = None, progress=None) -> Problem:
    """Every class of the space: a sample is drawn outside the classes found so far until
    none is left. Stops (``complete`` False) when the time budget runs out, when
    ``max_classes`` classes leave inputs uncovered (``cut_short`` says so), and at the
    first sample that does not run to the end (``unfinished``: a counterexample to
    every bound)."""
    import z3
    if not (isinstance(max_classes, int) and max_classes >= 1):
        raise invalid("max_classes", max_classes, "an integer >= 1")
    budget = budget or Budget(None)
    variables = space.variables(model)
    base = space.constraint_terms(variables)
    solver = z3.Solver()
    solver.add(base)
    classes = []
    while True:
        budget.apply(solver)
        verdict = solver.check()
        if verdict == z3.unsat:
            return Problem(model, space, variables, base, classes, True)
        if verdict == z3.unknown or budget.over():
            return Problem(model, space, variables, base, classes, False)
        if len(classes) >= max_classes:
            return Problem(model, space, variables, base, classes, False,
                           cut_short=class_limit(max_classes))
        drawn = solver.model()
        try:
            cls = _follow(model, space, variables, drawn_sample(space, variables, drawn),
                          len(classes), budget)
        except OutOfTime:
            return Problem(model, space, variables, base, classes, False)
        except _Unfinished as exc:
            return Problem(model, space, variables, base, classes, False,
                            (drawn, exc.message))
        classes.append(cls)
        if progress:
            progress(f"class {len(classes)}: {cls.firings} firings")
        # The timing constraints define the class's times as functions of the input, so
        # the order conditions can be negated over them.
        region = list(cls.conditions) + list(cls.order)
        _contains_sample(cls, region, variables, drawn)
        solver.add(list(cls.timing))
        solver.add(z3.Not(z3.And(*region)) if region else z3.BoolVal(False))


def _contains_sample(cls: InputClass, region: list, variables: dict, drawn) -> None:
    """A class's conditions must hold on its own sample (else the search would draw it
    again and again): a bug of this module if not."""
    import z3
    check = z3.Solver()
    check.add(list(cls.timing) + region)
    check.add([v == drawn.eval(v, model_completion=True) for tokens in variables.values()
               for values in tokens.values for v in values.values() if not z3.is_int_value(v)])
    if check.check() != z3.sat:                       # pragma: no cover
        raise VerificationError(f"class {cls.index}'s conditions exclude its own sample "
                                f"{cls.sample}")
