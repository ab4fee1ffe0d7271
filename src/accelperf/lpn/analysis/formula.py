"""Formulas written as text (space constraints, properties to prove) turned into Z3 terms.

The language is a small part of Python's expression syntax, parsed with :mod:`ast` and
never evaluated: numbers, ``+ - * / // %``, comparisons (chains allowed), ``and or not``,
``abs``, ``min``/``max`` of several values, and the input's tokens:

* ``P[i].p`` — property ``p`` of token ``i`` of place ``P``; ``P.p`` when ``P`` holds one
  token;
* ``count(P)``, ``sum(P.p)``, ``mean(P.p)``, ``min(P.p)``, ``max(P.p)`` — over the tokens
  of ``P``; ``list(P.p)`` — the values themselves (for writing a witness input);
* any further name the caller binds, such as ``latency``.

Place names that are not Python names are written with ``_`` (``link.rx`` is ``link_rx``).
``/`` is exact (real) division; ``//`` and ``%`` follow Python.
"""

from __future__ import annotations

import ast

from ...errors import ModelError
from ..expr import _z3_floordiv, _z3_mod, parameter_name


class Tokens:
    """The tokens of one place as Z3 terms: ``values[i][prop]``."""

    def __init__(self, place: str, values: list[dict]):
        self.place, self.values = place, values


def translate(text: str, places: dict[str, Tokens], names: dict | None = None,
              what: str = "formula"):
    """The Z3 term of ``text`` (see the module docstring); ``places`` maps place names to
    their tokens, ``names`` binds further names. Errors name ``what`` and the text."""
    import z3

    names = dict(names or {})
    by_name = {parameter_name(p): t for p, t in places.items()}

    def fail(node, why):
        part = ast.get_source_segment(text, node) or text
        raise ModelError(f"{what} = {text!r} is invalid: {why} (at {part!r})")

    def place_of(node) -> Tokens:
        if not isinstance(node, ast.Name) or node.id not in by_name:
            fail(node, f"a place of the space is expected: {', '.join(by_name) or 'none'}")
        return by_name[node.id]

    def column(node):
        """``P.p``: the list of the property over the place's tokens."""
        if not isinstance(node, ast.Attribute):
            fail(node, "write P.p (a property of the tokens of place P)")
        tokens = place_of(node.value)
        if tokens.values and node.attr not in tokens.values[0]:
            fail(node, f"tokens of {tokens.place!r} have properties "
                       f"{sorted(tokens.values[0])}")
        return [v[node.attr] for v in tokens.values]

    def term(node):
        if isinstance(node, ast.Constant) and not isinstance(node.value, bool):
            if isinstance(node.value, int):
                return z3.IntVal(node.value)
            if isinstance(node.value, float):
                return z3.RealVal(repr(node.value))
        if isinstance(node, ast.Name) and node.id in names:
            return names[node.id]
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Subscript):
                tokens = place_of(node.value.value)
                index = node.value.slice
                if not (isinstance(index, ast.Constant) and isinstance(index.value, int)
                        and 0 <= index.value < len(tokens.values)):
                    fail(node, f"{tokens.place!r} has tokens 0..{len(tokens.values) - 1}")
                values = tokens.values[index.value]
                if node.attr not in values:
                    fail(node, f"tokens of {tokens.place!r} have properties {sorted(values)}")
                return values[node.attr]
            values = column(node)
            if len(values) != 1:
                fail(node, f"{len(values)} tokens: write {node.value.id}[i].{node.attr} or "
                           f"sum/mean/min/max({node.value.id}.{node.attr})")
            return values[0]
        if isinstance(node, ast.BinOp):
            a, b = term(node.left), term(node.right)
            op = type(node.op)
            if op is ast.Add:
                return a + b
            if op is ast.Sub:
                return a - b
            if op is ast.Mult:
                return a * b
            if op is ast.Div:
                return z3.ToReal(a) / z3.ToReal(b) if a.is_int() and b.is_int() else a / b
            if op is ast.FloorDiv:
                return _z3_floordiv(a, b)
            if op is ast.Mod:
                return _z3_mod(a, b)
            fail(node, "operators are + - * / // %")
        if isinstance(node, ast.UnaryOp):
            a = term(node.operand)
            if isinstance(node.op, ast.USub):
                return -a
            if isinstance(node.op, ast.Not):
                return z3.Not(a)
            fail(node, "unary operators are - and not")
        if isinstance(node, ast.Compare):
            parts, left = [], term(node.left)
            for op, right_node in zip(node.ops, node.comparators):
                right = term(right_node)
                parts.append(_compare(node, op, left, right, fail))
                left = right
            return parts[0] if len(parts) == 1 else z3.And(*parts)
        if isinstance(node, ast.BoolOp):
            items = [term(v) for v in node.values]
            return z3.And(*items) if isinstance(node.op, ast.And) else z3.Or(*items)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                not node.keywords:
            return call(node, node.func.id, node.args)
        fail(node, "not part of the formula language (numbers, + - * / // %, comparisons, "
                   "and/or/not, abs, min, max, count, sum, mean, P[i].p)")

    def call(node, name, args):
        if name == "count" and len(args) == 1:
            return z3.IntVal(len(place_of(args[0]).values))
        if name in ("sum", "mean", "list") and len(args) == 1:
            values = column(args[0])
            if name == "list":
                return values
            total = z3.Sum(values) if values else z3.IntVal(0)
            return total if name == "sum" else z3.ToReal(total) / len(values)
        if name in ("min", "max") and args:
            values = column(args[0]) if len(args) == 1 else [term(a) for a in args]
            best = values[0]
            for v in values[1:]:
                best = z3.If(v < best if name == "min" else v > best, v, best)
            return best
        if name == "abs" and len(args) == 1:
            a = term(args[0])
            return z3.If(a >= 0, a, -a)
        fail(node, f"{name}() is not a function of the formula language (abs, min, max, "
                   f"count, sum, mean, list)")

    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ModelError(f"{what} = {text!r} is invalid: not a formula ({exc.msg})") from None
    return term(tree.body)


def _compare(node, op, a, b, fail):
    kind = type(op)
    if kind is ast.Lt:
        return a < b
    if kind is ast.LtE:
        return a <= b
    if kind is ast.Gt:
        return a > b
    if kind is ast.GtE:
        return a >= b
    if kind is ast.Eq:
        return a == b
    if kind is ast.NotEq:
        return a != b
    fail(node, "comparisons are < <= > >= == !=")


def is_condition(term) -> bool:
    """Whether a translated formula is a condition (true or false), not a number."""
    import z3
    return z3.is_bool(term)
