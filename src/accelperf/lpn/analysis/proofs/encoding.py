"""The encoding of one input class for Z3: following a run token by token (OSDI'24 §4.4).

The refinement loop over classes is :mod:`.refine`; witnesses are :mod:`.witness`; the
bound search and proofs that use them are :mod:`.verify`.

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

from dataclasses import dataclass, field

from ....errors import ModelError
from ...expr import constant as _constant, evaluate
from ...expr_backends import defined_when, to_z3
from ...net import Model
from ...semantics import DEFAULT_MAX_FIRINGS_PER_CYCLE, start_steps

DATA_STEPS = ("guard", "weight", "read", "inhibit")
"""R2's steps that decide on token data (semantics.START_RULE): a class keeps how each
came out. The others are times (the tokens' births, the slot, the interval), which the
start time encodes, or (b), which a run that started passed by its tokens alone."""

SAMPLE_MAX_COMMITS = 50_000
"""Commits after which a sample run is taken to be endless (the reference engine is slow;
verification is for inputs of a few hundred firings)."""


def simulate_sample(model: Model, marking: dict, commits: int = SAMPLE_MAX_COMMITS):
    """The fast engine's run of a sample (``marking``: {place id: tokens}), taken to be
    endless past ``commits`` commits; raises what :func:`~accelperf.lpn.sim.simulate` raises.

    A run that ends has committed every firing it started (each commits after its delay,
    and the run ends only when no event is left), so one that starts more than ``commits``
    firings in a cycle cannot end within ``commits``: stopping it there gives the same
    verdict as the engine's own million-firing limit, and in a twentieth of the time (a
    transition taking a weight of 0 fired endlessly at one instant took 7 s of a 3 s
    budget of `lpn verify` before the limit stopped it)."""
    from ...net import Marking
    from ...sim import simulate
    return simulate(model, Marking(model.name, {p: tuple(ts) for p, ts in marking.items()}),
                    max_commits=commits,
                    max_firings_per_cycle=min(commits, DEFAULT_MAX_FIRINGS_PER_CYCLE))


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


class OutOfTime(Exception):
    """The time budget ran out while a sample was being followed."""


def _before(a: _Firing, b: _Firing, gaps: list, why: str):
    """``a`` starts before ``b`` as in the sample: at the same instant only when R5's
    lowest-id-first rule would still start ``a`` first."""
    if a.transition <= b.transition:
        return a.start <= b.start
    if a.concrete_start == b.concrete_start:       # b became ready only after a started
        gaps.append(why)
        return a.start == b.start                  # (a gap: only keep the sample inside)
    return a.start < b.start


class Recorder:
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
            raise OutOfTime
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

        decided = [(step, decide(step.expr)) for step in start_steps(model, t)
                   if step.kind in DATA_STEPS]           # R2's data decisions, in its order
        reads = [(step.place, got) for step, got in decided if step.kind == "read"]
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
        """The private conditions of a firing of ``t`` after its last one, R2's steps in
        order: None when a place only ``t`` takes from ends with fewer tokens than its
        constant weight (it can never fire again), else [(term, value)]."""
        free, mine = self.state.free, self.started[t.id]
        terms = []
        for step in start_steps(self.model, t):
            if step.kind == "concurrency" and mine and len(mine) >= t.concurrency:   # (a)
                slot = self.committed[t.id][len(mine) - t.concurrency]
                terms.append((slot.due, slot.concrete_due))
            elif step.kind == "weight":                                              # (d)
                need = _constant(step.expr)
                if self.takers[step.place] != {t.id} or not need:
                    continue
                if len(free[step.place]) < need:
                    return None
                terms += [self.birth[id(k)] for k in list(free[step.place])[:need]]
            elif step.kind == "earliest" and mine and not (                          # (g)
                    t.initiation_interval.op == "const" and t.initiation_interval.args[0] == 0):
                terms.append((mine[-1].start + mine[-1].interval,
                              mine[-1].concrete_start + mine[-1].concrete_interval))
        return terms

    def _blocked_at_end(self, t, virtual):
        """R2 on the final marking, as the reference run checked it, step by step: the
        data decisions that kept ``t`` from starting (and from failing) must come out the
        same. (a) and (g) hold at the end (nothing in flight, no interval pending: R7)."""
        z3, state = self.z3, self.state
        sym, concrete = self._functions(state, [list(state.free[p]) for p in t.arg_places])
        for step in start_steps(self.model, t):
            kind, e, pid = step.kind, step.expr, step.place
            if kind == "tokens" and len(state.free[pid]) < step.need:
                return                              # R2(b): waits for tokens, no data
            if kind not in DATA_STEPS:
                continue
            value, term = concrete(e), sym(e)
            if kind == "guard":
                self._decide(term, value)
                blocked = not value
            else:
                self._decide(term >= 0, True)
                have = state.count(pid) if kind == "inhibit" else len(state.free[pid])
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
    from ...expr import counted_places
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


def unfollowed(model: Model) -> list[str]:
    """Transitions whose readiness at moments no sample records depends on data: their
    guard, weights or read and inhibitor counts read a token of a place other
    transitions also take, or their weights or read counts read a count."""
    from ...expr import tokens_needed
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
