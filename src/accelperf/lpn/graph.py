"""Strongly connected components of a directed graph (Tarjan 1972), without recursion.

One implementation for every walk over a net's structure: the order of input-class
exploration (:mod:`.analysis.interfaces.symexec`, OSDI'24 A.2 step 1) and the loops the model checker
reports (:mod:`.check`). Iterative, so a net of thousands of transitions in one
chain does not reach Python's recursion limit.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping


def strong_components(successors: Mapping[int, Iterable[int]],
                      nodes: Iterable[int] | None = None) -> list[list[int]]:
    """The strongly connected components of the graph ``successors`` (node -> next nodes),
    each sorted, in the order Tarjan's algorithm completes them: every component comes
    before the components that reach it (sinks first). Roots are taken in the order of
    ``nodes`` (default: sorted keys) and successors in sorted order, so the result is
    deterministic.

    >>> strong_components({0: [1], 1: [0, 2], 2: []})
    [[2], [0, 1]]
    """
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    out: list[list[int]] = []

    def enter(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        return v, iter(sorted(successors.get(v, ())))

    for root in (sorted(successors) if nodes is None else nodes):
        if root in index:
            continue
        work = [enter(root)]
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    work.append(enter(w))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == v:
                            break
                    out.append(sorted(component))
    return out


def cyclic_components(successors: Mapping[int, Iterable[int]]) -> list[list[int]]:
    """The components that contain a cycle: more than one node, or a node with a self-loop."""
    return [c for c in strong_components(successors)
            if len(c) > 1 or c[0] in successors.get(c[0], ())]
