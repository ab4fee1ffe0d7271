"""One-shot gates: the one inhibitor the class analysis takes (beyond OSDI'24 A.2).

A.2 refuses inhibitor arcs, whose outcome depends on timing. A gate that only the input
fills and one stage empties before anything else can fire is safe: the run is that stage,
then the rest of the net in series (:func:`one_shot_stages`). The symbolic executor
(:mod:`.symexec`) ignores such a gate, and the interface (:mod:`.interface`) prices the
rest of the class without the stage (:func:`without_stages`) and puts the stage's delay
first (:func:`stage_terms`).
"""

from __future__ import annotations

from dataclasses import replace

import sympy

from ...net import Model
from ..space import InputSpace
from .simplify import simplified


def one_shot_refusal(model: Model, space: InputSpace, pid: int) -> str | None:
    """Why the inhibitor place ``pid`` is not a one-shot gate over ``space`` (None when
    it is one); see :func:`one_shot_stages`."""
    name = model.places[pid].name
    if any(pid == a.place for t in model.transitions for a in t.outputs + t.routes):
        return f"a transition puts tokens into {name!r}, so when it empties depends on timing"
    filled = [p for p in space.places if p.place == name]
    most = (filled[0].count[1] if filled else 0) + len(model.initial.get(pid, ()))
    if most > 1:
        return f"{name!r} may start with {most} tokens; a gate holds at most 1"
    takers = [t for t in model.transitions if pid in t.inputs]
    if len(takers) != 1:
        return f"{name!r} is emptied by {len(takers)} transitions; a gate has one stage"
    (stage,) = takers
    if set(stage.inputs) != {pid} or stage.reads or stage.inhibits or stage.counted or \
            stage.guard is not None or stage.routes:
        return f"its stage {stage.name!r} needs more than the gate's token"
    consumers = model.consumers()           # takers, readers, inhibited and counters
    if any(consumers[a.place] for a in stage.outputs):
        return f"what its stage {stage.name!r} produces is used by the net"
    # Nothing but the stage may fire while the gate is closed: every other transition is
    # gated, or waits for a token only gated transitions (and those behind them) make.
    behind = {t.id for t in model.transitions if any(p == pid for p, _ in t.inhibits)}
    starts = set(model.initial) | {model.place_id(p.place) for p in space.places}
    producers: dict = {}
    for t in model.transitions:
        for a in t.outputs + t.routes:
            producers.setdefault(a.place, set()).add(t.id)
    grown = True
    while grown:
        grown = False
        for t in model.transitions:
            if t.id in behind or t is stage:
                continue
            if any(p not in starts and producers.get(p, set()) <= behind
                   for p in t.inputs):
                behind.add(t.id)
                grown = True
    early = [t.name for t in model.transitions if t.id not in behind and t is not stage]
    if early:
        return f"{', '.join(early)} may fire before the gate opens, beside its stage " \
               f"{stage.name!r}"
    return None


def one_shot_stages(model: Model, space: InputSpace) -> dict:
    """{stage name: gate place name} of the net's one-shot gates over ``space``.

    Beyond the paper (A.2 refuses inhibitors, whose outcome depends on timing): an
    inhibitor place that only the input fills, with at most one token (a file's header),
    emptied by one *stage* that takes nothing else and feeds nothing, while every other
    transition is gated by it or waits for tokens only gated transitions make. Nothing
    else can fire before the stage commits, so the run is the stage's delay followed,
    in series, by the run of the rest of the net from its initial marking: the gate
    changes no count or order, only shifts every time by the stage's delay (the JPEG
    decoder's header parser before its entropy decoder). The interface adds that delay
    as a phase of its own (:mod:`.interface`)."""
    gates = {p for t in model.transitions for p, _ in t.inhibits}
    out = {}
    for pid in sorted(gates):
        if pid not in {model.place_id(p.place) for p in space.places}:
            continue                       # empty over this space: never blocks
        if one_shot_refusal(model, space, pid) is None:
            (stage,) = [t for t in model.transitions if pid in t.inputs]
            out[stage.name] = model.places[pid].name
    return out


def without_stages(cls, stages: dict):
    """The class ``cls`` (an :class:`.classes.InputClass`) without the records of the
    one-shot ``stages`` ({stage: gate place}) and without their gate places in its space
    and sample: the rest of the net, which runs after them."""
    kept = [i for i, c in enumerate(cls.commits) if c.transition not in stages]
    renumber = {old: new for new, old in enumerate(kept)}
    renumber[-1] = -1
    commits = tuple(replace(cls.commits[i],   # nothing reads what a one-shot stage makes
                            sources=tuple(renumber[s] for s in cls.commits[i].sources),
                            waited=tuple(renumber[s] for s in cls.commits[i].waited))
                    for i in kept)
    gates = set(stages.values())
    space = replace(cls.space, places=tuple(p for p in cls.space.places
                                            if p.place not in gates))
    return replace(cls, commits=commits, space=space,
                   sample={p: t for p, t in cls.sample.items() if p not in gates})


def stage_terms(cls, stages: dict) -> list[tuple]:
    """(stage, commits N, mean delay, N·delay) of each one-shot stage in the class: its
    cycles before the rest starts (N is at most 1: n_header for the JPEG decoder)."""
    out = []
    for name in stages:
        records = [c for c in cls.commits if c.transition == name]
        n = simplified(sympy.Add(*[c.times for c in records]))
        total = simplified(sympy.Add(*[c.times * c.delay for c in records]))
        out.append((name, n, simplified(total / n) if records else sympy.Integer(0),
                    total))
    return out


__all__ = ["one_shot_stages", "one_shot_refusal", "without_stages", "stage_terms"]
