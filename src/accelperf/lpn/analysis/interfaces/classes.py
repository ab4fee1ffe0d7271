"""Input classes (OSDI'24 §4.1, appendix A.1–A.2).

An input class is a set of inputs whose runs have the same *abstract trace*: every
transition commits the same number of times, and its n-th commit takes and gives the same
numbers of tokens (A.1's α(e), up to harmless reorderings, which comparing per transition
ignores). :func:`input_classes` finds them by symbolic execution (:mod:`.symexec`); each
class (:class:`.input_class.InputClass`) carries its conditions in readable form and a
sample input drawn by Z3.
"""

from __future__ import annotations

import random
from dataclasses import replace

import sympy

from ...net import Marking, Model
from ..input_class import InputClass
from .solver import Solver
from .simplify import simplified
from ..space import InputSpace, count_symbol, mean_symbol, symbol_ranges, token_symbol
from .symexec import DEFAULT_MAX_PATHS, Commit, Explorer, StreamValueError


def tokens_for(space: InputSpace, model: Model, values: dict, rng=None) -> dict:
    """The tokens ({place: [{prop: value}]}) of the input with these symbol values; a
    stream gets ``n_P`` tokens whose properties have the given means (spread as evenly
    as whole numbers allow, or at random around them with ``rng``)."""
    out = {}
    for ps in space.places:
        props = model.places[model.place_id(ps.place)].token_type.properties
        if not ps.stream:
            out[ps.place] = [{p: ps.fixed(i)[p] if p in ps.fixed(i) else
                              int(values[token_symbol(ps.place, i, p)]) for p in props}
                             for i in range(ps.count[0])]
            continue
        n = int(values[count_symbol(ps.place)])
        columns = {}
        for p in props:
            lo, hi = ps.properties[p]
            total = int(round(sympy.Rational(values[mean_symbol(ps.place, p)]) * n))
            column = [total // n + (1 if i < total % n else 0) for i in range(n)] if n else []
            if rng is not None and n > 1:      # move units between tokens, same total
                for _ in range(n):
                    i, j = rng.randrange(n), rng.randrange(n)
                    k = rng.randint(0, min(column[i] - lo, hi - column[j]))
                    column[i] -= k
                    column[j] += k
            columns[p] = column
        out[ps.place] = [{p: columns[p][i] for p in props} for i in range(n)]
    return out


def marking_of(model: Model, tokens: dict) -> Marking:
    """A marking for the simulator from tokens in the space's terms
    ({place: [{property: value}]}, :meth:`.Model.with_tokens`)."""
    return model.with_tokens(tokens)


def values_of(space: InputSpace, tokens: dict) -> dict:
    """The symbol values of an input given as tokens (counts and means for streams)."""
    out = {}
    for ps in space.places:
        toks = tokens.get(ps.place, [])
        if ps.stream:
            out[count_symbol(ps.place)] = len(toks)
            for p in ps.properties:
                out[mean_symbol(ps.place, p)] = sympy.Rational(sum(t[p] for t in toks),
                                                               max(1, len(toks)))
        else:
            for i, t in enumerate(toks):
                for p in ps.properties:
                    out[token_symbol(ps.place, i, p)] = t[p]
    return out


def random_member(cls: InputClass, model: Model, rng: random.Random,
                  solver: Solver | None = None, max_count: int = 400,
                  multiples: dict | None = None):
    """A random input of the class as (tokens, symbol values); streams get at most
    ``max_count`` tokens, so the simulator stays quick, and a stream named in
    ``multiples`` ({place: k}) a multiple of k (whole periods: a JPEG stream of whole
    MCUs; others deadlock). None when no such input is found."""
    space = cls.space
    ranges = dict(symbol_ranges(space))
    extra = []
    for ps in space.places:
        if ps.stream:
            sym = count_symbol(ps.place)
            hi = min(ps.count[1], max(ps.count[0], max_count))
            k = (multiples or {}).get(ps.place, 1)
            if k > 1:
                whole = range(-(-ps.count[0] // k), hi // k + 1)
                if not whole:
                    return None
                n = k * rng.choice(whole)         # drawn here: z3 pins one value at a time
                ranges[sym] = (n, n)
                extra.append(sympy.Eq(sym, n))
            else:
                ranges[sym] = (ps.count[0], hi)
                extra.append(sym <= hi)
    solver = solver or Explorer(model, space).solver
    values = solver.sample(list(cls.conditions) + extra, ranges, rng)
    if values is None:
        return None
    tokens = tokens_for(space, model, values, rng)
    return tokens, values_of(space, tokens)


def one_token_space(space: InputSpace, declared: bool = False) -> InputSpace | None:
    """``space`` with its one stream (a count range, not probed, no fixed structure) cut
    to a single token, every property still ranged; None when it has no such stream or
    several, or (``declared``) the stream does not say ``by_token = true``: what a
    stream priced token by token (:mod:`.token_stream`) is made of."""
    streams = [p for p in space.places if p.stream]
    if len(streams) != 1 or streams[0].probe or streams[0].values or \
            (declared and not streams[0].by_token):
        return None
    ps = streams[0]
    return replace(space, places=tuple(replace(p, count=(1, 1)) if p is ps else p
                                       for p in space.places),
                   constraints=(), origin=f"{space.origin} (one token of {ps.place})")


def input_classes(model: Model, space: InputSpace, *, max_classes: int = DEFAULT_MAX_PATHS,
                  by_token: bool = True, over=None) -> list[InputClass]:
    """The input classes of ``model`` over ``space`` (OSDI'24 A.2), each with a sample.
    Where a token's value steers the net and the space's one stream says ``by_token =
    true`` (issue 33), the classes are those of one token of it (``by_token``; an
    interface prices such a stream token by token, :mod:`.token_stream`).

    Raises ExplosionError past ``max_classes`` paths or once ``over()`` says a caller's
    time budget ran out, AnalysisError for nets the analysis cannot handle (named)."""
    try:
        explorer = Explorer(model, space, max_paths=max_classes, over=over)
        paths = explorer.explore()
    except StreamValueError:
        one = one_token_space(space, declared=True) if by_token else None
        if one is None:
            raise
        return input_classes(model, one, max_classes=max_classes, by_token=False, over=over)
    ranges = symbol_ranges(space)
    prefer = [count_symbol(p.place) for p in space.places if p.stream]
    classes = []
    for i, path in enumerate(sorted(paths, key=lambda p: [str(c) for c in p.conditions])):
        values = explorer.solver.sample(path.conditions, ranges, prefer_low=prefer)
        if values is None:                 # pragma: no cover - every path was possible
            continue
        sample = tokens_for(space, model, values)
        conds = tuple(simplified(c) for c in path.conditions)
        classes.append(InputClass(len(classes), conds, tuple(path.commits), sample,
                                  path.stuck, space))
    return classes


__all__ = ["InputClass", "input_classes", "one_token_space", "tokens_for", "marking_of", "values_of",
           "random_member", "Commit"]
