"""The C source of a net's compiled engine (OSDI'24 §4.3, lpn2sim, re-modelled).

:func:`generate` writes one fire and one commit function per transition from the traced
expressions (through the ``c`` column of :data:`~.expr.OPERATORS`) and the net's tables
(token strides, concurrency, the dirty lists of :mod:`.semantics`) into ``runtime.c``; the
source depends on the model's structure only, so :mod:`.compiled` builds it once per net
and passes every input as arrays. A named parameter (:meth:`.net.Net.parameter`) is read
from the run's ``C->param`` rather than written as a literal, so its value is passed per
run too. Values are int64: a constant outside that range is refused here, an operation
that could leave it is checked in C (the operators of ``_CHECKED``).
"""

from __future__ import annotations

import functools
import itertools
import sys
from importlib import resources

from ..errors import ModelError
from .expr import OPERATORS, Expr, constant as _const
from .firing_code import carried as _carried, conditions, weight_term
from .net import Model, Transition
from .semantics import dirty_lists, start_steps

INT64_MIN, INT64_MAX = -2**63, 2**63 - 1

# tokens.c calls CPython's C API; another interpreter converts the tokens in Python.
CPYTHON = sys.implementation.name == "cpython"

# Operators whose C code checks its int64 result (or a zero divisor).
_CHECKED = {"add", "sub", "mul", "floordiv", "mod", "div", "neg", "abs"}


def _c_int(value: int) -> str:
    if not INT64_MIN <= value <= INT64_MAX:
        raise ModelError(f"constant = {value} is invalid for the compiled backend: values "
                         f"are int64, [-2**63, 2**63 - 1]; use backend='python'")
    return "INT64_MIN" if value == INT64_MIN else f"INT64_C({value})"


def _can_fail(e: Expr) -> bool:
    return e.op not in ("const", "prop", "count") and (
        e.op in _CHECKED or any(_can_fail(a) for a in e.args))


class _Writer:
    """C for one transition's expressions and rules (the shapes of :mod:`.codegen`)."""

    def __init__(self, model: Model, t: Transition, messages: list):
        self.model, self.t, self.messages = model, t, messages
        self.temps = 0
        self.params = {p.name: k for k, p in enumerate(model.parameters)}

    def parameter(self, e: Expr) -> str | None:
        """``C->param[k]`` for a named parameter's constant (None for another node): its
        value is passed per run, so every parameter vector of a net shares one library."""
        if e.op != "const" or len(e.args) < 2 or isinstance(e.args[0], bool) or \
                e.args[1] not in self.params:
            return None
        _c_int(e.args[0])                       # int64, as a literal would be
        return f"C->param[{self.params[e.args[1]]}]"

    def stride(self, pid: int) -> int:
        return len(self.model.places[pid].token_type.properties)

    def name(self, pid: int) -> str:
        return self.model.places[pid].name

    def message(self, kind: str, *args) -> int:
        """Index of a message the Python side writes when this check fails."""
        self.messages.append((kind, self.t.id, *args))
        return len(self.messages) - 1

    def expr(self, e: Expr) -> str:
        named = self.parameter(e)
        if named is not None:
            return named
        if e.op == "const":
            v = e.args[0]
            return ("1" if v else "0") if isinstance(v, bool) else _c_int(v)
        if e.op == "prop":
            arg, _, index, tok = e.args
            pid = self.t.arg_places[arg]
            return f"TOK({pid}, {tok}, {index}, {self.stride(pid)})"
        if e.op == "count":
            pid = self.model.place_id(e.args[0])
            return f"(C->P[{pid}].len + C->L[{pid}])"
        spec = OPERATORS[e.op]
        parts = [self.expr(a) for a in e.args]
        if not spec.lazy and sum(map(_can_fail, e.args)) > 1:
            # Python evaluates operands left to right and stops at the first error; C
            # leaves the order open, so bind them in order (a GNU statement expression).
            names = []
            for _ in parts:
                self.temps += 1
                names.append(f"_x{self.temps}")
            binds = "".join(f"int64_t {n} = {p}; " for n, p in zip(names, parts))
            return f"({{ {binds}{spec.c(*names)}; }})"
        return spec.c(*parts)

    def value(self, var: str, e: Expr, what: str | None, indent: str = "    ") -> list[str]:
        """``var`` = e, stopping on an evaluation error, and below 0 when ``what`` is set."""
        if e.op == "const" and not isinstance(e.args[0], bool):
            # A constant delay was checked (>= 0) when the model was built.
            return [f"{indent}const int64_t {var} = {self.parameter(e) or _c_int(e.args[0])};"]
        lines = [f"{indent}int64_t {var} = {self.expr(e)};",
                 f"{indent}if (E->code) return F_FAIL;"]
        if what is not None:
            lines.append(f"{indent}if ({var} < 0) return below(C, "
                         f"{self.message('below_zero', what)}, {var});")
        return lines


def _weight(t: Transition, k: int) -> str:
    return weight_term(t, k, _c_int)


def _dynamic_weights(t: Transition) -> list[int]:
    """Inputs whose weight is computed per firing: the firing record keeps them first."""
    return [k for k in range(len(t.inputs)) if _const(t.weights[k]) is None]


# R2's steps as C, one emitter per step kind (see firing_code.conditions): F_NONE when
# the transition cannot start.
def _tokens(w: _Writer, step) -> list[str]:                       # (b)
    w.present[step.place] = step.need
    return [f"    if (C->P[{step.place}].len < {step.need}) return F_NONE;"]


def _weight_step(w: _Writer, step) -> list[str]:                 # (d)
    c, pid = _const(step.expr), step.place
    if c is not None:                       # (b) may already have made sure
        return [f"    if (C->P[{pid}].len < {c}) return F_NONE;"] \
            if w.present.get(pid, 0) < c else []
    return w.value(step.local, step.expr, step.what) + [
        f"    if (C->P[{pid}].len < {step.local}) return F_NONE;"]


def _earliest(w: _Writer, step) -> list[str]:                     # (g)
    """F_HELD when only the interval holds it back; a probe asks with the interval aside,
    so it answers here when (g) is the rule's last step, else after the walk (_fire)."""
    held = f"    if (now < C->NS[{w.t.id}]) return F_HELD;"
    if step is start_steps(w.model, w.t)[-1]:
        return ["    if (probe) return F_FIRED;", held]
    return [held.replace("(now", "(!probe && now")]


_EMIT = {
    # (a) is the runtime's: runtime.c fires a transition only below CONC[t]
    "concurrency": lambda w, step: [],
    "tokens": _tokens,
    "guard": lambda w, step: w.value(step.local, step.expr, None) + [
        f"    if (!{step.local}) return F_NONE;"],
    "weight": _weight_step,
    "read": lambda w, step: w.value(step.local, step.expr, step.what) + [
        f"    if (C->P[{step.place}].len < {step.local}) return F_NONE;"],
    "inhibit": lambda w, step: w.value(step.local, step.expr, step.what) + [
        f"    if (C->P[{step.place}].len + C->L[{step.place}] >= {step.local}) return F_NONE;"],
    "delay": lambda w, step: w.value(step.local, step.expr, step.what),
    "interval": lambda w, step: w.value(step.local, step.expr, step.what),
    "earliest": _earliest,
}


def _arc_before(w: _Writer, arc, k: str, indent: str) -> list[str]:
    """R3 on the start state: the count (checked) and the properties of one output arc."""
    t = w.t
    name = w.name(arc.place)
    lines = [f"{indent}n{k} = {_c_int(_const(arc.count))};"] if _const(arc.count) is not None \
        else [f"{indent}n{k} = {w.expr(arc.count)};", f"{indent}if (E->code) return F_FAIL;",
              f"{indent}if (n{k} < 0) return below(C, "
              f"{w.message('below_zero', f'count into {name!r}')}, n{k});"]
    if arc.copy_from is not None:
        taken = _weight(t, arc.copy_from)
        src = w.name(t.inputs[arc.copy_from])
        lines.append(f"{indent}if (n{k} > {taken}) return too_few(C, "
                     f"{w.message('too_few', name, src)}, n{k}, {taken});")
    elif arc.props is not None:
        for j, e in enumerate(arc.props):
            lines += [f"{indent}v{k}_{j} = {w.expr(e)};", f"{indent}if (E->code) return F_FAIL;"]
    return lines


def _payload(w: _Writer, arc, k: str) -> str:
    """Values the firing record carries for an arc after its count."""
    stride = w.stride(arc.place)
    return f"n{k} * {stride}" if arc.copy_from is not None else \
        str(stride if arc.props is not None else 0)


def _arc_after(w: _Writer, arc, k: str, indent: str) -> list[str]:
    """Write an arc's count and tokens into the firing record R at pos."""
    stride = w.stride(arc.place)
    lines = [f"{indent}R[pos++] = n{k};"] if k == "_r" or _const(arc.count) is None else []
    if arc.copy_from is not None and stride:
        pid = w.t.inputs[arc.copy_from]
        lines += [f"{indent}for (int64_t i = 0; i < n{k}; i++, pos += {stride})",
                  f"{indent}    memcpy(R + pos, C->P[{pid}].buf + ((b{arc.copy_from} + i) & "
                  f"(C->P[{pid}].cap - 1)) * {stride}, {stride} * sizeof(int64_t));"]
    elif arc.props is not None:
        lines += [f"{indent}R[pos++] = v{k}_{j};" for j in range(stride)]
    return lines


def _has_record(t: Transition) -> bool:
    """Whether a firing of ``t`` carries data to its commit (weights computed at start,
    tokens built at start, a route); one that does not needs no record."""
    return bool(_dynamic_weights(t) or t.routes or any(map(_carried, t.outputs)))


def _fire(w: _Writer) -> list[str]:
    t = w.t
    lines = [f"static inline int fire_{t.id}(Ctx *C, int64_t now, int probe) {{",
             "    Err *E = &C->err; (void)E;"]
    lines += conditions(w, _EMIT)
    if start_steps(w.model, t)[-1].kind != "earliest":
        lines.append("    if (probe) return F_FIRED;")
    dynamic = _dynamic_weights(t)
    size = [str(len(dynamic))]
    carried = [(k, arc) for k, arc in enumerate(t.outputs) if _carried(arc)]
    for k, arc in carried:
        stride = w.stride(arc.place)
        lines.append(f"    int64_t n{k};" + "".join(f" int64_t v{k}_{j};" for j in range(
            stride if arc.props is not None else 0)))
        lines += _arc_before(w, arc, str(k), "    ")
        size.append(f"1 + {_payload(w, arc, str(k))}")   # (1: room for a count)
    if t.routes:
        most = max(w.stride(a.place) for a in t.routes)
        lines.append("    int64_t rk = -1, rsize = 0, n_r = 0;" +
                     "".join(f" int64_t v_r_{j} = 0;" for j in range(most)))
        for r, arc in enumerate(t.routes):
            lines.append("    if (rk < 0) {")
            lines += w.value("c", arc.condition, None, "        ")
            lines.append("        if (c) {")
            lines += _arc_before(w, arc, "_r", "            ")
            lines += [f"            rk = {r}; rsize = 2 + {_payload(w, arc, '_r')};",
                      "        }", "    }"]
        lines.append(f"    if (rk < 0) return no_route(C, {w.message('no_route')});")
        size.append("rsize")
    lines += ["    int64_t ns;",
              "    if (__builtin_add_overflow(now, ii, &ns)) "
              "{ fail_op(E, OP_TIME, now, ii); return F_FAIL; }"]
    if _has_record(t):
        lines += ["    int64_t slot, pos = 0;",
                  f"    int64_t *R = rec_get(C, {' + '.join(size)}, &slot);",
                  "    if (!R) return F_FAIL;"]
    else:
        lines.append("    const int64_t slot = NO_REC;")
    copied = {a.copy_from for a in t.outputs + t.routes if a.copy_from is not None}
    for k, pid in enumerate(t.inputs):
        if k in dynamic:
            lines.append(f"    R[pos++] = w{k};")
        if k in copied:
            lines.append(f"    int64_t b{k} = C->P[{pid}].head;")
        lines.append(f"    pop(C, {pid}, {_weight(t, k)});")
    for k, arc in carried:
        lines += _arc_after(w, arc, str(k), "    ")
    if t.routes:
        lines.append("    R[pos++] = rk;")
        for r, arc in enumerate(t.routes):
            lines.append(f"    {'if' if r == 0 else 'else if'} (rk == {r}) {{")
            lines += _arc_after(w, arc, "_r", "        ") + ["    }"]
    lines += [f"    C->NS[{t.id}] = ns;", "    C->fire_delay = d; C->fire_slot = slot;",
              "    return F_FIRED;", "}"]
    return lines


def _push(w: _Writer, arc, n: str, indent: str) -> list[str]:
    """R4 for one arc: append n tokens (from R at pos) to its place."""
    pid, stride = arc.place, w.stride(arc.place)
    lines = [f"{indent}if (!place_reserve(C, {pid}, {stride}, {n})) return -2;"]
    if stride and arc.copy_from is not None:
        lines += [f"{indent}for (int64_t i = 0; i < {n}; i++, pos += {stride})",
                  f"{indent}    memcpy(SLOT({pid}, i, {stride}), R + pos, "
                  f"{stride} * sizeof(int64_t));"]
    elif stride:
        lines += [f"{indent}for (int64_t i = 0; i < {n}; i++)",
                  f"{indent}    memcpy(SLOT({pid}, i, {stride}), R + pos, "
                  f"{stride} * sizeof(int64_t));",
                  f"{indent}pos += {stride};"]
    lines += [f"{indent}C->P[{pid}].len += {n};", f"{indent}occupancy(C, {pid});"]
    if pid == w.model.done:
        lines.append(f"{indent}if ({n}) {{ C->done_time = now; C->done_count += {n}; }}")
    return lines


def _commit(w: _Writer) -> list[str]:
    t = w.t
    dynamic = _dynamic_weights(t)
    record = _has_record(t)
    lines = [f"static inline int64_t commit_{t.id}(Ctx *C, int64_t slot, int64_t now) {{"]
    lines += [f"    int64_t *R = C->recs[slot].d, pos = {len(dynamic)};",
              "    (void)R; (void)pos; (void)now;"] if record else \
        ["    (void)slot; (void)now;"]
    for k, pid in enumerate(t.inputs):
        c = _const(t.weights[k])
        taken = _c_int(c) if c is not None else f"R[{dynamic.index(k)}]"
        lines.append(f"    C->L[{pid}] -= {taken};")
    for k, arc in enumerate(t.outputs):
        c = _const(arc.count)
        if _carried(arc):
            lines += ["    {", f"        int64_t n = {'R[pos++]' if c is None else _c_int(c)};"]
            lines += _push(w, arc, "n", "        ") + ["    }"]
        elif _const(arc.count):
            lines += _push(w, arc, _c_int(_const(arc.count)), "    ")
    chosen = "-1"
    if t.routes:
        lines += ["    int64_t chosen = -1, rk = R[pos++], n = R[pos++];"]
        for r, arc in enumerate(t.routes):
            lines.append(f"    {'if' if r == 0 else 'else if'} (rk == {r}) {{")
            lines += _push(w, arc, "n", "        ")
            lines += [f"        chosen = {arc.place};", "    }"]
        chosen = "chosen"
    lines += ["    rec_put(C, slot);"] if record else []
    lines += [f"    return {chosen};", "}"]
    return lines


def _bit_lists(name: str, lists, n_t: int) -> list[str]:
    """Transition-id lists as the runtime's dirty set marks them: for a net of one word
    (1 to 64 transitions) one mask per list; else per list (word, bits) pairs in
    ascending word order, in CSR form (NAME_AT[k] to NAME_AT[k + 1])."""
    masks = []
    for items in lists:
        by_word: dict[int, int] = {}
        for t in items:
            by_word[t >> 6] = by_word.get(t >> 6, 0) | 1 << (t & 63)
        masks.append(sorted(by_word.items()))
    hexes = lambda bits: ", ".join(f"UINT64_C({b:#x})" for b in bits) or "0"   # noqa: E731
    if (n_t + 63) // 64 == 1:
        return [f"static const uint64_t {name}[] = "
                f"{{{hexes(m[0][1] if m else 0 for m in masks)}}};"]
    starts = list(itertools.accumulate(map(len, masks), initial=0))
    pairs = [pair for m in masks for pair in m]
    return [f"static const int32_t {name}_AT[] = {{{', '.join(map(str, starts))}}};",
            f"static const int32_t {name}_W[] = {{{', '.join(str(w) for w, _ in pairs) or '0'}}};",
            f"static const uint64_t {name}[] = {{{hexes(b for _, b in pairs)}}};"]


def generate(model: Model, with_tokens: bool | None = None) -> tuple[str, tuple]:
    """The C source of ``model``'s engine and the messages its error codes index.

    ``with_tokens`` appends ``tokens.c`` (the marking's tuples read through CPython's C
    API); None means: when this interpreter is CPython."""
    messages: list = []
    start_dirty, commit_dirty = dirty_lists(model)
    n_t = len(model.transitions)
    strides = [len(p.token_type.properties) for p in model.places]
    conc = [INT64_MAX if t.concurrency is None else t.concurrency for t in model.transitions]
    tables = [f"/* net {model.name!r}: {len(model.places)} places, {n_t} transitions */",
              f"#define N_P {len(model.places)}", f"#define N_T {n_t}",
              f"#define DONE {model.done}", f"#define N_PARAM {len(model.parameters)}",
              f"static const int64_t STRIDE[] = {{{', '.join(map(str, strides)) or '0'}}};",
              f"static const int64_t CONC[] = {{{', '.join(map(_c_int, conc)) or '0'}}};"]
    tables += _bit_lists("START_DIRTY", start_dirty, n_t) + \
        _bit_lists("COMMIT_DIRTY", commit_dirty, n_t) + \
        _bit_lists("WATCHERS", model.watchers(), n_t)
    net = []
    for t in model.transitions:
        w = _Writer(model, t, messages)
        net += [""] + _fire(w) + [""] + _commit(w)
    # A switch rather than a table of pointers lets the compiler inline each transition.
    net += ["", "static inline int fire_any(Ctx *C, int64_t t, int64_t now, int probe) {",
            "    switch (t) {"]
    net += [f"    case {i}: return fire_{i}(C, now, probe);" for i in range(n_t)]
    net += ["    default: return F_NONE;", "    }", "}",
            "static inline int64_t commit_any(Ctx *C, int64_t t, int64_t slot, int64_t now) {",
            "    switch (t) {"]
    net += [f"    case {i}: return commit_{i}(C, slot, now);" for i in range(n_t)]
    net += ["    default: return -1;", "    }", "}"]
    runtime = _packaged("runtime.c")
    for marker, lines in (("/* @TABLES@", tables), ("/* @NET@", net)):
        head, _, tail = runtime.partition(marker)
        runtime = head + "\n".join(lines) + "\n" + tail.split("*/", 1)[1]
    if CPYTHON if with_tokens is None else with_tokens:
        runtime += _packaged("tokens.c")
    return runtime, tuple(messages)


@functools.lru_cache(maxsize=None)
def _packaged(name: str) -> str:
    # read once per process: a calibration generates a net's source per parameter vector
    return resources.files("accelperf.lpn").joinpath(name).read_text("utf-8")
