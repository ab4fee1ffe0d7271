"""The one measured quantity left in a performance interface (beyond OSDI'24 §4.2): the
slope of a stream (issue 23 item 2 asks for none; this one is still to be derived).

For a class with one stream, :mod:`.interface` asks the simulator for the cycles per
stream token between two long uniform streams (:func:`uniform_slopes`): it stops A.3's
iteration where the loops overshoot, and a per-token gap it shows but no loop explains (a
stage that only *reads* a later stage's slots: the JPEG decoder's back end) becomes the
term ``coupling``, marked as measured in the gaps and the emitted module. A fixed
structure's floor and fill, once measured here too, are derived critical paths now
(:mod:`.critical`).
"""

from __future__ import annotations

import sympy

from ..net import Model
from .classes import InputClass
from .space import count_symbol, mean_symbol


def uniform_slopes(model: Model, cls: InputClass, points):
    """Beyond the paper: cycles per stream token that the simulation of two long uniform
    streams shows, at the lowest property values and at each sampled point (means
    rounded): [(point, n symbol, cycles per token)], or None without exactly one
    stream."""
    from ..sim import SimulationError, simulate
    from .classes import marking_of, tokens_for
    streams = [p for p in cls.space.places if p.stream]
    if len(streams) != 1:
        return None
    ps = streams[0]
    n_sym, step = count_symbol(ps.place), ps.probe or 1
    n1 = max(ps.count[0], 300 // step * step or step)
    n2 = n1 + max(step, 300 // step * step)
    if n2 > ps.count[1]:
        return None
    means = {mean_symbol(ps.place, q): lo for q, (lo, _) in ps.properties.items()}
    out = []
    for point in [{**points[0], **means}] + list(points):
        point = {k: (round(v) if k in means else v) for k, v in point.items()}
        lat = []
        for n in (n1, n2):
            try:
                lat.append(simulate(model, marking_of(model, tokens_for(
                    cls.space, model, {**point, n_sym: n}))).latency)
            except (SimulationError, KeyError, ZeroDivisionError):
                return None
        out.append(({**point, n_sym: n1}, n_sym, sympy.Rational(
            (lat[1] - lat[0]) * model.ticks_per_cycle, n2 - n1)))
    return out
