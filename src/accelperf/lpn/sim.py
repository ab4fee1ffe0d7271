"""The reference LPN simulator: event-driven, integer time (OSDI'24 §3.2, §4.3).

Rules (each pinned by a test):

1. **Enabling locks tokens.** A transition is enabled when every input place holds the head
   tokens its functions read, its guard holds on those heads, each input place holds at
   least its weight in free tokens, fewer than ``concurrency`` of its firings are in flight,
   and ``initiation_interval`` cycles have passed since its last start. It then takes
   (locks) the first *w* free tokens of each input place; no other transition can take them.
2. **Commit after the delay.** ``delay`` cycles later the firing commits: the locked tokens
   are gone and the outputs are pushed, stamped with the commit time.
3. **Order at one time.** All commits due at time t run first, smallest transition id
   first (declaration order; FIFO for one transition). Then transitions whose input places
   changed are re-checked and enabled, smallest id first, so a lower id wins a contested
   token. Zero-delay firings commit at the same t, and the cycle repeats until nothing
   more can commit or start at t; then time advances to the next commit.
4. **End.** The run ends when nothing is in flight. The end-to-end latency is the time of
   the last token deposited in the done place. Tokens left in a place that is neither the
   done place nor a resource place mean the net is stuck: that is reported as a deadlock
   with the marking and what every waiting transition waits for.

Only the transitions whose input places changed are re-checked after a commit, so a
commit costs the same whether the net has ten transitions or a thousand.
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
from .codegen import FiringError, compile_transitions
from .net import Model


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
    """The run passed ``max_time`` or ``max_commits``."""


@dataclass(frozen=True)
class Firing:
    transition: str
    start: int
    end: int


@dataclass(frozen=True)
class SimResult:
    """What a run measured (see the module docstring for the rules)."""

    model: str
    latency: int | None                 # time of the last token into the done place
    end_time: int                        # time of the last commit
    commits: dict
    busy: dict                           # cycles with at least one firing in flight
    max_occupancy: dict                  # most tokens (free + locked) ever in each place
    done_tokens: int
    total_commits: int
    trace: tuple = field(default=None, repr=False)
    utilisation: dict = field(default_factory=dict)
    """Share of each unit's capacity in use over the run: busy time for one server, mean
    busy servers / k for k servers, issue slots used (commits x II / span) for a pipelined
    unit, and time with work in flight for an unbounded one."""

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
                "bottleneck": self.bottleneck}

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


def _check_limit(name: str, value):
    if value is None:
        return math.inf
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ModelError(f"{name} = {value!r} is invalid: a whole number >= 0")
    return value


def simulate(model: Model, user_input=None, *, max_time: int | None = None,
             max_commits: int | None = None, trace: bool = False,
             expected_done: int | None = None) -> SimResult:
    """Run ``model`` on ``user_input`` (turned into tokens by the model's Ψ).

    Raises DeadlockError when work is left that can never proceed, LimitError past
    ``max_time`` cycles or ``max_commits`` commits; both carry a report.
    """
    limit_time = _check_limit("max_time", max_time)
    limit_commits = _check_limit("max_commits", max_commits)
    places, transitions = model.places, model.transitions
    n_places, n_trans = len(places), len(transitions)
    queues = [deque() for _ in range(n_places)]
    for pid, tokens in model.initial_tokens(user_input).items():
        queues[pid].extend(tokens)
    locked = [0] * n_places
    max_occ = [len(q) for q in queues]
    consumers = model.consumers()
    done_pid = model.done

    INF = math.inf
    conc = [INF if t.concurrency is None else t.concurrency for t in transitions]
    ii = [t.initiation_interval for t in transitions]
    done_box = [None, 0]                       # time of the last done token, done tokens
    compiled = compile_transitions(model, queues, locked, max_occ, done_box)
    enables = [e for e, _ in compiled]
    commits_fn = [c for _, c in compiled]
    input_consumers = [sorted({c for p in t.inputs for c in consumers[p]} - {t.id})
                       for t in transitions]
    output_consumers = [sorted({c for arc in t.outputs for c in consumers[arc.place]})
                        for t in transitions]
    has_routes = [bool(t.routes) for t in transitions]

    inflight = [0] * n_trans
    next_start = [0] * n_trans
    wake_at = [-1] * n_trans
    busy = [0] * n_trans
    busy_since = [0] * n_trans
    area = [0] * n_trans              # integral of firings in flight over time
    area_since = [0] * n_trans
    commits = [0] * n_trans
    events: list = []
    dirty: list = list(range(n_trans))
    is_dirty = [True] * n_trans
    firings = [] if trace else None
    seq = 0
    now = 0
    total = 0
    heappush, heappop = heapq.heappush, heapq.heappop

    def fail(message, cls=SimulationError, with_report=False):
        result = _result(model, done_box[0], now, commits, busy, max_occ, done_box[1], total,
                         firings, inflight, busy_since, area, area_since)
        report = _report(model, queues, locked, inflight, now, message) if with_report \
            else message
        return cls(message, report, result)

    while True:
        # ---- enabling phase at `now`, smallest id first
        while dirty:
            tid = heappop(dirty)
            is_dirty[tid] = False
            enable = enables[tid]
            while inflight[tid] < conc[tid]:
                if ii[tid] and now < next_start[tid]:
                    if wake_at[tid] != next_start[tid]:
                        wake_at[tid] = next_start[tid]
                        seq += 1
                        heappush(events, (next_start[tid], tid, seq, None, now))
                    break
                try:
                    firing = enable(now)
                except FiringError as exc:
                    raise fail(f"transition {transitions[tid].name!r} at cycle {now}: "
                               f"{exc}") from None
                if firing is None:
                    break
                n_in = inflight[tid]
                if n_in == 0:
                    busy_since[tid] = now
                else:
                    area[tid] += n_in * (now - area_since[tid])
                area_since[tid] = now
                inflight[tid] = n_in + 1
                next_start[tid] = now + ii[tid]
                seq += 1
                heappush(events, (now + firing[0], tid, seq, firing, now))
                for c in input_consumers[tid]:
                    if not is_dirty[c]:
                        is_dirty[c] = True
                        heappush(dirty, c)
        if not events:
            break
        t_next = events[0][0]
        if t_next > limit_time:
            raise fail(f"stopped at cycle {now}: the next commit is at {t_next}, past "
                       f"max_time = {max_time}", LimitError, True)
        now = t_next
        # ---- commit phase: everything due at `now`
        while events and events[0][0] == now:
            _, tid, _, firing, start = heappop(events)
            if firing is None:                       # initiation-interval wake-up
                if not is_dirty[tid]:
                    is_dirty[tid] = True
                    heappush(dirty, tid)
                continue
            try:
                chosen = commits_fn[tid](firing, now)
            except FiringError as exc:
                raise fail(f"transition {transitions[tid].name!r} at cycle {now}: "
                           f"{exc}") from None
            for c in output_consumers[tid]:
                if not is_dirty[c]:
                    is_dirty[c] = True
                    heappush(dirty, c)
            if has_routes[tid]:
                if chosen < 0:
                    raise fail(f"transition {transitions[tid].name!r} committed at cycle "
                               f"{now} but none of its routes' conditions holds for its "
                               f"tokens {firing[1]}")
                for c in consumers[chosen]:
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
            if firings is not None:
                firings.append(Firing(transitions[tid].name, start, now))
            if not is_dirty[tid]:
                is_dirty[tid] = True
                heappush(dirty, tid)
            if total > limit_commits:
                raise fail(f"stopped at cycle {now} after {total} commits, past "
                           f"max_commits = {max_commits}", LimitError, True)

    done_time, done_count = done_box
    result = _result(model, done_time, now, commits, busy, max_occ, done_count, total, firings,
                     inflight, busy_since, area, area_since)
    stuck = [p.name for i, p in enumerate(places)
             if queues[i] and i != done_pid and not p.resource]
    short = expected_done is not None and done_count < expected_done
    if stuck or short:
        what = (f"only {done_count} of {expected_done} expected tokens reached "
                f"{places[done_pid].name!r}" if short else
                f"tokens are left in {', '.join(stuck)}")
        msg = f"deadlock at cycle {now}: no transition can fire and {what}"
        raise DeadlockError(msg, _report(model, queues, locked, inflight, now, msg), result)
    return result


def _result(model, done_time, now, commits, busy, max_occ, done_count, total, firings,
            inflight, busy_since, area, area_since) -> SimResult:
    busy_now = [b + (now - busy_since[i] if inflight[i] else 0) for i, b in enumerate(busy)]
    area_now = [a + inflight[i] * (now - area_since[i]) for i, a in enumerate(area)]
    span = now or 1
    utilisation = []
    for t, b, a, c in zip(model.transitions, busy_now, area_now, commits):
        if t.initiation_interval:           # pipelined: share of issue slots used
            utilisation.append(min(1.0, c * t.initiation_interval / span))
        elif t.concurrency is None:         # unbounded servers: time with work in flight
            utilisation.append(b / span)
        else:                               # k servers: mean busy servers / k
            utilisation.append(a / (t.concurrency * span))
    names = [t.name for t in model.transitions]
    return SimResult(model.name, done_time, now, dict(zip(names, commits)),
                     dict(zip(names, busy_now)),
                     {p.name: m for p, m in zip(model.places, max_occ)}, done_count, total,
                     None if firings is None else tuple(firings),
                     dict(zip(names, utilisation)))


def _report(model: Model, queues, locked, inflight, now, headline: str) -> str:
    """The marking and what each waiting transition waits for, in words."""
    lines = [headline, "marking (free + locked tokens):"]
    for i, p in enumerate(model.places):
        if queues[i] or locked[i]:
            head = f", head {dict(zip(p.token_type.properties, queues[i][0]))}" \
                if queues[i] and p.token_type.properties else ""
            lines.append(f"  {p.name}: {len(queues[i])} free, {locked[i]} locked{head}")
    lines.append("transitions:")
    for t in model.transitions:
        if inflight[t.id]:
            lines.append(f"  {t.name}: {inflight[t.id]} firing(s) in flight")
            continue
        lines.append(f"  {t.name}: {_waiting_for(model, t, queues)}")
    return "\n".join(lines)


def _waiting_for(model: Model, t, queues) -> str:
    from .expr import evaluate
    names = [model.places[p].name for p in t.inputs]
    heads = [queues[p][0] if queues[p] else None for p in t.inputs[:t.user_inputs]]
    missing = [names[k] for k in t.needs_head if heads[k] is None]
    if missing:
        return f"waits for a token in {', '.join(missing)}"
    if t.guard is not None and not evaluate(t.guard, heads):
        return f"guard is false for the head tokens of {', '.join(names[:t.user_inputs])}"
    for k, (pid, w) in enumerate(zip(t.inputs, t.weights)):
        need = evaluate(w, heads)
        if len(queues[pid]) < need:
            what = "capacity tokens (the place it fills is full)" \
                if model.places[pid].capacity_of else "tokens"
            return f"needs {need} {what} in {names[k]}, has {len(queues[pid])}"
    return "could fire (no reason found to wait)"
