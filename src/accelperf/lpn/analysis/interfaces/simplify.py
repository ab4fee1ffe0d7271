"""SymPy's ``simplify``, remembered for the rest of the process.

An extraction asks for the same simplifications again and again: the path conditions of
each class, a stage's mean delay, each gap and its effective term, the fill of every
phase. The AES-GCM stream's interface asked 419 times for 85 distinct expressions, 3.3 s
of its 7.1 s; ``explore --delays`` extracts the same model dozens of times, and the
terms its delays do not reach come out the same each time.

``sympy.simplify`` is a function of its argument's structure alone, and SymPy's ``==``
and ``hash`` are structural: equal expressions are the same tree, symbols with the same
name and the same assumptions. (Before SymPy 1.13 ``Float(2.0) == Integer(2)``, and a
remembered ``x + 2`` would have answered for ``x + 2.0``: pyproject.toml asks for 1.13.)
So an equal expression gets the result the first one got, and the interface, its
formulas and the emitted module are what a fresh ``simplify`` gives.
"""

from __future__ import annotations

from functools import lru_cache

import sympy

CACHED = 8192
"""Expressions remembered: an extraction of the paper's models asks for at most a few
hundred distinct ones; the oldest are forgotten first."""


@lru_cache(maxsize=CACHED)
def _simplified(expr):
    return sympy.simplify(expr)


def simplified(expr):
    """``sympy.simplify(expr)``, computed once per distinct expression. The argument is
    made a SymPy object first: Python's ``2 == 2.0`` must not make them one key."""
    return _simplified(sympy.sympify(expr))


__all__ = ["CACHED", "simplified"]
