"""Interfaces over a stream whose tokens' work depends on their values (issue 33): a
packet engine whose block count is ``ceil(bytes/16)``, priced for any number of packets.

A stream bundle (:mod:`.symexec`) stands for ``n_P`` alike tokens by their means, which
is exact only when every count is linear in the token's values; ``ceil(bytes/16)`` of a
mean is not the mean of the ceilings, so such a stream is refused there
(:class:`.symexec.StreamValueError`). Here the stream is priced token by token instead:

1. **One token's classes.** The class analysis runs on the space with the stream's count
   set to 1, every property still ranged: the token's own symbols (``packets_0_bytes``)
   and its commit counts per transition, ``N_T(t)`` (``ceil(bytes/16)`` GHASH commits),
   symbolic; a class per way the token can run (a last DMA burst of 1, 2, 3 or 4 blocks).
2. **A stage's work per token.** ``w_T(t)``: the sum of its commits' delays over its
   servers, at least ``N_T·interval`` (a pipelined unit is busy one interval per item):
   the time the stage is occupied by the token, derived from the records like A.3's
   ``N_T·ḡ_T``. Summed over the stream it is the issue's per-token sum,
   ``Σ_i 4·ceil(bytes_i/16)`` for GHASH.
3. **A token alone: fill and drain.** When each stage first starts (``S_T``), last starts
   and last commits (``F_T``) with the token alone in the engine: measured by the
   reference simulator at points of the class and written as an affine function of the
   class's commit counts and works (exact rationals; every point must fit exactly, else
   the class is marked ``exact=False`` with its largest residual). ``S_T`` is the stage's
   *fill* (the first item's latency to it), ``L − F_T`` its *drain*.
4. **The stream.** Tokens pass the stages in order, each stage one token after the other
   (units fire in the order of the records). For token ``i`` and stage ``T`` with
   feeding stages ``P`` (transitions whose outputs ``T`` takes):

       start_T(i)  = max(free_T(i−1), start_P(i) + S_T(t_i) − S_P(t_i))
       finish_T(i) = max(start_T(i) + w_T(t_i), finish_P(i) + F_T(t_i) − F_P(t_i))
       free_T(i)   = finish_T(i) − (F_T − R_T)(t_i)

   where ``R_T`` is when the stage could take the next token alone (its last commit for
   one server; its last start plus one issue slot for a pipelined unit). A max-plus
   recurrence like a tandem line's: with one token it gives the token's own latency
   (step 3), and with many, a stage that is busy with earlier tokens delays the later
   ones. The latency is the last ``finish`` of a stage that fills the done place.

**Terms.** The readable interface is the maximum over stages of
``term_T = S_T(t_1) + Σ_i w_T(t_i) + (L − F_T)(t_n)``: the stage's fill on the first
token, its work on all, its drain on the last. Each is a lower bound of the recurrence
when the stage never idles between its first and last token; the largest is the
bottleneck, and the one that dominates per class names it ("ghash; header below 80 B").
``--check`` prints every term beside the simulation.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

import sympy

from ...net import Model
from .classes import input_classes, marking_of, one_token_space, tokens_for
from .solver import Solver
from .simplify import simplified
from ..space import InputSpace, space_constraints, symbol_ranges, token_symbol
from .symexec import DEFAULT_MAX_PATHS, AnalysisError, StreamValueError

FIT_POINTS = 10
"""Points of a class at which a token alone is simulated to fit its stage times."""


@dataclass(frozen=True)
class Stage:
    """One transition's share of one token (SymPy in the token's symbols)."""

    transition: str
    commits: object          # N_T(t)
    work: object             # w_T(t): cycles the stage is occupied by the token
    start: object            # S_T(t): first start, token alone (the fill)
    finish: object           # F_T(t): last commit, token alone
    release: object          # R_T(t): when it could take the next token, token alone
    feeds: tuple = ()        # the nearest timed stages whose outputs it takes
    timed: bool = True       # its times alone are affine in the class's counts (exact)

    def __repr__(self) -> str:
        return f"Stage({self.transition}: work {self.work}, start {self.start}, " \
               f"finish {self.finish})"


@dataclass(frozen=True)
class TokenClass:
    """One class of the stream's tokens: its conditions and stages."""

    index: int
    conditions: tuple
    stages: tuple
    latency: object           # a token alone
    bottleneck: str           # the stage with the most work per token over the class
    sample: dict = field(default_factory=dict)
    exact: bool = True        # every fitted point matched exactly
    residual: float = 0.0     # the largest misfit, cycles, when not

    def __repr__(self) -> str:
        conds = " and ".join(str(c) for c in self.conditions) or "every token"
        return f"TokenClass({self.index}: {conds}; bottleneck {self.bottleneck})"


@dataclass(frozen=True)
class StreamInterface:
    """The interface of a model over a stream of ``count`` tokens of ``place``."""

    model: str
    space: InputSpace
    place: str
    count: tuple
    properties: tuple          # the token's properties, in the model's order
    classes: tuple
    seconds: float = 0.0

    def __repr__(self) -> str:
        return f"StreamInterface({self.model}: {len(self.classes)} token class(es) over " \
               f"{self.count[0]}..{self.count[1]} tokens of {self.place})"

    def symbol(self, prop: str):
        return token_symbol(self.place, 0, prop)

    def values(self, token: dict) -> dict:
        return {self.symbol(p): token[p] for p in self.properties}

    def token_class(self, token: dict) -> TokenClass:
        point = self.values(token)
        for c in self.classes:
            if all(bool(sympy.sympify(cond).xreplace(point)) for cond in c.conditions):
                return c
        raise AnalysisError(f"token = {token!r} is in no class of the interface")

    def stage_values(self, token: dict, timed_only: bool = False) -> dict:
        """{stage: (work, start, finish, release)} for one token, in cycles."""
        c, point = self.token_class(token), self.values(token)
        return {s.transition: tuple(float(sympy.sympify(e).xreplace(point)) for e in
                                    (s.work, s.start, s.finish, s.release))
                for s in c.stages if s.timed or not timed_only}

    def terms(self, tokens: list) -> dict:
        """{stage: fill on the first token + work on all + drain on the last}."""
        per = [self.stage_values(t) for t in tokens]
        last = self.token_class(tokens[-1])
        alone = float(sympy.sympify(last.latency).xreplace(self.values(tokens[-1])))
        timed = {s.transition for s in last.stages if s.timed}
        out = {}
        for name, (_, start, _, _) in per[0].items():
            work = sum(p[name][0] for p in per if name in p)
            if name in timed and name in per[-1] and \
                    name in {s.transition for s in self.token_class(tokens[0]).stages
                             if s.timed}:
                work += start + alone - per[-1][name][2]     # its fill and drain
            out[name] = work
        return out

    def latency(self, tokens: list) -> float:
        """The stream's latency by the recurrence of the module docstring."""
        return stream_latency([(self.stage_values(t, True), self._feeds(t)) for t in tokens])

    def _feeds(self, token: dict) -> dict:
        return {s.transition: s.feeds for s in self.token_class(token).stages}


def stream_latency(tokens: list) -> float:
    """The recurrence over tokens given as ({stage: (work, start, finish, release)},
    {stage: feeding stages}); stages taken in the order of their start alone."""
    free: dict = {}
    end = 0.0
    for values, feeds in tokens:
        start, finish = {}, {}
        for name in sorted(values, key=lambda n: values[n][1]):
            work, s, f, r = values[name]
            first = s
            last = 0.0
            for p in feeds.get(name, ()):
                if p in start:
                    first = max(first, start[p] + s - values[p][1])
                    last = max(last, finish[p] + f - values[p][2])
            start[name] = max(free.get(name, 0.0), first)
            finish[name] = max(start[name] + work, last)
            free[name] = finish[name] - (f - r)
            end = max(end, finish[name])
    return end


# ---------------------------------------------------------------------- extraction
def interface_for(model: Model, space: InputSpace, *, max_classes: int = DEFAULT_MAX_PATHS,
                  progress=None, before_stream=None):
    """The interface of ``model`` over ``space``: by classes of the whole input
    (:func:`.interface.extract_interface`), or, where a per-token value steers the net
    and the space has one stream, token by token (:class:`StreamInterface`);
    ``progress(text)`` is told each step done. ``before_stream()``, when given, is called
    once the stream is found and before it is priced: it may raise to refuse a request
    a stream cannot meet."""
    from .interface import extract_interface
    try:
        return extract_interface(model, space, max_classes=max_classes, progress=progress)
    except StreamValueError:
        if one_token_space(space) is None:
            raise
    if before_stream is not None:
        before_stream()
    if progress is not None:
        progress("pricing the stream token by token")
    return extract_stream_interface(model, space, max_classes=max_classes)


def extract_stream_interface(model: Model, space: InputSpace, *,
                             max_classes: int = DEFAULT_MAX_PATHS) -> StreamInterface:
    """The token-by-token interface of ``model`` over ``space``'s one stream."""
    began = time.perf_counter()
    one = one_token_space(space)
    if one is None:
        raise AnalysisError(f"space = {space.named} is invalid for a token-by-token interface: "
                            f"it needs exactly one place with a token-count range")
    ps = next(p for p in space.places if p.stream)
    found = input_classes(model, one, max_classes=max_classes, by_token=False)
    stuck = [c for c in found if c.stuck]
    if stuck:
        raise AnalysisError(f"space = {space.named} is invalid for an interface: a token "
                            f"{stuck[0].sample} alone leaves work in "
                            f"{', '.join(stuck[0].stuck)}")
    solver = Solver(space_constraints(one))
    props = model.places[model.place_id(ps.place)].token_type.properties
    classes = tuple(_token_class(model, one, c, solver, i) for i, c in enumerate(found))
    return StreamInterface(model.name, space, ps.place, ps.count, props, classes,
                           time.perf_counter() - began)


def _work(model: Model, records, name: str):
    t = model.transitions[model.transition_id(name)] if hasattr(model, "transition_id") \
        else next(u for u in model.transitions if u.name == name)
    mine = [r for r in records if r.transition == name]
    busy = sympy.Add(*[r.times * r.delay for r in mine])
    slots = sympy.Add(*[r.times * r.interval for r in mine])
    if t.concurrency == 1:
        return simplified(busy)
    if t.concurrency is None:
        return simplified(slots)
    return simplified(sympy.Max(busy / t.concurrency, slots))


def _feeds(model: Model) -> dict:
    producers: dict = {}
    for t in model.transitions:
        for arc in t.outputs + t.routes:
            producers.setdefault(arc.place, set()).add(t.name)
    out = {}
    for t in model.transitions:
        out[t.name] = tuple(sorted({p for pid in t.inputs[:t.user_inputs]
                                    for p in producers.get(pid, ()) if p != t.name}))
    return out


def _timed_feeds(feeds: dict, names: list, exact: dict) -> dict:
    """Each timed stage's nearest timed ancestors: a stage whose times alone are not
    affine in the class's counts (a feeder held back by a full FIFO, its pace set
    downstream) is passed through, not priced; its work still makes a term."""
    def timed(n, seen=()):
        out = set()
        for p in feeds.get(n, ()):
            if p not in names or p in seen:
                continue
            out |= {p} if exact[p] else timed(p, seen + (p,))
        return out
    return {n: tuple(sorted(timed(n))) for n in names}


def _token_class(model: Model, space: InputSpace, cls, solver: Solver, index: int):
    counts = {name: simplified(n) for name, n in cls.commit_counts().items()}
    names = [t.name for t in model.transitions if counts.get(t.name, 0) != 0]
    works = {n: _work(model, cls.commits, n) for n in names}
    features = list(dict.fromkeys(e for e in list(counts.values()) + list(works.values())
                                  if sympy.sympify(e).free_symbols))
    points = _points(model, space, cls, solver)
    timed = [(p, _alone(model, space, p)) for p in points]
    fits, misses = {}, {}
    for what in ("start", "finish", "last_start", "latency"):
        for name in names if what != "latency" else ["(end)"]:
            ys = [tm[what] if what == "latency" else tm[what][name] for _, tm in timed]
            expr, miss = _affine(features, [p for p, _ in timed], ys)
            fits[what, name], misses[what, name] = expr, miss
    exact = {n: all(misses[what, n] == 0 for what in ("start", "finish", "last_start"))
             for n in names}
    feeds = _timed_feeds(_feeds(model), names, exact)
    stages = []
    for n in names:
        t = next(u for u in model.transitions if u.name == n)
        if t.concurrency == 1:
            release = fits["finish", n]
        else:
            release = simplified(fits["last_start", n] + works[n] / counts[n])
        stages.append(Stage(n, counts[n], works[n], fits["start", n], fits["finish", n],
                            release, feeds[n], exact[n]))
    latency = fits["latency", "(end)"]
    residual = max([misses["latency", "(end)"]] +
                   [misses[w, n] for w in ("start", "finish") for n in names if exact[n]])
    point = points[0]
    bottleneck = max(names, key=lambda n: float(sympy.sympify(works[n]).xreplace(point)))
    return TokenClass(index, tuple(cls.conditions), tuple(stages), latency, bottleneck,
                      cls.sample, residual == 0, residual)


def _points(model: Model, space: InputSpace, cls, solver: Solver) -> list:
    """Distinct points of the class: its sample, then random members, then the lowest
    and highest of each property the class allows (found by sampling)."""
    ranges = symbol_ranges(space)
    rng = random.Random(cls.index)
    seen, out = set(), []
    candidates = [solver.sample(list(cls.conditions), ranges, prefer_low=list(ranges))]
    candidates += [solver.sample(list(cls.conditions), ranges, rng)
                   for _ in range(FIT_POINTS)]
    for p in candidates:
        if p is None:
            continue
        key = tuple(sorted((str(k), v) for k, v in p.items()))
        if key not in seen:
            seen.add(key)
            out.append(p)
    if not out:
        raise AnalysisError(f"input class {cls.index} has no member the solver can find")
    return out


def _alone(model: Model, space: InputSpace, point: dict) -> dict:
    """A token alone, simulated: per stage its first start, last start, last commit."""
    from ...sim import simulate
    tokens = tokens_for(space, model, point)
    run = simulate(model, marking_of(model, tokens), trace=True)
    if run.latency is None:       # the symbolic run saw no stuck work: none reached done
        done = model.places[model.done].name
        raise AnalysisError(f"space = {space.named} is invalid for an interface: a token "
                            f"{tokens} alone never reaches the done place {done!r}; narrow "
                            f"the space to inputs the model finishes")
    start, last_start, finish = {}, {}, {}
    for f in run.trace:
        start.setdefault(f.transition, f.start)
        last_start[f.transition] = f.start
        finish[f.transition] = max(finish.get(f.transition, 0), f.end)
    return {"start": start, "last_start": last_start, "finish": finish,
            "latency": run.latency}


def _affine(features: list, points: list, ys: list):
    """c0 + Σ c_j·f_j through the points exactly (rational least squares over the
    features independent at these points); (expression, largest misfit)."""
    cols, kept = [[sympy.Integer(1)] * len(points)], [sympy.Integer(1)]
    for f in features:
        col = [sympy.sympify(f).xreplace({s: sympy.sympify(p[s]) for s in p})
               for p in points]
        trial = sympy.Matrix(cols + [col]).T
        if trial.rank() > len(cols):
            cols.append(col)
            kept.append(f)
    a = sympy.Matrix(cols).T
    b = sympy.Matrix([sympy.nsimplify(y) for y in ys])
    coef = (a.T * a).LUsolve(a.T * b)
    expr = sympy.Add(*[c * f for c, f in zip(coef, kept)])
    misfit = max(abs(float((a * coef - b)[i])) for i in range(len(points)))
    return sympy.nsimplify(simplified(expr)), misfit


__all__ = ["Stage", "TokenClass", "StreamInterface", "extract_stream_interface", "interface_for",
           "stream_latency"]
