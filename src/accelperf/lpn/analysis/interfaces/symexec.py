"""Symbolic execution of an LPN over an input space (OSDI'24 §4.1 and appendix A.2).

Tokens carry SymPy expressions instead of numbers: the symbols of the input space
(:mod:`.space`) and whatever the transitions' traced functions (:mod:`..expr`, through its
SymPy column) make of them. Whenever the path a run takes depends on those values — a
guard, a data-dependent weight, a route, whether enough tokens are present — the executor
asks the solver (:mod:`.solver`) whether each outcome is possible under the conditions
gathered so far; when both are, the path forks. Every finished path is a set of inputs
with one abstract trace: an input class.

How it follows A.2
------------------
* Transitions are visited in the order of the net's strongly connected components
  (upstream first), then by id; the first that can fire commits at once, without waiting
  for its delay. Only commit and token counts matter to a class, and for a net in which no
  two transitions compete for a token those do not depend on time, so the executor does
  not track time; only a race reads times, computed then (A.2 computes timestamps
  locally).
* Two transitions that could take the same token now (A.2's conflicting transitions)
  are committed one at a time, ordered by time: the start time of each is computed from
  the commit records (the commit times of the tokens it takes, its servers and its
  initiation interval; R5's lower id at the same instant), and the path forks where the
  order depends on the input. Times of a stream's bundled firings are not known, so a
  race after one is refused with a message naming both transitions. A rival that is not
  enabled yet in the symbolic state is not waited for (the eager order of A.2).

One-shot gates
--------------
Inhibitors depend on timing and are refused, except a gate that only the input fills
and one stage empties before anything else can fire (:func:`one_shot_stages`): the run
is that stage, then the rest of the net, in series, so the gate can be ignored here.

Fixed structures
----------------
A place of a space built from an input (:func:`.space.space_from_input`) gives each token
its input's values as constants for the properties that do not vary and symbols for the
ones that do, so the kinds that steer the net decide nothing and the sizes stay symbolic.

Streams
-------
A place whose token count is a range in the space holds one *bundle*: ``n_P`` tokens
described by their mean properties. A transition taking single tokens from a bundle fires
``n_P`` times in one *bundled* commit record, and what it produces is a bundle again; a
transition whose weight equals the whole bundle takes it at once (a synchronisation).
Output counts that depend on a token's value make a bundle too, so ``steps`` alignment
steps are one record, not one class per value of ``steps``. Places that start with tokens
of the model itself (capacity and credit places) are loops around the stream: a bundled
firing uses them and gives them back, as the interface's loop analysis (A.3) assumes.
"""

from __future__ import annotations

import sympy

from ....errors import ModelError
from ...expr import walk
from ...expr_backends import to_sympy
from ...graph import strong_components
from ...net import Model, Transition
from ...semantics import start_steps, stuck_places
from .one_shot import one_shot_refusal, one_shot_stages
from .solver import Solver
from .simplify import simplified
from .symrecords import (AnalysisError, Commit, ExplosionError, Path, StreamValueError,
                         SymToken, busiest, steered_by_values)
from ..space import (InputSpace, count_symbol, mean_symbol, space_constraints, symbol_ranges,
                    token_symbol)

DEFAULT_MAX_PATHS = 256
"""Paths (input classes) after which the exploration stops with an ExplosionError."""

SMALL_COUNT = 16
"""A data-dependent output count that can be at most this is split into one path per
value (its tokens may be consumed a few at a time); a larger one becomes a bundle."""

MAX_RECORDS = 200_000
"""Commit records on one path after which the exploration stops (a net that never ends)."""


class _Fork(Exception):
    """Raised inside a step when a condition can go both ways; the step is retried on
    both paths with the condition decided."""

    def __init__(self, condition):
        self.condition = condition


def _scc_order(model: Model) -> list[int]:
    """Transition ids ordered by strongly connected component, upstream first (A.2
    step 1), ties by id."""
    n = len(model.transitions)
    succ = [set() for _ in range(n)]
    consumers = model.consumers()
    for t in model.transitions:
        for arc in t.outputs + t.routes:
            succ[t.id].update(consumers[arc.place])
    comps = strong_components(dict(enumerate(succ)), range(n))
    comps.reverse()                      # Tarjan finds sinks first
    return [t for comp in comps for t in comp]


class Explorer:
    """Explore ``model`` over ``space`` (see the module docstring)."""

    def __init__(self, model: Model, space: InputSpace, *, max_paths: int = DEFAULT_MAX_PATHS,
                 solver_timeout_ms: int = 10_000, over=None):
        if isinstance(max_paths, bool) or not isinstance(max_paths, int) or max_paths < 1:
            raise ModelError(f"max_paths = {max_paths!r} is invalid: an integer >= 1")
        self.model, self.space, self.max_paths = model, space, max_paths
        self.over = over or (lambda: False)      # a caller's time budget, asked per firing
        self._check_supported()
        self.base = space_constraints(space)
        self.solver = Solver(self.base, solver_timeout_ms)
        self.order = _scc_order(model)
        self.loops = set(model.initial)          # places the model itself fills
        self.consumers = model.consumers()
        self.means = {mean_symbol(p.place, q) for p in space.places if p.stream
                      for q in p.properties}
        self.means |= {token_symbol(p.place, i, q) for p in space.places if p.probe
                       for i in range(p.probe) for q in p.properties}
        self.ranges = symbol_ranges(space)

    # ------------------------------------------------------------------ checks
    def _check_supported(self):
        # An inhibitor on a place that stays empty over this space (nothing produces into
        # it, no initial or input tokens: the JPEG decoder's header gate for an input
        # without a file) never blocks, so the analysis may ignore it; so may a one-shot
        # gate (see one_shot_stages), whose stage runs in series before everything else.
        model = self.model
        fillable = set(model.initial) | {a.place for t in model.transitions
                                         for a in t.outputs + t.routes}
        fillable |= {model.place_id(p.place) for p in self.space.places}
        self.one_shot = one_shot_stages(model, self.space)
        for t in model.transitions:
            for step in start_steps(model, t):
                p = step.place
                if step.kind in self.UNSUPPORTED and p in fillable and \
                        model.places[p].name not in self.one_shot.values():
                    raise AnalysisError(f"transition {t.name!r} has an inhibitor arc on "
                                        f"{model.places[p].name!r}, whose outcome depends on "
                                        f"timing: the class analysis takes only a one-shot "
                                        f"gate ({one_shot_refusal(model, self.space, p)})")
            for e in t.expressions():
                if any(node.op == "count" for node in walk(e)):
                    raise AnalysisError(f"transition {t.name!r} reads a place's token count, "
                                        f"which depends on timing: the class analysis does "
                                        f"not handle count() yet")

    # ------------------------------------------------------------------ the start
    def initial_path(self) -> Path:
        model = self.model
        queues = [[] for _ in model.places]
        for pid, tokens in model.initial.items():
            queues[pid].extend(SymToken(tuple(sympy.Integer(v) for v in tok)) for tok in tokens)
        for ps in self.space.places:
            pid = model.place_id(ps.place)
            props = model.places[pid].token_type.properties
            if ps.stream and not ps.probe:
                queues[pid].append(SymToken(tuple(mean_symbol(ps.place, p) for p in props),
                                            count_symbol(ps.place)))
            else:
                for i in range(ps.probe or ps.count[0]):
                    fixed = ps.fixed(i)          # a fixed structure's constant properties
                    queues[pid].append(SymToken(tuple(
                        sympy.Integer(fixed[p]) if p in fixed else token_symbol(ps.place, i, p)
                        for p in props)))
        return Path(queues)

    # ------------------------------------------------------------------ decisions
    def _decide(self, path: Path, cond) -> bool:
        cond = sympy.sympify(cond)
        if cond in (sympy.true, sympy.false):
            return bool(cond)
        yes = self.solver.possible(path.conditions + [cond])
        no = self.solver.possible(path.conditions + [sympy.Not(cond)])
        if yes and no:
            raise _Fork(cond)
        if not yes and not no:
            raise AnalysisError(f"the path conditions became contradictory at {cond}")
        return yes

    def _concrete(self, path: Path, value, upto: int):
        """``value`` as a whole number when it can only be one of 0..upto under the
        path's conditions; one path per possible value (a data-dependent count over
        concrete tokens decides the trace)."""
        value = sympy.sympify(value)
        if value.is_Integer:
            return value
        for k in range(upto + 1):
            if self._decide(path, sympy.Eq(value, k)):
                return sympy.Integer(k)
        return value                    # more than ``upto``: the caller's check fails

    def _drop_empty_head(self, path: Path, t: Transition, queue: list, weight) -> None:
        """A weight read from the head token: a bundle at the head that holds no token on
        this path (a packet's ``floor((B - 1)/4)`` full bursts when B <= 4) is not the
        head. The path forks where whether it is empty depends on the input, and only
        where the weight read from the entry after it differs (else either is right)."""
        while len(queue) > 1 and not (isinstance(queue[0].mult, int) or
                                      queue[0].mult.is_Integer):
            head = queue.pop(0)
            after = sympy.sympify(self._value(path, t, weight))
            queue.insert(0, head)
            if simplified(sympy.sympify(self._value(path, t, weight)) - after) == 0 or \
                    not self._decide(path, sympy.Eq(head.mult, 0)):
                return
            queue.pop(0)

    @staticmethod
    def _available(queue):
        return sum((tok.mult for tok in queue), sympy.Integer(0))

    def _value(self, path, t: Transition, expr):
        def symbol(arg, name, tok=0):
            pid = t.arg_places[arg]
            props = self.model.places[pid].token_type.properties
            return self._token(path.queues[pid], tok).values[props.index(name)]
        return to_sympy(expr, symbol)

    @staticmethod
    def _token(queue, k: int) -> SymToken:
        for tok in queue:
            if not isinstance(tok.mult, int) and not tok.mult.is_Integer:
                return tok                      # a bundle: its tokens are alike
            if k < int(tok.mult):
                return tok
            k -= int(tok.mult)
        raise AnalysisError("internal: token read beyond the tokens present")

    def _steers(self, what: str, t: Transition, value):
        """``value``, which steers the net: a stream's token values may not steer it,
        unless the value is the same for every token the property ranges allow (a link
        whose packets per transaction, ``ceil(bytes/P)``, is 1 for every block the space
        allows); then that constant."""
        if self.means and sympy.sympify(value).free_symbols & self.means:
            same = self.solver.constant(value, self.ranges)
            if same is not None:
                return same
            raise steered_by_values(what, t.name, value)
        return value

    # ------------------------------------------------------------------ one step
    # R2's steps (semantics.start_steps) on a path: each says whether ``t`` can go on and
    # keeps what the firing takes in ``plan``; a decision both ways possible forks (_Fork).
    def _tokens_step(self, path, t, step, plan) -> bool:                     # (b)
        return self._decide(path, self._available(path.queues[step.place]) >= step.need)

    def _guard_step(self, path, t, step, plan) -> bool:                      # (c)
        return self._decide(path, self._steers("guard", t, self._value(path, t, step.expr)))

    def _weight_step(self, path, t, step, plan) -> bool:                     # (d)
        need = sympy.sympify(self._steers(f"weight on {self.model.places[step.place].name!r}",
                                          t, self._value(path, t, step.expr)))
        have = self._available(path.queues[step.place])
        if not self._decide(path, have >= need):
            return False
        if have.is_Integer:
            need = self._concrete(path, need, int(have))
        plan["weights"].append(need)
        return True

    def _read_step(self, path, t, step, plan) -> bool:       # (e): only holds a firing back
        need = sympy.sympify(self._steers(f"read arc on {self.model.places[step.place].name!r}",
                                          t, self._value(path, t, step.expr)))
        return self._decide(path, self._available(path.queues[step.place]) >= need)

    def _time_step(self, path, t, step, plan) -> bool:               # R3's delay, interval
        plan[step.kind] = sympy.sympify(self._value(path, t, step.expr))
        return True

    UNSUPPORTED = {"inhibit"}
    """R2's steps refused where they could block (_check_supported): one that cannot
    never holds a firing back here."""
    STEPS = {"tokens": _tokens_step, "guard": _guard_step, "weight": _weight_step,
             "read": _read_step, "delay": _time_step, "interval": _time_step,
             # time is not tracked: a race reads servers and interval (_start_time)
             **dict.fromkeys(("concurrency", "earliest", *UNSUPPORTED), lambda *_: True)}

    def _plan(self, path: Path, t: Transition):
        """None if ``t`` cannot fire now, else what its firing takes and gives."""
        q = path.queues
        for pid, w in zip(t.inputs, t.weights):
            if w.op != "const":              # a weight read from the head token
                self._drop_empty_head(path, t, q[pid], w)
        plan = {"weights": []}
        for step in start_steps(self.model, t):
            if not self.STEPS[step.kind](self, path, t, step, plan):
                return None
        weights = plan["weights"]
        # Which input, if any, is a stream taken token by token (a bundled firing)?
        bundled = None
        for i, (pid, need) in enumerate(zip(t.inputs, weights)):
            head = q[pid][0] if q[pid] else None
            if head is None or isinstance(head.mult, int) or head.mult.is_Integer:
                continue
            if need == 0:
                continue
            if not need.is_Integer and \
                    self._decide(path, sympy.Eq(need, self._available(q[pid]))):
                continue                          # takes the whole stream at once
            if not need.is_Integer and self._prefix(path, q[pid], need) is not None:
                continue                          # takes the first entries, whole
            if need != 1 and not self._whole_groups(path, q[pid][0].mult, need):
                raise AnalysisError(f"transition {t.name!r} takes {need} tokens at a time "
                                    f"from the stream in {self.model.places[pid].name!r}, "
                                    f"which does not hold a whole number of such groups: "
                                    f"one at a time, k at a time from a bundle of k·m "
                                    f"tokens, or all of it, is supported")
            if bundled is not None:
                raise AnalysisError(f"transition {t.name!r} pairs tokens of two streams")
            takers = [self.model.transitions[u].name for u in self.consumers[pid]]
            if len(takers) > 1:
                # Which of them takes the k-th token is decided token by token (turns,
                # guards): a stream cannot say it; per-token symbols can.
                raise AnalysisError(
                    f"the stream in {self.model.places[pid].name!r} is shared by "
                    f"{', '.join(takers)}: give {self.model.places[pid].name!r}'s source a "
                    f"fixed token count in the space (one symbol per token)")
            bundled = i
        if bundled is not None:
            others = [self.model.places[pid].name for j, (pid, need) in
                      enumerate(zip(t.inputs, weights))
                      if j != bundled and need != 0 and pid not in self.loops]
            if others:
                raise AnalysisError(f"transition {t.name!r} pairs each token of a stream "
                                    f"with tokens of {', '.join(others)}: give the stream a "
                                    f"fixed count in the space")
        arcs = list(t.outputs)
        if t.routes:
            chosen = None
            for r in t.routes:
                cond = self._steers("route condition", t, self._value(path, t, r.condition))
                if self._decide(path, cond):
                    chosen = r
                    break
            if chosen is None:
                raise AnalysisError(f"transition {t.name!r}: no route's condition holds")
            arcs.append(chosen)
        outs = []
        for arc in arcs:
            n = sympy.sympify(self._steers(f"count into {self.model.places[arc.place].name!r}",
                                           t, self._value(path, t, arc.count)))
            if arc.copy_from is not None and weights[arc.copy_from].is_Integer:
                n = self._concrete(path, n, int(weights[arc.copy_from]))
            elif not n.is_Integer and not self.solver.possible(
                    path.conditions + [n > SMALL_COUNT]):
                n = self._concrete(path, n, SMALL_COUNT)
            props = None if arc.props is None else \
                tuple(sympy.sympify(self._value(path, t, e)) for e in arc.props)
            outs.append((arc, n, props))
        return weights, bundled, outs, plan["delay"], plan["interval"]

    def _whole_groups(self, path: Path, mult, k) -> bool:
        """Whether a bundle of ``mult`` tokens splits into firings of ``k`` tokens each
        (a DMA taking bursts of 4 blocks from a bundle of 4·m blocks) under the path's
        conditions: ``k`` a whole number > 1 and ``mult mod k`` provably 0."""
        k = sympy.sympify(k)
        if not k.is_Integer or k < 1:
            return False
        rest = sympy.Mod(mult, k)
        return rest == 0 or not self.solver.possible(path.conditions + [sympy.Ne(rest, 0)])

    PREFIX_ENTRIES = 4
    """Leading entries of a queue :meth:`_prefix` tries to match a symbolic weight with."""

    def _prefix(self, path: Path, queue: list, need):
        """How many leading entries of ``queue`` hold exactly ``need`` tokens whatever the
        input (proved under the path's conditions), or None. A transaction split into
        ``floor((bytes - 1)/P)`` full packets and a last one is reassembled by a weight of
        ``ceil(bytes/P)``: the two entries its own packets make, not a stream."""
        total = sympy.Integer(0)
        for k, tok in enumerate(queue[:self.PREFIX_ENTRIES], 1):
            total += tok.mult
            if simplified(total - need) == 0 or not self.solver.possible(
                    path.conditions + [sympy.Ne(total, need)]):
                return k
        return None

    def _take(self, queue: list, n, path: Path | None = None) -> list:
        """Remove ``n`` tokens (an int, the leading entries that hold exactly ``n``, or
        the whole queue) from the head of ``queue``."""
        if not (isinstance(n, int) or n.is_Integer):
            k = None if path is None else self._prefix(path, queue, n)
            taken = list(queue[:k])
            del queue[:k]
            return taken
        n, taken = int(n), []
        while n:
            tok = queue[0]
            m = tok.mult
            if not isinstance(m, int) and not m.is_Integer:
                raise AnalysisError("internal: a concrete take reached a stream")
            m = int(m)
            if m <= n:
                taken.append(queue.pop(0))
                n -= m
            else:
                taken.append(SymToken(tok.values, n, tok.source))
                queue[0] = SymToken(tok.values, m - n, tok.source)
                n = 0
        return taken

    def _fire(self, path: Path, t: Transition, plan) -> None:
        weights, bundled, outs, delay, interval = plan
        q, index = path.queues, len(path.commits)
        times = sympy.Integer(1)
        waited = set()
        for pid, n in t.reads:           # the first n tokens present are the ones it needs
            need = sympy.sympify(self._value(path, t, n))
            if need.is_Integer:
                waited.update(self._sources(q[pid], int(need)))
        taken_per_arc, sources = [], set()
        for i, (pid, need) in enumerate(zip(t.inputs, weights)):
            if bundled is not None and i == bundled:
                taken = [q[pid].pop(0)]
                times = simplified(taken[0].mult / need)   # k at a time: m firings
            elif bundled is not None and pid in self.loops:
                taken = [SymToken(tok.values, tok.mult, tok.source)
                         for tok in q[pid][:1]]        # used and given back
            else:
                taken = self._take(q[pid], need, path)
            sources.update(tok.source for tok in taken)
            taken_per_arc.append(taken)
        produced = []
        for arc, n, props in outs:
            name = self.model.places[arc.place].name
            if bundled is not None and arc.place in self.loops:
                produced.append((name, n))           # the loop's token, given back
                continue
            total = n * times if bundled is not None else n
            if arc.copy_from is not None:
                source = taken_per_arc[arc.copy_from]
                if bundled is not None and arc.copy_from == bundled:
                    new = [SymToken(source[0].values, total, index)]
                else:
                    new = self._copy(t, source, n, index)
            elif props is not None:
                new = [SymToken(props, total, index)]
            else:
                new = [SymToken((), total, index)]
            q[arc.place].extend(tok for tok in new if tok.mult != 0)
            produced.append((name, n))
        consumed = tuple(1 if (bundled is not None and (i == bundled or
                                                        t.inputs[i] in self.loops))
                         and w != 0 else w for i, w in enumerate(weights))
        path.commits.append(Commit(t.name, t.id, consumed, tuple(produced), delay, interval,
                                   times, tuple(sorted(sources)), bundled is not None,
                                   tuple(sorted(waited))))

    @staticmethod
    def _sources(queue, n: int) -> set:
        """The records that made the first ``n`` tokens of ``queue`` (fewer if a bundle
        comes first: its tokens' times are not known)."""
        out = set()
        for tok in queue:
            if n <= 0 or not (isinstance(tok.mult, int) or tok.mult.is_Integer):
                break
            out.add(tok.source)
            n -= int(tok.mult)
        return out

    def _copy(self, t, source, n, index):
        if isinstance(n, int) or n.is_Integer:
            flat = []
            for tok in source:
                m = tok.mult
                if not isinstance(m, int) and not m.is_Integer:
                    return [SymToken(tok.values, n, index)]
                flat += [tok.values] * int(m)
            return [SymToken(v, 1, index) for v in flat[:int(n)]]
        if len(source) == 1:
            return [SymToken(source[0].values, n, index)]
        raise AnalysisError(f"transition {t.name!r} copies {n} of several distinct tokens")

    # ------------------------------------------------------------------ the search
    def run_path(self, path: Path, pending: list) -> Path:
        """Run ``path`` to its end; paths forked off are appended to ``pending``."""
        transitions = self.model.transitions
        while True:
            if self.over():
                raise ExplosionError(f"the time budget ran out exploring {self.model.name!r}")
            if len(path.commits) > MAX_RECORDS:
                raise AnalysisError(f"a path passed {MAX_RECORDS} commit records without "
                                    f"ending, mostly {busiest(path.commits)}: does the net "
                                    f"stop on its own? (`accelperf lpn check` finds a loop "
                                    f"that never does)")
            fired = False
            for tid in self.order:
                t = transitions[tid]
                while True:
                    try:
                        plan = self._plan(path, t)
                        if plan is not None:
                            winner, plan = self._race(path, t, plan)
                        break
                    except _Fork as fork:          # both ways possible: split the path
                        other = path.copy()
                        other.conditions.append(sympy.Not(fork.condition))
                        pending.append(other)
                        path.conditions.append(fork.condition)
                if plan is None:
                    continue
                self._fire(path, winner, plan)
                fired = True
                break
            if not fired:
                path.stuck = self._stuck(path)
                return path

    def _race(self, path: Path, t: Transition, plan):
        """A.2 step 3, conflicting transitions: when another transition could take the
        token at the head of one of ``t``'s input places now, the one that starts first
        takes it (R5: at the same instant, the lower id). Returns (winner, its plan);
        where the start times' order depends on the input, the path forks."""
        best = (t, plan, None)
        for pid in t.inputs[:t.user_inputs]:
            if pid in self.loops:
                continue
            for other in self.consumers[pid]:
                u = self.model.transitions[other]
                if u.id in (t.id, best[0].id):
                    continue
                rival = self._plan(path.copy(), u)
                if rival is None:
                    continue
                if best[2] is None:
                    best = (t, plan, self._start_time(path, t, plan, pid, u))
                start = self._start_time(path, u, rival, pid, best[0])
                # u wins if it starts earlier, or at the same instant with a lower id
                earlier = start <= best[2] if u.id < best[0].id else start < best[2]
                if self._decide(path, earlier):
                    best = (u, rival, start)
        return best[0], best[1]

    def _start_time(self, path: Path, t: Transition, plan, pid: int, rival: Transition):
        """When ``t``'s firing by ``plan`` would start, from the commit records alone
        (A.2 computes timestamps locally): the last of the tokens it takes (their records'
        commit times), its server (one: its last firing's commit) and its initiation
        interval. Stream records stand for many firings at unknown times, and which of k > 1
        busy servers frees first is not tracked (nor what follows it): such a race is refused."""
        trial = path.copy()
        self._fire(trial, t, plan)
        records = trial.commits
        start, last, done = [], {}, {}
        for i, rec in enumerate(records):
            ready = [done[s] if s >= 0 else sympy.Integer(0) for s in rec.sources]
            seen = last.setdefault(rec.tid, [])
            k = self.model.transitions[rec.tid].concurrency
            if k == 1 and seen:              # one server: free when its last firing commits
                ready.append(done[seen[-1]])
            elif k is not None and len(seen) >= k:
                ready.append(None)           # k servers, all used once: which frees first
            if seen:                         # is an order statistic this does not track
                before = start[seen[-1]]         # None: that firing's start is unknown too
                ready.append(None if before is None else before + records[seen[-1]].interval)
            unknown = rec.bundled or any(r is None for r in ready)
            start.append(None if unknown else sympy.Max(*ready) if ready else sympy.Integer(0))
            done[i] = None if start[i] is None else start[i] + rec.delay
            seen.append(i)
        if start[-1] is None:
            raise AnalysisError(
                f"transitions {t.name!r} and {rival.name!r} race for the token at the head of "
                f"{self.model.places[pid].name!r} at a time the analysis does not know (it "
                f"follows a stream's bundled firings or a unit of several servers; A.2's "
                f"conflicting transitions): give the stream a fixed count in the space, the "
                f"unit one server, or the transitions exclusive guards")
        return start[-1]

    def _stuck(self, path: Path) -> tuple:
        """R7 (semantics.stuck_places) on the symbolic end state: places holding work."""
        counts = [self._available(queue) if queue else 0 for queue in path.queues]
        initial = {pid: len(tokens) for pid, tokens in self.model.initial.items()}
        return tuple(stuck_places(self.model, counts, initial,
                                  lambda final, start: simplified(final - start) != 0))

    def explore(self) -> list[Path]:
        """Every path, depth first; ExplosionError past ``max_paths``."""
        pending, done = [self.initial_path()], []
        started = 1
        while pending:
            path = pending.pop()
            before = len(pending)
            finished = self.run_path(path, pending)
            started += len(pending) - before
            if started > self.max_paths:
                raise ExplosionError(
                    f"the input space splits into more than max_paths = {self.max_paths} "
                    f"paths (input classes) for model {self.model.name!r}: narrow the space "
                    f"(fewer tokens with a fixed count, tighter ranges, or streams) or raise "
                    f"the limit")
            done.append(finished)
        return done


__all__ = ["Explorer", "Path", "Commit", "SymToken", "AnalysisError", "StreamValueError",
           "ExplosionError", "DEFAULT_MAX_PATHS"]
