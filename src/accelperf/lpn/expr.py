"""Traceable LPN functions: expression trees built by running a function on proxies.

Guard, weight, delay, initiation-interval and producer functions are ordinary Python over
token properties. They are called once at build time with proxy tokens; every operation on
a proxy builds a node of an :class:`Expr` tree instead of computing a number. That tree is
the single source for every later use: integer evaluation (the reference semantics, here),
readable text (pictures, reports, here), and the translations to Python, SymPy, Z3 and
JavaScript in :mod:`accelperf.lpn.expr_backends`.

This module holds the tree, its builders, tracing and the walks over a tree. Every
operator is declared once in the operator table, :data:`accelperf.lpn.operators.OPERATORS`
(re-exported here with the rest of that module's public names).

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
from typing import Callable

from ..errors import ModelError
from .operators import (JAVASCRIPT_HELPERS, OPERATORS, PYTHON_HELPERS, EvaluationError,
                        Operator, exact_div)


class TraceError(ModelError):
    """A function the tracer cannot represent as an integer expression tree."""


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
    if isinstance(func, Expr):              # a named parameter (net.parameter) used as is
        result = func
    elif isinstance(func, (bool, int, float)) and not callable(func):
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


def constant(expr: Expr):
    """The value of a constant node (a number, a named parameter's value or a bool), else
    None: what the code generators inline and the analyses take as fixed."""
    return expr.args[0] if expr.op == "const" else None


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
           "both", "either", "negate", "where", "minimum", "maximum", "count", "prop", "trace",
           "evaluate", "evaluate_on", "to_text", "walk", "fold", "exact_div", "parameter_name",
           "tokens_needed", "counted_places", "constant", "referenced_args", "apply", "LEAVES",
           "JAVASCRIPT_HELPERS"]
