"""Many inputs through one net: a local process pool by default, or a Dask cluster.

The batch use cases of OSDI'24 are many inputs on one accelerator (§5.3.3: TVM
auto-tuning simulates 1,500 instruction sequences; the JPEG evaluation 60,000 images).
:class:`BatchRun` streams one row per input as each finishes; :func:`simulate_many`
collects them in input order. An input that fails (a bad input, a deadlock, a limit)
gives a row with its error and never stops the others.

What makes a long batch safe to run (issue 22):

* inputs can be given as names (file paths or JSON text) that are read and parsed where
  they run — a worker of the local pool or of the cluster — so the client holds names,
  not data, and only a window of them at a time;
* a worker that dies (a killed process, a lost Dask worker) costs a retry of the inputs
  it held, one by one; an input that takes a worker down twice is a failed row;
* rows come out as they finish, so a caller can write each at once (``lpn simulate
  --out``) and a killed batch keeps every finished row.

The compiled engine is built once, before the work is shared out: the forked local
workers inherit it, and Dask workers load it from the cache (or build it once each).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import tempfile
import time
from collections import deque
from dataclasses import dataclass
from itertools import islice
from multiprocessing.connection import wait
from pathlib import Path

from ..errors import ModelError, install_hint, invalid
from .net import Model
from .outcome import Interrupted
from .sim import BACKENDS, simulate

CRASHED = "it took its worker down twice (killed, or out of memory?)"
CLUSTER_ROUNDS = 2
"""Rounds alone in which Dask must give up on an input (each after its allowed-failures)
before it becomes a failed row."""
CLUSTER_CRASHED = ("it took its worker down each time Dask ran it, alone (killed, or out of "
                   "memory?)")
WORKERLESS_SECONDS = 30.0
"""How long a batch waits on a cluster that has no worker left (a Nanny whose restarted
worker died before it had reported in closes for good) before it stops with its rows kept,
rather than waiting for ever."""


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


def one_line(text) -> str:
    return " ".join(str(text).split())


def failed_row(name: str, error: str, seconds: float = 0.0) -> BatchRow:
    return BatchRow(name, None, None, None, seconds, None, one_line(error))


def load_payload(payload, model: Model):
    """An input given by name: a file path or JSON text (read here, by
    :func:`.loader.load_input`), or ``(suffix, bytes)`` of a file the client read."""
    from .loader import load_input
    if isinstance(payload, tuple):
        suffix, data = payload
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / f"input{suffix}"
            path.write_bytes(data)
            return load_input(str(path), model)
    return load_input(payload, model)


def run_one(model: Model, name: str, user_input, backend: str, limits: dict,
            by_name: bool = False) -> BatchRow:
    """One input (read first when ``by_name``), its failure caught into the row."""
    began = time.perf_counter()
    try:
        if by_name:
            user_input = load_payload(user_input, model)
        r = simulate(model, user_input, backend=backend, **limits)
    except Interrupted:                # Ctrl-C stops the batch, not one input
        raise KeyboardInterrupt from None
    except ModelError as exc:          # bad input, deadlock, limit, evaluation error
        return failed_row(name, exc, time.perf_counter() - began)
    except Exception as exc:           # noqa: BLE001 - one input must not stop the rest
        return failed_row(name, f"{type(exc).__name__}: {exc}", time.perf_counter() - began)
    return BatchRow(name, r.latency, r.total_commits, r.bottleneck,
                    time.perf_counter() - began, r.backend)


def _run_task(model, task, backend, limits, by_name) -> list:
    return [(i, run_one(model, name, x, backend, limits, by_name)) for i, name, x in task]


def _pool_worker(conn, siblings, model, backend, limits, by_name, inherited):
    """A forked worker: tasks in, rows out, until told to stop or the pipe closes. With
    ``inherited`` (the parent's list of (name, input), inherited by fork, never pickled)
    a task holds input indices only."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)      # Ctrl-C is the parent's to handle
    for other in siblings:       # the parent's ends of the other workers' pipes: closed,
        other.close()            # so that each worker sees EOF when the parent dies
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        if inherited is not None:
            task = [(i, name, inherited[i][1]) for i, name, _ in task]
        rows = _run_task(model, task, backend, limits, by_name)
        try:
            conn.send(rows)
        except OSError:          # BrokenPipeError: the client is gone, and so is the work
            return


def _cluster_task(spec, task, backend: str, limits: dict, by_name: bool) -> list:
    """On a Dask worker: the model by library name or file spec, built once per worker."""
    from .loader import load_model
    cache = _cluster_task.__dict__.setdefault("models", {})
    if isinstance(spec, Model):
        model = spec
    else:
        if spec not in cache:
            cache[spec] = load_model(spec)
        model = cache[spec]
    return _run_task(model, task, backend, limits, by_name)


SCHEMES = ("tcp", "tls", "ws", "wss", "ucx", "inproc")


def check_scheduler(address, timeout: float = 3.0) -> None:
    """Refuse a Dask scheduler address before anything is written: its form
    (``[tcp://]host:port``), Dask being installed, and (for a network address) a TCP
    connection within ``timeout`` seconds. A ``distributed.Client`` passes as it is."""
    import socket
    if not isinstance(address, str):
        return
    scheme, sep, rest = address.partition("://")
    if not sep:
        scheme, rest = "tcp", address
    if scheme not in SCHEMES:
        raise invalid("scheduler", address, f"an address such as tcp://host:8786 (the protocol "
                                            f"is one of {', '.join(SCHEMES)})")
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise invalid("scheduler", address,
                      f"it needs Dask: {install_hint('dask')}") from None
    if scheme in ("inproc", "ucx"):
        return
    host, colon, port_text = rest.rstrip("/").rpartition(":")
    host = host.strip("[]")
    if not colon or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise invalid("scheduler", address, "an address such as tcp://host:8786 (a host, then "
                                            "a port 1..65535)")
    try:
        socket.create_connection((host, int(port_text)), timeout=timeout).close()
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise invalid("scheduler", address, f"no scheduler answers there ({why}): start "
                                            f"one (dask scheduler) or fix the address") from None


def check_workers(workers) -> None:
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or workers < 1):
        raise ModelError(f"workers = {workers!r} is invalid: a whole number >= 1")


def named_inputs(inputs) -> list[tuple[str, object]]:
    """(name, input) pairs from a dict, a list of pairs, or a plain list (named 0, 1, ...)."""
    if isinstance(inputs, dict):
        return [(str(k), v) for k, v in inputs.items()]
    items = list(inputs)
    if items and all(isinstance(i, tuple) and len(i) == 2 and isinstance(i[0], str)
                     for i in items):
        return items
    return [(str(i), v) for i, v in enumerate(items)]


class BatchRun:
    """A batch about to run: iterate it for ``(input index, BatchRow)`` as inputs finish
    (in any order). ``items`` is any iterable of (name, input), read lazily, a window at
    a time; with ``by_name`` each input is a file path or JSON text that the worker reads
    (on a cluster, ``ship_bytes`` reads files here and sends their bytes instead)."""

    def __init__(self, model, items, *, backend: str = "python", workers: int | None = None,
                 scheduler=None, by_name: bool = False, ship_bytes: bool = False,
                 chunk: int | None = None, limits: dict | None = None):
        from .loader import load_model
        if backend not in BACKENDS:
            raise ModelError(f"backend = {backend!r} is invalid: one of {', '.join(BACKENDS)}")
        check_workers(workers)
        self.spec = model if isinstance(model, str) else None
        self.model = load_model(model) if isinstance(model, str) else model
        if not isinstance(self.model, Model):
            raise ModelError(f"model = {model!r} is invalid: a built LPN model or its name")
        # a list is shared with forked workers as it is; any other iterable is read lazily
        self.inherited = items if isinstance(items, list) and not by_name else None
        self.items, self.backend, self.scheduler = iter(items), backend, scheduler
        self.by_name, self.ship_bytes = by_name, ship_bytes
        self.limits = limits or {}
        self.workers = workers or os.cpu_count() or 1
        self.chunk = chunk
        self.where = "this process" if scheduler is None and self.workers == 1 else \
            "local pool" if scheduler is None else str(scheduler)

    def _tasks(self, size: int):
        """Tasks of up to ``size`` (index, name, input), read from the items lazily."""
        numbered = ((i, name, x) for i, (name, x) in enumerate(self.items))
        while True:
            task = list(islice(numbered, size))
            if not task:
                return
            if self.ship_bytes:
                task = [(i, name, _file_bytes(x)) for i, name, x in task]
            yield task

    def __iter__(self):
        if self.scheduler is not None:
            yield from self._on_cluster()
            return
        if self.backend != "python":               # build once, before the workers fork
            from .compiled import choose
            self.backend = "compiled" if choose(self.model, self.backend) is not None \
                else "python"
        if self.workers == 1:
            for task in self._tasks(1):
                yield from _run_task(self.model, task, self.backend, self.limits,
                                     self.by_name)
            return
        yield from self._local_pool()

    def _local_pool(self):
        # fork: the workers inherit the model (its Ψ may be a lambda, which pickle
        # refuses) and the compiled engine already loaded here; a task is a few inputs,
        # so that handing out work costs little next to a short compiled run. A worker
        # holds one task at a time, so a dead worker's task is known and retried.
        context = multiprocessing.get_context("fork")
        tasks = self._tasks(self.chunk or 16)
        if self.inherited is not None:                # the workers have the inputs
            tasks = ([(i, name, None) for i, name, _ in task] for task in tasks)
        retry: deque = deque()
        crashes: dict[int, int] = {}
        held: dict = {}                           # connection -> [process, task or None]

        def spawn():
            parent, child = context.Pipe()
            process = context.Process(target=_pool_worker, daemon=True, args=(
                child, list(held) + [parent], self.model, self.backend, self.limits,
                self.by_name, self.inherited))
            process.start()
            child.close()
            held[parent] = [process, None]

        def next_task():
            return retry.popleft() if retry else next(tasks, None)

        for _ in range(self.workers):
            spawn()
        try:
            more = True
            while held:
                for conn, slot in list(held.items()):
                    if slot[1] is not None:
                        continue
                    task = next_task() if more or retry else None
                    if task is None:
                        more = False
                    try:
                        conn.send(task)
                    except OSError:               # it died between two tasks
                        if task is not None:
                            retry.appendleft(task)
                        task = None
                    if task is None:
                        del held[conn]
                        slot[0].join()
                        conn.close()
                        if more or retry:
                            spawn()
                        continue
                    slot[1] = task
                if not held:
                    break
                ready = wait(list(held) + [slot[0].sentinel for slot in held.values()])
                for conn in [c for c in held if c in ready or held[c][0].sentinel in ready]:
                    process, task = held[conn]
                    try:
                        rows = conn.recv() if conn.poll() else None
                    except (EOFError, OSError):   # the pipe closed: the worker is dying
                        rows = None
                    else:
                        if rows is not None:
                            held[conn][1] = None
                            yield from rows
                            continue
                        if process.is_alive():
                            continue
                    del held[conn]                 # the worker died holding `task`
                    process.join()
                    conn.close()
                    yield from self._retry(task, retry, crashes)
                    if more or retry:
                        spawn()
        finally:
            for conn, (process, _) in held.items():
                process.kill()
                process.join()
                conn.close()

    @staticmethod
    def _retry(task, retry: deque, crashes: dict):
        """A task whose worker died: its inputs again one by one; a lone input that took
        its worker down twice becomes a failed row."""
        if task is None:
            return
        if len(task) > 1:
            retry.extend([item] for item in task)
            return
        i, name, _ = task[0]
        crashes[i] = crashes.get(i, 0) + 1
        if crashes[i] >= 2:
            yield i, failed_row(name, CRASHED)
        else:
            retry.append(task)

    def _on_cluster(self):
        try:
            from distributed import Client
            from distributed import wait as first_of
            from distributed.client import FutureCancelledError, FuturesCancelledError
        except ImportError:
            raise ModelError(f"scheduler needs Dask: {install_hint('dask')}",
                             field="scheduler") from None
        own = not isinstance(self.scheduler, Client)
        try:
            client = Client(self.scheduler, timeout="10s") if own else self.scheduler
        except OSError as exc:
            raise ModelError(f"scheduler = {self.scheduler!r} is invalid: cannot connect "
                             f"({one_line(exc)})", field="scheduler") from None
        self.where = str(client.scheduler.address)
        self.workers = len(client.scheduler_info().get("workers", {})) or 1
        gone = (FutureCancelledError, FuturesCancelledError, OSError, TimeoutError)
        try:
            model = self.spec or client.scatter(self.model, broadcast=True)
            tasks = self._tasks(self.chunk or 64)
            retry: deque = deque()
            running = {}
            strikes: dict[int, int] = {}

            def submit(task, alone=False):
                future = client.submit(_cluster_task, model, task, self.backend, self.limits,
                                       self.by_name, pure=False)
                running[future] = (task, alone)

            def convicted(task) -> bool:
                # A loaded machine can lose a worker that was running an innocent input
                # (missed heartbeats, a nanny restarting after another input's crash), so
                # an input is convicted only when Dask gave up on it in two rounds alone.
                i = task[0][0]
                strikes[i] = strikes.get(i, 0) + 1
                return strikes[i] >= CLUSTER_ROUNDS

            def fill():
                # Dask blames every task on a worker that dies, so a task to retry runs
                # alone, one input at a time: losing a worker then convicts that input.
                if retry:
                    if not running:
                        submit(retry.popleft(), alone=True)
                    return
                while len(running) < 4 * self.workers + 4:
                    task = next(tasks, None)
                    if task is None:
                        return
                    submit(task)

            def went_away(exc):
                raise ModelError(f"scheduler {self.where} went away after {finished} rows "
                                 f"({type(exc).__name__}): the rows written so far are "
                                 f"kept; start the cluster again and run with `resume`")

            def finished_futures():
                # Each future as it finishes; a cluster seen without a worker for
                # WORKERLESS_SECONDS is an error, not a wait for ever.
                idle_since = None
                while running:
                    try:
                        try:
                            ready = first_of(list(running), timeout=1.0,
                                             return_when="FIRST_COMPLETED").done
                        except TimeoutError:
                            ready = ()
                        workers = ready or client.nthreads()
                    except gone as exc:
                        went_away(exc)
                    yield from ready
                    if workers:
                        idle_since = None
                    elif idle_since is None:
                        idle_since = time.monotonic()
                    elif time.monotonic() - idle_since > WORKERLESS_SECONDS:
                        raise ModelError(
                            f"scheduler {self.where} has had no worker for "
                            f"{WORKERLESS_SECONDS:.0f} s with {len(running)} task(s) "
                            f"pending: the rows written so far are kept; start workers "
                            f"and run with `resume`")

            fill()
            finished = 0
            for future in finished_futures():
                task, alone = running.pop(future)
                try:
                    rows = future.result()
                except gone as exc:
                    went_away(exc)
                except Exception as exc:   # noqa: BLE001 - KilledWorker: Dask gave up on it
                    if not alone:
                        retry.extend([item] for item in task)
                    elif convicted(task):
                        i, name, _ = task[0]
                        yield i, failed_row(name, f"{CLUSTER_CRASHED} ({type(exc).__name__})")
                        finished += 1
                    else:
                        retry.append(task)
                else:
                    finished += len(rows)
                    yield from rows
                fill()
        finally:
            if own:
                client.close()


def _file_bytes(text):
    """(suffix, bytes) of the file named ``text``, or the text itself (JSON) when it
    names no readable file: what the client sends when workers cannot read its paths."""
    path = Path(str(text))
    try:
        return path.suffix, path.read_bytes()
    except OSError:
        return text


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
    items = named_inputs(inputs)
    check_workers(workers)
    if scheduler is not None:
        check_scheduler(scheduler)
    if not items:
        raise ModelError("inputs = [] is invalid: give at least one input")
    run = BatchRun(model, items, backend=backend, scheduler=scheduler, limits=limits,
                   workers=min(workers or os.cpu_count() or 1, len(items)))
    tick = progress or (lambda done, total: None)
    began = time.perf_counter()
    rows = [None] * len(items)
    for done, (i, row) in enumerate(run, 1):
        rows[i] = row
        tick(done, len(items))
    return BatchResult(run.model.name, tuple(rows), run.workers, run.where,
                       time.perf_counter() - began)
