"""What the two code generators share: :mod:`.codegen` (Python) and :mod:`.csource` (C).

Both write rule R2 of :mod:`.semantics` out per transition by walking its steps
(:func:`.semantics.start_steps`, in :data:`.semantics.START_RULE`'s order) through a table
of emitters, one per step kind, that each backend fills with its own syntax; and both
inline constant weights and counts the same way (:func:`carried`, :func:`weight_term`).
"""

from __future__ import annotations

from .expr import constant
from .net import Transition
from .semantics import start_steps


def conditions(writer, emitters: dict) -> list[str]:
    """R2 for ``writer.t`` as lines of code: every step of the rule, in the rule's order,
    through ``emitters[step.kind](writer, step)``. ``writer.present`` collects, as (b)'s
    steps pass, how many free tokens each place is known to hold (a constant weight
    already made sure of needs no check of its own)."""
    writer.present = {}
    return [line for step in start_steps(writer.model, writer.t)
            for line in emitters[step.kind](writer, step)]


def carried(arc) -> bool:
    """Whether an output arc's tokens are worked out at the start (R3) and carried to the
    commit; else the arc makes a constant number of empty tokens."""
    return not (arc.props is None and arc.copy_from is None and constant(arc.count) is not None)


def weight_term(t: Transition, k: int, literal=str) -> str:
    """Input ``k``'s weight in generated code: a constant's ``literal``, else the local
    (``w{k}``) its weight step computed."""
    c = constant(t.weights[k])
    return literal(c) if c is not None else f"w{k}"
