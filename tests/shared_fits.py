"""LogCA fits chosen by cross-validation (:func:`accelperf.logca.choose.choose`), computed
once per test process and shared by the tests and pages that ask for the same one.

The shipped GPU measurements are fitted in four places: the demo's GPU section
(tests/test_demo.py), the issue targets' fixture of tests/test_logca_select.py, and the
`logca fit --select` blocks of docs/how-to/gpu-pays-off.md and README.md. The same
training halves and files came to 11 s of fits asked for twice or three times.
tests/conftest.py runs those four as one work unit, so one worker computes each fit once.

While :func:`reusing_fits` is active, ``choose`` (and ``holdout_check``, which calls it)
gives one computation per distinct request: the data's arrays, the layers, the folds, the
name, the jackknife and the thresholds. A fit is a pure function of those; the memo gives
later equal requests that very (frozen) object.

:func:`reusing_calibrations` does the same for ``accelperf.lpn.calibrate.calibrate``: the
README, docs/how-to/calibrate.md and tests/test_lpn_calibrate.py's command-line test all
run `lpn calibrate jpeg-decoder --measured examples/measurements/core_jpeg_train.csv`
(8 s each), in the same work unit.
"""

from __future__ import annotations

import contextlib
import dataclasses

import numpy as np
import pytest

import accelperf.logca.choose as choosing
import accelperf.lpn.calibrate as calibrating

_FITS: dict = {}        # request -> ChosenFit
_CALIBRATIONS: dict = {}    # request -> Calibration


def _request(d, layers, folds, name, jackknife, thresholds) -> tuple:
    arrays = tuple(None if a is None else (a.dtype.str, a.shape, a.tobytes())
                   for a in (d.g, d.t0, d.t1, d.echo))
    return (arrays, repr(d.excluded), repr(tuple(layers)), folds, name, jackknife,
            repr(tuple(thresholds)))


@contextlib.contextmanager
def reusing_fits():
    """``choose`` computed once per request in this process while the block runs."""
    fresh = choosing.choose

    def choose(d, layers=(), folds=None, name=None, jackknife=True,
               thresholds=(choosing.MMAP,)):
        key = _request(d, layers, folds, name, jackknife, thresholds)
        if key not in _FITS:
            _FITS[key] = fresh(d, layers, folds, name, jackknife, thresholds)
        return _FITS[key]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(choosing, "choose", choose)
        yield


def _builder_key(builder) -> tuple:
    """A builder by its code and what it closes over (`lpn calibrate`'s is a lambda over
    the model's name and the start values, made afresh for each run)."""
    cells = tuple(repr(c.cell_contents) for c in builder.__closure__ or ())
    return builder.__code__, cells


def _input_key(value) -> tuple:
    """A measured input by what Ψ reads of it: a JPEG's blocks without its name (the path
    it was read from, relative to wherever the command ran), anything else by its repr."""
    if dataclasses.is_dataclass(value):
        return (type(value).__name__,) + tuple(
            _hashable(getattr(value, f.name)) for f in dataclasses.fields(value)
            if f.name != "name")
    return (repr(value),)


def _hashable(value):
    if isinstance(value, np.ndarray):
        return value.dtype.str, value.shape, value.tobytes()
    if isinstance(value, (list, tuple)):
        return tuple(_hashable(v) for v in value)
    return value


@contextlib.contextmanager
def reusing_calibrations():
    """``calibrate`` computed once per request in this process while the block runs: the
    builder, each measurement (its name, what Ψ reads of its input, its cycles) and the
    options."""
    fresh = calibrating.calibrate

    def calibrate(builder, measurements, fit=None, start=None, folds=5,
                  uncertainty="profile", starts=calibrating.STARTS):
        key = (_builder_key(builder),
               tuple((m.name, _input_key(m.input), m.cycles) for m in measurements),
               None if fit is None else tuple(fit), repr(sorted((start or {}).items())),
               folds, uncertainty, starts)
        if key not in _CALIBRATIONS:
            _CALIBRATIONS[key] = fresh(builder, measurements, fit, start, folds, uncertainty,
                                       starts)
        return _CALIBRATIONS[key]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(calibrating, "calibrate", calibrate)
        yield
