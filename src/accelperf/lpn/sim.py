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

import csv
import heapq
import json
import math
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ModelError
from .codegen import compile_transitions
from .expr import EvaluationError
from .net import Marking, Model
from .semantics import (DEFAULT_MAX_COMMITS, DEFAULT_MAX_FIRINGS_PER_CYCLE, Blocked, Firing,
                        FiringError, MarkingView, check, firing_failed, stuck_places)
from .semantics import _stalled as stalled_message
from .semantics import in_cycles


class SimulationError(ModelError):
    """A run that cannot finish: ``report`` says where it stands, ``result`` holds the
    statistics gathered up to that point."""

    def __init__(self, message: str, report: str, result: "SimResult"):
        super().__init__(message)
        self.report = report
        self.result = result


class DeadlockError(SimulationError):
    """No transition can ever fire again, yet work is left."""


class LimitError(SimulationError):
    """The run passed ``max_time``, ``max_commits`` or ``max_firings_per_cycle``."""


class Interrupted(SimulationError):
    """The user stopped the run (Ctrl-C); the report says how far it got."""


@dataclass(frozen=True)
class SimResult:
    """What a run measured (see the module docstring for the rules)."""

    model: str
    latency: int | float | None         # time of the last token into the done place
    end_time: int | float                # time of the last commit (a float when a model
                                         # with ticks_per_cycle > 1 ends between cycles)
    commits: dict
    busy: dict                           # cycles with at least one firing in flight
    max_occupancy: dict                  # most tokens (free + locked) ever in each place
    done_tokens: int
    total_commits: int
    trace: tuple = field(default=None, repr=False)
    utilisation: dict = field(default_factory=dict)
    """Share of each unit's capacity in use over the run: busy time for one server, mean
    busy servers / k for k servers, issue slots used (sum of the started firings'
    intervals / span) for a pipelined unit, and time with work in flight for an unbounded
    one."""
    final_marking: dict = field(default_factory=dict)
    """Tokens (free and locked) left in each place when the run ended."""

    @property
    def bottleneck(self) -> str:
        """The transition with the highest utilisation (first declared on a tie)."""
        names = list(self.utilisation)
        return max(names, key=lambda t: (self.utilisation[t], -names.index(t)))

    def to_dict(self) -> dict:
        return {"model": self.model, "latency": self.latency, "end_time": self.end_time,
                "commits": dict(self.commits), "utilisation": self.utilisation,
                "busy_cycles": dict(self.busy), "max_occupancy": dict(self.max_occupancy),
                "done_tokens": self.done_tokens, "total_commits": self.total_commits,
                "bottleneck": self.bottleneck, "final_marking": dict(self.final_marking)}

    def write_trace_csv(self, path: str | Path) -> Path:
        """One row per firing: transition, start cycle, commit cycle, duration."""
        self._need_trace()
        path = Path(path)
        with path.open("w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["transition", "start_cycle", "commit_cycle", "duration_cycles"])
            for f in self.trace:
                w.writerow([f.transition, f.start, f.end, f.end - f.start])
        return path

    def write_chrome_trace(self, path: str | Path) -> Path:
        """Chrome trace-event JSON (opens in Perfetto or chrome://tracing); one cycle is
        shown as one microsecond, each transition on its own track."""
        self._need_trace()
        names = list(self.commits)
        events = [{"name": "thread_name", "ph": "M", "pid": 1, "tid": i,
                   "args": {"name": n}} for i, n in enumerate(names)]
        tid = {n: i for i, n in enumerate(names)}
        events += [{"name": f.transition, "cat": "firing", "ph": "X", "ts": f.start,
                    "dur": f.end - f.start, "pid": 1, "tid": tid[f.transition]}
                   for f in self.trace]
        Path(path).write_text(json.dumps({"traceEvents": events, "displayTimeUnit": "ns",
                                          "otherData": {"model": self.model,
                                                        "time_unit": "1 us = 1 cycle"}}))
        return Path(path)

    def _need_trace(self):
        if self.trace is None:
            raise ModelError("this run kept no trace: simulate(..., trace=True)")

    def __repr__(self) -> str:
        return (f"SimResult({self.model}: latency {self.latency} cycles, "
                f"{self.total_commits} commits, bottleneck {self.bottleneck})")


def _check_limit(name: str, value, default=math.inf):
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ModelError(f"{name} = {value!r} is invalid: a whole number >= 0")
    return value


def _ids(lists) -> list[list[int]]:
    return [sorted(set(x)) for x in lists]


def simulate(model: Model, user_input=None, *, max_time: int | None = None,
             max_commits: int | None = None, max_firings_per_cycle: int | None = None,
             trace: bool = False, expected_done: int | None = None) -> SimResult:
    """Run ``model`` on ``user_input`` (turned into tokens by the model's Ψ, or a
    :class:`~.net.Marking` from ``model.marking(...)``), by the rules of :mod:`.semantics`.

    Raises DeadlockError when work is left that can never proceed (R7), LimitError past
    ``max_time`` cycles, ``max_commits`` commits (default
    :data:`~.semantics.DEFAULT_MAX_COMMITS`) or ``max_firings_per_cycle`` firings started
    without the clock moving (default :data:`~.semantics.DEFAULT_MAX_FIRINGS_PER_CYCLE`),
    SimulationError when a function fails, Interrupted on Ctrl-C; each carries a report
    and the statistics so far.
    """
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
    # Who to re-check: locking changes the free tokens of the inputs; a commit changes the
    # inputs' and outputs' counts. Route targets are added when a route is taken.
    start_dirty = _ids([w for p in t.inputs for w in watchers[p] if w != t.id]
                       for t in transitions)
    commit_dirty = _ids([w for p in t.inputs + tuple(a.place for a in t.outputs)
                         for w in watchers[p]] + [t.id] for t in transitions)

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
        result = _result(model, done_box[0], last_commit, commits, busy, max_occ, done_box[1],
                         total, firings, inflight, busy_since, area, area_since, slots,
                         queues, locked)
        report = _report(model, queues, locked, inflight, next_start, now, message) \
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
                        raise fail(stalled_message(cyc(now), limit_cycle), LimitError)
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
                    raise fail(f"stopped at cycle {cyc(now)} after {total} commits, past "
                               f"max_commits = {limit_commits}", LimitError)
    except (FiringError, EvaluationError) as exc:
        raise fail(firing_failed(transitions[tid], cyc(now), exc)) from None
    except KeyboardInterrupt:
        raise fail(f"interrupted at cycle {cyc(now)} after {total} commits",
                   Interrupted) from None

    done_time, done_count = done_box
    result = _result(model, done_time, last_commit, commits, busy, max_occ, done_count, total,
                     firings, inflight, busy_since, area, area_since, slots, queues, locked)
    counts = [len(q) for q in queues]
    stuck = stuck_places(model, counts, initial_counts)
    short = expected_done is not None and done_count < expected_done
    if stuck or short:
        what = (f"only {done_count} of {expected_done} expected tokens reached "
                f"{places[model.done].name!r}" if short else
                f"tokens are left in {', '.join(stuck)}")
        msg = f"deadlock at cycle {cyc(last_commit)}: no transition can fire and {what}"
        raise DeadlockError(msg, _report(model, queues, locked, inflight, next_start, now,
                                         msg), result)
    return result


def _result(model, done_time, end, commits, busy, max_occ, done_count, total, firings,
            inflight, busy_since, area, area_since, slots, queues, locked) -> SimResult:
    busy_now = [b + (end - busy_since[i] if inflight[i] else 0) for i, b in enumerate(busy)]
    area_now = [a + inflight[i] * (end - area_since[i]) for i, a in enumerate(area)]
    span = end or 1
    utilisation = []
    for t, b, a, sl in zip(model.transitions, busy_now, area_now, slots):
        ii = t.initiation_interval
        if not (ii.op == "const" and ii.args[0] == 0):   # pipelined: issue slots used
            utilisation.append(min(1.0, sl / span))
        elif t.concurrency is None:         # unbounded servers: time with work in flight
            utilisation.append(b / span)
        else:                               # k servers: mean busy servers / k
            utilisation.append(a / (t.concurrency * span))
    names = [t.name for t in model.transitions]
    cyc = lambda ticks: in_cycles(ticks, model.ticks_per_cycle)
    return SimResult(model.name, cyc(done_time), cyc(end), dict(zip(names, commits)),
                     {n: cyc(b) for n, b in zip(names, busy_now)},
                     {p.name: m for p, m in zip(model.places, max_occ)}, done_count, total,
                     None if firings is None else tuple(firings),
                     dict(zip(names, utilisation)),
                     {p.name: len(q) + lk for p, q, lk in zip(model.places, queues, locked)})


def _report(model: Model, queues, locked, inflight, next_start, now, headline: str) -> str:
    """The marking and what each waiting transition waits for, in words (R2's reasons)."""
    lines = [headline, "marking (free + locked tokens):"]
    for i, p in enumerate(model.places):
        if queues[i] or locked[i]:
            head = f", head {dict(zip(p.token_type.properties, queues[i][0]))}" \
                if queues[i] and p.token_type.properties else ""
            lines.append(f"  {p.name}: {len(queues[i])} free, {locked[i]} locked{head}")
    lines.append("transitions:")
    view = MarkingView(queues, locked)
    for t in model.transitions:
        if inflight[t.id]:
            lines.append(f"  {t.name}: {inflight[t.id]} firing(s) in flight")
            continue
        try:
            verdict = check(model, t, view, 0, next_start[t.id], now)
            why = verdict.reason if isinstance(verdict, Blocked) else \
                "could fire (no reason found to wait)"
        except FiringError as exc:
            why = f"cannot be evaluated: {exc}"
        lines.append(f"  {t.name}: {why}")
    return "\n".join(lines)
