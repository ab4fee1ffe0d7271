"""Where a bottleneck holds, in words: the stage that dominates over most of a property's
range, then the values where another does ("compute; writeback at mean_requests_bytes
0..192"). A class's bottleneck is taken on its sample input; where its latency is a Max
whose winner moves with the input, the sample alone named the wrong stage over most of
the space (a new user's finding: ``# bottleneck writeback`` for a stage compute bounds
above 192 B). The token-by-token interface (:mod:`.stream_emit`) and the class lines of
`accelperf lpn interface` say it the same way.
"""

from __future__ import annotations

import numpy as np
import sympy

from ..space import InputSpace, count_symbol, symbol_ranges
from .exact_range import Inexact, exact_values, to_floats, whole_range

SCAN_LIMIT = 100_000
"""Values of a property scanned at most, one by one, to find where each stage dominates."""


def value_runs(tops, lo: int) -> list:
    """[(stages, lo, hi)]: consecutive values ``lo, lo + 1, ...`` with the same
    ``tops`` (the stages that tie for the most work there) as one run."""
    runs: list = []
    for v, best in enumerate(tops, lo):
        if runs and runs[-1][0] == best:
            runs[-1][2] = v
        else:
            runs.append([best, v, v])
    return [tuple(r) for r in runs]


def runs_label(runs: list, prop: str) -> str:
    """The stages of the run covering most values, then where others do."""
    share: dict = {}
    for stages, lo, hi in runs:
        share[stages] = share.get(stages, 0) + hi - lo + 1
    main = max(share, key=share.get)
    rest = [f"{' = '.join(s)} at {prop} {lo}" + (f"..{hi}" if hi > lo else "")
            for s, lo, hi in runs if s != main]
    return "; ".join([" = ".join(main)] + rest)


def class_bottleneck(ci, space: InputSpace) -> str:
    """The bottleneck of a class of a plain interface (:class:`.interface.ClassInterface`):
    its ``bottleneck`` on the sample where the effective delays ε_T vary with no input
    symbol, or with several; where one symbol (a stream's mean, a token's property) moves
    the largest ε_T, the stage over most of its range and the values where another
    wins (counts at the sample's)."""
    effective = {g.transition: sympy.sympify(g.effective) for g in ci.gaps}
    counts = {count_symbol(p.place) for p in space.places if p.stream}
    free = set().union(*(e.free_symbols for e in effective.values())) if effective else set()
    varying = [s for s in free if s not in counts]
    ranges = symbol_ranges(space)
    if len(varying) != 1 or varying[0] not in ranges:
        return ci.bottleneck
    symbol = varying[0]
    lo, hi = (int(sympy.ceiling(ranges[symbol][0])), int(sympy.floor(ranges[symbol][1])))
    if hi - lo > SCAN_LIMIT:
        return ci.bottleneck
    at = {s: ranges[s][0] if ranges[s][0] > 0 else 1 for s in free if s in counts}
    conditions = [sympy.sympify(c) for c in ci.input_class.conditions]
    if any(c.free_symbols - set(at) - {symbol} for c in conditions):
        return ci.bottleneck    # the class is cut by another symbol: the sample's stands
    try:
        tops, first = _tops_at_once(effective, conditions, symbol, lo, hi, at)
    except Inexact:             # SymPy, value by value: the same floats, 100 times slower
        tops, first = _tops_one_by_one(effective, conditions, symbol, lo, hi, at)
    if first is None or len(set(tops)) < 2:
        return ci.bottleneck
    return runs_label(value_runs(tops, first), str(symbol))


def _tops(names: list, works) -> list:
    """Per value, the stages that tie for the most work (``works``: one row per stage)."""
    table = np.asarray(works, dtype=float).reshape(len(names), -1)
    ties = table == table.max(axis=0)
    return [tuple(n for n, tie in zip(names, column) if tie) for column in ties.T]


def _tops_at_once(effective: dict, conditions, symbol, lo: int, hi: int, at: dict):
    """(the stages on top per value, the first value) over the class's first run of
    values of ``symbol`` in ``lo..hi``, from exact whole-number arrays
    (:mod:`.exact_range`, as :func:`.stream_emit.bottleneck_runs` does): a 100,000-value
    range took 10 s value by value. Raises :class:`Inexact` where it cannot."""
    n = hi - lo + 1
    values = {s: _whole(v) for s, v in at.items()}
    values[symbol] = whole_range(lo, hi)
    memo: dict = {}
    inside = np.ones(n, dtype=bool)
    for c in conditions:
        inside &= exact_values(c, values, n, memo)
    where = np.flatnonzero(inside)
    if not where.size:
        return [], None
    # the class's values of the symbol: the first run of them (as the loop below stops)
    gaps = np.flatnonzero(np.diff(where) > 1)
    start, stop = int(where[0]), int(where[gaps[0]] if gaps.size else where[-1]) + 1
    names = list(effective)
    works = [to_floats(exact_values(e, values, n, memo))[start:stop]
             for e in effective.values()]
    return _tops(names, works), lo + start


def _tops_one_by_one(effective: dict, conditions, symbol, lo: int, hi: int, at: dict):
    tops, first = [], None
    for v in range(lo, hi + 1):
        point = {**at, symbol: v}
        if not all(bool(c.xreplace(point)) for c in conditions):
            if tops:
                break           # the class's values of it end here
            continue
        first = v if first is None else first
        tops += _tops(list(effective), [float(e.xreplace(point)) for e in effective.values()])
    return tops, first


def _whole(value) -> int:
    if not (sympy.sympify(value).is_Integer):
        raise Inexact(f"{value} is not a whole number")
    return int(value)


__all__ = ["value_runs", "runs_label", "class_bottleneck", "SCAN_LIMIT"]
