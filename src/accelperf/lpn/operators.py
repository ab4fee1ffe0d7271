"""The operator table of traced LPN expressions: one row per operator, one column per backend.

Every operator a traced function may use (see :mod:`accelperf.lpn.expr`) is declared once in
:data:`OPERATORS`, with its arity, the kind of its operands and result, and one entry per
backend: integer evaluation (the reference semantics, R2 of the LPN paper's firing rule:
time and counts are whole numbers), Python text (the fast engine), C text (the compiled
engine), SymPy (performance interfaces), Z3 (verification), JavaScript (pages that evaluate
a model in the browser) and readable text. A backend is a column of this table, so adding
one adds an entry per operator, never another chain of ``if``\\ s.

The integer helpers here (:func:`exact_div`, :func:`floor_div`, :func:`modulo`) raise
:class:`EvaluationError` rather than return a wrong number; the Z3 helpers
(:func:`z3_floordiv`, :func:`z3_mod`) give Python's floor semantics in Z3's Euclidean
integer arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..errors import ModelError


class EvaluationError(ModelError):
    """An expression that has no integer value for the tokens at hand (division by zero,
    inexact ``/``)."""


def exact_div(a: int, b: int) -> int:
    """``a / b`` when it is a whole number; an :class:`EvaluationError` otherwise."""
    if b == 0:
        raise EvaluationError(f"{a} / {b}: division by zero")
    q, r = divmod(a, b)
    if r:
        raise EvaluationError(f"{a} / {b} is not a whole number: LPN time and counts are "
                              f"integers; use // to round down")
    return q


def floor_div(a: int, b: int) -> int:
    if b == 0:
        raise EvaluationError(f"{a} // {b}: division by zero")
    return a // b


def modulo(a: int, b: int) -> int:
    if b == 0:
        raise EvaluationError(f"{a} % {b}: modulo by zero")
    return a % b


def _infix(symbol: str):
    return lambda a, b: f"({a} {symbol} {b})"


def _call(name: str):
    return lambda *xs: f"{name}({', '.join(xs)})"


def _checked(name: str):
    """A C helper of the compiled engine that records an error in ``E`` (its first
    argument) instead of returning a wrong number."""
    return lambda *xs: f"{name}(E, {', '.join(xs)})"


def _nested(name: str):
    """min/max of any arity as nested calls of a two-operand C helper."""
    def render(*xs):
        out = xs[0]
        for x in xs[1:]:
            out = f"{name}({out}, {x})"
        return out
    return render


def _sympy(name: str):
    """A SymPy constructor looked up on first use, so importing this module stays cheap."""
    def build(*xs):
        import sympy
        return getattr(sympy, name)(*xs)
    return build


def _sympy_floordiv(a, b):
    import sympy
    return sympy.floor(a / b)


def _sympy_where(c, a, b):
    import sympy
    return sympy.Piecewise((a, c), (b, True))


def _z3(name: str):
    """A Z3 function looked up on first use: ``import accelperf.lpn`` never loads Z3."""
    def build(*xs):
        import z3
        return getattr(z3, name)(*xs)
    return build


def _z3_if(c, a, b):
    import z3
    return z3.If(c, a, b)


def z3_floordiv(a, b):
    """Python's ``a // b`` in Z3. Z3's integer division is Euclidean (remainder >= 0); for a
    positive divisor that is floor division, and floor(a / b) = floor(-a / -b) otherwise.
    Division by zero is undefined here: the verifier adds ``b != 0`` to the class."""
    return _z3_if(b > 0, a / b, (-a) / (-b))


def z3_mod(a, b):
    """Python's ``a % b`` (the sign of b) in Z3: a - b·(a // b)."""
    return a - b * z3_floordiv(a, b)


def _z3_pick(better, xs):
    """min/max of Z3 terms as a chain of If (``better(a, b)``: keep a)."""
    best = xs[0]
    for x in xs[1:]:
        best = _z3_if(better(best, x), best, x)
    return best


@dataclass(frozen=True)
class Operator:
    """One row of the operator table.

    arity: number of operands (``None``: one or more); operands: the kind each operand
    must have ("int", "bool", or "any" for where's branches); result: "int", "bool", or
    "same" (the kind of the branches). Backends: ``evaluate`` on integer/bool operands,
    ``python``, ``c`` and ``text`` on rendered operand strings, ``sympy`` on SymPy operands,
    ``z3`` on Z3 terms (with Python's integer semantics for ``//`` and ``%``). The ``python``
    entry may call the helpers in :data:`PYTHON_HELPERS`; the ``c`` entry the checked int64
    helpers of the compiled engine (``lpn_add(E, a, b)`` ...: Python's floor division and
    modulo, exact ``/``, and an error instead of a silent wrap past 64 bits); the
    ``javascript`` entry (pages that evaluate a model in the browser) ``Math`` and the
    functions of :data:`JAVASCRIPT_HELPERS`.
    """

    name: str
    arity: int | None
    operands: str
    result: str
    evaluate: Callable
    python: Callable
    sympy: Callable
    text: Callable
    z3: Callable
    lazy: bool = False           # evaluate gets thunks: only the chosen branch is computed
    c: Callable | None = None    # C text (lazy ops use C's own lazy && || ?:)
    javascript: Callable | None = None   # JavaScript text, may call JAVASCRIPT_HELPERS


def _where_eval(c, a, b):
    return a() if c() else b()


def _and_eval(*xs):
    return all(x() for x in xs)


def _or_eval(*xs):
    return any(x() for x in xs)


_OPS = [
    Operator("add", 2, "int", "int", lambda a, b: a + b, _infix("+"),
             lambda a, b: a + b, _infix("+"), lambda a, b: a + b,
             c=_checked("lpn_add"),
             javascript=_infix("+")),
    Operator("sub", 2, "int", "int", lambda a, b: a - b, _infix("-"),
             lambda a, b: a - b, _infix("-"), lambda a, b: a - b,
             c=_checked("lpn_sub"),
             javascript=_infix("-")),
    Operator("mul", 2, "int", "int", lambda a, b: a * b, _infix("*"),
             lambda a, b: a * b, _infix("*"), lambda a, b: a * b,
             c=_checked("lpn_mul"),
             javascript=_infix("*")),
    Operator("floordiv", 2, "int", "int", floor_div, _call("_floordiv"), _sympy_floordiv,
             _infix("//"), z3_floordiv,
             c=_checked("lpn_floordiv"),
             javascript=_call("lpn_floordiv")),
    Operator("mod", 2, "int", "int", modulo, _call("_mod"), _sympy("Mod"), _infix("%"),
             z3_mod,
             c=_checked("lpn_mod"),
             javascript=_call("lpn_mod")),
    # Exact division: where it is defined (a multiple of b) it equals floor division.
    Operator("div", 2, "int", "int", exact_div, _call("_exact_div"),
             lambda a, b: a / b, _infix("/"), z3_floordiv,
             c=_checked("lpn_div"),
             javascript=_call("lpn_div")),
    Operator("neg", 1, "int", "int", lambda a: -a, lambda a: f"(-{a})", lambda a: -a,
             lambda a: f"-{a}", lambda a: -a,
             c=_checked("lpn_neg"),
             javascript=lambda a: f"(-({a}))"),
    Operator("abs", 1, "int", "int", abs, _call("abs"), _sympy("Abs"), _call("abs"),
             lambda a: _z3_if(a >= 0, a, -a),
             c=_checked("lpn_abs"),
             javascript=_call("Math.abs")),
    Operator("min", None, "int", "int", min, _call("min"), _sympy("Min"), _call("min"),
             lambda *xs: _z3_pick(lambda a, b: a <= b, xs),
             c=_nested("lpn_min"),
             javascript=_call("Math.min")),
    Operator("max", None, "int", "int", max, _call("max"), _sympy("Max"), _call("max"),
             lambda *xs: _z3_pick(lambda a, b: a >= b, xs),
             c=_nested("lpn_max"),
             javascript=_call("Math.max")),
    Operator("lt", 2, "int", "bool", lambda a, b: a < b, _infix("<"), _sympy("Lt"),
             _infix("<"), lambda a, b: a < b,
             c=_infix("<"),
             javascript=_infix("<")),
    Operator("le", 2, "int", "bool", lambda a, b: a <= b, _infix("<="), _sympy("Le"),
             _infix("<="), lambda a, b: a <= b,
             c=_infix("<="),
             javascript=_infix("<=")),
    Operator("gt", 2, "int", "bool", lambda a, b: a > b, _infix(">"), _sympy("Gt"),
             _infix(">"), lambda a, b: a > b,
             c=_infix(">"),
             javascript=_infix(">")),
    Operator("ge", 2, "int", "bool", lambda a, b: a >= b, _infix(">="), _sympy("Ge"),
             _infix(">="), lambda a, b: a >= b,
             c=_infix(">="),
             javascript=_infix(">=")),
    Operator("eq", 2, "int", "bool", lambda a, b: a == b, _infix("=="), _sympy("Eq"),
             _infix("=="), lambda a, b: a == b,
             c=_infix("=="),
             javascript=_infix("===")),
    Operator("ne", 2, "int", "bool", lambda a, b: a != b, _infix("!="), _sympy("Ne"),
             _infix("!="), lambda a, b: a != b,
             c=_infix("!="),
             javascript=_infix("!==")),
    Operator("and", None, "bool", "bool", _and_eval, lambda *xs: "(" + " and ".join(xs) + ")",
             _sympy("And"), lambda *xs: "(" + " and ".join(xs) + ")", _z3("And"), lazy=True,
             c=lambda *xs: "(" + " && ".join(xs) + ")",
             javascript=lambda *xs: "(" + " && ".join(xs) + ")"),
    Operator("or", None, "bool", "bool", _or_eval, lambda *xs: "(" + " or ".join(xs) + ")",
             _sympy("Or"), lambda *xs: "(" + " or ".join(xs) + ")", _z3("Or"), lazy=True,
             c=lambda *xs: "(" + " || ".join(xs) + ")",
             javascript=lambda *xs: "(" + " || ".join(xs) + ")"),
    Operator("not", 1, "bool", "bool", lambda a: not a, lambda a: f"(not {a})",
             _sympy("Not"), lambda a: f"not {a}", _z3("Not"),
             c=lambda a: f"(!{a})",
             javascript=lambda a: f"(!{a})"),
    Operator("where", 3, "any", "same", _where_eval, lambda c, a, b: f"({a} if {c} else {b})",
             _sympy_where, _call("where"), _z3("If"), lazy=True,
             c=lambda c, a, b: f"({c} ? {a} : {b})",
             javascript=lambda c, a, b: f"({c} ? {a} : {b})"),
]
OPERATORS: dict[str, Operator] = {op.name: op for op in _OPS}
"""Every operator of a traced expression, by node name (the leaves ``const``, ``prop`` and
``count`` are not operators: each backend says how to read them)."""

PYTHON_HELPERS = {"_exact_div": exact_div, "_floordiv": floor_div, "_mod": modulo,
                  "abs": abs, "min": min, "max": max}
"""Names the ``python`` column may call; generated code is run with exactly these."""

JAVASCRIPT_HELPERS = """\
function lpn_mod(a, b) {
  if (b === 0) throw new Error(a + " % " + b + ": modulo by zero");
  const r = a % b;                       // exact for integers below 2^53
  return (r !== 0 && (r < 0) !== (b < 0)) ? r + b : r;   // the sign of b, as in Python
}
function lpn_floordiv(a, b) {
  if (b === 0) throw new Error(a + " // " + b + ": division by zero");
  return (a - lpn_mod(a, b)) / b;        // an exact multiple: no rounding of a / b
}
function lpn_div(a, b) {
  if (b === 0) throw new Error(a + " / " + b + ": division by zero");
  if (a % b !== 0) throw new Error(a + " / " + b + " is not a whole number");
  return a / b;
}
"""
"""JavaScript functions the ``javascript`` column may call besides ``Math``: Python's floor
division and modulo, exact ``/``, each throwing an Error named like the Python backend's
instead of returning a wrong number. JavaScript numbers are doubles, so results are exact
for integers below 2^53 (cycle counts are far below)."""


__all__ = ["EvaluationError", "Operator", "OPERATORS", "PYTHON_HELPERS", "JAVASCRIPT_HELPERS",
           "exact_div", "floor_div", "modulo", "z3_floordiv", "z3_mod"]
