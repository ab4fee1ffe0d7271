"""Exact values of a rational SymPy expression at every whole number of a range, at once.

An interface's expressions over a token's properties are rational: sums and products of
whole numbers, fractions, ``floor``, ``ceiling``, ``Max``, ``Min``, and conditions that
compare them. Over the ``n`` values of one varying property such an expression is kept as
``N / D``: ``N`` an ``int64`` array, ``D`` one positive whole number, so

* ``a/b + c/d = (a·(L/b) + c·(L/d)) / L`` with ``L = lcm(b, d)``; ``(a/b)(c/d) = ac/bd``;
* ``floor(a/b) = a // b`` (NumPy's ``//`` on integers floors, as ``floor`` does for
  negative ``a``) and ``ceiling(a/b) = -((-a) // b)``;
* ``Max``, ``Min`` and comparisons act on numerators over a common denominator,

each exact while no number reaches 2⁶² (checked before each step from the operands'
largest magnitudes, so ``int64`` never wraps). Anything else (a ``Float``, a root, a
symbol left unvalued, a number past the bound) raises :class:`Inexact` and the caller
evaluates point by point in SymPy.

:func:`to_floats` rounds ``N/D`` to the nearest double as ``float()`` of SymPy's exact
``Rational`` does (mpmath's correctly rounded division at 53 bits): with
``|N|, D ≤ 2⁵³`` both are exact doubles and one IEEE division is correctly rounded; past
that, Python's ``int / int`` is. The values are the very floats a per-point
``float(expr.xreplace(...))`` gives, at array speed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import sympy

_BOUND = 2 ** 62
_EXACT_DOUBLE = 2 ** 53


class Inexact(ValueError):
    """The expression leaves whole-number arithmetic below :data:`_BOUND`."""


@dataclass(frozen=True)
class Ratios:
    """``num / den`` per value of the range (``den`` shared, positive)."""

    num: np.ndarray
    den: int

    def largest(self) -> int:
        return int(np.abs(self.num).max(initial=0))


def _checked(bound: int) -> None:
    if bound >= _BOUND:
        raise Inexact(f"a number reaches {bound} (past 2**62)")


def _reduced(num: np.ndarray, den: int) -> Ratios:
    g = math.gcd(den, int(np.gcd.reduce(num))) if num.size else den
    return Ratios(num // g, den // g) if g > 1 else Ratios(num, den)


def _over(r: Ratios, den: int) -> np.ndarray:
    """``r``'s numerators over ``den`` (a multiple of ``r.den``)."""
    scale = den // r.den
    _checked(r.largest() * scale)
    return r.num * scale


def _common(parts: list) -> tuple:
    den = math.lcm(*(p.den for p in parts))
    _checked(den)
    return [_over(p, den) for p in parts], den


def _add(a: Ratios, b: Ratios) -> Ratios:
    den = math.lcm(a.den, b.den)
    _checked(den)
    _checked(a.largest() * (den // a.den) + b.largest() * (den // b.den))
    return _reduced(_over(a, den) + _over(b, den), den)


def _mul(a: Ratios, b: Ratios) -> Ratios:
    _checked(a.largest() * b.largest())
    _checked(a.den * b.den)
    return _reduced(a.num * b.num, a.den * b.den)


_COMPARE = {sympy.Eq: np.equal, sympy.Ne: np.not_equal, sympy.Lt: np.less,
            sympy.Le: np.less_equal, sympy.Gt: np.greater, sympy.Ge: np.greater_equal}
_NUMERIC = (sympy.Add, sympy.Mul, sympy.Pow, sympy.floor, sympy.ceiling, sympy.Max,
            sympy.Min)


def whole_range(lo: int, hi: int) -> np.ndarray:
    """``lo..hi`` as the ``int64`` array :func:`exact_values` takes for a symbol."""
    _checked(max(abs(lo), abs(hi)))
    return np.arange(lo, hi + 1, dtype=np.int64)


def exact_values(expr, values: dict, n: int, memo: dict | None = None):
    """``expr`` at ``n`` points: :class:`Ratios` for a number, a bool array for a
    condition. ``values`` maps each symbol to an ``int64`` array of ``n`` or one int;
    ``memo`` (expression -> value) shares subexpressions between calls on one range."""
    memo = {} if memo is None else memo
    e = sympy.sympify(expr)
    if e not in memo:
        memo[e] = _value(e, values, n, memo)
    return memo[e]


def _value(e, values: dict, n: int, memo: dict):
    if e is sympy.true or e is sympy.false:
        return np.full(n, bool(e))
    if e.is_Rational:
        _checked(max(abs(e.p), e.q))
        return Ratios(np.full(n, int(e.p), dtype=np.int64), int(e.q))
    if e.is_Symbol:
        v = values.get(e)
        if isinstance(v, np.ndarray):
            return Ratios(v, 1)
        if isinstance(v, bool) or not isinstance(v, int):
            raise Inexact(f"{e} = {v!r} is not a whole number")
        return _value(sympy.Integer(v), values, n, memo)
    args = [exact_values(a, values, n, memo) for a in e.args]
    if type(e) in _COMPARE or isinstance(e, _NUMERIC):
        if not all(isinstance(a, Ratios) for a in args):
            raise Inexact(f"{type(e).__name__} of a condition")
    elif isinstance(e, (sympy.And, sympy.Or, sympy.Not)):
        if not all(isinstance(a, np.ndarray) for a in args):
            raise Inexact(f"{type(e).__name__} of a number")
    else:
        raise Inexact(f"{type(e).__name__} is not evaluated exactly here")
    if isinstance(e, (sympy.Add, sympy.Mul)):
        out = args[0]
        for a in args[1:]:
            out = (_add if isinstance(e, sympy.Add) else _mul)(out, a)
        return out
    if isinstance(e, sympy.Pow):
        if not (e.exp.is_Integer and e.exp >= 0):
            raise Inexact(f"{e.exp} is no whole power")
        out = Ratios(np.ones(n, dtype=np.int64), 1)
        for _ in range(int(e.exp)):
            out = _mul(out, args[0])
        return out
    if isinstance(e, sympy.floor):
        return Ratios(args[0].num // args[0].den, 1)
    if isinstance(e, sympy.ceiling):
        return Ratios(-((-args[0].num) // args[0].den), 1)
    if isinstance(e, (sympy.Max, sympy.Min)):
        nums, den = _common(args)
        pick = np.maximum if isinstance(e, sympy.Max) else np.minimum
        return _reduced(pick.reduce(nums), den)
    if type(e) in _COMPARE:
        nums, _ = _common(args)
        return _COMPARE[type(e)](*nums)
    if isinstance(e, sympy.Not):
        return ~args[0]
    return (np.logical_and if isinstance(e, sympy.And) else np.logical_or).reduce(args)


def to_floats(r: Ratios) -> np.ndarray:
    """The nearest doubles to ``r`` (see the module docstring)."""
    if r.largest() <= _EXACT_DOUBLE and r.den <= _EXACT_DOUBLE:
        return r.num.astype(np.float64) / float(r.den)
    return np.array([int(x) / r.den for x in r.num], dtype=np.float64)


__all__ = ["Inexact", "Ratios", "exact_values", "to_floats", "whole_range"]
