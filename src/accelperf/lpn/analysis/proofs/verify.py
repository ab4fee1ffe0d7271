"""Proved latency bounds and properties with Z3 (OSDI'24 §4.4, §5.3.4): per input class
(:mod:`.refine`, encoded by :mod:`.encoding`) the extreme latency or a counterexample,
every witness simulated (:mod:`.witness`). Buffer sizing is :mod:`.sizing`."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace

from ....errors import invalid
from ...net import Model
from .encoding import VerificationError, shared_places
from .exhaustive import counted_space, decided_note, simulate_every_input
from ..formula import GeneratedInterface, Tokens, is_condition, translate
from .refine import DEFAULT_MAX_CLASSES, Budget, TraceClass, follow, partition
from ..space import InputSpace
from .witness import (OnlyInput, Witness, only_input, simulate_witness, stopped_key,
                      unfinished_witness, why_not_proved)

COUNTED = "its token counts vary with a size: one class per count would be encoded"
"""Why a small space is decided by simulating every input (:func:`.exhaustive.counted_space`)."""


@dataclass(frozen=True)
class BoundResult:
    """The largest (``which`` = "max") or smallest latency over a space, proved."""

    which: str
    bound: int | None
    witness: Witness | None
    classes: int
    seconds: float
    status: str = "proved"          # "unknown" (see note), "does not finish" (the witness)
    note: str = ""

    @property
    def simulated(self) -> int | None:
        return None if self.witness is None else self.witness.simulated

    def to_dict(self) -> dict:
        return {"bound": self.bound, "which": self.which, "status": self.status,
                "witness": None if self.witness is None else self.witness.input,
                "witness_tokens": None if self.witness is None else self.witness.tokens,
                "simulated": self.simulated, "classes": self.classes,
                "seconds": round(self.seconds, 3), "note": self.note,
                **stopped_key(self.witness)}

    def __repr__(self) -> str:
        return (f"BoundResult({self.which} latency {self.bound} cycles, {self.status}, "
                f"{self.classes} class(es), {self.seconds:.2f} s)")


def _largest(solver, objective, budget: Budget):
    """The largest value of the integer ``objective`` over ``solver``'s models: (value,
    model, exact), or None when no model is found in time.

    A search over satisfiability checks (each ``objective >= target``), galloping up from
    the first model's value and bisecting once a target is refuted. z3.Optimize, which
    does the same job, did not finish the JPEG 18-block worst case in 10 minutes on these
    max-plus disjunctions; this search takes about 2 s. ``exact`` is False when the time
    budget ran out before the top was proved."""
    import z3
    budget.apply(solver)
    if solver.check() != z3.sat:
        return None
    model = solver.model()
    best, refuted, step = model.eval(objective).as_long(), None, 1
    while refuted is None or refuted > best + 1:
        target = best + step if refuted is None else (best + 1 + refuted) // 2
        solver.push()
        solver.add(objective >= target)
        budget.apply(solver)
        verdict = solver.check()
        if verdict == z3.sat:
            model = solver.model()
            best, step = model.eval(objective).as_long(), step * 2
        solver.pop()
        if verdict == z3.unsat:
            refuted = target
        elif verdict == z3.unknown:
            return best, model, False
    return best, model, True


def latency_bound(model: Model, space: InputSpace, which: str = "max", *,
                  timeout: float | None = None, progress=None,
                  max_classes: int = DEFAULT_MAX_CLASSES) -> BoundResult:
    """The worst (``max``) or best (``min``) case latency over ``space`` with its witness
    (OSDI'24 §4.4): per class the extreme latency (:func:`_largest`), then the extreme over
    the classes."""
    import z3
    if which not in ("max", "min"):
        raise invalid("bound", which, "max or min")
    if space.ranged:
        return _bound_over_counts(model, space, which, timeout=timeout, progress=progress,
                                  max_classes=max_classes)
    began, budget = time.monotonic(), Budget(timeout)
    one = only_input(model, space)
    if one is not None:
        return _bound_of_one(which, one, time.monotonic() - began)
    counted = counted_space(model, space, budget)
    if counted is not None:
        decided = _bound_by_simulation(counted, which, budget, began, COUNTED)
        if decided is not None:
            return decided
    problem = partition(model, space, max_classes=max_classes, budget=budget,
                        progress=progress)
    if problem.complete and not problem.classes:
        return BoundResult(which, None, None, 0, time.monotonic() - began, "empty",
                           "the space has no input (its constraints exclude every one)")
    if problem.unfinished is not None:
        return BoundResult(which, None, unfinished_witness(problem), len(problem.classes),
                           time.monotonic() - began, "does not finish",
                           why_not_proved(problem, "bound"))
    if problem.complete and problem.gaps:
        decided = _bound_by_simulation(problem, which, budget, began)
        if decided is not None:
            return decided
    best, timed_out = None, False
    for cls in problem.classes:
        solver = z3.Solver()
        solver.add(problem.base + cls.constraints())
        objective = cls.latency if which == "max" else -cls.latency
        found = _largest(solver, objective, budget)
        if found is None:
            timed_out = True
            break
        score, m, exact = found
        value = score if which == "max" else -score
        if best is None or (value > best[0] if which == "max" else value < best[0]):
            best = (value, cls, m)
        if not exact:
            timed_out = True
            break
        if progress:
            progress(f"class {cls.index + 1}/{len(problem.classes)}: {which} {value}")
    seconds = time.monotonic() - began
    if best is None:
        return BoundResult(which, None, None, len(problem.classes), seconds, "unknown",
                           "the time budget ran out before any class was solved")
    value, cls, m = best
    witness = simulate_witness(problem, cls, m, value)
    note = why_not_proved(problem, f"the {which} {value} is the {which}")
    if timed_out:
        note = _joined(f"time budget ran out: {value} is the {which} over the "
                       f"{len(problem.classes)} class(es) found so far, not a proved bound",
                       problem.cut_short)
    status = "proved" if problem.proved and not timed_out else "unknown"
    return BoundResult(which, value, witness, len(problem.classes),
                       time.monotonic() - began, status, note)


def _decided(every, problem, why) -> str:
    if why is None:
        return decided_note(every, "; ".join(problem.gaps[:2]))
    return f"decided by simulating each of the space's {len(every.runs)} input(s) ({why})"


def _bound_by_simulation(problem, which: str, budget: Budget, began: float, why=None):
    """The bound over a small space whose classes are not exact (or, ``why`` given, whose
    counts vary with a size), from every input's simulated latency (:mod:`.exhaustive`);
    None when the space is too large or the time budget ran out."""
    every = simulate_every_input(problem, budget)
    if every is None or not every.complete:
        return None
    note = _decided(every, problem, why)
    runs = [w for _, w in every.runs]
    stuck = next((w for w in runs if w.simulated is None), None)
    if stuck is not None:
        return BoundResult(which, None, stuck, len(problem.classes),
                           time.monotonic() - began, "does not finish", note)
    pick = max if which == "max" else min
    w = pick(runs, key=lambda r: r.simulated)
    return BoundResult(which, w.simulated, w, len(problem.classes), time.monotonic() - began,
                       "proved", note)


def _bound_of_one(which: str, one: OnlyInput, seconds: float) -> BoundResult:
    """The bound over a space of one input (:func:`.witness.only_input`): its latency."""
    w = one.witness
    if w is None:
        return BoundResult(which, None, None, 0, seconds, "empty",
                           "the space has no input (its constraints exclude every one)")
    if w.simulated is None:
        return BoundResult(which, None, w, 1, seconds, "does not finish",
                           f"the space's only input does not run to the end ({w.stopped})")
    return BoundResult(which, w.simulated, w, 1, seconds)


def _left(began: float, timeout: float | None) -> float | None:
    return None if timeout is None else max(0.001, timeout - (time.monotonic() - began))


def _bound_over_counts(model, space, which, *, timeout, progress, max_classes):
    """A bound over a space with token-count ranges: the extreme over its fixed-count
    spaces; proved only when every one is; the first input that does not finish wins."""
    began, results = time.monotonic(), []
    for fixed in space.fixed_counts():
        r = latency_bound(model, fixed, which, timeout=_left(began, timeout),
                          progress=progress, max_classes=max_classes)
        if r.status == "does not finish":
            return replace(r, classes=r.classes + sum(x.classes for x in results),
                           seconds=time.monotonic() - began)
        results.append(r)
    found = [r for r in results if r.bound is not None]
    classes, seconds = sum(r.classes for r in results), time.monotonic() - began
    if not found:
        status = "empty" if all(r.status == "empty" for r in results) else "unknown"
        return BoundResult(which, None, None, classes, seconds, status,
                           "; ".join(dict.fromkeys(r.note for r in results)))
    pick = max if which == "max" else min
    best = pick(found, key=lambda r: r.bound)
    unsure = [r for r in results if r.status not in ("proved", "empty")]
    return replace(best, classes=classes, seconds=seconds,
                   status="unknown" if unsure else "proved",
                   note="; ".join(dict.fromkeys(r.note for r in unsure if r.note)))


@dataclass(frozen=True)
class ProofResult:
    """Whether a property holds on every input of a space; a counterexample if not."""

    property: str
    holds: bool | None               # None: unknown (time budget)
    counterexample: Witness | None
    classes: int
    seconds: float
    values: dict = field(default_factory=dict)    # the counterexample's latency, E, ...
    note: str = ""

    def to_dict(self) -> dict:
        return {"holds": "unknown" if self.holds is None else self.holds,
                "property": self.property,
                "counterexample": None if self.counterexample is None else
                self.counterexample.input,
                "counterexample_tokens": None if self.counterexample is None else
                self.counterexample.tokens,
                "values": self.values, "classes": self.classes,
                "seconds": round(self.seconds, 3), "note": self.note,
                **stopped_key(self.counterexample)}

    def __repr__(self) -> str:
        verdict = {True: "holds", False: "fails", None: "unknown"}[self.holds]
        return f"ProofResult({self.property!r} {verdict}, {self.seconds:.2f} s)"


def check_property(model: Model, space: InputSpace, prop: str, with_interface: bool = False,
                   what: str = "property") -> None:
    """Refuse ``prop`` unless it is a condition of the formula language over ``latency``,
    the tokens of ``space`` (a space without count ranges) and, ``with_interface``, ``E``;
    in milliseconds, before the classes are followed (a misspelt name was refused only
    once the partition was done, minutes on a large net). Errors name ``what``."""
    import z3
    names = {"latency": z3.Int("latency")}
    if with_interface:
        names["E"] = z3.Real("E")
    if space.ranged:                    # every count has the same places and properties
        space = next(iter(space.fixed_counts()))
    if not is_condition(translate(prop, space.variables(model), names, what)):
        raise invalid(what, prop, "a condition, e.g. 'latency <= 2300'")


def prove(model: Model, space: InputSpace, prop: str, *, interface=None,
          timeout: float | None = None, progress=None,
          max_classes: int = DEFAULT_MAX_CLASSES) -> ProofResult:
    """Prove ``prop`` (a condition over ``latency``, the input's tokens and, with an
    ``interface`` function, its prediction ``E``) for every input of ``space``, or find a
    counterexample (§4.4, §5.3.4)."""
    import z3
    if space.ranged:        # each count's prove checks the property before its classes
        return _proof_over_counts(model, space, prop, interface=interface, timeout=timeout,
                                  progress=progress, max_classes=max_classes)
    check_property(model, space, prop, interface is not None)
    began, budget = time.monotonic(), Budget(timeout)
    one = only_input(model, space)
    if one is not None:
        return _proof_of_one(prop, one, space, interface, began)
    counted = counted_space(model, space, budget)
    if counted is not None:
        names = {} if interface is None else \
            {"E": interface_term(interface, space, counted.variables)}
        decided = _proof_by_simulation(counted, prop, names, interface, budget, began, COUNTED)
        if decided is not None:
            return decided
    problem = partition(model, space, max_classes=max_classes, budget=budget,
                        progress=progress)
    if problem.unfinished is not None:
        return ProofResult(prop, False, unfinished_witness(problem), len(problem.classes),
                           time.monotonic() - began, {"latency": None},
                           why_not_proved(problem, "property"))
    names = {}
    if interface is not None:
        names["E"] = interface_term(interface, space, problem.variables)
    if problem.complete and problem.gaps:
        decided = _proof_by_simulation(problem, prop, names, interface, budget, began)
        if decided is not None:
            return decided
    holds, unsure = True, ""
    for cls in problem.classes:
        term = translate(prop, problem.variables, {**names, "latency": cls.latency},
                         "property")
        if not is_condition(term):
            raise invalid("property", prop, "a condition, e.g. 'latency <= 2300'")
        solver = z3.Solver()
        budget.apply(solver)
        solver.add(problem.base + cls.constraints() + [z3.Not(term)])
        verdict = _check_priced_first(solver, interface)
        if verdict == z3.sat:
            m = solver.model()
            witness = simulate_witness(problem, cls, m, m.eval(cls.latency).as_long())
            if not cls.exact and not _breaks(term, cls.latency, witness.simulated, m):
                # The class's formula is not exact for this input: no counterexample.
                holds, unsure = None, f"class {cls.index}: a candidate counterexample " \
                                      f"simulates to {witness.simulated} and satisfies it"
                continue
            values, unpriced = {"latency": witness.simulated}, ""
            if "E" in names:
                values, unpriced = _with_prediction(
                    values, names["E"], interface, lambda t: m.eval(t, model_completion=True))
            return ProofResult(prop, False, witness, len(problem.classes),
                               time.monotonic() - began, values,
                               _joined(unpriced, _types_note(interface)))
        if verdict == z3.unknown:
            holds = None
            break
        if progress:
            progress(f"class {cls.index + 1}/{len(problem.classes)}: holds")
    if holds and not problem.proved:
        holds = None
    note = "" if holds else (why_not_proved(problem, "the property holds") or
                             f"time budget ran out: no counterexample in the "
                             f"{len(problem.classes)} class(es) examined")
    note = _joined(note, unsure, _types_note(interface))
    return ProofResult(prop, holds, None, len(problem.classes), time.monotonic() - began,
                       note=note)


def _proof_by_simulation(problem, prop: str, names: dict, interface, budget: Budget,
                         began: float, why=None):
    """``prop`` over a small space whose classes are not exact, on every input's
    simulated latency (:mod:`.exhaustive`): the first input that breaks it (or does not
    finish) is the counterexample. None when the space is too large or the time budget
    ran out."""
    import z3
    every = simulate_every_input(problem, budget)
    if every is None or not every.complete:
        return None
    note = _decided(every, problem, why)
    n, latency = len(problem.classes), z3.Int("latency of the input")
    term = translate(prop, problem.variables, {**names, "latency": latency}, "property")
    if not is_condition(term):
        raise invalid("property", prop, "a condition, e.g. 'latency <= 2300'")
    for values, w in every.runs:
        if w.simulated is None:
            return ProofResult(prop, False, w, n, time.monotonic() - began,
                               {"latency": None}, note)
        pairs = [(v, z3.IntVal(x)) for v, x in values]
        if not z3.is_true(z3.simplify(z3.substitute(term, (latency, z3.IntVal(w.simulated)),
                                                    *pairs))):
            found, unpriced = {"latency": w.simulated}, ""
            if "E" in names:
                def at(t):
                    return z3.simplify(z3.substitute(t, *pairs) if pairs else t)
                found, unpriced = _with_prediction(found, names["E"], interface, at)
            return ProofResult(prop, False, w, n, time.monotonic() - began, found,
                               _joined(note, unpriced, _types_note(interface)))
    return ProofResult(prop, True, None, n, time.monotonic() - began,
                       note=_joined(note, _types_note(interface)))


def _check_priced_first(solver, interface):
    """``solver.check()``, trying first the inputs the interface's module gives a value for:
    a counterexample there is the interface's own error; one outside what it covers only
    says that the space is larger (and is the answer only when there is no other)."""
    import z3
    if isinstance(interface, GeneratedInterface):
        solver.push()
        solver.add(interface.priced())
        if solver.check() == z3.sat:
            return z3.sat                          # the model stays: pop() would drop it
        solver.pop()
    return solver.check()


UNPRICED = ("E = —: the interface gives no value for this input (it lies outside the "
            "space or the input types the module was extracted for), so the property fails "
            "there for want of a prediction; extract the interface on this space (`lpn "
            "interface --space`) or verify on the module's own")


def _with_prediction(values: dict, term, interface, evaluate) -> tuple[dict, str]:
    """``values`` with the counterexample's E (None where the module gives none: a value
    the solver picked for the free E_outside is no prediction) and its type; and the note
    that says why E is missing."""
    priced = not isinstance(interface, GeneratedInterface) or interface.prices(evaluate)
    values = {**values, "E": _number(evaluate(term)) if priced else None,
              **_type_of(interface, evaluate)}
    return values, "" if priced else UNPRICED


def _type_of(interface, evaluate) -> dict:
    """{"type": name} of a counterexample to a typed module's accuracy (else {})."""
    if not isinstance(interface, GeneratedInterface) or not interface.types:
        return {}
    return {"type": interface.type_of(evaluate)}


def _types_note(interface) -> str:
    if not isinstance(interface, GeneratedInterface):
        return ""
    return f"input type(s) of the space: {', '.join(n for n, _ in interface.types)}"


def _joined(*notes) -> str:
    return "; ".join(n for n in notes if n)


def _proof_of_one(prop: str, one: OnlyInput, space, interface, began) -> ProofResult:
    """``prop`` on a space of one input (:func:`.witness.only_input`): evaluated on its
    simulated latency."""
    import z3
    w = one.witness
    if w is None:                                    # no input: holds for every one
        return ProofResult(prop, True, None, 0, time.monotonic() - began)
    if w.simulated is None:
        return ProofResult(prop, False, w, 1, time.monotonic() - began, {"latency": None},
                           f"the space's only input does not run to the end ({w.stopped})")
    names = {"latency": z3.IntVal(w.simulated)}
    if interface is not None:
        names["E"] = interface_term(interface, space, one.variables)
    term = translate(prop, one.variables, names, "property")
    if not is_condition(term):
        raise invalid("property", prop, "a condition, e.g. 'latency <= 2300'")
    solver = z3.Solver()                   # constants only: decided at once
    solver.add(z3.Not(term))
    holds = solver.check() == z3.unsat
    values, unpriced = {"latency": w.simulated}, ""
    if "E" in names:
        values, unpriced = _with_prediction(values, names["E"], interface, z3.simplify)
    return ProofResult(prop, holds, None if holds else w, 1, time.monotonic() - began,
                       {} if holds else values, "" if holds else unpriced)


def _proof_over_counts(model, space, prop, *, timeout, **kw) -> ProofResult:
    """A property over a space with token-count ranges: it holds when it holds on every
    fixed-count space; the first counterexample refutes it."""
    began, results = time.monotonic(), []
    for fixed in space.fixed_counts():
        r = prove(model, fixed, prop, timeout=_left(began, timeout), **kw)
        results.append(r)
        if r.holds is False:
            break
    classes, seconds = sum(r.classes for r in results), time.monotonic() - began
    last = results[-1]
    holds = False if last.holds is False else (
        None if any(r.holds is None for r in results) else True)
    note = "; ".join(dict.fromkeys(r.note for r in results if r.note))
    return replace(last, holds=holds, classes=classes, seconds=seconds, note=note)


def _breaks(term, latency, simulated, z3model) -> bool:
    """Whether the input of ``z3model``, with its simulated latency, breaks ``term``."""
    import z3
    if simulated is None:
        return True                        # it does not run to the end
    real = z3.substitute(term, (latency, z3.IntVal(simulated)))
    return z3.is_false(z3model.eval(real, model_completion=True))


def _number(v):
    import z3
    if z3.is_int_value(v):
        return v.as_long()
    if z3.is_rational_value(v):
        return float(v.as_fraction())
    return float(v.approx(12).as_fraction())


def interface_term(latency_fn, space: InputSpace, variables: dict):
    """A performance interface's prediction as a Z3 real: a module written by ``lpn
    interface --out``, read as a :class:`.formula.GeneratedInterface`, is its term;
    ``latency_fn`` (a function of the input as Ψ takes it) is called on the space's
    ``input`` with Z3 reals in place of numbers, and with ``max``/``min``/``abs`` that
    build Z3 terms."""
    import z3
    if isinstance(latency_fn, GeneratedInterface):
        return latency_fn.term
    if space.input is None:
        raise invalid(f"{space.origin}: input", None, "a formula for the model's input: the "
                      "interface takes the input as Ψ does")

    def real(v):
        return [real(x) for x in v] if isinstance(v, list) else z3.ToReal(v) \
            if z3.is_int(v) else v
    shape = space.input
    if isinstance(shape, dict):
        x = {k: real(translate(v, variables, what=f"input.{k}")) for k, v in shape.items()}
    else:
        x = real(translate(shape, variables, what="input"))
    try:
        value = latency_fn(x)
    except Exception as exc:
        raise invalid("interface", getattr(latency_fn, "__module__", latency_fn),
                      f"a latency(x) made of arithmetic, max, min and abs ({exc})") from None
    return z3.ToReal(value) if z3.is_int(value) else (
        z3.RealVal(value) if isinstance(value, (int, float)) else value)


def within(interface, space, model, tolerance: float, **kw) -> ProofResult:
    """Prove that the interface's relative error |E - latency| / latency stays below
    ``tolerance`` on every input of the space (the §5.3.4 query)."""
    # finite: inf or nan would reach the property's text, which has no word for them
    if not (isinstance(tolerance, (int, float)) and 0 < tolerance < math.inf):
        raise invalid("tolerance", tolerance, "a finite relative error > 0, e.g. 0.43")
    return prove(model, space, f"abs(E - latency) < {float(tolerance)!r} * latency",
                 interface=interface, **kw)


__all__ = ["TraceClass", "BoundResult", "ProofResult", "Witness", "VerificationError",
           "partition", "follow", "shared_places", "latency_bound", "prove", "within",
           "interface_term", "Tokens"]
