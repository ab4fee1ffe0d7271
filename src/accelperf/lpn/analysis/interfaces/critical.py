"""Critical paths of a fixed structure's abstract trace (beyond OSDI'24 §4.2, after A.2's
local timestamps): the derived floor and fill of a Protoacc message type or a Menshen
packet stream.

A.3's loops bound each transition's commit gap, and §4.2's latency is the largest N_T·ḡ_T.
For a fixed structure whose token sizes range, that maximum misses work the loops cannot
see (Protoacc's round-robin turns, whose output counts are expressions) and the time
before and after the size-bound stage (its fill). Both are on the trace's critical path:

* a commit record starts when the tokens it takes were committed (the records it lists
  as sources), its single server is free (its transition's previous record committed),
  its initiation interval after the previous start has passed, and the token before it
  in each queue it takes from was taken (queues are first in, first out); it commits its
  delay later;
* the latency is the latest commit that puts a token in the done place; walking back
  from it through whichever of those conditions was the latest gives one chain of
  records, and the sum of their delays (and the intervals on it) is a **path**: a SymPy
  expression of the token sizes that names the transitions it passes.

Every path is a lower bound of the latency for every size (the latency is the largest
path), and equal to it where it is the critical one. :func:`critical_paths` evaluates the
timestamps at chosen sizes (the class's bounds, its sampled members, sizes scaled
geometrically), keeps the path that is critical at each, and the interface adds them as
terms of its maximum: exact at those sizes, a lower bound between them.

A record also waits for the records whose tokens its read arcs needed (``waited``: the
JPEG decoder's Y and Cb transforms read the output slots), so the walk's latency at a
point is the simulation's; :func:`walked_latency` gives it at the class's samples, where
the interface stops A.3's loop iteration from passing it.

Assumption (stated in the emitted module, checked by ``--check``): **units fire in the
order of the records** — each transition's firings, and each queue's tokens, are taken in
the order the symbolic run lists them (true for in-order units; the executor's eager
order follows A.2). Not used for units with several servers (which one frees first is an
order statistic). Stream bundles (one record for k firings: a link's packets of a
message) have no record-level path; :func:`loop_paths` gives the chain of a bundled unit
round a credit loop instead, a max-plus recurrence solved in closed form.

A trace of few sizes (Fig. 2's fetch group, a VTA program) has its whole critical path
as one expression, :func:`critical_path`: every timestamp is kept as the list of sums it
is the maximum of (max-plus: a delay adds to each sum), and a sum that another exceeds
by a non-negative number plus non-negative terms of the sizes is dropped as it appears.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import sympy

from ...net import Model
from .classes import InputClass
from ..space import symbol_ranges

ASSUMPTION = "units fire in the order of the records"
"""The one assumption a path needs (see the module docstring), as ``--check`` names it."""

LOOP_ASSUMPTION = "the unit's firings between its first and last take their mean delay"
"""What a loop path (:func:`loop_paths`) assumes besides the records' order: exact for
one delay, a mean where they differ (a message's shorter last packet)."""

MAX_RECORDS = 50_000
"""Commit records past which no path is derived (each point walks every record)."""


@dataclass(frozen=True)
class RecordTimes:
    """A.2's local timestamps of a trace's commit records at numeric delays (see
    :func:`record_times`)."""

    start: list
    done: list
    why: list               # per record, what it waited for last: (kind, record) or None
    end: int | None         # the record that last puts a token in the done place
    free: dict              # stage -> when it is last free: a single-server transition
                            # (its last firing done), a resource place "[name]" (its
                            # last token in)

    @property
    def latency(self) -> float:
        return float("-inf") if self.end is None else self.done[self.end]


def numeric(expr, point: dict) -> float:
    """``expr`` at ``point`` (every symbol of it given a number), as a float."""
    expr = sympy.sympify(expr)
    if not expr.free_symbols:
        return float(expr)
    return float(expr.xreplace({s: sympy.sympify(point[s]) for s in expr.free_symbols}))


def record_values(records, point: dict) -> tuple[list, list]:
    """Each record's delay and initiation interval at ``point`` (symbol -> number)."""
    return [numeric(r.delay, point) for r in records], \
        [numeric(r.interval, point) for r in records]


def resource_stage(place: str) -> str:
    """How :func:`record_times` names a place the net starts with tokens in, as a stage
    (apart from a transition of the same name)."""
    return f"[{place}]"


def record_times(model: Model, records, delays, intervals, free=None) -> RecordTimes:
    """The timestamps of the records (see the module docstring's rules) with each
    record's delay and initiation interval given as numbers. ``free`` ({stage: time})
    says when a stage is freed by what came before the trace (an earlier unit of a
    stream): a single-server transition's first record here starts no sooner, nor does
    the record that takes the first token of a place the net starts with tokens in (a
    resource such as a unit's idle token or a round-robin turn; queues are first in,
    first out, so the tokens it started with are taken first). Every rule of a path
    lives here; :func:`path_at` and :mod:`.handover` read the result."""
    free = free or {}
    done_place = model.places[model.done].name
    start, done, why = [], [], []
    last, taker, end, freed = {}, {}, None, {}
    started = {pid: len(toks) for pid, toks in model.initial.items()}
    resources = {model.places[pid].name: resource_stage(model.places[pid].name)
                 for pid in model.initial}
    for i, rec in enumerate(records):
        t = model.transitions[rec.tid]
        # (time, how this record waits: ("done", j) its delay, ("start", j) its start,
        # ("interval", j) its start and interval, ("free", None) a stage's earlier work)
        ready = [(done[s], ("done", s)) for s in rec.sources + rec.waited if s >= 0]
        fifo = [pid for pid, n in zip(t.inputs, rec.consumed)
                if n != 0 and pid not in model.initial]
        ready += [(start[taker[pid]], ("start", taker[pid])) for pid in fifo if pid in taker]
        for pid, n in zip(t.inputs, rec.consumed):
            if started.get(pid) and n != 0:      # takes a token the net started with
                started[pid] = max(0, started[pid] - (n if isinstance(n, int) else 1))
                stage = resources[model.places[pid].name]
                if stage in free:
                    ready.append((free[stage], ("free", None)))
        previous = last.get(rec.tid)
        if previous is not None:
            if t.concurrency == 1:
                ready.append((done[previous], ("done", previous)))
            ready.append((start[previous] + intervals[previous], ("interval", previous)))
        elif t.concurrency == 1 and rec.transition in free:
            ready.append((free[rec.transition], ("free", None)))
        begin, cause = max(ready, key=lambda r: r[0]) if ready else (0.0, None)
        start.append(begin)
        done.append(begin + delays[i])
        why.append(None if cause is None or cause[0] == "free" else cause)
        last[rec.tid] = i
        taker.update({pid: i for pid in fifo})
        if t.concurrency == 1:
            freed[rec.transition] = done[i]
        for place, n in rec.produced:
            if n != 0 and place in resources:
                freed[resources[place]] = done[i]
        if any(place == done_place and n != 0 for place, n in rec.produced):
            if end is None or done[i] >= done[end]:
                end = i
    return RecordTimes(start, done, why, end, freed)


@dataclass(frozen=True)
class CriticalPath:
    """One chain of commit records, critical at ``at``: ``latency`` sums its delays."""

    latency: object            # SymPy, in the model's delay units (ticks)
    transitions: tuple         # the distinct transitions on it, first to last
    at: dict                   # a point (symbol -> value) where it is the critical one
    loop: str = ""             # the loop place it goes round (:func:`loop_paths`), if any

    def __repr__(self) -> str:
        return f"CriticalPath({' -> '.join(self.transitions)}: {self.latency})"

    def describe(self, limit: int = 8) -> str:
        """The transitions it passes, the first and last ``limit // 2`` when many."""
        names = list(self.transitions)
        if len(names) > limit:
            names = names[:limit // 2] + [f"... ({len(names) - limit} more)"] + \
                names[-(limit // 2):]
        if self.loop:
            return f"critical path round the loop via {self.loop} through " + \
                " -> ".join(names) + f" (assuming {LOOP_ASSUMPTION})"
        return "critical path through " + " -> ".join(names)


def derivable(model: Model, cls: InputClass) -> bool:
    """Whether the class's trace has paths (see the module docstring's assumption)."""
    records = cls.commits
    return bool(records) and len(records) <= MAX_RECORDS and \
        not any(r.bundled for r in records) and \
        all(model.transitions[r.tid].concurrency in (1, None) for r in records)


def path_at(model: Model, cls: InputClass, point: dict) -> CriticalPath | None:
    """The path critical at ``point`` (every size symbol given a number); None when the
    class has none (:func:`derivable`) or nothing reaches the done place."""
    if not derivable(model, cls):
        return None
    records = cls.commits
    times = record_times(model, records, *record_values(records, point))
    why, end = times.why, times.end
    if end is None:
        return None
    terms, names, node = [], [], ("done", end)
    while node is not None:
        kind, i = node
        if kind == "done":
            terms.append(records[i].delay)
            names.append(records[i].transition)
        elif kind == "interval":
            terms.append(records[i].interval)
            names.append(records[i].transition)
        node = why[i]
    return CriticalPath(sympy.Add(*terms), tuple(dict.fromkeys(reversed(names))), dict(point))


def walked_latency(model: Model, cls: InputClass, points) -> list | None:
    """The latency the records' timestamps give at each point (symbol -> value), in the
    model's delay units: the longest path there, so exact where the units fire in the
    order of the records. Beyond the paper, a fixed structure's ceiling for A.3's loop
    bounds, which overshoot where a loop's parallel factors differ (the JPEG decoder's
    back end behind its DMA front); None when the class has no paths."""
    if not derivable(model, cls):
        return None
    out = []
    for point in points:
        path = path_at(model, cls, point)
        if path is None:
            return None
        out.append(float(sympy.sympify(path.latency).xreplace(
            {s: sympy.sympify(point[s]) for s in path.latency.free_symbols})))
    return out


SCALES = (1, 2, 4, 8, 16, 64, 256, 1024, 4096, 8192)
"""Sizes a path is looked for at: every ranged size at (at least 1) times each of these,
within its range — small sizes find the processing floor, large ones the fill around the
size-bound stage."""

RANDOM_POINTS = 12
"""Further points with each size drawn log-uniformly from its range (capped at 2^16): a
structure whose sizes differ finds the paths between the uniform ones."""


def critical_paths(model: Model, cls: InputClass, ranges: dict, points=()) -> list:
    """The distinct paths critical at the class's lowest sizes, at :data:`SCALES`, at
    :data:`RANDOM_POINTS` log-uniform draws and at ``points`` (symbol -> value), that lie
    in the class; [] when the class has none."""
    if not ranges or not derivable(model, cls):
        return []
    rng = random.Random(cls.index)
    candidates = [{s: lo for s, (lo, hi) in ranges.items()}]
    candidates += [{s: min(hi, max(lo, 1) * k) for s, (lo, hi) in ranges.items()}
                   for k in SCALES]
    for _ in range(RANDOM_POINTS):
        candidates.append({s: min(hi, max(lo, round(2 ** rng.uniform(0, 16))))
                           for s, (lo, hi) in ranges.items()})
    candidates += [dict(p) for p in points]
    found = {}
    for point in candidates:
        if not cls.holds(point):
            continue
        path = path_at(model, cls, point)
        if path is not None:
            found.setdefault(sympy.srepr(path.latency), path)
    return list(found.values())


def loop_paths(model: Model, cls: InputClass, loops) -> list:
    """Beyond the paper, for stream bundles (one record for k firings of a unit, so no
    record-level path): the chain of a single-server unit T that takes the tokens of an
    A.3 loop's place (:mod:`.loops`; M, the loop's parallel factor, firings' worth of
    tokens), e.g. a link's transmitter and its credits. Firing n starts after firing
    n-1 is done and after the token of firing n-M has come round: start(n) =
    max(start(n-1) + δ, start(n-M) + δ + Δ'), Δ' the loop's other delays (its other
    transitions' mean delays). For one delay δ this
    max-plus recurrence solves to start(n) = n·δ + floor(n/M)·max(0, Δ' - (M-1)·δ): a
    credit round adds what the M-1 firings in between do not cover. So

        latency = Σ δ + floor((N-1)/M)·max(0, Δ' - (M-1)·δ̄) + tail,

    N the unit's commits, Σ δ their delays (exact, from the records), δ̄ the mean delay
    of the firings between its first and last (every chain starts with the first; the
    last is priced on its own), and tail the delays after its last firing up to the done
    place (the records' sources followed back from the last commit into it). Each term
    names the transitions it comes from; exact for one delay, a mean where delays differ
    (a message's last, shorter packet). [] without a bundled unit on a loop whose
    transitions share one parallel factor."""
    records = cls.commits
    if not any(r.bundled for r in records):
        return []
    out = []
    for lp in loops:
        unit = _loop_unit(model, cls, lp)
        if unit is None:
            continue
        name, mine, factor, (last, after, passed) = unit
        n = sympy.Add(*[r.times for r in mine])
        total = sympy.Add(*[r.times * r.delay for r in mine])
        rest = sympy.Add(*[_mean_delay(records, t) for t in lp.transitions if t != name])
        mean = (total - _first_delay(mine) - records[last].delay) / sympy.Max(n - 2, 1)
        rounds = sympy.floor((n - 1) / factor)
        latency = total + sympy.Add(*after) + \
            rounds * sympy.Max(0, rest - (factor - 1) * mean)
        names = lp.transitions + tuple(t for t in reversed(passed) if t != name)
        out.append(CriticalPath(latency, tuple(dict.fromkeys(names)), {}, lp.place))
    return out


def _loop_unit(model: Model, cls: InputClass, loop):
    """(name, its records, the loop's parallel factor M, :func:`_tail` from the last
    commit into the done place) of the unit taking ``loop``'s place (its first
    transition), where it is a bundled single server and the loop's transitions share
    one whole factor; else None. What :func:`loop_paths` solves and :func:`loop_chain`
    walks."""
    records = cls.commits
    factor = loop.factors[0]
    if len(set(loop.factors)) != 1 or not factor.is_Integer:
        return None
    name = loop.transitions[0]
    mine = [r for r in records if r.transition == name]
    if not mine or not any(r.bundled for r in mine) or \
            model.transitions[mine[0].tid].concurrency != 1:
        return None
    done_place = model.places[model.done].name
    ends = [i for i, r in enumerate(records)
            if any(place == done_place and n != 0 for place, n in r.produced)]
    tail = _tail(records, ends[-1], name) if ends else None
    return None if tail is None else (name, mine, factor, tail)


LOOP_FIRINGS = 1_000_000
"""Firings of a loop's unit past which :func:`loop_chain` is not walked."""


def loop_chain(model: Model, cls: InputClass, loop, point: dict) -> float | None:
    """The chain :func:`loop_paths` solves round ``loop`` (an A.3 loop), walked firing by
    firing at ``point`` (symbol -> value) with every firing of the unit at its own delay
    instead of their mean: start(n) = max(start(n-1) + δ_{n-1}, start(n-M) + δ_{n-M} + Δ'),
    start(0) = 0, plus the tail to the done place, in the model's delay units. Where it
    differs from the closed form at ``point``, :data:`LOOP_ASSUMPTION` is what makes the
    difference (``--check`` reports it). None where :func:`loop_paths` has no chain round
    ``loop`` or the unit fires more than :data:`LOOP_FIRINGS` times."""
    unit = _loop_unit(model, cls, loop)
    if unit is None:
        return None
    name, mine, factor, tail = unit
    records = cls.commits
    delays = []
    for r in mine:
        times = round(numeric(r.times, point))
        if len(delays) + times > LOOP_FIRINGS:
            return None
        delays += [numeric(r.delay, point)] * times
    if not delays:
        return None
    rest = sum(numeric(_mean_delay(records, t), point) for t in loop.transitions if t != name)
    m = int(factor)
    start = [0.0]
    for n in range(1, len(delays)):
        begin = start[n - 1] + delays[n - 1]
        if n >= m:              # its credit is the one firing n-M took, come round
            begin = max(begin, start[n - m] + delays[n - m] + rest)
        start.append(begin)
    return start[-1] + delays[-1] + sum(numeric(d, point) for d in tail[1])


def _tail(records, end: int, name: str):
    """From record ``end`` back through its latest sources to a record of ``name``: that
    record's index, the delays of the records after it, their transitions."""
    node, after, passed = end, [], []
    while records[node].transition != name:
        after.append(records[node].delay)
        passed.append(records[node].transition)
        sources = [s for s in records[node].sources if s >= 0]
        if not sources:
            return None
        node = max(sources)
    return node, after, passed


def _mean_delay(records, name: str):
    firings = [r for r in records if r.transition == name]
    return sympy.Add(*[r.times * r.delay for r in firings]) / \
        sympy.Add(*[r.times for r in firings])


def _first_delay(records):
    """The delay of a unit's first firing: its first record that fires at all, as
    d_0 + min(k_0, 1)·(δ_0 - d_0) over records of k_0 firings (a record's count is a
    whole number >= 0; no Piecewise, which SymPy's gcd refuses)."""
    chosen = records[-1].delay
    for r in reversed(records):
        times = sympy.sympify(r.times)
        if times.is_Integer and times >= 1:
            chosen = r.delay
        elif not times.is_Integer:
            chosen = chosen + sympy.Min(times, 1) * (r.delay - chosen)
    return chosen


FEW_SYMBOLS = 8
"""Size symbols past which an expression is kept as plain sums: :func:`critical_path` is
not tried (its maximum keeps a sum per chain that no other dominates, too many to prune
over every size of a large structure such as Protoacc or Menshen, which
:func:`critical_paths` covers), and the interface only expands such expressions, not
simplifies them (a fixed structure's per-token sums gain nothing from it)."""


CRITICAL_PATH_RECORDS = 2000
"""Commit records past which :func:`critical_path` is not tried (its Max terms grow with
the trace when the sizes are symbolic)."""


def critical_path(model: Model, cls: InputClass):
    """Beyond the paper, for a class whose run is token by token (no stream bundles): the
    time its last token reaches the done place, derived from the commit records alone as
    A.2 computes timestamps locally. A firing starts when the tokens it takes have been
    committed (their records), its single server is free (its last firing committed) and
    its initiation interval has passed; it commits after its delay. SymPy Max keeps the
    terms that depend on the input (Fig. 2's load and compute cycles).

    It assumes the records' order per transition is the order the timed run fires it in
    (true for in-order units, which the executor's eager order follows). None when a record
    is bundled, a unit has several servers (which frees first is an order statistic), the
    trace is longer than :data:`CRITICAL_PATH_RECORDS`, its delays depend on more than
    FEW_SYMBOLS symbols or nothing reaches the done place."""
    records = cls.commits
    if not records or len(records) > CRITICAL_PATH_RECORDS or any(r.bundled for r in records):
        return None
    timing = set().union(*(sympy.sympify(e).free_symbols for r in records
                           for e in (r.delay, r.interval)))
    if len(timing) > FEW_SYMBOLS:
        return None         # a Max over every size (Protoacc, Menshen): too long to prune
    done_place = model.places[model.done].name
    lows = {sym: lo for sym, (lo, _) in symbol_ranges(cls.space).items()}
    start, done, last, taker = [], [], {}, {}
    ends = []
    for rec in records:
        ready = [done[s] for s in rec.sources if s >= 0]
        t = model.transitions[rec.tid]
        # A queue is first in, first out: a token is taken no earlier than the one before
        # it in its place (Fig. 2's in-order dispatch: a load waits behind a compute).
        fifo = [pid for pid, n in zip(t.inputs, rec.consumed)
                if n != 0 and pid not in model.initial]
        ready += [start[taker[pid]] for pid in fifo if pid in taker]
        k = t.concurrency
        if k not in (1, None):
            return None
        previous = last.get(rec.tid)
        if previous is not None:
            if k == 1:
                ready.append(done[previous])
            ready.append([b + records[previous].interval for b in start[previous]])
        begin = _join(ready, lows) if ready else [sympy.Integer(0)]
        start.append(begin)
        done.append([b + rec.delay for b in begin])
        last[rec.tid] = len(start) - 1
        taker.update({pid: len(start) - 1 for pid in fifo})
        if any(place == done_place and n != 0 for place, n in rec.produced):
            ends.append(done[-1])
    if not ends:
        return None
    ends = _join(ends, lows)
    return ends[0] if len(ends) == 1 else sympy.Max(*ends, evaluate=False)


def _join(times: list[list], lows: dict) -> list:
    """The max of several times, each a list of sums whose max it is (max-plus algebra:
    adding a delay adds it to every sum), keeping only the sums no other one dominates
    everywhere (:func:`_dominated`). Nested SymPy Max trees instead grew with every
    record, and comparing their arguments took minutes on a 5-field Protoacc message."""
    terms = {}
    for time in times:
        for term in time:
            term = sympy.sympify(term)
            terms.setdefault(term, term.as_coefficients_dict())
    items = list(terms.items())
    return [t for i, (t, a) in enumerate(items)
            if not any(_dominated(a, b, lows) and (not _dominated(b, a, lows) or j < i)
                       for j, (_, b) in enumerate(items) if j != i)]


def _dominated(a: dict, b: dict, lows: dict) -> bool:
    """Whether the sum with coefficients ``a`` is nowhere larger than ``b``'s: b − a is
    a non-negative number plus non-negative multiples of terms that cannot be negative
    on the space (sizes and their floors; ``lows``: each symbol's smallest value)."""
    for key in set(a) | set(b):
        c = b.get(key, 0) - a.get(key, 0)
        if c == 0:
            continue
        if c < 0 or not (key.is_number or _nonnegative(key, lows)):
            return False
    return True


def _nonnegative(term, lows: dict) -> bool:
    """A term that cannot be negative: a symbol whose smallest value is >= 0, or
    floors, ceilings, sums and products of such terms and positive numbers."""
    if term.is_number:
        return term >= 0
    if term.is_Symbol:
        return lows.get(term, -1) >= 0
    if isinstance(term, (sympy.floor, sympy.ceiling, sympy.Add, sympy.Mul)):
        return all(_nonnegative(a, lows) for a in term.args)
    return False


__all__ = ["ASSUMPTION", "FEW_SYMBOLS", "LOOP_ASSUMPTION", "CriticalPath", "RecordTimes",
           "critical_path", "critical_paths", "derivable", "loop_chain", "loop_paths",
           "numeric", "path_at", "record_times", "record_values", "resource_stage", "walked_latency"]
