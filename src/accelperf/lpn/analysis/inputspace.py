"""Input spaces for verification: which initial markings a proof covers (OSDI'24 §4.1, §4.4).

Written in TOML, with the keys of the input-class analysis (issue 13) so one file serves
both::

    model = "jpeg-decoder"                 # optional: checked against the model verified
    input = "list(blocks.symbols)"         # how a witness is written in Ψ's input format
    constraints = ["sum(blocks.symbols) <= 115"]

    [places.blocks]                        # a place the input fills
    count = 18                             # how many tokens: N, or a range "6..18"
    properties = { symbols = [1, 63] }     # each token's property range, inclusive

Every token of a listed place gets one integer variable per property, ``blocks[3].symbols``.
``constraints`` are conditions in the language of :mod:`.formula` (``count(P)``,
``sum(P.p)``, ``mean(P.p)``, ``P[i].p``, ``+ - * /``, comparisons). ``input`` is that
language's expression (or a table of them, for an input that is a JSON object) giving the
value the model's Ψ takes; a witness written this way must give back exactly the tokens
found, which the verifier checks. Properties not listed for a place are 0.

A token count given as a range is verified as one space per combination of counts
(:meth:`InputSpace.fixed_counts`; at most :data:`MAX_COUNT_COMBINATIONS`), since every
token has its own variables; constraints may use ``count(P)`` to rule combinations out.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from ...errors import ModelError, invalid
from ..net import Model
from .formula import Tokens, is_condition, translate

KEYS = {"model", "input", "constraints", "places"}


MAX_COUNT_COMBINATIONS = 64
"""Token-count combinations a space may span (each is verified as its own space)."""


@dataclass(frozen=True)
class PlaceSpace:
    """The tokens one place starts with: ``count`` of them, or any number in
    ``count..most`` when ``most`` is given."""

    place: str
    count: int
    properties: dict = field(default_factory=dict)     # name -> (lo, hi)
    most: int | None = None

    @property
    def counts(self) -> range:
        return range(self.count, (self.count if self.most is None else self.most) + 1)


@dataclass(frozen=True)
class InputSpace:
    """A checked input space of one model (see the module docstring)."""

    places: tuple[PlaceSpace, ...]
    constraints: tuple[str, ...] = ()
    input: object = None                  # str or {key: str}
    model: str | None = None
    origin: str = "space"

    def __repr__(self) -> str:
        parts = ", ".join(f"{p.place}: {p.count}{'' if p.most is None else f'..{p.most}'} "
                          f"tokens" for p in self.places)
        return f"InputSpace({parts}; {len(self.constraints)} constraint(s))"

    @property
    def ranged(self) -> bool:
        """Some place's token count is a range."""
        return any(p.most is not None for p in self.places)

    def fixed_counts(self) -> list["InputSpace"]:
        """The space as one space per combination of token counts (the verifier encodes
        every token with its own variables, so a count is fixed per class)."""
        import itertools
        out = []
        for counts in itertools.product(*(p.counts for p in self.places)):
            places = tuple(replace(p, count=n, most=None) for p, n in zip(self.places, counts))
            named = ", ".join(f"{p.place}: {p.count}" for p in places)
            out.append(replace(self, places=places, origin=f"{self.origin} ({named} tokens)"))
        return out

    def variables(self, model: Model) -> dict[str, Tokens]:
        """One Z3 integer per token property: {place name: Tokens}."""
        import z3
        if self.ranged:
            raise ModelError(f"{self.origin}: a space with token-count ranges has no single "
                             f"set of variables; use fixed_counts()")
        out = {}
        for p in self.places:
            props = model.places[model.place_id(p.place)].token_type.properties
            out[p.place] = Tokens(p.place, [
                {name: (z3.Int(f"{p.place}[{i}].{name}") if name in p.properties
                        else z3.IntVal(0)) for name in props}
                for i in range(p.count)])
        return out

    def constraint_terms(self, tokens: dict[str, Tokens]) -> list:
        """The ranges and constraints of the space as Z3 conditions."""
        out = []
        for p in self.places:
            for values in tokens[p.place].values:
                for name, (lo, hi) in p.properties.items():
                    out += [values[name] >= lo, values[name] <= hi]
        for i, text in enumerate(self.constraints):
            term = translate(text, tokens, what=f"{self.origin}: constraints[{i}]")
            if not is_condition(term):
                raise invalid(f"{self.origin}: constraints[{i}]", text,
                              "a condition (a comparison), not a number")
            out.append(term)
        return out

    def user_input(self, tokens: dict[str, Tokens], model_values):
        """The witness in Ψ's input format: ``input`` evaluated with ``model_values(term)``
        (a Z3 model's evaluation); None when the space has no ``input``."""
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


def _plain(v):
    import z3
    if z3.is_int_value(v):
        return v.as_long()
    if z3.is_rational_value(v):
        return v.numerator_as_long() / v.denominator_as_long()
    raise ModelError(f"witness value {v} is not a number")


def _range(where: str, value) -> tuple[int, int]:
    ok_int = lambda v: isinstance(v, int) and not isinstance(v, bool)   # noqa: E731
    if ok_int(value):
        return value, value
    if isinstance(value, list) and len(value) == 2 and all(map(ok_int, value)) \
            and value[0] <= value[1]:
        return value[0], value[1]
    raise invalid(where, value, "an integer or [lo, hi] with integers lo <= hi")


def space_from_dict(model: Model, data: dict, origin: str = "space") -> InputSpace:
    """Check a parsed space against ``model``: every key, place and property must exist."""
    if not isinstance(data, dict):
        raise invalid(origin, data, "a TOML table")
    unknown = sorted(set(data) - KEYS)
    if unknown:
        raise invalid(f"{origin}: key {unknown[0]!r}", data[unknown[0]],
                      f"the keys are {', '.join(sorted(KEYS))}")
    if data.get("model") is not None and data["model"] != model.name:
        raise invalid(f"{origin}: model", data["model"], f"this space is checked against "
                      f"model {model.name!r}; give that name or leave the key out")
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
        if not isinstance(entry, dict) or set(entry) - {"count", "properties"}:
            raise invalid(where, entry, "a table with count = N and properties = "
                          "{p = [lo, hi]}")
        lo, hi = _count(f"{where}.count", entry.get("count"))
        props = entry.get("properties", {})
        if not isinstance(props, dict):
            raise invalid(f"{where}.properties", props, "a table {p = [lo, hi]}")
        known = model.places[pid].token_type.properties
        ranges = {}
        for prop, rng in props.items():
            if prop not in known:
                raise invalid(f"{where}.properties.{prop}", rng,
                              f"tokens of {name!r} have properties {list(known) or 'none'}")
            ranges[prop] = _range(f"{where}.properties.{prop}", rng)
        out.append(PlaceSpace(name, lo, ranges, None if lo == hi else hi))
    constraints = data.get("constraints", [])
    if not isinstance(constraints, list) or not all(isinstance(c, str) for c in constraints):
        raise invalid(f"{origin}: constraints", constraints, "a list of strings")
    shape = data.get("input")
    if shape is not None and not (isinstance(shape, str) or (
            isinstance(shape, dict) and all(isinstance(v, str) for v in shape.values()))):
        raise invalid(f"{origin}: input", shape, "a formula or a table of formulas")
    space = InputSpace(tuple(out), tuple(constraints), shape, data.get("model"), origin)
    combos = 1
    for p in out:
        combos *= len(p.counts)
        if combos > MAX_COUNT_COMBINATIONS:
            raise invalid(f"{origin}: places.{p.place}.count", places[p.place]["count"],
                          f"token-count ranges spanning at most {MAX_COUNT_COMBINATIONS} "
                          f"combinations in all (each is verified as its own space): "
                          f"narrow the range or split the space")
    for fixed in space.fixed_counts():                  # formulas checked now, not mid-proof
        fixed.constraint_terms(fixed.variables(model))
    return space


def _count(where: str, value) -> tuple[int, int]:
    """A token count: N, [lo, hi] or "lo..hi"."""
    if isinstance(value, str) and ".." in value:
        lo, _, hi = value.partition("..")
        try:
            value = [int(lo), int(hi)]
        except ValueError:
            pass
    if isinstance(value, list) or (isinstance(value, int) and not isinstance(value, bool)):
        try:
            lo, hi = _range(where, value)
        except ModelError:
            lo = hi = -1
        if 0 <= lo <= hi:
            return lo, hi
    raise invalid(where, value, 'a number of tokens >= 0, or a range "lo..hi" (or [lo, hi]) '
                  'with 0 <= lo <= hi')


def load_space(model: Model, path: str | Path) -> InputSpace:
    """Read and check a space file; every error is one line naming the file and key."""
    from .space import read_space_file      # (space.py loads SymPy: only when a file is read)
    return space_from_dict(model, read_space_file(path), Path(path).name)
