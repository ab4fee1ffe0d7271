"""A stream's timing recurrence, one period at a time (beyond OSDI'24 §4.2).

The phase form of an interface (:mod:`.interface`) prices a period of a stream (an MCU of
6 blocks for the JPEG decoder) by its bottleneck's summed gaps, plus one fill term. That
is right for long runs of alike periods, and wrong where the stages take turns or the
stream is short: a 16x16 JPEG (one MCU) is mostly fill and drain, and an MCU whose
entropy decode and back end take about as long costs more than either.

A probed stream (``probe = K`` in the space) is run by the symbolic executor token by
token, so its commit records say, for every firing, which records made the tokens it
takes (``sources``) and waits to read (``waited``), and its unit's previous firing. With
in-order single-server units these are A.2's local timestamp rules (as
:func:`.critical.critical_path` applies them to a whole fixed structure):

    start = max(done of the records whose tokens it takes or reads,
                start of the previous taker of each input queue (first in, first out),
                done of its unit's previous firing, that firing's start + interval)
    done  = start + delay(its tokens)

Cut into periods (a transition's k-th firing belongs to period k // c_T, c_T its firings
per period), the records of every period but the first refer to their own period and
the one before in the same way: a max-plus recurrence whose state is the previous
period's start and done times. :func:`period_schedule` derives it from a probe of at least
three periods, checking that the second and third periods have the same structure and
delays (over the period's own tokens); the generated module replays it
(:data:`REPLAY_SOURCE`), so the latency of a stream is that of the LPN exactly, for any
number of periods, with no measured or fitted constant. None is returned (and the phase
form is used) for anything else: bundled records, units of several servers, a probe of
fewer than three periods, or periods that differ.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ...net import Model
from ..space import token_symbol
from .simplify import simplified

MIN_PERIODS = 3
"""Periods a probe must hold: the first, and two to prove the recurrence periodic."""


@dataclass(frozen=True)
class Step:
    """One firing of a period: its delay and initiation interval (SymPy over the
    period's tokens, ``t{j}_{property}``) and when it may start, ``after``: (kind,
    period offset (0 this period, -1 the one before), step index), kind being "done",
    "start" or "next" (start + interval) of that step."""

    transition: str
    delay: object
    interval: object
    after: tuple
    output: bool             # puts a token into the done place

    def __repr__(self) -> str:
        return f"Step({self.transition}: {self.delay}, after {len(self.after)})"


@dataclass(frozen=True)
class PeriodSchedule:
    """The recurrence of a stream (see the module docstring): the steps of its first
    period and of every later one."""

    stream: str
    period: int
    first: tuple
    steady: tuple

    def describe(self) -> str:
        """What the generated module does with it, in one line."""
        return f"period replay of {self.stream} ({self.period} token(s) a period, " \
               f"{len(self.steady)} firing(s) each)"

    def __repr__(self) -> str:
        return f"PeriodSchedule({self.stream}: {self.period} token(s), " \
               f"{len(self.steady)} firing(s) per period)"


def token(index: int, prop: str) -> sympy.Symbol:
    """Property ``prop`` of the period's ``index``-th token."""
    return sympy.Symbol(f"t{index}_{prop}", integer=True)


def period_schedule(model: Model, records, space,
                    min_periods: int = MIN_PERIODS) -> PeriodSchedule | None:
    """The recurrence of the probed stream of a class's ``records`` over ``space``, or
    None (see the module docstring). With ``min_periods=2`` a probe of two periods
    gives its second period as the steady one, unproven (no third to compare): enough
    for a slope under that stated assumption (:mod:`.interface`), not for the replay."""
    probes = [p for p in space.places if p.probe]
    if len(probes) != 1 or not records or any(r.bundled for r in records) or \
            model.ticks_per_cycle != 1:       # (replayed times are cycles)
        return None
    ps = probes[0]
    counts: dict = {}
    for r in records:
        counts[r.transition] = counts.get(r.transition, 0) + 1
        if model.transitions[r.tid].concurrency != 1:
            return None                   # which of k servers frees first: not tracked
    period = 1
    for n in counts.values():
        period = sympy.ilcm(period, sympy.Rational(n, ps.probe).q)
    period = int(period)
    periods = ps.probe // period
    if ps.probe % period or periods < max(2, min_periods):
        return None
    per_period = {t: n // periods for t, n in counts.items()}
    place_of = [None] * len(records)      # record -> (period, step index)
    seen: dict = {}
    steps: list = [[] for _ in range(periods)]
    for i, r in enumerate(records):
        k = seen.get(r.transition, 0)
        seen[r.transition] = k + 1
        p = k // per_period[r.transition]
        place_of[i] = (p, len(steps[p]))
        steps[p].append(i)
    done_place = model.done
    out = []
    for p in range(periods):
        rename = {token_symbol(ps.place, p * period + j, q): token(j, q)
                  for j in range(period) for q in ps.properties}
        last_taker: dict = {}
        last_firing: dict = {}
        for i, r in enumerate(records[:steps[p][-1] + 1]):
            t = model.transitions[r.tid]
            if place_of[i][0] == p:
                after = {("done", s) for s in r.sources + r.waited if s >= 0}
                fifo = [pid for pid, n in zip(t.inputs, r.consumed)
                        if n != 0 and pid not in model.initial]
                after |= {("start", last_taker[pid]) for pid in fifo if pid in last_taker}
                if r.tid in last_firing:
                    after |= {("done", last_firing[r.tid]), ("next", last_firing[r.tid])}
                rel = []
                for kind, s in sorted(after):
                    offset = place_of[s][0] - p
                    if offset not in (0, -1):
                        return None          # two periods back, or a later period
                    rel.append((kind, offset, place_of[s][1]))
                delay, interval = (sympy.sympify(e).xreplace(rename)
                                   for e in (r.delay, r.interval))
                if (delay.free_symbols | interval.free_symbols) - set(rename.values()):
                    return None              # reads a token of another period
                output = any(model.place_id(name) == done_place and n != 0
                             for name, n in r.produced)
                out.append((p, Step(r.transition, simplified(delay),
                                    simplified(interval), tuple(rel), output)))
            last_firing[r.tid] = i
            for pid, n in zip(t.inputs, r.consumed):
                if n != 0 and pid not in model.initial:
                    last_taker[pid] = i
    by_period = [tuple(s for q, s in out if q == p) for p in range(periods)]
    if any(by_period[p] != by_period[1] for p in range(2, periods)):
        return None
    return PeriodSchedule(ps.place, period, by_period[0], by_period[1])


REPLAY_SOURCE = '''
def _replay(stream, gaps, schedule):
    """Cycles of a stream by its timing recurrence (accelperf.lpn.analysis.schedule):
    each period's firings start when the records they wait for are done, as the LPN's
    rules say, so fill, drain and turns between stages are counted. Returns runs of
    periods with one bottleneck (the stage with the largest summed gaps), each with the
    cycles it adds to the end."""
    period, first, steady = schedule
    if len(stream) % period:
        raise OutsideClasses(f"a stream of {len(stream)} tokens is not whole periods of "
                             f"{period} (the net cannot finish a partial one)")
    runs, before, end, counted = [], None, 0, 0
    for k in range(0, len(stream), period):
        toks = stream[k:k + period]
        now = ([], [], [])                     # start, done, interval of each firing
        for _, delay, interval, after, output in (first if before is None else steady):
            at = 0
            for kind, offset, j in after:
                s, d, i = before if offset else now
                at = max(at, d[j] if kind == "done" else s[j] if kind == "start" else
                         s[j] + i[j])
            now[0].append(at)
            now[1].append(at + delay(toks))
            now[2].append(interval(toks))
            if output:
                end = max(end, now[1][-1])
        before = now
        total = {}
        for tok in toks:
            for t, g in gaps(tok).items():
                total[t] = total.get(t, 0) + g
        top = max(total, key=total.get)
        _add_run(runs, top, len(toks), end - counted)      # (emit's RUNS_SOURCE)
        counted = end
    return [tuple(r) for r in runs]
'''
"""The replay in every generated module whose stream has a schedule (kept here as
source, run there)."""


__all__ = ["Step", "PeriodSchedule", "period_schedule", "token", "REPLAY_SOURCE",
           "MIN_PERIODS"]
