"""The fast LPN engine: event-driven, integer time (OSDI'24 §3.2, §4.3).

The rules it follows are defined once, in :mod:`.semantics` (R1–R8: what functions see,
when a transition can start, start, commit, one instant, time, end, limits); this engine
is tested against that reference trace for trace. What it adds is speed:

* every transition's rules are generated as straight-line Python (:mod:`.codegen`);
* only transitions whose watched places changed are re-checked (a *dirty* set, smallest
  id first), so a commit costs the same whether the net has ten transitions or a thousand;
* a transition held back only by its initiation interval gets a wake-up event, dropped
  again if it can no longer start when its time comes.

Runs never hang: without an explicit ``max_commits`` a run stops after
:data:`~.semantics.DEFAULT_MAX_COMMITS` commits, a zero-delay loop stops after
:data:`~.semantics.DEFAULT_MAX_FIRINGS_PER_CYCLE` commits at one cycle, and Ctrl-C stops a
run with a report of where it stands.
"""

from __future__ import annotations

import heapq
import math
from collections import deque

from ..errors import ModelError
from .codegen import compile_transitions
from .expr import EvaluationError
from .net import Marking, Model
from .outcome import (DeadlockError, Interrupted, LimitError, SimResult,  # noqa: F401
                      SimulationError, build_result, report_marking, verdict)
from .semantics import (DEFAULT_MAX_COMMITS, DEFAULT_MAX_FIRINGS_PER_CYCLE, Firing,
                        FiringError, dirty_lists, firing_failed, in_cycles, past_max_commits,
                        stalled)


def _check_limit(name: str, value, default=math.inf):
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ModelError(f"{name} = {value!r} is invalid: a whole number >= 0")
    return value


BACKENDS = ("python", "compiled", "auto")


def simulate(model: Model, user_input=None, *, max_time: int | None = None,
             max_commits: int | None = None, max_firings_per_cycle: int | None = None,
             trace: bool = False, expected_done: int | None = None,
             backend: str = "python") -> SimResult:
    """Run ``model`` on ``user_input`` (turned into tokens by the model's Ψ, or a
    :class:`~.net.Marking` from ``model.marking(...)``), by the rules of :mod:`.semantics`.

    Raises DeadlockError when work is left that can never proceed (R7), LimitError past
    ``max_time`` cycles, ``max_commits`` commits (default
    :data:`~.semantics.DEFAULT_MAX_COMMITS`) or ``max_firings_per_cycle`` firings started
    without the clock moving (default :data:`~.semantics.DEFAULT_MAX_FIRINGS_PER_CYCLE`),
    SimulationError when a function fails, Interrupted on Ctrl-C; each carries a report
    and the statistics so far.

    ``backend``: "python" (this engine), "compiled" (:mod:`.compiled`: the same rules in
    C, compiled once per net; int64 values) or "auto" (compiled when a C compiler is
    available, else this engine with a warning); ``result.backend`` says which ran.
    """
    if backend not in BACKENDS:
        raise ModelError(f"backend = {backend!r} is invalid: one of {', '.join(BACKENDS)}")
    tpc = model.ticks_per_cycle                 # time runs in ticks, is told in cycles
    cyc = lambda ticks: in_cycles(ticks, tpc)
    limit_time = _check_limit("max_time", max_time) * tpc
    limit_commits = _check_limit("max_commits", max_commits, DEFAULT_MAX_COMMITS)
    limit_cycle = _check_limit("max_firings_per_cycle", max_firings_per_cycle,
                               DEFAULT_MAX_FIRINGS_PER_CYCLE)
    if isinstance(user_input, Marking):
        if user_input.model != model.name:
            raise ModelError(f"marking = {user_input!r} is invalid: it was made for model "
                             f"{user_input.model!r}, not {model.name!r}")
        marking = user_input
    else:
        marking = model.marking(user_input)
    if backend != "python":
        from .compiled import choose
        engine = choose(model, backend)
        if engine is not None:
            return engine.simulate(marking, max_time, limit_time, limit_commits, limit_cycle,
                                   trace, expected_done)
    places, transitions = model.places, model.transitions
    n_places, n_trans = len(places), len(transitions)
    queues = [deque() for _ in range(n_places)]
    initial_counts = {}
    for pid, tokens in marking.tokens.items():
        queues[pid].extend(tokens)
        initial_counts[pid] = len(tokens)
    locked = [0] * n_places
    max_occ = [len(q) for q in queues]
    watchers = model.watchers()

    conc = [math.inf if t.concurrency is None else t.concurrency for t in transitions]
    pipelined = [not (t.initiation_interval.op == "const" and t.initiation_interval.args[0] == 0)
                 for t in transitions]
    done_box = [None, 0]                       # time of the last done token, done tokens
    next_start = [0] * n_trans
    compiled = compile_transitions(model, queues, locked, max_occ, done_box, next_start)
    probes = [c[0] for c in compiled]
    fires = [c[1] for c in compiled]
    commits_fn = [c[2] for c in compiled]
    start_dirty, commit_dirty = dirty_lists(model)

    inflight = [0] * n_trans
    wake_at = [-1] * n_trans
    busy = [0] * n_trans
    busy_since = [0] * n_trans
    area = [0] * n_trans              # integral of firings in flight over time
    area_since = [0] * n_trans
    slots = [0] * n_trans             # sum of the started firings' intervals
    commits = [0] * n_trans
    events: list = []
    dirty: list = list(range(n_trans))
    is_dirty = [True] * n_trans
    firings = [] if trace else None
    seq = 0
    now = 0
    last_commit = 0
    total = 0
    at_cycle = 0
    heappush, heappop = heapq.heappush, heapq.heappop

    def fail(message, cls=SimulationError, with_report=True):
        result = build_result(model, done_box[0], last_commit, commits, busy, max_occ,
                              done_box[1], total, firings, inflight, busy_since, area,
                              area_since, slots, queues, locked)
        report = report_marking(model, queues, locked, inflight, next_start, now, message) \
            if with_report else message
        return cls(message, report, result)

    tid = 0
    try:
        while True:
            # ---- R5: start firings at `now`, always of the lowest-id transition that can
            while dirty:
                tid = heappop(dirty)
                is_dirty[tid] = False
                fire = fires[tid]
                while inflight[tid] < conc[tid]:
                    firing = fire(now)
                    if not firing:
                        if firing is False and wake_at[tid] != next_start[tid]:
                            wake_at[tid] = next_start[tid]          # R2 (g): wake it later
                            seq += 1
                            heappush(events, (next_start[tid], tid, seq, None, now))
                        break
                    at_cycle += 1
                    if at_cycle > limit_cycle:
                        raise fail(stalled(cyc(now), limit_cycle), LimitError)
                    n_in = inflight[tid]
                    if n_in == 0:
                        busy_since[tid] = now
                    else:
                        area[tid] += n_in * (now - area_since[tid])
                    area_since[tid] = now
                    inflight[tid] = n_in + 1
                    slots[tid] += next_start[tid] - now
                    seq += 1
                    heappush(events, (now + firing[0], tid, seq, firing, now))
                    for c in start_dirty[tid]:
                        if not is_dirty[c]:
                            is_dirty[c] = True
                            heappush(dirty, c)
                    if dirty and dirty[0] < tid:            # a lower id may start first
                        is_dirty[tid] = True
                        heappush(dirty, tid)
                        break
            # ---- R6: drop wake-ups of transitions that can no longer start
            while events and events[0][3] is None:
                tid = events[0][1]
                if inflight[tid] < conc[tid] and probes[tid](now) is not None:
                    break
                heappop(events)
                wake_at[tid] = -1
            if not events:
                break
            t_next = events[0][0]
            if t_next > limit_time:
                raise fail(f"stopped at cycle {cyc(now)}: the next event is at "
                           f"{cyc(t_next)}, past max_time = {max_time}", LimitError)
            if t_next != now:
                now, at_cycle = t_next, 0
            # ---- R4, R5: every commit due at `now`, smallest id first
            while events and events[0][0] == now:
                _, tid, _, firing, start = heappop(events)
                if firing is None:                       # an initiation-interval wake-up
                    wake_at[tid] = -1
                    if not is_dirty[tid]:
                        is_dirty[tid] = True
                        heappush(dirty, tid)
                    continue
                chosen = commits_fn[tid](firing, now)
                for c in commit_dirty[tid]:
                    if not is_dirty[c]:
                        is_dirty[c] = True
                        heappush(dirty, c)
                if chosen is not None:
                    for c in watchers[chosen]:
                        if not is_dirty[c]:
                            is_dirty[c] = True
                            heappush(dirty, c)
                n_in = inflight[tid]
                area[tid] += n_in * (now - area_since[tid])
                area_since[tid] = now
                inflight[tid] = n_in - 1
                if n_in == 1:
                    busy[tid] += now - busy_since[tid]
                commits[tid] += 1
                total += 1
                last_commit = now
                if firings is not None:
                    firings.append(Firing(transitions[tid].name, cyc(start), cyc(now)))
                if total > limit_commits:
                    raise fail(past_max_commits(model, cyc(now), total, limit_commits,
                                                cyc(done_box[0]), done_box[1], commits),
                               LimitError)
    except (FiringError, EvaluationError) as exc:
        raise fail(firing_failed(transitions[tid], cyc(now), exc)) from None
    except KeyboardInterrupt:
        raise fail(f"interrupted at cycle {cyc(now)} after {total} commits",
                   Interrupted) from None

    done_time, done_count = done_box
    result = build_result(model, done_time, last_commit, commits, busy, max_occ, done_count,
                          total, firings, inflight, busy_since, area, area_since, slots,
                          queues, locked)
    return verdict(model, result, initial_counts, expected_done,
                   lambda msg: report_marking(model, queues, locked, inflight, next_start,
                                              now, msg))
