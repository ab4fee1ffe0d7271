"""What a model declares for the analyses, so none of them names a model (issue 37 item 5).

A library builder sets ``net.declared`` before ``net.build()``; the model carries it as
``model.declared``, and the analyses ask it instead of looking the model's name up:

* ``reader`` — Ψ standalone (the standard library only, no accelperf): the generated
  interface modules copy its source (:func:`inspect.getsource`) so they run with a bare
  ``python3`` on the parsed input ``accelperf lpn simulate --input`` takes. It must agree
  with the model's own ``tokens_from_input`` (tests check it on the models' inputs).
* ``units`` — the units an input is priced one by one (OSDI'24 §5.3.1, Fig. 5 sums
  Protoacc's messages), copied into typed interface modules likewise.
* ``round_robin`` — for units taken in turn by identical pipelines: where the units
  before one left the round-robin (:class:`RoundRobin`, :mod:`.analysis.handover`).
* ``structure`` — for a net steered token by token (Protoacc, Menshen, VTA), the sizes
  that range within one input type, ``{place: {property: (low, high)}}``: its default
  space is the structure of its example input with these ranged
  (:func:`.analysis.space.structure_space`). None: the input is a stream.

Nothing here is needed to simulate; a model that declares nothing gets interface modules
that take tokens, or call accelperf where it is installed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class RoundRobin:
    """Units of an input taken in turn by ``units`` identical pipelines (Protoacc's six):
    ``turns(tokens)`` is how many turns a unit takes, ``rotate(stage, turns, units)`` the
    name of a stage (a transition, or a place as ``[place]``) for a unit that starts that
    many turns after the first pipeline, and ``unit`` the pattern (``{}`` the pipeline's
    number) of the transition each pipeline has once, which counts them. The two
    functions are copied into generated modules: standard library only."""

    turns: Callable
    rotate: Callable
    unit: str


@dataclass(frozen=True)
class Declared:
    """A model's declarations for the analyses (see the module docstring)."""

    reader: Callable | None = None
    units: Callable | None = None
    round_robin: RoundRobin | None = None
    structure: dict | None = None


NOTHING = Declared()
"""What a model declares when its builder says nothing."""


__all__ = ["Declared", "RoundRobin", "NOTHING"]
