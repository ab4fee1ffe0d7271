"""Performance interfaces (lpn2pi, OSDI'24 §4.2 and appendix A.3), plain and by phase.

For each input class (:mod:`.classes`):

* every transition T gets an average commit gap ḡ_T, starting from its mean delay over
  the class's commits divided by its concurrency (the hidden single-server self-loop of
  the authors' models is A.3's loop with M = 1; k servers make M = k), and at least its
  initiation interval;
* every loop of A.3 — an elementary cycle with exactly one place holding the model's own
  tokens (a capacity or credit place), token conserving — gives its loop delay
  Δ = Σ_i (δ_Ti + ḡ_Ti·(F_Ti/C − 1)) and parallel factors F_T1 = M / w_{Pn,T1},
  F_Ti = F_T(i-1)·w_{T(i-1),P(i-1)} / w_{P(i-1),Ti}, C = min F; then ḡ_Ti = max(ḡ_Ti, Δ/F_Ti);
* loops are treated again until ḡ stops changing on sampled inputs of the class (the
  paper's announced "next version"; at most ``max_iterations`` rounds);
* ε_T = N_T·ḡ_T, and the plain interface is latency = max_T ε_T (§4.2), simplified
  with SymPy and with terms the space proves smaller dropped.

**Stream slopes (beyond the paper).** A stream's cycles per token in steady state are
the cycle mean of its period recurrence (:mod:`.steady`), derived at the sampled points.
The A.3 iteration stops before its formula passes that (loops whose parallel factors
differ overshoot, round after round), and a slope no loop explains (a stage that only
*reads* a later stage's slots: the JPEG decoder's back end) adds the term ``coupling``,
the critical cycles' weight per token. A stream with no recurrence keeps A.3's
bottleneck (one stable bottleneck, the pipeline full) and iterates to convergence.

**Fixed structures (beyond the paper).** A space built from an input with only its size
properties ranged (a Protoacc message type, a Menshen packet stream: ``space.
structure_space``) has work the loops cannot see (round-robin turns whose output counts
are expressions) and a fill around its size-bound stage. Both are on the trace's critical
paths (:mod:`.critical`): chains of commit records whose delays add up, each a lower
bound of the latency and exact at the sizes where it is critical. The paths critical at
the class's bounds, at scaled and random sizes are terms ``critical_path_k`` of the
maximum, each naming the transitions it passes; they assume the units fire in the order
of the records; their walk caps A.3's iteration at the sampled sizes. A link's stream
bundles round a credit loop get the loop's chain (:func:`.critical.loop_paths`), not its
A.3 bound. A trace of few sizes (Fig. 2's fetch group) has its whole critical path as
its by-phase form; a fully fixed input (a VTA program) is a number. A transition's
interval enters ḡ as its mean over the class's commits (Menshen's n_words per packet).

**Phases (beyond the paper).** §4.2's third assumption, a stable bottleneck, fails when
one part of a run must finish before the next starts (Darwin's traceback waits for the
whole matrix) or when the bottleneck moves with the data (JPEG blocks of different
compression). The symbolic run's records say which stage feeds which: a stage that takes
a whole stream at once, or a single token after single tokens, starts a new phase;
stages that pass a stream token by token share one. A phase's latency is its largest ε
plus the time its first token needs to pass the other stages (its fill); phases add up.
At run time the generated module walks each stream one period at a time (the fewest
tokens after which every stage has made whole commits: an MCU of 6 blocks for the JPEG
decoder), charges each period its bottleneck's summed gaps, and at a hand-over from a
back-end-bound period to a slow first stage credits the work the first stage did ahead
within its buffer (emit's ``_runs`` and ``_stream_shape``); runs of periods with one
bottleneck are the reported phases. A fixed structure whose sizes range (a Protoacc
message type, a Menshen packet stream) has no stream to split: its stages work on the
same tokens side by side (Protoacc's six field units; Menshen's parser and stages on
consecutive packets), so a sum of per-stage phases counts their overlap (up to 3x on
Hyperprotobench messages). Its one phase is the plain formula, path terms
included, so its phase-aware latency is never worse than the plain one.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

import sympy

from ...net import Model
from .classes import InputClass, input_classes, random_member
from .loops import Loop, find_loops
from .critical import (FEW_SYMBOLS, critical_path, critical_paths, loop_paths,
                       walked_latency)
from .one_shot import one_shot_stages, stage_terms, without_stages
from .schedule import period_schedule
from .simplify import simplified
from .solver import Solver
from .steady import stream_slopes
from ..space import (InputSpace, count_symbol, mean_symbol, space_constraints,
                    symbol_ranges, token_symbol)
from .symexec import DEFAULT_MAX_PATHS, AnalysisError


@dataclass(frozen=True)
class Gap:
    """What bounds one transition in one class (in the model's delay units: ticks
    where a model counts fractions of a cycle; latencies are in cycles)."""

    transition: str
    commits: object          # N_T
    gap: object              # ḡ_T
    effective: object        # ε_T = N_T·ḡ_T
    delay: object            # mean delay of its commits
    bound: str               # "delay", "2 servers", "interval", "loop via P"

    def __repr__(self) -> str:
        return f"Gap({self.transition}: N={self.commits}, g={self.gap} [{self.bound}])"


@dataclass(frozen=True)
class Phase:
    """A part of the run with one stable bottleneck (see the module docstring)."""

    transitions: tuple
    latency: object           # SymPy
    bottleneck: str
    stream: str | None = None  # the input place streamed through it, if any
    fill: object = 0          # SymPy: the first token's passage through the other stages

    def __repr__(self) -> str:
        return f"Phase({' -> '.join(self.transitions)}: {self.latency}, " \
               f"bottleneck {self.bottleneck})"


@dataclass(frozen=True)
class ClassInterface:
    """The interface of one input class."""

    input_class: InputClass
    gaps: tuple
    latency: object           # plain: max over transitions of ε_T
    bottleneck: str           # the transition with the largest ε_T on the class's sample
    phases: tuple
    phased_latency: object
    iterations: int
    grouped: tuple = ()       # the indices of the symbolic run's classes merged into it
    schedule: object = None   # a probed stream's timing recurrence (.schedule), if any

    def __repr__(self) -> str:
        merged = f" (classes {', '.join(map(str, self.grouped))})" if self.grouped else ""
        return f"ClassInterface({self.input_class.index}{merged}: latency = " \
               f"{self.latency}, bottleneck {self.bottleneck})"


@dataclass(frozen=True)
class Interface:
    """A model's performance interface over an input space."""

    model: str
    space: InputSpace = field(repr=False)
    classes: tuple
    seconds: float = field(default=0.0, compare=False)

    def __repr__(self) -> str:
        return f"Interface({self.model}: {len(self.classes)} class(es))"


# ---------------------------------------------------------------------- one class
def _mean_delays(cls: InputClass):
    n, total, interval = {}, {}, {}
    for c in cls.commits:
        n[c.transition] = n.get(c.transition, 0) + c.times
        total[c.transition] = total.get(c.transition, 0) + c.times * c.delay
        # the mean initiation interval: N_T of them add up to the unit's busy time
        # (Menshen's n_words per packet add up to Fig. 7's sum_nr_words)
        interval[c.transition] = interval.get(c.transition, 0) + c.times * c.interval
    return ({t: _simplify(v) for t, v in n.items()},
            {t: _simplify(total[t] / n[t]) for t in n},
            {t: _simplify(interval[t] / n[t]) for t in n})


def _max(*args):
    """sympy.Max, but over many symbols (a fixed structure's sums) left unevaluated after
    keeping the largest number and the distinct expressions: sympy's Max compares every
    pair of arguments symbolically, which took minutes on Menshen's 100-packet sums;
    :func:`prune_max` then drops what the solver proves never the largest."""
    args = [sympy.sympify(a) for a in args]
    if len(set().union(*(a.free_symbols for a in args))) <= FEW_SYMBOLS:
        return sympy.Max(*args)
    flat = []
    for a in args:
        flat += list(a.args) if isinstance(a, sympy.Max) else [a]
    nums = [a for a in flat if a.is_number]
    out = list(dict.fromkeys(a for a in flat if not a.is_number)) + \
        ([max(nums)] if nums else [])
    return out[0] if len(out) == 1 else sympy.Max(*out, evaluate=False)


def _simplify(expr):
    """sympy.simplify, skipped for numbers and (see FEW_SYMBOLS) long sums."""
    expr = sympy.sympify(expr)
    if not expr.free_symbols:
        return expr
    if len(expr.free_symbols) > FEW_SYMBOLS:
        return sympy.expand(expr)
    return simplified(expr)


def _samples(cls: InputClass, model: Model, solver: Solver, k: int = 4) -> list[dict]:
    from .classes import values_of
    rng = random.Random(cls.index)
    points = [values_of(cls.space, cls.sample)]
    for _ in range(k):
        member = random_member(cls, model, rng, solver)
        if member is not None:
            points.append(member[1])
    return points


def _dominant(expr, point):
    """The argument of a Max that is largest at ``point`` (the expression itself if it is
    no Max)."""
    if isinstance(expr, sympy.Max):
        return max((_dominant(a, point) for a in expr.args), key=lambda a: _value(a, point))
    return expr


def _value(expr, point) -> float:
    # xreplace, not subs: the point gives every symbol a number, and subs's pattern
    # matching is what made extraction slow on fixed structures of many tokens.
    expr = sympy.sympify(expr)
    return float(expr.xreplace({s: sympy.sympify(point[s]) for s in expr.free_symbols
                                if s in point}))


def prune_max(expr, solver: Solver, conditions, witnesses=()) -> object:
    """Drop the arguments of every Max that the space proves are never larger than
    another argument (``conditions`` are the class's). ``witnesses`` are points of the
    class (:func:`class_points`): an argument strictly the largest at one of them is
    kept without asking the solver, which would say the same (seconds a query on the
    PCIe decoder's sums, where it answers "possible" after finding such a point)."""
    if not expr.args:
        return expr
    args = [prune_max(a, solver, conditions, witnesses) for a in expr.args]
    if not isinstance(expr, sympy.Max):
        return expr.func(*args)
    keep = list(dict.fromkeys(args))
    # each argument's value at each witness, computed once when first needed: asked
    # argument by argument, they were |keep|² evaluations of the PCIe decoder's long sums
    # per witness (10 of its extraction's 23 s)
    values: dict = {}

    def at(k: int) -> dict:
        if k not in values:
            values[k] = {e: _exact_value(e, witnesses[k]) for e in keep}
        return values[k]

    for a in list(keep):
        rest = [b for b in keep if b is not a]
        if not rest or any(_largest_at(a, rest, at(k)) for k in range(len(witnesses))):
            continue
        # unevaluated: SymPy's Max would compare every pair of ``rest`` symbolically
        # first, for each ``a``, and ``>`` would try to decide the inequality from
        # assumptions (3.7 s of the PCIe decoder's 26, its long sums, never decided
        # there); the solver needs only the inequality
        rival = rest[0] if len(rest) == 1 else sympy.Max(*rest, evaluate=False)
        if not solver.possible(list(conditions) + [
                sympy.StrictGreaterThan(a, rival, evaluate=False)]):
            keep.remove(a)
    return _max(*keep) if keep else args[0]


def _exact_value(expr, point):
    """``expr`` at ``point`` computed exactly (SymPy numbers, not floats), or None where
    the point misses one of its symbols or the value is not a comparable number."""
    expr = sympy.sympify(expr)
    if not expr.free_symbols <= point.keys():
        return None
    value = expr.xreplace({s: sympy.sympify(point[s]) for s in expr.free_symbols})
    return value if value.is_number and value.is_comparable else None


def _largest_at(a, rest, values: dict) -> bool:
    """Whether ``a`` is strictly larger than every one of ``rest`` where ``values``
    ({argument: :func:`_exact_value` at one point}) were taken; False where one of them
    has none."""
    if any(values[e] is None for e in [a, *rest]):
        return False
    return all(bool(values[a] > values[b]) for b in rest)


def class_points(solver: Solver, conditions, points) -> list[dict]:
    """The points (symbol -> value) the solver agrees meet the class's ``conditions``
    and the space's constraints: every symbol pinned, so each query is decided at once.
    They are the witnesses :func:`prune_max` may keep an argument by."""
    return [p for p in points if solver.decided_possible(
        list(conditions) + [sympy.Eq(sym, value) for sym, value in p.items()])]


def factor_max(expr):
    """Max(n·a, n·b, ...) written n·Max(a, b, ...), as Fig. 4 reads."""
    if not isinstance(expr, sympy.Max) or len(expr.free_symbols) > FEW_SYMBOLS:
        return expr                 # (a polynomial gcd over a long sum takes minutes)
    factor = expr.args[0]
    for a in expr.args[1:]:
        factor = sympy.gcd(factor, a)
    if factor.is_number:
        return expr
    return factor * sympy.Max(*[simplified(a / factor) for a in expr.args])


COUPLING = "coupling"
"""The term of a stream's critical cycle where no loop explains its slope."""

ONE_SHOT = "one-shot, in series"
"""The bound of a one-shot stage's gap (:func:`in_series`): a phase before the stream,
not a stage that bounds it."""

PATH = "critical_path_"
"""The names of a fixed structure's path terms, numbered (see :mod:`.critical`)."""


def _probe_scaled(cls: InputClass, counts, delays, intervals):
    """A probed stream (``probe = K``): commit counts scaled from K tokens to ``n_P``, and
    the probe tokens' symbols read as the stream's means."""
    probes = [p for p in cls.space.places if p.probe]
    if not probes:
        return counts, delays, intervals
    if len(probes) > 1:
        raise AnalysisError("an interface takes at most one probed stream")
    ps = probes[0]
    means = {token_symbol(ps.place, i, q): mean_symbol(ps.place, q)
             for i in range(ps.probe) for q in ps.properties}
    scale = count_symbol(ps.place) / ps.probe
    return ({t: simplified(n * scale) for t, n in counts.items()},
            {t: simplified(sympy.sympify(d).subs(means)) for t, d in delays.items()},
            {t: sympy.sympify(v).subs(means) for t, v in intervals.items()})


def _largest(counts, gap, point) -> float:
    """max_T N_T·ḡ_T at ``point``."""
    return max(_value(counts[t], point) * _value(gap[t], point) for t in gap)


def _slope(counts, gap, point, n_sym) -> float:
    """d(max_T N_T·ḡ_T)/dn at ``point``, numerically."""
    def total(n):
        return _largest(counts, gap, {**point, n_sym: n})
    n = float(point[n_sym])
    return (total(2 * n) - total(n)) / n


def max_effective(gaps, solver: Solver, conditions, witnesses=()):
    """max_T ε_T, simplified: with one commit count N for all, N·max_T ḡ_T (Fig. 4's
    shape), pruned where the class proves a term never the largest."""
    gaps = [g for g in gaps if g.effective != 0]
    if not gaps:
        return sympy.Integer(0)
    counts = {simplified(g.commits) for g in gaps}
    if len(counts) == 1:
        (n,) = counts
        return n * prune_max(_max(*[g.gap for g in gaps]), solver, conditions, witnesses)
    return factor_max(prune_max(_max(*[g.effective for g in gaps]), solver, conditions,
                                witnesses))


def class_interface(model: Model, cls: InputClass, solver: Solver, loops: list[Loop],
                    max_iterations: int = 10, tolerance: float = 1e-3) -> ClassInterface:
    """A.3 for one class; see the module docstring. Iteration stops when no ḡ moves by
    more than ``tolerance`` (relative) on the sampled inputs, or after
    ``max_iterations`` rounds."""
    transitions = {t.name: t for t in model.transitions}
    counts, delays, intervals = _probe_scaled(cls, *_mean_delays(cls))
    gap, bound = {}, {}
    for name in counts:
        k = transitions[name].concurrency
        base = delays[name] if k is None else delays[name] / k
        if k is None:
            base = 0
        gap[name] = _max(base, intervals[name])
        bound[name] = "interval" if k is None else "delay" if k == 1 else f"{k} servers"
    unlooped = {name: (_simplify(gap[name]), bound[name]) for name in gap}
    points = _samples(cls, model, solver)
    active = [lp for lp in loops if all(t in counts for t in lp.transitions)]
    iterations = 0
    schedule = period_schedule(model, cls.commits, cls.space)
    slopes, assumes = stream_slopes(model, cls, schedule, points)
    # a fixed structure's latency at the points, from its records: A.3 may not pass it
    ceiling = walked_latency(model, cls, points) if sized_structure(cls.space) else None
    for iterations in range(1, max_iterations + 1):
        before = [[_value(gap[t], p) for t in gap] for p in points]
        previous = (dict(gap), dict(bound))
        for lp in active:
            c = min(lp.factors)
            # Each ḡ enters Δ as its term that is largest on the class's sample, so the
            # formulas stay flat maxima of simple terms instead of growing nested trees.
            delta = sum((delays[t] + _dominant(gap[t], points[0]) * (f / c - 1)
                         for t, f in zip(lp.transitions, lp.factors)), sympy.Integer(0))
            for t, f in zip(lp.transitions, lp.factors):
                candidate = delta / f
                if any(_value(candidate, p) > _value(gap[t], p) + 1e-9 for p in points):
                    bound[t] = f"loop via {lp.place}"
                gap[t] = _max(gap[t], candidate)
        if slopes and any(_slope(counts, gap, p, n) > float(s.cycles_per_token) * 1.001
                          for p, n, s in slopes):
            # Past the recurrence's cycle mean at a sampled point: A.3's loops overshoot
            # where a loop's factors differ (F/C > 1); keep the last estimate below it.
            gap, bound = previous
            break
        if ceiling and any(_largest(counts, gap, p) > c * 1.001 for p, c in zip(points, ceiling)):
            gap, bound = previous
            break
        after = [[_value(gap[t], p) for t in gap] for p in points]
        if all(abs(x - y) <= tolerance * max(abs(y), 1) for xs, ys in zip(after, before)
               for x, y in zip(xs, ys)):
            break
    conds = list(cls.conditions)
    witnesses = class_points(solver, conds, points)
    gaps = []
    for name in counts:
        g = prune_max(_simplify(gap[name]), solver, conds, witnesses)
        gaps.append(Gap(name, counts[name], g, _simplify(counts[name] * g),
                        delays[name], bound[name]))
    latency = max_effective(gaps, solver, conds, witnesses)
    # Beyond the paper: a coupling the loops miss (a stage reading a later stage's slots)
    # shows as a critical cycle of the recurrence heavier than the formula's slope.
    missing = [s for p, n, s in slopes or () if _slope(
        counts, {x.transition: x.gap for x in gaps}, p, n) < float(s.cycles_per_token) * 0.999]
    if missing:
        n = slopes[0][1]
        term = prune_max(_max(*dict.fromkeys(s.per_token for s in missing)), solver, conds,
                         witnesses)
        cycles = "; ".join(dict.fromkeys(s.cycle.describe() for s in missing))
        gaps.append(Gap(COUPLING, n, term, _simplify(n * term), 0,
                        f"critical cycle {cycles}; assumes {assumes}"))
        latency = max_effective(gaps, solver, conds, witnesses)
    path = critical_path(model, cls)
    if path is None and sized_structure(cls.space):
        # Beyond the paper: a fixed structure's work the loops cannot see (Protoacc's
        # round-robin turns) and the fill around its size-bound stage are on the trace's
        # critical paths; each is a lower bound, exact where it is critical. (A trace of
        # few sizes has its whole critical path as its by-phase form instead.)
        looped = loop_paths(model, cls, active)
        if looped:      # exact where A.3's loop bound, its asymptote, charges the credits
            places = {f"loop via {chain.loop}" for chain in looped}
            gaps = [g if g.bound not in places else replace(
                g, gap=unlooped[g.transition][0], bound=unlooped[g.transition][1],
                effective=_simplify(g.commits * unlooped[g.transition][0])) for g in gaps]
        chains = critical_paths(model, cls, symbol_ranges(cls.space), points) + looped
        for k, chain in enumerate(chains):
            gaps.append(Gap(f"{PATH}{k}", 1, chain.latency, chain.latency, 0,
                            chain.describe()))
        latency = max_effective(gaps, solver, conds, witnesses)
    sample = points[0]
    top = max(gaps, key=lambda g: _value(g.effective, sample))
    if path is not None:
        path = prune_max(path, solver, conds, witnesses)
        # A fixed structure run token by token: its latency is the trace's critical path.
        phases = [Phase(tuple(dict.fromkeys(c.transition for c in cls.commits)), path,
                        top.transition)]
    elif sized_structure(cls.space):
        # Nothing to split: the stages of a fixed structure overlap on its tokens, and
        # summing them as phases counted that overlap up to 3 times (Protoacc's field
        # units run side by side); its one phase is the plain formula.
        phases = [Phase(tuple(g.transition for g in gaps), latency, top.transition)]
    else:
        phases = _phases(model, cls, gaps, solver)
    phased = sympy.Add(*[p.latency for p in phases]) if phases else latency
    if model.ticks_per_cycle != 1:
        # Delays count ticks (VTA: eighths of a cycle); the interface speaks cycles.
        tick = model.ticks_per_cycle
        latency, phased = latency / tick, phased / tick
        phases = [Phase(p.transitions, p.latency / tick, p.bottleneck, p.stream,
                        p.fill / tick) for p in phases]
    return ClassInterface(cls, tuple(gaps), latency, top.transition, tuple(phases),
                          phased, iterations, schedule=schedule)


def sized_structure(space: InputSpace) -> bool:
    """A fixed structure whose token sizes range (a Protoacc message type, a Menshen
    packet stream): no stream, some property ranged. A fully fixed input (a VTA
    program) is not one: its stages do wait for each other (loads before computes)."""
    return not any(p.stream for p in space.places) and bool(symbol_ranges(space))


def _phases(model: Model, cls: InputClass, gaps: list[Gap], solver: Solver) -> list[Phase]:
    """Group the class's commit records into phases (see the module docstring)."""
    by_name = {g.transition: g for g in gaps}
    stream_places = {p.place for p in cls.space.places if p.stream}
    groups = []                   # [kind, [records], stream place]
    where = {}
    for i, c in enumerate(cls.commits):
        src = [s for s in c.sources if s >= 0]
        if c.bundled:
            feeder = [s for s in src if cls.commits[s].bundled]
            if feeder and where.get(feeder[0]) == len(groups) - 1:
                groups[-1][1].append(c)
            else:
                origin = next((p for p in stream_places if -1 in c.sources), None)
                groups.append(["stream", [c], origin])
        else:
            whole = any(not sympy.sympify(v).is_Integer for v in c.consumed)
            if whole or not groups:               # a synchronisation: all of a stream
                groups.append(["single", [c], None])
            else:
                groups[-1][1].append(c)
        where[i] = len(groups) - 1
    phases = []
    for kind, records, origin in groups:
        names = list(dict.fromkeys(c.transition for c in records))
        chain = all(sympy.sympify(c.times) == 1 for c in records) and all(
            cls.commits.index(prev) in c.sources for prev, c in zip(records, records[1:]))
        if kind == "single" and chain:              # one token after another: in sequence
            latency = sympy.Add(*[c.delay for c in records])
            top = max(records, key=lambda c: _value(c.delay, _point(cls))).transition
            phases.append(Phase(tuple(names), _simplify(latency), top, None, 0))
            continue
        probed = [p.place for p in cls.space.places if p.probe]
        if origin is None and kind == "single" and len(probed) == 1:
            (origin,) = probed                      # a probed stream, token by token
        if origin is not None and COUPLING in by_name:
            names.append(COUPLING)          # the critical cycle belongs to the stream
        eps = {n: by_name[n].effective for n in names}
        top = max(names, key=lambda n: _value(eps[n], _point(cls)))
        body = max_effective([by_name[n] for n in names], solver, list(cls.conditions))
        # The first token passes every stage; the others follow one bottleneck gap apart.
        n_sym = count_symbol(origin) if origin is not None else None
        per_token = [by_name[n].gap if n_sym is None else
                     _simplify(by_name[n].gap * by_name[n].commits / n_sym) for n in names]
        slowest = prune_max(sympy.Max(*per_token), solver, list(cls.conditions))
        fill = sympy.Add(*[by_name[n].delay for n in names]) - slowest
        fill = prune_max(_simplify(sympy.Max(fill, 0)), solver, list(cls.conditions))
        phases.append(Phase(tuple(names), body + fill, top, origin, fill))
    return phases


def _point(cls: InputClass) -> dict:
    from .classes import values_of
    return values_of(cls.space, cls.sample)


# ---------------------------------------------------------------------- the model
def extract_interface(model: Model, space: InputSpace, *, max_classes: int = DEFAULT_MAX_PATHS,
                      max_iterations: int = 10, progress=None) -> Interface:
    """The performance interface of ``model`` over ``space``: one formula per class;
    ``progress(text)`` is told each step done (the CLI's report of where a run stopped)."""
    import time
    t0 = time.perf_counter()
    tick = progress or (lambda text: None)
    check_interface_request(model, space)
    tick("finding the input classes")
    found = input_classes(model, space, max_classes=max_classes, by_token=False)
    classes = [c for c in found if not c.stuck]
    if not classes:
        raise AnalysisError(f"space = {space.named} is invalid for an interface: every input "
                            f"in it deadlocks ({', '.join(found[0].stuck)} keep work), so "
                            f"no class has a latency; see `accelperf lpn classes`")
    solver = Solver(space_constraints(space))
    loops = find_loops(model)
    stages = one_shot_stages(model, space)
    tick(f"{len(classes)} input class(es) found")

    def derived(i, c):
        ci = in_series(model, c, stages, solver, loops, max_iterations)
        tick(f"class {i + 1}/{len(classes)} derived: latency = {str(ci.latency):.80}")
        return ci
    per_class = tuple(derived(i, c) for i, c in enumerate(classes))
    return Interface(model.name, space, group_classes(per_class), time.perf_counter() - t0)


def in_series(model: Model, cls: InputClass, stages: dict, solver: Solver,
              loops: list[Loop], max_iterations: int = 10) -> ClassInterface:
    """:func:`class_interface` with the net's one-shot stages ({stage: gate place},
    :mod:`.one_shot`) first, in series: a phase of their own, added to both forms."""
    ci = class_interface(model, without_stages(cls, stages), solver, loops, max_iterations)
    terms = stage_terms(cls, stages)
    front = tuple(Phase((n,), total / model.ticks_per_cycle, n) for n, _, _, total in terms)
    gaps = tuple(Gap(name, n, d, total, d, ONE_SHOT) for name, n, d, total in terms)
    series = sympy.Add(*[p.latency for p in front])
    return replace(ci, input_class=cls, gaps=gaps + ci.gaps, latency=ci.latency + series,
                   phases=front + ci.phases, phased_latency=ci.phased_latency + series)


def check_interface_request(model: Model, space: InputSpace | None = None) -> None:
    """Issue 23's bad input, before any work: a model with no start place (an interface
    prices the inputs Ψ puts there) and a space with no input (its constraints cannot all
    hold, so every class would be empty)."""
    if model.start is None:
        raise AnalysisError(f"model = {model.name!r} is invalid for an interface: it has no "
                            f"start place (set net.start to the place its input fills)")
    if space is not None and not Solver(space_constraints(space)).possible([]):
        raise AnalysisError(f"space = {space.named} is invalid: no input meets its ranges and "
                            f"constraints ({'; '.join(space.constraints) or 'ranges'}), so "
                            f"every input class would be empty")


def group_classes(classes) -> tuple:
    """Issue 23 item 3: classes whose plain and by-phase formulas are the same expression
    become one, whose condition is the disjunction of theirs (Fig. 2's pipeline has a
    class per order of loads and computes, 2^n, and many price alike). A merged class
    keeps the first member's gaps, phases and sample, and lists its members' indices in
    ``grouped``; classes are renumbered from 0 in their first member's order."""
    groups: dict = {}
    for ci in classes:
        key = (sympy.srepr(ci.latency), sympy.srepr(ci.phased_latency))
        groups.setdefault(key, []).append(ci)
    out = []
    for members in groups.values():
        first = members[0]
        conditions = first.input_class.conditions
        if len(members) > 1:
            conditions = (sympy.Or(*[sympy.And(*m.input_class.conditions)
                                     for m in members]),)
        cls = replace(first.input_class, index=len(out), conditions=conditions)
        grouped = tuple(m.input_class.index for m in members) if len(members) > 1 else ()
        out.append(replace(first, input_class=cls, grouped=grouped))
    return tuple(out)


__all__ = ["Interface", "ClassInterface", "Gap", "Phase", "Loop", "find_loops",
           "extract_interface", "class_interface", "in_series", "group_classes",
           "check_interface_request", "sized_structure"]
