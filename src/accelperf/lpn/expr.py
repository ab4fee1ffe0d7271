"""Traceable LPN functions: expression trees built by running a function on proxies.

Guard, weight, delay, initiation-interval and producer functions are ordinary Python over
token properties. They are called once at build time with proxy tokens; every operation on
a proxy builds a node of an :class:`Expr` tree instead of computing a number. That tree is
the single source for every later use: integer evaluation (the reference semantics), Python
text (the fast engine), SymPy (performance interfaces), Z3 (verification) and human text
(pictures, reports).

**One operator table.** Every operator is declared once in :data:`OPERATORS`, with its
arity, the kind of its result and one entry per backend. A backend is a column of that
table, so adding one (Z3, C) adds an entry per operator, never another chain of ``if``\\ s.

What a function may use
-----------------------
* ``x.prop`` — a property of the first (head) free token of the place bound to ``x``;
  ``x[i].prop`` — of its i-th free token (0-based, ``i`` a plain integer);
* :func:`count` ``(place)`` — the number of tokens (free and locked) in any place;
* ``+ - * // %``, unary ``-``, ``**`` with a constant exponent, ``abs``, built-in ``max`` and
  ``min`` (or :func:`maximum` / :func:`minimum`), comparisons, ``& | ~`` (or :func:`both`,
  :func:`either`, :func:`negate`), :func:`where` for choices;
* ``/`` — **exact** division: time stays in whole cycles, so a run where ``a / b`` is not a
  whole number stops with an error naming the transition and the values.

A Python ``if``, ``and``/``or``/``not``, loops over token values or float constants cannot be
represented; tracing rejects them and names the line of the function that used them.

Binding arguments
-----------------
A function sees the places of its transition: its input places, then its read places, in
declaration order. It takes either one parameter per place, positionally, or only some of
them **by name**: every parameter named after one of those places (characters that cannot
appear in a Python name are written ``_``, so place ``link.rx`` is parameter ``link_rx``).
"""

from __future__ import annotations

import inspect
import linecache
import re
import sys
import types
from dataclasses import dataclass
from typing import Callable

from ..errors import ModelError


class TraceError(ModelError):
    """A function the tracer cannot represent as an integer expression tree."""


class EvaluationError(ModelError):
    """An expression that has no integer value for the tokens at hand (division by zero,
    inexact ``/``)."""


# ---------------------------------------------------------------------- the operator table
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
    modulo, exact ``/``, and an error instead of a silent wrap past 64 bits).
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

_SYMBOL = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//", "mod": "%", "div": "/",
           "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


# ---------------------------------------------------------------------- the tree
class Expr:
    """A node: ``op`` names it, ``args`` holds children (or a leaf's data)."""

    __slots__ = ("op", "args", "kind")
    __hash__ = object.__hash__     # == builds a node, so identity hashing is kept

    def __init__(self, op: str, args: tuple, kind: str):
        self.op, self.args, self.kind = op, args, kind

    @staticmethod
    def lift(value) -> "Expr":
        if isinstance(value, Expr):
            return value
        if isinstance(value, bool):
            return Expr("const", (value,), "bool")
        if isinstance(value, int):
            return Expr("const", (int(value),), "int")
        if isinstance(value, float):
            raise TraceError(f"constant {value!r} is a float: LPN functions compute with "
                             f"integers (cycles, counts)")
        raise TraceError(f"{value!r} ({type(value).__name__}) cannot appear in an LPN "
                         f"function: only integers and token properties can")

    def _binary(self, other, op: str, swap: bool = False) -> "Expr":
        a, b = (Expr.lift(other), self) if swap else (self, Expr.lift(other))
        return apply(op, a, b)

    def __add__(self, o): return self._binary(o, "add")
    def __radd__(self, o): return self._binary(o, "add", True)
    def __sub__(self, o): return self._binary(o, "sub")
    def __rsub__(self, o): return self._binary(o, "sub", True)
    def __mul__(self, o): return self._binary(o, "mul")
    def __rmul__(self, o): return self._binary(o, "mul", True)
    def __floordiv__(self, o): return self._binary(o, "floordiv")
    def __rfloordiv__(self, o): return self._binary(o, "floordiv", True)
    def __mod__(self, o): return self._binary(o, "mod")
    def __rmod__(self, o): return self._binary(o, "mod", True)
    def __truediv__(self, o): return self._binary(o, "div")
    def __rtruediv__(self, o): return self._binary(o, "div", True)
    def __neg__(self): return apply("neg", self)
    def __abs__(self): return apply("abs", self)

    def __pos__(self):
        return self

    def __pow__(self, exponent):
        if not isinstance(exponent, int) or isinstance(exponent, bool) or exponent < 0:
            raise TraceError("'**' needs a constant non-negative integer exponent")
        result = Expr.lift(1)
        for _ in range(exponent):
            result = result * self
        return result

    def __lt__(self, o): return self._binary(o, "lt")
    def __le__(self, o): return self._binary(o, "le")
    def __gt__(self, o): return self._binary(o, "gt")
    def __ge__(self, o): return self._binary(o, "ge")
    def __eq__(self, o): return self._binary(o, "eq")      # type: ignore[override]
    def __ne__(self, o): return self._binary(o, "ne")      # type: ignore[override]

    def __and__(self, o): return both(self, o)
    def __rand__(self, o): return both(o, self)
    def __or__(self, o): return either(self, o)
    def __ror__(self, o): return either(o, self)
    def __invert__(self): return negate(self)

    def __bool__(self):
        raise TraceError("a traced value was used where Python needs a plain bool (an `if`, "
                         "`and`/`or`/`not`, or a chained comparison): write where(cond, a, b), "
                         "both(), either() or negate() instead")

    def __index__(self):
        raise TraceError("a traced value was used as a Python index or count (e.g. range()): "
                         "LPN functions cannot loop over token values")

    def __float__(self):
        raise TraceError("a traced value was passed to a float function (math.*?): LPN "
                         "functions use integer arithmetic only")

    __int__ = __float__

    def __repr__(self) -> str:
        return to_text(self)


def apply(op: str, *operands) -> Expr:
    """The node ``op(operands)``, checked against the operator table."""
    spec = OPERATORS[op]
    args = tuple(Expr.lift(v) for v in operands)
    if spec.arity is not None and len(args) != spec.arity:
        raise TraceError(f"{op} takes {spec.arity} operand(s), not {len(args)}")
    if not args:
        raise TraceError(f"{op} needs at least one operand")
    if spec.operands == "any":                         # where(cond, a, b)
        if args[0].kind != "bool":
            raise TraceError("where(cond, a, b): cond must be a comparison or condition")
        if args[1].kind != args[2].kind:
            raise TraceError("where(cond, a, b): a and b must both be numbers or both "
                             "conditions")
        return Expr(op, args, args[1].kind)
    for a in args:
        if a.kind != spec.operands:
            if spec.operands == "int":
                what = f"'{_SYMBOL[op]}'" if op in _SYMBOL else f"{op}()"
                raise TraceError(f"{what} on a condition: a comparison is not a number; use "
                                 f"where(cond, 1, 0)")
            raise TraceError("both()/either()/negate() take conditions (comparisons)")
    return Expr(op, args, spec.result)


def both(*conditions) -> Expr:
    """Logical and of conditions (``a & b`` also works)."""
    return apply("and", *conditions)


def either(*conditions) -> Expr:
    """Logical or of conditions (``a | b`` also works)."""
    return apply("or", *conditions)


def negate(condition) -> Expr:
    """Logical not (``~cond`` also works)."""
    return apply("not", condition)


def where(condition, if_true, if_false):
    """``if_true`` where ``condition`` holds, else ``if_false`` (both numbers or both
    conditions). On plain Python values it simply picks one."""
    if not any(isinstance(v, Expr) for v in (condition, if_true, if_false)):
        return if_true if condition else if_false
    return apply("where", condition, if_true, if_false)


def minimum(*values):
    """The smallest of several numbers (traced or plain); built-in ``min`` works too."""
    return _extremum("min", values)


def maximum(*values):
    """The largest of several numbers (traced or plain); built-in ``max`` works too."""
    return _extremum("max", values)


def _extremum(op, values):
    if len(values) == 1 and not isinstance(values[0], Expr):
        values = tuple(values[0])                       # max([a, b]) as well as max(a, b)
    if not values:
        raise TraceError(f"{op}imum() needs at least one value")
    if not any(isinstance(v, Expr) for v in values):
        return min(values) if op == "min" else max(values)
    return apply(op, *values)


def count(place) -> Expr:
    """The number of tokens, free and locked, in ``place`` (a Place or its name) when the
    firing starts. Only meaningful inside a traced function."""
    name = getattr(place, "name", place)
    if not isinstance(name, str):
        raise TraceError(f"count() takes a place or a place name, not {place!r}")
    return Expr("count", (name,), "int")


def prop(arg: int, name: str, index: int, token: int = 0) -> Expr:
    """Property ``name`` (position ``index`` in its token type) of the ``token``-th free
    token of the transition's place number ``arg``."""
    return Expr("prop", (arg, name, index, token), "int")


# ---------------------------------------------------------------------- tracing
class TokenProxy:
    """Stands in for the tokens of one place while a function is traced: attribute access
    reads the head token, ``[i]`` the i-th free token."""

    __slots__ = ("_arg", "_type", "_place", "_token")

    def __init__(self, arg: int, token_type, place: str, token: int = 0):
        self._arg, self._type, self._place, self._token = arg, token_type, place, token

    def __getattr__(self, name: str) -> Expr:
        props = self._type.properties
        if name not in props:
            raise TraceError(f"tokens of {self._place!r} are {self._type.name} tokens with "
                             f"properties {list(props) or 'none'}; they have no {name!r}")
        return prop(self._arg, name, props.index(name), self._token)

    def __getitem__(self, key):
        if isinstance(key, str):
            return self.__getattr__(key)
        if isinstance(key, Expr):
            raise TraceError(f"{self._place}[...]: the token index must be a plain integer, "
                             f"not a token value")
        if isinstance(key, bool) or not isinstance(key, int) or key < 0 or self._token:
            raise TraceError(f"{self._place}[{key!r}]: give a token index >= 0 (the i-th free "
                             f"token of the place), once")
        return TokenProxy(self._arg, self._type, self._place, key)


def parameter_name(place: str) -> str:
    """The parameter name that binds ``place`` by name: non-name characters become ``_``."""
    name = re.sub(r"\W", "_", place)
    return f"_{name}" if name[:1].isdigit() else name


def _builtin_free(func):
    """``func`` re-made so that built-in ``max``/``min`` on traced values build nodes.

    Built-in max compares its arguments and asks the result for a bool, which a traced
    comparison cannot give; the copy sees :func:`maximum`/:func:`minimum` instead (only
    where the module itself does not define ``max``/``min``)."""
    code = getattr(func, "__code__", None)
    if code is None or not isinstance(func, types.FunctionType):
        return func
    used = set(code.co_names)
    swap = {n: f for n, f in (("max", maximum), ("min", minimum))
            if n in used and n not in func.__globals__}
    if not swap:
        return func
    scope = dict(func.__globals__)
    scope.update(swap)
    clone = types.FunctionType(code, scope, func.__name__, func.__defaults__,
                               func.__closure__)
    clone.__kwdefaults__ = func.__kwdefaults__
    return clone


def _line_of(func, exc_tb=None) -> str:
    """'file.py:12: source' of the line in ``func`` that was executing."""
    code = getattr(func, "__code__", None)
    frame_line = None
    tb = exc_tb
    while tb is not None:                      # innermost frame of func in the traceback
        if tb.tb_frame.f_code is code:
            frame_line = tb.tb_lineno
        tb = tb.tb_next
    if frame_line is None and code is not None:
        frame = sys._getframe()
        while frame is not None:
            if frame.f_code is code:
                frame_line = frame.f_lineno
                break
            frame = frame.f_back
    if code is None or frame_line is None:
        return getattr(func, "__qualname__", repr(func))
    source = linecache.getline(code.co_filename, frame_line).strip()
    return f"{code.co_filename}:{frame_line}: {source}"


def _bind(func, inputs: list[tuple[str, object]], what: str) -> list[TokenProxy]:
    """The proxies to call ``func`` with: by position (one per place) or by name."""
    proxies = [TokenProxy(i, ttype, name) for i, (name, ttype) in enumerate(inputs)]
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return proxies
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return proxies
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                  and p.default is p.empty]
    by_name: dict[str, int] = {}
    for i, (name, _) in enumerate(inputs):
        by_name.setdefault(parameter_name(name), i)
    if positional and all(p.name in by_name for p in positional):
        return [proxies[by_name[p.name]] for p in positional]
    if len(positional) == len(inputs):
        return proxies
    names = ", ".join(n for n, _ in inputs) or "none"
    raise TraceError(f"{what} takes {len(positional)} argument(s) but the transition has "
                     f"{len(inputs)} input/read place(s) ({names}): give one parameter per "
                     f"place, in order, or name each parameter after a place "
                     f"({', '.join(parameter_name(n) for n, _ in inputs) or 'none'})")


def trace(func, inputs: list[tuple[str, object]], what: str, want: str = "int",
          origin=None) -> Expr:
    """Trace ``func`` over the places ``inputs`` (``(place name, token type)``, the
    transition's input places then its read places).

    ``what`` names the function in errors ("delay of transition 'idct'"); ``want`` is the
    kind of result required: "int" or "bool"; ``origin`` is the user's function whose
    line an error should point at, where ``func`` wraps it.
    """
    origin = origin or func
    if isinstance(func, (bool, int, float)) and not callable(func):
        try:
            result = Expr.lift(func)
        except TraceError as exc:
            raise TraceError(f"{what}: {exc}") from None
    else:
        if not callable(func):
            raise TraceError(f"{what} must be an integer or a function, not {func!r}")
        proxies = _bind(func, inputs, what)
        try:
            result = _builtin_free(func)(*proxies)
        except TraceError as exc:
            raise TraceError(f"{what}: {exc} [at {_line_of(origin, exc.__traceback__)}]") \
                from None
        except Exception as exc:        # anything else the function did to a proxy
            raise TraceError(f"{what}: cannot be traced ({type(exc).__name__}: {exc}) "
                             f"[at {_line_of(origin, exc.__traceback__)}]") from None
        try:
            result = Expr.lift(result)
        except TraceError as exc:
            raise TraceError(f"{what}: returns {result!r}: {exc}") from None
    if result.kind != want:
        raise TraceError(f"{what} must give {'a number' if want == 'int' else 'a condition'}, "
                         f"but gives {'a condition' if result.kind == 'bool' else 'a number'}")
    return result


# ---------------------------------------------------------------------- uses of a tree
LEAVES = ("const", "prop", "count")


def walk(expr: Expr):
    """Every node of the tree, parents first."""
    stack = [expr]
    while stack:
        node = stack.pop()
        yield node
        if node.op not in LEAVES:
            stack.extend(reversed(node.args))


def referenced_args(expr: Expr) -> set[int]:
    """Which of the transition's places the expression reads tokens of."""
    return {n.args[0] for n in walk(expr) if n.op == "prop"}


def tokens_needed(exprs) -> dict[int, int]:
    """For each place the expressions read: how many free tokens must be present (the
    largest token index read, plus one)."""
    need: dict[int, int] = {}
    for e in exprs:
        for n in walk(e):
            if n.op == "prop":
                need[n.args[0]] = max(need.get(n.args[0], 0), n.args[3] + 1)
    return need


def counted_places(expr: Expr) -> set[str]:
    """The places whose token count the expression reads."""
    return {n.args[0] for n in walk(expr) if n.op == "count"}


def fold(expr: Expr, leaf: Callable, column: str):
    """Render ``expr`` through one backend column of the operator table; ``leaf(node)``
    renders the leaves."""
    if expr.op in LEAVES:
        return leaf(expr)
    render = getattr(OPERATORS[expr.op], column)
    return render(*(fold(a, leaf, column) for a in expr.args))


def evaluate(expr: Expr, token, count_of=None) -> int | bool:
    """Reference integer evaluation: ``token(arg, tok)`` gives a token's property tuple,
    ``count_of(place name)`` a place's token count. Raises EvaluationError (division by
    zero, inexact ``/``)."""
    op = expr.op
    if op == "const":
        return expr.args[0]
    if op == "prop":
        arg, _, index, tok = expr.args
        return token(arg, tok)[index]
    if op == "count":
        return count_of(expr.args[0])
    spec = OPERATORS[op]
    if spec.lazy:
        return spec.evaluate(*(lambda a=a: evaluate(a, token, count_of) for a in expr.args))
    return spec.evaluate(*(evaluate(a, token, count_of) for a in expr.args))


def evaluate_on(expr: Expr, tokens) -> int | bool:
    """Evaluate over head tokens only: ``tokens[arg]`` is the head token's tuple."""
    return evaluate(expr, lambda arg, tok: tokens[arg] if tok == 0 else
                    _no_token(arg, tok))


def _no_token(arg, tok):
    raise EvaluationError(f"token {tok} of place {arg} is not given")


def to_python(expr: Expr, token=None, count_of=None) -> str:
    """Python source for the expression. By default ``a{arg}[{index}]`` reads the head
    token's tuple ``a{arg}``; ``token(arg, tok, index)`` and ``count_of(name)`` may render
    the leaves differently. The source may call :data:`PYTHON_HELPERS`."""
    def leaf(node):
        if node.op == "const":
            return repr(node.args[0])
        if node.op == "prop":
            arg, _, index, tok = node.args
            if token is not None:
                return token(arg, tok, index)
            if tok:
                raise ValueError("to_python without token= renders head tokens only")
            return f"a{arg}[{index}]"
        if count_of is None:
            raise ValueError("to_python: the expression counts tokens; give count_of=")
        return count_of(node.args[0])
    return fold(expr, leaf, "python")


def compile_python(expr: Expr, nargs: int):
    """A Python function ``f(a0, ..., a{n-1})`` of the head tokens computing the expression.

    The source is generated from our own tree (never from user text), so compiling it is
    as safe as the tree itself."""
    params = ", ".join(f"a{i}" for i in range(nargs))
    source = f"lambda {params}: {to_python(expr)}"
    return eval(compile(source, "<lpn-expression>", "eval"),
                {"__builtins__": {}, **PYTHON_HELPERS})


def to_sympy(expr: Expr, symbols, counts=None):
    """The expression in SymPy; ``symbols(arg, name)`` gives the symbol of a head-token
    property (``symbols(arg, name, tok)`` is called for later tokens), ``counts(place)`` the
    symbol of a place's token count."""
    import sympy

    def leaf(node):
        if node.op == "const":
            v = node.args[0]
            return sympy.true if v is True else sympy.false if v is False else sympy.Integer(v)
        if node.op == "prop":
            arg, name, _, tok = node.args
            return symbols(arg, name) if tok == 0 else symbols(arg, name, tok)
        if counts is None:
            return sympy.Symbol(f"count_{parameter_name(node.args[0])}", integer=True,
                                nonnegative=True)
        return counts(node.args[0])
    return fold(expr, leaf, "sympy")



def to_z3(expr: Expr, token, count_of):
    """The expression as a Z3 term: ``token(arg, tok)`` gives the Z3 terms (or ints) of a
    token's properties, ``count_of(place name)`` a place's token count. Division by zero
    and inexact ``/`` are not modelled: see :func:`defined_when`."""
    import z3

    def leaf(node):
        if node.op == "const":
            v = node.args[0]
            return z3.BoolVal(v) if isinstance(v, bool) else z3.IntVal(v)
        if node.op == "prop":
            arg, _, index, tok = node.args
            v = token(arg, tok)[index]
            return z3.IntVal(v) if isinstance(v, int) else v
        v = count_of(node.args[0])
        return z3.IntVal(v) if isinstance(v, int) else v
    return fold(expr, leaf, "z3")


def defined_when(expr: Expr, render) -> list:
    """The conditions under which ``expr`` has an integer value (R2: a run stops on
    division by zero or an inexact ``/``), each operand rendered by ``render(node)``."""
    out = []
    for node in walk(expr):
        if node.op in ("div", "floordiv", "mod"):
            a, b = render(node.args[0]), render(node.args[1])
            out.append(b != 0)
            if node.op == "div":
                out.append(z3_mod(a, b) == 0)
    return out


def to_javascript(expr: Expr, token, count_of=None) -> str:
    """JavaScript source for the expression (the ``javascript`` column), for pages that
    evaluate a model in the browser. ``token(arg, tok, index)`` renders a property read,
    ``count_of(place name)`` a token count; the source may call :data:`JAVASCRIPT_HELPERS`."""
    def leaf(node):
        if node.op == "const":
            v = node.args[0]
            return ("true" if v else "false") if isinstance(v, bool) else str(v)
        if node.op == "prop":
            arg, _, index, tok = node.args
            return token(arg, tok, index)
        if count_of is None:
            raise ValueError("to_javascript: the expression counts tokens; give count_of=")
        return count_of(node.args[0])
    return fold(expr, leaf, "javascript")


def to_text(expr: Expr, names=None) -> str:
    """Readable infix text; ``names(arg, name)`` labels head-token properties (default
    ``t0.name``; later tokens read ``t0[2].name``)."""
    label = names or (lambda arg, name: f"t{arg}.{name}")

    def leaf(node):
        if node.op == "const":
            return repr(node.args[0])
        if node.op == "prop":
            arg, name, _, tok = node.args
            if tok == 0:
                return label(arg, name)
            head = label(arg, name)
            base, _, attr = head.rpartition(".")
            return f"{base}[{tok}].{attr}" if base else f"{head}[{tok}]"
        return f"count({node.args[0]})"
    return fold(expr, leaf, "text")


__all__ = ["Expr", "Operator", "OPERATORS", "PYTHON_HELPERS", "TraceError", "EvaluationError",
           "both", "either", "negate", "where", "minimum", "maximum", "count", "trace",
           "evaluate", "to_python", "to_sympy", "to_text", "walk", "fold", "exact_div",
           "parameter_name", "tokens_needed", "counted_places", "referenced_args", "apply",
           "to_z3", "defined_when", "to_javascript", "JAVASCRIPT_HELPERS"]

