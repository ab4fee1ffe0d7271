"""Buffer sizing with proofs (OSDI'24 §5.2.4): the smallest size of a buffer for which a
budget holds on every input of a space, and the size that optimises the worst case.

**Sizes.** A buffer's size is the number of tokens in the place that bounds it: the
capacity place the builder made for a place declared with a capacity, or the place's own
initial tokens (credits, slots) (:func:`with_size`). Every size of the range is a separate
model, proved over the whole input space, smallest size first, so the answer is the
smallest size that meets the budget even where latency is not monotone in the size.

**Budgets.** ``latency <= N`` (any property of :func:`.verify.prove`), or a stall-ratio
budget ``stall <= r``. §5.2.4 speaks of "the stall-to-cycles ratio": because "an
under-sized buffer in the output unit" made "the previous unit [...] backpressured early",
the ratio counts the cycles in which the unit *before* the buffer is held back by it, over
the cycles of the run. Here, precisely: the *producers* of a buffer are the transitions
that take or read tokens of its bounding place (they need a free slot to start); a
producer's firing is *stalled* from the instant it would have started had the buffer had
a free slot (its other tokens present, its own previous firing done, its interval past)
until it starts; the stall ratio of a run is the sum of those stalls over the producers'
firings divided by the run's latency. For the single-server units of accelperf's models
(``concurrency=1``: stalls of one unit never overlap), that is the fraction of the run
during which each producer is blocked by a full buffer, summed over the producers. An
unbounded buffer has ratio 0, so the ratio measures backpressure only, not the producer
starving for input. The latency-based alternative, (latency(C) − latency(∞)) /
latency(∞), is what a latency budget already expresses.

**Encoding of the stall (§4.4's per-class terms).** Each class's sample is followed again
(:class:`_StallRecorder`) with the same variables as its class: a producer's start ``s``
is the max of the times its conditions became true; its *ready* time ``m`` is the max of
the same terms without the births of the buffer's slot tokens it takes or reads (a fresh
variable, as in :func:`.encoding.maximum`); its stall is ``s - m``. The budget ``stall <=
p/q`` is the linear ``q·Σ(s - m) <= p·latency``; the worst ratio over a space is found by
raising ``r`` to each counterexample's ratio until none is left (Dinkelbach's method),
starting from the best of a few known inputs (the space's corners, smaller sizes'
witnesses), and stopping at the first ratio over the budget.
Every counterexample and worst-case input is simulated, and its stall measured from the
run (:func:`simulated_stall`, from the reference semantics' states, not from the
encoding) must equal the claimed ratio, else the result stops with an error.

**Optimum.** :func:`optimal_size` returns the smallest size attaining the least
worst-case latency over the space; sizes that cannot beat the best so far are shown so by
an input (see its docstring), the others have their worst case proved.

The stall encoding follows each class's sample again with a subclass of the verifier's
recorder (:class:`.encoding.Recorder`) and reads the ``maximum`` constraints its start
rule adds; a change there shows up as a mismatch between the measured and the claimed
ratio of a witness, which stops with an error.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from fractions import Fraction

from ....errors import invalid
from ....formula import NotAFormula, parse
from ...expr import evaluate
from ...net import Model
from ...semantics import Ready, check, run as reference_run
from ..space import InputSpace
from .encoding import (SAMPLE_MAX_COMMITS, Recorder, VerificationError, maximum,
                       simulate_sample)
from .refine import Budget, initial_marking, partition
from .verify import latency_bound, prove
from .witness import Witness, simulate_witness


def stall_budget(budget: str) -> tuple[bool, Fraction] | None:
    """A stall-ratio budget ``stall <= R`` or ``stall < R`` (R a number) read by the one
    formula language (:mod:`accelperf.formula`) as (strict, R), R exact as written; None
    for any other budget (a latency property of :func:`.verify.prove`)."""
    try:
        tree = parse(budget.strip())
    except NotAFormula:
        return None
    if tree.kind != "compare" or tree.value not in (("LtE",), ("Lt",)):
        return None
    left, right = tree.args
    if not (left.kind == "name" and left.op == "stall" and right.kind == "number"
            and type(right.value) in (int, float)):
        return None
    try:
        return tree.value == ("Lt",), Fraction(right.source)
    except ValueError:               # 0x10: a number Python reads, not a decimal ratio
        return None


@dataclass(frozen=True)
class Trial:
    """One size of the range: whether the budget holds on every input (None: unknown;
    for :func:`optimal_size`, whether the size attains the best worst case), the value
    of ``witness`` (its latency, or its stall ratio for a stall budget), and the input:
    a counterexample where the budget fails; where it holds, the worst input for a stall
    budget and for :func:`optimal_size`, but none (``witness`` and ``value`` None) for a
    latency budget, whose proof names no input."""

    size: int
    holds: bool | None
    value: int | Fraction | None = None
    witness: Witness | None = None
    note: str = ""                      # e.g. why no value: an input does not finish

    def to_dict(self) -> dict:
        return {"size": self.size, "holds": "unknown" if self.holds is None else self.holds,
                "value": _plain(self.value), "note": self.note,
                "witness": None if self.witness is None else self.witness.input,
                "witness_tokens": None if self.witness is None else self.witness.tokens}


@dataclass(frozen=True)
class SizingResult:
    """The smallest size of a buffer meeting a budget on every input, or attaining the
    best worst-case latency (§5.2.4); ``tried`` holds every size examined."""

    place: str
    budget: str
    size: int | None                       # None: no size in the range meets it
    tried: tuple[Trial, ...]
    seconds: float
    status: str = "proved"
    measure: str = "latency"               # what Trial.value is: latency or stall ratio

    @property
    def chosen(self) -> Trial | None:
        return next((t for t in self.tried if t.size == self.size), None)

    @property
    def below(self) -> Trial | None:
        """The size just below the answer, with the input that shows it falls short."""
        return None if self.size is None else \
            next((t for t in self.tried if t.size == self.size - 1), None)

    def to_dict(self) -> dict:
        chosen = self.chosen
        return {"place": self.place, "budget": self.budget, "size": self.size,
                "measure": self.measure,
                "value": None if chosen is None else _plain(chosen.value),
                "tried": [t.to_dict() for t in self.tried],
                "seconds": round(self.seconds, 3), "status": self.status}

    def __repr__(self) -> str:
        return (f"SizingResult({self.place} = {self.size} for {self.budget!r}, "
                f"{self.status}, {len(self.tried)} size(s), {self.seconds:.2f} s)")


def _plain(value):
    return float(value) if isinstance(value, Fraction) else value


def with_size(model: Model, place: str, size: int) -> tuple[Model, str]:
    """``model`` with ``size`` tokens in the place that bounds ``place``: its capacity
    place when it was declared with a capacity, else its own initial tokens (credits,
    slots). Returns the model and the name of the place resized."""
    pid = model.place_id(place)
    cap = next((i for i, p in enumerate(model.places) if p.capacity_of == place), None)
    target = pid if cap is None else cap
    given = model.initial.get(target, [])
    if not given:
        raise invalid("size", place, "a place declared with a capacity, or one holding "
                      "initial tokens (credits, slots) whose number is its size")
    if len(set(given)) != 1:
        raise invalid("size", place, "a place whose initial tokens are all alike")
    initial = {**model.initial, target: [given[0]] * size}
    return replace(model, initial=initial), model.places[target].name



# ---------------------------------------------------------------------- stall ratio
def _bounding(model: Model, place: str) -> int:
    """The id of the place whose tokens are ``place``'s free slots (see :func:`with_size`)."""
    _, name = with_size(model, place, 1)
    return model.place_id(name)


def producers(model: Model, place: str) -> list[int]:
    """The transitions held back when ``place`` is full: they take or read its slots.
    The stall ratio is defined for single servers (see the module docstring)."""
    bound = _bounding(model, place)
    out = [t.id for t in model.transitions
           if bound in t.inputs or any(p == bound for p, _ in t.reads)]
    if not out:
        raise invalid("size", place, "a buffer some transition fills (takes or reads "
                      "its slots)")
    for t in out:
        if model.transitions[t].concurrency != 1:
            raise invalid("budget", "stall", f"a stall ratio of a buffer whose producers "
                          f"are single servers; {model.transitions[t].name!r} has "
                          f"concurrency {model.transitions[t].concurrency}")
    return out


@dataclass(frozen=True)
class StallMeasure:
    """A run's stall: cycles the buffer's producers were held back by it, over its latency."""

    stalled: Fraction
    latency: int

    @property
    def ratio(self) -> Fraction:
        return self.stalled / self.latency


class _Padded:
    """A state's view with the buffer's slots refilled: what R2 would say were it empty."""

    def __init__(self, state, bound: int, slots: list):
        self.state, self.bound, self.slots = state, bound, slots

    def free_values(self, pid: int) -> list:
        values = self.state.free_values(pid)
        return values + self.slots if pid == self.bound else values

    def count(self, pid: int) -> int:
        return self.state.count(pid) + (len(self.slots) if pid == self.bound else 0)


def simulated_stall(model: Model, place: str, marking: dict) -> StallMeasure:
    """The stall of ``place``'s producers on the run of ``marking`` ({place id: [property
    tuples]}), measured on the reference semantics' states, independently of the SMT
    encoding: after the last event of each instant, a producer is *blocked by the buffer*
    when rule R2 refuses it but would let it start were the buffer's slots all free. The
    state holds until the next event; within that time only the clock moves, which
    matters to R2 only where a producer's initiation interval ends, so the count is
    re-evaluated there."""
    bound, prods = _bounding(model, place), producers(model, place)
    slots = [tuple(v) for v in model.initial[bound]]
    at: dict = {}

    def blocked(state, now) -> int:
        padded, n = _Padded(state, bound, slots), 0
        for tid in prods:
            t = model.transitions[tid]
            args = (state.running[tid], state.next_start[tid], now)
            if not isinstance(check(model, t, state, *args), Ready) and \
                    isinstance(check(model, t, padded, *args), Ready):
                n += 1
        return n

    def observe(_event, state, _firing):
        later = sorted({state.next_start[t] for t in prods if state.next_start[t] > state.now})
        # the last state of the instant counts: [(from, producers blocked)]
        at[state.now] = [(when, blocked(state, when)) for when in [state.now] + later]
    result = reference_run(model, marking, observe=observe, max_commits=4 * SAMPLE_MAX_COMMITS)
    if result.latency is None or result.stopped is not None:
        raise VerificationError(f"the run of {marking} does not end: {result.message}")
    times = sorted(at)
    ticks = 0
    for a, b in zip(times, times[1:]):
        steps = [(when, n) for when, n in at[a] if when < b] + [(b, 0)]
        ticks += sum(n * (nxt - when) for (when, n), (nxt, _) in zip(steps, steps[1:]))
    return StallMeasure(Fraction(ticks, model.ticks_per_cycle), result.latency)


class _StallRecorder(Recorder):
    """The class recorder, also writing each producer firing's stall ``s - m`` (see the
    module docstring)."""

    def __init__(self, model, symbolic, prefix, prods, bound):
        super().__init__(model, symbolic, prefix)
        self.prods, self.bound = set(prods), bound
        self.stalls, self.stall_defs = [], []

    def _start(self, state, f):
        before = len(self.timing)
        super()._start(state, f)
        t = self.model.transitions[f.transition]
        if t.id not in self.prods:
            return
        record = self.firings[id(f)]
        # maximum(s, terms) added s == x, or s >= x for each x (Z3 may turn it to x <= s)
        added = self.timing[before:]
        terms = [c.arg(1) if c.arg(0).eq(record.start) else c.arg(0)
                 for c in (added if len(added) == 1 else added[:-1])]
        for tok in self._slots_used(t, state, f):
            born = self.birth[id(tok)][0]
            terms.pop(next(i for i, x in enumerate(terms) if x.eq(born)))
        ready = self.z3.Int(f"{self.prefix}{t.name}#{record.index}.ready")
        self.stall_defs += maximum(ready, terms) if terms else [ready == 0]
        self.stalls.append(record.start - ready)

    def _slots_used(self, t, state, f) -> list:
        """The buffer's slot tokens the firing took or reads (R3: the first free ones)."""
        used = [k for pid, arc in zip(t.inputs, f.locked) if pid == self.bound for k in arc]
        taken = dict(zip(t.inputs, f.locked))
        args = [list(taken.get(p, [])) + list(state.free[p]) for p in t.arg_places]
        names = {p.name: i for i, p in enumerate(self.model.places)}
        for pid, n in t.reads:
            if pid == self.bound:
                k = evaluate(n, lambda a, j: args[a][j].values,
                             lambda name: state.count(names[name]))
                used += list(state.free[pid])[:k]
        return used


def _stall_terms(problem, cls, prods, bound):
    """(constraints, stall) of a class: its producers' stalls as a Z3 sum over the class's
    own variables (the sample followed again with the class's variable names)."""
    import z3
    model, space = problem.model, problem.space
    symbolic = {}
    for p in space.places:
        pid = model.place_id(p.place)
        props = model.places[pid].token_type.properties
        own = [tuple(map(z3.IntVal, t)) for t in model.initial.get(pid, [])]
        symbolic[pid] = own + [tuple(v[k] for k in props)
                               for v in problem.variables[p.place].values]
    prefix = str(cls.latency)[:-len("latency")]
    recorder = _StallRecorder(model, symbolic, prefix, prods, bound)
    reference_run(model, initial_marking(model, space, cls.sample), observe=recorder,
                  max_commits=SAMPLE_MAX_COMMITS)
    total = z3.Sum(recorder.stalls) if recorder.stalls else z3.IntVal(0)
    return recorder.stall_defs, total


def _checked_stall(problem, cls, place, m, stall) -> tuple[Witness, Fraction]:
    """The input of ``m``: simulated to its latency, and its stall measured from the run
    equal to the encoding's."""
    latency = m.eval(cls.latency).as_long()
    claimed = Fraction(m.eval(stall).as_long(), latency)
    witness = simulate_witness(problem, cls, m, latency)
    measured = simulated_stall(problem.model, place,
                               initial_marking(problem.model, problem.space, witness.tokens)).ratio
    if measured != claimed:
        raise VerificationError(f"witness {witness.tokens} has stall ratio {measured} in "
                                f"simulation but the proof says {claimed}")
    return witness, claimed


def _above(stall, latency, r: Fraction, inclusive: bool):
    """stall / latency > r (>= r when ``inclusive``), linear: q·stall vs p·latency."""
    lhs, rhs = stall * r.denominator, r.numerator * latency
    return lhs >= rhs if inclusive else lhs > rhs


def stall_check(model: Model, space: InputSpace, place: str, limit: Fraction,
                strict: bool = False, *, worst: bool = False, budget: Budget | None = None,
                seeds: tuple = ()):
    """Whether ``place``'s stall ratio stays within ``limit`` (below it when ``strict``)
    on every input: (holds, ratio, witness). Where it fails, a counterexample and its
    ratio; with ``worst``, where it holds, the largest ratio over the space and an input
    with it (raised counterexample by counterexample, from the best of ``seeds``, inputs
    as tokens {place: [{property: value}]}). ``holds`` is None when time ran out."""
    import z3
    budget = budget or Budget(None)
    problem = partition(model, space, budget=budget)
    if not problem.complete:
        return None, None, None
    prods, bound = producers(model, place), _bounding(model, place)
    encoded = []
    for cls in problem.classes:
        defs, stall = _stall_terms(problem, cls, prods, bound)
        solver = z3.Solver()
        solver.add(problem.base + cls.constraints() + defs)
        encoded.append((cls, solver, stall))

    def find(solver, cls, stall, r, inclusive):
        budget.apply(solver)
        solver.push()
        solver.add(_above(stall, cls.latency, r, inclusive))
        verdict = solver.check()
        m = solver.model() if verdict == z3.sat else None
        solver.pop()
        if verdict == z3.unknown:
            raise _Unknown
        return m

    def breaks(ratio):
        return ratio > limit or (strict and ratio == limit)

    try:
        if not worst:           # one query per class: is there an input over the limit?
            for cls, solver, stall in encoded:
                m = find(solver, cls, stall, limit, strict)
                if m is not None:
                    witness, ratio = _checked_stall(problem, cls, place, m, stall)
                    return False, ratio, witness
            return True, None, None
        # The largest ratio: each model lifts the bar to its own ratio (Dinkelbach's
        # steps) and the step that finds none proves the maximum; a ratio over the limit
        # ends the search with a counterexample. Only the input reported is simulated.
        # (Bisecting on the ratio was tried: its refutations are far slower than these
        # steps.) The bar starts at the best of a few known inputs (the space's corners,
        # earlier witnesses): on the JPEG decoder that saves some 300 small steps.
        best, top = Fraction(-1), None
        for tokens in _corners(space) + list(seeds):
            for cls, solver, stall in encoded:
                m = _pinned(solver, problem.variables, tokens, budget)
                if m is not None:
                    ratio = Fraction(m.eval(stall).as_long(), m.eval(cls.latency).as_long())
                    if ratio > best:
                        best, top = ratio, (cls, m, stall)
        for cls, solver, stall in encoded:
            while not breaks(best) and \
                    (m := find(solver, cls, stall, best, False)) is not None:
                best, top = Fraction(m.eval(stall).as_long(),
                                     m.eval(cls.latency).as_long()), (cls, m, stall)
        if top is None:                       # an empty space: nothing to measure
            return True, None, None
        witness, ratio = _checked_stall(problem, top[0], place, top[1], top[2])
        return not breaks(ratio), ratio, witness
    except _Unknown:
        return None, None, None


def _pinned(solver, variables: dict, tokens: dict, budget: Budget):
    """The solver's model with the input fixed to ``tokens`` ({place: [{prop: value}]}),
    or None when that input is not one of its inputs (outside the space or class)."""
    import z3
    pins = [variables[p].values[i][k] == v for p, toks in tokens.items()
            for i, tok in enumerate(toks) for k, v in tok.items()
            if p in variables and i < len(variables[p].values)
            and not z3.is_int_value(variables[p].values[i][k])]
    budget.apply(solver)
    solver.push()
    solver.add(pins)
    m = solver.model() if solver.check() == z3.sat else None
    solver.pop()
    return m


def _corners(space: InputSpace) -> list[dict]:
    """The inputs with every property at its least, and at its greatest, value."""
    return [{p.place: [{k: r[end] for k, r in p.properties.items()}] * p.count[0]
             for p in space.places} for end in (0, 1)]


class _Unknown(Exception):
    """The time budget ran out in a solver call."""


# ---------------------------------------------------------------------- sizing
def _unfinished(exc: VerificationError) -> bool:
    """A size at which some input of the space does not run to the end (too few slots
    for a firing that takes several: a deadlock) fails any budget; other errors stop."""
    if "does not run to the end" not in str(exc):
        raise exc
    return False


def _check_sizes(sizes: range) -> None:
    if len(sizes) == 0 or sizes[0] < 1:
        raise invalid("range", f"{sizes.start}..{sizes.stop - 1}", "lo..hi with 1 <= lo <= hi")


def _seconds(budget: Budget) -> float | None:
    ms = budget.left_ms()
    return None if ms is None else ms / 1000


def size_buffer(model: Model, space: InputSpace, place: str, sizes: range, budget: str,
                *, timeout: float | None = None, progress=None) -> SizingResult:
    """The smallest size in ``sizes`` for which ``budget`` holds on every input of
    ``space``: a property such as ``latency <= 2000`` (:func:`.verify.prove`), or a
    stall-ratio budget ``stall <= 0.05`` (see the module docstring). Each size that
    fails comes with its counterexample; for a stall budget, the size found comes with
    its worst stall ratio over the space and the input that has it."""
    began, clock = time.monotonic(), Budget(timeout)
    _check_sizes(sizes)
    stall = stall_budget(budget)
    if not stall and "stall" in budget:
        raise invalid("budget", budget, "'stall <= R' or 'stall < R' with a number R "
                      "(the ratio of stalled cycles), or a latency property")
    if stall:
        strict, limit = stall
        producers(model, place)                    # a buffer without producers fails now
    tried = []
    for n in sizes:
        sized, _ = with_size(model, place, n)
        try:
            if stall:
                holds, value, witness = stall_check(
                    sized, space, place, limit, strict, worst=True,
                    budget=clock, seeds=[t.witness.tokens for t in tried if t.witness])
            else:
                result = prove(sized, space, budget, timeout=_seconds(clock))
                holds, witness = result.holds, result.counterexample
                value = None if witness is None else witness.simulated
            tried.append(Trial(n, holds, value, witness))
        except VerificationError as exc:
            holds = _unfinished(exc)
            tried.append(Trial(n, False, note=str(exc)))
        if progress:
            progress(f"{place} = {n}: {'unknown' if holds is None else holds}")
        if holds is None or holds:
            return SizingResult(place, budget, None if holds is None else n, tuple(tried),
                                time.monotonic() - began,
                                "unknown" if holds is None else "proved",
                                "stall ratio" if stall else "latency")
    return SizingResult(place, budget, None, tuple(tried), time.monotonic() - began,
                        measure="stall ratio" if stall else "latency")


def optimal_size(model: Model, space: InputSpace, place: str, sizes: range, *,
                 timeout: float | None = None, progress=None) -> SizingResult:
    """The smallest size in ``sizes`` attaining the least worst-case latency over
    ``space`` (§5.2.4, "the capacity that optimises" latency), with that latency and the
    input that takes it.

    Sizes are taken in order with the best worst case ``B`` so far. The first size's
    worst case is proved (:func:`.verify.latency_bound`). For each next size the inputs
    reported so far are simulated on it: one taking at least ``B`` shows the size is no
    better (it is kept as the witness, no solver needed). Otherwise their slowest, ``L``
    cycles, is the candidate worst case, and ``latency <= L`` is proved (one refutation
    per class); if a counterexample beats ``L`` but not ``B``, it is the witness; only
    when it beats ``B`` is the size's worst case searched for in full. A new worst case is
    below ``B``, so a size passed over has a worst case >= the final ``B`` and the size
    that set it comes first: the answer is exact. Values of passed-over sizes are lower
    bounds of their worst case (their note says so)."""
    began, clock = time.monotonic(), Budget(timeout)
    _check_sizes(sizes)
    tried, best, status = [], None, "proved"

    def rerun(sized, w: Witness) -> Witness:
        marking = initial_marking(sized, space, w.tokens)
        return Witness(w.input, w.tokens,
                       simulate_sample(sized, marking, 4 * SAMPLE_MAX_COMMITS).latency)

    def worst_case(sized):
        """(verdict, latency, witness): "best" for a proved worst case below B, "no
        better" for an input at least B, None when time ran out."""
        seeds = [rerun(sized, t.witness) for t in tried if t.witness is not None]
        if best is None or not seeds:
            return full(sized)
        top = max(seeds, key=lambda w: w.simulated)
        if top.simulated >= best[0]:
            return "no better", top.simulated, top
        r = prove(sized, space, f"latency <= {top.simulated}", timeout=_seconds(clock))
        if r.holds:
            return "best", top.simulated, top
        if r.holds is None:
            return None, None, None
        if r.counterexample.simulated >= best[0]:
            return "no better", r.counterexample.simulated, r.counterexample
        return full(sized)

    def full(sized):
        r = latency_bound(sized, space, "max", timeout=_seconds(clock))
        if r.status != "proved":
            return None, None, None
        return ("best" if best is None or r.bound < best[0] else "no better"), r.bound, \
            r.witness

    for n in sizes:
        sized, _ = with_size(model, place, n)
        try:
            verdict, latency, witness = worst_case(sized)
        except VerificationError as exc:
            tried.append(Trial(n, _unfinished(exc), note=str(exc)))
            continue
        if verdict is None:
            status = "unknown"
            break
        if verdict == "best":
            best = (latency, n)
            tried.append(Trial(n, True, latency, witness))
        else:
            tried.append(Trial(n, False, latency, witness, f"worst case >= {latency}"))
        if progress:
            progress(f"{place} = {n}: worst case {'' if verdict == 'best' else '>= '}"
                     f"{latency}")
    tried = [replace(t, holds=best is not None and t.size == best[1]) if t.holds else t
             for t in tried]
    return SizingResult(place, "optimise: least worst-case latency",
                        None if best is None or status != "proved" else best[1],
                        tuple(tried), time.monotonic() - began, status)


__all__ = ["SizingResult", "Trial", "StallMeasure", "with_size", "size_buffer",
           "optimal_size", "stall_check", "simulated_stall", "producers", "stall_budget"]
