"""Measured terms of a performance interface (beyond OSDI'24 §4.2): simulated runs.

Where A.3's loops cannot see all the work, :mod:`.interface` asks the simulator: for a
class with one stream, the cycles per stream token between two long uniform streams
(:func:`uniform_slopes`); for a fixed structure whose token sizes range (a Protoacc message
type, a Menshen packet stream), the cycles at chosen sizes (:func:`simulated_at`), which
give the measured floor and fill terms.
"""

from __future__ import annotations

import sympy

from ..net import Model
from .classes import InputClass
from .space import count_symbol, mean_symbol, symbol_ranges


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


MEASURED_FLOOR, MEASURED_FILL = "measured_floor", "measured_fill"
"""The names of the measured terms of a fixed structure (see :func:`simulated_at`)."""

BIG_SIZE = 4096
"""The large sizes of a fixed structure's second measured run: this times each ranged
property's lower bound (at least 1), within its range."""


def simulated_at(model: Model, cls: InputClass, pick):
    """Beyond the paper, for a fixed structure whose token properties range (a Protoacc
    message type, a Menshen packet stream): (point, cycles) of the simulated run with
    every ranged property at ``pick(lo, hi)``; None for streams, for fully fixed inputs
    (a VTA program: measuring it would be the simulation itself) and where the point
    leaves the class."""
    from ..sim import SimulationError, simulate
    from .classes import marking_of, tokens_for
    space = cls.space
    if any(p.stream for p in space.places):
        return None
    point = {sym: pick(lo, hi) for sym, (lo, hi) in symbol_ranges(space).items()}
    if not point or not cls.holds(point):
        return None
    try:
        cycles = simulate(model, marking_of(model, tokens_for(space, model, point))).latency
    except SimulationError:
        return None
    return point, sympy.Integer(cycles * model.ticks_per_cycle)   # in the delays' ticks
