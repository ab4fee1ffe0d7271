"""A stream's slope, derived: the cycle mean of its period recurrence (beyond OSDI'24 §4.2).

:mod:`.schedule` derives, from the symbolic run of a probe, the net's timing recurrence
one period at a time: every firing of a period starts at the latest of some start, done
or next-start times of firings of its own period and of the period before. Written as
times, that is a max-plus linear recurrence x(p) = A0 ⊗ x(p) ⊕ A1 ⊗ x(p − 1): a graph
whose nodes are the period's firings and whose edges weigh the delay, zero or the
initiation interval of the firing they leave, those into the next period carrying one
period. A0 only points forward in the period (a record waits for earlier records), so
x(p) = (A0* ⊗ A1) ⊗ x(p − 1) = A ⊗ x(p − 1).

On a stream whose tokens all hold the same values (a uniform stream) the delays are the
same every period, and a max-plus recurrence with a constant matrix settles to adding
its eigenvalue λ per period: the largest mean weight of a cycle of A (the max-plus
cyclicity theorem, Baccelli et al., *Synchronization and Linearity*, ch. 3; computed with
Karp's algorithm, "A characterization of the minimum cycle mean in a digraph", 1978,
maximised instead of minimised). λ / period is the stream's
cycles per token in steady state, and the cycle reaching it (the critical cycle) says
which firings hold the stream back, e.g. the JPEG decoder's back end, whose colour
converter only *reads* the IDCT's slots, which no A.3 loop (one place of own tokens)
sees.

:func:`stream_slope` computes λ exactly (rationals, Karp's algorithm) at a point of the
stream's mean properties and returns the critical cycle with its weight as a SymPy
expression over those means: a term derived from the net's delays and structure, naming
its transitions. Assumptions: every token of the stream holds the means (a uniform
stream), and the stream is long enough for the steady state (the cycle mean is the
limit; the replay of :mod:`.schedule` prices fill and drain).

Which streams of the library take which route: the JPEG decoder's (``probe = 18``, three
MCUs) has a proven recurrence; a probe of two periods gives one assumed periodic (the
bound says so); a stream with no probe or a probe of one period has none, and
:mod:`.interface` keeps A.3's bottleneck as its slope (``block-pipeline``,
``pipeline-over-link``, ``darwin``, where the loops alone give the simulator's slope).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import sympy

from .classes import InputClass
from .schedule import PeriodSchedule, period_schedule
from .simplify import simplified
from ..space import count_symbol, mean_symbol

ASSUMPTION = "a uniform stream (every token at the means) in steady state"
"""What :class:`StreamSlope` assumes, as the module's docstring and ``--check`` say it."""


@dataclass(frozen=True)
class CriticalCycle:
    """A cycle of a period recurrence's graph: the firings it passes (indices of the
    steady period's steps, in order), how many periods it spans and its weight (SymPy
    over the period's tokens ``t{j}_{property}``)."""

    steps: tuple
    transitions: tuple
    periods: int
    weight: object

    def describe(self) -> str:
        """The firings of the cycle, repeats of one transition run together."""
        names = []
        for t in self.transitions:
            if names and names[-1][0] == t:
                names[-1][1] += 1
            else:
                names.append([t, 1])
        path = " -> ".join(t if k == 1 else f"{t} x{k}" for t, k in names)
        return f"{path} ({self.periods} period(s))"

    def __repr__(self) -> str:
        return f"CriticalCycle({self.describe()}: {self.weight})"


@dataclass(frozen=True)
class StreamSlope:
    """Cycles per stream token of a uniform stream in steady state, at one point of the
    means, with the cycle that sets it and that cycle's weight per token as a SymPy
    expression (``per_token``) over the stream's mean symbols."""

    cycles_per_token: Fraction
    cycle: CriticalCycle
    per_token: object

    def __repr__(self) -> str:
        return f"StreamSlope({self.cycles_per_token} cycles/token: {self.cycle.describe()})"


def _edges(schedule: PeriodSchedule):
    """The recurrence's edges into each steady step i: (j, kind, crossing)."""
    return [[(j, kind, offset == -1) for kind, offset, j in step.after]
            for step in schedule.steady]


def _weight(step, kind):
    """The symbolic weight of an edge leaving ``step`` (see the module docstring)."""
    return step.delay if kind == "done" else step.interval if kind == "next" else \
        sympy.Integer(0)


def _at(expr, values) -> Fraction:
    number = sympy.nsimplify(sympy.sympify(expr).xreplace(values))
    if not number.is_Rational:
        raise ValueError(f"the delay {expr} is not a number at {values}")
    return Fraction(int(number.p), int(number.q))


def _one_period(schedule: PeriodSchedule, numeric):
    """A = A0* ⊗ A1 at the numeric weights: best[j][i] = (weight, path) of the heaviest
    path from step j of one period to step i of the next, path being the edges
    (from, kind, to) it takes; None where there is none. None when an edge of a period
    points backwards (the recurrence is then not the forward one assumed here)."""
    edges = _edges(schedule)
    n = len(schedule.steady)
    if any(j >= i for i, into in enumerate(edges) for j, _, crossing in into if not crossing):
        return None
    best = []
    for j in range(n):
        row = [None] * n
        for i, into in enumerate(edges):
            options = [(numeric[j][kind], ((j, kind, i),)) for src, kind, crossing in into
                       if crossing and src == j]
            options += [(row[m][0] + numeric[m][kind], row[m][1] + ((m, kind, i),))
                        for m, kind, crossing in into if not crossing and row[m] is not None]
            if options:
                row[i] = max(options, key=lambda o: o[0])
        best.append(row)
    return best


def _karp(best, n):
    """λ = max over cycles of A of mean weight, and a closed walk reaching it (Karp:
    λ = max_v min_k (D_n(v) − D_k(v)) / (n − k), D_k(v) the heaviest walk of k edges
    ending at v; a closed walk inside the heaviest n-edge walk to the maximising v is
    critical)."""
    walks = [[(Fraction(0), None)] * n]            # D_k(v) with its predecessor
    for _ in range(n):
        previous, row = walks[-1], []
        for v in range(n):
            options = [(previous[u][0] + best[u][v][0], u) for u in range(n)
                       if previous[u][0] is not None and best[u][v] is not None]
            row.append(max(options, key=lambda o: o[0]) if options else (None, None))
        walks.append(row)
    lam, end = None, None
    for v in range(n):
        if walks[n][v][0] is None:
            continue
        value = min((walks[n][v][0] - walks[k][v][0]) / (n - k) for k in range(n)
                    if walks[k][v][0] is not None)
        if lam is None or value > lam:
            lam, end = value, v
    if lam is None:
        return None, None
    nodes, v = [end], end
    for k in range(n, 0, -1):
        v = walks[k][v][1]
        nodes.append(v)
    nodes.reverse()
    cycles = []
    for a in range(len(nodes)):
        for b in range(a + 1, len(nodes)):
            if nodes[a] == nodes[b]:
                walk = nodes[a:b + 1]
                mean = sum((best[u][v][0] for u, v in zip(walk, walk[1:])), Fraction(0)) \
                    / (len(walk) - 1)
                cycles.append((mean, -len(walk), walk))
                break
    mean, _, walk = max(cycles)
    return lam, (walk if mean == lam else None)


def stream_slope(schedule: PeriodSchedule, values: dict, means: dict) -> StreamSlope | None:
    """The slope of a uniform stream through ``schedule`` (see the module docstring):
    ``values`` gives each token property its value ({property: number}), ``means`` its
    mean symbol ({property: Symbol}) for the symbolic weight. None where the recurrence
    has no cycle (nothing repeats) or is not forward within a period."""
    steps = schedule.steady
    tokens = {s for step in steps for e in (step.delay, step.interval)
              for s in sympy.sympify(e).free_symbols}
    point, symbolic = {}, {}
    for s in tokens:
        prop = str(s).split("_", 1)[1]
        point[s] = sympy.Rational(values[prop])
        symbolic[s] = means[prop]
    numeric = [{kind: _at(_weight(step, kind), point) for kind in ("done", "start", "next")}
               for step in steps]
    best = _one_period(schedule, numeric)
    if best is None:
        return None
    lam, walk = _karp(best, len(steps))
    if walk is None:
        return None
    path = [edge for u, v in zip(walk, walk[1:]) for edge in best[u][v][1]]
    weight = sympy.Add(*[_weight(steps[j], kind) for j, kind, _ in path])
    order = tuple(j for j, _, _ in path)
    cycle = CriticalCycle(order, tuple(steps[j].transition for j in order), len(walk) - 1,
                          weight)
    per_token = simplified(weight.xreplace(symbolic) / (cycle.periods * schedule.period))
    return StreamSlope(lam / schedule.period, cycle, per_token)


def stream_slopes(model, cls: InputClass, schedule: PeriodSchedule | None, points):
    """The slope of the class's stream at its lowest property values and at each sampled
    point (``points``), for :mod:`.interface`: ([(point, n symbol, StreamSlope)], the
    assumption), or (None, "") without a recurrence. ``schedule`` is the class's proven
    recurrence; without one, a probe of two periods still gives its second period as
    the steady one, assumed to repeat (not proven, so the module does not replay it)."""
    unproven = None if schedule is not None else \
        period_schedule(model, cls.commits, cls.space, min_periods=2)
    schedule = schedule or unproven
    if schedule is None:
        return None, ""
    (ps,) = [p for p in cls.space.places if p.place == schedule.stream]
    means = {q: mean_symbol(ps.place, q) for q in ps.properties}
    lowest = {means[q]: lo for q, (lo, _) in ps.properties.items()}
    out = []
    for point in [{**points[0], **lowest}] + list(points):
        slope = stream_slope(schedule, {q: point.get(m, lowest[m]) for q, m in means.items()},
                             means)
        if slope is None:
            return None, ""
        out.append((point, count_symbol(ps.place), slope))
    return out, ASSUMPTION + ("" if unproven is None else
                              ", its probe's second period repeating")


__all__ = ["ASSUMPTION", "CriticalCycle", "StreamSlope", "stream_slope", "stream_slopes"]
