"""Whether one concrete input lies in an input space: the check `lpn interface --check`
makes on its inputs before the extraction starts (issue 33 item 3), so an input the
interface will not cover is refused in a second, not after minutes of extraction.

An input is in the space when Ψ's tokens, place by place, have a count in the place's
range, each property in its range (or equal to the fixed structure's value), and every
constraint of the space holds with the tokens' values put in (the same Z3 terms a proof
uses, evaluated on constants).
"""

from __future__ import annotations

from ...errors import ModelError
from ..net import Model
from .space import InputSpace


def is_tokens(model: Model, x) -> bool:
    """Whether ``x`` is tokens in a space's terms ({place: [{property: value}]}) rather
    than an input for the model's Ψ."""
    names = {p.name for p in model.places}
    return isinstance(x, dict) and bool(x) and set(x) <= names and all(
        isinstance(v, list) and all(isinstance(t, dict) for t in v) for v in x.values())


def outside(model: Model, space: InputSpace, user_input) -> str | None:
    """Why ``user_input`` is not in ``space`` (one clause), or None when it is. Ψ's own
    refusals (ModelError) propagate."""
    import z3

    from .formula import Tokens
    # tokens in the space's terms are simulated as given (accuracy.simulated_latency)
    marking = model.with_tokens(user_input) if is_tokens(model, user_input) else \
        model.marking(user_input)
    values = {}
    for p in space.places:
        pid = model.place_id(p.place)
        props = model.places[pid].token_type.properties
        tokens = [dict(zip(props, t)) for t in marking.tokens.get(pid, ())]
        lo, hi = p.count
        if not lo <= len(tokens) <= hi:
            return (f"{p.place} has {len(tokens)} token(s); the space has "
                    f"{lo}" + (f"..{hi}" if hi != lo else ""))
        for i, token in enumerate(tokens):
            for name, (low, high) in p.properties.items():
                if not low <= token[name] <= high:
                    return f"{p.place}[{i}].{name} = {token[name]} is not in {low}..{high}"
            for name, want in p.fixed(i).items() if i < len(p.values or ()) else ():
                if token[name] != want:
                    return f"{p.place}[{i}].{name} = {token[name]}; the space has {want}"
        values[p.place] = Tokens(p.place, [{k: z3.IntVal(v) for k, v in t.items()}
                                           for t in tokens])
    # constant tokens: constraint_terms gives the constraints alone, no range conditions
    for i, term in enumerate(space.constraint_terms(values)):
        if not z3.is_true(z3.simplify(term)):
            return f"the constraint {space.constraints[i]!r} fails"
    return None


def refuse_outside(model: Model, space: InputSpace, texts, values) -> None:
    """`lpn interface --check`: a ModelError naming the first input (as the user wrote
    it, ``texts``) that is outside ``space``. A model the interface prices unit by unit
    (a splitter: a list of Protoacc messages) is checked unit by unit, as its module
    does."""
    split = model.declared.units or (lambda x: [x])
    for text, x in zip(texts, values):
        try:
            units = split(x)
        except Exception:      # noqa: BLE001 - not the splitter's shape: the module says
            continue
        try:
            why = next(filter(None, (outside(model, space, unit) for unit in units)), None)
        except ModelError as exc:         # the model's Ψ refuses it (a partial MCU)
            raise ModelError(f"INPUT = {text!r:.60} is invalid for `check`: "
                             f"{exc.embedded()}") from None
        if why is not None:
            raise ModelError(f"INPUT = {text!r:.60} is invalid for `check`: it is outside "
                             f"the space ({why}); give `space` FILE with a space that "
                             f"covers it")


__all__ = ["outside", "refuse_outside"]
