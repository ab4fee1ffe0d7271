"""Input spaces: the set of initial markings an analysis covers (OSDI'24 §4.1).

A space says, for each place the input fills, how many tokens it gets and what range each
of their properties may take, plus linear constraints between them. It is written in TOML::

    model = "darwin"                       # optional: the model it was written for
    constraints = ["alignment.stripes == count(stripes)"]

    [places.stripes]
    count = [1, 100000]                    # a range: a *stream* of any length in it
    properties = { ref_len = [1, 10000] }

    [places.alignment]
    count = 1                              # a fixed count: every token has its own symbols
    properties = { steps = [1, 100000], stripes = [1, 100000] }

``probe = K`` on a stream runs the net token by token on K tokens with their own symbols
(for a stream that its consumers share token by token, such as the JPEG decoder's blocks
taking turns through three IDCTs); the interface then scales the probe's commit counts
to ``n_P`` tokens and reads the probe's symbols as the stream's means.

A fixed ``count`` gives every token its own symbol per property (``alignment_0_steps``), so
classes can depend on each token. A ``count`` range makes the place a stream: its tokens are
described by their number ``n_stripes`` and the mean of each property
(``mean_stripes_ref_len``), which is what a performance interface is written in (the paper's
``img.num_blocks``, ``img.avg_num_nonzero_perblock``). A stream's tokens must not steer the
net (guards, weights, routes, output counts); the analysis says so when they do.

Constraints are comparisons over ``count(P)``, ``sum(P.p)``, ``mean(P.p)``, ``P.p`` (the
single token of a fixed-count place, or the mean of a stream) and ``P[i].p``, with ``+ - *``,
numbers and ``and`` between comparisons written as separate list entries.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import sympy

from ...errors import ModelError, invalid
from ..expr import parameter_name
from ..net import Model


@dataclass(frozen=True)
class PlaceSpace:
    """The tokens one place starts with."""

    place: str
    count: tuple[int, int]                  # lo, hi (equal for a fixed count)
    properties: dict = field(default_factory=dict)   # name -> (lo, hi)
    probe: int | None = None                # a stream run token by token on this many
    values: tuple | None = None             # fixed structure: per token {prop: value} of
    #                                         the properties not ranged in ``properties``

    @property
    def stream(self) -> bool:
        return self.count[0] != self.count[1]

    def fixed(self, index: int) -> dict:
        """The properties token ``index`` has fixed values for (a fixed structure)."""
        return self.values[index] if self.values else {}


@dataclass(frozen=True)
class InputSpace:
    """A checked input space for one model (see the module docstring)."""

    places: tuple[PlaceSpace, ...]
    constraints: tuple[str, ...] = ()
    model: str | None = None

    def __repr__(self) -> str:
        parts = [f"{p.place}: {p.count[0]}" + (f"..{p.count[1]}" if p.stream else "")
                 for p in self.places]
        return f"InputSpace({', '.join(parts)}; {len(self.constraints)} constraint(s))"

    def place(self, name: str) -> PlaceSpace:
        return next(p for p in self.places if p.place == name)


# ---------------------------------------------------------------------- symbols
def token_symbol(place: str, index: int, prop: str) -> sympy.Symbol:
    """The value of property ``prop`` of token ``index`` of a fixed-count place."""
    return sympy.Symbol(f"{parameter_name(place)}_{index}_{prop}", integer=True)


def count_symbol(place: str) -> sympy.Symbol:
    """The number of tokens of a stream."""
    return sympy.Symbol(f"n_{parameter_name(place)}", integer=True, positive=True)


def mean_symbol(place: str, prop: str) -> sympy.Symbol:
    """The mean of property ``prop`` over a stream's tokens."""
    return sympy.Symbol(f"mean_{parameter_name(place)}_{prop}", real=True)


def symbol_ranges(space: InputSpace) -> dict:
    """{symbol: (lo, hi)} of every symbol the space defines."""
    out = {}
    for p in space.places:
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
def _range(where: str, value) -> tuple[int, int]:
    if isinstance(value, bool):
        raise invalid(where, value, "an integer or [lo, hi]")
    if isinstance(value, int):
        return value, value
    if (isinstance(value, list) and len(value) == 2 and
            all(isinstance(v, int) and not isinstance(v, bool) for v in value) and
            value[0] <= value[1]):
        return value[0], value[1]
    raise invalid(where, value, "an integer or [lo, hi] with integers lo <= hi")


def space_from_input(model: Model, user_input, vary: dict, origin: str = "space",
                     constraints=()) -> InputSpace:
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
    places = []
    for name, (pid, toks) in inputs.items():
        props = model.places[pid].token_type.properties
        ranged = {p: _range(f"{origin}: vary.{name}.{p}", list(r) if isinstance(r, tuple)
                            else r) for p, r in vary.get(name, {}).items()}
        values = tuple({p: int(v) for p, v in zip(props, tok) if p not in ranged}
                       for tok in toks)
        places.append(PlaceSpace(name, (len(toks), len(toks)), ranged, None, values))
    space = InputSpace(tuple(places), tuple(constraints), model.name)
    for c in constraints:
        constraint_exprs(space, c)
    return space


SIZES = {"protoacc": {"field_data": {"bytes": (0, 1 << 30)}},
         "menshen": {"packets": {"n_words": (1, 1500)}}}
"""What varies within an input type of a library model (its *size* properties): the
bytes of each Protoacc field element, the words of each Menshen packet. Everything
else (field kinds and counts, packet kinds, a VTA program) is the type."""


STRUCTURED = ("protoacc", "menshen", "vta")
"""Library models whose inputs steer the net token by token: their default space is the
structure of their example input (:func:`structure_space`), not a stream."""


def structure_space(model: Model, user_input, vary: dict | None = None) -> InputSpace:
    """The fixed-structure space (type) of ``user_input``: :func:`space_from_input` with
    the model's size properties (:data:`SIZES`) ranged unless ``vary`` says otherwise."""
    return space_from_input(model, user_input,
                            SIZES.get(model.name, {}) if vary is None else vary)


def _space_input(model: Model, data: dict, origin: str):
    """The input a space file's ``input`` names: "default" (the model's own example),
    a file (relative to the space file) or the parsed input written inline."""
    value = data["input"]
    if value == "default":
        return model.default_input
    if isinstance(value, str):
        from ..loader import load_input
        path = Path(origin).parent / value
        if not path.is_file():
            raise invalid(f"{origin}: input", value, "\"default\", a file next to the "
                          "space file, or the input written inline")
        return load_input(str(path), model)
    return value


def space_from_dict(model: Model, data: dict, origin: str = "space") -> InputSpace:
    """Check a parsed space against ``model``: every place and property must exist. A
    space with ``input = ...`` and ``[vary.PLACE]`` tables is a fixed structure
    (:func:`space_from_input`)."""
    if isinstance(data, dict) and "input" in data:
        unknown = set(data) - {"model", "input", "vary", "constraints"}
        if unknown:
            raise invalid(f"{origin}", sorted(unknown),
                          "with input = ...: only model, input, vary and constraints")
        constraints = data.get("constraints", [])
        if not isinstance(constraints, list) or not all(isinstance(c, str) for c in constraints):
            raise invalid(f"{origin}: constraints", constraints, "a list of strings")
        return space_from_input(model, _space_input(model, data, origin),
                                data.get("vary", {}), origin, constraints)
    if not isinstance(data, dict) or not isinstance(data.get("places"), dict) \
            or not data["places"]:
        raise invalid(f"{origin}: places", data.get("places") if isinstance(data, dict)
                      else data, "a [places.NAME] table per place the input fills")
    names = [p.name for p in model.places]
    places = []
    for name, spec in data["places"].items():
        if name not in names:
            raise invalid(f"{origin}: place", name, f"one of {', '.join(names)}")
        if not isinstance(spec, dict) or "count" not in spec:
            raise invalid(f"{origin}: places.{name}", spec, "a table with count = N or [lo, hi]")
        count = _range(f"{origin}: places.{name}.count", spec["count"])
        if count[0] < 0:
            raise invalid(f"{origin}: places.{name}.count", spec["count"], "counts >= 0")
        ttype = model.places[names.index(name)].token_type
        props = spec.get("properties", {})
        if not isinstance(props, dict):
            raise invalid(f"{origin}: places.{name}.properties", props, "a table prop = [lo, hi]")
        missing = [p for p in ttype.properties if p not in props]
        extra = [p for p in props if p not in ttype.properties]
        if missing or extra:
            raise invalid(f"{origin}: places.{name}.properties", sorted(props),
                          f"exactly the properties of {ttype.name} tokens: "
                          f"{list(ttype.properties)}")
        ranges = {p: _range(f"{origin}: places.{name}.properties.{p}", props[p])
                  for p in ttype.properties}
        unknown = set(spec) - {"count", "properties", "probe"}
        if unknown:
            raise invalid(f"{origin}: places.{name}", sorted(unknown),
                          "only count, properties and probe")
        probe = spec.get("probe")
        if probe is not None and (isinstance(probe, bool) or not isinstance(probe, int) or
                                  probe < 1 or count[0] == count[1]):
            raise invalid(f"{origin}: places.{name}.probe", probe,
                          "an integer >= 1, for a place whose count is a range")
        places.append(PlaceSpace(name, count, ranges, probe))
    constraints = data.get("constraints", [])
    if not isinstance(constraints, list) or not all(isinstance(c, str) for c in constraints):
        raise invalid(f"{origin}: constraints", constraints, "a list of strings")
    space = InputSpace(tuple(places), tuple(constraints), data.get("model"))
    for c in constraints:                      # parse now: a typo is reported before work
        constraint_exprs(space, c)
    return space


def read_space_file(path: str | Path) -> dict:
    """The table of a space TOML file; a missing, unreadable or malformed file is one
    error naming ``--space`` (shared by the interfaces' and the verifier's spaces)."""
    path = Path(path)
    try:
        return tomllib.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        raise invalid("--space", str(path), "an existing TOML file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise invalid("--space", str(path), f"a readable TOML file ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise invalid("--space", str(path), f"valid TOML ({exc})") from None


def load_space(model: Model, path: str | Path) -> InputSpace:
    """Read a space TOML file (see the module docstring)."""
    return space_from_dict(model, read_space_file(path), str(path))


# ---------------------------------------------------------------------- constraints
_TERM = re.compile(r"(sum|mean|count)\(\s*([A-Za-z_][\w.]*?)(?:\.(\w+))?\s*\)"
                   r"|([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*?)\[(\d+)\]\.(\w+)"
                   r"|([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*?)\.(\w+)\b")


def _place_term(space: InputSpace, text: str, kind: str, place: str, prop: str | None,
                index: int | None = None):
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
    """The constraint ``text`` as a SymPy relation over the space's symbols."""
    terms = {}

    def replace(m):
        if m.group(1):
            value = _place_term(space, text, m.group(1), m.group(2), m.group(3))
        elif m.group(4):
            value = _place_term(space, text, "token", m.group(4), m.group(6), int(m.group(5)))
        else:
            value = _place_term(space, text, "token", m.group(7), m.group(8))
        key = f"__t{len(terms)}"
        terms[key] = value
        return key

    body = _TERM.sub(replace, text)
    if re.search(r"[A-Za-z_]\w*", re.sub(r"__t\d+", "", body)):
        raise invalid("constraint", text, "comparisons of count(P), sum(P.p), mean(P.p), "
                      "P.p and P[i].p with + - * and numbers")
    parts = re.split(r"(<=|>=|==|!=|<|>)", body)
    if len(parts) != 3:
        raise invalid("constraint", text, "one comparison such as sum(blocks.nnz) <= 100")
    scope = {k: sympy.Symbol(k) for k in terms}
    try:
        left, right = (sympy.sympify(side, locals=scope) for side in (parts[0], parts[2]))
    except (sympy.SympifyError, SyntaxError, TypeError) as exc:
        raise invalid("constraint", text, f"a comparison ({exc})") from None
    rel = sympy.Rel(left, right, {"==": "==", "!=": "!="}.get(parts[1], parts[1]),
                    evaluate=False)
    return rel.subs({sympy.Symbol(k): v for k, v in terms.items()}, simultaneous=True)


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
    """The space shipped for a library model; else, for Protoacc, Menshen and VTA, the
    structure of their example input (:data:`STRUCTURED`); else a space around the
    model's own example input: its places and token counts as streams from 1 to 100,000
    tokens, each property between 0 and the largest value the example uses (at least 1),
    so an interface covers inputs like the example."""
    shipped = SHIPPED / f"{model.name}.toml"
    if shipped.is_file():
        return load_space(model, shipped)
    if model.name in STRUCTURED:
        return structure_space(model, model.default_input)
    marking = model.marking()
    places = []
    for pid, tokens in marking.tokens.items():
        if pid in model.initial:
            continue
        ttype = model.places[pid].token_type
        props = {}
        for i, name in enumerate(ttype.properties):
            values = [t[i] for t in tokens] or [0]
            props[name] = (min(0, min(values)), max(1, max(values)))
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


__all__ = ["InputSpace", "PlaceSpace", "load_space", "space_from_dict", "space_from_input",
           "structure_space", "SIZES",
           "default_space",
           "constraint_exprs", "space_constraints", "symbol_ranges", "token_symbol",
           "count_symbol", "mean_symbol", "describe"]
