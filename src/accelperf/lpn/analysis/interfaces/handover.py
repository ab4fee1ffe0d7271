"""How one unit of an input hands over to the next (beyond OSDI'24 Fig. 5, which adds
the latencies of a stream's Protoacc messages).

Units that follow each other (a list of messages) share the accelerator's single-server
stages: the next message's front end runs while the last one's writes drain. With every
unit's tokens present from the start, the only thing that couples two units is each
stage's previous firing (A.2's rule that a single server starts after its last commit),
so the timestamps of a unit's commit records (:func:`.critical.record_times`) are a
max-plus linear function of the times its stages are freed by the units before it,
``free_v``. Its output is done at

    end = max(L, max_v free_v + h(v)),

L its latency alone and h(v) the longest chain of its records from stage v's first
firing to its output; stage u is next freed at

    free_u' = max(last(u), max_v free_v + P(v, u)),

last(u) when u is last done in the unit alone and P(v, u) the longest chain from v's
first firing to u's last. Both are exact for the records' timestamps (the
:data:`.critical.ASSUMPTION` of paths). The interface keeps the diagonal P(u, u) and the
rows of the roots (below): a stage's own earlier work delays its last firing, while a
delay that passes from one stage to another reaches the end through ``h`` (Protoacc: of
the sixty messages of Hyperprotobench, the write-back ``write_body`` couples 53 to the
message before).

Per single-server stage u, the type's example (the input its space was made from, else
its class's sample) gives three numbers relative to its latency there: ``drain`` =
L − last(u), ``head`` = L − h(u) (None when u reaches no output) and ``reach`` =
L − P(u, u). So do the example's sizes scaled by :data:`SCALES` (an empty message, 8 and
64 times its bytes): a stage's work before and after the size-bound part changes with
the sizes (a front end that is done early in a large message), and an input of that
type with latency L' (its own formula) is priced with each number interpolated in L'
between the tables' latencies (the nearest table's beyond them): last(u) = L' − drain,
h(u) = L' − head, P(u, u) = L' − reach. Between those sizes it is an estimate: a
new-user trial's 41 lists of one to eight messages of three types of its own, every
size drawn from 0 to 64 times the example's, came to 1.3% mean, 8.4% max (from one
table at the example: 3.6%, 25.9%).

Each derivation walks the records once per stage with that stage's earlier work put
far ahead (the walk's coefficients of a max-plus linear map). A stage whose first firing
every record of the unit waits behind (P(v, u) = last(u) for every u, h(v) = L: Protoacc's
has-bits load, the message's first firing) is a **root**: its free time is the unit's
start, which shifts every stage and the output alike, a row of P kept whole.

Stages are the single-server transitions and the places the net starts with tokens in
(a unit's idle token, a round-robin turn, named ``[place]``): the first token such a
place gives a unit is the one the unit before put back last. Where identical units are
taken in turn (Protoacc's six field pipelines), a unit finds the turn where the units
before it left it, not at the first pipeline as its own trace does: the model's
rotation (``model.declared.round_robin``: the turns a message takes, one per
dispatched field) renames its stages before the table is applied. Chained by
:func:`.critical.record_times` with every stage's free time carried over and the
pipelines so renamed, lists of messages take the simulation's cycles exactly
(tests/test_lpn_interface_derived.py). What the table leaves out (stated in the module
as :data:`ASSUMPTION`, named by ``--check``) is the rest of P: a delay passing from one
stage to another inside a unit other than through its roots. Three default messages
are priced exactly (276 cycles); default and forty_scalars messages alternating, four
in all, 389 against 412 (5.6% low).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...net import Model
from .classes import InputClass, values_of
from .critical import derivable, record_times, record_values
from ..space import symbol_ranges

ASSUMPTION = "a unit waits for the one before only through its first firing's stages " \
    "and each stage's own chain, timed between its type's derivation sizes"
"""What pricing a unit after another assumes (see the module docstring), as the emitted
module and ``--check`` name it."""


@dataclass(frozen=True)
class StageHandover:
    """One single-server stage of a type (a transition, or a place it starts with tokens
    in as ``[place]``): cycles before the unit's end that it is last free (``drain``),
    that its longest chain to the output starts (``head``, None without one) and that
    its own chain from first to last firing starts (``reach``)."""

    stage: str
    drain: float
    head: float | None
    reach: float


@dataclass(frozen=True)
class Handover:
    """A type's hand-over table (see the module docstring), in cycles, derived at its
    example, whose latency alone is ``latency``."""

    latency: float
    stages: tuple
    roots: tuple = ()        # stages whose earlier work delays the whole unit alike
    scaled: tuple = ()       # the tables at the example's sizes scaled (SCALES)

    def __repr__(self) -> str:
        coupled = sum(s.head is not None for s in self.stages)
        return f"Handover({len(self.stages)} stages, {coupled} reaching the output, " \
               f"at {len(self.scaled) + 1} sizes from {self.latency:g} cycles)"

    def describe(self) -> str:
        lats = ", ".join(f"{x:g}" for x in self.columns()[0])
        return f"derived from the records' timestamps at the type's example and its sizes " \
               f"scaled ({lats} cycles) for its {len(self.stages)} single-server stages"

    def table(self) -> dict:
        """{stage: (drain, head, reach)} at the example."""
        return {s.stage: (s.drain, s.head, s.reach) for s in self.stages}

    def columns(self) -> tuple:
        """(latencies, {stage: (drains, heads, reaches)}): each a tuple over the tables in
        the order of their latencies, as the emitted module interpolates them; heads is
        the example's head at every size where some size has no head."""
        tables = sorted([self, *self.scaled], key=lambda h: h.latency)
        rows = {}
        for s in self.stages:
            at = [t.table()[s.stage] for t in tables]
            heads = tuple(h for _, h, _ in at)
            if any(h is None for h in heads):
                heads = (s.head,) * len(tables)
            rows[s.stage] = (tuple(d for d, _, _ in at), heads, tuple(r for _, _, r in at))
        return tuple(t.latency for t in tables), rows


SCALES = (0, 8, 64)
"""Factors the example's sizes are scaled by (within their ranges) for the further
tables: an empty message, and ones whose size-bound work dominates."""


def handover(model: Model, cls: InputClass) -> Handover | None:
    """The class's hand-over table at the example its space was made from (the message
    of a Protoacc type) when that lies in the class, else at the class's sample, with
    the tables at its sizes scaled by :data:`SCALES` where those lie in the class and
    have the same stages; None where the class has no paths
    (:func:`.critical.derivable`) or reaches no output."""
    if not derivable(model, cls):
        return None
    point = values_of(cls.space, cls.space.example) if cls.space.example else None
    if point is None or not cls.holds(point):
        point = values_of(cls.space, cls.sample)
    base = _table_at(model, cls, point)
    if base is None:
        return None
    ranges = symbol_ranges(cls.space)
    scaled, seen = [], {base.latency}
    for k in SCALES:
        other = {s: (min(ranges[s][1], max(ranges[s][0], v * k)) if s in ranges else v)
                 for s, v in point.items()}
        table = _table_at(model, cls, other) if cls.holds(other) else None
        if table is not None and table.latency not in seen and \
                set(table.table()) == set(base.table()):
            scaled.append(table)
            seen.add(table.latency)
    return replace(base, scaled=tuple(scaled))


def _table_at(model: Model, cls: InputClass, point: dict) -> Handover | None:
    """The hand-over table at one point of the class (symbol -> value)."""
    records = cls.commits
    delays, intervals = record_values(records, point)
    alone = record_times(model, records, delays, intervals)
    if alone.end is None:
        return None
    latency = alone.latency
    # far enough ahead that a chain from it passes everything the unit does alone
    ahead = 2 * (sum(delays) + sum(intervals)) + 1
    cycles = model.ticks_per_cycle
    stages, roots = [], []
    for name, last in alone.free.items():
        pushed = record_times(model, records, delays, intervals, {name: ahead})
        head = None if pushed.latency < ahead else latency - (pushed.latency - ahead)
        reach = latency - (pushed.free[name] - ahead)
        stages.append(StageHandover(name, _cycles(latency - last, cycles),
                                    None if head is None else _cycles(head, cycles),
                                    _cycles(reach, cycles)))
        if head == 0 and all(pushed.free[u] - ahead == t for u, t in alone.free.items()):
            roots.append(name)
    return Handover(_cycles(latency, cycles), tuple(stages), tuple(roots))


def _cycles(ticks: float, per_cycle: int):
    value = ticks / per_cycle
    return int(value) if value == int(value) else value


__all__ = ["ASSUMPTION", "SCALES", "Handover", "StageHandover", "handover"]
