"""A GPU offload, measured the way LogCA splits it: host, accel, echo.

LogCA (ISCA'17, §2, Eq. 1) writes the host's time T_0(g) = C_0(g) = C·g^β and the
offloaded one T_1(g) = O_1(g) + L_1(g) + C_1(g), with O_1 = o and, for a copy over PCIe,
L_1 = L·g (granularity-dependent latency, §2.3). For each granularity g (bytes of input)
and each of ``repeats`` repeats, three modes:

* ``host``: the operation in the same library on the CPU, on host tensors: T_0(g);
* ``accel``: copy the input to the device, run the kernel there, copy the output back, and
  synchronize: T_1(g), measured whole; with ``resident`` only the kernel, C_1(g) (the data
  already on the device, the output left there);
* ``echo``: the two copies alone, the same bytes in and out: o + L·g, measured (not
  written with ``resident``: there are no copies to time).

One repeat loops one mode's call, each call synchronized, until the loop lasts at least
TARGET_S (2 ms) and divides by the number of calls: seconds per operation, wall clock. The
repeats are the outer loop, the sizes inside them and the modes rotating within each visit of
a size: a slow phase of the machine hits all three modes of one repeat of a few sizes, and
the minimum over the repeats drops it (with each size's repeats back to back, a phase of a
second slowed every repeat of one size). Each visit allocates that size's buffers afresh,
so only one size's are held at a time. Where the device has its own clock (CUDA events), a
second loop of the same length records an event pair around each call: the device's time
per operation, without the host's launch and synchronization gaps between calls. With an
energy counter, the wall loop reads it before and after (a longer loop then, ENERGY_TARGET_S:
a counter read twice over 2 ms would measure its own update steps): joules per operation,
the whole board's, idle power included.

The device layer is a small protocol (:class:`Backend`), so the timing logic is the same on
a GPU, on the CPU standing in for one (``--device cpu``, for CI) and in the tests, where a
fake backend runs on a simulated clock.

A kernel is a function given the input tensor(s), already on the device for ``accel`` (on
the host for ``host``), that returns a tensor or a tuple of tensors on the same device; it
must not synchronize or copy itself (the harness does both). Built-in kernels, on float32:
``scale`` y = 2x, ``sort`` ascending, ``fft`` the real FFT (rfft: float32 in, complex64 out,
n/2+1 values), each on a vector of g/4 elements; ``gemm`` C = A·B with n×n matrices,
n = round(sqrt(g/8)), so that g = 8n² is the bytes of A and B (the granularity written is
the exact 8n²). A user's kernel ``python:MODULE:FUNC`` gets one float32 vector of g/4
elements.
"""

from __future__ import annotations

import importlib
import inspect
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol

from ..errors import ModelError, invalid
from .crypto import (Measurement, MeasurementError, Sample, check_count, check_sizes,
                     interrupted, load_note)
from .outliers import BREAK_FACTOR, MAX_REMEASURES, MAX_RUN, remeasure_breaks

BUILTIN_KERNELS = ("scale", "sort", "fft", "gemm")
TARGET_S = 2e-3
ENERGY_TARGET_S = 0.2
MAX_CALLS = 10**7            # per repeat: ~100 ns calls still reach the target below this
# host buffers per size: the input, the output, the host call's own output (and gemm's B)
HOST_BUFFERS = 4


class EventPair(Protocol):
    """The device's own clock around one call."""

    def start(self) -> None: ...
    def end(self) -> None: ...
    def seconds(self) -> float: ...        # end - start, after a synchronize


class Backend(Protocol):
    """The device layer: everything the harness asks of a library and a device."""

    device: str                                          # "cuda", "cpu", ...

    def clock(self) -> float: ...                        # the wall clock, in seconds
    def kernel(self, name: str) -> Callable: ...         # a built-in kernel
    def host_tensor(self, shape: tuple, pinned: bool) -> Any: ...   # random float32
    def host_like(self, tensor, pinned: bool) -> Any: ...
    def device_like(self, tensor) -> Any: ...
    def copy(self, dst, src) -> None: ...                # either way; async where it can be
    def sync(self) -> None: ...
    def events(self) -> EventPair | None: ...            # None: no device clock
    def energy_counter(self) -> Callable[[], float] | str: ...   # joules so far, or why not
    def describe(self) -> dict[str, str]: ...            # lines for the CSV header


@dataclass(frozen=True)
class Plan:
    """What to measure, checked before anything runs."""

    kernel: str                  # a built-in name or python:MODULE:FUNC
    sizes: tuple[int, ...]       # granularities as asked; gemm's exact ones differ
    repeats: int = 5
    pinned: bool = True
    resident: bool = False
    energy: bool = False

    @property
    def modes(self) -> tuple[str, ...]:
        return ("host", "accel") if self.resident else ("host", "accel", "echo")


def check_kernel(kernel) -> str:
    """A built-in kernel's name or ``python:MODULE:FUNC`` (syntax only: the module is
    imported by :func:`user_kernel`)."""
    allowed = f"{', '.join(BUILTIN_KERNELS)} or python:MODULE:FUNC"
    if not isinstance(kernel, str):
        raise invalid("kernel", kernel, allowed)
    if kernel in BUILTIN_KERNELS:
        return kernel
    parts = kernel.split(":")
    if len(parts) != 3 or parts[0] != "python" or not parts[2].isidentifier() or not all(
            p.isidentifier() for p in parts[1].split(".")):
        raise invalid("kernel", kernel, allowed)
    return kernel


def user_kernel(kernel: str) -> Callable:
    """The function FUNC of ``python:MODULE:FUNC``, MODULE importable from the current
    directory or the Python path."""
    _, module_name, func_name = kernel.split(":")
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.append(str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        top = module_name.split(".")[0]
        if exc.name is not None and exc.name.split(".")[0] != top:
            # the module was found; what it imports was not
            raise invalid("kernel", kernel, f"{module_name} was found but its own import "
                                            f"failed: {exc}") from None
        raise invalid("kernel", kernel, f"cannot import {module_name}: {exc} (run from the "
                                        f"directory that holds {top}.py or add that "
                                        f"directory to PYTHONPATH)") from None
    except SyntaxError as exc:
        raise invalid("kernel", kernel, f"{module_name} is not valid Python: {exc.msg} "
                                        f"({Path(exc.filename or '?').name}, line "
                                        f"{exc.lineno})") from None
    except Exception as exc:        # the user's module raised while it was imported
        raise invalid("kernel", kernel, f"importing {module_name} failed: "
                                        f"{type(exc).__name__}: {exc}") from None
    func = getattr(module, func_name, None)
    if func is None:
        raise invalid("kernel", kernel, f"{module_name} has no function {func_name}")
    if not callable(func):
        raise invalid("kernel", kernel, f"{module_name}.{func_name} is a "
                                        f"{type(func).__name__}, not a function")
    try:
        inspect.signature(func).bind(object())
    except TypeError:
        raise invalid("kernel", kernel, f"{func_name}{inspect.signature(func)} must take one "
                                        f"argument: the input tensor on the device") from None
    except ValueError:              # no signature to read (a builtin): let the call decide
        pass
    return func


def check_plan(kernel, granularities, repeats=5, pinned=True, resident=False,
               energy=False) -> Plan:
    kernel = check_kernel(kernel)
    check_count("repeats", repeats)
    smallest = 8 if kernel == "gemm" else 4
    sizes = check_sizes(granularities, buffers=HOST_BUFFERS)
    if sizes[0] < smallest:
        whole = "matrices" if smallest == 8 else "values"
        raise invalid("granularities", f"{sizes[0]} B",
                      f"at least {smallest} B for {kernel} (whole float32 {whole})")
    distinct = {}                 # gemm's n = round(sqrt(g/8)) maps small sizes together
    for g in sizes:
        distinct.setdefault(exact_granularity(kernel, g), g)
    return Plan(kernel, tuple(distinct.values()), repeats, bool(pinned), bool(resident),
                bool(energy))


def input_shapes(kernel: str, g: int) -> tuple[tuple[int, ...], ...]:
    """The float32 inputs of ``kernel`` at granularity g (see the module docstring)."""
    if kernel == "gemm":
        n = max(1, round(math.sqrt(g / 8)))
        return ((n, n), (n, n))
    return ((g // 4,),)


def exact_granularity(kernel: str, g: int) -> int:
    return 4 * sum(math.prod(s) for s in input_shapes(kernel, g))


def _outputs(result, kernel: str) -> tuple:
    out = tuple(result) if isinstance(result, (tuple, list)) else (result,)
    if not out or any(not hasattr(t, "shape") for t in out):
        raise invalid("kernel", kernel, f"the function must return a tensor or a tuple of "
                                        f"tensors; it returned {type(result).__name__}")
    return out


def _calls(backend: Backend, fn: Callable, plan: Plan, g: int) -> dict[str, Callable]:
    """One call of each mode at granularity g, on freshly allocated buffers."""
    x_host = tuple(backend.host_tensor(s, plan.pinned) for s in input_shapes(plan.kernel, g))
    x_dev = tuple(backend.device_like(x) for x in x_host)
    for d, h in zip(x_dev, x_host):
        backend.copy(d, h)
    first = fn(*x_dev)                               # also the warm-up of the kernel
    y_dev, several = _outputs(first, plan.kernel), isinstance(first, (tuple, list))
    backend.sync()
    y_host = tuple(backend.host_like(y, plan.pinned) for y in y_dev)
    fn(*x_host)                                      # and of the host's

    def host():
        fn(*x_host)

    def accel():
        if plan.resident:
            fn(*x_dev)
            return
        for d, h in zip(x_dev, x_host):
            backend.copy(d, h)
        ys = fn(*x_dev)
        for h, y in zip(y_host, ys if several else (ys,)):
            backend.copy(h, y)

    def echo():                   # the same bytes in and out as accel, without the kernel
        for d, h in zip(x_dev, x_host):
            backend.copy(d, h)
        for h, y in zip(y_host, y_dev):
            backend.copy(h, y)

    return {"host": host, "accel": accel, "echo": echo}


@dataclass(frozen=True)
class _Run:
    """One repeat of one mode at one size, per operation."""

    seconds: float                   # wall clock
    calls: int                       # in the loop that reached the target
    device_seconds: float | None     # the device's events, where it has them
    joules: float | None             # the board's energy counter, where asked and present


@dataclass(frozen=True)
class _Timer:
    backend: Backend
    clock: Callable[[], float]
    energy: Callable[[], float] | None

    def calls(self, call: Callable, n: int, on_device: bool) -> float:
        start = self.clock()
        for _ in range(n):
            call()
            if on_device:
                self.backend.sync()
        return self.clock() - start

    def repeat(self, call: Callable, on_device: bool, n: int) -> _Run:
        """One repeat: loops of ``n`` calls, more each time, until one lasts the target."""
        target = ENERGY_TARGET_S if self.energy and on_device else TARGET_S
        while True:
            joules = self.energy() if self.energy and on_device else None
            elapsed = self.calls(call, n, on_device)
            if elapsed >= target:
                break
            if n >= MAX_CALLS:       # a clock that does not move, or a call that does nothing
                raise MeasurementError(f"{n} calls took {elapsed:.3g} s in all, less than "
                                       f"{target:g} s: the call does no measurable work")
            # aim 20% past the target, growing at most 1000x from a loop too short to read
            n = min(MAX_CALLS, max(2 * n, math.ceil(n * min(1000.0, target / max(elapsed, 1e-9)
                                                            * 1.2))))
        if joules is not None:
            joules = (self.energy() - joules) / n
        return _Run(elapsed / n, n, self.device_seconds(call, n) if on_device else None,
                    joules)

    def device_seconds(self, call: Callable, n: int) -> float | None:
        pair = self.backend.events()
        if pair is None:
            return None
        total = 0.0
        for _ in range(n):
            pair.start()
            call()
            pair.end()
            self.backend.sync()
            total += pair.seconds()
        return total / n


def _sample(kernel, mode, g, runs: list[_Run]) -> Sample:
    return Sample(kernel, mode, g, tuple(r.seconds for r in runs),
                  tuple(r.device_seconds for r in runs if r.device_seconds is not None),
                  tuple(r.joules for r in runs if r.joules is not None))


def measure_gpu(plan: Plan, backend: Backend, progress=None) -> Measurement:
    """Host, accel and echo timings of ``plan`` on ``backend`` (see the module docstring);
    sizes whose minimum breaks the curve are measured again (measure/outliers.py)."""
    fn = user_kernel(plan.kernel) if plan.kernel.startswith("python:") else \
        backend.kernel(plan.kernel)
    energy_note = "not asked for (--energy)"
    counter = None
    if plan.energy:
        found = backend.energy_counter()
        counter = found if callable(found) else None
        energy_note = ("joules per operation from the board's total-energy counter over each "
                       f"device repeat (at least {ENERGY_TARGET_S:g} s), idle power included"
                       if counter else f"not measured: {found}")
    timer = _Timer(backend, backend.clock, counter)
    label = plan.kernel.split(":")[-1]
    runs: dict[tuple[str, int], list] = {}

    loops: dict[tuple[str, int], int] = {}      # calls per loop that last reached the target

    def visit(g, modes, r):
        """Repeat r of each mode at g, on buffers allocated for this visit (one size's
        buffers at a time, as many bytes as before the sweep interleaved its sizes)."""
        where["size"], where["mode"] = g, "buffers"
        calls = _calls(backend, fn, plan, g)
        exact = exact_granularity(plan.kernel, g)
        for m in modes[r % len(modes):] + modes[:r % len(modes)]:
            where["mode"] = m
            run = timer.repeat(calls[m], m != "host", loops.get((m, exact), 1))
            loops[(m, exact)] = run.calls
            runs.setdefault((m, exact), []).append(run)
            if progress:
                progress(f"{label} {m} {exact} B, repeat {r + 1}")
        return exact

    where: dict = {}                            # the size and mode running, for an error

    try:
        samples, notes = _sweep(plan, visit, runs, label)
    except KeyboardInterrupt:
        times = {k: [r.seconds for r in v] for k, v in runs.items()}
        raise interrupted(label, times, len(plan.modes) * len(plan.sizes) * plan.repeats,
                          f"gpu {plan.kernel}") from None
    except ModelError:
        raise
    except Exception as exc:        # the library's own error: out of memory, a bad kernel
        raise MeasurementError(f"the {plan.kernel} measurement failed"
                               f"{_failed_where(plan, where)}: {type(exc).__name__}: "
                               f"{' '.join(str(exc).split())[:300]}") from None
    metadata = _metadata(plan, backend, energy_note, notes)
    return Measurement(tuple(samples), metadata)


def _failed_where(plan: Plan, where: dict) -> str:
    """" at 1 MiB (accel); the sizes below it ran: --to 512KiB measures them", for a
    kernel that fails at one size (a GPU out of memory at the largest)."""
    from ..units import format_size
    g = where.get("size")
    if g is None:
        return ""
    doing = "buffers and first calls" if where["mode"] == "buffers" else where["mode"]
    text = f" at {format_size(g)} ({doing})"
    below = [x for x in plan.sizes if x < g]
    if below:
        text += (f"; the sizes below it ran: --to {format_size(below[-1]).replace(' ', '')} "
                 f"measures them")
    return text


def _sweep(plan: Plan, visit, runs: dict, label: str):
    """Every size in every mode, the sizes inside the repeats: repeat r visits every size
    before repeat r + 1 starts, so a slow phase of the machine (a second of it) slows one
    repeat of a few sizes, which the minimum drops, not every repeat of one size. (With
    each size's repeats back to back, an H100 box's 16-thread host took 3.5 ms for a 64 MiB
    matrix-vector product in all five, against 0.49 ms when measured again.) Then each
    mode's curve breaks are measured again: the samples and the notes of what was."""
    exact = {}
    for r in range(plan.repeats):
        for g in plan.sizes:
            exact[g] = visit(g, plan.modes, r)
    asked = {v: k for k, v in exact.items()}
    samples, notes = [], []
    for mode in plan.modes:
        curve = {g: _sample(label, mode, g, runs[(mode, g)]) for g in exact.values()}

        def again(g, mode=mode):
            runs.pop((mode, g))
            for r in range(plan.repeats):
                visit(asked[g], (mode,), r)
            return _sample(label, mode, g, runs[(mode, g)])

        curve, mode_notes = remeasure_breaks(curve, again)
        samples += [curve[g] for g in sorted(curve)]
        notes += [f"{mode} {note}" for note in mode_notes]
    return samples, notes


def _metadata(plan: Plan, backend: Backend, energy_note: str, notes: list[str]) -> dict:
    from .cpuinfo import cache_summary, cpu_model
    import os
    copies = ("none: the data stay on the device (--resident), accel times only the kernel"
              if plan.resident else "plain host memory (--device cpu: nothing to pin)"
              if backend.device == "cpu" else
              f"{'pinned' if plan.pinned else 'pageable'} host memory")
    what = {"scale": "y = 2x, float32", "sort": "ascending sort of float32",
            "fft": "rfft of float32 (complex64 out, n/2+1 values)",
            "gemm": "C = A B, float32 n x n, g = bytes of A and B = 8 n^2"}.get(
                plan.kernel, "the user's function on one float32 vector of g/4 values")
    return {
        "accelperf measure": f"gpu {plan.kernel} ({what}) on {backend.device}",
        **backend.describe(),
        "host cpu": f"{cpu_model()}, {os.cpu_count()} CPUs; caches {cache_summary()}",
        "host": "the operation in the same library on the CPU, on host tensors",
        "accel": ("the kernel alone on device-resident data, synchronized" if plan.resident
                  else "host->device copy + kernel + device->host copy, synchronized"),
        "echo": ("not measured (--resident: no copies)" if plan.resident else
                 "the two copies alone, the same bytes in and out: o + L*g"),
        "copies": copies,
        "statistic": f"seconds per operation; min, median and max of {plan.repeats} repeats, "
                     f"each looping the call (synchronized) until it lasts >= "
                     f"{TARGET_S * 1e3:g} ms; modes rotate within each repeat",
        "device time": ("device_seconds_*: device events around each call, in a second loop "
                        "as long as the wall loop" if backend.events() is not None else
                        "not measured: this device has no clock of its own"),
        "energy": energy_note,
        "re-measured": ("; ".join(notes) if notes else
                        f"none (a size is measured again, at most {MAX_REMEASURES} times, "
                        f"when its minimum, or each of a run of up to {MAX_RUN} sizes', is "
                        f"over {BREAK_FACTOR:g}x both neighbours' times the repeats' spread "
                        f"(median/min) there)"),
        "load average": load_note(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
