"""The compiled LPN engine: a net translated to C once, inputs passed as arrays.

lpn2sim (OSDI'24 §4.3) turns a net into C++ and compiles it; the authors' toolchain also
bakes the input into the program, so every new input costs a compile. Here a net is
compiled once — the generated source depends on the model only, and the shared library is
cached under ``~/.cache/accelperf/lpn/`` by a hash of that source — and every run passes
the initial marking (token counts and int64 property values) as arrays, filled from the
marking's tuples by C code in the same library (``tokens.c``, through CPython's C API),
or copied as they are from a place whose Ψ gave a NumPy array (:class:`~.net.TokenArray`).

The engine is the Python engine of :mod:`.sim` written in C (``runtime.c`` plus one fire
and one commit function per transition generated here from the traced expressions, through
the ``c`` column of the operator table), so it follows the rules of :mod:`.semantics`
(R1–R8) with the same tie order, limits, trace, statistics and error texts; the tests hold
it to the reference trace for trace.

**Range.** Token properties, expression values and times are int64 in C, where Python's
integers are unbounded: an input value outside [-2**63, 2**63 - 1] is refused before the
run, and an operation whose result would leave that range stops the run with an error
naming the transition, the operation and its operands — never a silently wrapped number.

**Ctrl-C.** A run started on the interpreter's main thread (while Python's own SIGINT
handler is in place) hands SIGINT to the C loop, which looks at it every 4096 commits and
stops with :class:`~.outcome.Interrupted` and the usual report of where it was, as the
Python engine does.
"""

from __future__ import annotations

import ctypes
import hashlib
import itertools
import operator
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from array import array
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path

from ..errors import ModelError
from .expr import OPERATORS, EvaluationError, Expr
from .net import Marking, Model, TokenArray, Transition
from .outcome import (Interrupted, LimitError, SimulationError, build_result, report_marking,
                      verdict)
from .semantics import (NO_ROUTE, Firing, FiringError, below_zero, dirty_lists,
                        firing_failed, in_cycles, stalled, stuck_places, too_few_to_copy)

INT64_MIN, INT64_MAX = -2**63, 2**63 - 1
# The engine calls the interpreter's C API (tokens.c), resolved when it is loaded; macOS
# links a shared library with unresolved symbols only when told to.
CFLAGS = ("-O2", "-shared", "-fPIC") + (("-undefined", "dynamic_lookup")
                                        if sys.platform == "darwin" else ())

# tokens.c calls CPython's C API; another interpreter converts the tokens in Python.
_CPYTHON = sys.implementation.name == "cpython"

# Codes shared with runtime.c.
_OP_NAMES = ("add", "sub", "mul", "floordiv", "mod", "div", "neg", "abs", "time")
_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//", "mod": "%", "div": "/"}
(E_OP, E_BELOW_ZERO, E_TOO_FEW, E_NO_ROUTE) = (1, 2, 3, 4)
(R_DONE, R_MAX_TIME, R_MAX_COMMITS, R_STALLED, R_ERROR, R_NOMEM, R_INTERRUPTED) = range(7)
_CHECKED = {"add", "sub", "mul", "floordiv", "mod", "div", "neg", "abs"}


class CompilerError(ModelError):
    """No C compiler, or the generated source did not compile (the message says which)."""


# ---------------------------------------------------------------------- code generation
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

    def stride(self, pid: int) -> int:
        return len(self.model.places[pid].token_type.properties)

    def name(self, pid: int) -> str:
        return self.model.places[pid].name

    def message(self, kind: str, *args) -> int:
        """Index of a message the Python side writes when this check fails."""
        self.messages.append((kind, self.t.id, *args))
        return len(self.messages) - 1

    def expr(self, e: Expr) -> str:
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
            return [f"{indent}const int64_t {var} = {_c_int(e.args[0])};"]
        lines = [f"{indent}int64_t {var} = {self.expr(e)};",
                 f"{indent}if (E->code) return F_FAIL;"]
        if what is not None:
            lines.append(f"{indent}if ({var} < 0) return below(C, "
                         f"{self.message('below_zero', what)}, {var});")
        return lines


def _const(e):
    return e.args[0] if e.op == "const" else None


def _carried(arc) -> bool:
    return not (arc.props is None and arc.copy_from is None and _const(arc.count) is not None)


def _weight(t: Transition, k: int) -> str:
    c = _const(t.weights[k])
    return _c_int(c) if c is not None else f"w{k}"


def _dynamic_weights(t: Transition) -> list[int]:
    """Inputs whose weight is computed per firing: the firing record keeps them first."""
    return [k for k in range(len(t.inputs)) if _const(t.weights[k]) is None]


def _conditions(w: _Writer) -> list[str]:
    """R2 (b)-(f), the delay and the interval: F_NONE when it cannot start."""
    t = w.t
    lines = [f"    if (C->P[{t.arg_places[arg]}].len < {k}) return F_NONE;"
             for arg, k in t.needs]
    present = {t.arg_places[arg]: k for arg, k in t.needs}
    if t.guard is not None:
        lines += w.value("g", t.guard, None) + ["    if (!g) return F_NONE;"]
    for k, (pid, e) in enumerate(zip(t.inputs, t.weights)):
        c = _const(e)
        if c is not None:
            if present.get(pid, 0) < c:
                lines.append(f"    if (C->P[{pid}].len < {c}) return F_NONE;")
            continue
        lines += w.value(f"w{k}", e, f"weight on input {w.name(pid)!r}")
        lines.append(f"    if (C->P[{pid}].len < w{k}) return F_NONE;")
    for k, (pid, e) in enumerate(t.reads):
        lines += w.value(f"r{k}", e, f"read arc on {w.name(pid)!r}")
        lines.append(f"    if (C->P[{pid}].len < r{k}) return F_NONE;")
    for k, (pid, e) in enumerate(t.inhibits):
        lines += w.value(f"i{k}", e, f"inhibitor arc on {w.name(pid)!r}")
        lines.append(f"    if (C->P[{pid}].len + C->L[{pid}] >= i{k}) return F_NONE;")
    lines += w.value("d", t.delay, "delay")
    lines += w.value("ii", t.initiation_interval, "initiation interval")
    return lines


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
    lines += _conditions(w)
    lines += ["    if (probe) return F_FIRED;", f"    if (now < C->NS[{t.id}]) return F_HELD;"]
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


def generate(model: Model) -> tuple[str, tuple]:
    """The C source of ``model``'s engine and the messages its error codes index."""
    messages: list = []
    start_dirty, commit_dirty = dirty_lists(model)
    n_t = len(model.transitions)
    strides = [len(p.token_type.properties) for p in model.places]
    conc = [INT64_MAX if t.concurrency is None else t.concurrency for t in model.transitions]
    tables = [f"/* net {model.name!r}: {len(model.places)} places, {n_t} transitions */",
              f"#define N_P {len(model.places)}", f"#define N_T {n_t}",
              f"#define DONE {model.done}",
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
    here = resources.files("accelperf.lpn")
    runtime = here.joinpath("runtime.c").read_text("utf-8")
    for marker, lines in (("/* @TABLES@", tables), ("/* @NET@", net)):
        head, _, tail = runtime.partition(marker)
        runtime = head + "\n".join(lines) + "\n" + tail.split("*/", 1)[1]
    if _CPYTHON:
        runtime += here.joinpath("tokens.c").read_text("utf-8")
    return runtime, tuple(messages)


# ---------------------------------------------------------------------- compile and load
def compiler_missing() -> str | None:
    """Why the compiled backend cannot be built here (None: a C compiler is found)."""
    from ..measure.native import _compiler
    if _compiler() is None:
        return "no C compiler found ($CC, cc, gcc or clang on PATH)"
    return None


def _build(source: str, cache: Path) -> tuple[Path, float]:
    """The shared library for ``source`` (compiled unless cached) and the seconds spent."""
    from ..measure.native import _compiler
    cc = _compiler()
    key = hashlib.sha256("\0".join((source, cc or "", *CFLAGS)).encode()).hexdigest()[:20]
    target = cache / f"net-{key}.so"
    if target.exists():
        return target, 0.0
    if cc is None:
        raise CompilerError(f"backend = 'compiled' is unavailable: {compiler_missing()}")
    began = time.perf_counter()
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        src = Path(tmp) / "net.c"
        src.write_text(source)
        built = Path(tmp) / "net.so"
        done = subprocess.run([cc, *CFLAGS, str(src), "-o", str(built)], capture_output=True,
                              text=True)
        if done.returncode != 0:
            first = (done.stderr.strip().splitlines() or ["(no output)"])[0]
            raise CompilerError(f"backend = 'compiled': {cc} could not compile the net's "
                                f"engine: {first}")
        os.replace(built, target)      # atomic: a concurrent run never loads half a file
    return target, time.perf_counter() - began


def _bind(lib):
    p, i64 = ctypes.c_void_p, ctypes.c_int64
    lib.lpn_new.restype = p
    lib.lpn_free.argtypes = [p]
    lib.lpn_run.argtypes = [p, p, p, i64, i64, i64, ctypes.c_int, ctypes.c_int]
    for name in ("lpn_scalars", "lpn_arrays", "lpn_trace"):
        getattr(lib, name).argtypes = [p, p]
    lib.lpn_trace_len.argtypes, lib.lpn_trace_len.restype = [p], i64
    lib.lpn_tokens.argtypes = [p, i64, p]
    return lib


def _flattener(path: Path):
    """``lpn_flatten`` (tokens.c) of the library at ``path``, called with the GIL held
    (None when the library has none)."""
    if not _CPYTHON:
        return None
    flatten = ctypes.PyDLL(str(path)).lpn_flatten
    flatten.argtypes = [ctypes.py_object, ctypes.c_int, ctypes.c_ssize_t, ctypes.c_ssize_t,
                        ctypes.c_void_p]
    flatten.restype = ctypes.c_ssize_t
    return flatten


def _watch_sigint() -> bool:
    """Whether a run may take SIGINT over: only where Python itself would turn it into
    KeyboardInterrupt (the main thread, the default handler), never in a worker thread
    or under an application's own handler."""
    return threading.current_thread() is threading.main_thread() and \
        signal.getsignal(signal.SIGINT) is signal.default_int_handler


def _address(buf: array) -> int:
    return buf.buffer_info()[0]


@dataclass(frozen=True)
class Run:
    """What one compiled run left behind, in the Python engine's terms."""

    status: int
    now: int
    last_commit: int
    total: int
    done_time: int | None
    done_count: int
    t_next: int
    error: tuple                 # (transition id, code, op, a, b, message id)
    per_transition: tuple        # commits, busy, busy_since, area, area_since, slots,
    per_place: tuple             # inflight, next start; high-water, free, locked
    trace: tuple | None
    tokens: tuple | None         # free tokens per place, when a report is needed


class CompiledEngine:
    """One net's compiled engine: ``simulate(marking, ...)`` runs it on an input."""

    def __init__(self, model: Model, cache: Path | None = None):
        from ..measure.native import cache_dir
        self.model = model
        self.source, self.messages = generate(model)
        self.strides = [len(p.token_type.properties) for p in model.places]
        self.path, self.compile_seconds = _build(self.source, cache or cache_dir() / "lpn")
        self.lib = _bind(ctypes.CDLL(str(self.path)))
        self.flatten = _flattener(self.path)

    def __repr__(self) -> str:
        return f"CompiledEngine({self.model.name}: {self.path.name})"

    def _arrays(self, marking: Marking) -> tuple[array, array]:
        """The run's input: tokens per place, and their property values in place order
        (int64; a value outside that range is refused with the place it is in)."""
        tokens = marking.tokens
        counts = array("q", [len(tokens.get(pid, ())) for pid in range(len(self.strides))])
        values = array("q", [0]) * sum(map(operator.mul, counts, self.strides))
        flatten, base, pos = self.flatten, _address(values), 0
        for pid, (n, stride) in enumerate(zip(counts, self.strides)):
            if n and stride:
                given = tokens[pid]
                kind = type(given)
                if kind is TokenArray and given.array.shape == (n, stride):
                    ctypes.memmove(base + 8 * pos, given.array.ctypes.data, 8 * n * stride)
                elif flatten is None or kind not in (list, tuple) or \
                        flatten(given, kind is list, n, stride, base + 8 * pos) >= 0:
                    values[pos:pos + n * stride] = self._flat(pid, given, n * stride)
                pos += n * stride
        return counts, values

    def _flat(self, pid: int, tokens, size: int) -> array:
        """One place's values in Python: without lpn_flatten, for tokens neither in a list
        nor a tuple, or to say what lpn_flatten could not take."""
        name = self.model.places[pid].name
        shape = ModelError(f"tokens of place {name!r} are invalid: each a tuple of "
                           f"{size // len(tokens)} int(s), as its token type has")
        try:
            flat = array("q", itertools.chain.from_iterable(tokens))
        except OverflowError:
            bad = next(v for tok in tokens for v in tok if not INT64_MIN <= v <= INT64_MAX)
            raise ModelError(f"token value = {bad} in place {name!r} is invalid for the "
                             f"compiled backend: values are int64, [-2**63, 2**63 - 1]; use "
                             f"backend='python'") from None
        except TypeError:
            raise shape from None
        if len(flat) != size:
            raise shape
        return flat

    def run(self, marking: Marking, max_time=None, max_commits=None, max_cycle=None,
            trace: bool = False, expected_done: int | None = None) -> Run:
        """Run on ``marking``; limits are ints or None (no limit). The free tokens are read
        back only when a report will need them (a limit, an error, work left over)."""
        counts, values = self._arrays(marking)
        n_t, n_p = len(self.model.transitions), len(self.model.places)
        clamp = lambda v: -1 if v is None or v >= INT64_MAX else int(v)   # noqa: E731
        lib = self.lib
        ctx = lib.lpn_new()
        if not ctx:
            raise MemoryError("the compiled engine could not allocate its state")
        try:
            status = lib.lpn_run(ctx, _address(counts), _address(values), clamp(max_time),
                                 clamp(max_commits), clamp(max_cycle), int(trace),
                                 int(_watch_sigint()))
            scalars, arrays = array("q", bytes(8 * 12)), array("q", bytes(8 * (8 * n_t + 3 * n_p)))
            lib.lpn_scalars(ctx, _address(scalars))
            lib.lpn_arrays(ctx, _address(arrays))
            firings = None
            if trace:
                flat = array("q", bytes(8 * 3 * lib.lpn_trace_len(ctx)))
                lib.lpn_trace(ctx, _address(flat))
                firings = tuple(zip(flat[0::3], flat[1::3], flat[2::3]))
            tokens = None
            free = arrays[8 * n_t + n_p:8 * n_t + 2 * n_p].tolist()
            done_count = scalars[4]
            if status != R_DONE or stuck_places(self.model, free, dict(enumerate(counts))) \
                    or (expected_done is not None and done_count < expected_done):
                tokens = tuple(self._tokens(ctx, pid, arrays[8 * n_t + n_p + pid])
                               for pid in range(n_p))
        finally:
            lib.lpn_free(ctx)
        if status == R_NOMEM:
            raise MemoryError("the compiled engine ran out of memory")
        now, last, total, done_time, done_count, t_next, *error = scalars
        per_t = tuple(arrays[k * n_t:(k + 1) * n_t].tolist() for k in range(8))
        per_p = tuple(arrays[8 * n_t + k * n_p:8 * n_t + (k + 1) * n_p].tolist()
                      for k in range(3))
        return Run(status, now, last, total, None if done_time < 0 else done_time, done_count,
                   t_next, tuple(error), per_t, per_p, firings, tokens)

    def _tokens(self, ctx, pid: int, n: int) -> list:
        stride = len(self.model.places[pid].token_type.properties)
        if not stride:
            return [()] * n
        flat = array("q", bytes(8 * n * stride))
        self.lib.lpn_tokens(ctx, pid, _address(flat))
        return [tuple(flat[i:i + stride]) for i in range(0, n * stride, stride)]

    # ------------------------------------------------------------------ as simulate()
    def simulate(self, marking: Marking, max_time, limit_time, limit_commits, limit_cycle,
                 trace: bool = False, expected_done: int | None = None):
        """:func:`.sim.simulate` on this engine: the same result, errors and reports."""
        model = self.model
        r = self.run(marking, None if limit_time == float("inf") else limit_time,
                     limit_commits, limit_cycle, trace, expected_done)
        names = [t.name for t in model.transitions]
        cyc = lambda ticks: in_cycles(ticks, model.ticks_per_cycle)   # noqa: E731
        firings = None if r.trace is None else \
            [Firing(names[t], cyc(s), cyc(e)) for t, s, e in r.trace]
        commits, busy, busy_since, area, area_since, slots, inflight, next_start = \
            r.per_transition
        max_occ, free, locked = r.per_place
        # build_result reads only the queues' lengths; a report also reads the tokens.
        queues = r.tokens if r.tokens is not None else [range(n) for n in free]
        result = build_result(model, r.done_time, r.last_commit, commits, busy, max_occ,
                              r.done_count, r.total, firings, inflight, busy_since, area,
                              area_since, slots, queues, locked)
        result = replace(result, backend="compiled")

        def report(message):
            return report_marking(model, queues, locked, inflight, next_start, r.now, message)

        if r.status == R_DONE:
            initial = {pid: len(ts) for pid, ts in marking.tokens.items()}
            return verdict(model, result, initial, expected_done, report)
        if r.status == R_ERROR:
            message, cls = firing_failed(model.transitions[r.error[0]], cyc(r.now),
                                         FiringError(self._error_text(*r.error[1:]))), \
                SimulationError
        elif r.status == R_MAX_TIME:
            message, cls = (f"stopped at cycle {cyc(r.now)}: the next event is at "
                            f"{cyc(r.t_next)}, "
                            f"past max_time = {max_time}"), LimitError
        elif r.status == R_INTERRUPTED:
            message, cls = (f"interrupted at cycle {cyc(r.now)} after {r.total} commits",
                            Interrupted)
        elif r.status == R_MAX_COMMITS:
            message, cls = (f"stopped at cycle {cyc(r.now)} after {r.total} commits, past "
                            f"max_commits = {limit_commits}"), LimitError
        else:
            message, cls = stalled(cyc(r.now), limit_cycle), LimitError
        raise cls(message, report(message), result)

    def _error_text(self, code, op, a, b, msg) -> str:
        """The text the Python engine gives the same failure."""
        if code == E_OP:
            name = _OP_NAMES[op]
            if name in ("floordiv", "mod", "div"):
                try:
                    OPERATORS[name].evaluate(a, b)
                except EvaluationError as exc:
                    return str(exc)
            if name == "time":
                return (f"{a} + {b} cycles leaves the compiled backend's int64 range; "
                        f"use backend='python'")
            shown = f"{a} {_SYMBOLS[name]} {b}" if name in _SYMBOLS else f"{name}({a})"
            return (f"{shown} leaves the compiled backend's int64 range "
                    f"[-2**63, 2**63 - 1]; use backend='python'")
        kind, _tid, *args = self.messages[msg]
        if code == E_BELOW_ZERO:
            return below_zero(args[0], a)
        if code == E_TOO_FEW:
            return too_few_to_copy(a, args[0], b, args[1])
        return NO_ROUTE


# ---------------------------------------------------------------------- which engine
_ENGINES: dict = {}
_KEEP = 64        # engines kept per process (each holds its model, so ids stay unique)


def engine(model: Model) -> CompiledEngine:
    """The compiled engine of ``model``, built on first use in this process."""
    key = id(model)
    held = _ENGINES.pop(key, None)
    if held is None or held.model is not model:
        held = CompiledEngine(model)
    _ENGINES[key] = held                  # most recently used last
    while len(_ENGINES) > _KEEP:
        del _ENGINES[next(iter(_ENGINES))]
    return held


def choose(model: Model, backend: str) -> CompiledEngine | None:
    """The compiled engine for ``backend`` = "compiled" (or an error saying why not), or
    for "auto" when one can be had (None, with a warning, when it cannot)."""
    if backend == "compiled":
        return engine(model)
    try:
        return engine(model)
    except CompilerError as exc:
        import warnings
        warnings.warn(f"backend 'auto' ran the Python engine: {exc}", RuntimeWarning,
                      stacklevel=3)
        return None
