"""Input spaces: the set of initial markings an analysis covers (OSDI'24 §4.1, §4.4).

The one definition of an input space for interfaces (:mod:`.interface`), input classes
(:mod:`.classes`), verification (:mod:`.verify`) and sizing (:mod:`.sizing`), and the one
file format of every ``--space`` option (docs/explanation/spaces-and-proofs.md). A space
says, for each place the input fills, how many tokens it gets and what range each of
their properties may take, plus constraints between them; TOML::

    model = "jpeg-decoder"                 # optional: checked against the model used
    input = "list(blocks.symbols)"         # optional: Ψ's input, to write witnesses in
    constraints = ["sum(blocks.symbols) <= 115"]

    [places.blocks]                        # a place the input fills
    count = 18                             # N tokens, or a range "6..18" (or [6, 18])
    properties = { symbols = [1, 63] }     # each token's property: [lo, hi] or N
    # count_range = "stream" or "each": what a range means (.space_counts)

Properties not listed are 0. A fixed ``count`` gives every token its own value per
property (``blocks[3].symbols``; interfaces' symbol ``blocks_3_symbols``). A ``count``
range with ``count_range = "stream"`` is, for an interface, a *stream* described by its
number ``n_P`` and the mean of each property (the paper's ``img.num_blocks``); ``probe =
K`` runs such a stream token by token on K tokens (streams its consumers share);
``by_token = true``: classes of one token. Verification encodes every token with its own
variables, so it takes a count range as one space per combination of counts
(:meth:`InputSpace.fixed_counts`, at most :data:`MAX_COUNT_COMBINATIONS`); ``count(P)`` in
a constraint rules combinations out. ``count_range = "each"`` says the range is only
that: a space per count, which interfaces refuse (:mod:`.space_counts`).

``example = "default"`` (the model's own example input), a file next to the space file, or
the input written inline, with ``[vary.PLACE]`` tables ``prop = [lo, hi]``, is instead a
*fixed structure* (OSDI'24 §5.3.1's input types: a Protoacc message type, a Menshen
packet stream, a VTA program): the tokens Ψ makes of the example, the properties named in
``vary`` ranging and every other one kept (:func:`space_from_input`).

Constraints and ``input`` are formulas of :mod:`.formula`: ``count(P)``, ``sum(P.p)``,
``mean(P.p)``, ``P.p`` (the single token of P), ``P[i].p``, ``list(P.p)`` (in ``input``),
arithmetic and comparisons. ``input`` (a formula, or a table of them for an input that is
a JSON object) gives the value Ψ takes; a witness written with it must give back exactly
the tokens found, which the verifier checks. Without ``input`` a witness is shown as each
place's token count, with the properties that vary (:meth:`InputSpace.shown`).
"""

from __future__ import annotations

import itertools
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from ...errors import ModelError, invalid
from ..expr import parameter_name
from ..net import Model
from .space_counts import count_range, integer_range, token_count

# SymPy (interfaces' symbols) is imported where used: verification, which uses Z3, need
# not wait the half second it takes to load.
KEYS = ("model", "input", "constraints", "places", "example", "vary")
"""The keys of a space file."""

MAX_COUNT_COMBINATIONS = 64
"""Token-count combinations a space may span for verification (each is its own space)."""


@dataclass(frozen=True)
class PlaceSpace:
    """The tokens one place starts with: a number in ``count`` (lo, hi), each property in
    its range (``properties``: name -> (lo, hi)); a fixed structure's other properties
    per token in ``values``."""

    place: str
    count: tuple[int, int]
    properties: dict = field(default_factory=dict)
    probe: int | None = None                # a stream run token by token on this many
    values: tuple | None = None             # per token {prop: value} of fixed properties
    by_token: bool = False                  # a stream priced token by token (token_stream)
    each: bool = False                      # count_range = "each": no stream (space_counts)

    @property
    def stream(self) -> bool:
        return self.count[0] != self.count[1]

    @property
    def counts(self) -> range:
        return range(self.count[0], self.count[1] + 1)

    def fixed(self, index: int) -> dict:
        """The properties token ``index`` has fixed values for (a fixed structure)."""
        return self.values[index] if self.values else {}

    def varying(self) -> list[str]:
        """The properties whose value ranges."""
        return [p for p, (lo, hi) in self.properties.items() if lo < hi]


@dataclass(frozen=True)
class InputSpace:
    """A checked input space of one model (see the module docstring)."""

    places: tuple[PlaceSpace, ...]
    constraints: tuple[str, ...] = ()
    model: str | None = None
    input: object = None                    # a formula or {key: formula}: Ψ's input
    origin: str = "space"                   # where it came from, for messages
    # the tokens of the input a fixed-structure space was made from ({place: [{prop:
    # value}]}): a point of the type its derivations can use (:mod:`.handover`)
    example: dict | None = field(default=None, compare=False, hash=False, repr=False)

    def __repr__(self) -> str:
        parts = [f"{p.place}: {p.count[0]}" + (f"..{p.count[1]}" if p.stream else "")
                 for p in self.places]
        return f"InputSpace({', '.join(parts)}; {len(self.constraints)} constraint(s))"

    @property
    def named(self) -> str:
        """The space as a message names it: its file, else its places and counts."""
        return repr(self) if self.origin == "space" else self.origin

    def place(self, name: str) -> PlaceSpace:
        return next(p for p in self.places if p.place == name)

    @property
    def ranged(self) -> bool:
        """Some place's token count is a range."""
        return any(p.stream for p in self.places)

    def fixed_counts(self) -> list["InputSpace"]:
        """The space as one space per combination of token counts (verification encodes
        every token with its own variables, so a count is fixed per space)."""
        combos = 1
        for p in self.places:
            combos *= len(p.counts)
            if combos > MAX_COUNT_COMBINATIONS:
                raise invalid(f"{self.origin}: places.{p.place}.count",
                              f"{p.count[0]}..{p.count[1]}",
                              f"for verification, token-count ranges spanning at most "
                              f"{MAX_COUNT_COMBINATIONS} combinations in all (each is "
                              f"verified as its own space): narrow the range or split it")
        out = []
        for counts in itertools.product(*(p.counts for p in self.places)):
            places = tuple(replace(p, count=(n, n), probe=None)
                           for p, n in zip(self.places, counts))
            named = ", ".join(f"{p.place}: {p.count[0]}" for p in places)
            out.append(replace(self, places=places, origin=f"{self.origin} ({named} tokens)"))
        return out

    # ------------------------------------------------------------ Z3 (verification)
    def variables(self, model: Model) -> dict:
        """{place name: formula.Tokens}: one Z3 integer per token property that varies,
        the constant for one that does not."""
        import z3

        from .formula import Tokens
        if self.ranged:
            raise ModelError(f"{self.origin}: a space with token-count ranges has no single "
                             f"set of variables; use fixed_counts()")
        out = {}
        for p in self.places:
            props = model.places[model.place_id(p.place)].token_type.properties

            def value(i, name):
                lo, hi = p.properties.get(name, (p.fixed(i).get(name, 0),) * 2)
                return z3.Int(f"{p.place}[{i}].{name}") if lo < hi else z3.IntVal(lo)
            out[p.place] = Tokens(p.place, [{name: value(i, name) for name in props}
                                            for i in range(p.count[0])])
        return out

    def constraint_terms(self, tokens: dict) -> list:
        """The ranges and constraints of the space as Z3 conditions."""
        import z3

        from .formula import is_condition, translate
        out = []
        for p in self.places:
            for values in tokens[p.place].values:
                for name, (lo, hi) in p.properties.items():
                    if not z3.is_int_value(values[name]):
                        out += [values[name] >= lo, values[name] <= hi]
        for i, text in enumerate(self.constraints):
            term = translate(text, tokens, what=f"{self.origin}: constraints[{i}]")
            if not is_condition(term):
                raise invalid(f"{self.origin}: constraints[{i}]", text,
                              "a condition (a comparison), not a number")
            out.append(term)
        return out

    def user_input(self, tokens: dict, model_values):
        """The witness in Ψ's input format: ``input`` evaluated with ``model_values(term)``
        (a Z3 model's evaluation); None when the space has no ``input``."""
        from .formula import translate

        def value(text, key):
            term = translate(text, tokens, what=f"{self.origin}: {key}")
            if isinstance(term, list):
                return [_plain(model_values(t)) for t in term]
            return _plain(model_values(term))
        if self.input is None:
            return None
        if isinstance(self.input, dict):
            return {k: value(v, f"input.{k}") for k, v in self.input.items()}
        return value(self.input, "input")

    def shown(self, sample: dict) -> dict:
        """An input of the space ({place: [{prop: value}]}) as a reader wants it without
        an ``input`` formula: per place its token count, or the tokens' varying
        properties (a list of values when one property varies)."""
        out = {}
        for p in self.places:
            tokens, vary = sample[p.place], p.varying()
            out[p.place] = len(tokens) if not vary else \
                [t[vary[0]] for t in tokens] if len(vary) == 1 else \
                [{k: t[k] for k in vary} for t in tokens]
        return out


def _plain(v):
    import z3
    if z3.is_int_value(v):
        return v.as_long()
    if z3.is_rational_value(v):
        return v.numerator_as_long() / v.denominator_as_long()
    raise ModelError(f"witness value {v} is not a number")


# ---------------------------------------------------------------------- symbols
def token_symbol(place: str, index: int, prop: str) -> sympy.Symbol:
    """The value of property ``prop`` of token ``index`` of a fixed-count place."""
    import sympy
    return sympy.Symbol(f"{parameter_name(place)}_{index}_{prop}", integer=True)


def count_symbol(place: str) -> sympy.Symbol:
    """The number of tokens of a stream."""
    import sympy
    return sympy.Symbol(f"n_{parameter_name(place)}", integer=True, positive=True)


def mean_symbol(place: str, prop: str) -> sympy.Symbol:
    """The mean of property ``prop`` over a stream's tokens."""
    import sympy
    return sympy.Symbol(f"mean_{parameter_name(place)}_{prop}", real=True)


def symbol_ranges(space: InputSpace) -> dict:
    """{symbol: (lo, hi)} of every symbol the space defines (a stream's ``n_P`` and
    means, a fixed count's tokens); a count range enumerated count by count has none."""
    out = {}
    for p in space.places:
        if p.each and p.stream:
            raise invalid(f"{space.origin}: places.{p.place}.count_range", "each",
                          "\"stream\" for an interface or input classes, which describe "
                          "a count range as a stream of n tokens (\"each\" is a space per "
                          "count, for verification)")
        if p.stream:
            out[count_symbol(p.place)] = p.count
            for prop, rng in p.properties.items():
                out[mean_symbol(p.place, prop)] = rng
        if p.probe:
            for i in range(p.probe):
                for prop, rng in p.properties.items():
                    out[token_symbol(p.place, i, prop)] = rng
        elif not p.stream:
            for i in range(p.count[0]):
                for prop, rng in p.properties.items():
                    out[token_symbol(p.place, i, prop)] = rng
    return out


# ---------------------------------------------------------------------- reading
def _strings(origin: str, data: dict) -> tuple[tuple, object]:
    """The ``constraints`` and ``input`` of a space table, checked for shape."""
    constraints = data.get("constraints", [])
    if not isinstance(constraints, list) or not all(isinstance(c, str) for c in constraints):
        raise invalid(f"{origin}: constraints", constraints, "a list of strings")
    shape = data.get("input")
    if shape == "default" or "vary" in data and shape is not None and "example" not in data:
        raise invalid(f"{origin}: input", shape, "a formula giving Ψ's input from the tokens "
                      "(e.g. \"count(items)\"); a space shaped like an example input is "
                      "written example = \"default\" (or a file) with [vary.PLACE] tables")
    if shape is not None and not (isinstance(shape, str) or (
            isinstance(shape, dict) and all(isinstance(v, str) for v in shape.values()))):
        raise invalid(f"{origin}: input", shape, "a formula or a table of formulas")
    return tuple(constraints), shape


def space_from_input(model: Model, user_input, vary: dict, origin: str = "space",
                     constraints=(), shape=None) -> InputSpace:
    """A fixed-structure space (OSDI'24 §5.3.1's input classes of Protoacc, Menshen and
    VTA): the tokens Ψ makes of ``user_input``, every one kept with its own symbols; the
    properties named in ``vary`` ({place: {prop: (lo, hi)}}) range, every other property
    keeps the input's value. For Protoacc a message *type* (field kinds fixed, element
    sizes ranged), for Menshen a packet stream of fixed length and kinds, sizes ranged,
    for VTA one program."""
    if not isinstance(vary, dict):
        raise invalid(f"{origin}: vary", vary, "a table [vary.PLACE] prop = [lo, hi]")
    marking = model.marking(user_input)
    inputs = {model.places[pid].name: (pid, toks) for pid, toks in marking.tokens.items()
              if pid not in model.initial and toks}
    for name, props in vary.items():
        if name not in inputs:
            raise invalid(f"{origin}: vary place", name,
                          f"a place the input fills ({', '.join(inputs)})")
        ttype = model.places[inputs[name][0]].token_type
        if not isinstance(props, dict) or not set(props) <= set(ttype.properties):
            raise invalid(f"{origin}: vary.{name}", props,
                          f"a table of properties of {ttype.name} tokens {list(ttype.properties)}")
    places, example = [], {}
    for name, (pid, toks) in inputs.items():
        props = model.places[pid].token_type.properties
        example[name] = [dict(zip(props, (int(v) for v in tok))) for tok in toks]
        ranged = {p: integer_range(f"{origin}: vary.{name}.{p}",
                                   list(r) if isinstance(r, tuple) else r)
                  for p, r in vary.get(name, {}).items()}
        values = tuple({p: int(v) for p, v in zip(props, tok) if p not in ranged}
                       for tok in toks)
        places.append(PlaceSpace(name, (len(toks), len(toks)), ranged, None, values))
    return _checked(model, InputSpace(tuple(places), tuple(constraints), model.name,
                                      shape, origin, example))


def structure_space(model: Model, user_input, vary: dict | None = None) -> InputSpace:
    """The fixed-structure space (type) of ``user_input``: :func:`space_from_input` with
    the sizes the model declares ranged (``model.declared.structure``: the bytes of each
    Protoacc field element, the words of each Menshen packet; everything else is the
    type) unless ``vary`` says otherwise."""
    return space_from_input(model, user_input,
                            (model.declared.structure or {}) if vary is None else vary)


def _example(model: Model, value, origin: str):
    """The input a space file's ``example`` names: "default" (the model's own example),
    a file (relative to the space file) or the parsed input written inline."""
    if value == "default":
        return model.default_input
    if isinstance(value, str):
        from ..loader import load_input
        path = Path(origin).parent / value
        if not path.is_file():
            raise invalid(f"{origin}: example", value, "\"default\", a file next to the "
                          "space file, or the input written inline")
        return load_input(str(path), model)
    return value


def space_from_dict(model: Model, data: dict, origin: str = "space") -> InputSpace:
    """Check a parsed space against ``model`` (see the module docstring): every key,
    place, property and formula must exist and parse."""
    if not isinstance(data, dict):
        raise invalid(origin, data, "a TOML table")
    unknown = [k for k in data if k not in KEYS]
    if unknown:
        raise invalid(f"{origin}: key {unknown[0]!r}", data[unknown[0]],
                      f"the keys are {', '.join(KEYS)}")
    if data.get("model") is not None and data["model"] != model.name:
        raise invalid(f"{origin}: model", data["model"], f"this space is checked against "
                      f"model {model.name!r}; give that name or leave the key out")
    constraints, shape = _strings(origin, data)
    if "example" in data or "vary" in data:
        if "places" in data:
            raise invalid(f"{origin}: places", data["places"], "no [places] table beside "
                          "example = ... (the example's tokens are the places)")
        if "example" not in data:
            raise invalid(f"{origin}: vary", data["vary"], "[vary] tables with example = "
                          "\"default\", a file, or the input written inline")
        return space_from_input(model, _example(model, data["example"], origin),
                                data.get("vary", {}), origin, constraints, shape)
    places = data.get("places")
    if not isinstance(places, dict) or not places:
        raise invalid(f"{origin}: places", places, "a table [places.NAME] per place the "
                      "input fills, with count = N and properties = {p = [lo, hi]}")
    out = []
    for name, entry in places.items():
        where = f"{origin}: places.{name}"
        try:
            pid = model.place_id(name)
        except ModelError:
            raise invalid(where, name, f"a place of {model.name!r}: "
                          f"{', '.join(p.name for p in model.places)}") from None
        if not isinstance(entry, dict) or set(entry) - {"count", "properties", "probe",
                                                        "by_token", "count_range"}:
            raise invalid(where, entry, "a table with count = N (or \"lo..hi\"), "
                          "properties = {p = [lo, hi]} and, for a stream, probe = K or "
                          "by_token = true; for a range, count_range = \"stream\" or "
                          "\"each\"")
        lo, hi = token_count(f"{where}.count", entry.get("count"))
        each = count_range(where, entry, lo, hi)
        props = entry.get("properties", {})
        if not isinstance(props, dict):
            raise invalid(f"{where}.properties", props, "a table {p = [lo, hi]}")
        known = model.places[pid].token_type.properties
        ranges = {}
        for prop, rng in props.items():
            if prop not in known:
                raise invalid(f"{where}.properties.{prop}", rng,
                              f"tokens of {name!r} have properties {list(known) or 'none'}")
            ranges[prop] = integer_range(f"{where}.properties.{prop}", rng)
        probe = entry.get("probe")
        if probe is not None and (isinstance(probe, bool) or not isinstance(probe, int) or
                                  probe < 1 or lo == hi):
            raise invalid(f"{where}.probe", probe,
                          "an integer >= 1, for a place whose count is a range")
        by_token = entry.get("by_token", False)
        if by_token not in (True, False) or by_token and (lo == hi or probe is not None):
            raise invalid(f"{where}.by_token", by_token, "true or false (true: a count range)")
        unlisted = [p for p in known if p not in ranges]      # 0, as the docstring says
        if lo == hi:
            values = tuple({p: 0 for p in unlisted} for _ in range(lo)) if unlisted else None
        else:
            values = None
            ranges.update({p: (0, 0) for p in unlisted})
        out.append(PlaceSpace(name, (lo, hi), ranges, probe, values, by_token, each))
    return _checked(model, InputSpace(tuple(out), constraints, data.get("model"), shape,
                                      origin))


def _checked(model: Model, space: InputSpace) -> InputSpace:
    """Parse the space's formulas now, so a typo is reported before work starts: over Z3
    for every count combination when there are few (a verifiable space), else over
    SymPy (an interface's stream)."""
    from .formula import translate
    counts = 1
    for p in space.places:
        counts *= len(p.counts)
    if counts > MAX_COUNT_COMBINATIONS or sum(p.count[1] for p in space.places) > 10_000:
        for c in space.constraints:
            constraint_exprs(space, c)
        return space
    for fixed in space.fixed_counts():
        tokens = fixed.variables(model)
        fixed.constraint_terms(tokens)
        shape = space.input if isinstance(space.input, dict) else \
            {} if space.input is None else {"": space.input}
        for key, text in shape.items():
            translate(text, tokens, what=f"{space.origin}: input{'.' if key else ''}{key}")
    return space


def read_space_file(path: str | Path) -> dict:
    """The table of a space TOML file; a missing, unreadable or malformed file is one
    error naming ``--space``."""
    path = Path(path)
    try:
        return tomllib.loads(path.read_text("utf-8-sig"))
    except FileNotFoundError:
        raise invalid("--space", str(path), "an existing TOML file (no such file)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise invalid("--space", str(path), f"a readable TOML file ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise invalid("--space", str(path), f"valid TOML ({exc})") from None


def load_space(model: Model, path: str | Path) -> InputSpace:
    """Read and check a space file; every error is one line naming the file and key."""
    return space_from_dict(model, read_space_file(path), str(path))


# ---------------------------------------------------------------------- constraints
def _place_term(space: InputSpace, text: str, kind: str, place: str, prop: str | None,
                index: int | None = None):
    import sympy
    names = [p.place for p in space.places]
    if place not in names:
        raise invalid("constraint", text, f"a constraint over the space's places "
                      f"({', '.join(names)}); {place!r} is not one")
    ps = space.place(place)
    if kind == "count":
        return count_symbol(place) if ps.stream else sympy.Integer(ps.count[0])
    if prop not in ps.properties:
        raise invalid("constraint", text, f"properties of {place} are {list(ps.properties)}")
    if ps.stream:
        if index is not None:
            raise invalid("constraint", text, f"{place} is a stream: use sum/mean, not [i]")
        mean = mean_symbol(place, prop)
        return count_symbol(place) * mean if kind == "sum" else mean
    tokens = [token_symbol(place, i, prop) for i in range(ps.count[0])]
    if index is not None:
        if index >= len(tokens):
            raise invalid("constraint", text, f"{place} has {len(tokens)} token(s)")
        return tokens[index]
    if kind == "sum":
        return sympy.Add(*tokens)
    if kind == "mean":
        return sympy.Add(*tokens) / max(1, len(tokens))
    if len(tokens) != 1:
        raise invalid("constraint", text, f"{place} has {len(tokens)} tokens: write "
                      f"sum({place}.{prop}), mean(...) or {place}[i].{prop}")
    return tokens[0]


def constraint_exprs(space: InputSpace, text: str):
    """The constraint ``text`` as a SymPy relation over the space's symbols: one comparison
    of the one formula language (:mod:`accelperf.formula`, its SymPy column) whose leaves
    are the space's terms ``count(P)``, ``sum(P.p)``, ``mean(P.p)``, ``P.p`` and ``P[i].p``
    (:func:`.formula.place_term`). Each term stands in the relation as a placeholder until
    the relation is built, then all are substituted at once, so the relation is simplified
    as SymPy simplifies it for the values (a fixed ``count(P) <= 5`` becomes true)."""
    import sympy

    from ...formula import NotAFormula, fold, parse
    from .formula import place_term
    terms = {}

    def refuse(node=None, part=None):
        raise invalid("constraint", text, "comparisons of count(P), sum(P.p), mean(P.p), "
                      "P.p and P[i].p with + - * and numbers")

    def leaf(node):
        term = place_term(node, [p.place for p in space.places])
        if term is None or term.kind not in ("count", "sum", "mean", "token"):
            refuse()
        key = sympy.Symbol(f"__t{len(terms)}")
        terms[key] = _place_term(space, text, term.kind, term.place, term.prop, term.index)
        return key

    try:
        tree = parse(text)
    except NotAFormula as exc:
        raise invalid("constraint", text, f"a comparison ({exc.reason})") from None
    rel = fold(tree, "sympy", leaf, refuse)
    if tree.kind != "compare" or len(tree.value) != 1:
        raise invalid("constraint", text, "one comparison such as sum(blocks.nnz) <= 100")
    return rel.subs(terms, simultaneous=True)


def space_constraints(space: InputSpace) -> list:
    """Every constraint of the space (ranges included) as SymPy relations."""
    out = []
    for sym, (lo, hi) in symbol_ranges(space).items():
        out += [sym >= lo, sym <= hi]
    out += [constraint_exprs(space, c) for c in space.constraints]
    return out


SHIPPED = Path(__file__).parent / "spaces"
"""Spaces shipped for the library models (``<model name>.toml``)."""


def default_space(model: Model) -> InputSpace:
    """The space shipped for a library model; else, for a model whose inputs steer the
    net token by token (it declares a ``structure``: Protoacc, Menshen, VTA), the
    structure of its example input (:func:`structure_space`); else a space around the
    model's own example input: its places and token counts as streams from 1 to 100,000
    tokens, each property between 0 and the largest value the example uses (at least 1),
    so an interface covers inputs like the example. The range starts at 1 instead, or at
    the example's least value, where a token with 0 (or 1) alone never reaches the done
    place (a request of 0 bytes that makes no beats): an interface over it would be
    refused for inputs the model cannot run at all (:mod:`.space_probe`)."""
    shipped = SHIPPED / f"{model.name}.toml"
    if shipped.is_file():
        return load_space(model, shipped)
    if model.declared.structure is not None:
        return structure_space(model, model.default_input)
    marking = model.marking()
    example = {model.places[pid].name: [tuple(t) for t in tokens]
               for pid, tokens in marking.tokens.items() if pid not in model.initial}
    places = []
    for pid, tokens in marking.tokens.items():
        if pid in model.initial:
            continue
        ttype = model.places[pid].token_type
        props = {}
        for i, name in enumerate(ttype.properties):
            values = [t[i] for t in tokens] or [0]
            low = min(0, min(values))
            if low < min(values):
                from .space_probe import lowest_runnable
                low = lowest_runnable(model, example, model.places[pid].name, i,
                                      (low, 1, min(values)))
            props[name] = (low, max(1, max(values)))
        n = len(tokens)
        count = (n, n) if n == 1 else (1, max(100_000, n))
        places.append(PlaceSpace(model.places[pid].name, count, props))
    return InputSpace(tuple(places), (), model.name)


def describe(space: InputSpace) -> dict:
    """A JSON-ready description of the space."""
    return {"model": space.model, "constraints": list(space.constraints),
            "places": {p.place: {"count": list(p.count) if p.stream else p.count[0],
                                 "properties": {k: list(v) for k, v in p.properties.items()},
                                 **({"fixed": list(p.values)} if p.values else {})}
                       for p in space.places}}


__all__ = ["InputSpace", "PlaceSpace", "KEYS", "MAX_COUNT_COMBINATIONS", "load_space",
           "read_space_file", "space_from_dict", "space_from_input", "structure_space",
           "default_space", "constraint_exprs", "space_constraints",
           "symbol_ranges", "token_symbol", "count_symbol", "mean_symbol", "describe"]
