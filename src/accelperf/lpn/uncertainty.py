"""How well measured latencies pin down each fitted delay of a calibration (issue 21).

Three methods, each giving every identifiable parameter a 68.27 % interval (one standard
deviation of a normal either side) in whole cycles and a standard error in cycles:

``profile`` (the default)
    For parameter θⱼ, walk its integer values away from the fit, one cycle at a time,
    refitting every other parameter at each (so a correlated partner may compensate), and
    keep the values whose least-squares cost ``S`` of the relative errors stays within the
    F threshold of a profile likelihood (Bates & Watts, *Nonlinear Regression Analysis*,
    §6.1.2; the profile-t)::

        S(θⱼ) ≤ S_min · (1 + F(0.6827; 1, n − p) / (n − p))

    The interval is the run of accepted values; the standard error reported with it is
    its half-width. It follows the model's true (piecewise-linear, integer) response, so
    it is asymmetric where a regime boundary is near; on noise-free data ``S_min`` is 0
    and only the fitted value passes, so the interval is that one value.
``bootstrap``
    Refit on ``resamples`` resamples of the measured rows (with replacement, seeded), from
    the fit; the interval is the 15.87–84.13 percentile range of the refitted values and
    the standard error their standard deviation. Makes no linearity assumption but, on
    ten rows, a resample often repeats rows and leaves others out, which widens some
    intervals and collapses others.
``linear``
    The asymptotic standard error ``s·√((JᵀJ)⁻¹ⱼⱼ)`` with ``s² = S_min / (n − p)`` at the
    fit (J: the Jacobian of the relative errors, one cycle per step), and the interval
    the whole values within ``fitted ± stderr``. One Jacobian, no refit; exact only where
    the latency is linear in the parameters across the interval.

Why profile by default, measured by ``benchmarks/lpn_calibrate_uncertainty.py`` (the block
pipeline with perturbed delays, 12 streams, 1 % normal noise on each latency, 20 data
sets, true values known): the profile's intervals held the true value in 85 % of cases
(nominal 68 %; whole-cycle intervals cannot be narrower than one value) with a mean
width of 0.81 cycles, for 2,751 simulations per data set (6.9x the fit's time; the
profile runs the fit's neighbourhood search before it ends an interval, issue 35); the
bootstrap's 82 %, 0.85 cycles, for 2,588 (7.8x); the linear one's 88 % but 1.60 cycles
wide, and on the JPEG decoder's RTL data it calls ``header_base`` 49 ± 85 cycles where
whole values of the per-byte cost leave 49..50 (it treats the delays as real numbers).
Parameters the data cannot identify (no input sensitive to them, or confounded with
another) get no interval from any method: the calibration names them in its warnings
instead.
"""

from __future__ import annotations

import contextlib
import math
import warnings
import numpy as np

from ..errors import invalid
from ..parameters import Estimate   # the uncertainty part of a Parameter

CONFIDENCE = 0.6827             # one standard deviation of a normal, either side
PROFILE_MAX_STEPS = 200         # cycles walked each way before an interval is called open
BOOTSTRAP_RESAMPLES = 100
BOOTSTRAP_SEED = 0
METHODS = ("profile", "bootstrap", "linear")


def check_method(method: str) -> str:
    if method not in METHODS:
        raise invalid("uncertainty", method, f"one of {', '.join(METHODS)}")
    return method


def estimate(method: str, fitter, values: dict[str, int], names: list[str], rows,
             live: list[str]) -> dict[str, Estimate]:
    """The uncertainty of each name in ``live`` (identifiable, fitted) by ``method``, for
    a fit of ``names`` to ``rows`` that ended at ``values``; empty when there are no more
    rows than live parameters (a fit through every point says nothing of its noise)."""
    check_method(method)
    if len(rows) <= len(live) or not live:
        return {}
    if method == "linear":
        return linear(fitter, values, names, rows, live)
    if method == "profile":
        return profile(fitter, values, names, rows, live)
    return bootstrap(fitter, values, names, rows, live)


def linear(fitter, values, names, rows, live) -> dict[str, Estimate]:
    J = fitter.jacobian(values, live, rows)
    sensitive = [k for k in range(len(live)) if np.any(J[:, k])]   # a flat one: no slope
    J, live = J[:, sensitive], [live[k] for k in sensitive]
    r = fitter.residuals(values, rows)
    s2 = float(r @ r) / (len(rows) - len(live))
    try:
        cov = s2 * np.linalg.inv(J.T @ J)
    except np.linalg.LinAlgError:
        return {}
    out = {}
    for k, name in enumerate(live):
        se, spec = math.sqrt(max(cov[k, k], 0.0)), fitter.spec[name]
        low, high = math.ceil(values[name] - se), math.floor(values[name] + se)
        out[name] = Estimate(se, low if spec.minimum is None else max(low, spec.minimum),
                             high if spec.maximum is None else min(high, spec.maximum))
    return out


def profile_threshold(cost: float, n: int, p: int) -> float:
    """The largest cost inside the 68.27 % profile region (module docstring)."""
    from scipy.stats import f
    dof = n - p
    return cost * (1 + float(f.ppf(CONFIDENCE, 1, dof)) / dof)


def profile(fitter, values, names, rows, live) -> dict[str, Estimate]:
    limit = profile_threshold(fitter.cost(values, rows), len(rows), len(live))
    out = {}
    for name in live:
        (low, open_low), (high, open_high) = (
            profile_walk(fitter, values, names, rows, name, direction, limit)
            for direction in (-1, 1))
        out[name] = Estimate((high - low) / 2, low, high, open_low or open_high)
    return out


def profile_walk(fitter, values, names, rows, name: str, direction: int, limit: float,
                 steps: int = PROFILE_MAX_STEPS) -> tuple[int, bool]:
    """One side of ``name``'s profile: walk it from ``values`` one cycle at a time in
    ``direction``, refitting the other ``names``, while the cost stays within
    ``limit``; the last value accepted, and whether ``steps`` ran out first (open)."""
    spec, others = fitter.spec[name], [n for n in names if n != name]
    current, end = dict(values), values[name]
    for _ in range(steps):
        v = end + direction
        if not fitter.within(name, v):
            return end, False
        accepted = current
        current = fitter.fit({**current, name: v}, others, rows)
        if fitter.cost(current, rows) > limit and others:
            # before calling it the end, the neighbourhood search, then moves along a
            # partner's plateau: descent alone stops on a plateau of a quantised partner,
            # e.g. header bytes that must grow with the bytes per cycle (issue 35)
            current = fitter.search(current, others, rows)
            if fitter.cost(current, rows) > limit:
                current = fitter.along_plateaus(accepted, name, v, others, rows, limit)
        if fitter.cost(current, rows) > limit:
            return end, False
        end = v
    return end, True


def bootstrap(fitter, values, names, rows, live, resamples: int = BOOTSTRAP_RESAMPLES,
              seed: int = BOOTSTRAP_SEED) -> dict[str, Estimate]:
    rng = np.random.default_rng(seed)
    rows = np.asarray(rows)
    refits = []
    for _ in range(resamples):
        sample = rows[rng.integers(0, len(rows), len(rows))]
        fitted = fitter.fit(values, names, sample)
        refits.append([fitted[n] for n in live])
    draws = np.array(refits, dtype=float)
    tail = 100 * (1 - CONFIDENCE) / 2
    out = {}
    for k, name in enumerate(live):
        lo, hi = np.percentile(draws[:, k], [tail, 100 - tail])
        out[name] = Estimate(float(np.std(draws[:, k], ddof=1)), math.floor(lo),
                             math.ceil(hi))
    return out


def widen(fitter, values, live, rows, found: dict[str, Estimate]) -> dict[str, Estimate]:
    """An estimate that collapsed to one value (``[x, x]``, standard error 0) while the
    fit leaves a residual (``S_min > 0``) made as wide as the linearised one: a profile
    or bootstrap in whole cycles can collapse so on noisy data (or where its refits
    stop short), claiming a certainty the residual does not give. On exact data
    (``S_min = 0``) one value is all the data allow, and wider estimates are the
    method's own (the profile's follow the integer response; the linear one's do not)."""
    if not found or fitter.cost(values, rows) == 0:
        return found
    floor = linear(fitter, values, list(live), rows, list(live)) if len(rows) > len(live) \
        else {}
    out = dict(found)
    for name, e in found.items():
        f = floor.get(name)
        if f is not None and e.low == e.high:
            out[name] = Estimate(max(e.stderr, f.stderr), min(e.low, f.low),
                                 max(e.high, f.high), e.open)
    return out


@contextlib.contextmanager
def quiet_numpy():
    """Silence NumPy's floating-point RuntimeWarnings where they are expected (a
    singular JᵀJ, a zero column scaled, an empty fold): the calibration checks those
    cases itself and reports them in its own warnings."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


__all__ = ["Estimate", "widen", "quiet_numpy", "METHODS", "CONFIDENCE", "check_method", "estimate", "linear",
           "profile", "profile_walk", "bootstrap", "profile_threshold"]
