"""Per-transition Python code for the fast engine's hot path.

The rules are those of :mod:`.semantics`; this module only writes them out, per transition,
as straight-line Python from the transition's expression trees. Each transition gets three
generated functions over the run's state lists (``Q`` free-token deques, ``L`` locked
counts, ``M`` occupancy high-water marks, ``D`` = [latency, done tokens]):

* ``probe(now)`` — rule R2 (b)–(f): None when the transition cannot start (its interval
  aside); it changes nothing (used to drop a stale wake-up);
* ``fire(now)`` — R2 then R3: None when it cannot start, False when only its interval holds
  it back (until ``NS[id]``), else it works out the tokens to produce on the state as it
  is, locks the input tokens, sets the next start and returns the firing;
* ``commit(firing, now)`` — rule R4: releases the locked tokens, appends the produced
  ones, keeps the high-water marks and the done-place count; returns the place a route
  chose (or None).

Unrolling a transition's arity, inlining constant weights and counts and evaluating
expressions as straight-line Python roughly doubles the engine's speed over interpreting
the rules. The source is generated from our own trees, never from user text.
"""

from __future__ import annotations

from .expr import constant as _const
from .expr_backends import to_python
from .firing_code import carried as _carried, conditions, weight_term
from .operators import PYTHON_HELPERS
from .net import Model, Transition
from .semantics import NO_ROUTE, FiringError, below_zero, too_few_to_copy


class _Writer:
    """Renders one transition's expressions over the generated functions' locals."""

    def __init__(self, model: Model, t: Transition):
        self.model, self.t = model, t

    def token(self, arg, tok, index):
        return f"h{arg}[{index}]" if tok == 0 else f"qa{arg}[{tok}][{index}]"

    def count(self, place):
        pid = self.model.place_id(place)
        return f"(len(Q[{pid}]) + L[{pid}])"

    def expr(self, e) -> str:
        return to_python(e, self.token, self.count)

    def name(self, pid) -> str:
        return self.model.places[pid].name

    def view(self) -> list[str]:
        """Locals for the argument places (their head tokens are rule R2 b's)."""
        return [f"    qa{k} = Q[{pid}]" for k, pid in enumerate(self.t.arg_places)]


# R2's steps as Python, one emitter per step kind (see firing_code.conditions).
def _tokens(w: _Writer, step) -> list[str]:                       # (b)
    w.present[step.place] = step.need
    arg = step.index
    return [f"    if len(qa{arg}) < {step.need}: return None", f"    h{arg} = qa{arg}[0]"]


def _at_least_zero(w: _Writer, step) -> list[str]:
    v = step.local
    return [f"    {v} = {w.expr(step.expr)}",
            f"    if {v} < 0: raise FiringError(below_zero({step.what!r}, {v}))"]


def _weight_step(w: _Writer, step) -> list[str]:                 # (d)
    c = _const(step.expr)
    if c is not None:                       # (b) may already have made sure
        return [f"    if len(Q[{step.place}]) < {c}: return None"] \
            if w.present.get(step.place, 0) < c else []
    return _at_least_zero(w, step) + [f"    if len(Q[{step.place}]) < {step.local}: return None"]


def _time(w: _Writer, step) -> list[str]:                         # R3's delay, interval
    c = _const(step.expr)
    return [f"    {step.local} = {c}"] if c is not None else _at_least_zero(w, step)


_EMIT = {
    # (a) is the engine's: sim.py starts a transition only below its concurrency
    "concurrency": lambda w, step: [],
    "tokens": _tokens,
    "guard": lambda w, step: [f"    if not {w.expr(step.expr)}: return None"],
    "weight": _weight_step,
    "read": lambda w, step: _at_least_zero(w, step) + [
        f"    if len(Q[{step.place}]) < {step.local}: return None"],
    "inhibit": lambda w, step: _at_least_zero(w, step) + [
        f"    if len(Q[{step.place}]) + L[{step.place}] >= {step.local}: return None"],
    "delay": _time,
    "interval": _time,
    # (g): fire says False (held back until NS[id]); probe asks with the interval aside
    "earliest": lambda w, step: [] if w.probe else [
        f"    if now < NS[{w.t.id}]: return False"],
}


def _conditions(w: _Writer, probe: bool) -> list[str]:
    """Rule R2 and the delay and interval: ``return None`` when it cannot start."""
    w.probe = probe
    return w.view() + conditions(w, _EMIT)


def _probe_source(w: _Writer) -> list[str]:
    """``probe(now)``: can it start, the interval aside? (True or None; changes nothing)."""
    return ["def probe(now):"] + _conditions(w, probe=True) + ["    return True"]


def _single_inputs(t: Transition) -> set[int]:
    """Weight-1 inputs whose every copy is of exactly that one token: the firing carries
    the token itself rather than a list (the common case, and measurably faster)."""
    arcs = [a for a in t.outputs + t.routes if a.copy_from is not None]
    return {a.copy_from for a in arcs if _const(t.weights[a.copy_from]) == 1} - \
        {a.copy_from for a in arcs if _const(a.count) != 1}


def _single_copy(t: Transition, arc) -> bool:
    return arc.copy_from is not None and arc.copy_from in _single_inputs(t)


def _arc_start(w: _Writer, arc, k: str, indent: str) -> tuple[list[str], list[str]]:
    """Lines before the inputs are locked (evaluate on the start state) and after
    (build the tokens, which may copy locked ones)."""
    t = w.t
    name = w.name(arc.place)
    c = _const(arc.count)
    n = str(c) if c is not None else f"n{k}"
    before = [] if c is not None else [
        f"{indent}n{k} = {w.expr(arc.count)}",
        f"{indent}if n{k} < 0: raise FiringError(below_zero({f'count into {name!r}'!r}, n{k}))"]
    if arc.copy_from is not None:
        src = w.name(t.inputs[arc.copy_from])
        taken = weight_term(t, arc.copy_from)
        if not (c is not None and taken.isdigit() and c <= int(taken)):
            before.append(f"{indent}if {n} > {taken}: raise FiringError("
                          f"too_few_to_copy({n}, {name!r}, {taken}, {src!r}))")
        after = [f"{indent}o{k} = t{arc.copy_from}" if _single_copy(t, arc) else
                 f"{indent}o{k} = t{arc.copy_from}[:{n}]"]
    elif arc.props is not None:
        before.append(f"{indent}v{k} = ({''.join(w.expr(e) + ', ' for e in arc.props)})")
        after = [f"{indent}o{k} = [v{k}] * {n}"]
    else:
        after = [f"{indent}o{k} = [()] * {n}"]
    return before, after


def _fire_source(w: _Writer, tid: int) -> list[str]:
    """``fire(now)``: R2, then R3 — None (cannot start), False (held back by its interval
    until NS[tid]) or the firing ``(delay, weights, carried outputs, route)``."""
    t = w.t
    lines = ["def fire(now):"] + _conditions(w, probe=False)
    after, outs = [], []
    for k, arc in enumerate(t.outputs):
        if _carried(arc):
            b, a = _arc_start(w, arc, str(k), "    ")
            lines += b
            after += a
            outs.append(f"o{k}")
    route = "None"
    if t.routes:
        for r, arc in enumerate(t.routes):
            lines.append(f"    {'if' if r == 0 else 'elif'} {w.expr(arc.condition)}:")
            b, _ = _arc_start(w, arc, "_r", "        ")
            lines += b + [f"        rp = {arc.place}", f"        rk = {r}"]
        lines += ["    else:", "        raise FiringError(NO_ROUTE)"]
        for r, arc in enumerate(t.routes):
            _, a = _arc_start(w, arc, "_r", "        ")
            after += [f"    {'if' if r == 0 else 'elif'} rk == {r}:"] + a
        route = "(rp, o_r)"
    copied = {arc.copy_from for arc in t.outputs + t.routes if arc.copy_from is not None}
    single = _single_inputs(t)
    for k, pid in enumerate(t.inputs):
        n = weight_term(t, k)
        if k in single and k in copied:
            lines.append(f"    t{k} = Q[{pid}].popleft()")
        elif k in copied:
            lines.append(f"    q = Q[{pid}]; t{k} = [q.popleft() for _ in range({n})]")
        elif n == "1":
            lines.append(f"    Q[{pid}].popleft()")
        else:
            lines.append(f"    q = Q[{pid}]\n    for _ in range({n}): q.popleft()")
        lines.append(f"    L[{pid}] += {n}")
    lines += after + [f"    NS[{tid}] = now + ii"]
    weights = "".join(weight_term(t, k) + ", " for k in range(len(t.inputs)))
    lines.append(f"    return (d, ({weights}), ({''.join(o + ', ' for o in outs)}), {route})")
    return lines


def _push(pid: int, tokens: str | None, fixed: int | None, done: int, indent: str,
          single: bool = False) -> list[str]:
    if single:
        lines = [f"{indent}q = Q[{pid}]; q.append({tokens})"]
        done_lines = [f"{indent}D[0] = now; D[1] += 1"]
    elif tokens is None:
        if not fixed:
            return []
        add = "q.append(())" if fixed == 1 else f"q.extend([()] * {fixed})"
        lines = [f"{indent}q = Q[{pid}]; {add}"]
        done_lines = [f"{indent}D[0] = now; D[1] += {fixed}"]
    else:
        lines = [f"{indent}q = Q[{pid}]; q.extend({tokens})"]
        done_lines = [f"{indent}if {tokens}: D[0] = now; D[1] += len({tokens})"]
    lines.append(f"{indent}o = len(q) + L[{pid}]\n{indent}if o > M[{pid}]: M[{pid}] = o")
    return lines + (done_lines if pid == done else [])


def _commit_source(w: _Writer) -> list[str]:
    t, done = w.t, w.model.done
    lines = ["def commit(f, now):"]
    for k, (pid, e) in enumerate(zip(t.inputs, t.weights)):
        c = _const(e)
        lines.append(f"    L[{pid}] -= {c if c is not None else f'f[1][{k}]'}")
    carried = 0
    for arc in t.outputs:
        if _single_copy(t, arc):
            lines += _push(arc.place, f"f[2][{carried}]", None, done, "    ", single=True)
            carried += 1
        elif _carried(arc):
            lines += _push(arc.place, f"f[2][{carried}]", None, done, "    ")
            carried += 1
        else:
            lines += _push(arc.place, None, _const(arc.count), done, "    ")
    if t.routes:
        if any(_single_copy(t, a) for a in t.routes):
            lines += ["    rp, toks = f[3]", "    if type(toks) is not list: toks = [toks]"]
        else:
            lines.append("    rp, toks = f[3]")
        lines += ["    q = Q[rp]; q.extend(toks)",
                  "    o = len(q) + L[rp]", "    if o > M[rp]: M[rp] = o",
                  f"    if rp == {done} and toks: D[0] = now; D[1] += len(toks)",
                  "    return rp"]
    else:
        lines.append("    return None")
    return lines


def compile_transitions(model: Model, queues, locked, max_occ, done_box, next_start):
    """(probe, fire, commit) for every transition, bound to one run's state lists."""
    out = []
    for t in model.transitions:
        code = t.compiled.get("python")
        if code is None:                    # generated once per model, bound per run
            code = t.compiled["python"] = compile(source_of(model, t),
                                                  f"<lpn transition {t.name}>", "exec")
        namespace = {"Q": queues, "L": locked, "M": max_occ, "D": done_box, "NS": next_start,
                     "FiringError": FiringError, "below_zero": below_zero,
                     "too_few_to_copy": too_few_to_copy, "NO_ROUTE": NO_ROUTE,
                     "__builtins__": {"len": len, "range": range, "type": type, "list": list},
                     **PYTHON_HELPERS}
        exec(code, namespace)
        out.append((namespace["probe"], namespace["fire"], namespace["commit"]))
    return out


def source_of(model: Model, t: Transition) -> str:
    """The generated source of one transition (for reading and debugging)."""
    w = _Writer(model, t)
    return "\n".join(_probe_source(w) + [""] + _fire_source(w, t.id) + [""] +
                     _commit_source(w))
