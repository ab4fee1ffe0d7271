"""The compiled LPN engine: a net translated to C once, inputs passed as arrays.

lpn2sim (OSDI'24 §4.3) turns a net into C++ and compiles it; the authors' toolchain also
bakes the input into the program, so every new input costs a compile. Here a net is
compiled once — the generated source depends on the model only, and the shared library is
cached under ``~/.cache/accelperf/lpn/`` by a hash of that source — and every run passes
the initial marking (token counts and int64 property values) as arrays, filled from the
marking's tuples by C code in the same library (``tokens.c``, through CPython's C API),
or copied as they are from a place whose Ψ gave a NumPy array (:class:`~.net.TokenArray`).
The values of the net's named parameters (:mod:`.params`) are passed per run too, so a
model built again with other delays (a calibration tries hundreds) reuses the library.

The engine is the Python engine of :mod:`.sim` written in C (``runtime.c`` plus one fire
and one commit function per transition, written by :mod:`.csource` from the traced
expressions), so it follows the rules of :mod:`.semantics` (R1–R8) with the same tie
order, limits, trace, statistics and error texts; the tests hold it to the reference
trace for trace. This module builds that source, loads it and runs it.

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
from pathlib import Path

from ..errors import ModelError
from ..measure.native import cache_dir, find_compiler
from .csource import CPYTHON, INT64_MAX, INT64_MIN, generate
from .expr import OPERATORS, EvaluationError
from .net import Marking, Model, TokenArray
from .outcome import (Interrupted, LimitError, SimulationError, build_result, report_marking,
                      verdict)
from .semantics import (NO_ROUTE, Firing, FiringError, below_zero, firing_failed, in_cycles,
                        past_max_commits, stalled, stuck_places, too_few_to_copy)

# The engine calls the interpreter's C API (tokens.c), resolved when it is loaded; macOS
# links a shared library with unresolved symbols only when told to.
CFLAGS = ("-O2", "-shared", "-fPIC") + (("-undefined", "dynamic_lookup")
                                        if sys.platform == "darwin" else ())

# Whether the engine reads the marking's tuples with tokens.c (set apart so a test can
# build the engine another interpreter gets).
_CPYTHON = CPYTHON

# Codes shared with runtime.c.
_OP_NAMES = ("add", "sub", "mul", "floordiv", "mod", "div", "neg", "abs", "time")
_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//", "mod": "%", "div": "/"}
(E_OP, E_BELOW_ZERO, E_TOO_FEW, E_NO_ROUTE) = (1, 2, 3, 4)
(R_DONE, R_MAX_TIME, R_MAX_COMMITS, R_STALLED, R_ERROR, R_NOMEM, R_INTERRUPTED) = range(7)


class CompilerError(ModelError):
    """No C compiler, or the generated source did not compile (the message says which)."""


# ---------------------------------------------------------------------- compile and load
def compiler_missing() -> str | None:
    """Why the compiled backend cannot be built here (None: a C compiler is found)."""
    if find_compiler() is None:
        return "no C compiler found ($CC, cc, gcc or clang on PATH)"
    return None


def _build(source: str, cache: Path) -> tuple[Path, float]:
    """The shared library for ``source`` (compiled unless cached) and the seconds spent."""
    cc = find_compiler()
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


_LOADED: dict = {}        # (source, cache folder, compiler) -> (path, 0.0, lib, flatten)
_KEEP_LOADED = 256


def _load(source: str, cache: Path) -> tuple:
    """(path, seconds compiling, bound library, lpn_flatten) for ``source``: built and
    loaded once per process. A calibration builds its model again for each parameter
    vector, and every one has the same source (the values are passed per run): the
    engines of `lpn calibrate jpeg-decoder` took 2.9 s of its 10.8 when each looked the
    library up on disk and loaded it again, 2.0 s now (what is left is the source)."""
    key = (source, str(cache), find_compiler())
    if key in _LOADED:
        return _LOADED[key]
    path, seconds = _build(source, cache)
    loaded = path, seconds, _bind(ctypes.CDLL(str(path))), _flattener(path)
    _LOADED[key] = (path, 0.0, *loaded[2:])
    while len(_LOADED) > _KEEP_LOADED:
        del _LOADED[next(iter(_LOADED))]
    return loaded


def _bind(lib):
    p, i64 = ctypes.c_void_p, ctypes.c_int64
    lib.lpn_new.restype = p
    lib.lpn_free.argtypes = [p]
    lib.lpn_run.argtypes = [p, p, p, i64, i64, i64, ctypes.c_int, ctypes.c_int]
    for name in ("lpn_scalars", "lpn_arrays", "lpn_trace"):
        getattr(lib, name).argtypes = [p, p]
    lib.lpn_trace_len.argtypes, lib.lpn_trace_len.restype = [p], i64
    lib.lpn_tokens.argtypes = [p, i64, p]
    lib.lpn_set_params.argtypes = [p, p]
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
        self.model = model
        self.source, self.messages = generate(model, with_tokens=_CPYTHON)
        self.strides = [len(p.token_type.properties) for p in model.places]
        loaded = _load(self.source, cache or cache_dir() / "lpn")
        self.path, self.compile_seconds, self.lib, self.flatten = loaded
        # The named parameters' values travel with each run (the source names them only).
        self.params = array("q", [p.value for p in model.parameters] or [0])

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
            lib.lpn_set_params(ctx, _address(self.params))
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
            message, cls = past_max_commits(model, cyc(r.now), r.total, limit_commits,
                                            cyc(r.done_time), r.done_count,
                                            commits), LimitError
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
