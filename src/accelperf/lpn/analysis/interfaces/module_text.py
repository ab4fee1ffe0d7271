"""The text every generated interface module shares (:mod:`.emit` writes the rest: its
types, classes and formulas): the stream splitter of the by-phase form, the input
readers, the hand-over hooks and the public API (``latency``, ``phases``, ``seconds``,
``throughput``). Kept here as source, run in the module, which needs nothing but the
standard library.
"""

from __future__ import annotations

import inspect
import re
import textwrap


def reader_gives_list(model) -> bool:
    """Whether the model's standalone reader (``model.declared.reader``) gives the start
    place's tokens as a list, as Ψ may, rather than ``{place: tokens}``: asked of the
    model's example input. The modules read ``{place: tokens}``, so such a reader is
    wrapped where it is copied in."""
    try:
        return isinstance(model.declared.reader(model.default_input), list)
    except Exception:      # noqa: BLE001 - a reader that refuses the example: as declared
        return False


RUNS_SOURCE = '''
def _runs(stream, gaps, period, first, ahead):
    """Cycles of a stream, one period (the tokens after which every stage has done
    whole commits, e.g. an MCU) at a time, grouped into runs with one bottleneck.

    A period costs its bottleneck: the largest sum of its tokens' gaps over the stages.
    When the stages after ``first`` (the one reading the stream) bound a period, ``first``
    uses its slack to work ahead on the next period's tokens: at most ``ahead`` of them
    (the buffer between the stages), and only in the time the bottleneck spends on the
    period's last ``ahead`` tokens (before, their slots are still taken). The next
    period's own work for ``first`` is that much shorter. Without this hand-over term a
    slow-first period after a back-end-bound one would be over-counted."""
    chunks = []
    for i in range(0, len(stream), period):
        gs = [gaps(tok) for tok in stream[i:i + period]]
        chunks.append((gs, {t: sum(g[t] for g in gs) for t in gs[0]}))
    runs, lead = [], 0
    for k, (gs, total) in enumerate(chunks):
        rest = max((t for t in total if t != first), key=total.get, default=None)
        own = total.get(first, 0) - lead
        if rest is None or own >= total[rest]:
            top, cycles, lead = first, own, 0
        else:
            top, cycles = rest, total[rest]
            following = chunks[k + 1][0][:ahead] if k + 1 < len(chunks) else []
            window = sum(g[top] for g in gs[len(gs) - ahead:]) if ahead else 0
            lead = min(sum(g[first] for g in following), cycles - own, window)
        _add_run(runs, top, len(gs), cycles)
    return [tuple(r) for r in runs]


def _add_run(runs, top, n, cycles):
    """Append a period to the runs: to the last one when it has the same bottleneck."""
    if runs and runs[-1][0] == top:
        runs[-1][1] += n
        runs[-1][2] += cycles
    else:
        runs.append([top, n, cycles])
'''


def rotation_source(model) -> str:
    """The module's round-robin hooks (``model.declared.round_robin``): the turns a unit
    takes and its stages' names after so many, standalone; none without one."""
    rotation = None if model is None else model.declared.round_robin
    if rotation is None:
        return "\n\nROUND_ROBIN = 1\n\n\ndef _turns(toks):\n    return 0\n\n\n" \
               "def _rotate(stage, turns, units):\n    return stage\n"
    turns, rotate, unit = rotation.turns, rotation.rotate, rotation.unit
    units = sum(1 for t in model.transitions
                if re.fullmatch(re.escape(unit).replace(r"\{\}", "[0-9]+"), t.name))
    text = f"\n\nROUND_ROBIN = {units}   # identical units taken in turn\n\n\n"
    text += textwrap.dedent(inspect.getsource(turns)).replace(
        f"def {turns.__name__}(", "def _turns(", 1)
    text += "\n\n" + textwrap.dedent(inspect.getsource(rotate)).replace(
        f"def {rotate.__name__}(", "def _rotate(", 1)
    return text


HELPERS_SOURCE = '''

def tokens(x):
    """The input's tokens, {place: [{property: value}]}."""
    if isinstance(x, dict) and x and set(x) <= set(PLACES) and \\
            all(isinstance(v, list) for v in x.values()):
        return x
    if isinstance(x, (list, dict, int, float)) and _psi is not None:
        return _psi(x)                  # parsed JSON: the standalone Ψ
    try:
        from accelperf.lpn.loader import load_input, load_model
    except ImportError:
        raise OutsideClasses(f"input {x!r:.60}: reading it needs accelperf installed "
                             f"(pip install accelperf), or give tokens "
                             f"{{place: [{{property: value}}]}}") from None
    model = load_model(MODEL)
    marking = model.marking(load_input(x) if isinstance(x, str) else x)
    out = {}
    for pid, toks in marking.tokens.items():
        place = model.places[pid]
        if place.name in PLACES:
            out[place.name] = [dict(zip(place.token_type.properties, t)) for t in toks]
    return out


def _name(place):
    """A place's name in the formulas: non-name characters become _ (link.wire: link_wire)."""
    import re
    name = re.sub(r"\\W", "_", place)
    return "_" + name if name[:1].isdigit() else name


def properties(toks, streams, fixed, ranges, structure):
    """The named properties the formulas read: n_P and mean_P_p of each stream, P_i_p of
    each token of a fixed-count place (whose other properties must be the type's)."""
    a = {}
    for place, props in streams.items():
        ts = toks.get(place, [])
        a["n_" + _name(place)] = len(ts)
        for p in props:
            a["mean_" + _name(place) + "_" + p] = sum(t[p] for t in ts) / max(1, len(ts))
    for place, (count, props) in fixed.items():
        ts = toks.get(place, [])
        if len(ts) != count:
            raise OutsideClasses(f"{place} has {len(ts)} tokens; this interface was "
                                 f"extracted for exactly {count}")
        for i, t in enumerate(ts):
            want = structure[place][i] if place in structure else {}
            got = {p: t[p] for p in want}
            if got != want:
                raise OutsideClasses(f"token {i} of {place} is {got}; this input type "
                                     f"has {want} there")
            for p in props:
                lo, hi = ranges[place][p]
                if not lo <= t[p] <= hi:
                    raise OutsideClasses(f"input outside the extracted space: "
                                         f"{place}[{i}].{p} = {t[p]} is not in {lo}..{hi}")
                a[_name(place) + "_" + str(i) + "_" + p] = t[p]
    return a
'''

API_SOURCE = '''

def _which(unit):
    toks = tokens(unit)
    why = []
    for name, streams, fixed, ranges, structure, space, sums, handover, classes in TYPES:
        try:
            a = properties(toks, streams, fixed, ranges, structure)
        except OutsideClasses as exc:
            why.append(f"{name}: {exc}")
            continue
        sums(a, toks)
        for label, test in space:
            if not test(a):
                raise OutsideClasses(f"input outside the extracted space: {label} fails")
        for in_class, plain, by_phase in classes:
            if in_class(a):
                return a, toks, plain, by_phase, handover
        raise OutsideClasses(f"input of type {name} in none of its extracted input classes")
    if len(why) == 1:
        raise OutsideClasses(why[0].split(": ", 1)[1])
    raise OutsideClasses("input of no extracted type (" + "; ".join(why) + ")")


def _read(x):
    """A JSON file's value (a list of units is then split like the parsed list), else x."""
    if isinstance(x, str) and x.endswith(".json"):
        import json
        import os
        if os.path.isfile(x):
            with open(x) as f:
                return json.load(f)
    return x


def phases(x):
    """[(bounding transition, tokens, cycles)] per phase (streams split into runs)."""
    out = []
    for unit in _units(_read(x)):
        a, toks, _, by_phase, _ = _which(unit)
        out += by_phase(a, toks)
    return out


def _at(sizes, values, cycles):
    """A hand-over number for a unit of ``cycles``: piecewise linear between the tables
    derived at units of ``sizes`` cycles, the nearest one's beyond them."""
    if cycles <= sizes[0]:
        return values[0]
    for a, b, va, vb in zip(sizes, sizes[1:], values, values[1:]):
        if cycles <= b:
            return va + (vb - va) * (cycles - a) / (b - a)
    return values[-1]


def latency(x, phases=None):
    """Cycles the accelerator takes for input x (plain interface, or by phase). Units
    (a list of messages) follow each other through the single-server stages: a unit's
    stage u is freed at max(L - drain, free_u + L - reach) and its output done at
    max(L, free_u + L - head) over the stages the units before it freed, L its cycles
    alone, all shifted to when its roots are free (HANDOVER_k, interpolated in L between
    the sizes it was derived at); its round-robin units are the ones the units before
    it left the turn at. A unit without a table starts after everything before it."""
    end, start, free, turns = 0, 0, {}, 0
    for unit in _units(_read(x)):
        a, toks, plain, by_phase, handover = _which(unit)
        if PHASES if phases is None else phases:
            cycles = sum(c for _, _, c in by_phase(a, toks))
        else:
            cycles = plain(a)
        if handover is None:
            start, free = end, {}
            end += cycles
            turns += _turns(toks)
            continue
        roots, sizes, table = handover
        # its stages as the round-robin finds them after the units before it
        turn = turns % ROUND_ROBIN
        begin = max([start] + [free[s] for s in (_rotate(r, turn, ROUND_ROBIN) for r in roots)
                               if s in free])
        done, freed = begin + cycles, {}
        for stage, (drains, heads, reaches) in table.items():
            stage = _rotate(stage, turn, ROUND_ROBIN)
            before = free.get(stage)
            freed[stage] = begin + cycles - _at(sizes, drains, cycles)
            if before is not None:
                freed[stage] = max(freed[stage], before + cycles - _at(sizes, reaches, cycles))
                if heads[0] is not None:
                    done = max(done, before + cycles - _at(sizes, heads, cycles))
        free.update(freed)
        end = max(end, done)
        turns += _turns(toks)
    return end


def seconds(x, frequency_hz=FREQUENCY_HZ, phases=None):
    return latency(x, phases) / frequency_hz


def throughput(x, frequency_hz=FREQUENCY_HZ, phases=None):
    """Stream tokens per second (or units of the input, without a stream)."""
    n = 0
    for unit in _units(_read(x)):
        toks = tokens(unit)
        n += sum(len(toks.get(p, [])) for t in TYPES for p in t[1]) or 1
    return n / seconds(x, frequency_hz, phases)


if __name__ == "__main__":
    import json
    import sys
    for arg in sys.argv[1:]:
        try:
            value = json.loads(arg)
        except ValueError:
            value = arg
        try:
            print(json.dumps({"input": arg, "cycles": latency(value)}))
        except OutsideClasses as exc:
            print(f"{sys.argv[0]}: input {arg!r:.60} is invalid: {exc}", file=sys.stderr)
            sys.exit(2)
'''


__all__ = ["API_SOURCE", "HELPERS_SOURCE", "RUNS_SOURCE", "rotation_source"]
