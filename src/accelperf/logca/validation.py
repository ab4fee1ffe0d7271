"""Cross-validation of a forward selection's candidates, in this process or over several.

A step of :func:`.choose.choose` cross-validates every candidate term set on the same k
folds. Each fold's solve is a pure function of the fold's sizes and the candidate's terms
(:func:`.termfit.solve`: start values from those sizes alone, a deterministic solver), so
the folds may be solved in any process and in any order and the choice is the same to the
last bit (tests/test_logca_validation.py compares the two). One task is one fold with every
candidate of the step: the candidates that share host terms then share the fold's host
stage (:class:`.termfit.HostStages`) in the process that solves them, as they do in a
serial run.

The processes are started once and reused by the fits after it: forked on Linux, where
they start at once with the fit imported; spawned elsewhere, where a script that asks for
``workers`` > 1 needs the ``if __name__ == "__main__":`` guard (each spawned process
imports the script's main module, as for any multiprocessing).
"""

from __future__ import annotations

import multiprocessing
import operator
import os
import sys
import uuid
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import numpy as np

from ..errors import invalid
from .fit import FitData
from .holdout import fold_indices
from .termfit import HostStages, Spec, free_count, solve, subset

# The default of `workers` where a caller asks for it (None: every CPU this process may
# run on). tests/conftest.py sets 1: pytest-xdist already runs a test process on each core.
WORKERS: int | None = None


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the system has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:          # macOS, Windows
        return os.cpu_count() or 1


def default_workers() -> int:
    return WORKERS or available_cpus()


def check_workers(workers) -> int:
    """``workers`` as an int (a NumPy integer too), or the one-line refusal."""
    try:
        count = operator.index(workers)
    except TypeError:
        count = 0
    if isinstance(workers, bool) or count < 1:
        raise invalid("workers", workers, "a whole number of processes, 1 or more")
    return count


def refused(d: FitData, spec: Spec, folds) -> bool:
    """Whether a fold has fewer sizes than the candidate has free parameters."""
    return any(tr.size < free_count(spec, d.echo is not None) for tr, _ in folds)


def fold_score(d: FitData, folds, models) -> float:
    """The mean |relative speedup error| of each fold's model on the sizes it left out."""
    errors = []
    for (_, test), model in zip(folds, models):
        with np.errstate(all="ignore"):
            pred = np.asarray(model.speedup(d.g[test]), float)
        errors.extend(np.abs(pred / (d.t0[test] / d.t1[test]) - 1))
    return float(np.mean(errors))


class Validation:
    """The cross-validated speedup errors of term sets on one data set, each refitted from
    scratch on every fold and computed once (:meth:`run`); ``validation[spec]`` is (the
    mean |relative speedup error| on the sizes left out, or None where a fold has fewer
    sizes than the spec has free parameters; the fold models)."""

    def __init__(self, d: FitData, k: int, workers: int = 1):
        self.d, self.folds, self.workers = d, fold_indices(d.n, k), check_workers(workers)
        self._parts = [subset(d, train) for train, _ in self.folds]
        self._done: dict[Spec, tuple] = {}
        self._stages = HostStages()
        self._token = uuid.uuid4().hex      # names this data set's stages in the workers

    def __getitem__(self, spec: Spec) -> tuple:
        return self._done[spec]

    def run(self, specs) -> None:
        """Cross-validate the ``specs`` not validated yet."""
        todo = []
        for spec in dict.fromkeys(specs):
            if spec in self._done:
                continue
            if refused(self.d, spec, self.folds):
                self._done[spec] = (None, ())
            else:
                todo.append(spec)
        if not todo:
            return
        parts = self._parts
        if self.workers > 1:
            # no more processes than folds (a step has one task per fold)
            per_fold = _in_processes(min(self.workers, len(parts)), self._token, parts,
                                     todo)
        else:
            per_fold = [_solve_fold(part, todo, self._stages) for part in parts]
        for j, spec in enumerate(todo):
            models = tuple(fold[j] for fold in per_fold)
            self._done[spec] = (fold_score(self.d, self.folds, models), models)


def _solve_fold(part: FitData, specs, stages: HostStages) -> list:
    return [solve(part, spec, host_stages=stages).model for spec in specs]


# ------------------------------------------------------------------------ the processes
_pool: tuple[int, ProcessPoolExecutor] | None = None
_worker_stages: tuple[str, HostStages] = ("", HostStages())


def _in_worker(token: str, part: FitData, specs) -> list:
    """One fold's models in a worker process, with the host stages of the data set that
    ``token`` names (a new data set starts them afresh: memory stays one fit's)."""
    global _worker_stages
    if _worker_stages[0] != token:
        _worker_stages = (token, HostStages())
    return _solve_fold(part, specs, _worker_stages[1])


def _executor(workers: int) -> ProcessPoolExecutor:
    global _pool
    if _pool is None or _pool[0] != workers:
        if _pool is not None:
            _pool[1].shutdown(cancel_futures=True)
        # fork on Linux, as lpn/batch.py: the workers start with the fit already imported
        # and do not import the caller's main module again (a fork server or a spawn does,
        # and a script without the `if __name__ == "__main__":` guard then fits again in
        # every worker). Forked before the pool's manager thread starts: ProcessPoolExecutor
        # starts every fork-context worker at the first submission.
        method = "fork" if sys.platform.startswith("linux") else "spawn"
        _pool = (workers, ProcessPoolExecutor(workers,
                                              mp_context=multiprocessing.get_context(method)))
    return _pool[1]


def _in_processes(workers: int, token: str, parts, specs) -> list[list]:
    """Each fold's models, solved in the pool; a pool that an interrupt or a killed worker
    broke is started again once."""
    global _pool
    try:
        return _each_fold(workers, token, parts, specs)
    except BrokenProcessPool:
        _pool[1].shutdown(wait=False, cancel_futures=True)
        _pool = None
        return _each_fold(workers, token, parts, specs)


def _each_fold(workers: int, token: str, parts, specs) -> list[list]:
    pool = _executor(workers)
    futures = [pool.submit(_in_worker, token, part, specs) for part in parts]
    try:
        return [f.result() for f in futures]
    except BaseException:
        # an interrupt (a notebook's stop button) leaves no folds queued for the next fit
        for f in futures:
            f.cancel()
        raise
