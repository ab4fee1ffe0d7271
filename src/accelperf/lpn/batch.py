"""Many inputs through one net: a local process pool by default, or a Dask cluster.

The batch use cases of OSDI'24 are many inputs on one accelerator (§5.3.3: TVM
auto-tuning simulates 1,500 instruction sequences; the JPEG evaluation 60,000 images).
:func:`simulate_many` runs each input through :func:`.sim.simulate` and returns one row
per input, in input order; an input that fails (a bad input, a deadlock, a limit) gives
a row with its error and never stops the others.

The compiled engine is built once, before the work is shared out: the forked local
workers inherit it, and Dask workers load it from the cache (or build it once each).
"""

from __future__ import annotations

import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass

from ..errors import ModelError
from .net import Model
from .sim import BACKENDS, simulate


@dataclass(frozen=True)
class BatchRow:
    """One input's outcome: its latency, commits and bottleneck, or the error."""

    name: str
    latency: int | None
    commits: int | None
    bottleneck: str | None
    seconds: float
    backend: str | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict:
        return {"name": self.name, "latency": self.latency, "commits": self.commits,
                "bottleneck": self.bottleneck, "seconds": self.seconds,
                "backend": self.backend, "error": self.error}

    def __repr__(self) -> str:
        what = (f"latency {self.latency}, {self.commits} commits, bottleneck "
                f"{self.bottleneck}") if self.ok else f"failed: {self.error}"
        return f"BatchRow({self.name}: {what}, {self.seconds:.3g} s)"


@dataclass(frozen=True)
class BatchResult:
    """All rows, in input order, and how the batch ran."""

    model: str
    rows: tuple
    workers: int
    where: str                  # "this process", "local pool", or the scheduler's address
    seconds: float

    @property
    def failures(self) -> tuple:
        return tuple(r for r in self.rows if not r.ok)

    def to_dict(self) -> dict:
        return {"model": self.model, "workers": self.workers, "where": self.where,
                "seconds": self.seconds, "failures": len(self.failures),
                "rows": [r.to_dict() for r in self.rows]}

    def __repr__(self) -> str:
        return (f"BatchResult({self.model}: {len(self.rows)} inputs, {len(self.failures)} "
                f"failed, {self.workers} worker(s) in {self.where}, {self.seconds:.3g} s)")


def _one_line(text) -> str:
    return " ".join(str(text).split())


def run_one(model: Model, name: str, user_input, backend: str, limits: dict) -> BatchRow:
    """One input, its failure caught into the row (the batch goes on)."""
    began = time.perf_counter()
    try:
        r = simulate(model, user_input, backend=backend, **limits)
    except ModelError as exc:          # bad input, deadlock, limit, evaluation error
        return BatchRow(name, None, None, None, time.perf_counter() - began, None,
                        _one_line(exc))
    except Exception as exc:           # noqa: BLE001 - one input must not stop the rest
        return BatchRow(name, None, None, None, time.perf_counter() - began, None,
                        _one_line(f"{type(exc).__name__}: {exc}"))
    return BatchRow(name, r.latency, r.total_commits, r.bottleneck,
                    time.perf_counter() - began, r.backend)


# A forked worker's job: the parent's model, backend and limits, inherited, not pickled.
_JOB: tuple | None = None


def _init_worker(model, items, backend, limits):
    global _JOB
    _JOB = (model, items, backend, limits)


def _pool_task(first: int, last: int) -> tuple[int, list]:
    model, items, backend, limits = _JOB
    return first, [run_one(model, name, x, backend, limits) for name, x in items[first:last]]


def _cluster_task(spec, name: str, user_input, backend: str, limits: dict) -> BatchRow:
    """On a Dask worker: the model by library name or file spec, built once per worker."""
    from .loader import load_model
    cache = _cluster_task.__dict__.setdefault("models", {})
    if isinstance(spec, Model):
        model = spec
    else:
        if spec not in cache:
            cache[spec] = load_model(spec)
        model = cache[spec]
    return run_one(model, name, user_input, backend, limits)


def named_inputs(inputs) -> list[tuple[str, object]]:
    """(name, input) pairs from a dict, a list of pairs, or a plain list (named 0, 1, ...)."""
    if isinstance(inputs, dict):
        return [(str(k), v) for k, v in inputs.items()]
    items = list(inputs)
    if items and all(isinstance(i, tuple) and len(i) == 2 and isinstance(i[0], str)
                     for i in items):
        return items
    return [(str(i), v) for i, v in enumerate(items)]


def simulate_many(model, inputs, *, backend: str = "python", workers: int | None = None,
                  scheduler=None, progress=None, **limits) -> BatchResult:
    """Simulate ``model`` on each of ``inputs`` and return one row per input.

    model : Model or str
        A built model, or a library name / ``path/file.py:function`` (what a Dask worker
        rebuilds the model from; a Model is pickled to the cluster instead).
    inputs : dict {name: input}, list of (name, input), or list of inputs
    backend : "python", "compiled" or "auto" (see :func:`.sim.simulate`)
    workers : processes for the local pool (default: all cores; 1 runs in this process)
    scheduler : a Dask scheduler address ("tcp://host:8786") or a ``distributed.Client``;
        the work then runs on that cluster (``pip install accelperf[dask]``)
    progress : called as ``progress(done, total)`` after each input
    limits : max_time, max_commits, max_firings_per_cycle, expected_done
    """
    from .loader import load_model
    if backend not in BACKENDS:
        raise ModelError(f"backend = {backend!r} is invalid: one of {', '.join(BACKENDS)}")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or workers < 1):
        raise ModelError(f"workers = {workers!r} is invalid: a whole number >= 1")
    spec = model if isinstance(model, str) else None
    model = load_model(model) if isinstance(model, str) else model
    if not isinstance(model, Model):
        raise ModelError(f"model = {model!r} is invalid: a built LPN model or its name")
    items = named_inputs(inputs)
    if not items:
        raise ModelError("inputs = [] is invalid: give at least one input")
    tick = progress or (lambda done, total: None)
    began = time.perf_counter()
    if scheduler is not None:
        rows, n, where = _on_cluster(spec or model, items, backend, limits, scheduler, tick)
    else:
        if backend != "python":               # build once, before the workers fork
            from .compiled import choose
            backend = "compiled" if choose(model, backend) is not None else "python"
        n = min(workers or os.cpu_count() or 1, len(items))
        rows, where = (_in_process(model, items, backend, limits, tick), "this process") \
            if n == 1 else (_local_pool(model, items, backend, limits, n, tick), "local pool")
    return BatchResult(model.name, tuple(rows), n, where, time.perf_counter() - began)


def _in_process(model, items, backend, limits, tick) -> list:
    rows = []
    for name, user_input in items:
        rows.append(run_one(model, name, user_input, backend, limits))
        tick(len(rows), len(items))
    return rows


def _local_pool(model, items, backend, limits, n, tick) -> list:
    # fork: the workers inherit the model (its Ψ may be a lambda, which pickle refuses),
    # the inputs and the compiled engine already loaded here; a task is a range of input
    # indices, a few per worker, so that handing out work costs little next to a short
    # compiled run.
    context = multiprocessing.get_context("fork")
    size = max(1, min(64, len(items) // (8 * n)))
    rows = [None] * len(items)
    with ProcessPoolExecutor(n, mp_context=context, initializer=_init_worker,
                             initargs=(model, items, backend, limits)) as pool:
        futures = [pool.submit(_pool_task, i, i + size) for i in range(0, len(items), size)]
        done = 0
        for future in as_completed(futures):
            first, chunk = future.result()
            rows[first:first + len(chunk)] = chunk
            done += len(chunk)
            tick(done, len(items))
    return rows


def _on_cluster(model, items, backend, limits, scheduler, tick):
    try:
        from distributed import Client, as_completed as cluster_completed
    except ImportError:
        raise ModelError("--scheduler needs Dask: pip install 'accelperf[dask]'") from None
    own = not isinstance(scheduler, Client)
    try:
        client = Client(scheduler, timeout="10s") if own else scheduler
    except OSError as exc:
        raise ModelError(f"scheduler = {scheduler!r} is invalid: cannot connect "
                         f"({_one_line(exc)})") from None
    try:
        shared = client.scatter(model, broadcast=True) if isinstance(model, Model) else model
        futures = [client.submit(_cluster_task, shared, name, x, backend, limits, pure=False)
                   for name, x in items]
        index = {f.key: i for i, f in enumerate(futures)}
        rows = [None] * len(items)
        for done, future in enumerate(cluster_completed(futures), 1):
            rows[index[future.key]] = future.result()
            tick(done, len(items))
        workers = len(client.scheduler_info().get("workers", {})) or 1
        return rows, workers, str(client.scheduler.address)
    finally:
        if own:
            client.close()
