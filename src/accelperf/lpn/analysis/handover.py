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
delay that passes from one stage to another reaches the end through ``h`` (Protoacc: of the sixty messages of
Hyperprotobench, the write-back ``write_body`` couples 53 to the message before).

Per single-server stage u, the type's example (the input its space was made from, else
its class's sample) gives three numbers relative to its
latency there: ``drain`` = L − last(u), ``head`` = L − h(u) (None when u reaches no
output) and ``reach`` = L − P(u, u). An input of that type with latency L' (its own
formula) is priced with last(u) = L' − drain, h(u) = L' − head and P(u, u) = L' − reach:
what a stage does before and after the size-bound work is taken as fixed at the example.
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
rotation (:data:`.adapters.ROTATIONS`: the turns a message takes, one per dispatched
field) renames its stages before the table is applied. Chained by
:func:`.critical.record_times` with every stage's free time carried over and the
pipelines so renamed, lists of messages take the simulation's cycles exactly
(tests/test_lpn_interface_derived.py). What the table leaves out (stated in the module
as :data:`ASSUMPTION`, named by ``--check``) is the rest of P: a delay passing from one
stage to another inside a unit other than through its roots. Three default messages
are priced exactly (276 cycles); default and forty_scalars messages alternating, four
in all, 389 against 412 (5.6% low).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..net import Model
from .classes import InputClass, values_of
from .critical import derivable, record_times, record_values

ASSUMPTION = "a unit waits for the one before only through its first firing's stages " \
    "and each stage's own chain, timed as at its type's example"
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

    def __repr__(self) -> str:
        coupled = sum(s.head is not None for s in self.stages)
        return f"Handover({len(self.stages)} stages, {coupled} reaching the output, " \
               f"at an example of {self.latency:g} cycles)"

    def describe(self) -> str:
        return f"derived from the records' timestamps at the type's example " \
               f"({self.latency:g} cycles) for its {len(self.stages)} single-server stages"

    def table(self) -> dict:
        """{stage: (drain, head, reach)}, as the emitted module holds it."""
        return {s.stage: (s.drain, s.head, s.reach) for s in self.stages}


def handover(model: Model, cls: InputClass) -> Handover | None:
    """The class's hand-over table at the example its space was made from (the message
    of a Protoacc type) when that lies in the class, else at the class's sample; None
    where the class has no paths (:func:`.critical.derivable`) or reaches no output."""
    if not derivable(model, cls):
        return None
    records = cls.commits
    point = values_of(cls.space, cls.space.example) if cls.space.example else None
    if point is None or not cls.holds(point):
        point = values_of(cls.space, cls.sample)
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


__all__ = ["ASSUMPTION", "Handover", "StageHandover", "handover"]
