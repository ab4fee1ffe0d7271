"""Per-transition Python code for the simulator's hot path.

Each transition gets two generated functions, written from its expression trees:

* ``enable(now)`` reads the head tokens, checks guard and weights, locks (pops) the tokens
  and returns ``(delay, heads, taken, weights)``, or None when it cannot fire;
* ``commit(firing, now)`` pushes the output tokens, keeps the occupancy high-water marks
  and the done-place count, and returns the place a route chose (or None).

Unrolling a transition's arity, inlining constant weights and evaluating expressions as
straight-line Python roughly doubles the simulator's speed over a generic interpreter
loop. The source is generated from our own trees, never from user text.
"""

from __future__ import annotations

from .expr import to_python
from .net import Model, Transition


class FiringError(Exception):
    """Raised by generated code; the simulator turns it into a SimulationError."""


def _const(e):
    return e.args[0] if e.op == "const" else None


def _enable_source(t: Transition) -> list[str]:
    lines = ["def enable(now):"]
    nu = t.user_inputs
    for k, pid in enumerate(t.inputs):
        lines.append(f"    q{k} = Q[{pid}]")
    for k in range(nu):
        if k in t.needs_head:
            lines += [f"    if not q{k}: return None", f"    a{k} = q{k}[0]"]
        else:
            lines.append(f"    a{k} = q{k}[0] if q{k} else None")
    if t.guard is not None:
        lines.append(f"    if not {to_python(t.guard)}: return None")
    for k, w in enumerate(t.weights):
        c = _const(w)
        if c is not None:
            lines.append(f"    if len(q{k}) < {c}: return None")
        else:
            lines += [f"    w{k} = {to_python(w)}",
                      f"    if w{k} < 0: raise FiringError('weight on input {k} evaluated to ' "
                      f"+ str(w{k}))",
                      f"    if len(q{k}) < w{k}: return None"]
    c = _const(t.delay)
    if c is not None:
        lines.append(f"    d = {c}")
    else:
        lines += [f"    d = {to_python(t.delay)}",
                  "    if d < 0: raise FiringError('delay evaluated to ' + str(d))"]
    taken, weights = [], []
    for k, (pid, w) in enumerate(zip(t.inputs, t.weights)):
        c = _const(w)
        if c == 1:
            lines.append(f"    t{k} = [q{k}.popleft()]")
            lines.append(f"    L[{pid}] += 1")
            weights.append("1")
        else:
            n = str(c) if c is not None else f"w{k}"
            lines.append(f"    t{k} = [q{k}.popleft() for _ in range({n})]")
            lines.append(f"    L[{pid}] += {n}")
            weights.append(n)
        taken.append(f"t{k}")
    heads = "".join(f"a{k}, " for k in range(nu))
    lines.append(f"    return (d, ({heads}), ({', '.join(taken)},), ({', '.join(weights)},))")
    return lines


def _emit_lines(arc, done_pid: int, indent: str) -> list[str]:
    pid = arc.place
    c = _const(arc.count)
    n = str(c) if c is not None else "n"
    lines = [] if c is not None else [f"{indent}n = {to_python(arc.count)}"]
    lines.append(f"{indent}q = Q[{pid}]")
    if arc.copy_from is not None:
        src = f"taken[{arc.copy_from}]"
        lines += [f"{indent}src = {src}",
                  f"{indent}if {n} > len(src): raise FiringError('copies ' + str({n}) + "
                  f"' tokens but consumed only ' + str(len(src)))",
                  f"{indent}q.extend(src if {n} == len(src) else src[:{n}])"]
    else:
        token = "()" if arc.props is None else \
            "(" + "".join(f"{to_python(e)}, " for e in arc.props) + ")"
        lines.append(f"{indent}q.append({token})" if c == 1 else
                     f"{indent}q.extend([{token}] * {n})")
    lines += [f"{indent}o = len(q) + L[{pid}]",
              f"{indent}if o > M[{pid}]: M[{pid}] = o"]
    if pid == done_pid:
        lines += [f"{indent}D[0] = now", f"{indent}D[1] += {n}"]
    return lines


def _commit_source(t: Transition, done_pid: int) -> list[str]:
    lines = ["def commit(firing, now):", "    heads, taken, weights = firing[1], firing[2], firing[3]"]
    for k in range(t.user_inputs):
        lines.append(f"    a{k} = heads[{k}]")
    for k, pid in enumerate(t.inputs):
        lines.append(f"    L[{pid}] -= weights[{k}]")
    for arc in t.outputs:
        lines += _emit_lines(arc, done_pid, "    ")
    if t.routes:
        for i, arc in enumerate(t.routes):
            lines.append(f"    {'if' if i == 0 else 'elif'} {to_python(arc.condition)}:")
            lines += _emit_lines(arc, done_pid, "        ")
            lines.append(f"        return {arc.place}")
        lines.append("    return -1")
    else:
        lines.append("    return None")
    return lines


def compile_transitions(model: Model, queues, locked, max_occ, done_box):
    """(enable, commit) functions for every transition, bound to the run's state lists."""
    out = []
    for t in model.transitions:
        code = t.compiled.get("sim_code")
        if code is None:                    # generated once per model, bound per run
            source = "\n".join(_enable_source(t) + [""] + _commit_source(t, model.done))
            code = t.compiled["sim_code"] = compile(source, f"<lpn transition {t.name}>",
                                                    "exec")
        namespace = {"Q": queues, "L": locked, "M": max_occ, "D": done_box,
                     "FiringError": FiringError, "__builtins__": {
                         "len": len, "range": range, "str": str, "min": min, "max": max}}
        exec(code, namespace)
        out.append((namespace["enable"], namespace["commit"]))
    return out
