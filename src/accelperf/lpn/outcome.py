"""What a run ends with, whichever engine ran it: the result, the errors that stop a run
and the report of where it stood (OSDI'24 §3.2's statistics; R7's deadlock verdict).

Both engines (:mod:`.sim` in Python, :mod:`.compiled` in C) build their results and
reports here, so the two give the same objects and texts.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ModelError
from ..outputs import replacing, write_atomic
from .net import Model
from .semantics import Blocked, FiringError, MarkingView, check, in_cycles, stuck_places


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
    backend: str = "python"
    """The engine that ran: "python" or "compiled"."""

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
                "bottleneck": self.bottleneck, "final_marking": dict(self.final_marking),
                "backend": self.backend}

    def write_trace_csv(self, path: str | Path) -> Path:
        """One row per firing: transition, start cycle, commit cycle, duration."""
        self._need_trace()
        path = Path(path)
        with replacing(path) as temp, temp.open("w", newline="") as fh:
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
        write_atomic(path, json.dumps({"traceEvents": events, "displayTimeUnit": "ns",
                                       "otherData": {"model": self.model,
                                                     "time_unit": "1 us = 1 cycle"}}))
        return Path(path)

    def _need_trace(self):
        if self.trace is None:
            raise ModelError("this run kept no trace: simulate(..., trace=True)")

    def __repr__(self) -> str:
        return (f"SimResult({self.model}: latency {self.latency} cycles, "
                f"{self.total_commits} commits, bottleneck {self.bottleneck})")


def verdict(model: Model, result: SimResult, initial_counts: dict, expected_done,
            report) -> SimResult:
    """R7 on a finished run: the result, or a DeadlockError when work is left (or fewer
    than ``expected_done`` tokens reached the done place); ``report(msg)`` writes the
    report of where the run stands."""
    # Nothing is in flight at the end, so the final marking holds only free tokens.
    counts = [result.final_marking[p.name] for p in model.places]
    stuck = stuck_places(model, counts, initial_counts)
    done_count = result.done_tokens
    short = expected_done is not None and done_count < expected_done
    if stuck or short:
        what = (f"only {done_count} of {expected_done} expected tokens reached "
                f"{model.places[model.done].name!r}" if short else
                f"tokens are left in {', '.join(stuck)}")
        # end_time is the last commit, already in cycles
        msg = f"deadlock at cycle {result.end_time}: no transition can fire and {what}"
        raise DeadlockError(msg, report(msg), result)
    return result


def build_result(model, done_time, end, commits, busy, max_occ, done_count, total, firings,
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


def report_marking(model: Model, queues, locked, inflight, next_start, now,
                   headline: str) -> str:
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
