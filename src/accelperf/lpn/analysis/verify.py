"""Proved latency bounds, properties and buffer sizes with Z3 (OSDI'24 §4.4, §5.2.4, §5.3.4).

**Input classes.** A run of the reference semantics (:mod:`..semantics`, rules R1–R8) on
one input is followed token by token: every firing's consumed and read tokens, and every
value a decision took (weights, guards, read and inhibitor counts, route conditions,
output counts, and that no division fails). The *class* of that input is the set of
inputs of the space on which all those data decisions come out the same and whose
timing routes tokens as the sample's did (below); each class is found from a sample,
and the next sample is drawn outside the classes found so far, until none is left
(:func:`partition`).

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

**Routing conditions (soundness).** The formula of a class is exact for an input only if
its run makes the same firings with the same tokens as the sample. Each class therefore
also keeps timing conditions under which the reference rules (R4 FIFO queues, R5 commit
order and lowest-id-first starts) route tokens as in the sample:

* *arrival order*: consecutive commits into a place keep their order (R5's tie rule:
  transition id, then start order, at one instant);
* *access order*: where several transitions take or read one place's tokens
  (:func:`shared_places`), consecutive takes, and each read between its neighbouring
  takes, keep their order (at one instant only if R5 would start them in that order);
* *no steal*: when a firing of ``u`` takes tokens of a shared place, every other user
  ``t`` lacked, for its next firing, something only ``t`` uses (a token of a place only
  it takes, its concurrency slot, its interval): that resource arrives after the take
  (or at the same instant when ``u`` has the lower id). A ``t`` that can never fire again
  (a place only it takes ends below its weight) needs no condition;
* *counts*: a start that reads ``count(P)`` or an inhibitor keeps the commits that change
  P's count on the same side of it;
* *the end*: R2's data decisions on the final marking (guards, weights, read and
  inhibitor counts, and that none of them fails) come out the same.

With these, an input that satisfies a class's conditions runs as its sample, so the
search for a sample outside every class found so far (:func:`partition`) is a
refinement loop over routings: when it finds none, the classes cover the space and
every bound is sound. What the conditions cannot pin down is named in the class's
``gaps``, and results then say "unknown" with those reasons, never a proved bound: a
start later than its tokens, slot and interval allowed (an inhibitor or a count-guard
released it), a user of a shared place that waited for something other than its own
resources while another took the tokens, same-instant orders that only zero-delay
rounds explain, and transitions whose guard, weights or read counts read a shared
place's tokens or weights/read counts read a count (their readiness at moments the
sample does not record depends on data). A sample that does not run to the end (a
deadlock, an error, a limit) ends the search: it is the counterexample, reported
instead of a bound. Every witness of an exact class is simulated by the fast engine
and its routing compared with its class; a difference stops with an error. The JPEG
decoder (shared places ``coefficients`` and ``out_slots``, serialised by its turn
tokens) and Darwin are covered exactly; tests compare bounds with every input of small
racing nets and with random inputs of random nets.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

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
    private: list = field(default_factory=list)   # [(term, value)]: see _no_steal


class _OutOfTime(Exception):
    """The time budget ran out while a sample was being followed."""


def _constant(e) -> int | None:
    return e.args[0] if e.op == "const" else None


def _before(a: _Firing, b: _Firing, gaps: list, why: str):
    """``a`` starts before ``b`` as in the sample: at the same instant only when R5's
    lowest-id-first rule would still start ``a`` first."""
    if a.transition <= b.transition:
        return a.start <= b.start
    if a.concrete_start == b.concrete_start:       # b became ready only after a started
        gaps.append(why)
        return a.start == b.start                  # (a gap: only keep the sample inside)
    return a.start < b.start


class _Recorder:
    """The observer of :func:`..semantics.run` that builds a class's formula and the
    conditions under which other inputs run as its sample (see the module docstring)."""

    def __init__(self, model: Model, symbolic: dict, prefix: str, budget=None):
        import z3
        self.z3, self.model, self.symbolic, self.prefix = z3, model, symbolic, prefix
        self.budget = budget
        self.values, self.birth, self.identity, self.keep = {}, {}, {}, []
        self.condition, self.timing, self.events = [], [], []
        self.order, self.gaps = [], []
        self.started = [[] for _ in model.transitions]
        self.committed = [[] for _ in model.transitions]
        self.firings, self.produced = {}, {}
        self.routing = [[] for _ in model.transitions]
        self.into_done = []
        self.takers = _takers(model)
        self.accesses = [[] for _ in model.places]   # per place: (firing, "take"|"read")
        self.changes = [[] for _ in model.places]    # per place: (event no., commit)
        self.last_arrival = [None] * len(model.places)
        self.pins = []                               # (firing, place, event no.)
        self.state = None
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
        self.state = state
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

    def _functions(self, state, args):
        """(sym, concrete) renderers of expressions over ``args`` (per argument place,
        its tokens) on ``state``; ``sym`` records when the expression is defined."""
        names = {p.name: i for i, p in enumerate(self.model.places)}

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
        return sym, concrete

    def _start(self, state, f):
        z3, model = self.z3, self.model
        t = model.transitions[f.transition]
        taken = dict(zip(t.inputs, f.locked))
        before = {pid: list(taken.get(pid, [])) + list(state.free[pid])
                  for pid in set(t.arg_places) | {p for p, _ in t.reads}}
        args = [before[p] for p in t.arg_places]
        sym, concrete = self._functions(state, args)

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

        # Times at which the firing's conditions became true (see the module docstring):
        # its tokens (taken, read, or read by its functions), its slot and its interval.
        seen = [k for arc in f.locked for k in arc]
        seen += [k for pid, n in reads for k in before[pid][:n]]
        seen += [k for a, n in t.needs for k in before[t.arg_places[a]][:n]]
        terms = [self.birth[i] for i in dict.fromkeys(map(id, seen))]
        private = [self.birth[id(k)] for pid, w, arc in zip(t.inputs, t.weights, f.locked)
                   if self.takers[pid] == {t.id} and (_constant(w) or 0) >= 1 for k in arc]
        private += [self.birth[id(k)] for (pid, n), (_, got) in zip(t.reads, reads)
                    if self.takers[pid] == {t.id} and (_constant(n) or 0) >= 1
                    for k in before[pid][:got]]
        mine = self.started[t.id]
        if t.concurrency is not None and len(mine) >= t.concurrency:
            slot = self.committed[t.id][len(mine) - t.concurrency]
            terms.append((slot.due, slot.concrete_due))
            private.append(terms[-1])
        if mine and not (t.initiation_interval.op == "const"
                         and t.initiation_interval.args[0] == 0):
            prev = mine[-1]
            terms.append((prev.start + prev.interval,
                          prev.concrete_start + prev.concrete_interval))
            private.append(terms[-1])
        now = state.now
        latest = max((c for _, c in terms), default=0)
        if latest > now:                        # pragma: no cover - a bug in this module
            raise VerificationError(f"{t.name!r} started at {now} before its inputs existed")
        if latest < now:
            terms.append(self._trigger(t, now))
            self.gaps.append(f"{t.name} started at cycle {now}, later than its tokens, "
                             f"slot and interval allowed (it waited for an inhibitor, a "
                             f"guard or a count)")
        if not terms:
            terms.append((z3.IntVal(0), 0))
        s = z3.Int(f"{self.prefix}{t.name}#{len(mine)}.start")
        self.timing += maximum(s, [term for term, _ in terms])
        delay, interval = sym(t.delay), sym(t.initiation_interval)
        record = _Firing(t.id, len(mine), s, s + delay, interval, now, f.due,
                         state.next_start[t.id] - now, private)
        mine.append(record)
        self.firings[id(f)] = record
        self.keep.append(f)
        self.routing[t.id].append(tuple(self.identity[id(k)] for arc in f.locked for k in arc))
        for pid, arc in zip(t.inputs, f.locked):
            if arc:
                self.accesses[pid].append((record, "take"))
        for pid in {p for p, n in reads if n} | {t.arg_places[a] for a, _ in t.needs}:
            if not taken.get(pid):
                self.accesses[pid].append((record, "read"))
        for pid in set(t.counted) | {p for p, _ in t.inhibits}:
            self.pins.append((record, pid, len(self.events)))
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
        t = self.model.transitions[record.transition]
        for pid, arc in zip(t.inputs, f.locked):
            if arc:
                self.changes[pid].append((len(self.events), record))
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
            if tokens:
                self._arrival(pid, record)
        self.events.append((state.now, "commit", record))

    def _arrival(self, pid, record):
        """FIFO order (R4): the place's tokens queue in commit order, which must stay."""
        prev, self.last_arrival[pid] = self.last_arrival[pid], record
        self.changes[pid].append((len(self.events), record))
        if prev is None or prev is record:
            return
        if (prev.transition, prev.index) < (record.transition, record.index):
            self.order.append(prev.due <= record.due)     # R5 commits in this order
            return
        if prev.concrete_due == record.concrete_due:
            self.gaps.append(f"tokens reached {self.model.places[pid].name} out of R5's "
                             f"commit order at cycle {record.concrete_due} (zero delay)")
            self.order.append(prev.due == record.due)
            return
        self.order.append(prev.due < record.due)

    # ------------------------------------------------------------ after the run
    def finish(self) -> None:
        """The conditions only the whole run shows: counts read at a start, the order of
        accesses to shared places, that no transition could have taken tokens another
        took, and what kept every transition from firing again at the end."""
        self._pin_counts()
        virtual = [self._next_firing(t) for t in self.model.transitions]
        for pid, accesses in enumerate(self.accesses):
            if len(self.takers[pid]) > 1:
                self._access_order(pid, accesses)
                self._no_steal(pid, accesses, virtual)
        for t in self.model.transitions:
            self._blocked_at_end(t, virtual[t.id])

    def _pin_counts(self):
        """count(P) and inhibitors read the number of tokens at the start: the commits
        that changed it stay on the same side of the start."""
        name = self.model.places
        for record, pid, at in self.pins:
            events = self.changes[pid]
            before = [r for i, r in events if i < at]
            after = [r for i, r in events if i > at and r is not record]
            if before:
                self.order.append(before[-1].due <= record.start)
            if not after:
                continue
            nxt = after[0]
            if nxt.concrete_due == record.concrete_start:
                self.gaps.append(f"the count of {name[pid].name} changed at cycle "
                                 f"{nxt.concrete_due} after a start at that cycle "
                                 f"(zero delay)")
                self.order.append(record.start == nxt.due)
            else:
                self.order.append(record.start < nxt.due)

    def _access_order(self, pid, accesses):
        """Which tokens a firing takes or reads is the order of the accesses (FIFO)."""
        why = (f"two transitions accessed {self.model.places[pid].name} at one instant "
               f"out of id order")
        takes = [i for i, (_, kind) in enumerate(accesses) if kind == "take"]
        for i, j in zip(takes, takes[1:]):
            if accesses[i][0] is not accesses[j][0]:
                self.order.append(_before(accesses[i][0], accesses[j][0], self.gaps, why))
        for i, (r, kind) in enumerate(accesses):
            if kind != "read":
                continue
            prev = [accesses[j][0] for j in takes if j < i and accesses[j][0] is not r]
            nxt = [accesses[j][0] for j in takes if j > i and accesses[j][0] is not r]
            if prev:
                self.order.append(_before(prev[-1], r, self.gaps, why))
            if nxt:
                self.order.append(_before(r, nxt[0], self.gaps, why))

    def _no_steal(self, pid, accesses, virtual):
        """While another transition's firing took tokens of a shared place, every other
        user ``t`` of the place lacked something only it uses (a token of a place only it
        takes, its slot or its interval) for its next firing: else ``t`` might have
        taken those tokens instead."""
        z3, model = self.z3, self.model
        for tid in self.takers[pid]:
            mine = [i for i, (r, _) in enumerate(accesses) if r.transition == tid]
            for i, (g, kind) in enumerate(accesses):
                if kind != "take" or g.transition == tid:
                    continue
                later = [accesses[j][0] for j in mine if j > i]
                terms = later[0].private if later else virtual[tid]
                if terms is None:                  # it can never fire again
                    continue
                terms = terms + [(z3.IntVal(0), 0)]     # nothing of its own: time 0
                tie = g.transition < tid           # R5: g's transition goes first
                if not any(c > g.concrete_start or (tie and c == g.concrete_start)
                           for _, c in terms):
                    self.gaps.append(
                        f"{model.transitions[tid].name} could have taken the tokens "
                        f"{model.transitions[g.transition].name} took from "
                        f"{model.places[pid].name} at cycle {g.concrete_start}: it waited "
                        f"for something other than its own tokens, slot or interval")
                    continue
                self.order.append(z3.Or([x >= g.start if tie else x > g.start
                                         for x, _ in terms]))

    def _next_firing(self, t):
        """The private conditions of a firing of ``t`` after its last one: None when a
        place only ``t`` takes from ends with fewer tokens than its constant weight (it
        can never fire again), else [(term, value)]."""
        free = self.state.free
        terms = []
        for pid, w in zip(t.inputs, t.weights):
            need = _constant(w)
            if self.takers[pid] != {t.id} or not need:
                continue
            if len(free[pid]) < need:
                return None
            terms += [self.birth[id(k)] for k in list(free[pid])[:need]]
        mine = self.started[t.id]
        if mine and t.concurrency is not None and len(mine) >= t.concurrency:
            slot = self.committed[t.id][len(mine) - t.concurrency]
            terms.append((slot.due, slot.concrete_due))
        if mine and not (t.initiation_interval.op == "const"
                         and t.initiation_interval.args[0] == 0):
            terms.append((mine[-1].start + mine[-1].interval,
                          mine[-1].concrete_start + mine[-1].concrete_interval))
        return terms

    def _blocked_at_end(self, t, virtual):
        """R2 on the final marking, as the reference run checked it: the data decisions
        that kept ``t`` from starting (and from failing) must come out the same."""
        z3, state = self.z3, self.state
        args = [list(state.free[p]) for p in t.arg_places]
        if any(len(args[a]) < n for a, n in t.needs):
            return                                  # R2(b): waits for tokens, no data
        sym, concrete = self._functions(state, args)
        steps = ([("guard", t.guard)] if t.guard is not None else []) + \
            [("weight", w, pid) for pid, w in zip(t.inputs, t.weights)] + \
            [("read", n, pid) for pid, n in t.reads] + \
            [("inhibit", n, pid) for pid, n in t.inhibits]
        for kind, e, *where in steps:
            value, term = concrete(e), sym(e)
            if kind == "guard":
                self._decide(term, value)
                blocked = not value
            else:
                self._decide(term >= 0, True)
                have = state.count(where[0]) if kind == "inhibit" else len(state.free[where[0]])
                blocked = value <= have if kind == "inhibit" else value > have
                self._decide(term <= have if kind == "inhibit" else term > have, blocked)
            if blocked:
                if virtual is not None and (_counts(e) or kind == "inhibit"):
                    self.gaps.append(f"{t.name} was kept from firing again by a count "
                                     f"({kind}) that other inputs may change in time")
                return
        if virtual is not None:                     # pragma: no cover - R7 says none
            self.gaps.append(f"{t.name} could start on the final marking")


def _counts(e) -> bool:
    from ..expr import counted_places
    return bool(counted_places(e))


def _takers(model: Model) -> list[set]:
    """For every place, the transitions that take its tokens or read them (read arcs,
    or their functions reading a token)."""
    users = [set() for _ in model.places]
    for t in model.transitions:
        for pid in set(t.inputs) | {p for p, _ in t.reads} | \
                {t.arg_places[a] for a, _ in t.needs}:
            users[pid].add(t.id)
    return users


def _unfollowed(model: Model) -> list[str]:
    """Transitions whose readiness at moments no sample records depends on data: their
    guard, weights or read and inhibitor counts read a token of a place other
    transitions also take, or their weights or read counts read a count."""
    from ..expr import tokens_needed
    takers = _takers(model)
    out = []
    for t in model.transitions:
        exprs = list(t.weights) + [n for _, n in t.reads + t.inhibits] + \
            ([t.guard] if t.guard is not None else [])
        shared = any(len(takers[t.arg_places[a]]) > 1 for a in tokens_needed(exprs))
        if shared or any(_counts(e) for e in list(t.weights) + [n for _, n in t.reads]):
            out.append(t.name)
    return out


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
    There, which firing gets which token may depend on timing: each class keeps the
    conditions under which it does not change (see the module docstring)."""
    return {model.places[pid].name: [model.transitions[t].name for t in sorted(ts)]
            for pid, ts in enumerate(_users(model)) if len(ts) > 1}


def maximum(m, terms) -> list:
    """``m == max(terms)`` as constraints: m >= each term, and m equals one of them."""
    import z3
    if len(terms) == 1:
        return [m == terms[0]]
    return [m >= x for x in terms] + [z3.Or([m == x for x in terms])]


# ---------------------------------------------------------------------- classes
@dataclass(frozen=True)
class TraceClass:
    """One input class: its data conditions, the timing conditions under which its
    inputs route tokens as its sample did, the constraints defining its times, and its
    latency. ``gaps`` name what the conditions could not pin down (then the class's
    formula is exact for its sample but not proved for the rest of it)."""

    index: int
    condition: tuple = field(repr=False)     # Z3 conditions on the input's variables
    order: tuple = field(repr=False)         # Z3 conditions on commit/start times
    timing: tuple = field(repr=False)        # Z3 constraints defining the commit times
    latency: object = field(repr=False)      # Z3 Int
    sample: dict = field(repr=False)         # {place: [{prop: value}]}
    sample_latency: int = 0
    routing: tuple = field(repr=False, default=())
    firings: int = 0
    gaps: tuple = ()

    @property
    def exact(self) -> bool:
        return not self.gaps

    def constraints(self) -> list:
        """Membership and timing: every model is an input of the class with its times."""
        return list(self.condition) + list(self.order) + list(self.timing)

    def __repr__(self) -> str:
        return (f"TraceClass({self.index}: {self.firings} firings, {len(self.condition)} "
                f"condition(s), {len(self.order)} timing condition(s), sample latency "
                f"{self.sample_latency}{'' if self.exact else ', not exact'})")


def _marking(model: Model, space: InputSpace, sample: dict) -> dict:
    """{place id: [property tuples]}: the model's own initial tokens, then the input's."""
    tokens = {pid: list(ts) for pid, ts in model.initial.items()}
    for p in space.places:
        pid = model.place_id(p.place)
        props = model.places[pid].token_type.properties
        tokens.setdefault(pid, []).extend(tuple(v[k] for k in props) for v in sample[p.place])
    return tokens


class _Unfinished(Exception):
    """A sample run that does not reach its end (deadlock, error or a limit, R7-R8)."""

    def __init__(self, sample: dict, message: str):
        super().__init__(message)
        self.sample, self.message = sample, message


def follow(model: Model, space: InputSpace, variables: dict, sample: dict, index: int = 0,
           budget=None):
    """The class of ``sample`` ({place: [{prop: value}]}): run the reference semantics on
    it and encode what the run did (see the module docstring). A sample that does not
    run to the end raises :class:`VerificationError` (``partition`` reports it as a
    counterexample)."""
    try:
        return _follow(model, space, variables, sample, index, budget)
    except _Unfinished as exc:
        raise VerificationError(f"the input {sample} of the space does not run to the "
                                f"end: {exc.message}") from None


def _follow(model, space, variables, sample, index, budget):
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
        raise _Unfinished(sample, result.message or "no token reached the done place")
    recorder.finish()
    gaps = [f"{name}'s guard, weights or read counts read tokens or counts that change "
            f"at moments no sample records" for name in _unfollowed(model)]
    latency = z3.Int(f"{prefix}latency")
    timing = recorder.timing + maximum(latency, recorder.into_done)
    return TraceClass(index, tuple(recorder.condition), tuple(recorder.order),
                      tuple(timing), latency, sample, result.latency,
                      tuple(map(tuple, recorder.routing)), len(result.firings),
                      tuple(dict.fromkeys(gaps + recorder.gaps)))


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
    unfinished: tuple | None = None      # (Z3 model, message): an input that never ends

    @property
    def gaps(self) -> list[str]:
        """What the classes could not pin down, each said once."""
        return list(dict.fromkeys(g for c in self.classes for g in c.gaps))

    @property
    def proved(self) -> bool:
        """Every input of the space is in a class whose formula is exact for it."""
        return self.complete and self.unfinished is None and not self.gaps


def partition(model: Model, space: InputSpace, *, max_classes: int = DEFAULT_MAX_CLASSES,
              budget: _Budget | None = None, progress=None) -> _Problem:
    """Every class of the space: a sample is drawn outside the classes found so far until
    none is left. Stops (``complete`` False) when the time budget runs out, and at the
    first sample that does not run to the end (``unfinished``: a counterexample to
    every bound)."""
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
        drawn = solver.model()
        try:
            cls = _follow(model, space, variables, _sample(space, variables, drawn),
                          len(classes), budget)
        except _OutOfTime:
            return _Problem(model, space, variables, base, classes, False)
        except _Unfinished as exc:
            return _Problem(model, space, variables, base, classes, False,
                            (drawn, exc.message))
        classes.append(cls)
        if progress:
            progress(f"class {len(classes)}: {cls.firings} firings")
        # The timing constraints define the class's times as functions of the input, so
        # the order conditions can be negated over them.
        region = list(cls.condition) + list(cls.order)
        _contains_sample(cls, region, variables, drawn)
        solver.add(list(cls.timing))
        solver.add(z3.Not(z3.And(*region)) if region else z3.BoolVal(False))


def _contains_sample(cls: TraceClass, region: list, variables: dict, drawn) -> None:
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


# ---------------------------------------------------------------------- witnesses
@dataclass(frozen=True)
class Witness:
    """An input of the space, as Ψ takes it (``input``) and as tokens, with the latency
    the simulator gives it; ``stopped`` says why an input that never ends stopped."""

    input: object
    tokens: dict
    simulated: int | None
    stopped: str = ""

    def to_dict(self) -> dict:
        out = {"input": self.input, "tokens": self.tokens, "simulated": self.simulated}
        return {**out, "stopped": self.stopped} if self.stopped else out


def _stopped(witness: Witness | None) -> dict:
    """The JSON key of an input that never finishes: why it stopped."""
    return {"stopped": witness.stopped} if witness is not None and witness.stopped else {}


def _user_input(problem: _Problem, z3model, sample: dict, marking: dict):
    """The input in Ψ's format; Ψ must turn it back into exactly ``marking``."""
    model, space = problem.model, problem.space
    user = space.user_input(problem.variables,
                            lambda t: z3model.eval(t, model_completion=True))
    if user is not None:
        mine = model.marking(user).tokens
        if {p: list(ts) for p, ts in mine.items() if ts} != \
                {p: list(ts) for p, ts in marking.items() if ts}:
            raise invalid(f"{space.origin}: input", space.input,
                          f"a formula whose value ({user!r}) Ψ turns into the witness's "
                          f"tokens {sample}; it gives other tokens")
    return user


def _unfinished(problem: _Problem) -> Witness:
    """The input that does not run to the end, checked with the fast engine too."""
    from ..sim import SimulationError, simulate
    z3model, message = problem.unfinished
    sample = _sample(problem.space, problem.variables, z3model)
    marking = _marking(problem.model, problem.space, sample)
    user = _user_input(problem, z3model, sample, marking)
    try:
        result = simulate(problem.model, Marking(problem.model.name, {
            p: tuple(ts) for p, ts in marking.items()}), max_commits=SAMPLE_MAX_COMMITS)
        if result.latency is not None:
            raise VerificationError(f"the reference semantics stops on {sample} "
                                    f"({message}) but the fast engine finishes it")
    except SimulationError:
        pass
    return Witness(user, sample, None, message)


def _witness(problem: _Problem, cls: TraceClass, z3model, claimed: int | None) -> Witness:
    """The input in ``z3model``, simulated. In an exact class its run must follow its
    class and, when a latency is ``claimed``, take exactly that long: anything else is a
    bug of this module and stops with an error."""
    from ..sim import SimulationError, simulate
    model, space = problem.model, problem.space
    sample = _sample(space, problem.variables, z3model)
    marking = _marking(model, space, sample)
    user = _user_input(problem, z3model, sample, marking)
    try:
        simulated = simulate(model, Marking(model.name, {p: tuple(ts) for p, ts in
                                                         marking.items()}),
                             max_commits=4 * SAMPLE_MAX_COMMITS).latency
    except SimulationError as exc:
        if not cls.exact:
            return Witness(user, sample, None, str(exc))
        raise VerificationError(f"witness {sample} does not run to the end: {exc}") from None
    if not cls.exact:
        return Witness(user, sample, simulated)
    again = _follow(model, space, problem.variables, sample, cls.index, None)
    if again.routing != cls.routing or (claimed is not None and simulated != claimed):
        raise VerificationError(
            f"witness {user if user is not None else sample} simulates to {simulated} cycles "
            f"but the proof says {claimed}"
            + ("" if again.routing == cls.routing else
               ": its run routes tokens differently from its class"))
    return Witness(user, sample, simulated)


def _not_proved(problem: _Problem, what: str) -> str:
    """Why a result over ``problem`` is not a proof ("" when it is)."""
    if problem.unfinished is not None:
        drawn = _sample(problem.space, problem.variables, problem.unfinished[0])
        return (f"an input of the space does not run to the end ({problem.unfinished[1]}): "
                f"{drawn} is the counterexample; no {what} holds for it")
    if not problem.complete:
        return (f"time budget ran out: {what} over the {len(problem.classes)} class(es) "
                f"found so far")
    if problem.gaps:
        shown = problem.gaps[:3]
        more = len(problem.gaps) - len(shown)
        return (f"not proved: {what} over the classes' samples' routings, but the encoding "
                f"cannot exclude other routings: " + "; ".join(shown)
                + (f"; and {more} more" if more else ""))
    return ""


# ---------------------------------------------------------------------- queries
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
                **_stopped(self.witness)}

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
    if space.ranged:
        return _bound_over_counts(model, space, which, timeout=timeout, progress=progress,
                                  max_classes=max_classes)
    began, budget = time.monotonic(), _Budget(timeout)
    problem = partition(model, space, max_classes=max_classes, budget=budget,
                        progress=progress)
    if problem.complete and not problem.classes:
        return BoundResult(which, None, None, 0, time.monotonic() - began, "empty",
                           "the space has no input (its constraints exclude every one)")
    if problem.unfinished is not None:
        return BoundResult(which, None, _unfinished(problem), len(problem.classes),
                           time.monotonic() - began, "does not finish",
                           _not_proved(problem, "bound"))
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
    witness = _witness(problem, cls, m, value)
    note = _not_proved(problem, f"the {which} {value} is the {which}")
    if timed_out:
        note = (f"time budget ran out: {value} is the {which} over the "
                f"{len(problem.classes)} class(es) found so far, not a proved bound")
    status = "proved" if problem.proved and not timed_out else "unknown"
    return BoundResult(which, value, witness, len(problem.classes),
                       time.monotonic() - began, status, note)


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
                **_stopped(self.counterexample)}

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
    if space.ranged:
        return _proof_over_counts(model, space, prop, interface=interface, timeout=timeout,
                                  progress=progress, max_classes=max_classes)
    began, budget = time.monotonic(), _Budget(timeout)
    problem = partition(model, space, max_classes=max_classes, budget=budget,
                        progress=progress)
    if problem.unfinished is not None:
        return ProofResult(prop, False, _unfinished(problem), len(problem.classes),
                           time.monotonic() - began, {"latency": None},
                           _not_proved(problem, "property"))
    names = {}
    if interface is not None:
        names["E"] = interface_term(interface, space, problem.variables)
    holds, unsure = True, ""
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
            if not cls.exact and not _breaks(term, cls.latency, witness.simulated, m):
                # The class's formula is not exact for this input: no counterexample.
                holds, unsure = None, f"class {cls.index}: a candidate counterexample " \
                                      f"simulates to {witness.simulated} and satisfies it"
                continue
            values = {"latency": witness.simulated}
            if "E" in names:
                values["E"] = _number(m.eval(names["E"], model_completion=True))
            return ProofResult(prop, False, witness, len(problem.classes),
                               time.monotonic() - began, values)
        if verdict == z3.unknown:
            holds = None
            break
        if progress:
            progress(f"class {cls.index + 1}/{len(problem.classes)}: holds")
    if holds and not problem.proved:
        holds = None
    note = "" if holds else (_not_proved(problem, "the property holds") or
                             f"time budget ran out: no counterexample in the "
                             f"{len(problem.classes)} class(es) examined")
    note = "; ".join(x for x in (note, unsure) if x)
    return ProofResult(prop, holds, None, len(problem.classes), time.monotonic() - began,
                       note=note)


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
