"""Formulas written as text (space constraints, properties to prove) turned into Z3 terms.

The language is the one formula language of :mod:`accelperf.formula` (parsed there, never
evaluated, rendered by its Z3 backend) with an input space's vocabulary: numbers,
``+ - * / // %``, comparisons (chains allowed), ``and or not``, ``abs``, ``floor``,
``ceil``, ``min``/``max`` of several values, and the input's tokens:

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
from dataclasses import dataclass, field

from ...errors import ModelError
from ...formula import NOT_MINE, Node, NotAFormula, fold, parse
from ...formula.backends import FUNCTIONS
from ..expr import parameter_name


class Tokens:
    """The tokens of one place as Z3 terms: ``values[i][prop]``."""

    def __init__(self, place: str, values: list[dict]):
        self.place, self.values = place, values


@dataclass(frozen=True)
class PlaceTerm:
    """A space's term as written in a formula: ``kind`` is ``count`` (``count(P)``),
    ``sum``/``mean``/``min``/``max``/``list`` (of ``P.p``) or ``token`` (``P.p``, or
    ``P[i].p`` with ``index``)."""

    kind: str
    place: str
    prop: str | None = None
    index: int | None = None


def written_place(node: Node) -> str | None:
    """The place name a node spells: a name (``link_rx``) or a dotted one (``link.rx``)."""
    if node.kind == "name":
        return node.op
    if node.kind == "property":
        inner = written_place(node.args[0])
        return inner and f"{inner}.{node.op}"
    return None


def find_place(node: Node, places) -> str | None:
    """Which of ``places`` the node names, as written or with ``_`` for the characters a
    Python name cannot hold (:func:`~accelperf.lpn.expr.parameter_name`); None for none."""
    written = written_place(node)
    return next((p for p in places if written in (p, parameter_name(p))), None)


def place_term(node: Node, places) -> PlaceTerm | None:
    """The space's term ``node`` writes, over the place names ``places`` (a name that is
    none of them is kept as written, for the caller to refuse); None where the node is no
    such term."""
    def place(of):
        return find_place(of, places) or written_place(of)
    if node.kind == "call" and len(node.args) == 1 and not node.keywords:
        arg = node.args[0]
        if node.op == "count":
            return PlaceTerm("count", place(arg)) if place(arg) else None
        if node.op in ("sum", "mean", "min", "max", "list"):
            if arg.kind == "property" and place(arg.args[0]):
                return PlaceTerm(node.op, place(arg.args[0]), arg.op)
            return PlaceTerm(node.op, place(arg)) if place(arg) else None
    if node.kind == "property":
        base = node.args[0]
        if base.kind == "index":
            index = base.args[1]
            if index.kind == "number" and type(index.value) is int and place(base.args[0]):
                return PlaceTerm("token", place(base.args[0]), node.op, index.value)
            return None
        return PlaceTerm("token", place(base), node.op) if place(base) else None
    return None


_LANGUAGE = ("numbers, + - * / // %, comparisons, and/or/not, abs, min, max, count, sum, "
             "mean, P[i].p")
_REFUSED = {"operator": "operators are + - * / // %",
            "unary": "unary operators are - and not",
            "comparison": "comparisons are < <= > >= == !=",
            "syntax": f"not part of the formula language ({_LANGUAGE})"}


def translate(text: str, places: dict[str, Tokens], names: dict | None = None,
              what: str = "formula"):
    """The Z3 term of ``text`` (see the module docstring), parsed by the one formula
    language (:mod:`accelperf.formula`) and rendered by its Z3 backend; ``places`` maps
    place names to their tokens, ``names`` binds further names. Errors name ``what`` and
    the text."""
    import z3

    names = dict(names or {})

    def fail(node, why):
        raise ModelError(f"{what} = {text!r} is invalid: {why} (at {node.source!r})",
                         field=what)

    def refuse(node, part):
        if part == "function":
            fail(node, f"{node.op}() is not a function of the formula language (abs, min, "
                       f"max, floor, ceil, count, sum, mean, list)")
        fail(node, _REFUSED[part])

    def place_of(node) -> Tokens:
        found = find_place(node, places)
        if found is None:
            fail(node, f"a place of the space is expected: "
                       f"{', '.join(map(parameter_name, places)) or 'none'}")
        return places[found]

    def column(node):
        """``P.p``: the list of the property over the place's tokens."""
        if node.kind != "property":
            fail(node, "write P.p (a property of the tokens of place P)")
        tokens = place_of(node.args[0])
        if tokens.values and node.op not in tokens.values[0]:
            fail(node, f"tokens of {tokens.place!r} have properties "
                       f"{sorted(tokens.values[0])}")
        return [v[node.op] for v in tokens.values]

    def token_property(node):
        """``P[i].p``, or ``P.p`` of P's one token."""
        base = node.args[0]
        if base.kind == "index":
            tokens, index = place_of(base.args[0]), base.args[1]
            if not (index.kind == "number" and type(index.value) is int
                    and 0 <= index.value < len(tokens.values)):
                fail(node, f"{tokens.place!r} has tokens 0..{len(tokens.values) - 1}")
            values = tokens.values[index.value]
            if node.op not in values:
                fail(node, f"tokens of {tokens.place!r} have properties {sorted(values)}")
            return values[node.op]
        values = column(node)
        if len(values) != 1:
            fail(node, f"{len(values)} tokens: write {base.op}[i].{node.op} or "
                       f"sum/mean/min/max({base.op}.{node.op})")
        return values[0]

    def leaf(node):
        if node.kind == "name" and node.op in names:
            return names[node.op]
        if node.kind == "property":
            return token_property(node)
        base = node.args[0] if node.kind == "index" else None
        if base is not None and base.kind == "name" and isinstance(names.get(base.op), dict):
            table, key = names[base.op], node.args[1].value           # a['n_blocks']
            if key not in table:
                fail(node, f"{base.op} has no {key!r}")
            return table[key]
        known = sorted(n for n, v in names.items() if not isinstance(v, dict))
        if node.kind == "name" and known:       # a typo of a name it binds (latncy)
            from ...parameters import nearest
            fail(node, f"{node.op!r} is no name of this formula (names: "
                       f"{', '.join(known)}; places by count(P), sum(P.p), P[i].p)"
                       f"{nearest(node.op, known)}")
        if node.kind != "call":
            refuse(node, "syntax")
        name, args = node.op, node.args
        if name == "count" and len(args) == 1:
            return z3.IntVal(len(place_of(args[0]).values))
        if name in ("sum", "mean", "list") and len(args) == 1:
            values = column(args[0])
            if name == "list":
                return values
            total = z3.Sum(values) if values else z3.IntVal(0)
            return total if name == "sum" else z3.ToReal(total) / len(values)
        if name in ("min", "max") and len(args) == 1:
            values = column(args[0])
            if not values:
                fail(node, f"{name}() of a place with no tokens")
            return FUNCTIONS[name].z3(*values)
        return NOT_MINE

    try:
        tree = parse(text.strip())
    except NotAFormula as exc:
        raise ModelError(f"{what} = {text!r} is invalid: not a formula ({exc.reason})") \
            from None
    return fold(tree, "z3", leaf, refuse)


def is_condition(term) -> bool:
    """Whether a translated formula is a condition (true or false), not a number."""
    import z3
    return z3.is_bool(term)


def is_generated_interface(source: str) -> bool:
    """Whether a module's text is one written by ``accelperf lpn interface --out``
    (:mod:`.emit`): it has the ``TYPES`` table and the ``PHASES`` switch at top level."""
    return bool(re.search(r"^TYPES = \[", source, re.M)
                and re.search(r"^PHASES = ", source, re.M))


OUTSIDE = "E_outside"
"""The name of the free Z3 real that stands for E where a generated module gives none."""


@dataclass(frozen=True)
class GeneratedInterface:
    """A module written by ``accelperf lpn interface --out``, read as Z3 terms over a
    space's tokens (:func:`generated_interface`): ``term`` is its prediction ``E``;
    ``types`` pairs the name of each input type the space's inputs may take with the
    condition under which an input is priced as that type (the module's first type
    whose token counts, fixed properties and ranges match)."""

    term: object = field(repr=False)
    types: tuple = ()

    def type_of(self, evaluate) -> str | None:
        """The type of the input on which ``evaluate`` (a Z3 term to its value) gives
        the space's variables their values; None when it is of none of the types."""
        import z3
        return next((name for name, condition in self.types
                     if z3.is_true(evaluate(condition))), None)

    def priced(self):
        """The Z3 condition that the module gives a value: E does not depend on the free
        ``E_outside`` that stands for it where the input is of no type, outside its
        ``SPACE_k`` or in no class (a value the solver picks for it is no prediction)."""
        import z3
        outside = z3.Real(OUTSIDE)
        return z3.substitute(self.term, (outside, z3.RealVal(0))) == \
            z3.substitute(self.term, (outside, z3.RealVal(1)))

    def prices(self, evaluate) -> bool:
        """Whether the module gives a value at the input where ``evaluate`` (a Z3 term to
        its value) puts the space's variables (:meth:`priced`)."""
        import z3
        return z3.is_true(z3.simplify(evaluate(self.priced())))

    def __repr__(self) -> str:
        return f"GeneratedInterface(types {[name for name, _ in self.types]})"


def generated_interface_term(source: str, places: dict[str, Tokens],
                             what: str = "interface"):
    """The prediction ``E`` of a generated module (:func:`generated_interface`)."""
    return generated_interface(source, places, what).term


def generated_interface(source: str, places: dict[str, Tokens],
                        what: str = "interface") -> GeneratedInterface:
    """The prediction ``E`` of a module written by ``accelperf lpn interface MODEL --out``
    (:mod:`.emit`) as a Z3 real over the input's tokens, for the interface-accuracy proof
    (OSDI'24 §4.4, §5.3.4). The module is parsed, never run (its functions check their
    input with Python branches a Z3 term cannot take), and read as its ``_which`` and
    ``latency`` do for one unit of input:

    * the input is of the first entry of ``TYPES`` whose ``FIXED_k`` token counts equal
      the space's, whose ``STRUCTURE_k`` properties the tokens have and whose
      ``RANGES_k`` hold (§5.3.1's input types: a Protoacc message format);
    * of that type it reads the named properties ``n_P``, ``mean_P_p`` (``STREAMS_k``),
      ``P_i_p`` (``FIXED_k``) and the per-token sums ``sum_j`` ``_sums_k`` computes
      (``sum(f(t['p']) for t in toks['P'])``, with ``math.floor``/``math.ceil``);
    * ``E`` is the first class's latency whose ``_in_class`` holds (with ``PHASES =
      True``, the sum of its phases where each is one formula: a type without streams);
      each function returns one formula of this module's language after unpacking the
      properties by name.

    Where the input is of no type, outside ``SPACE_k`` or in no class, ``E`` is a free
    variable (``E_outside``), so any accuracy property fails there with a
    counterexample. A space whose token counts fit none of the types is an error: the
    proof takes a space of one unit (one message) of the module's types."""
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
    reader = _ModuleReader(source, tables, functions, places, what,
                           bool(ast.literal_eval(tables["PHASES"])))
    outside = z3.Real(OUTSIDE)
    branches, why_not = [], []
    for entry in tables["TYPES"].elts:
        name = ast.literal_eval(entry.elts[0])
        match = reader.matches(entry.elts, why_not, name)
        if match is not None:
            branches.append((name, match, reader.type_term(entry.elts, outside)))
    if not branches:
        fail("the space's tokens fit none of its input types (" + "; ".join(why_not) +
             "): give a space of one unit of one type")
    value, types, before = outside, [], z3.BoolVal(False)
    for name, match, term in reversed(branches):
        value = z3.If(match, term, value)
    for name, match, _ in branches:
        types.append((name, z3.simplify(z3.And(match, z3.Not(before)))))
        before = z3.Or(before, match)
    return GeneratedInterface(value, tuple(t for t in types if not z3.is_false(t[1])))


class _ModuleReader:
    """The parts of one generated module as Z3 terms (see :func:`generated_interface`)."""

    def __init__(self, source, tables, functions, places, what, phases):
        self.source, self.tables, self.functions = source, tables, functions
        self.places, self.what, self.phases = places, what, phases

    def fail(self, why):
        raise ModelError(f"{self.what} is invalid: {why}")

    def table(self, node):
        if not isinstance(node, ast.Name) or node.id not in self.tables:
            self.fail(f"no table {getattr(node, 'id', '?')}")
        return self.tables[node.id]

    def function(self, node):
        name = getattr(node, "id", "?")
        return self.functions.get(name) or self.fail(f"no function {name}")

    def matches(self, entry, why_not: list, name: str):
        """The Z3 condition under which the space's input is of this type (None when
        its token counts rule the type out)."""
        import z3
        fixed = ast.literal_eval(self.table(entry[2]))
        structure = ast.literal_eval(self.table(entry[4]))
        ranges = ast.literal_eval(self.table(entry[3]))
        conditions = []
        for place, (count, props) in fixed.items():
            have = len(self.places[place].values) if place in self.places else 0
            if have != count:
                why_not.append(f"{name} reads {count} tokens of {place!r}; the space has "
                               f"{have}")
                return None
            for i, v in enumerate(self.places[place].values if count else []):
                for p, want in (structure.get(place) or [{}] * count)[i].items():
                    conditions.append(v[p] == want)
                for p in props:
                    lo, hi = ranges[place][p]
                    conditions += [v[p] >= lo, v[p] <= hi]
        return z3.And(*conditions) if conditions else z3.BoolVal(True)

    def type_term(self, entry, outside):
        """``E`` for an input of this type."""
        import z3
        streams, fixed = ast.literal_eval(self.table(entry[1])), \
            ast.literal_eval(self.table(entry[2]))
        names = {}
        for place, props in streams.items():
            if place not in self.places:
                self.fail(f"it reads place {place!r}, which the space does not fill "
                          f"({', '.join(self.places) or 'none'})")
            values = self.places[place].values
            names[f"n_{_module_name(place)}"] = z3.IntVal(len(values))
            for p in props:
                total = z3.Sum([v[p] for v in values]) if values else z3.IntVal(0)
                names[f"mean_{_module_name(place)}_{p}"] = z3.ToReal(total) / max(1, len(values))
        for place, (count, props) in fixed.items():
            for i, v in enumerate(self.places[place].values if count else []):
                names.update({f"{_module_name(place)}_{i}_{p}": v[p] for p in props})
        names.update(self.sums(self.function(entry[6])))
        inside = [self.formula(ast.get_source_segment(self.source, item.elts[1].body),
                               "SPACE", names) for item in self.table(entry[5]).elts]
        value = outside
        if not isinstance(entry[8], ast.List):
            self.fail("its TYPES entries do not end with a list of classes")
        for cls in reversed(entry[8].elts):
            in_class, plain, by_phase = cls.elts[:3]
            latency = self.phased(by_phase, names) if self.phases else \
                self.returned(plain, names)
            value = z3.If(self.returned(in_class, names),
                          z3.ToReal(latency) if latency.is_int() else latency, value)
        return z3.If(z3.And(*inside), value, outside) if inside else value

    def formula(self, text, where, names):
        """A formula of the module over the names it unpacks, or reads as ``a['name']``."""
        return translate(text, {}, {**names, "a": names}, f"{self.what} {where}")

    def returned(self, node, names):
        f = self.function(node)
        ret = f.body[-1]
        if not isinstance(ret, ast.Return) or any(not isinstance(s, ast.Assign)
                                                  for s in f.body[:-1]):
            self.fail(f"{f.name} is not one formula after unpacking its properties")
        return self.formula(ast.get_source_segment(self.source, ret.value), f.name, names)

    def phased(self, node, names):
        """The sum of a class's phases, each appended as one formula."""
        import z3
        f, parts = self.function(node), []
        for stmt in f.body:
            call = stmt.value if isinstance(stmt, ast.Expr) else None
            if isinstance(stmt, (ast.Assign, ast.Return)):
                continue
            if not (isinstance(call, ast.Call) and getattr(call.func, "attr", "") == "append"
                    and isinstance(call.args[0], ast.Tuple)):
                self.fail("a phase-aware interface (PHASES = True) whose phases split a "
                          "stream into runs: its latency is a loop over the stream, not a "
                          "formula; write the plain one (with --plain)")
            parts.append(self.formula(ast.get_source_segment(
                self.source, call.args[0].elts[2]), f.name, names))
        return z3.Sum(*[z3.ToReal(p) if p.is_int() else p for p in parts]) if parts else \
            z3.RealVal(0)

    def sums(self, f) -> dict:
        """``sum_j`` of ``_sums_k``: each ``a['sum_j'] = sum(EXPR for t in TOKENS)``."""
        import z3
        out = {}
        for stmt in f.body:
            if isinstance(stmt, ast.Pass):
                continue
            target = stmt.targets[0] if isinstance(stmt, ast.Assign) else None
            gen = stmt.value.args[0] if isinstance(stmt, ast.Assign) and \
                isinstance(stmt.value, ast.Call) and stmt.value.args else None
            if not (isinstance(target, ast.Subscript) and isinstance(gen, ast.GeneratorExp)):
                self.fail(f"{f.name} is not a list of per-token sums "
                          f"a['sum_j'] = sum(f(t) for t in toks[...])")
            name = ast.literal_eval(target.slice)
            place, indices = self._summed(gen.generators[0].iter, f.name)
            body = ast.get_source_segment(self.source, gen.elt)      # f(t['p'])
            values = self.places[place].values if place in self.places else []
            terms = []
            for i in (range(len(values)) if indices is None else indices):
                if i >= len(values):
                    self.fail(f"{f.name} sums token {i} of {place!r}; the space has "
                              f"{len(values)}")
                terms.append(translate(body, {}, {"t": values[i]}, f"{self.what} {name}"))
            out[name] = z3.Sum(*terms) if terms else z3.IntVal(0)
        return out

    def _summed(self, node, where):
        """(place, token indices or None for every token) of ``toks['P']`` or
        ``(toks['P'][i] for i in (...))``."""
        if isinstance(node, ast.Subscript) and getattr(node.value, "id", "") == "toks":
            return ast.literal_eval(node.slice), None
        if isinstance(node, ast.GeneratorExp) and isinstance(node.elt, ast.Subscript) and \
                isinstance(node.elt.value, ast.Subscript):
            return ast.literal_eval(node.elt.value.slice), \
                list(ast.literal_eval(node.generators[0].iter))
        self.fail(f"{where} sums tokens it picks in a way this reader does not know")


def _module_name(place: str) -> str:
    """A place's name in a generated module's formulas (the module's own ``_name``)."""
    name = re.sub(r"\W", "_", place)
    return "_" + name if name[:1].isdigit() else name
