"""What a formula's tree (:mod:`accelperf.formula.tree`) means in each language it is used in.

One table per part of the language, one column per backend, as the LPN operator table
(:mod:`accelperf.lpn.operators`) does for traced functions:

* ``numpy`` — evaluation in IEEE doubles over arrays (density formulas, Steffen eq. 1:
  ρ(α) written by the user);
* ``sympy`` — exact symbolic terms (the relations of a space's constraints, which the
  performance interfaces' solver and emitted modules read, OSDI'24 §4.1-4.2);
* ``z3`` — terms of the verifier (space constraints, properties to prove and the read-back
  of a generated interface module, OSDI'24 §4.4): ``/`` is exact real division, ``//`` and
  ``%`` follow Python on Z3's integers;
* ``javascript`` — the page of ``accelperf explore``, printed from the SymPy term so the
  browser computes what Python does (as every other formula of the page is).

:func:`fold` walks a tree in one column. What names mean is the caller's vocabulary: a
``leaf(node)`` function is given every name, property and index, and every call first (a
space's ``sum(P.p)``, a density's ``alpha``); it returns :data:`NOT_MINE` for a call the
language's own functions (``abs``, ``min``, ``sqrt``...) should take. What a backend cannot
express is handed to ``fail(node, part)`` with ``part`` one of ``"operator"``,
``"unary"``, ``"comparison"``, ``"function"``, ``"syntax"``, so every use refuses it in its
own words.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Callable

from .tree import Node

NOT_MINE = object()
"""What a ``leaf`` returns for a call it leaves to the language's own functions."""


@dataclass(frozen=True)
class Column:
    """One operator or function in each backend; None where a backend has no meaning for
    it (the use then refuses it)."""

    symbol: str
    numpy: Callable | None = None
    sympy: Callable | None = None
    z3: Callable | None = None


def _z3_div(a, b):
    import z3
    return z3.ToReal(a) / z3.ToReal(b) if a.is_int() and b.is_int() else a / b


def _z3_floordiv(a, b):
    from ..lpn.operators import z3_floordiv      # Python's floor on Z3's integers
    return z3_floordiv(a, b)


def _z3_mod(a, b):
    from ..lpn.operators import z3_mod
    return z3_mod(a, b)


def _z3(name: str):
    """A Z3 function looked up on first use, so importing this module stays cheap."""
    def build(*xs):
        import z3
        return getattr(z3, name)(*xs)
    return build


def _numpy(name: str):
    def call(*xs):
        import numpy as np
        return getattr(np, name)(*xs)
    return call


def _sympy(name: str, *extra):
    def call(*xs):
        import sympy
        return getattr(sympy, name)(*xs, *extra)
    return call


def _extremum(pick):
    """An operation of several values by pairs (NumPy's two-operand ufuncs, Z3's If)."""
    def call(*xs):
        out = xs[0]
        for x in xs[1:]:
            out = pick(out, x)
        return out
    return call


def _sympy_relation(symbol: str):
    def build(a, b):
        import sympy
        return sympy.Rel(a, b, symbol, evaluate=False)
    return build


BINARY = {
    "Add": Column("+", operator.add, operator.add, operator.add),
    "Sub": Column("-", operator.sub, operator.sub, operator.sub),
    "Mult": Column("*", operator.mul, operator.mul, operator.mul),
    "Div": Column("/", operator.truediv, operator.truediv, _z3_div),
    "FloorDiv": Column("//", operator.floordiv, operator.floordiv, _z3_floordiv),
    "Mod": Column("%", operator.mod, operator.mod, _z3_mod),
    "Pow": Column("**", operator.pow, operator.pow, None),
}
"""The binary operators: ``+ - * / // % **``."""

UNARY = {
    "UAdd": Column("+", operator.pos, operator.pos, None),
    "USub": Column("-", operator.neg, operator.neg, operator.neg),
    "Not": Column("not", _numpy("logical_not"), _sympy("Not"), _z3("Not")),
}
"""The unary operators."""

COMPARE = {
    "Lt": Column("<", operator.lt, _sympy_relation("<"), operator.lt),
    "LtE": Column("<=", operator.le, _sympy_relation("<="), operator.le),
    "Gt": Column(">", operator.gt, _sympy_relation(">"), operator.gt),
    "GtE": Column(">=", operator.ge, _sympy_relation(">="), operator.ge),
    "Eq": Column("==", operator.eq, _sympy_relation("=="), operator.eq),
    "NotEq": Column("!=", operator.ne, _sympy_relation("!="), operator.ne),
}
"""The comparisons (a chain ``a < b <= c`` is the conjunction of its links)."""

LOGIC = {"And": Column("and", _extremum(_numpy("logical_and")), _sympy("And"), _z3("And")),
         "Or": Column("or", _extremum(_numpy("logical_or")), _sympy("Or"), _z3("Or"))}
"""``and``/``or`` of conditions."""


def _z3_pick(smaller: bool):
    def pick(best, v):
        import z3
        return z3.If(v < best if smaller else v > best, v, best)
    return pick


def _z3_abs(a):
    import z3
    return z3.If(a >= 0, a, -a)


def _z3_round(down: bool):
    def call(a):
        import z3
        if a.is_int():
            return a
        return z3.ToInt(a) if down else -z3.ToInt(-a)
    return call


FUNCTIONS = {
    "sqrt": Column("sqrt", _numpy("sqrt"), _sympy("sqrt")),
    "log": Column("log", _numpy("log"), _sympy("log")),
    "log2": Column("log2", _numpy("log2"), _sympy("log", 2)),
    "log10": Column("log10", _numpy("log10"), _sympy("log", 10)),
    "exp": Column("exp", _numpy("exp"), _sympy("exp")),
    "min": Column("min", _extremum(_numpy("minimum")), _sympy("Min"),
                  _extremum(_z3_pick(True))),
    "max": Column("max", _extremum(_numpy("maximum")), _sympy("Max"),
                  _extremum(_z3_pick(False))),
    "abs": Column("abs", _numpy("abs"), _sympy("Abs"), _z3_abs),
    "floor": Column("floor", _numpy("floor"), _sympy("floor"), _z3_round(True)),
    "ceil": Column("ceil", _numpy("ceil"), _sympy("ceiling"), _z3_round(False)),
}
"""The language's own functions (a use may offer fewer: a density formula has no floor)."""
SPELLINGS = {"math.floor": "floor", "math.ceil": "ceil", "math.sqrt": "sqrt",
             "math.log": "log", "math.log2": "log2", "math.log10": "log10",
             "math.exp": "exp"}
"""Python's spellings of the language's functions (a generated module writes
``math.floor``); a use that checks its calls by name (density) refuses them as before."""
ARITY = {"min": None, "max": None}
"""Functions of several arguments (None: one or more); every other one takes one."""


def number(value, backend: str):
    """A constant in ``backend``; None for one it has no meaning for (text, complex)."""
    if backend == "z3":
        import z3
        if isinstance(value, bool):
            return z3.BoolVal(value)
        if isinstance(value, int):
            return z3.IntVal(value)
        return z3.RealVal(repr(value)) if isinstance(value, float) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if backend == "numpy":
        import numpy as np
        return np.float64(value)
    import sympy
    return sympy.Integer(value) if isinstance(value, int) else sympy.Float(repr(value))


def fold(node: Node, backend: str, leaf: Callable, fail: Callable):
    """The term of ``node`` in ``backend`` (``numpy``, ``sympy`` or ``z3``; see the module
    docstring for ``leaf`` and ``fail``). Operands are translated before their operator is
    judged, so a message names the innermost fault."""
    kind = node.kind
    if kind == "number":
        out = number(node.value, backend)
        return fail(node, "syntax") if out is None else out
    if kind in ("name", "property", "index"):
        return leaf(node)
    if kind == "call":
        if not node.op or node.keywords:
            return fail(node, "syntax")
        out = leaf(node)
        if out is not NOT_MINE:
            return out
        name = SPELLINGS.get(node.op, node.op)
        func, arity = FUNCTIONS.get(name), ARITY.get(name, 1)
        render = getattr(func, backend) if func else None
        if render is None or not node.args or arity is not None and len(node.args) != arity:
            return fail(node, "function")
        return render(*(fold(a, backend, leaf, fail) for a in node.args))
    if kind == "binary":
        a, b = (fold(x, backend, leaf, fail) for x in node.args)
        render = getattr(BINARY.get(node.op), backend, None)
        return fail(node, "operator") if render is None else render(a, b)
    if kind == "unary":
        a = fold(node.args[0], backend, leaf, fail)
        render = getattr(UNARY.get(node.op), backend, None)
        return fail(node, "unary") if render is None else render(a)
    if kind == "compare":
        parts, left = [], fold(node.args[0], backend, leaf, fail)
        for op, right_node in zip(node.value, node.args[1:]):
            right = fold(right_node, backend, leaf, fail)
            render = getattr(COMPARE.get(op), backend, None)
            if render is None:
                return fail(node, "comparison")
            parts.append(render(left, right))
            left = right
        return parts[0] if len(parts) == 1 else getattr(LOGIC["And"], backend)(*parts)
    if kind == "logic":
        items = [fold(x, backend, leaf, fail) for x in node.args]
        render = getattr(LOGIC.get(node.op), backend, None)
        return fail(node, "syntax") if render is None else render(*items)
    return fail(node, "syntax")


def to_javascript(node: Node, leaf: Callable, fail: Callable) -> str:
    """JavaScript source of ``node``, printed from its SymPy term (``leaf`` gives the
    names' SymPy symbols), so a page computes what Python computes."""
    import sympy
    return sympy.jscode(fold(node, "sympy", leaf, fail))


__all__ = ["Column", "BINARY", "UNARY", "COMPARE", "LOGIC", "FUNCTIONS", "ARITY", "SPELLINGS",
           "NOT_MINE", "number", "fold", "to_javascript"]
