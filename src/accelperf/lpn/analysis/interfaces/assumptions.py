"""Which assumption of an interface fails on an input it prices badly (issue 23 item 2).

A derived interface rests on assumptions its module's docstring states; ``accelperf lpn
interface --check`` names the one that fails where an input's error exceeds the
tolerance, so a user knows whether to trust the formula elsewhere:

* **one bottleneck per class** (§4.2's third assumption; the plain form) or **per phase**
  (the by-phase form walks a stream period by period): the module's own walk of the
  stream (its ``phases(x)``) finds that the bounding stage changes along the stream;
* **pipeline full** (§4.2's first assumption; the plain form, as the by-phase form adds
  the fill): the stream is so short that its fill (the first token's passage through the
  other stages, which the module reports as ``fill of phase k``; for a replayed stream,
  the replay less the plain formula) is more than the tolerance of the latency;
* for a fixed structure priced by critical paths (:mod:`.critical`), **units fire in the
  order of the records** (the path of the input's own sizes differs from its
  simulation), or else **the derived paths include the one critical here** (the input's
  sizes make another chain of commits the longest, named);
* for a fixed structure whose unit fires in bundles round a credit loop (a link's
  packets; :func:`.critical.loop_paths`), **the unit's firings between its first and
  last take their mean delay**: the chain walked firing by firing at each firing's own
  delay (:func:`.critical.loop_chain`) differs from the closed form by more than the
  tolerance of the latency, and is the nearer of the two to the simulation (the loop
  place and its transitions are named);
* for an input of several units (a list of Protoacc messages), a unit priced badly on
  its own (diagnosed as above), or else the hand-over of consecutive units
  (``HANDOVER_k``, :data:`.handover.ASSUMPTION`).

Nothing here changes a prediction; it explains one.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...net import Model
from .critical import ASSUMPTION, LOOP_ASSUMPTION, loop_chain, loop_paths, path_at
from .handover import ASSUMPTION as HANDOVER_ASSUMPTION
from .interface import ONE_SHOT


@dataclass(frozen=True)
class Failure:
    """An assumption that fails on one input, and the evidence."""

    assumption: str
    evidence: str

    def __str__(self) -> str:
        return f"assumption '{self.assumption}' fails: {self.evidence}"


def failed_assumption(model: Model, interface, module, x, simulated: float,
                      phases: bool, tolerance: float) -> Failure | None:
    """The first assumption (in the module docstring's order) that fails on input ``x``
    of ``module`` (the generated module of ``interface``); None when none is seen to."""
    try:
        units = list(module._units(x))
        walk = module.phases(x)
    except Exception:                  # an input the module cannot price: not ours to judge
        return None
    if len(units) > 1:
        return _unit_failure(model, interface, module, units, simulated, phases, tolerance)
    # a one-shot stage (the decoder's header) is a phase in series, not a stage that
    # takes turns with the stream's bottleneck
    series = {g.transition for ci in interface.classes for g in ci.gaps
              if g.bound == ONE_SHOT}
    streamed = [(top, n) for top, n, _ in walk
                if n and not top.startswith("fill of") and top not in series]
    tops = list(dict.fromkeys(top for top, _ in streamed))
    if len(tops) > 1:
        runs = len(streamed)
        return Failure("one bottleneck per phase" if phases else "one bottleneck per class",
                       f"stages {' and '.join(tops[:3])} alternate along the stream "
                       f"({runs} runs)")
    fill = sum(c for top, _, c in walk if top.startswith("fill of"))
    if not phases and streamed and any(ci.schedule is not None for ci in interface.classes):
        # a replayed stream reports no fill of its own: the replay (exact) counts fill and
        # drain, the plain formula neither
        fill = module.latency(x, True) - module.latency(x, False)
    if not phases and streamed and simulated and fill > tolerance * simulated:
        return Failure("pipeline full", f"filling the pipeline takes {fill:,.0f} cycles, "
                                        f"{fill / simulated:.1%} of the latency")
    return _path_failure(model, interface, x, simulated, tolerance)


def _unit_failure(model: Model, interface, module, units, simulated: float, phases: bool,
                  tolerance: float) -> Failure | None:
    """An input of several units (a list of messages): a unit priced badly on its own, or
    else how the module hands one unit over to the next."""
    from .accuracy import simulated_latency
    alone = 0
    for unit in units:
        cycles = simulated_latency(model, [unit])
        alone += cycles
        predicted = module.latency([unit], phases)
        if cycles and abs(predicted - cycles) > tolerance * cycles:
            return failed_assumption(model, interface, module, [unit], cycles, phases,
                                     tolerance)
    shared = sum(module.latency([u], phases) for u in units) - module.latency(units, phases)
    return Failure(HANDOVER_ASSUMPTION,
                   f"each of the {len(units)} units alone is within the tolerance; "
                   f"together they share {alone - simulated:,.0f} cycles, the module's "
                   f"hand-over {shared:,.0f}")


def _path_failure(model: Model, interface, x, simulated: float,
                  tolerance: float) -> Failure | None:
    """For a fixed structure with path terms: which of the paths' assumptions fails."""
    from ..membership import is_tokens
    from .classes import values_of
    from .interface import PATH
    paths = [g for ci in interface.classes for g in ci.gaps if g.transition.startswith(PATH)]
    if not paths:
        return None
    tokens = x if is_tokens(model, x) else _tokens(model, x)
    point = values_of(interface.space, tokens)
    for ci in interface.classes:
        cls = ci.input_class
        if not cls.holds(point):
            continue
        path = path_at(model, cls, point)
        if path is None:                # bundled records: their chains go round loops
            return _loop_failure(model, cls, point, simulated, tolerance)
        cycles = float(path.latency.xreplace(path.at)) / model.ticks_per_cycle
        if abs(cycles - simulated) > 0.5:
            return Failure(ASSUMPTION, f"the records' critical path gives {cycles:,.0f} "
                                       f"cycles, the simulation {simulated:,}")
        if any(g.gap == path.latency for g in paths):
            return None                 # the input's own path is a term: nothing fails
        return Failure("the derived paths include the one critical here",
                       f"at this input's sizes the {path.describe()} "
                       f"({cycles:,.0f} cycles) is longest, and no term follows it")
    return None


def _loop_failure(model: Model, cls, point: dict, simulated: float,
                  tolerance: float) -> Failure | None:
    """A chain round a credit loop at ``point`` whose closed form (its unit's mean delay)
    is off its firing-by-firing walk by more than the tolerance, the walk being nearer
    the simulation."""
    from .loops import find_loops
    committed = {r.transition for r in cls.commits}
    loops = {lp.place: lp for lp in find_loops(model)
             if all(t in committed for t in lp.transitions)}
    tick = model.ticks_per_cycle
    for chain in loop_paths(model, cls, list(loops.values())):
        walked = loop_chain(model, cls, loops[chain.loop], point)
        if walked is None:
            continue
        closed = float(chain.latency.xreplace(point)) / tick
        walked /= tick
        if abs(closed - walked) > tolerance * simulated and \
                abs(walked - simulated) < abs(closed - simulated):
            unit = chain.transitions[0]
            return Failure(LOOP_ASSUMPTION,
                           f"round the loop via {chain.loop} through "
                           f"{' -> '.join(chain.transitions)}, {unit}'s firings at their "
                           f"mean delay give {closed:,.0f} cycles, at their own delays "
                           f"{walked:,.0f} (simulated {simulated:,.0f})")
    return None


def _tokens(model: Model, x) -> dict:
    """Ψ's tokens of ``x`` in a space's terms ({place: [{property: value}]})."""
    marking = model.marking(x)
    return {model.places[pid].name: [dict(zip(model.places[pid].token_type.properties, t))
                                     for t in toks]
            for pid, toks in marking.tokens.items() if pid not in model.initial}


__all__ = ["Failure", "failed_assumption"]
