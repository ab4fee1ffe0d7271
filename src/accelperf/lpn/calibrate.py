"""Fit a model's named delay parameters to measured latencies (issue 21).

Given inputs with the cycles the hardware (RTL or chip) took on them, find integer values
of the parameters a model declares (:mod:`accelperf.lpn.params`) that minimise the
**relative** error ``(simulated − measured) / measured`` in the least-squares sense, and
say how far the model is before and after, where, and how well the data pins each value.

Method, and why
---------------
A model's latency is a piecewise-linear function of its delays: within one regime (the
same unit is the bottleneck, the same firings overlap) every cycle of latency is a sum of
delays, so it is exactly linear in them; between regimes the slope changes (a max of two
such sums). The interface formulas of lpn2pi would give that closed form, but they are
computed on the model's numbers (a parameter is a named constant, see
:mod:`~accelperf.lpn.params`), and a fit needs the latency of the very inputs measured,
headers and all, not of an input class. So the fit is an **integer Gauss–Newton on
simulations**, which uses that structure:

1. the Jacobian by a difference of one cycle per parameter (exact inside a regime: the
   slope of a linear function), one simulation per parameter and input;
2. the linear least-squares step with the parameters' bounds (SciPy's ``lsq_linear``),
   rounded to whole cycles and accepted only when the error drops (else halved);
3. once no step helps, a ±1 coordinate search, because rounding and regime boundaries can
   leave a neighbour that is better.

Each simulation runs on the compiled engine when a C compiler is found (``backend =
"auto"``): a net's named parameters are read at run time there (:mod:`.csource`), so
every parameter vector of the net shares one library, compiled once, and a simulation of
a 4,600-block JPEG takes about a millisecond (the Python engine, the fallback, about
0.1 s). Results are cached by parameter vector. On exact data from the model itself (a synthetic
check) the residual is zero at the true values and the fit recovers them exactly.

**Uncertainty** of each fitted value: a 68.27 % interval in whole cycles and a standard
error, by a profile of the cost (default), a bootstrap over the measured rows, or the
linearised standard error; how each works, and why the profile is the default (measured
coverage and cost), is in :mod:`accelperf.lpn.uncertainty`. Each needs more inputs than
parameters and treats the residuals as independent noise (a model error that is the
same on every input shows as a bias, not in the interval). **Identifiability**: a
parameter no measured input is sensitive to, or a set whose Jacobian columns are nearly
dependent (a singular value below 1e-6 of the largest, after scaling each column), cannot
be told apart by the data; the result names them and keeps them at their starting values
where they have no effect at all. **Cross-validation**: k folds, each refitted on the
other k − 1 starting from the full fit, its error measured on the fold held out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import ModelError, invalid
from .analysis.accuracy import ErrorSummary
from .net import Marking, Model
from .sim import SimulationError, simulate
from .uncertainty import Estimate, check_method, estimate

CONFOUNDED_RATIO = 1e-6     # singular value / largest below this: not identifiable
CORRELATED = 0.995          # |correlation| of two estimates above this: confounded
MAX_ITERATIONS = 12
MAX_COORDINATE_PASSES = 4
MAX_ROUNDS = 4             # of Gauss–Newton then coordinate search


@dataclass(frozen=True)
class Measurement:
    """One measured input: a name to show, the input for Ψ, the cycles it took (a
    positive real: averaged hardware counters and fractional-cycle models such as VTA's
    are measured in fractions of a cycle)."""

    name: str
    input: object = field(repr=False)
    cycles: int | float


@dataclass(frozen=True)
class InputError:
    """One input after (or before) the fit."""

    name: str
    measured: int | float
    simulated: int | float

    @property
    def error(self) -> float:
        """Relative error of the model, (simulated − measured) / measured."""
        return (self.simulated - self.measured) / self.measured

    def __repr__(self) -> str:
        return f"InputError({self.name}: {self.simulated} vs {self.measured}, " \
               f"{self.error:+.2%})"


@dataclass(frozen=True)
class FittedParameter:
    name: str
    default: int
    start: int
    fitted: int
    uncertainty: Estimate | None = None   # None when the data cannot say
    fitted_here: bool = True              # False: held at its start value (not in --fit)

    @property
    def stderr(self) -> float | None:
        """Standard error in cycles (by the calibration's uncertainty method)."""
        return None if self.uncertainty is None else self.uncertainty.stderr

    @property
    def interval(self) -> tuple[int, int] | None:
        """The 68.27 % interval in whole cycles."""
        u = self.uncertainty
        return None if u is None else (u.low, u.high)

    def __repr__(self) -> str:
        u = self.uncertainty
        err = "" if u is None else f" ± {u.stderr:.3g} [{u.low}, {u.high}]"
        return f"FittedParameter({self.name}: {self.default} → {self.fitted}{err})"


@dataclass(frozen=True)
class Calibration:
    """What a fit found (see the module docstring); ``values()`` are the fitted values."""

    model: str
    parameters: tuple[FittedParameter, ...]
    before: ErrorSummary
    after: ErrorSummary
    cross_validated: ErrorSummary | None
    rows: tuple[InputError, ...] = field(repr=False)       # every input, after the fit
    before_rows: tuple[InputError, ...] = field(repr=False)
    warnings: tuple[str, ...] = ()
    simulations: int = 0
    uncertainty_method: str = "profile"

    def values(self) -> dict[str, int]:
        return {p.name: p.fitted for p in self.parameters}

    def worst(self, n: int = 5) -> list[InputError]:
        return sorted(self.rows, key=lambda r: -abs(r.error))[:n]

    def to_dict(self) -> dict:
        """The ``--json`` schema of ``accelperf lpn calibrate``."""
        row = lambda r: {"input": r.name, "measured": r.measured, "simulated": r.simulated,
                         "error": r.error}
        return {"model": self.model,
                "parameters": {p.name: {"default": p.default, "start": p.start,
                                        "fitted": p.fitted, "stderr": p.stderr,
                                        "interval": None if p.interval is None else
                                        list(p.interval), "fitted_here": p.fitted_here}
                               for p in self.parameters},
                "before": self.before.to_dict(), "after": self.after.to_dict(),
                "cross_validated": None if self.cross_validated is None else
                self.cross_validated.to_dict(),
                "worst": [row(r) for r in self.worst()],
                "inputs": [row(r) for r in self.rows],
                "uncertainty_method": self.uncertainty_method,
                "warnings": list(self.warnings), "simulations": self.simulations}

    def __repr__(self) -> str:
        fitted = ", ".join(f"{p.name}={p.fitted}" for p in self.parameters
                           if p.fitted != p.default)
        return (f"Calibration({self.model}: {fitted or 'defaults kept'}; error "
                f"{self.before.mean:.2%} → {self.after.mean:.2%} mean, "
                f"{self.before.max:.2%} → {self.after.max:.2%} max)")


class Fitter:
    """Simulates one model family (``builder(values) -> Model``) on fixed measurements,
    caching latencies by parameter vector, on ``backend`` (:func:`~.sim.simulate`'s)."""

    def __init__(self, builder, measurements: list[Measurement], backend: str = "auto"):
        self.builder, self.backend = builder, backend
        self.measurements = list(measurements)
        base = builder({})
        self.model_name = base.name
        self.spec = {p.name: p for p in base.parameters}
        self.markings = [_marking(base, m) for m in self.measurements]
        self.cycles = np.array([m.cycles for m in self.measurements], dtype=float)
        self.cache: dict[tuple, np.ndarray] = {}
        self.simulations = 0

    def latencies(self, values: dict[str, int]) -> np.ndarray:
        key = tuple(sorted(values.items()))
        if key not in self.cache:
            model = self.builder(values)
            out = []
            for m, marking in zip(self.measurements, self.markings):
                try:
                    out.append(simulate(model, marking, backend=self.backend).latency)
                except SimulationError as exc:
                    raise ModelError(f"input {m.name!r} with parameters {values}: the model "
                                     f"did not finish ({str(exc).splitlines()[0]})") from None
            self.simulations += len(out)
            self.cache[key] = np.array(out, dtype=float)
        return self.cache[key]

    def residuals(self, values, rows) -> np.ndarray:
        return (self.latencies(values)[rows] - self.cycles[rows]) / self.cycles[rows]

    def cost(self, values, rows) -> float:
        r = self.residuals(values, rows)
        return float(r @ r)

    def jacobian(self, values, names, rows) -> np.ndarray:
        """d residual / d parameter (per cycle), by a step of one cycle (down at the top
        bound)."""
        base = self.latencies(values)[rows]
        columns = []
        for name in names:
            spec = self.spec[name]
            step = -1 if spec.maximum is not None and values[name] >= spec.maximum else 1
            moved = self.latencies({**values, name: values[name] + step})[rows]
            columns.append((moved - base) / step / self.cycles[rows])
        return np.column_stack(columns) if columns else np.zeros((len(rows), 0))

    def fit(self, start: dict[str, int], names: list[str], rows) -> dict[str, int]:
        """Gauss–Newton steps then a coordinate search, again from where that ends while
        the pair of them still lowers the error (a coordinate move can cross into a regime
        where the linear step works again)."""
        values, cost = dict(start), self.cost(start, rows)
        for _ in range(MAX_ROUNDS):
            values = self._coordinate_search(*self._gauss_newton(values, names, rows),
                                             names, rows)
            new_cost = self.cost(values, rows)
            if new_cost == 0 or new_cost >= cost:
                break
            cost = new_cost
        return values

    def _gauss_newton(self, values, names, rows):
        from scipy.optimize import lsq_linear
        cost = self.cost(values, rows)
        for _ in range(MAX_ITERATIONS):
            if cost == 0:
                break
            J = self.jacobian(values, names, rows)
            live = [i for i in range(len(names)) if np.any(J[:, i])]
            if not live:
                break
            lo = [(-np.inf if self.spec[names[i]].minimum is None else
                   self.spec[names[i]].minimum - values[names[i]]) for i in live]
            hi = [(np.inf if self.spec[names[i]].maximum is None else
                   self.spec[names[i]].maximum - values[names[i]]) for i in live]
            lo = [min(a, -1e-9) for a in lo]
            hi = [max(b, 1e-9) for b in hi]
            step = lsq_linear(J[:, live], -self.residuals(values, rows),
                              bounds=(lo, hi)).x
            improved = False
            for scale in (1.0, 0.5, 0.25):
                trial = dict(values)
                for i, d in zip(live, step):
                    trial[names[i]] = values[names[i]] + int(round(d * scale))
                if trial == values:
                    continue
                trial_cost = self.cost(trial, rows)
                if trial_cost < cost:
                    values, cost, improved = trial, trial_cost, True
                    break
            if not improved:
                break
        return values, cost

    def _coordinate_search(self, values, cost, names, rows):
        for _ in range(MAX_COORDINATE_PASSES):
            moved = False
            for name in names:
                spec = self.spec[name]
                for step in (1, -1):
                    v = values[name] + step
                    while _within(spec, v):         # keep walking while it helps
                        trial = {**values, name: v}
                        trial_cost = self.cost(trial, rows)
                        if trial_cost >= cost:
                            break
                        values, cost, moved = trial, trial_cost, True
                        v += step
            if not moved or cost == 0:
                break
        return values


def _within(spec, v: int) -> bool:
    return (spec.minimum is None or v >= spec.minimum) and \
        (spec.maximum is None or v <= spec.maximum)


def _marking(model: Model, m: Measurement) -> Marking:
    try:
        return model.marking(m.input)
    except ModelError as exc:
        raise ModelError(f"row {m.name!r}: its input fails the model's Ψ: {exc}") from None


def check_measurements(measurements, n_fit: int) -> None:
    """Refuse data a fit cannot use, before any simulation."""
    if not measurements:
        raise ModelError("--measured holds no rows: give one row per measured input")
    for m in measurements:
        if isinstance(m.cycles, bool) or not isinstance(m.cycles, (int, float)) or \
                not math.isfinite(m.cycles) or m.cycles <= 0:
            raise invalid(f"cycles of row {m.name!r}", m.cycles, "a number of cycles > 0")
    if len(measurements) < n_fit:
        raise ModelError(f"--measured has {len(measurements)} row(s) for {n_fit} parameters "
                         f"to fit: give at least as many measured inputs as parameters "
                         f"(or fewer parameters with --fit)")


def whole(cycles) -> int | float:
    """A latency as an int when it is a whole number of cycles (as most are), else as a
    float (a model whose tick is a fraction of a cycle, an averaged measurement)."""
    value = float(cycles)
    return int(value) if value.is_integer() else value


def identifiability(J: np.ndarray, names: list[str]) -> tuple[list[str], list[list[str]]]:
    """Parameters no input is sensitive to, and groups the data cannot tell apart: the
    parameters that weigh in a near-null direction of the column-scaled Jacobian (exactly
    dependent columns), and pairs whose estimates are correlated beyond
    :data:`CORRELATED` (only a combination of them is pinned down)."""
    dead = [n for i, n in enumerate(names) if not np.any(J[:, i])]
    live = [i for i, n in enumerate(names) if n not in dead]
    groups: list[list[str]] = []
    if len(live) < 2:
        return dead, groups
    A = J[:, live] / np.linalg.norm(J[:, live], axis=0)
    _, s, vt = np.linalg.svd(A, full_matrices=True)
    s = np.concatenate([s, np.zeros(len(live) - len(s))])
    for k in np.nonzero(s < CONFOUNDED_RATIO * s[0])[0]:
        group = [names[live[i]] for i in np.nonzero(np.abs(vt[k]) > 0.1)[0]]
        if len(group) >= 2 and group not in groups:
            groups.append(group)
    if not groups:
        cov = np.linalg.inv(A.T @ A)
        d = np.sqrt(np.diag(cov))
        corr = cov / np.outer(d, d)
        for a in range(len(live)):
            for b in range(a + 1, len(live)):
                if abs(corr[a, b]) > CORRELATED:
                    groups.append([names[live[a]], names[live[b]]])
    return dead, groups


def calibrate(builder, measurements: list[Measurement], fit: list[str] | None = None,
              start: dict[str, int] | None = None, folds: int = 5,
              uncertainty: str = "profile") -> Calibration:
    """Fit the parameters ``fit`` (default: all the model declares) of ``builder(values)``
    (a function building the model with those parameter values) to ``measurements``,
    starting from ``start`` (default: the defaults; names not fitted keep these values),
    with each parameter's uncertainty by ``uncertainty`` (profile, bootstrap or linear:
    :mod:`accelperf.lpn.uncertainty`).
    """
    check_method(uncertainty)
    fitter = Fitter(builder, measurements)
    spec = fitter.spec
    names = list(spec) if fit is None else list(fit)
    for n in names:
        if n not in spec:
            raise invalid("--fit", n, f"model declares {', '.join(spec) or 'no parameters'}")
    if not names:
        raise ModelError("--fit: nothing to fit (the model declares no parameters)")
    check_measurements(measurements, len(names))
    origin = {n: p.value for n, p in spec.items()}
    for n, v in (start or {}).items():
        if n not in spec:
            raise invalid("--params", n, f"model declares {', '.join(spec)}")
        origin[n] = spec[n].check(v)
    every = np.arange(len(measurements))
    values = fitter.fit(origin, names, every)

    dead, groups = identifiability(fitter.jacobian(values, names, every), names)
    confounded = {n for g in groups for n in g}
    live = [n for n in names if n not in dead and n not in confounded]
    estimates = estimate(uncertainty, fitter, values, names, every, live)
    warnings = [f"{n} is poorly determined: {values[n]} ± {e.stderr:.3g} cycles"
                for n, e in estimates.items() if e.stderr > 0.1 * max(abs(values[n]), 1)]
    warnings += [f"the {uncertainty} interval of {n} reaches the search limit: it is at "
                 f"least [{e.low}, {e.high}]" for n, e in estimates.items() if e.open]
    if dead:
        warnings.append(f"no measured input is sensitive to {', '.join(dead)}: kept at "
                        f"{', '.join(str(values[n]) for n in dead)}; measure inputs that "
                        f"exercise them or leave them out of --fit")
    for g in groups:
        warnings.append(f"the data cannot tell {', '.join(g)} apart (confounded: only a "
                        f"combination of them is determined); fix all but one with --fit")
    if len(measurements) <= len(live):
        warnings.append("as many inputs as parameters: no uncertainty (the fit passes "
                        "through every point)")

    lat0, lat1 = fitter.latencies(origin), fitter.latencies(values)
    rows0 = tuple(InputError(m.name, m.cycles, whole(v)) for m, v in zip(measurements, lat0))
    rows1 = tuple(InputError(m.name, m.cycles, whole(v)) for m, v in zip(measurements, lat1))
    cv = _cross_validate(fitter, values, names, folds)
    params = tuple(FittedParameter(n, p.default, origin[n], values[n], estimates.get(n),
                                   n in names)
                   for n, p in spec.items())
    return Calibration(fitter.model_name, params, ErrorSummary.of(r.error for r in rows0),
                       ErrorSummary.of(r.error for r in rows1), cv, rows1, rows0,
                       tuple(warnings), fitter.simulations, uncertainty)


def _cross_validate(fitter: Fitter, values, names, folds: int) -> ErrorSummary | None:
    """k-fold: refit on all folds but one (from the full fit), predict the one left out."""
    n = len(fitter.measurements)
    k = min(folds, n)
    if k < 2 or n - n // k < len(names):
        return None
    held = []
    for f in range(k):
        test = np.arange(f, n, k)
        train = np.setdiff1d(np.arange(n), test)
        fold_values = fitter.fit(values, names, train)
        lat = fitter.latencies(fold_values)
        held += [InputError(fitter.measurements[i].name, fitter.measurements[i].cycles,
                            whole(lat[i])) for i in test]
    return ErrorSummary.of(r.error for r in held)


@dataclass(frozen=True)
class TraceAlignment:
    """The k-th hardware event against the k-th commit of the transition that models it
    (``lpn compare --trace``): ``gaps[k]`` = model − hardware, in cycles."""

    hardware_label: str
    model_label: str
    hardware_events: int
    model_events: int
    gaps: tuple[int, ...] = field(repr=False)
    tolerance: int = 0

    @property
    def first_divergence(self) -> int | None:
        """The first event whose gap exceeds the tolerance (None: they agree throughout)."""
        return next((k for k, g in enumerate(self.gaps) if abs(g) > self.tolerance), None)

    @property
    def first_change(self) -> int | None:
        """The first event where the gap moves from the previous event's by more than the
        tolerance: where a per-event delay differs, beyond a constant offset."""
        return next((k for k in range(1, len(self.gaps))
                     if abs(self.gaps[k] - self.gaps[k - 1]) > self.tolerance), None)

    def to_dict(self) -> dict:
        k, c = self.first_divergence, self.first_change
        return {"hardware": self.hardware_label, "model": self.model_label,
                "hardware_events": self.hardware_events, "model_events": self.model_events,
                "first_divergence": None if k is None else {"event": k, "gap": self.gaps[k]},
                "first_change": None if c is None else
                {"event": c, "gap_before": self.gaps[c - 1], "gap": self.gaps[c]},
                "final_gap": self.gaps[-1] if self.gaps else None,
                "gaps": list(self.gaps)}

    def summary(self) -> str:
        n = len(self.gaps)
        parts = [f"{n} {self.hardware_label} aligned with {self.model_label}"]
        if self.hardware_events != self.model_events:
            parts.append(f"counts differ: {self.hardware_events} in the hardware, "
                         f"{self.model_events} in the model")
        k, c = self.first_divergence, self.first_change
        if k is None:
            parts.append(f"they agree within {self.tolerance} cycle(s) throughout")
            return "; ".join(parts)
        parts.append(f"first diverges at event {k} by {self.gaps[k]:+d} cycles "
                     f"(model − hardware)")
        if c is not None:
            parts.append(f"the gap first moves at event {c}, {self.gaps[c - 1]:+d} → "
                         f"{self.gaps[c]:+d}")
        parts.append(f"{self.gaps[-1]:+d} cycles at the last event")
        return "; ".join(parts)

    def __repr__(self) -> str:
        return f"TraceAlignment({self.summary()})"


def align_trace(hardware: list[int], model: list[int], hardware_label: str = "events",
                model_label: str = "commits", tolerance: int = 0) -> TraceAlignment:
    """Pair the hardware's event times with the model's commit times in order."""
    if not hardware or not model:
        raise ModelError(f"trace alignment needs events on both sides: {len(hardware)} "
                         f"{hardware_label}, {len(model)} {model_label}")
    n = min(len(hardware), len(model))
    gaps = tuple(int(model[k]) - int(hardware[k]) for k in range(n))
    return TraceAlignment(hardware_label, model_label, len(hardware), len(model), gaps,
                          tolerance)


__all__ = ["TraceAlignment", "align_trace", "Measurement", "InputError",
           "FittedParameter", "Calibration", "Fitter", "calibrate", "check_measurements", "whole",
           "identifiability"]
