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
import re

from ...errors import ModelError
from ..expr import parameter_name
from ..operators import z3_floordiv, z3_mod


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
        if isinstance(node, ast.Constant) and isinstance(node.value, bool):
            return z3.BoolVal(node.value)
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
                return z3_floordiv(a, b)
            if op is ast.Mod:
                return z3_mod(a, b)
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


def is_generated_interface(source: str) -> bool:
    """Whether a module's text is one written by ``accelperf lpn interface --out``
    (:mod:`.emit`): it has the ``TYPES`` table and the ``PHASES`` switch at top level."""
    return bool(re.search(r"^TYPES = \[", source, re.M)
                and re.search(r"^PHASES = ", source, re.M))


def generated_interface_term(source: str, places: dict[str, Tokens],
                             what: str = "--interface"):
    """The prediction ``E`` of a module written by ``accelperf lpn interface MODEL --out``
    (:mod:`.emit`) as a Z3 real over the input's tokens, for the interface-accuracy proof
    (OSDI'24 §4.4, §5.3.4). The module is parsed, never run (its functions check their
    input with Python branches a Z3 term cannot take): its one entry of ``TYPES`` names
    its tables; ``STREAMS_k`` and ``FIXED_k`` say which named properties it reads
    (``n_P``, ``mean_P_p``, ``P_i_p``), each class's ``_in_class_i`` and ``_latency_i``
    return one formula of this module's language (after unpacking the properties by
    name), and its ``SPACE_k`` conditions (``a['name']``) bound where it answers. ``E`` is
    the first class's latency whose condition holds; where the input is outside
    ``SPACE_k`` or every class, ``E`` is a free
    variable (``E_outside``), so any accuracy property fails there with a counterexample.
    Only the plain interface: with ``PHASES = True`` the module sums a per-token run
    split that is a loop, not a formula."""
    import z3

    def fail(why):
        raise ModelError(f"{what} is invalid: {why}")
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        fail(f"not Python ({exc.msg})")
    tables = {n.targets[0].id: n.value for n in tree.body if isinstance(n, ast.Assign)
              and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)}
    functions = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    if not {"TYPES", "PHASES"} <= set(tables) or not isinstance(tables["TYPES"], ast.List):
        fail("not a module written by `accelperf lpn interface --out` (it has no TYPES "
             "and PHASES tables)")
    if ast.literal_eval(tables["PHASES"]):
        fail("a phase-aware interface (PHASES = True): its latency is a loop over the "
             "stream, not a formula; write the plain one (with --plain)")
    if len(tables["TYPES"].elts) != 1:
        fail(f"it prices {len(tables['TYPES'].elts)} input types (a stream of typed units "
             f"such as messages); the proof takes a module of one type")
    # (name, streams, fixed, ranges, structure, space, sums, overlap, classes)
    entry = tables["TYPES"].elts[0].elts

    def table(node):
        return tables[node.id] if node.id in tables else fail(f"no table {node.id}")
    streams, fixed, space, classes = table(entry[1]), table(entry[2]), table(entry[5]), entry[8]
    sums = functions.get(entry[6].id) or fail(f"no function {entry[6].id}")
    if any(not isinstance(s, ast.Pass) for s in sums.body):
        fail("its formulas read per-token sums of a fixed structure; the proof takes "
             "stream means and token properties only")
    names = {}
    for place, props in ast.literal_eval(streams).items():
        values = _tokens_of(places, place, what).values
        names[f"n_{place}"] = z3.IntVal(len(values))
        for p in props:
            total = z3.Sum([v[p] for v in values]) if values else z3.IntVal(0)
            names[f"mean_{place}_{p}"] = z3.ToReal(total) / max(1, len(values))
    for place, (count, props) in ast.literal_eval(fixed).items():
        values = _tokens_of(places, place, what).values
        if len(values) != count:
            fail(f"it reads {count} tokens of {place!r}; the space has {len(values)}")
        for i, v in enumerate(values):
            names.update({f"{place}_{i}_{p}": v[p] for p in props})

    def formula(text, where):
        return translate(re.sub(r"\ba\[['\"](\w+)['\"]\]", r"\1", text), {}, names,
                         f"{what} {where}")

    def returned(name):
        body = functions[name].body if name in functions else fail(f"no function {name}")
        ret = body[-1]
        if not isinstance(ret, ast.Return) or any(not isinstance(s, ast.Assign)
                                                  for s in body[:-1]):
            fail(f"{name} is not one formula after unpacking its properties")
        return formula(ast.get_source_segment(source, ret.value), name)

    inside = [formula(ast.get_source_segment(source, item.elts[1].body), "SPACE")
              for item in space.elts]
    value = z3.Real("E_outside")
    for cls in reversed(classes.elts):
        in_class, plain = (e.id for e in cls.elts[:2])
        latency = returned(plain)
        value = z3.If(returned(in_class), z3.ToReal(latency) if latency.is_int() else latency,
                      value)
    return z3.If(z3.And(*inside), value, z3.Real("E_outside")) if inside else value


def _tokens_of(places: dict[str, Tokens], place: str, what: str) -> Tokens:
    if place not in places:
        raise ModelError(f"{what} is invalid: it reads place {place!r}, which the space "
                         f"does not fill ({', '.join(places) or 'none'})")
    return places[place]
