"""LogCA fits chosen by cross-validation (:func:`accelperf.logca.choose.choose`), computed
once per test process and shared by the tests and pages that ask for the same one.

The shipped GPU measurements are fitted in four places: the demo's GPU section
(tests/test_demo.py), the issue targets' fixture of tests/test_logca_select.py, and the
`logca fit --select` blocks of docs/how-to/gpu-pays-off.md and README.md. The same
training halves and files came to 11 s of fits asked for twice or three times.
tests/conftest.py runs those four as one work unit, so one worker computes each fit once.

While :func:`reusing_fits` is active, ``choose`` (and ``holdout_check``, which calls it)
gives one computation per distinct request: the data's arrays, the layers, the folds, the
jackknife and the thresholds. A fit is a pure function of those; the memo gives later
equal requests that very (frozen) object, relabelled with the name each call gives (the
name labels the model and is read by nothing else).

:func:`reusing_calibrations` does the same for ``accelperf.lpn.calibrate.calibrate``: the
README, docs/how-to/calibrate.md and tests/test_lpn_calibrate.py's command-line test all
run `lpn calibrate jpeg-decoder --measured examples/measurements/core_jpeg_train.csv`
(8 s each), in the same work unit.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect

import numpy as np
import pytest

import accelperf.logca.choose as choosing
import accelperf.lpn.calibrate as calibrating

_MEMOS: dict = {}       # (module, function name) -> {request: result}


@contextlib.contextmanager
def _once_per_request(module, name: str, request, relabel=lambda result, arguments: result):
    """``module.name`` computed once per ``request(arguments)`` in this process while the
    block runs; ``arguments`` are the call's, bound to the function's own signature with
    its defaults filled in, so that a default left out and the same value given agree.
    ``relabel(result, arguments)`` gives a remembered result what this call asked for
    beyond the request (a label the computation does not read)."""
    fresh = getattr(module, name)
    signature = inspect.signature(fresh)
    memo = _MEMOS.setdefault((module.__name__, name), {})

    def once(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        key = request(bound.arguments)
        if key not in memo:
            memo[key] = fresh(*bound.args, **bound.kwargs)
        return relabel(memo[key], bound.arguments)
    once.fresh = fresh                  # what a test comparing with the memo calls

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, name, once)
        yield


def _fit_request(a: dict) -> tuple:
    """What ``choose`` computes from: not its ``name``, which only labels the model (the
    demo, `logca fit` and the benchmark named the same GEMM fit three ways: 3.9 s each)."""
    d = a["d"]
    arrays = tuple(None if x is None else _hashable(x) for x in (d.g, d.t0, d.t1, d.echo))
    return (arrays, repr(d.excluded), repr(tuple(a["layers"])), a["folds"],
            a["jackknife"], repr(tuple(a["thresholds"])))


def _named(fit, arguments: dict):
    """The remembered fit as ``choose(..., name=...)`` gives it: the name is on the model
    and its base, and nothing else in the fit reads it (tests/test_logca_select.py
    compares a relabelled fit with one made under that name)."""
    name = arguments["name"]
    if fit.model.name == name:
        return fit
    model = dataclasses.replace(fit.model, name=name,
                                base=dataclasses.replace(fit.model.base, name=name))
    return dataclasses.replace(fit, model=model,
                               solved=dataclasses.replace(fit.solved, model=model))


def reusing_fits():
    """``choose`` computed once per request in this process while the block runs."""
    return _once_per_request(choosing, "choose", _fit_request, _named)


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


def _calibration_request(a: dict) -> tuple:
    fit, start = a["fit"], a["start"]
    return (_builder_key(a["builder"]),
            tuple((m.name, _input_key(m.input), m.cycles) for m in a["measurements"]),
            None if fit is None else tuple(fit), repr(sorted((start or {}).items())),
            a["folds"], a["uncertainty"], a["starts"])


def reusing_calibrations():
    """``calibrate`` computed once per request in this process while the block runs: the
    builder, each measurement (its name, what Ψ reads of its input, its cycles) and the
    options."""
    return _once_per_request(calibrating, "calibrate", _calibration_request)
