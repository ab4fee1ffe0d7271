"""The cross-validation of a forward selection (accelperf.logca.validation): its folds
solved in other processes, and each fold's host stage shared by the candidates with the
same host terms, give the fit a serial run without sharing gives, to the last bit."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import numpy as np
import pytest

from accelperf.errors import ModelError
from accelperf.logca import validation
from accelperf.logca.choose import choose
from accelperf.logca.fit import prepare_data
from accelperf.logca.hierarchy import MemoryLayer
from accelperf.logca.termfit import HostStages, Spec, solve, subset

L2 = MemoryLayer("L2", 2**21)
SORT = Path(__file__).resolve().parent.parent / "examples/measurements/gpu-h200/gpu-sort.csv"


def offload(g):
    """A GPU-like offload whose host steps up past 2 MiB: the selection takes the step,
    a host constant and the kernel's floor over several steps."""
    g = np.asarray(g, float)
    t0 = 5e-6 + 2e-10 * g**1.05 * np.where(g > 2**21, 3.0, 1.0)
    echo = 1.5e-5 + 3e-11 * g
    return prepare_data(g, t0, echo + np.maximum(8e-6, 1e-11 * g), echo, None, None)


def same_fit(a, b) -> None:
    assert a.solved.x.tobytes() == b.solved.x.tobytes()
    assert (a.cv_error, a.terms, a.g1, a.warnings) == (b.cv_error, b.terms, b.g1, b.warnings)


def test_folds_solved_in_processes_give_the_serial_fit_to_the_bit():
    d = offload(2.0 ** np.arange(12, 26))
    serial = choose(d, (L2,), workers=1)
    assert len([t for t in serial.terms if t.kept]) >= 2     # more than one step
    same_fit(choose(d, (L2,), workers=2), serial)


def test_a_shared_host_stage_is_the_stage_solved_afresh():
    part = subset(offload(2.0 ** np.arange(12, 26)), np.arange(0, 14, 2))
    shared = HostStages()
    accelerator_only = [Spec(), Spec(floor=True), Spec(accel_beta=True),
                        Spec(floor=True, accel_beta=True)]
    for spec in accelerator_only + [Spec(host_constant=True),
                                    Spec(host_constant=True, floor=True)]:
        again = solve(part, spec, host_stages=shared)
        assert again.x.tobytes() == solve(part, spec).x.tobytes(), spec
    assert len(shared) == 2                 # one stage each for without and with c0


def test_a_pool_that_lost_a_worker_is_started_again():
    d = offload(2.0 ** np.arange(12, 22))
    run = validation.Validation(d, 5, workers=2)
    run.run([Spec()])
    broken = validation._pool[1]
    for pid in list(broken._processes):
        os.kill(pid, signal.SIGKILL)
    run.run([Spec(floor=True)])
    assert validation._pool[1] is not broken
    serial = validation.Validation(d, 5)
    serial.run([Spec(floor=True)])
    assert run[Spec(floor=True)][0] == serial[Spec(floor=True)][0]


def test_a_numpy_integer_is_a_number_of_workers():
    assert validation.check_workers(np.int64(3)) == 3


@pytest.mark.parametrize("workers", [0, -2, 1.5, True, "2"])
def test_workers_must_be_a_whole_number_of_processes(workers):
    with pytest.raises(ModelError, match=r"workers = .* is invalid: a whole number"):
        choose(offload(2.0 ** np.arange(12, 22)), workers=workers)


def test_the_command_refuses_no_workers(cli):
    code, out, err = cli("logca", "fit", str(SORT), "--select", "--workers", "0")
    assert code == 2 and "--workers" in err and len(err.strip().splitlines()) == 1


def test_workers_without_select_is_refused(cli):
    code, out, err = cli("logca", "fit", str(SORT), "--workers", "2")
    assert code == 2 and "--workers = 2 is not used without --select" in err
