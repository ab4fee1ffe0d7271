"""Proved latency bounds, properties and buffer sizes with Z3 (OSDI'24 §4.4, §5.2.4, §5.3.4).

**Input classes.** A run of the reference semantics (:mod:`..semantics`, rules R1–R8) on
one input is followed token by token: every firing's consumed and read tokens, and every
value a decision took (weights, guards, read and inhibitor counts, route conditions,
output counts, and that no division fails). The *class* of that input is the set of
inputs of the space on which all those data decisions come out the same; each class is
found from a sample, and the next sample is drawn outside the classes found so far, until
none is left (:func:`partition`).

**Encoding of a class (§4.4).** Token properties are Z3 terms of the input's variables
(the producers' expressions applied to the consumed tokens). Every firing gets a start
time ``s`` and commits at ``s + delay`` (its delay expression on its tokens). ``s`` is the
largest of the times at which its conditions became true: the commit that produced each
token it takes or reads (or 0 for the initial marking), the commit that freed its
concurrency slot (the firing ``concurrency`` commits earlier), the previous start plus
the initiation interval, and, when the sample shows it waited for something else, the
event at that instant. A ``max`` is a fresh variable ``m`` with ``m >= each`` and
``Or(m == each)``: linear in the number of terms, no blow-up. The latency is the largest
commit time into the done place, encoded the same way.

**Exactness and its check.** The encoding is exact for inputs whose run takes the same
tokens in every firing as the class's sample. Where several transitions take or read one
place's tokens (:func:`shared_places`), the order of their starts is kept as a condition
of the class, but a firing that the sample did *not* make (a transition that could have
fired again before a competitor took the token) is not excluded: on such nets a bound
can be wrong, and results carry a note naming the shared places. Every witness and
counterexample is simulated by the fast engine and its token routing compared with its
class; a difference stops with an error rather than report a wrong bound. Nets whose
places each have one user (Darwin), or whose sharing is serialised by turn tokens (the
JPEG decoder's IDCTs), are covered; tests check both against hundreds of random inputs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ...errors import ModelError, invalid
from ..expr import defined_when, evaluate, to_z3
from ..net import Marking, Model
from ..semantics import run as reference_run
from .formula import Tokens, is_condition, translate
from .inputspace import InputSpace

DEFAULT_MAX_CLASSES = 256
"""Classes after which :func:`partition` stops: the space is too varied to enumerate."""

SAMPLE_MAX_COMMITS = 50_000
"""Commits after which a sample run is taken to be endless (the reference engine is slow;
verification is for inputs of a few hundred firings)."""


class VerificationError(ModelError):
    """A result the verifier cannot stand behind: a witness whose simulation disagrees
    with the proof, or a sample run that fails."""


# ---------------------------------------------------------------------- following a run
@dataclass
class _Firing:
    transition: int
    index: int                   # n-th start of its transition
    start: object                # Z3 Int
    due: object                  # Z3 term: start + delay
    interval: object             # Z3 term
    concrete_start: int
    concrete_due: int
    concrete_interval: int


class _OutOfTime(Exception):
    """The time budget ran out while a sample was being followed."""


class _Recorder:
    """The observer of :func:`..semantics.run` that builds a class's formula."""

    def __init__(self, model: Model, symbolic: dict, prefix: str, budget=None):
        import z3
        self.z3, self.model, self.symbolic, self.prefix = z3, model, symbolic, prefix
        self.budget = budget
        self.values, self.birth, self.identity, self.keep = {}, {}, {}, []
        self.condition, self.timing, self.events = [], [], []
        self.started = [[] for _ in model.transitions]
        self.committed = [[] for _ in model.transitions]
        self.firings, self.produced = {}, {}
        self.routing = [[] for _ in model.transitions]
        self.into_done = []
        self.locks = [[] for _ in model.places]      # per place: firings that took from it
        self.watched = [set() for _ in model.transitions]
        for pid, ts in enumerate(model.watchers()):
            for t in ts:
                self.watched[t].add(pid)

    def __call__(self, event, state, firing):
        if self.budget is not None and len(self.events) % 256 == 0 and self.budget.over():
            raise _OutOfTime
        getattr(self, f"_{event}")(state, firing)

    # A token is followed by object identity; keep every one alive so ids stay unique.
    def _adopt(self, tok, values, birth, identity):
        self.keep.append(tok)
        self.values[id(tok)], self.birth[id(tok)] = values, birth
        self.identity[id(tok)] = identity

    def _begin(self, state, _):
        z3 = self.z3
        for pid, queue in enumerate(state.free):
            given = self.symbolic.get(pid, [])
            for i, tok in enumerate(queue):
                values = given[i] if i < len(given) else tuple(map(z3.IntVal, tok.values))
                self._adopt(tok, values, (z3.IntVal(0), 0), ("initial", pid, i))

    def _decide(self, term, concrete):
        z3 = self.z3
        cond = (term if concrete else z3.Not(term)) if z3.is_bool(term) else term == concrete
        if not z3.is_true(z3.simplify(cond)):
            self.condition.append(cond)

    def _start(self, state, f):
        z3, model = self.z3, self.model
        t = model.transitions[f.transition]
        taken = dict(zip(t.inputs, f.locked))
        before = {pid: list(taken.get(pid, [])) + list(state.free[pid])
                  for pid in set(t.arg_places) | {p for p, _ in t.reads}}
        args = [before[p] for p in t.arg_places]
        names = {p.name: i for i, p in enumerate(model.places)}

        def count_of(name):
            return state.count(names[name])

        def sym(e):
            render = lambda node: to_z3(node, lambda a, k: self.values[id(args[a][k])],  # noqa
                                        count_of)
            for cond in defined_when(e, render):
                self._decide(cond, True)
            return render(e)

        def concrete(e):
            return evaluate(e, lambda a, k: args[a][k].values, count_of)

        def decide(e):
            value = concrete(e)
            self._decide(sym(e), value)
            return value

        for w in t.weights:
            decide(w)
        if t.guard is not None:
            decide(t.guard)
        reads = [(pid, decide(n)) for pid, n in t.reads]
        for _, n in t.inhibits:
            decide(n)
        arcs = list(t.outputs)
        for r in t.routes:                       # R3: the first route whose condition holds
            if decide(r.condition):
                arcs.append(r)
                break
        produced = []
        for arc in arcs:
            n = decide(arc.count)
            if arc.copy_from is not None:
                tokens = [self.values[id(k)] for k in f.locked[arc.copy_from][:n]]
            elif arc.props is None:
                tokens = [()] * n
            else:
                tokens = [tuple(sym(e) for e in arc.props)] * n
            produced.append((arc.place, tokens))
        self.produced[id(f)] = produced

        # Times at which the firing's conditions became true (see the module docstring).
        terms = [self.birth[id(k)] for arc in f.locked for k in arc]
        terms += [self.birth[id(k)] for pid, n in reads for k in before[pid][:n]]
        mine = self.started[t.id]
        if t.concurrency is not None and len(mine) >= t.concurrency:
            slot = self.committed[t.id][len(mine) - t.concurrency]
            terms.append((slot.due, slot.concrete_due))
        if mine and not (t.initiation_interval.op == "const"
                         and t.initiation_interval.args[0] == 0):
            prev = mine[-1]
            terms.append((prev.start + prev.interval,
                          prev.concrete_start + prev.concrete_interval))
        now = state.now
        latest = max((c for _, c in terms), default=0)
        if latest > now:                        # pragma: no cover - a bug in this module
            raise VerificationError(f"{t.name!r} started at {now} before its inputs existed")
        if latest < now:
            terms.append(self._trigger(t, now))
        if not terms:
            terms.append((z3.IntVal(0), 0))
        s = z3.Int(f"{self.prefix}{t.name}#{len(mine)}.start")
        self.timing += maximum(s, [term for term, _ in terms])
        delay, interval = sym(t.delay), sym(t.initiation_interval)
        record = _Firing(t.id, len(mine), s, s + delay, interval, now, f.due,
                         state.next_start[t.id] - now)
        mine.append(record)
        self.firings[id(f)] = record
        self.keep.append(f)
        self.routing[t.id].append(tuple(self.identity[id(k)] for arc in f.locked for k in arc))
        for pid in _token_places(t, f.locked):
            self.locks[pid].append(record)
        self.events.append((now, "start", record))

    def _trigger(self, t, now):
        """What the firing waited for beyond its tokens: the last commit at this instant
        that touched a place it watches, else the last event at this instant."""
        same = [(kind, r) for at, kind, r in reversed(self.events) if at == now]
        for kind, r in same:
            if kind == "commit" and self._touches(r, t.id):
                return r.due, now
        for kind, r in same:
            return (r.due if kind == "commit" else r.start), now
        raise VerificationError(f"cannot tell why {t.name!r} started at cycle {now}: "
                                f"nothing happened then")

    def _touches(self, r, tid):
        t = self.model.transitions[r.transition]
        return bool(self.watched[tid] & (set(t.inputs) | {a.place for a in t.outputs + t.routes}))

    def _commit(self, state, f):
        record = self.firings[id(f)]
        self.committed[record.transition].append(record)
        fresh: dict = {}
        for pid, tokens in self.produced.pop(id(f)):
            fresh.setdefault(pid, []).extend(tokens)
        for pid, tokens in fresh.items():
            new = list(state.free[pid])[len(state.free[pid]) - len(tokens):]
            for j, (tok, values) in enumerate(zip(new, tokens)):
                self._adopt(tok, values, (record.due, record.concrete_due),
                            (record.transition, record.index, pid, j))
            if pid == self.model.done and tokens:
                self.into_done.append(record.due)
        self.events.append((state.now, "commit", record))


def _token_places(t, locked=None) -> set:
    """The places whose tokens a firing of ``t`` takes, reads or counts (its functions'
    token reads and counts, read and inhibitor arcs); with ``locked``, only the inputs it
    took tokens from."""
    taken = t.inputs if locked is None else [p for p, arc in zip(t.inputs, locked) if arc]
    return set(taken) | {t.arg_places[a] for a, _ in t.needs} | set(t.counted) | \
        {p for p, _ in t.reads + t.inhibits}


def _users(model: Model) -> list[set]:
    """For every place, the transitions that take or read its tokens."""
    users = [set() for _ in model.places]
    for t in model.transitions:
        for pid in _token_places(t):
            users[pid].add(t.id)
    return users


def shared_places(model: Model) -> dict[str, list[str]]:
    """Places whose tokens several transitions take, read or count: {place: [transitions]}.
    There, routing may depend on timing, which the encoding covers only in part (see
    the module docstring); results on such nets say so."""
    return {model.places[pid].name: [model.transitions[t].name for t in sorted(ts)]
            for pid, ts in enumerate(_users(model)) if len(ts) > 1}


def _caveat(model: Model) -> str:
    shared = shared_places(model)
    if not shared:
        return ""
    names = "; ".join(f"{p}: {', '.join(ts)}" for p, ts in shared.items())
    return (f"assumes token routing in shared places ({names}) does not change with "
            f"timing beyond the start orders kept per class; checked on the witness")


def _lock_order(model: Model, locks: list) -> list:
    """Where two transitions take or read the tokens of one place, which tokens each sees
    depends on the order in which they start: keep that order (strictly before, or at
    the same instant, as in the sample) as a condition of the class."""
    users = _users(model)
    out = []
    for pid in range(len(model.places)):
        if len(users[pid]) < 2:
            continue
        for a, b in zip(locks[pid], locks[pid][1:]):
            if a.transition == b.transition:
                continue
            out.append(a.start == b.start if a.concrete_start == b.concrete_start
                       else a.start < b.start)
    return out


def maximum(m, terms) -> list:
    """``m == max(terms)`` as constraints: m >= each term, and m equals one of them."""
    import z3
    if len(terms) == 1:
        return [m == terms[0]]
    return [m >= x for x in terms] + [z3.Or([m == x for x in terms])]


# ---------------------------------------------------------------------- classes
@dataclass(frozen=True)
class TraceClass:
    """One input class: its data conditions, its timing constraints and its latency."""

    index: int
    condition: tuple = field(repr=False)     # Z3 conditions on the input's variables
    order: tuple = field(repr=False)         # Z3 conditions on commit/start times
    timing: tuple = field(repr=False)        # Z3 constraints defining the commit times
    latency: object = field(repr=False)      # Z3 Int
    sample: dict = field(repr=False)         # {place: [{prop: value}]}
    sample_latency: int = 0
    routing: tuple = field(repr=False, default=())
    firings: int = 0

    def constraints(self) -> list:
        """Membership and timing: every model is an input of the class with its times."""
        return list(self.condition) + list(self.order) + list(self.timing)

    def __repr__(self) -> str:
        return (f"TraceClass({self.index}: {self.firings} firings, {len(self.condition)} "
                f"condition(s), sample latency {self.sample_latency})")


def _marking(model: Model, space: InputSpace, sample: dict) -> dict:
    """{place id: [property tuples]}: the model's own initial tokens, then the input's."""
    tokens = {pid: list(ts) for pid, ts in model.initial.items()}
    for p in space.places:
        pid = model.place_id(p.place)
        props = model.places[pid].token_type.properties
        tokens.setdefault(pid, []).extend(tuple(v[k] for k in props) for v in sample[p.place])
    return tokens


def follow(model: Model, space: InputSpace, variables: dict, sample: dict, index: int = 0,
           budget=None):
    """The class of ``sample`` ({place: [{prop: value}]}): run the reference semantics on
    it and encode what the run did (see the module docstring)."""
    import z3
    marking = _marking(model, space, sample)
    symbolic = {}
    for p in space.places:
        pid = model.place_id(p.place)
        props = model.places[pid].token_type.properties
        own = [tuple(map(z3.IntVal, t)) for t in model.initial.get(pid, [])]
        symbolic[pid] = own + [tuple(v[k] for k in props) for v in variables[p.place].values]
    prefix = f"c{index}."
    recorder = _Recorder(model, symbolic, prefix, budget)
    result = reference_run(model, marking, observe=recorder, max_commits=SAMPLE_MAX_COMMITS)
    if result.stopped is not None or result.latency is None:
        why = result.message or "no token reached the done place"
        raise VerificationError(f"the input {sample} of the space does not run to the end: "
                                f"{why}")
    latency = z3.Int(f"{prefix}latency")
    timing = recorder.timing + maximum(latency, recorder.into_done)
    return TraceClass(index, tuple(recorder.condition),
                      tuple(_lock_order(model, recorder.locks)), tuple(timing), latency, sample,
                      result.latency, tuple(map(tuple, recorder.routing)),
                      len(result.firings))


def _sample(space: InputSpace, variables: dict, z3model) -> dict:
    return {p.place: [{k: z3model.eval(v, model_completion=True).as_long()
                       for k, v in values.items()} for values in variables[p.place].values]
            for p in space.places}


class _Budget:
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
class _Problem:
    model: Model
    space: InputSpace
    variables: dict
    base: list
    classes: list
    complete: bool


def partition(model: Model, space: InputSpace, *, max_classes: int = DEFAULT_MAX_CLASSES,
              budget: _Budget | None = None, progress=None) -> _Problem:
    """Every class of the space: a sample is drawn outside the classes found so far until
    none is left. Stops (``complete`` False) when the time budget runs out."""
    import z3
    budget = budget or _Budget(None)
    variables = space.variables(model)
    base = space.constraint_terms(variables)
    solver = z3.Solver()
    solver.add(base)
    classes = []
    while True:
        budget.apply(solver)
        verdict = solver.check()
        if verdict == z3.unsat:
            return _Problem(model, space, variables, base, classes, True)
        if verdict == z3.unknown or budget.over():
            return _Problem(model, space, variables, base, classes, False)
        if len(classes) >= max_classes:
            raise invalid("space", space.origin, f"at most {max_classes} input classes "
                          f"(it has more): narrow the ranges or split the space")
        try:
            cls = follow(model, space, variables, _sample(space, variables, solver.model()),
                         len(classes), budget)
        except _OutOfTime:
            return _Problem(model, space, variables, base, classes, False)
        classes.append(cls)
        if progress:
            progress(f"class {len(classes)}: {cls.firings} firings")
        # The timing constraints define the class's times as functions of the input, so
        # the order conditions can be negated over them.
        region = list(cls.condition) + list(cls.order)
        solver.add(list(cls.timing))
        solver.add(z3.Not(z3.And(*region)) if region else z3.BoolVal(False))


# ---------------------------------------------------------------------- witnesses
@dataclass(frozen=True)
class Witness:
    """An input of the space, as Ψ takes it (``input``) and as tokens, with the latency
    the simulator gives it."""

    input: object
    tokens: dict
    simulated: int

    def to_dict(self) -> dict:
        return {"input": self.input, "tokens": self.tokens, "simulated": self.simulated}


def _witness(problem: _Problem, cls: TraceClass, z3model, claimed: int | None) -> Witness:
    """The input in ``z3model``, simulated; its run must follow its class and, when a
    latency is ``claimed``, take exactly that long."""
    from ..sim import SimulationError, simulate
    model, space = problem.model, problem.space
    sample = _sample(space, problem.variables, z3model)
    marking = _marking(model, space, sample)
    user = space.user_input(problem.variables,
                            lambda t: z3model.eval(t, model_completion=True))
    if user is not None:
        mine = model.marking(user).tokens
        if {p: list(ts) for p, ts in mine.items() if ts} != \
                {p: list(ts) for p, ts in marking.items() if ts}:
            raise invalid(f"{space.origin}: input", space.input,
                          f"a formula whose value ({user!r}) Ψ turns into the witness's "
                          f"tokens {sample}; it gives other tokens")
    try:
        simulated = simulate(model, Marking(model.name, {p: tuple(ts) for p, ts in
                                                         marking.items()}),
                             max_commits=4 * SAMPLE_MAX_COMMITS).latency
    except SimulationError as exc:
        raise VerificationError(f"witness {sample} does not run to the end: {exc}") from None
    again = follow(model, space, problem.variables, sample, cls.index)
    if again.routing != cls.routing or (claimed is not None and simulated != claimed):
        raise VerificationError(
            f"witness {user if user is not None else sample} simulates to {simulated} cycles "
            f"but the proof says {claimed}"
            + ("" if again.routing == cls.routing else
               ": its run routes tokens differently from its class (timing-dependent "
               "routing, which this encoding does not cover)"))
    return Witness(user, sample, simulated)


# ---------------------------------------------------------------------- queries
@dataclass(frozen=True)
class BoundResult:
    """The largest (``which`` = "max") or smallest latency over a space, proved."""

    which: str
    bound: int | None
    witness: Witness | None
    classes: int
    seconds: float
    status: str = "proved"          # or "unknown": the time budget ran out
    note: str = ""

    @property
    def simulated(self) -> int | None:
        return None if self.witness is None else self.witness.simulated

    def to_dict(self) -> dict:
        return {"bound": self.bound, "which": self.which, "status": self.status,
                "witness": None if self.witness is None else self.witness.input,
                "witness_tokens": None if self.witness is None else self.witness.tokens,
                "simulated": self.simulated, "classes": self.classes,
                "seconds": round(self.seconds, 3), "note": self.note}

    def __repr__(self) -> str:
        return (f"BoundResult({self.which} latency {self.bound} cycles, {self.status}, "
                f"{self.classes} class(es), {self.seconds:.2f} s)")


def _largest(solver, objective, budget: _Budget):
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
    began, budget = time.monotonic(), _Budget(timeout)
    problem = partition(model, space, max_classes=max_classes, budget=budget,
                        progress=progress)
    best = None
    status = "proved" if problem.complete else "unknown"
    for cls in problem.classes:
        solver = z3.Solver()
        solver.add(problem.base + cls.constraints())
        objective = cls.latency if which == "max" else -cls.latency
        found = _largest(solver, objective, budget)
        if found is None:
            status = "unknown"
            break
        score, m, exact = found
        value = score if which == "max" else -score
        if best is None or (value > best[0] if which == "max" else value < best[0]):
            best = (value, cls, m)
        if not exact:
            status = "unknown"
            break
        if progress:
            progress(f"class {cls.index + 1}/{len(problem.classes)}: {which} {value}")
    seconds = time.monotonic() - began
    if best is None:
        return BoundResult(which, None, None, len(problem.classes), seconds, "unknown",
                           "the time budget ran out before any class was solved")
    value, cls, m = best
    witness = _witness(problem, cls, m, value)
    note = _caveat(model) if status == "proved" else (
        f"time budget ran out: {value} is the {which} over the "
        f"{len(problem.classes)} class(es) found so far, not a proved bound")
    return BoundResult(which, value, witness, len(problem.classes),
                       time.monotonic() - began, status, note)


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
                "seconds": round(self.seconds, 3), "note": self.note}

    def __repr__(self) -> str:
        verdict = {True: "holds", False: "fails", None: "unknown"}[self.holds]
        return f"ProofResult({self.property!r} {verdict}, {self.seconds:.2f} s)"


def prove(model: Model, space: InputSpace, prop: str, *, interface=None,
          timeout: float | None = None, progress=None,
          max_classes: int = DEFAULT_MAX_CLASSES) -> ProofResult:
    """Prove ``prop`` (a condition over ``latency``, the input's tokens and, with an
    ``interface`` function, its prediction ``E``) for every input of ``space``, or find a
    counterexample (§4.4, §5.3.4)."""
    import z3
    began, budget = time.monotonic(), _Budget(timeout)
    problem = partition(model, space, max_classes=max_classes, budget=budget,
                        progress=progress)
    names = {}
    if interface is not None:
        names["E"] = interface_term(interface, space, problem.variables)
    holds = True if problem.complete else None
    for cls in problem.classes:
        term = translate(prop, problem.variables, {**names, "latency": cls.latency},
                         "property")
        if not is_condition(term):
            raise invalid("property", prop, "a condition, e.g. 'latency <= 2300'")
        solver = z3.Solver()
        budget.apply(solver)
        solver.add(problem.base + cls.constraints() + [z3.Not(term)])
        verdict = solver.check()
        if verdict == z3.sat:
            m = solver.model()
            witness = _witness(problem, cls, m, m.eval(cls.latency).as_long())
            values = {"latency": witness.simulated}
            if "E" in names:
                values["E"] = _number(m.eval(names["E"], model_completion=True))
            return ProofResult(prop, False, witness, len(problem.classes),
                               time.monotonic() - began, values, _caveat(model))
        if verdict == z3.unknown:
            holds = None
            break
        if progress:
            progress(f"class {cls.index + 1}/{len(problem.classes)}: holds")
    note = _caveat(model) if holds else (f"time budget ran out: no counterexample in the "
                                         f"{len(problem.classes)} class(es) examined")
    return ProofResult(prop, holds, None, len(problem.classes), time.monotonic() - began,
                       note=note)


def _number(v):
    import z3
    if z3.is_int_value(v):
        return v.as_long()
    if z3.is_rational_value(v):
        return float(v.as_fraction())
    return float(v.approx(12).as_fraction())


def interface_term(latency_fn, space: InputSpace, variables: dict):
    """A performance interface's prediction as a Z3 real: ``latency_fn`` (a function of
    the input as Ψ takes it) is called on the space's ``input`` with Z3 reals in place of
    numbers, and with ``max``/``min``/``abs`` that build Z3 terms."""
    import z3
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
        raise invalid("--interface", getattr(latency_fn, "__module__", latency_fn),
                      f"a latency(x) made of arithmetic, max, min and abs ({exc})") from None
    return z3.ToReal(value) if z3.is_int(value) else (
        z3.RealVal(value) if isinstance(value, (int, float)) else value)


def within(interface, space, model, tolerance: float, **kw) -> ProofResult:
    """Prove that the interface's relative error |E - latency| / latency stays below
    ``tolerance`` on every input of the space (the §5.3.4 query)."""
    if not (isinstance(tolerance, (int, float)) and tolerance > 0):
        raise invalid("--within", tolerance, "a relative error > 0, e.g. 0.43")
    return prove(model, space, f"abs(E - latency) < {float(tolerance)!r} * latency",
                 interface=interface, **kw)


__all__ = ["TraceClass", "BoundResult", "ProofResult", "Witness",
           "VerificationError", "partition", "follow", "shared_places", "latency_bound", "prove", "within",
           "interface_term", "Tokens"]
