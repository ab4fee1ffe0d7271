"""LogCA parameters from measurements (ISCA'17 §4), with uncertainty and honest warnings.

Inputs are host times T0(g), accelerated times T1(g) and, optionally, transfer-only "echo"
times (o + L·g measured directly), all in seconds per operation. The fit runs in steps, each
a function below:

0. ``prepare_data``: check, sort and (``lo``/``hi``) restrict the data.
1. ``_host_step``: C and β by least squares of ln T0 on ln g (the paper's regression over
   16 B–32 MiB); optionally a per-call host constant c0, ``T0 = c0 + C·g^β``.
2. o, L and A: weighted linear least squares of T1 = o + L1(g) + (C·g^β)·(1/A), relative
   weights, with L1 = L (independent) or L·g (dependent); from the echo run when given.
   (``_start_values``, once per latency kind)
3. ``_solve``: all parameters refined together by bounded nonlinear least squares on the log of the
   host time and of the speedup (relative errors): the speedup is what the model is judged
   on, so it is fitted directly.

Standard errors come from the Jacobian at the solution; g1 and g_{A/2} get bootstrap
standard errors and 95% intervals (residuals resampled in log space). What the data cannot
support is said in ``warnings``.

One module because the steps above share one private data record and one candidate type,
and each step's warnings are read against the others'; split, they would only pass
those private records across modules.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize

from ..errors import ModelError, invalid
from ..parameters import Parameter, Parameters
from ..units import format_size
from ..validate import number_array, real_number
from .fitchecks import tail_warnings
from .metrics import break_even_granularity, half_acceleration_granularity
from .model import MAGNITUDE, LogCA

MIN_POINTS = 6


# A fitted quantity is the one parameter type (accelperf.parameters, styled on lmfit's):
# name, value, stderr, vary, bounds, note; the name stays for the fits that import it.
FittedParameter = Parameter


@dataclass(frozen=True)
class GranularityEstimate:
    """g1 or g_{A/2} of a fit: read off the measured points, from the fitted model, and the
    model's bootstrap standard error and 95% interval."""

    measured: float | None
    model: float | None
    stderr: float | None
    interval: tuple[float, float] | None

    def to_dict(self) -> dict:
        return {"measured": self.measured, "model": self.model, "stderr": self.stderr,
                "ci95": None if self.interval is None else list(self.interval)}

    def __repr__(self) -> str:
        def size(x):
            return "none" if x is None else format_size(x)
        interval = "" if self.interval is None else \
            f", 95% {size(self.interval[0])}–{size(self.interval[1])}"
        return f"GranularityEstimate(model {size(self.model)}{interval}; measured " \
               f"{size(self.measured)})"


class SpeedupErrors:
    """The relative speedup errors of a fit (``speedup_model`` against ``speedup_measured``),
    shared by every fit result."""

    @property
    def relative_error(self) -> np.ndarray:
        return self.speedup_model / self.speedup_measured - 1.0

    @property
    def mean_error(self) -> float:
        return float(np.mean(np.abs(self.relative_error)))

    @property
    def max_error(self) -> float:
        return float(np.max(np.abs(self.relative_error)))

    @property
    def worst_granularity(self) -> float:
        """The size where the speedup is missed most (the max error's)."""
        return float(self.granularity[int(np.argmax(np.abs(self.relative_error)))])


@dataclass(frozen=True)
class FitResult(SpeedupErrors):
    """A fit of LogCA to measured times (:func:`fit_logca`).

    ``model`` is the fitted LogCA, its five parameters alone. With a host constant
    (``host_constant=True``) the host's time is ``c0 + C·g^β``, which no LogCA carries:
    ``model``'s own speedup and g1 leave c0 out (0.89 against 1.46 at 16 B on a test).
    Read this result's :meth:`speedup`, ``g1`` and ``g_half``, which include it, or
    :attr:`full_model`, the model with c0 that every metric is asked of."""

    model: LogCA
    parameters: Parameters                  # L, o, C, A, beta by name
    granularity: np.ndarray = field(repr=False)
    speedup_measured: np.ndarray = field(repr=False)
    speedup_model: np.ndarray = field(repr=False)
    g1: GranularityEstimate = None
    g_half: GranularityEstimate = None
    warnings: tuple = ()
    method: str = ""
    host_constant: FittedParameter | None = None
    excluded: tuple = ()          # granularities outside --from/--to, left out of the fit

    def speedup(self, g) -> np.ndarray:
        """The fitted speedup at ``g``: the model's, with the host per-call constant c0 added
        to T0 when the fit has one."""
        if self.host_constant is None:
            return self.model.speedup(g)
        return (self.host_constant.value + self.model.T0(g)) / self.model.T1(g)

    @property
    def full_model(self):
        """The fitted model with everything fitted: ``model`` itself, or with a host constant
        a :class:`~.hierarchy.HierarchicalLogCA` of one layer carrying c0 (its speedup is
        :meth:`speedup`; its g1 is this fit's)."""
        if self.host_constant is None:
            return self.model
        from .hierarchy import HierarchicalLogCA, MemoryLayer
        return HierarchicalLogCA(self.model, (MemoryLayer("memory", math.inf),),
                                 host_constant=self.host_constant.value,
                                 name=self.model.name)

    def to_dict(self) -> dict:
        return {
            "parameters": {k: p.value for k, p in self.parameters.items()},
            "stderr": {k: p.stderr for k, p in self.parameters.items()},
            "parameter_details": {k: p.to_dict() for k, p in self.parameters.items()},
            "latency": self.model.latency, "unit": self.model.unit,
            "frequency_hz": self.model.frequency_hz,
            "error": {"mean": self.mean_error, "max": self.max_error,
                      "per_granularity": [
                          {"granularity": float(g), "measured": float(m), "model": float(p),
                           "relative_error": float(e)}
                          for g, m, p, e in zip(self.granularity, self.speedup_measured,
                                                self.speedup_model, self.relative_error)]},
            "g1": self.g1.to_dict(), "g_half": self.g_half.to_dict(),
            "warnings": list(self.warnings), "method": self.method,
            "host_constant": None if self.host_constant is None else self.host_constant.to_dict(),
            "excluded_granularities": list(self.excluded),
        }

    def __repr__(self) -> str:
        c0 = "" if self.host_constant is None else \
            f", {self.host_constant!r} (in full_model; model leaves it out)"
        return (f"FitResult({self.model.latency} latency, "
                + ", ".join(repr(p) for p in self.parameters.values()) + c0
                + f"; speedup error mean {self.mean_error:.1%}, max {self.max_error:.1%}, "
                  f"{len(self.warnings)} warning(s))")


# ---------------------------------------------------------------------- the parameter vector
# The solvers work on arrays; these names say which entry is which. C and A are fitted as
# logarithms (they are positive and span decades); c0 is the optional host per-call constant.
NAMES = ("lnC", "beta", "o", "L", "lnA", "c0")
LN_C, BETA, O, LAT, LN_A, C0 = range(len(NAMES))
LOWER = np.array([-np.inf, 0.01, 0.0, 0.0, -30.0, 0.0])   # ln A in [-30, 30] keeps a wild
UPPER = np.array([np.inf, 5.0, np.inf, np.inf, 30.0, np.inf])  # bootstrap resample finite


def _vector(lnC=np.nan, beta=np.nan, o=np.nan, L=np.nan, lnA=np.nan, c0=np.nan) -> np.ndarray:
    """A parameter vector by name (NaN marks a free entry in a ``fixed`` vector)."""
    return np.array([lnC, beta, o, L, lnA, c0], float)


# ---------------------------------------------------------------------- helpers
def _check(name: str, values, n: int | None = None) -> np.ndarray:
    arr = number_array(name, values)
    if arr.ndim != 1 or (n is not None and arr.size != n):
        raise ModelError(f"{name} must be a list of {n or 'some'} numbers, got shape {arr.shape}")
    ok = np.isfinite(arr) & (arr >= 1 / MAGNITUDE) & (arr <= MAGNITUDE)
    if not np.all(ok):
        bad = float(arr[~ok][0])
        raise ModelError(f"{name} contains {bad!r}: times and granularities must be finite "
                         f"and > 0, between {1 / MAGNITUDE:g} and {MAGNITUDE:g} (the "
                         f"magnitudes a LogCA model can carry)")
    return arr


def power_law(g, t) -> tuple[float, float, float, float]:
    """(C, β, stderr of ln C, stderr of β) from least squares of ln t on ln g: the
    ordinary regression's closed form (``scipy.stats.linregress``'s, which a test checks
    it against), written out because every fold's start values call it: the library's
    argument handling took a tenth of a term selection's time."""
    x, y = np.log(np.asarray(g, float)), np.log(np.asarray(t, float))
    dx = x - x.mean()
    sxx = float(dx @ dx)
    slope = float(dx @ (y - y.mean())) / sxx
    intercept = float(y.mean()) - slope * float(x.mean())
    dof = x.size - 2
    resid = y - (intercept + slope * x)
    se_slope = math.sqrt(float(resid @ resid) / dof / sxx) if dof > 0 else 0.0
    return (math.exp(intercept), slope, se_slope * math.sqrt(float(x @ x) / x.size),
            se_slope)


def measured_crossing(g, speedup, target: float) -> float | None:
    """Where the measured speedup first passes ``target`` (log-log interpolation)."""
    s = np.asarray(speedup)
    above = s >= target
    for i in range(1, len(s)):
        if above[i] != above[i - 1]:
            x0, x1 = math.log(g[i - 1]), math.log(g[i])
            y0, y1 = math.log(s[i - 1]), math.log(s[i])
            x = x0 + (math.log(target) - y0) * (x1 - x0) / (y1 - y0)
            return math.exp(x)
    return None


def _host_model(p, g):
    """T0 = c0 + C·g^β (c0 = 0 in the paper's model)."""
    return p[C0] + np.exp(p[LN_C] + p[BETA] * np.log(g))


def _t1_model(p, g, dependent):
    """T1 = o + L1(g) + C·g^β/A (ISCA'17 eq. 1)."""
    host = np.exp(p[LN_C] + p[BETA] * np.log(g))
    return p[O] + (p[LAT] * g if dependent else p[LAT]) + host * np.exp(-p[LN_A])


def _residuals(p, g, t0, t1, dependent):
    """Log-residuals of the host time and of the speedup: the speedup is what the model is
    judged on, so it is fitted directly (its residual is r_host - r_accel)."""
    r_host = np.log(_host_model(p, g)) - np.log(t0)
    r_acc = np.log(_t1_model(p, g, dependent)) - np.log(t1)
    return np.concatenate([r_host, r_host - r_acc])


def _solve(g, t0, t1, dependent, start, fixed, echo=None):
    """Bounded nonlinear least squares over the free (NaN in ``fixed``) entries; returns the
    full vector, its standard errors (NaN where fixed) and the residual sum of squares."""
    free = np.isnan(fixed)
    x0 = np.clip(np.where(free, start, fixed), LOWER + 1e-300, UPPER - 1e-12)

    def fun(x_free):
        x = fixed.copy()
        x[free] = x_free
        r = _residuals(x, g, t0, t1, dependent)
        if echo is not None:
            r = np.concatenate([r, np.log(x[O] + (x[LAT] * g if dependent else x[LAT])) -
                                np.log(echo)])
        return r

    sol = optimize.least_squares(fun, x0[free], bounds=(LOWER[free], UPPER[free]),
                                 method="trf", x_scale="jac", max_nfev=2000)
    x = fixed.copy()
    x[free] = sol.x
    dof = max(sol.fun.size - free.sum(), 1)
    s2 = float(sol.fun @ sol.fun) / dof
    try:
        cov = np.linalg.pinv(sol.jac.T @ sol.jac) * s2
        se_free = np.sqrt(np.clip(np.diag(cov), 0, None))
    except np.linalg.LinAlgError:
        se_free = np.full(free.sum(), np.nan)
    se = np.full(len(NAMES), np.nan)
    se[free] = se_free
    return x, se, float(sol.fun @ sol.fun)


def linear_accel(g, host, t1, dependent):
    """Weighted (relative) linear least squares of T1 on [1, g?, host]: (o, L, 1/A)."""
    cols = [np.ones_like(g)] + ([g] if dependent else []) + [host]
    X = np.column_stack(cols) / t1[:, None]
    coef, *_ = np.linalg.lstsq(X, np.ones_like(g), rcond=None)
    o = coef[0]
    L = coef[1] if dependent else 0.0
    inv_a = coef[-1]
    return o, L, inv_a


# ---------------------------------------------------------------------- the steps
@dataclass(frozen=True)
class FitData:
    """What a fit reads: granularities ``g`` (bytes), the host's times ``t0``, the
    accelerated times ``t1`` and, when measured, the copies-only (echo) times, one per
    granularity; ``excluded``: granularities left out by ``lo``/``hi``
    (:func:`prepare_data`). Checked and sorted by granularity when made: from Python, a
    fit of unsorted sizes read the host's time as falling and dropped the floor term, and
    lists, NaN or arrays of unequal length failed deep inside LAPACK or an index."""

    g: np.ndarray
    t0: np.ndarray
    t1: np.ndarray
    echo: np.ndarray | None = None
    excluded: tuple = ()

    def __post_init__(self) -> None:
        g = _check("granularity", self.g)
        arrays = {"t0": _check("host times", self.t0, g.size),
                  "t1": _check("accelerated times", self.t1, g.size),
                  "echo": None if self.echo is None else _check("echo times", self.echo,
                                                                 g.size)}
        order = np.argsort(g, kind="stable")
        g = g[order]
        if np.any(np.diff(g) == 0):
            i = int(np.flatnonzero(np.diff(g) == 0)[0])
            raise ModelError(f"granularity {format_size(g[i])} repeats: give one time per "
                             f"granularity and mode", field="granularity")
        object.__setattr__(self, "g", g)
        for name, values in arrays.items():
            object.__setattr__(self, name, None if values is None else values[order])
        object.__setattr__(self, "excluded", tuple(float(x) for x in self.excluded))

    @property
    def n(self) -> int:
        return self.g.size


@dataclass(frozen=True)
class _Candidate:
    """The fit of one latency kind."""

    kind: str
    x: np.ndarray
    se: np.ndarray
    aic: float
    fixed: np.ndarray
    echo_fit: tuple | None          # (o, L, se_o, se_L) from the echo run
    negative_o: float | None        # the negative o the linear step suggested, if any

    @property
    def dependent(self) -> bool:
        return self.kind == "dependent"


def prepare_data(granularity, t_host, t_accel, t_echo, lo, hi) -> FitData:
    """Step 0: check the arrays, sort by granularity, keep [lo, hi]."""
    d = FitData(granularity, t_host, t_accel, t_echo)
    g, t0, t1, echo = d.g, d.t0, d.t1, d.echo
    lo = 0.0 if lo is None else real_number("from", lo, positive=True)
    hi = math.inf if hi is None else real_number("to", hi, positive=True)
    if lo >= hi:
        raise ModelError(f"lo = {lo:g} B and hi = {hi:g} B are invalid: need from < to",
                         field="from")
    keep = (g >= lo) & (g <= hi)
    excluded = tuple(float(x) for x in g[~keep])
    g, t0, t1 = g[keep], t0[keep], t1[keep]
    echo = None if echo is None else echo[keep]
    if g.size < 3:
        where = "" if not excluded else \
            f" at or above {format_size(lo)}" if math.isinf(hi) else \
            f" up to {format_size(hi)}" if lo == 0 else \
            f" inside {format_size(lo)}..{format_size(hi)}"
        raise ModelError(f"only {g.size} granularities{where}: a fit needs at least 3 (and "
                         f"{MIN_POINTS} or more to be trusted)")
    return FitData(g, t0, t1, echo, excluded)


def _host_step(d: FitData, host_constant: bool, warnings: list) -> tuple[float, float, float]:
    """Step 1: (C, β, c0) of the host model; warns about what C·g^β cannot follow."""
    g, t0, n = d.g, d.t0, d.n
    C, beta, _, _ = power_law(g, t0)
    falls = [int(g[i + 1]) for i in range(n - 1) if t0[i + 1] < t0[i] * 0.97]
    if falls:
        warnings.append("host time is not monotone: it falls at "
                        + ", ".join(format_size(x) for x in falls)
                        + "; LogCA assumes it grows with g (check for noise or a cache effect)")
    c0_fit = _per_call_constant(g, t0, C, beta)
    if host_constant:
        return C, beta, max(c0_fit or 0.0, 1e-6 * t0[0])
    if c0_fit is not None and c0_fit > 0.05 * t0[0]:
        keep = c0_fit < 0.05 * t0
        if keep.sum() >= 3:
            C_r, beta_r, _, _ = power_law(g[keep], t0[keep])
            warnings.append(
                f"host time has a per-call constant of about {c0_fit:.3g} s "
                f"({c0_fit / t0[0]:.0%} of the time at {format_size(g[0])}) that LogCA's "
                f"C·g^β lacks, which pulls β down: the host's power law alone has β = "
                f"{beta:.4f} on all points, "
                f"{beta_r:.4f} when the fit is restricted to g >= {format_size(g[keep][0])} "
                f"(C {C:.4g} -> {C_r:.4g}); fit with --from {format_size(g[keep][0])} or "
                f"--host-constant, or with --select to keep c0 only where it predicts better")
    return C, beta, 0.0


def _start_values(d: FitData, kind: str, C: float, beta: float, c0: float, host_constant: bool):
    """Step 2: starting point and fixed entries for one latency kind (the paper's order: o, L,
    A by linear least squares, or o and L from the echo run)."""
    dep = kind == "dependent"
    g, t1 = d.g, d.t1
    host_fit = C * g**beta
    c0_fixed = np.nan if host_constant else 0.0
    if d.echo is not None:
        o_e, L_e, se_o, se_L = linear_echo(g, d.echo, dep)
        fixed = _vector(o=max(o_e, 0.0), L=max(L_e, 0.0), c0=c0_fixed)
        inv_a = np.median(host_fit / np.clip(t1 - o_e - (L_e * g if dep else L_e), 1e-300, None))
        start = _vector(math.log(C), beta, fixed[O], fixed[LAT], math.log(max(inv_a, 1e-9)), c0)
        return start, fixed, (o_e, L_e, se_o, se_L), None
    o_lin, L_lin, inv_a = linear_accel(g, host_fit, t1, dep)
    fixed = _vector(L=np.nan if dep else 0.0, c0=c0_fixed)
    start = _vector(math.log(C), beta, max(o_lin, 1e-12 * t1[0]), max(L_lin, 0.0),
                    math.log(1 / inv_a) if inv_a > 0 else 0.0, c0)
    return start, fixed, None, (o_lin if o_lin < 0 else None)


def _fit_kind(d: FitData, kind: str, C, beta, c0, host_constant) -> _Candidate:
    start, fixed, echo_fit, negative_o = _start_values(d, kind, C, beta, c0, host_constant)
    x, se, ssr = _solve(d.g, d.t0, d.t1, kind == "dependent", start, fixed, d.echo)
    k = int(np.isnan(fixed).sum())
    aic = 2 * d.n * math.log(max(ssr, 1e-300) / (2 * d.n)) + 2 * k
    return _Candidate(kind, x, se, aic, fixed, echo_fit, negative_o)


def _choose_latency(fits: dict, latency: str) -> _Candidate:
    """Step 3: dependent latency must earn its extra parameter (AIC lower by 2), and must not
    do it by sending A to its bound (T1 = o + L·g with a vanishing compute term is the
    degenerate β ≈ 1 case, not an accelerator)."""
    if latency != "auto":
        return fits[latency]
    dep, ind = fits["dependent"], fits["independent"]
    return dep if (dep.aic < ind.aic - 2 and dep.x[LN_A] < math.log(1e4)) else ind


def _stderr(se, i) -> float | None:
    return None if np.isnan(se[i]) else float(se[i])


def _parameters(best: _Candidate, has_echo: bool, host_constant: bool):
    """Step 4a: the fitted parameters as typed objects (the solver fits ln C and ln A, so
    their standard errors scale by the value)."""
    x, se, fixed = best.x, best.se, best.fixed
    C_f, A_f = math.exp(x[LN_C]), math.exp(x[LN_A])
    params = {
        "L": FittedParameter("L", x[LAT], _stderr(se, LAT),
                             vary=np.isnan(fixed[LAT]) and not has_echo),
        "o": FittedParameter("o", x[O], _stderr(se, O), vary=not has_echo),
        "C": FittedParameter("C", C_f, float(C_f * se[LN_C])),
        "A": FittedParameter("A", A_f, float(A_f * se[LN_A])),
        "beta": FittedParameter("beta", x[BETA], float(se[BETA]), bounds=(0.01, 5.0)),
    }
    if best.echo_fit:
        _, _, se_o, se_L = best.echo_fit
        params["o"] = FittedParameter("o", x[O], se_o, vary=False, note="from the echo run")
        params["L"] = FittedParameter("L", x[LAT], se_L if best.dependent else None,
                                      vary=False, note="from the echo run")
    if not best.dependent and not has_echo:
        params["L"] = FittedParameter("L", 0.0, None, vary=False,
                                      note="not identified alone: the fit sees only o + L, reported as o")
        params["o"] = FittedParameter("o", x[O], params["o"].stderr, note="this is o + L")
    c0 = (FittedParameter("c0", x[C0], _stderr(se, C0),
                          note="host per-call constant: T0 = c0 + C·g^β")
          if host_constant else None)
    return params, c0


def fit_logca(granularity, t_host, t_accel, t_echo=None, latency: str = "auto",
              frequency_hz: float | None = None, bootstrap: int = 200, seed: int = 0,
              name: str | None = None, lo: float | None = None, hi: float | None = None,
              host_constant: bool = False) -> FitResult:
    """Fit L, o, C, A and β to measured times (seconds per operation of g bytes), ISCA'17 §4.

    The warnings name `accelperf logca fit`'s options; from Python ``--from``/``--to`` are
    ``lo``/``hi``, ``--host-constant`` is ``host_constant=True``, and ``--select`` is
    :func:`accelperf.logca.choose.choose` (docs/how-to/gpu-pays-off.md, "From Python").

    Parameters
    ----------
    granularity, t_host, t_accel : arrays
        Granularities (bytes) and the host and accelerated seconds per operation.
    t_echo : array, optional
        Transfer-only times (o + L·g): then o and L come from them directly.
    latency : {"independent", "dependent", "auto"}
        How latency grows with g; "auto" keeps "dependent" only where its extra parameter
        earns its place (Akaike information criterion).
    frequency_hz : float, optional
        Report the model in cycles of this clock instead of seconds.
    bootstrap : int
        Resamples for the g1 / g_{A/2} uncertainty (0 to skip).
    lo, hi : float, optional
        Fit only the granularities in [lo, hi] bytes (the others are listed in ``excluded``).
    host_constant : bool
        Add a per-call constant to the host model, ``T0 = c0 + C·g^β`` (the result's
        ``full_model`` carries it; ``model`` is LogCA's five parameters alone). The speedup then
        is ``(c0 + C·g^β)/T1``; g1 and g_{A/2} stay exact because ``T0 = s·T1`` is LogCA's
        equation with o replaced by ``o − c0/s``.
    """
    if latency not in ("independent", "dependent", "auto"):
        raise ModelError(f"latency = {latency!r} is invalid: independent, dependent or auto")
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, (int, np.integer)) \
            or bootstrap < 0:
        raise invalid("bootstrap", bootstrap, "a whole number of resamples >= 0 (0: none)")
    d = prepare_data(granularity, t_host, t_accel, t_echo, lo, hi)
    warnings: list[str] = []
    if d.n < MIN_POINTS:
        warnings.append(f"only {d.n} granularities: fewer than {MIN_POINTS} points cannot "
                        f"support five parameters; treat the fit as indicative")
    C, beta, c0 = _host_step(d, host_constant, warnings)
    kinds = ["independent", "dependent"] if latency == "auto" else [latency]
    fits = {k: _fit_kind(d, k, C, beta, c0, host_constant) for k in kinds}
    best = _choose_latency(fits, latency)
    params, c0_param = _parameters(best, d.echo is not None, host_constant)
    x, dep = best.x, best.dependent
    model = LogCA(L=params["L"].value, o=x[O], C=math.exp(x[LN_C]), A=math.exp(x[LN_A]),
                  beta=x[BETA], latency=best.kind, unit="seconds", name=name or "fitted")
    s_meas = d.t0 / d.t1
    s_model = _host_model(x, d.g) / _t1_model(x, d.g, dep)
    warnings += _model_warnings(d, best, model, beta, latency)
    warnings += tail_warnings(d.g, d.t0, d.t1, s_meas, s_model)
    g1, g_half = _crossings(model, d, s_meas, best, x[C0], bootstrap, seed, warnings)
    if _crossing_contradicts_interval(g1, d.g, s_meas, s_model):
        # the interval was printed beside a measured crossing outside it, without a word
        warnings.append(
            f"the measured speedup passes 1 at {format_size(g1.measured)}, outside the "
            f"model's 95% interval for g1 ({format_size(g1.interval[0])}.."
            f"{format_size(g1.interval[1])}): the interval is the spread over resampled "
            f"residuals, not the model's shape error; quote the measured crossing, or fit "
            f"with --select (its 'g1 to quote')")
    warnings += extrapolation_warnings({"g1": g1.model, "g_A/2": g_half.model},
                                       d.g[0], d.g[-1])
    if frequency_hz is not None:
        model = model.to_cycles(frequency_hz)
        params = {k: _to_cycles(p, frequency_hz) for k, p in params.items()}
        c0_param = None if c0_param is None else _to_cycles(c0_param, frequency_hz)
    method = ("host power law by log-log least squares"
              + (" with a per-call constant c0" if host_constant else "")
              + "; o, L, A by relative linear least squares"
              + (" with o and L from the echo run" if d.echo is not None else "")
              + f"; all refined jointly on log host time and log speedup; latency {best.kind}"
              + (" (chosen by AIC)" if latency == "auto" else "")
              + (f"; fitted on {format_size(d.g[0])}..{format_size(d.g[-1])}, "
                 f"{len(d.excluded)} granularities left out" if d.excluded else ""))
    return FitResult(model, Parameters(params.values()), d.g, s_meas, s_model, g1, g_half, tuple(warnings), method,
                     c0_param, d.excluded)


def _crossing_contradicts_interval(g1: GranularityEstimate, g, s_meas, s_model,
                                  miss: float = 0.05) -> bool:
    """Whether the measured crossing lies outside g1's interval because the model misses
    the two measured points around it (by more than ``miss``). Where the model meets them,
    the difference is the log-log interpolation between the two sizes (exact data put the
    measured crossing a few per cent off an interval of width 0)."""
    if g1.interval is None or g1.measured is None or \
            g1.interval[0] <= g1.measured <= g1.interval[1]:
        return False
    i = int(np.clip(np.searchsorted(g, g1.measured) - 1, 0, len(g) - 2))
    errors = np.abs(np.asarray(s_model[i:i + 2]) / np.asarray(s_meas[i:i + 2]) - 1)
    return bool(np.max(errors) > miss)


def extrapolation_warnings(crossings: dict, lo: float, hi: float,
                           seen: str = "measured") -> list[str]:
    """A warning for each crossing ({label: granularity or None}) outside [lo, hi], the
    sizes the fit saw: there the model, not the data, gives it. A root found on an end
    (to within a root finder's rounding, 1e-9 relative) is inside."""
    return [f"the model's {label} = {format_size(g)} lies outside the {seen} range "
            f"{format_size(lo)}..{format_size(hi)}: it is an extrapolation"
            for label, g in crossings.items()
            if g is not None and not lo * (1 - 1e-9) <= g <= hi * (1 + 1e-9)]


def _to_cycles(p: FittedParameter, frequency_hz: float) -> FittedParameter:
    """Seconds to cycles for the time-valued parameters (L, o, C, c0); A and β are ratios."""
    scale = 1.0 if p.name in ("A", "beta") else frequency_hz
    return FittedParameter(p.name, p.value * scale, None if p.stderr is None else p.stderr * scale,
                           p.vary, p.bounds, p.note)


def _model_warnings(d: FitData, best: _Candidate, model: LogCA, beta_host: float,
                    latency: str) -> list[str]:
    """Step 4b: what the chosen fit cannot support."""
    out = []
    if best.negative_o is not None:
        out.append(f"the data suggest a negative overhead (o = {best.negative_o:.3g} s by "
                   f"linear least squares): the model was held at o >= 0")
    if d.echo is None and abs(beta_host - 1) < 0.05 and latency != "independent":
        out.append(f"with β ≈ 1 (here {beta_host:.3f}) a latency growing with g cannot be told "
                   f"apart from a lower acceleration: T1 ≈ o + (L + C/A)·g, so only "
                   f"L + C/A is identified from these times. A transfer-only (echo) run "
                   f"measures o and L directly (accelperf measure offload)")
    if not best.dependent and d.echo is None:
        out.append(f"o and L cannot be told apart with granularity-independent latency "
                   f"(as for an on-chip accelerator): only o + L = {model.o:.4g} s is identified; it "
                   f"is reported as o with L = 0. A transfer-only run would separate them")
    if model.A <= 1:
        slower = int(np.sum(d.t1 >= d.t0))
        out.append(f"A = {model.A:.3g} <= 1: the accelerated runs are slower than the host "
                   f"at {slower} of {d.n} granularities and the fitted accelerator is never "
                   f"faster, so it never breaks even (no g1); check that the host and "
                   f"accelerated columns are not swapped")
    return out


def linear_echo(g, echo, dependent):
    cols = [np.ones_like(g)] + ([g] if dependent else [])
    X = np.column_stack(cols) / echo[:, None]
    coef, *_ = np.linalg.lstsq(X, np.ones_like(g), rcond=None)
    r = X @ coef - 1
    s2 = float(r @ r) / max(len(g) - len(coef), 1)
    cov = np.linalg.pinv(X.T @ X) * s2
    se = np.sqrt(np.clip(np.diag(cov), 0, None))
    return (coef[0], coef[1] if dependent else 0.0, float(se[0]),
            float(se[1]) if dependent else None)


def _per_call_constant(g, t0, C: float, beta: float) -> float | None:
    """c0 in T0 = c0 + C·g^β, fitted on log times from the power law (C, β); None when the
    fit fails."""
    def fun(p):
        return np.log(np.exp(p[0]) + np.exp(p[1] + p[2] * np.log(g))) - np.log(t0)
    try:
        sol = optimize.least_squares(fun, [math.log(t0[0] * 0.1), math.log(C), beta])
    except (ValueError, FloatingPointError):
        return None
    return float(math.exp(sol.x[0])) if sol.success else None


def _metric_model(model: LogCA, c0: float, target: float) -> LogCA | None:
    """With a host constant, ``c0 + C·g^β = s·T1`` is LogCA's ``T0 = s·T1`` with o replaced
    by ``o − c0/s``; None when that overhead is negative (the speedup starts above s)."""
    o_eff = model.o - c0 / target
    if c0 == 0:
        return model
    return model.with_parameters(o=o_eff) if o_eff >= 0 else None


def _model_granularities(model: LogCA, c0: float) -> tuple[float | None, float | None]:
    """(g1, g_{A/2}) of a fitted model (None where they do not exist)."""
    one = _metric_model(model, c0, 1.0) if model.A > 1 else None
    half = _metric_model(model, c0, model.A / 2)
    a = break_even_granularity(one) if one is not None else None
    b = half_acceleration_granularity(half) if half is not None else None
    return (a.root if a is not None and a.exists else None,
            b.root if b is not None and b.exists else None)


def _crossings(model, d: FitData, s_meas, best: _Candidate, c0, bootstrap, seed, warnings):
    """Step 4d: g1 and g_{A/2} of the model, with bootstrap errors (residuals resampled in
    log space, each resample refitted from the solution)."""
    g, x, dep = d.g, best.x, best.dependent
    g1_model, gh_model = _model_granularities(model, c0)
    if c0 > 0 and _metric_model(model, c0, 1.0) is None:
        warnings.append(f"the host per-call constant c0 = {c0:.3g} s exceeds o = {model.o:.3g}"
                        f" s: the fitted speedup is above 1 even at the smallest sizes, so g1 "
                        f"is not defined")
    samples = {"g1": [], "g_half": []}
    if bootstrap:
        rng = np.random.default_rng(seed)
        base = _residuals(x, g, d.t0, d.t1, dep)
        n = d.n
        for _ in range(bootstrap):
            r = rng.choice(base, size=base.size, replace=True)
            t0b = _host_model(x, g) * np.exp(-r[:n])
            # speedup residual s = r_host - r_acc, so r_acc = r_host - s
            t1b = _t1_model(x, g, dep) * np.exp(-(r[:n] - r[n:2 * n]))
            try:
                xb, *_ = _solve(g, t0b, t1b, dep, x, best.fixed, d.echo)
                mb = LogCA(L=xb[LAT], o=xb[O], C=math.exp(xb[LN_C]), A=math.exp(xb[LN_A]),
                           beta=xb[BETA], latency=best.kind, unit="seconds")
                a, b = _model_granularities(mb, xb[C0])
            except (ModelError, ValueError, OverflowError, np.linalg.LinAlgError):
                continue                        # a resample the model cannot fit: skip it
            if a is not None:
                samples["g1"].append(a)
            if b is not None:
                samples["g_half"].append(b)

    def summarise(key, value, target):
        vals = np.array(samples[key])
        vals = vals[np.isfinite(vals) & (vals < 1e100)]     # drop resamples that ran away
        se = float(np.std(vals, ddof=1)) if vals.size > 2 else None
        ci = (float(np.percentile(vals, 2.5)), float(np.percentile(vals, 97.5))) \
            if vals.size > 10 else None
        return GranularityEstimate(measured_crossing(g, s_meas, target), value, se, ci)

    return summarise("g1", g1_model, 1.0), summarise("g_half", gh_model, model.A / 2)
