"""A model checker for authors (issue 26, item 3): what in a built net is probably a mistake.

Each finding is a :class:`Finding` naming the element and a suggested fix. The checks:

* ``no-done`` — nothing can ever put a token into the done place: the run's latency is
  undefined (no transition outputs or routes into it and it holds no initial tokens).
* ``zero-delay-loop`` — a self-sustaining cycle (below) whose delays and initiation
  intervals are all the constant 0: once a token circles it, time never advances (the
  simulator's rule R6 stops such a run with ``max_firings_per_cycle``). A zero-delay cycle
  that a guard, an inhibitor or an outside input can stop is legitimate (a round-robin
  turn pointer) and not reported.
* ``endless`` — a self-sustaining cycle (below) with a delay that is not 0 and a way for
  a token to enter it (initial tokens, the start place or an arc from outside): once it
  holds the token it fires forever, so a run never ends on its own; the simulator stops
  it at ``max_commits`` (R8), long after the work is done (a polling loop).
* ``unbounded`` — a place fed by a self-sustaining cycle: a cycle of transitions each of
  which takes tokens only from places of the cycle, with constant weights, no guard or
  inhibitor, and unconditional outputs (not routes) that give back at least what it takes. Once such a cycle
  holds a token it fires forever, and every place it also feeds grows without bound. (A
  place fed faster than it is drained by a finite input is bounded by the input; the
  simulator's ``max_occupancy`` shows how far it grows.)
* ``unconnected`` — a declared place that no arc of any transition touches (no input,
  output, route, read, inhibitor or count) and that is neither the start nor the done
  place: usually a typo or a stage left unwired. (Ψ's tokens landing there are reported
  as ``psi-unused`` instead.)
* ``psi-unused`` — Ψ (``tokens_from_input``) puts tokens of the default input into a place
  that no transition takes from or reads, and that is not the done place: those tokens are
  dead weight, usually a misnamed start place.
* ``never-fires`` — a transition that commits in no input class of the space (needs the
  symbolic input-class analysis, :func:`.classes.input_classes`, which the caller runs and
  passes to :func:`check`, because it can take seconds). A structurally dead transition (one of
  its input places can never hold a token) is found without a space.
* ``deadlocks`` — input classes of the space whose runs stop with work left (from the same
  class analysis as ``never-fires``).

:func:`structural_findings` is cheap (graph walks over the net, no simulation) and is what
``Net.build()``-time checking uses; :func:`check` adds Ψ and the input classes.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .graph import cyclic_components

if TYPE_CHECKING:                   # net.py runs these checks in build(): no import back
    from .net import Model

class ModelCheckWarning(UserWarning):
    """A finding of :func:`structural_findings`, raised as a warning by ``Net.build()``."""


KINDS = ("no-done", "zero-delay-loop", "endless", "unbounded", "unconnected", "psi-unused",
         "never-fires", "deadlocks")


@dataclass(frozen=True)
class Finding:
    """One warning: its kind (one of ``KINDS``), the element at fault and a fix."""

    kind: str
    element: str
    message: str
    fix: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.element}: {self.message}; fix: {self.fix}"

    def to_dict(self) -> dict:
        return {"kind": self.kind, "element": self.element, "message": self.message,
                "fix": self.fix}


def _constant(expr):
    """The integer value of a constant expression, else None."""
    return expr.args[0] if getattr(expr, "op", None) == "const" else None


def _arcs(t):
    """(place, count expression) of every output and route of transition ``t``."""
    return [(a.place, a.count) for a in t.outputs + t.routes]


def _fed(model: Model) -> set[int]:
    return {p for t in model.transitions for p, _ in _arcs(t)}


def _no_done(model: Model) -> list[Finding]:
    done = model.done
    if done in _fed(model) or model.initial.get(done):
        return []
    name = model.places[done].name
    return [Finding("no-done", f"place {name!r}",
                    "no transition outputs or routes into the done place, so a run has no "
                    "latency", f"give the last stage an output arc into {name!r}, or set "
                    "net.done to the place the last stage fills")]


def _transition_graph(model: Model, keep) -> dict[int, set[int]]:
    """t -> u when t outputs into a place u takes from, over transitions ``keep(t)``."""
    takers: dict[int, set[int]] = {}
    for t in model.transitions:
        if keep(t):
            for p in t.inputs:
                takers.setdefault(p, set()).add(t.id)
    return {t.id: {u for p, _ in _arcs(t) for u in takers.get(p, ())}
            for t in model.transitions if keep(t)}


def _closed_cycles(model: Model) -> list[list]:
    """Cycles of transitions that need no token from outside and lose none: each member
    takes only from places the cycle itself feeds, with constant weights, has no guard or
    inhibitor that could stop it, and the cycle gives back at least what it takes. Once
    such a cycle holds a token it fires forever."""
    closed = []
    graph = _transition_graph(model, lambda t: True)
    for comp in cyclic_components(graph):
        members = [model.transitions[i] for i in comp]
        produced: dict[int, int] = {}
        for t in members:
            for arc in t.outputs:       # a route's arc gets tokens only when chosen
                produced[arc.place] = produced.get(arc.place, 0) + (_constant(arc.count) or 0)
        taken: dict[int, int] = {}
        stoppable = False
        for t in members:
            # a guard, an inhibitor or a read of a place outside the cycle can stop it
            stoppable |= t.guard is not None or bool(t.inhibits) or any(
                p not in produced or _constant(n) is None for p, n in t.reads)
            for p, w in zip(t.inputs, t.weights):
                stoppable |= _constant(w) is None or p not in produced
                taken[p] = taken.get(p, 0) + (_constant(w) or 0)
        if not stoppable and all(produced.get(p, 0) >= n for p, n in taken.items()):
            closed.append(members)
    return closed


def _loop_findings(model: Model) -> list[Finding]:
    found = []
    for members in _closed_cycles(model):
        names = " -> ".join(repr(t.name) for t in members)
        taken = {p for t in members for p in t.inputs}
        if all(_constant(t.delay) == 0 and _constant(t.initiation_interval) == 0
               for t in members):
            found.append(Finding(
                "zero-delay-loop", f"transitions {names}",
                "every delay on this self-sustaining cycle is 0: once a token circles it, "
                "time never advances", "give one of them a delay of at least 1 cycle, or "
                "a guard or an input from outside the cycle that stops it"))
        elif _marked(model, members, taken):
            found.append(Finding(
                "endless", f"transitions {names}",
                "this self-sustaining cycle gets a token (initial, from the input or from "
                "outside) and takes only tokens it gives back, so it fires forever: a run "
                "never ends on its own and stops only at max_commits", "make it take a "
                "token from outside the cycle on every lap (one per input item), or stop "
                "it with a guard or an inhibitor"))
        for p in sorted({a.place for t in members for a in t.outputs} - taken):
            place = model.places[p]
            if any(q.capacity_of == place.name for q in model.places):
                continue               # bounded by its capacity place
            found.append(Finding(
                "unbounded", f"place {place.name!r}",
                f"fed by the self-sustaining cycle {names}, which takes only tokens it "
                "gives back, so it fires forever and this place grows without bound",
                f"bound {place.name!r} with capacity=..., or make the cycle take a token "
                "from outside it (an input item, a credit) on every lap"))
    return found


def _marked(model: Model, members: list, taken: set) -> bool:
    """Whether a token can enter one of the places a cycle takes from: initial tokens,
    the start place (Ψ) or an arc of a transition outside the cycle."""
    ids = {t.id for t in members}
    starts = model.start if isinstance(model.start, (list, tuple)) else [model.start]
    outside = {p for t in model.transitions if t.id not in ids for p, _ in _arcs(t)}
    return any(model.initial.get(p) or p in starts or p in outside for p in taken)


def _dead_transitions(model: Model, filled_by_psi=()) -> list[Finding]:
    """Transitions one of whose input places can never hold a token (iterated: a place
    fed only by dead transitions is empty too). ``filled_by_psi``: places Ψ is known to
    fill (from a run of Ψ); without a start place, Ψ may fill any place, so nothing is
    reported."""
    if model.start is None and model.tokens_from_input is not None and not filled_by_psi:
        return []
    # Build() refuses a consumed place that nothing feeds unless it is a start place, so a
    # place no transition feeds is filled by Ψ (or initial tokens); the rest must be fed.
    fed = _fed(model)
    can_fill = set(model.initial) | {p for p in range(len(model.places)) if p not in fed}
    can_fill |= set(filled_by_psi)
    if model.start is not None:
        can_fill.add(model.start)
    alive: set[int] = set()
    changed = True
    while changed:
        changed = False
        for t in model.transitions:
            if t.id in alive:
                continue
            # only arcs that always need a token count: a weight that may be 0 may not
            if all(p in can_fill for p, w in zip(t.inputs, t.weights)
                   if (_constant(w) or 0) >= 1) and all(
                    p in can_fill for p, n in t.reads if (_constant(n) or 0) >= 1):
                alive.add(t.id)
                can_fill |= {p for p, _ in _arcs(t)}
                changed = True
    return [Finding("never-fires", f"transition {t.name!r}",
                    "one of its input places can never hold a token", "feed that place "
                    "(an output arc, initial tokens or Ψ), or remove the transition")
            for t in model.transitions if t.id not in alive]


def _unconnected(model: Model) -> list[Finding]:
    touched = {p for t in model.transitions
               for p in t.inputs + t.counted + tuple(q for q, _ in t.reads + t.inhibits)}
    touched |= _fed(model) | {model.done}
    starts = model.start if isinstance(model.start, (list, tuple)) else [model.start]
    touched |= {p for p in starts if p is not None}
    return [Finding("unconnected", f"place {place.name!r}",
                    "no transition takes from, feeds, reads, inhibits on or counts it",
                    f"connect {place.name!r} to the stage meant to use it, or remove it")
            for pid, place in enumerate(model.places)
            if pid not in touched and place.capacity_of is None]


def structural_findings(model: Model) -> list[Finding]:
    """The cheap checks: graph walks over the net, nothing simulated."""
    return (_no_done(model) + _loop_findings(model) + _unconnected(model)
            + _dead_transitions(model))


def warn_findings(model: Model) -> None:
    """Warn (:class:`ModelCheckWarning`) once per structural finding; ``Net.build()`` calls
    this, so an author sees them while building, before any run."""
    for finding in structural_findings(model):
        warnings.warn(f"model {model.name!r}: {finding}", ModelCheckWarning, stacklevel=3)


def _psi_places(model: Model) -> dict[int, int]:
    """{place id: tokens} that Ψ puts there for the default input (initial tokens aside)."""
    if model.tokens_from_input is None or model.default_input is None:
        return {}
    marking = model.marking(model.default_input)
    return {pid: len(tokens) - len(model.initial.get(pid, ()))
            for pid, tokens in marking.tokens.items()
            if len(tokens) > len(model.initial.get(pid, ()))}


def _psi_unused(model: Model, psi_places: dict[int, int]) -> list[Finding]:
    used = {p for t in model.transitions for p in t.inputs} | {
        p for t in model.transitions for p, _ in t.reads}
    found = []
    for pid, n in sorted(psi_places.items()):
        if pid not in used and pid != model.done:
            name = model.places[pid].name
            found.append(Finding(
                "psi-unused", f"place {name!r}",
                f"Ψ puts {n} token(s) of the default input there, and no transition takes "
                f"or reads them", f"make a transition take from {name!r}, or have Ψ fill "
                "the place the first stage takes from"))
    return found


def _never_fires_in(model: Model, classes) -> list[Finding]:
    fired = {name for c in classes for name, n in c.commit_counts().items() if n != 0}
    return [Finding("never-fires", f"transition {t.name!r}",
                    f"it commits in none of the space's {len(classes)} input class(es)",
                    "check its guard and input weights against the space, or remove it")
            for t in model.transitions if t.name not in fired]


def _deadlocks_in(classes) -> list[Finding]:
    """One finding naming the space's input classes whose runs stop with work left (the
    symbolic run's ``stuck`` places): a space where every input deadlocks read as "no
    findings" while `lpn classes` showed it."""
    stuck = [c for c in classes if c.stuck]
    if not stuck:
        return []
    shown = "; ".join(f"class {c.index} ({' and '.join(c.readable_conditions()) or 'all'}) "
                      f"leaves work in {', '.join(c.stuck)}" for c in stuck[:3])
    return [Finding("deadlocks", "the space",
                    f"{'every one' if len(stuck) == len(classes) else len(stuck)} of its "
                    f"{len(classes)} input class(es) deadlocks: {shown}"
                    f"{'; ...' if len(stuck) > 3 else ''}",
                    "`lpn simulate` a sample of the class to see the marking and what each "
                    "transition waits for (input weights, capacities, a token never given "
                    "back)")]


def check(model: Model, classes=None) -> list[Finding]:
    """Every finding for ``model``: the structural ones (with the places Ψ fills on the
    default input known), Ψ's unused tokens and, given the input ``classes`` of a space
    (:func:`.classes.input_classes`), transitions that commit in none of them. The caller
    runs the class analysis, so that ``Net.build()``, which imports this module, never
    reaches the analyses that import the net."""
    psi_places = _psi_places(model)
    findings = [f for f in structural_findings(model) if f.kind != "never-fires"]
    psi_unused = _psi_unused(model, psi_places)
    reported = {f.element for f in psi_unused}
    findings = [f for f in findings if not (f.kind == "unconnected" and f.element in reported)]
    findings += _dead_transitions(model, psi_places) + psi_unused
    if classes is not None:
        dead = {f.element for f in findings if f.kind == "never-fires"}
        findings += [f for f in _never_fires_in(model, classes) if f.element not in dead]
        findings += _deadlocks_in(classes)
    return findings
