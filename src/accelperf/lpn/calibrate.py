"""Fit a model's named delay parameters to measured latencies (issues 21 and 35).

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
headers and all, not of an input class. So the fit searches integers on simulations:
descent (the Jacobian by a difference of one cycle per parameter, exact inside a regime;
the bounded linear least-squares step rounded to whole cycles), then an integer
neighbourhood search (single moves of ±1..±3 cycles, then pairs of ±1) until no move
lowers the cost, from several starts, settled to the answer nearest the start among
equally good ones: :mod:`accelperf.lpn.fitter` (issue 35: descent alone stopped in a
local minimum on Protoacc, moving delays that were never changed).

Each simulation runs on the compiled engine when a C compiler is found (``backend =
"auto"``): a net's named parameters are read at run time there (:mod:`.csource`), so
every parameter vector of the net shares one library, compiled once, and a simulation of
a 4,600-block JPEG takes about a millisecond (the Python engine, the fallback, about
0.1 s). Results are cached by parameter vector. On exact data from the model itself (a
synthetic check) the residual is zero at the true values and the fit recovers them
exactly where the inputs determine them (``benchmarks/lpn_calibrate_recovery.py``).

**Uncertainty** of each fitted value: a 68.27 % interval in whole cycles and a standard
error, by a profile of the cost (default), a bootstrap over the measured rows, or the
linearised standard error; how each works, and why the profile is the default (measured
coverage and cost), is in :mod:`accelperf.lpn.uncertainty`. Each needs more inputs than
parameters and treats the residuals as independent noise (a model error that is the
same on every input shows as a bias, not in the interval); an interval that collapses
to one value while the fit leaves a residual is widened to the linearised one. An
interval wider than ±:data:`POORLY` of the value is called *poorly determined*.
**Identifiability** by the rank of the Jacobian (:mod:`accelperf.lpn.identify`): a
parameter no input is sensitive to, or one in a confounded group (a null direction of
the Jacobian), is *not identified*: it gets no interval, the combination the data do
determine is named (``a + b`` for two delays that always add), and it is kept at its
start value unless moving it lowers the cost. **Coverage** of the inputs
(:mod:`accelperf.lpn.coverage`) goes with the values into ``--out``.

**Refusal.** A model that cannot reach the measurements must not hand back a parameter
file as if it had been calibrated. The best fit is refused when its largest relative
error exceeds what the measurements themselves allow: :data:`SPREAD_FACTOR` times the
largest spread (max − min)/mean of an input measured more than once (never below
:data:`UNFIT_FLOOR`), or, without duplicates, :data:`UNFIT_ERROR` (25 %: a delay model
that cannot come within a quarter of a measurement on some input is the wrong model or a
wrong measurement; the authors' JPEG model is 50 % off on 16x16 images *before*
calibration and 0.2 % after). **Cross-validation**: k folds, each refitted **from
scratch** (from the full fit's start, by the same search) on the other k − 1 folds, its
error measured on the fold held out; reported beside the training error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import ModelError, invalid
from ..parameters import Parameter, Parameters
from .analysis.interfaces.accuracy import ErrorSummary
from .coverage import Coverage, coverage_of
from .fitter import STARTS, Fitter
from .identify import Identification, identify
from .trace_align import TraceAlignment, align_trace  # noqa: F401  (re-exported)
from .uncertainty import check_method, estimate, quiet_numpy, widen

SPREAD_FACTOR = 10         # refuse a best fit this many times the duplicates' spread off
UNFIT_FLOOR = 0.01         # ... but never below 1 % (identical duplicates)
POORLY = 0.1               # an interval wider than ±10 % of the value: poorly determined
UNFIT_ERROR = 0.25         # without duplicates: refuse a best fit 25 % off on some input
UNPREDICTIVE_FACTOR = 2    # warn when cross-validation is this many times the fit's error


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


# A calibrated delay is the one parameter type (accelperf.parameters): ``value`` (also
# ``fitted``), ``default``, ``start``, ``vary`` (``fitted_here``: False when held at its
# start, not in --fit), ``identified``, and its uncertainty in ``stderr``/``interval``.
FittedParameter = Parameter


@dataclass(frozen=True)
class Duplicate:
    """One input measured more than once: its cycles, and their spread (max − min) /
    mean."""

    name: str
    cycles: tuple[float, ...]

    @property
    def spread(self) -> float:
        return (max(self.cycles) - min(self.cycles)) / (sum(self.cycles) / len(self.cycles))

    def __repr__(self) -> str:
        return f"Duplicate({self.name}: {len(self.cycles)} rows, spread {self.spread:.2%})"


@dataclass(frozen=True)
class Calibration:
    """What a fit found (see the module docstring); ``values()`` are the fitted values.
    ``refused`` is set (one line) when the best fit is far off the measurements
    (:func:`unfit`): the values are then the best found, not a calibration to use.
    ``unpredictive`` (one line, also a warning) when it fits the measurements but does
    not predict those it was not fitted on (:func:`unpredictive`)."""

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
    starts: int = 1
    agreeing: int = 1
    identification: Identification = field(default=Identification((), ()), repr=False)
    duplicates: tuple[Duplicate, ...] = ()
    refused: str | None = None
    coverage: Coverage | None = field(default=None, repr=False)
    folds: int | None = None        # of the cross-validation; None when there was none
    unpredictive: str | None = None  # one line when it does not predict unseen inputs

    def values(self) -> dict[str, int]:
        return {p.name: p.fitted for p in self.parameters}

    @property
    def params(self) -> Parameters:
        """The fitted values as :class:`~accelperf.parameters.Parameters`, each
        unidentified one with its :meth:`notes` line (what ``--out`` writes)."""
        notes = self.notes()
        return Parameters(replace(p, note=notes.get(p.name)) for p in self.parameters)

    def worst(self, n: int = 5) -> list[InputError]:
        return sorted(self.rows, key=lambda r: -abs(r.error))[:n]

    def notes(self) -> dict[str, str]:
        """{parameter: why its value is not determined} for each unidentified one (the
        comments ``--out`` writes beside them)."""
        out = {n: "no measured input is sensitive to it: kept at its start value"
               for n in self.identification.dead}
        for n in self.identification.flat:
            p = next(p for p in self.parameters if p.name == n)
            low, high = p.interval
            out[n] = (f"not identified: values {low}..{high} fit the data equally (the latency "
                      f"is quantised in it); this is the one nearest the start")
        for g in self.identification.groups:
            for n in g.names:
                out[n] = (f"not identified: {g.describe()}; this split is the one nearest "
                          f"the start")
        return out

    def to_dict(self) -> dict:
        """The ``--json`` schema of ``accelperf lpn calibrate``."""
        row = lambda r: {"input": r.name, "measured": r.measured, "simulated": r.simulated,
                         "error": r.error}
        return {"model": self.model,
                "parameters": {p.name: {"default": p.default, "start": p.start,
                                        "fitted": p.fitted, "stderr": p.stderr,
                                        "interval": None if p.interval is None else
                                        list(p.interval), "fitted_here": p.fitted_here,
                                        "identified": p.identified}
                               for p in self.parameters},
                "confounded": [{"parameters": list(g.names), "determined": g.combination}
                               for g in self.identification.groups],
                "before": self.before.to_dict(), "after": self.after.to_dict(),
                "cross_validated": None if self.cross_validated is None else
                self.cross_validated.to_dict(),
                "folds": self.folds,
                "starts": self.starts, "starts_agreeing": self.agreeing,
                "duplicates": [{"input": d.name, "cycles": list(d.cycles),
                                "spread": d.spread} for d in self.duplicates],
                "refused": self.refused, "unpredictive": self.unpredictive,
                "worst": [row(r) for r in self.worst()],
                "inputs": [row(r) for r in self.rows],
                "uncertainty_method": self.uncertainty_method,
                "warnings": list(self.warnings), "simulations": self.simulations}

    def __repr__(self) -> str:
        fitted = ", ".join(f"{p.name}={p.fitted}" for p in self.parameters
                           if p.fitted != p.default)
        return (f"Calibration({self.model}: {fitted or 'defaults kept'}; error "
                f"{self.before.mean:.2%} → {self.after.mean:.2%} mean, "
                f"{self.before.max:.2%} → {self.after.max:.2%} max"
                f"{'; REFUSED' if self.refused else ''})")


def check_measurements(measurements, n_fit: int) -> None:
    """Refuse data a fit cannot use, before any simulation."""
    if not measurements:
        raise ModelError("`measured` holds no rows: give one row per measured input")
    for m in measurements:
        if isinstance(m.cycles, bool) or not isinstance(m.cycles, (int, float)) or \
                not math.isfinite(m.cycles) or m.cycles <= 0:
            raise invalid(f"cycles of row {m.name!r}", m.cycles, "a number of cycles > 0")
    if len(measurements) < n_fit:
        raise ModelError(f"`measured` has {len(measurements)} row(s) for {n_fit} parameters "
                         f"to fit: give at least as many measured inputs as parameters "
                         f"(or fewer parameters with `fit`)")


def whole(cycles) -> int | float:
    """A latency as an int when it is a whole number of cycles (as most are), else as a
    float (a model whose tick is a fraction of a cycle, an averaged measurement)."""
    value = float(cycles)
    return int(value) if value.is_integer() else value


def duplicates(measurements) -> tuple[Duplicate, ...]:
    """Inputs (by name) measured more than once."""
    by_name: dict[str, list] = {}
    for m in measurements:
        by_name.setdefault(m.name, []).append(float(m.cycles))
    return tuple(Duplicate(n, tuple(c)) for n, c in by_name.items() if len(c) > 1)


def error_limit(repeats: tuple[Duplicate, ...]) -> tuple[float, str]:
    """The largest relative error the measurements themselves allow a fit (module
    docstring, *Refusal*), and the words that say where it comes from."""
    spread = max((d.spread for d in repeats), default=0.0)
    limit = max(SPREAD_FACTOR * spread, UNFIT_FLOOR) if repeats else UNFIT_ERROR
    basis = (f"{SPREAD_FACTOR}x the duplicates' spread {spread:.2%}" if repeats and
             SPREAD_FACTOR * spread > UNFIT_FLOOR else f"{limit:.0%}")
    return limit, basis


def unfit(rows, repeats: tuple[Duplicate, ...]) -> str | None:
    """One line when the best fit is far above what the measurements themselves allow
    (module docstring, *Refusal*), else None."""
    worst = sorted(rows, key=lambda r: -abs(r.error))
    limit, basis = error_limit(repeats)
    if not worst or abs(worst[0].error) <= limit:
        return None
    named = "; ".join(f"{r.name}: measured {r.measured}, best {r.simulated} "
                      f"({r.error:+.1%})" for r in worst[:3] if abs(r.error) > limit)
    return (f"the model cannot reach the measurements: the best fit is still "
            f"{abs(worst[0].error):.1%} off, above {basis} ({named})")


def unpredictive(cv: ErrorSummary | None, after: ErrorSummary,
                 repeats: tuple[Duplicate, ...]) -> str | None:
    """One line when the fit does not predict the inputs it was not fitted on: its
    cross-validated largest error is above the limit a fit is refused at
    (:func:`error_limit`) and :data:`UNPREDICTIVE_FACTOR` times its largest error on the
    inputs it fitted (a model that bends to impossible data fits them and predicts
    nothing), else None."""
    limit, basis = error_limit(repeats)
    if cv is None or cv.max <= limit or cv.max <= UNPREDICTIVE_FACTOR * after.max:
        return None
    return (f"the fit does not predict inputs it was not fitted on: cross-validated max "
            f"{cv.max:.1%} (mean {cv.mean:.1%}) against {after.max:.1%} on the inputs "
            f"fitted, above {basis}; measure more varied inputs, or check that the model "
            f"can reach the measurements")


def calibrate(builder, measurements: list[Measurement], fit: list[str] | None = None,
              start: dict[str, int] | None = None, folds: int = 5,
              uncertainty: str = "profile", starts: int = STARTS) -> Calibration:
    """Fit the parameters ``fit`` (default: all the model declares) of ``builder(values)``
    (a function building the model with those parameter values) to ``measurements``,
    starting from ``start`` (default: the defaults; names not fitted keep these values)
    and ``starts − 1`` other points (:mod:`accelperf.lpn.fitter`), with each identified
    parameter's uncertainty by ``uncertainty`` (profile, bootstrap or linear:
    :mod:`accelperf.lpn.uncertainty`).
    """
    check_method(uncertainty)
    fitter = Fitter(builder, measurements)
    spec = fitter.spec
    names = list(spec) if fit is None else list(fit)
    for n in names:
        if n not in spec:
            raise invalid("fit", n, f"model declares {', '.join(spec) or 'no parameters'}")
    if not names:
        raise ModelError("`fit`: nothing to fit (the model declares no parameters)")
    check_measurements(measurements, len(names))
    origin = {n: p.value for n, p in spec.items()}
    for n, v in (start or {}).items():
        if n not in spec:
            raise invalid("params", n, f"model declares {', '.join(spec)}")
        origin[n] = spec[n].check(v)
    every = np.arange(len(measurements))
    with quiet_numpy():
        best = fitter.optimum(origin, names, every, starts)
        values = best.values
        found = settled(identify(fitter.edge_jacobian(values, names, every), names), values,
                        origin)
        live = [n for n in names if found.identified(n)]
        estimates = widen(fitter, values, live, every,
                          estimate(uncertainty, fitter, values, names, every, live))
    if best.cost == 0:
        # On an exact fit the profile interval is the run of values that fit equally:
        # more than one, and the data do not pin the delay to any of them.
        found = replace(found, flat=tuple(n for n, e in estimates.items() if e.high > e.low))
    warnings = [f"{n} is poorly determined: {values[n]} in [{e.low}, {e.high}] "
                f"(± {e.stderr:.3g} cycles)" for n, e in estimates.items()
                if (e.high - e.low) / 2 > POORLY * max(abs(values[n]), 1)]
    if best.cost == 0:
        warnings += [f"values {e.low}..{e.high} of {n} fit the data equally (the latency is "
                     f"flat in it over that range): {values[n]} is the one nearest the start; "
                     f"{n} is not identified"
                     for n, e in estimates.items() if e.high > e.low]
    warnings += [f"the {uncertainty} interval of {n} reaches the search limit: it is at "
                 f"least [{e.low}, {e.high}]" for n, e in estimates.items() if e.open]
    if found.dead:
        warnings.append(f"no measured input is sensitive to {', '.join(found.dead)}: kept "
                        f"at {', '.join(str(values[n]) for n in found.dead)}; measure inputs "
                        f"that exercise them or leave them out of --fit")
    for g in found.groups:
        warnings.append(f"{g.describe()}: kept at "
                        f"{', '.join(f'{n} = {values[n]}' for n in g.names)}, the split "
                        f"nearest the start; {g.remedy()}")
    if best.agreeing < best.starts:
        warnings.append(f"only {best.agreeing} of {best.starts} starts reached the best "
                        f"cost: the landscape has other minima; more varied inputs help")
    if len(measurements) <= len(live):
        warnings.append("as many inputs as parameters: no uncertainty (the fit passes "
                        "through every point)")
    repeats = duplicates(measurements)
    warnings += [f"input {d.name} was measured {len(d.cycles)} times with different cycles "
                 f"({whole(min(d.cycles))}..{whole(max(d.cycles))}, spread {d.spread:.2%})"
                 for d in repeats if d.spread > 0]

    lat0, lat1 = fitter.latencies(origin), fitter.latencies(values)
    rows0 = tuple(InputError(m.name, m.cycles, whole(v)) for m, v in zip(measurements, lat0))
    rows1 = tuple(InputError(m.name, m.cycles, whole(v)) for m, v in zip(measurements, lat1))
    with quiet_numpy():
        cv = cross_validate(fitter, origin, names, folds)
    after = ErrorSummary.of(r.error for r in rows1)
    doubt = unpredictive(cv, after, repeats)
    warnings += [] if doubt is None else [doubt]
    params = tuple(Parameter(n, values[n], vary=n in names, bounds=p.bounds,
                             default=p.default, start=origin[n],
                             identified=n not in found.unidentified,
                             integer=True).with_estimate(estimates.get(n))
                   for n, p in spec.items())
    return Calibration(fitter.model_name, params, ErrorSummary.of(r.error for r in rows0),
                       after, cv, rows1, rows0,
                       tuple(warnings), fitter.simulations, uncertainty, best.starts,
                       best.agreeing, found, repeats, unfit(rows1, repeats),
                       coverage_of(fitter, values, names, found),
                       None if cv is None else fold_count(folds, len(measurements)), doubt)


def settled(found: Identification, values, origin) -> Identification:
    """A delay with a zero Jacobian column that the fit moved from its start is not one
    the data cannot see: one cycle either way is flat (the latency is quantised in it,
    e.g. bytes per cycle), but its start fits worse, so its profile interval gives the
    range the data allow. Only the unmoved ones stay "no input is sensitive"."""
    dead = tuple(n for n in found.dead if values[n] == origin[n])
    return Identification(dead, found.groups, found.null)


def fold_count(folds: int, n: int) -> int:
    """The folds a cross-validation of ``n`` inputs asked for ``folds`` makes: one input
    left out at a time when there are fewer inputs than folds."""
    return min(folds, n)


def cross_validate(fitter: Fitter, origin, names, folds: int,
                   starts: int = 1) -> ErrorSummary | None:
    """k-fold: each fold's parameters refitted from scratch (from ``origin``, the full
    fit's own start, by the same search: descent, neighbourhood, settling; from
    ``starts`` points, one by default to bound the cost) on the other folds, then its
    inputs predicted. None when a fold would have fewer rows to fit than parameters."""
    n = len(fitter.measurements)
    k = fold_count(folds, n)
    if k < 2 or n - -(-n // k) < len(names):
        return None
    held = []
    for f in range(k):
        test = np.arange(f, n, k)
        train = np.setdiff1d(np.arange(n), test)
        lat = fitter.latencies(fitter.optimum(origin, names, train, starts).values)
        held += [InputError(fitter.measurements[i].name, fitter.measurements[i].cycles,
                            whole(lat[i])) for i in test]
    return ErrorSummary.of(r.error for r in held)


__all__ = ["TraceAlignment", "align_trace", "Measurement", "InputError", "Duplicate",
           "FittedParameter", "Calibration", "Fitter", "calibrate", "check_measurements",
           "whole", "duplicates", "unfit", "unpredictive", "error_limit", "cross_validate"]
