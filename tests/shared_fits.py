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
"""

from __future__ import annotations

import contextlib

import pytest

import accelperf.logca.choose as choosing

_FITS: dict = {}        # request -> ChosenFit


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
