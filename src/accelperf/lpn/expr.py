"""Traceable LPN functions: expression trees built by running a function on proxies.

Guard, weight, delay and producer functions are ordinary Python over token properties.
They are called once at build time with proxy tokens; every operation on a proxy builds a
node of an :class:`Expr` tree instead of computing a number. That tree is the single
source for every later use: integer evaluation in the simulator (:func:`compile_python`),
SymPy expressions for performance interfaces (:func:`to_sympy`) and, in later releases,
Z3 terms and C code.

What a function may do: integer arithmetic (``+ - * // %``, ``-x``, ``**`` with a constant
exponent), comparisons, and the helpers :func:`where`, :func:`minimum`, :func:`maximum`,
:func:`both`, :func:`either` and :func:`negate`. A Python ``if``, ``and``/``or``/``not``,
built-in ``min``/``max`` on traced values, ``/`` or float constants cannot be represented;
tracing rejects them and names the line of the function that used them.
"""

from __future__ import annotations

import inspect
import linecache
import sys

from ..errors import ModelError


class TraceError(ModelError):
    """A function the tracer cannot represent as an integer expression tree."""


_INT_OPS = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//", "mod": "%"}
_CMP_OPS = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


class Expr:
    """A node: ``op`` names it, ``args`` holds children (or the constant / property)."""

    __slots__ = ("op", "args", "kind")
    __hash__ = object.__hash__     # == builds a node, so identity hashing is kept

    def __init__(self, op: str, args: tuple, kind: str):
        self.op, self.args, self.kind = op, args, kind

    # ------------------------------------------------------------ construction helpers
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

    def _int(self, other, op: str, swap: bool = False) -> "Expr":
        other = Expr.lift(other)
        for side in (self, other):
            if side.kind != "int":
                raise TraceError(f"arithmetic '{_INT_OPS[op]}' on a condition: a comparison "
                                 f"is not a number; use where(cond, 1, 0)")
        a, b = (other, self) if swap else (self, other)
        return Expr(op, (a, b), "int")

    def __add__(self, o): return self._int(o, "add")
    def __radd__(self, o): return self._int(o, "add", True)
    def __sub__(self, o): return self._int(o, "sub")
    def __rsub__(self, o): return self._int(o, "sub", True)
    def __mul__(self, o): return self._int(o, "mul")
    def __rmul__(self, o): return self._int(o, "mul", True)
    def __floordiv__(self, o): return self._int(o, "floordiv")
    def __rfloordiv__(self, o): return self._int(o, "floordiv", True)
    def __mod__(self, o): return self._int(o, "mod")
    def __rmod__(self, o): return self._int(o, "mod", True)

    def __neg__(self):
        if self.kind != "int":
            raise TraceError("'-' on a condition: use negate(cond) for logical not")
        return Expr("neg", (self,), "int")

    def __pos__(self):
        return self

    def __pow__(self, exponent):
        if not isinstance(exponent, int) or isinstance(exponent, bool) or exponent < 0:
            raise TraceError("'**' needs a constant non-negative integer exponent")
        result = Expr.lift(1)
        for _ in range(exponent):
            result = result * self
        return result

    def __truediv__(self, o):
        raise TraceError("'/' is float division: LPN functions use integer division '//'")

    __rtruediv__ = __truediv__

    def _cmp(self, other, op: str) -> "Expr":
        other = Expr.lift(other)
        if self.kind != "int" or other.kind != "int":
            raise TraceError(f"comparison '{_CMP_OPS[op]}' between conditions: compare numbers")
        return Expr(op, (self, other), "bool")

    def __lt__(self, o): return self._cmp(o, "lt")
    def __le__(self, o): return self._cmp(o, "le")
    def __gt__(self, o): return self._cmp(o, "gt")
    def __ge__(self, o): return self._cmp(o, "ge")
    def __eq__(self, o): return self._cmp(o, "eq")      # type: ignore[override]
    def __ne__(self, o): return self._cmp(o, "ne")      # type: ignore[override]

    def __and__(self, o): return both(self, o)
    def __rand__(self, o): return both(o, self)
    def __or__(self, o): return either(self, o)
    def __ror__(self, o): return either(o, self)
    def __invert__(self): return negate(self)

    def __bool__(self):
        raise TraceError("a traced value was used where Python needs a plain bool (an `if`, "
                         "`and`/`or`/`not`, a chained comparison, or built-in min()/max()): "
                         "write where(cond, a, b), both(), either(), negate(), minimum() or "
                         "maximum() instead")

    def __index__(self):
        raise TraceError("a traced value was used as a Python index or count (e.g. range()): "
                         "LPN functions cannot loop over token values")

    def __float__(self):
        raise TraceError("a traced value was passed to a float function (math.*?): LPN "
                         "functions use integer arithmetic only")

    __int__ = __float__

    def __repr__(self) -> str:
        return to_text(self)


def _bool_args(*values) -> tuple:
    out = tuple(Expr.lift(v) for v in values)
    for v in out:
        if v.kind != "bool":
            raise TraceError("both()/either()/negate() take conditions (comparisons)")
    return out


def both(*conditions) -> Expr:
    """Logical and of conditions (``a & b`` also works)."""
    return Expr("and", _bool_args(*conditions), "bool")


def either(*conditions) -> Expr:
    """Logical or of conditions (``a | b`` also works)."""
    return Expr("or", _bool_args(*conditions), "bool")


def negate(condition) -> Expr:
    """Logical not (``~cond`` also works)."""
    return Expr("not", _bool_args(condition), "bool")


def where(condition, if_true, if_false):
    """``if_true`` where ``condition`` holds, else ``if_false`` (both numbers or both
    conditions). On plain Python values it simply picks one."""
    if not any(isinstance(v, Expr) for v in (condition, if_true, if_false)):
        return if_true if condition else if_false
    c, a, b = (Expr.lift(v) for v in (condition, if_true, if_false))
    if c.kind != "bool":
        raise TraceError("where(cond, a, b): cond must be a comparison or condition")
    if a.kind != b.kind:
        raise TraceError("where(cond, a, b): a and b must both be numbers or both conditions")
    return Expr("where", (c, a, b), a.kind)


def minimum(*values):
    """The smallest of several numbers (traced or plain)."""
    return _extremum("min", values)


def maximum(*values):
    """The largest of several numbers (traced or plain)."""
    return _extremum("max", values)


def _extremum(op, values):
    if not values:
        raise TraceError(f"{op}imum() needs at least one value")
    if not any(isinstance(v, Expr) for v in values):
        return min(values) if op == "min" else max(values)
    args = tuple(Expr.lift(v) for v in values)
    if any(a.kind != "int" for a in args):
        raise TraceError(f"{op}imum() takes numbers, not conditions")
    return Expr(op, args, "int")


def prop(arg: int, name: str, index: int) -> Expr:
    """Property ``name`` (position ``index`` in its token type) of input token ``arg``."""
    return Expr("prop", (arg, name, index), "int")


# ---------------------------------------------------------------------- tracing
class TokenProxy:
    """Stands in for an input token while a function is traced."""

    __slots__ = ("_arg", "_type", "_place")

    def __init__(self, arg: int, token_type, place: str):
        self._arg, self._type, self._place = arg, token_type, place

    def __getattr__(self, name: str) -> Expr:
        props = self._type.properties
        if name not in props:
            raise TraceError(f"tokens of {self._place!r} are {self._type.name} tokens with "
                             f"properties {list(props) or 'none'}; they have no {name!r}")
        return prop(self._arg, name, props.index(name))

    def __getitem__(self, name: str) -> Expr:
        return self.__getattr__(name)


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


def trace(func, inputs: list[tuple[str, object]], what: str, want: str = "int",
          origin=None) -> Expr:
    """Trace ``func`` called with one proxy per input (``(place name, token type)``).

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
        try:
            params = [p for p in inspect.signature(func).parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            varargs = any(p.kind == p.VAR_POSITIONAL
                          for p in inspect.signature(func).parameters.values())
        except (TypeError, ValueError):
            params, varargs = [None] * len(inputs), False
        if not varargs and len(params) != len(inputs):
            names = ", ".join(n for n, _ in inputs) or "none"
            raise TraceError(f"{what} takes {len(params)} argument(s) but the transition has "
                             f"{len(inputs)} input place(s) ({names}): give one parameter "
                             f"per input place, in order")
        proxies = [TokenProxy(i, ttype, name) for i, (name, ttype) in enumerate(inputs)]
        try:
            result = func(*proxies)
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
def walk(expr: Expr):
    """Every node of the tree, parents first."""
    stack = [expr]
    while stack:
        node = stack.pop()
        yield node
        if node.op not in ("const", "prop"):
            stack.extend(reversed(node.args))


def referenced_args(expr: Expr) -> set[int]:
    """Which input tokens the expression reads."""
    return {n.args[0] for n in walk(expr) if n.op == "prop"}


def evaluate(expr: Expr, tokens) -> int | bool:
    """Reference integer evaluation by walking the tree (``tokens[i]`` is a tuple)."""
    op, a = expr.op, expr.args
    if op == "const":
        return a[0]
    if op == "prop":
        return tokens[a[0]][a[2]]
    if op == "where":
        return evaluate(a[1], tokens) if evaluate(a[0], tokens) else evaluate(a[2], tokens)
    values = [evaluate(x, tokens) for x in a]
    if op == "add": return values[0] + values[1]
    if op == "sub": return values[0] - values[1]
    if op == "mul": return values[0] * values[1]
    if op == "floordiv": return values[0] // values[1]
    if op == "mod": return values[0] % values[1]
    if op == "neg": return -values[0]
    if op == "lt": return values[0] < values[1]
    if op == "le": return values[0] <= values[1]
    if op == "gt": return values[0] > values[1]
    if op == "ge": return values[0] >= values[1]
    if op == "eq": return values[0] == values[1]
    if op == "ne": return values[0] != values[1]
    if op == "and": return all(values)
    if op == "or": return any(values)
    if op == "not": return not values[0]
    if op == "min": return min(values)
    if op == "max": return max(values)
    raise ValueError(f"unknown node {op}")


def to_python(expr: Expr) -> str:
    """Python source for the expression over tuples ``a0, a1, ...``."""
    op, a = expr.op, expr.args
    if op == "const":
        return repr(a[0])
    if op == "prop":
        return f"a{a[0]}[{a[2]}]"
    if op in _INT_OPS:
        return f"({to_python(a[0])} {_INT_OPS[op]} {to_python(a[1])})"
    if op in _CMP_OPS:
        return f"({to_python(a[0])} {_CMP_OPS[op]} {to_python(a[1])})"
    if op == "neg":
        return f"(-{to_python(a[0])})"
    if op == "where":
        return f"({to_python(a[1])} if {to_python(a[0])} else {to_python(a[2])})"
    if op in ("and", "or"):
        return "(" + f" {op} ".join(to_python(x) for x in a) + ")"
    if op == "not":
        return f"(not {to_python(a[0])})"
    if op in ("min", "max"):
        return f"{op}(" + ", ".join(to_python(x) for x in a) + ")"
    raise ValueError(f"unknown node {op}")


def compile_python(expr: Expr, nargs: int):
    """A fast Python function ``f(a0, ..., a{n-1})`` computing the expression.

    The source is generated from our own tree (never from user text), so compiling it is
    as safe as the tree itself."""
    params = ", ".join(f"a{i}" for i in range(nargs))
    source = f"lambda {params}: {to_python(expr)}"
    return eval(compile(source, "<lpn-expression>", "eval"), {"__builtins__": {"min": min,
                                                                               "max": max}})


def to_sympy(expr: Expr, symbols):
    """The expression in SymPy; ``symbols(arg, name)`` gives the symbol of a property."""
    import sympy as sp
    op, a = expr.op, expr.args
    conv = lambda x: to_sympy(x, symbols)
    if op == "const":
        return sp.true if a[0] is True else sp.false if a[0] is False else sp.Integer(a[0])
    if op == "prop":
        return symbols(a[0], a[1])
    if op == "add": return conv(a[0]) + conv(a[1])
    if op == "sub": return conv(a[0]) - conv(a[1])
    if op == "mul": return conv(a[0]) * conv(a[1])
    if op == "floordiv": return sp.floor(conv(a[0]) / conv(a[1]))
    if op == "mod": return sp.Mod(conv(a[0]), conv(a[1]))
    if op == "neg": return -conv(a[0])
    if op == "lt": return sp.Lt(conv(a[0]), conv(a[1]))
    if op == "le": return sp.Le(conv(a[0]), conv(a[1]))
    if op == "gt": return sp.Gt(conv(a[0]), conv(a[1]))
    if op == "ge": return sp.Ge(conv(a[0]), conv(a[1]))
    if op == "eq": return sp.Eq(conv(a[0]), conv(a[1]))
    if op == "ne": return sp.Ne(conv(a[0]), conv(a[1]))
    if op == "and": return sp.And(*map(conv, a))
    if op == "or": return sp.Or(*map(conv, a))
    if op == "not": return sp.Not(conv(a[0]))
    if op == "where":
        if expr.kind == "bool":
            return sp.Or(sp.And(conv(a[0]), conv(a[1])), sp.And(sp.Not(conv(a[0])), conv(a[2])))
        return sp.Piecewise((conv(a[1]), conv(a[0])), (conv(a[2]), True))
    if op == "min": return sp.Min(*map(conv, a))
    if op == "max": return sp.Max(*map(conv, a))
    raise ValueError(f"unknown node {op}")


def to_text(expr: Expr, names=None) -> str:
    """Readable infix text; ``names(arg, name)`` labels properties (default ``t0.name``)."""
    op, a = expr.op, expr.args
    label = names or (lambda arg, name: f"t{arg}.{name}")
    t = lambda x: to_text(x, names)
    if op == "const":
        return repr(a[0])
    if op == "prop":
        return label(a[0], a[1])
    if op in _INT_OPS:
        return f"({t(a[0])} {_INT_OPS[op]} {t(a[1])})"
    if op in _CMP_OPS:
        return f"({t(a[0])} {_CMP_OPS[op]} {t(a[1])})"
    if op == "neg":
        return f"-{t(a[0])}"
    if op == "where":
        return f"where({t(a[0])}, {t(a[1])}, {t(a[2])})"
    if op in ("and", "or"):
        return "(" + f" {op} ".join(map(t, a)) + ")"
    if op == "not":
        return f"not {t(a[0])}"
    return f"{op}(" + ", ".join(map(t, a)) + ")"
