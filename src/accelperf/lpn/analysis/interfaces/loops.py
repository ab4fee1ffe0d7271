"""The loops of OSDI'24 appendix A.3 that bound a transition's commit gap.

A loop is an elementary cycle through exactly one place holding the model's own initial
tokens (a capacity or credit place: M tokens), with constant arc weights, token conserving.
Its parallel factors are F_T1 = M / w_{Pn,T1} and F_Ti = F_T(i-1)·w_{T(i-1),P(i-1)} /
w_{P(i-1),Ti}; :mod:`.interface` turns them into the loop's bound on each ḡ_T.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ...net import Model


@dataclass(frozen=True)
class Loop:
    place: str                 # the loop's one place with initial tokens
    tokens: int                # M
    transitions: tuple         # T1..Tn in flow order
    factors: tuple             # F_Ti


def find_loops(model: Model, limit: int = 1000) -> list[Loop]:
    """A.3's loops: elementary cycles through exactly one place holding the model's own
    initial tokens, with constant weights, token conserving."""
    out_arcs = {}                                  # place -> [(transition, weight)]
    for t in model.transitions:
        for pid, w in zip(t.inputs, t.weights):
            out_arcs.setdefault(pid, []).append((t, w))
    loops = []
    for start, tokens in model.initial.items():
        if not tokens:
            continue

        def walk(pid, chain, seen):
            for t, w_in in out_arcs.get(pid, []):
                if ("t", t.id) in seen or w_in.op != "const" or w_in.args[0] == 0:
                    continue
                for arc in t.outputs:
                    if arc.count.op != "const" or arc.count.args[0] == 0:
                        continue
                    step = chain + [(t, w_in.args[0], arc.count.args[0])]
                    if arc.place == start:
                        yield step
                    elif arc.place not in model.initial and ("p", arc.place) not in seen:
                        yield from walk(arc.place, step, seen | {("t", t.id), ("p", arc.place)})

        for chain in walk(start, [], {("p", start)}):
            if len(loops) >= limit:
                return loops
            ratio = sympy.Integer(1)
            for _, w_in, w_out in chain:
                ratio *= sympy.Rational(w_out, w_in)
            if ratio != 1:
                continue                           # not token conserving
            factors, f = [], sympy.Rational(len(tokens), chain[0][1])
            for i, (_, w_in, _) in enumerate(chain):
                if i:
                    f = f * sympy.Rational(chain[i - 1][2], w_in)
                factors.append(f)
            loops.append(Loop(model.places[start].name, len(tokens),
                              tuple(t.name for t, _, _ in chain), tuple(factors)))
    return loops
