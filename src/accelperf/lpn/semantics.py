"""The firing rules of a Latency Petri Net, stated once, for clarity rather than speed.

This module *is* accelperf's definition of how an LPN runs (OSDI'24 §3.2, extended with the
constructs the authors' released models use). The fast engine (:mod:`.sim` with the code of
:mod:`.codegen`) is tested against it trace for trace, and every analysis reads its rules
from here: the deadlock diagnosis calls :func:`check`, and the end-of-run verdict is
:func:`stuck_places`. R2 is data, :data:`START_RULE` and :func:`start_steps`: :func:`check`
walks its steps, and so do the code generators (:mod:`.codegen`, :mod:`.csource`), the
symbolic explorer and the Z3 encoding, each with its own treatment of a step.

State
-----
A clock ``now``; for every place a FIFO of *free* tokens (property values and the time the
token was produced) and a number of *locked* tokens (taken by a firing in flight, still in
the place until it commits); the firings in flight; for every transition its firings in
flight and the earliest time it may start again.

Rules
-----
R1 **What functions see.** A transition's functions read its *argument places*: its input
   places, then its read places. ``x.p`` is property ``p`` of the first free token of the
   place bound to ``x``, ``x[i].p`` of its i-th free token; ``count(place)`` is the number of
   tokens, free and locked, in any place. Every function of one firing is evaluated on the
   state at the moment it starts.
R2 **Can start.** A transition can start at ``now`` when, checked in this order,
   (a) fewer than ``concurrency`` of its firings are in flight;
   (b) each argument place holds the free tokens its functions read;
   (c) its guard holds;
   (d) each input place holds at least its weight in free tokens (a weight may be 0);
   (e) each read place holds at least ``n`` free tokens (read arcs);
   (f) each inhibitor place holds fewer than ``n`` tokens, free and locked;
   (g) ``now`` is at least its earliest next start (the initiation interval).
   (The delay and the interval of R3 are worked out between (f) and (g).)
   A weight, read or inhibitor count, delay, interval or output count that evaluates below
   0, or an expression with no integer value, stops the run with an error.
R3 **Start.** The firing locks the first ``w`` free tokens of each input place (read places
   are not touched), works out what it will produce (each output arc's count, and the
   tokens' properties or copies of the locked tokens; of the routes, the first whose
   condition holds) and is due ``delay`` cycles later. The transition may start again no
   earlier than ``now + interval``.
R4 **Commit.** The locked tokens leave their places; the produced tokens are appended to
   theirs, stamped ``now``.
R5 **One instant.** At time ``t``: commit every firing due at ``t``, by transition id and,
   within one transition, in start order; then start firings one at a time, always of the
   lowest-id transition that can start, until none can (so a lower id wins a contested
   token); if zero-delay firings are now due at ``t``, repeat.
R6 **Time.** The clock moves to the earliest commit time of a firing in flight, or the
   earliest next start of a transition blocked only by its interval (R2 a–f hold).
R7 **End.** The run ends when neither exists. The latency is the time of the last commit
   that put a token into the done place. Tokens left over are stuck work, a *deadlock*,
   unless they sit in the done place, in a sink (no transition takes from it), in a place
   marked ``resource``, or in a place holding exactly as many tokens as it started with
   (credits, locks and capacity places back at rest).
R8 **Limits.** The clock never passes ``max_time`` (a run whose next event is later stops);
   a run stops after ``max_commits`` commits; more than ``max_firings_per_cycle`` firings
   starting without the clock moving is a zero-delay loop (or a transition that takes no
   token and has no limit on its concurrency), and stops too.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

from .expr import EvaluationError, Expr, evaluate
from .net import Model, Transition

DEFAULT_MAX_COMMITS = 100_000_000
"""Commits after which a run without an explicit ``max_commits`` stops (R8)."""

DEFAULT_MAX_FIRINGS_PER_CYCLE = 1_000_000
"""Firings started at one clock value after which a run is taken to be a zero-delay loop
(R8)."""


class FiringError(Exception):
    """A firing that cannot go on (R2's errors); the engines name the transition and cycle."""


# ---------------------------------------------------------------------- messages
# Both engines raise these exact texts, so their reports can be compared.
def below_zero(what: str, value: int) -> str:
    return f"{what} = {value}: must be >= 0"


def too_few_to_copy(n: int, place: str, taken: int, source: str) -> str:
    return f"copies {n} tokens into {place!r} but took only {taken} from {source!r}"


NO_ROUTE = "none of its routes' conditions holds for its tokens"


# ---------------------------------------------------------------------- the state
@dataclass
class Token:
    values: tuple
    born: int


@dataclass
class InFlight:
    transition: int
    start: int
    due: int
    seq: int
    locked: list            # per input arc: the tokens it took
    produce: list           # [(place id, [property tuples])]


@dataclass(frozen=True)
class Firing:
    """One firing as a trace records it."""

    transition: str
    start: int
    end: int


@dataclass
class State:
    """Everything a run is at one moment (see the module docstring)."""

    now: int
    free: list                      # per place: deque of Token
    locked: list                    # per place: number of locked tokens
    in_flight: list = field(default_factory=list)
    running: list = field(default_factory=list)      # per transition: firings in flight
    next_start: list = field(default_factory=list)   # per transition

    @classmethod
    def initial(cls, model: Model, marking: dict) -> "State":
        free = [deque() for _ in model.places]
        for pid, tokens in marking.items():
            free[pid].extend(Token(tuple(v), 0) for v in tokens)
        n = len(model.transitions)
        return cls(0, free, [0] * len(model.places), [], [0] * n, [0] * n)

    # The view R1 gives functions, shared with the fast engine's diagnosis.
    def free_values(self, pid: int) -> list:
        return [t.values for t in self.free[pid]]

    def count(self, pid: int) -> int:
        return len(self.free[pid]) + self.locked[pid]


class MarkingView:
    """R1's view over plain queues of property tuples (the fast engine's state)."""

    def __init__(self, queues, locked):
        self.queues, self.locked = queues, locked

    def free_values(self, pid: int):
        return self.queues[pid]

    def count(self, pid: int) -> int:
        return len(self.queues[pid]) + self.locked[pid]


# ---------------------------------------------------------------------- R1, R2
START_RULE = ("concurrency", "tokens", "guard", "weight", "read", "inhibit", "delay",
              "interval", "earliest")
"""R2's steps in the order every engine takes them: (a) concurrency, (b) the tokens the
functions read, (c) the guard, (d) input weights, (e) read arcs, (f) inhibitor arcs, then
R3's delay and interval (checked >= 0), then (g) the earliest next start. The reference
:func:`check`, the code generators (:mod:`.codegen`, :mod:`.csource`), the symbolic
explorer and the Z3 encoding all walk :func:`start_steps`, which follows this tuple."""


@dataclass(frozen=True, eq=False)      # its expressions compare by building a node
class Step:
    """One check of R2 for one transition (see :data:`START_RULE`)."""

    kind: str                   # one of START_RULE
    index: int = 0              # which one of its kind: input, read or inhibitor arc; the
    place: int | None = None    # argument for "tokens"; the place the step looks at
    expr: Expr | None = None    # what it evaluates (a weight, count, guard, delay...)
    what: str = ""              # how an error names it ("weight on input 'q'")
    need: int = 0               # "tokens": the free tokens the functions read there
    local: str = ""             # the generated code's variable for its value


def start_steps(model: Model, t: Transition) -> tuple[Step, ...]:
    """R2 for ``t`` as its concrete steps, in :data:`START_RULE`'s order (a step with
    nothing to check for ``t`` is left out: no guard, no concurrency limit)."""
    cached = t.compiled.get("steps")
    if cached is not None and cached[0] is START_RULE:
        return cached[1]
    name = lambda pid: model.places[pid].name           # noqa: E731
    by_kind = {
        "concurrency": [Step("concurrency")] if t.concurrency is not None else [],
        "tokens": [Step("tokens", arg, t.arg_places[arg], need=k) for arg, k in t.needs],
        "guard": [Step("guard", expr=t.guard, local="g")] if t.guard is not None else [],
        "weight": [Step("weight", k, pid, e, f"weight on input {name(pid)!r}", local=f"w{k}")
                   for k, (pid, e) in enumerate(zip(t.inputs, t.weights))],
        "read": [Step("read", k, pid, e, f"read arc on {name(pid)!r}", local=f"r{k}")
                 for k, (pid, e) in enumerate(t.reads)],
        "inhibit": [Step("inhibit", k, pid, e, f"inhibitor arc on {name(pid)!r}",
                         local=f"i{k}") for k, (pid, e) in enumerate(t.inhibits)],
        "delay": [Step("delay", expr=t.delay, what="delay", local="d")],
        "interval": [Step("interval", expr=t.initiation_interval, what="initiation interval",
                          local="ii")],
        "earliest": [Step("earliest")]}
    steps = tuple(step for kind in START_RULE for step in by_kind[kind])
    t.compiled["steps"] = (START_RULE, steps)
    return steps


@dataclass(frozen=True)
class Ready:
    """R2 holds: what the firing would take and how long it would run."""

    weights: tuple
    delay: int
    interval: int


@dataclass(frozen=True)
class Blocked:
    """R2 fails: why, in words (rule (g) blocks with ``until`` set)."""

    reason: str
    until: int | None = None


def _evaluator(model: Model, t: Transition, view):
    args = [view.free_values(p) for p in t.arg_places]
    names = {p.name: i for i, p in enumerate(model.places)}
    return lambda e: evaluate(e, lambda arg, tok: args[arg][tok],
                              lambda place: view.count(names[place]))


def _at_least_zero(step: Step, value: int) -> int:
    if value < 0:
        raise FiringError(below_zero(step.what, value))
    return value


def check(model: Model, t: Transition, view, running: int, next_start: int,
          now: int) -> Ready | Blocked:
    """Rule R2 for transition ``t`` on ``view`` (free_values(pid), count(pid)): its
    steps (:func:`start_steps`) one after the other; the first that fails blocks."""
    places = model.places
    value, weights, times = None, [], {}
    try:
        for step in start_steps(model, t):
            kind, pid = step.kind, step.place
            if value is None and step.expr is not None:
                value = _evaluator(model, t, view)        # R1: on the state as it is
            if kind == "concurrency":                                       # (a)
                if running >= t.concurrency:
                    return Blocked(f"{running} firing(s) in flight, its concurrency")
            elif kind == "tokens":                                          # (b)
                have, k = len(view.free_values(pid)), step.need
                if have < k:
                    return Blocked(f"waits for a token in {places[pid].name}" if k == 1 else
                                   f"reads token {k - 1} of {places[pid].name}, which has "
                                   f"{have}")
            elif kind == "guard":                                           # (c)
                if not value(step.expr):
                    names = ", ".join(places[p].name for p in t.arg_places)
                    return Blocked(f"guard is false for the tokens of {names}")
            elif kind == "weight":                                          # (d)
                need = _at_least_zero(step, value(step.expr))
                have = len(view.free_values(pid))
                if have < need:
                    noun = "token" if need == 1 else "tokens"
                    what = f"capacity {noun} (the place it fills is full)" \
                        if places[pid].capacity_of else noun
                    return Blocked(f"needs {need} {what} in {places[pid].name}, has {have}")
                weights.append(need)
            elif kind == "read":                                            # (e)
                need = _at_least_zero(step, value(step.expr))
                have = len(view.free_values(pid))
                if have < need:
                    return Blocked(f"reads {need} {'token' if need == 1 else 'tokens'} in "
                                   f"{places[pid].name}, has {have}")
            elif kind == "inhibit":                                         # (f)
                limit = _at_least_zero(step, value(step.expr))
                if view.count(pid) >= limit:
                    return Blocked(f"inhibited: {places[pid].name} holds {view.count(pid)} "
                                   f"tokens, needs fewer than {limit}")
            elif kind in ("delay", "interval"):                             # R3's times
                times[kind] = _at_least_zero(step, value(step.expr))
            elif kind == "earliest" and now < next_start:                   # (g)
                return Blocked(f"initiation interval: may start again at cycle "
                               f"{in_cycles(next_start, model.ticks_per_cycle)}",
                               next_start)
    except EvaluationError as exc:
        raise FiringError(str(exc)) from None
    return Ready(tuple(weights), times["delay"], times["interval"])


# ---------------------------------------------------------------------- R3, R4
def produced_tokens(model: Model, t: Transition, view, taken: list) -> list:
    """R3: [(place id, [property tuples])] the firing will append when it commits;
    ``view`` is the state at the start, ``taken`` the locked tokens' values per input."""
    value = _evaluator(model, t, view)
    out = []
    try:
        arcs = list(t.outputs)
        if t.routes:
            chosen = next((r for r in t.routes if value(r.condition)), None)
            if chosen is None:
                raise FiringError(NO_ROUTE)
            arcs.append(chosen)
        for arc in arcs:
            n = value(arc.count)
            name = model.places[arc.place].name
            if n < 0:
                raise FiringError(below_zero(f"count into {name!r}", n))
            if arc.copy_from is not None:
                source = taken[arc.copy_from]
                if n > len(source):
                    raise FiringError(too_few_to_copy(
                        n, name, len(source), model.places[t.inputs[arc.copy_from]].name))
                tokens = list(source[:n])
            elif arc.props is None:
                tokens = [()] * n
            else:
                tokens = [tuple(value(e) for e in arc.props)] * n
            out.append((arc.place, tokens))
    except EvaluationError as exc:
        raise FiringError(str(exc)) from None
    return out


def start(model: Model, state: State, t: Transition, ready: Ready, seq: int) -> InFlight:
    """R3 on ``state``."""
    taken_values = [[tok.values for tok in list(state.free[pid])[:w]]
                    for pid, w in zip(t.inputs, ready.weights)]
    produce = produced_tokens(model, t, state, taken_values)
    locked = []
    for pid, w in zip(t.inputs, ready.weights):
        locked.append([state.free[pid].popleft() for _ in range(w)])
        state.locked[pid] += w
    state.running[t.id] += 1
    state.next_start[t.id] = state.now + ready.interval
    firing = InFlight(t.id, state.now, state.now + ready.delay, seq, locked, produce)
    state.in_flight.append(firing)
    return firing


def commit(state: State, firing: InFlight, inputs: tuple) -> None:
    """R4 on ``state``."""
    for pid, tokens in zip(inputs, firing.locked):
        state.locked[pid] -= len(tokens)
    for pid, tokens in firing.produce:
        state.free[pid].extend(Token(v, state.now) for v in tokens)
    state.running[firing.transition] -= 1
    state.in_flight.remove(firing)


# ---------------------------------------------------------------------- R7
def stuck_places(model: Model, final_counts: list, initial_counts: dict,
                 changed=lambda final, initial: final != initial) -> list[str]:
    """R7: the places whose leftover tokens are stuck work. ``final_counts[i]`` is a place's
    count at the end (0 or falsy when empty); ``changed(final, initial)`` whether it holds
    other than it started with (the symbolic explorer compares expressions)."""
    sinks = model.sinks()
    return [p.name for i, p in enumerate(model.places)
            if final_counts[i] and i != model.done and i not in sinks and not p.resource
            and changed(final_counts[i], initial_counts.get(i, 0))]


# ---------------------------------------------------------------------- a whole run
@dataclass(frozen=True)
class Run:
    """What the reference run saw: the trace in commit order and how it ended."""

    firings: tuple
    latency: int | None             # R7
    end_time: int                   # time of the last commit (0 if none)
    commits: dict                   # per transition name
    final_marking: dict             # per place name: tokens (free + locked)
    done_tokens: int
    stopped: str | None             # None, "deadlock", "max_time", "max_commits",
    message: str = ""               # "stalled", "error"


def run(model: Model, marking: dict, *, max_time: float = math.inf,
        max_commits: int = DEFAULT_MAX_COMMITS,
        max_firings_per_cycle: int = DEFAULT_MAX_FIRINGS_PER_CYCLE, observe=None) -> Run:
    """Run ``model`` from ``marking`` ({place id: [property tuples]}) by rules R1–R8.

    ``observe(event, state, firing)``, when given, is called with "begin" (the initial
    state, firing None), "start" (after R3 locked the firing's tokens) and "commit" (after
    R4 appended its tokens): the verifier follows every token through a run this way."""
    state = State.initial(model, marking)
    if observe is not None:
        observe("begin", state, None)
    initial_counts = {pid: len(ts) for pid, ts in marking.items()}
    tpc = model.ticks_per_cycle                 # time runs in ticks, is told in cycles
    cyc = lambda ticks: in_cycles(ticks, tpc)
    firings, commits = [], [0] * len(model.transitions)
    latency, done_tokens, last_commit, seq = None, 0, 0, 0
    at_this_cycle = 0

    def finish(stopped=None, message=""):
        counts = [state.count(i) for i in range(len(model.places))]
        return Run(tuple(Firing(f.transition, cyc(f.start), cyc(f.end)) for f in firings),
                   cyc(latency), cyc(last_commit),
                   {t.name: c for t, c in zip(model.transitions, commits)},
                   {p.name: c for p, c in zip(model.places, counts)}, done_tokens, stopped,
                   message)

    while True:
        # R5: commit what is due, then start, until nothing more happens at this cycle.
        while True:
            due = sorted((f for f in state.in_flight if f.due == state.now),
                         key=lambda f: (f.transition, f.seq))
            for f in due:
                commit(state, f, model.transitions[f.transition].inputs)
                if observe is not None:
                    observe("commit", state, f)
                t = model.transitions[f.transition]
                commits[t.id] += 1
                firings.append(Firing(t.name, f.start, state.now))
                last_commit = state.now
                into_done = sum(len(v) for p, v in f.produce if p == model.done)
                if into_done:
                    latency, done_tokens = state.now, done_tokens + into_done
                if sum(commits) > max_commits:
                    return finish("max_commits", past_max_commits(
                        model, cyc(state.now), sum(commits), max_commits, cyc(latency),
                        done_tokens, commits))
            try:
                while True:
                    ready = _lowest_ready(model, state)
                    if ready is None:
                        break
                    t, r = ready
                    seq += 1
                    try:
                        firing = start(model, state, t, r, seq)
                    except FiringError as exc:
                        raise FiringError(firing_failed(t, cyc(state.now), exc)) from None
                    if observe is not None:
                        observe("start", state, firing)
                    at_this_cycle += 1
                    if at_this_cycle > max_firings_per_cycle:
                        return finish("stalled", stalled(cyc(state.now),
                                                          max_firings_per_cycle))
            except FiringError as exc:
                return finish("error", str(exc))
            if not any(f.due == state.now for f in state.in_flight):
                break
        # R6, R7: the next clock value, or the end.
        candidates = [f.due for f in state.in_flight]
        try:
            for t in model.transitions:
                r = check(model, t, state, state.running[t.id], state.next_start[t.id],
                          state.now)
                if isinstance(r, Blocked) and r.until is not None:
                    candidates.append(r.until)
        except FiringError as exc:                   # pragma: no cover - checked above
            return finish("error", str(exc))
        if not candidates:
            break
        nxt = min(candidates)
        if nxt > max_time * tpc:
            return finish("max_time", f"stopped at cycle {cyc(state.now)}: the next event is "
                          f"at {cyc(nxt)}, past max_time = {max_time}")
        state.now, at_this_cycle = nxt, 0

    counts = [state.count(i) for i in range(len(model.places))]
    stuck = stuck_places(model, counts, initial_counts)
    if stuck:
        return finish("deadlock", f"deadlock at cycle {cyc(last_commit)}: no transition can fire "
                      f"and tokens are left in {', '.join(stuck)}")
    return finish()


def _lowest_ready(model: Model, state: State):
    for t in model.transitions:
        try:
            r = check(model, t, state, state.running[t.id], state.next_start[t.id],
                      state.now)
        except FiringError as exc:
            raise FiringError(firing_failed(t, in_cycles(state.now, model.ticks_per_cycle),
                                            exc)) from None
        if isinstance(r, Ready):
            return t, r
    return None


def in_cycles(ticks, ticks_per_cycle: int):
    """A time in a model's ticks (``Net(ticks_per_cycle=k)``) as cycles: an int when whole,
    else a float (exact for the powers of two a model would use)."""
    if ticks is None or ticks_per_cycle == 1:
        return ticks
    whole, rest = divmod(ticks, ticks_per_cycle)
    return whole if rest == 0 else ticks / ticks_per_cycle


def firing_failed(t: Transition, now: int, exc: Exception) -> str:
    """The message of a run stopped by R2's errors."""
    return f"transition {t.name!r} at cycle {now}: {exc}"


def stalled(now: int, limit: int) -> str:
    """The message of a run stopped by R8's limit on firings started in one instant."""
    return (f"stopped at cycle {now}: more than {limit} firings started without the clock "
            f"moving (a loop of zero-delay transitions?); raise max_firings_per_cycle if this "
            f"is real work")


def past_max_commits(model: Model, now, total: int, limit: int, done_time, done_count: int,
                     commits) -> str:
    """The message of a run stopped by R8's limit on commits. A run that goes on after
    its work is done (a loop that never stops on its own) is told by when the done place
    last got a token and which transitions make most of the commits. Times in cycles;
    ``commits[i]``: transition i's commits."""
    text = f"stopped at cycle {now} after {total} commits, past max_commits = {limit}"
    if done_count:
        text += (f"; {done_count} token(s) had reached the done place "
                 f"{model.places[model.done].name!r}, the last at cycle {done_time}")
    busiest, covered = [], 0
    for t in sorted(model.transitions, key=lambda t: -commits[t.id])[:3]:
        if covered >= 0.9 * total:
            break
        busiest.append(f"{t.name} ({commits[t.id]:,})")
        covered += commits[t.id]
    text += f"; the commits are mostly {', '.join(busiest)}"
    if done_count and now - done_time > done_time:   # idle at done longer than it took
        text += (f"; nothing reached the done place in the {now - done_time:,} cycles "
                 f"since: a loop that never stops on its own? (`accelperf lpn check` "
                 f"finds one)")
    return text


def _ids(lists) -> list[list[int]]:
    return [sorted(set(x)) for x in lists]


def dirty_lists(model: Model) -> tuple[list[list[int]], list[list[int]]]:
    """Per transition, who to re-check after it starts and after it commits: locking
    changes the free tokens of its inputs; a commit changes its inputs' and outputs'
    counts. Route targets are added when a route is taken (``model.watchers()``)."""
    watchers = model.watchers()
    start = _ids([w for p in t.inputs for w in watchers[p] if w != t.id]
                 for t in model.transitions)
    commit = _ids([w for p in t.inputs + tuple(a.place for a in t.outputs)
                   for w in watchers[p]] + [t.id] for t in model.transitions)
    return start, commit
