"""LogCA parameters from measurements (ISCA'17 §4), with uncertainty and honest warnings.

Inputs are host times T0(g), accelerated times T1(g) and, optionally, transfer-only "echo"
times (o + L·g measured directly), all in seconds per operation.

1. C and β: least squares of ln T0 on ln g (the paper's regression over 16 B–32 MiB).
2. o, L and A: weighted linear least squares of T1 = o + L1(g) + (C·g^β)·(1/A), relative
   weights, with L1 = L (independent) or L·g (dependent); from the echo run when given.
3. All parameters refined together by bounded nonlinear least squares on the log of the
   host time and of the speedup (relative errors): the speedup is what the model is judged
   on, so it is fitted directly.

Standard errors come from the Jacobian at the solution; g1 and g_{A/2} get bootstrap
standard errors and 95% intervals (residuals resampled in log space). What the data cannot
support is said in ``warnings``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize, stats

from ..errors import ModelError
from ..units import format_size
from .metrics import break_even_granularity, half_acceleration_granularity
from .model import LogCA

MIN_POINTS = 6


@dataclass(frozen=True)
class FittedParameter:
    """One fitted quantity, styled on lmfit's Parameter."""

    name: str
    value: float
    stderr: float | None
    vary: bool = True
    bounds: tuple[float, float] = (0.0, math.inf)
    note: str | None = None

    def to_dict(self) -> dict:
        return {"value": self.value, "stderr": self.stderr, "vary": self.vary,
                "bounds": list(self.bounds), "note": self.note}

    def __repr__(self) -> str:
        err = "" if self.stderr is None else f" ± {self.stderr:.3g}"
        fixed = "" if self.vary else " (fixed)"
        return f"<{self.name} = {self.value:.6g}{err}{fixed}>"


@dataclass(frozen=True)
class Crossing:
    measured: float | None
    model: float | None
    stderr: float | None
    interval: tuple[float, float] | None

    def to_dict(self) -> dict:
        return {"measured": self.measured, "model": self.model, "stderr": self.stderr,
                "ci95": None if self.interval is None else list(self.interval)}


@dataclass(frozen=True)
class FitResult:
    model: LogCA
    parameters: dict
    granularity: np.ndarray = field(repr=False)
    speedup_measured: np.ndarray = field(repr=False)
    speedup_model: np.ndarray = field(repr=False)
    g1: Crossing = None
    g_half: Crossing = None
    warnings: tuple = ()
    method: str = ""

    @property
    def relative_error(self) -> np.ndarray:
        return self.speedup_model / self.speedup_measured - 1.0

    @property
    def mean_error(self) -> float:
        return float(np.mean(np.abs(self.relative_error)))

    @property
    def max_error(self) -> float:
        return float(np.max(np.abs(self.relative_error)))

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
        }

    def __repr__(self) -> str:
        return (f"FitResult({self.model.latency} latency, "
                + ", ".join(repr(p) for p in self.parameters.values())
                + f"; speedup error mean {self.mean_error:.1%}, max {self.max_error:.1%}, "
                  f"{len(self.warnings)} warning(s))")


# ---------------------------------------------------------------------- helpers
def _check(name: str, values, n: int | None = None) -> np.ndarray:
    arr = np.asarray(values, float)
    if arr.ndim != 1 or (n is not None and arr.size != n):
        raise ModelError(f"{name} must be a list of {n or 'some'} numbers, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        bad = arr[~(np.isfinite(arr) & (arr > 0))][0]
        raise ModelError(f"{name} contains {bad!r}: times and granularities must be finite "
                         f"and > 0")
    return arr


def power_law(g, t) -> tuple[float, float, float, float]:
    """(C, β, stderr of ln C, stderr of β) from least squares of ln t on ln g."""
    res = stats.linregress(np.log(g), np.log(t))
    return math.exp(res.intercept), res.slope, res.intercept_stderr, res.stderr


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


def _t1_model(p, g, dependent):
    lnC, beta, o, L, lnA = p
    host = np.exp(lnC + beta * np.log(g))
    return o + (L * g if dependent else L) + host * np.exp(-lnA)


def _residuals(p, g, t0, t1, dependent, fixed):
    """Log-residuals of the host time and of the speedup: the speedup is what the model is
    judged on, so it is fitted directly (its residual is r_host - r_accel)."""
    q = np.where(np.isnan(fixed), p, fixed)
    lnC, beta = q[0], q[1]
    r_host = lnC + beta * np.log(g) - np.log(t0)
    r_acc = np.log(_t1_model(q, g, dependent)) - np.log(t1)
    return np.concatenate([r_host, r_host - r_acc])


def _solve(g, t0, t1, dependent, start, fixed, echo=None):
    # β in [0.01, 5]; ln A in [-30, 30] keeps a wild bootstrap resample finite.
    lo = np.array([-np.inf, 0.01, 0.0, 0.0, -30.0])
    hi = np.array([np.inf, 5.0, np.inf, np.inf, 30.0])
    x0 = np.clip(np.where(np.isnan(fixed), start, fixed), lo + 1e-300, hi - 1e-12)
    free = np.isnan(fixed)

    def fun(x_free):
        x = fixed.copy()
        x[free] = x_free
        r = _residuals(x, g, t0, t1, dependent, fixed)
        if echo is not None:
            r = np.concatenate([r, np.log(x[2] + (x[3] * g if dependent else x[3])) -
                                np.log(echo)])
        return r

    sol = optimize.least_squares(fun, x0[free], bounds=(lo[free], hi[free]), method="trf",
                                 x_scale="jac", max_nfev=2000)
    x = fixed.copy()
    x[free] = sol.x
    dof = max(sol.fun.size - free.sum(), 1)
    s2 = float(sol.fun @ sol.fun) / dof
    try:
        cov = np.linalg.pinv(sol.jac.T @ sol.jac) * s2
        se_free = np.sqrt(np.clip(np.diag(cov), 0, None))
    except np.linalg.LinAlgError:
        se_free = np.full(free.sum(), np.nan)
    se = np.full(5, np.nan)
    se[free] = se_free
    return x, se, float(sol.fun @ sol.fun), sol


def _linear_accel(g, host, t1, dependent):
    """Weighted (relative) linear least squares of T1 on [1, g?, host]: (o, L, 1/A)."""
    cols = [np.ones_like(g)] + ([g] if dependent else []) + [host]
    X = np.column_stack(cols) / t1[:, None]
    coef, *_ = np.linalg.lstsq(X, np.ones_like(g), rcond=None)
    o = coef[0]
    L = coef[1] if dependent else 0.0
    inv_a = coef[-1]
    return o, L, inv_a


def fit_logca(granularity, t_host, t_accel, t_echo=None, latency: str = "auto",
              frequency_hz: float | None = None, bootstrap: int = 200, seed: int = 0,
              name: str | None = None) -> FitResult:
    """Fit L, o, C, A and β to measured times (seconds per operation of g bytes).

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
    """
    g = _check("granularity", granularity)
    n = g.size
    t0 = _check("host times", t_host, n)
    t1 = _check("accelerated times", t_accel, n)
    echo = None if t_echo is None else _check("echo times", t_echo, n)
    if latency not in ("independent", "dependent", "auto"):
        raise ModelError(f"latency = {latency!r} is invalid: independent, dependent or auto")
    if n < 3:
        raise ModelError(f"only {n} granularities: a fit needs at least 3 (and {MIN_POINTS} "
                         f"or more to be trusted)")
    order = np.argsort(g)
    g, t0, t1 = g[order], t0[order], t1[order]
    echo = None if echo is None else echo[order]
    if np.any(np.diff(g) == 0):
        raise ModelError("granularity values repeat: give one row per granularity and mode")
    warnings: list[str] = []
    if n < MIN_POINTS:
        warnings.append(f"only {n} granularities: fewer than {MIN_POINTS} points cannot "
                        f"support five parameters; treat the fit as indicative")

    # 1. host power law (the paper's regression)
    C, beta, se_lnC, se_beta = power_law(g, t0)
    falls = [int(g[i + 1]) for i in range(n - 1) if t0[i + 1] < t0[i] * 0.97]
    if falls:
        warnings.append("host time is not monotone: it falls at "
                        + ", ".join(format_size(x) for x in falls)
                        + "; LogCA assumes it grows with g (check for noise or a cache effect)")
    host_fit = C * g**beta
    c0_fit = _per_call_constant(g, t0, C, beta)
    if c0_fit is not None and c0_fit > 0.05 * t0[0]:
        keep = c0_fit < 0.05 * t0
        if keep.sum() >= 3:
            C_r, beta_r, _, _ = power_law(g[keep], t0[keep])
            warnings.append(
                f"host time has a per-call constant of about {c0_fit:.3g} s "
                f"({c0_fit / t0[0]:.0%} of the time at {format_size(g[0])}) that LogCA's "
                f"C·g^β lacks, which pulls β down: β = {beta:.4f} on all points, "
                f"{beta_r:.4f} when the fit is restricted to g >= {format_size(g[keep][0])} "
                f"(C {C:.4g} -> {C_r:.4g})")

    # 2. o, L, A by linear least squares (paper's order), for each latency kind
    candidates = ["independent", "dependent"] if latency == "auto" else [latency]
    fits = {}
    negative_o = {}                  # kind -> the negative o the linear step suggested
    for kind in candidates:
        dep = kind == "dependent"
        if echo is not None:
            o_e, L_e, se_o, se_L = _linear_echo(g, echo, dep)
            fixed = np.array([np.nan, np.nan, max(o_e, 0.0), max(L_e, 0.0), np.nan])
            inv_a = np.median(host_fit / np.clip(t1 - o_e - (L_e * g if dep else L_e),
                                                  1e-300, None))
            start = np.array([math.log(C), beta, fixed[2], fixed[3], math.log(max(inv_a, 1e-9))])
        else:
            o_lin, L_lin, inv_a = _linear_accel(g, host_fit, t1, dep)
            if o_lin < 0:
                negative_o[kind] = o_lin
            fixed = np.array([np.nan, np.nan, np.nan, np.nan if dep else 0.0, np.nan])
            start = np.array([math.log(C), beta, max(o_lin, 1e-12 * t1[0]), max(L_lin, 0.0),
                              math.log(1 / inv_a) if inv_a > 0 else 0.0])
        x, se, ssr, _ = _solve(g, t0, t1, dep, start, fixed, echo)
        k = int(np.isnan(fixed).sum())
        aic = 2 * n * math.log(max(ssr, 1e-300) / (2 * n)) + 2 * k
        fits[kind] = (x, se, ssr, aic, fixed, echo is not None and (o_e, L_e, se_o, se_L))
    if latency == "auto":
        # Dependent latency must earn its extra parameter, and must not do it by sending A
        # to its bound (T1 = o + L·g with a vanishing compute term is the degenerate β ≈ 1
        # case, not an accelerator).
        dep_x = fits["dependent"][0]
        kind = "dependent" if (fits["dependent"][3] < fits["independent"][3] - 2
                               and dep_x[4] < math.log(1e4)) else "independent"
    else:
        kind = latency
    if kind in negative_o:
        warnings.append(f"the data suggest a negative overhead (o = {negative_o[kind]:.3g} s by "
                        f"linear least squares): the model was held at o >= 0")
    x, se, ssr, aic, fixed, echo_fit = fits[kind]
    dep = kind == "dependent"
    if echo is None and abs(beta - 1) < 0.05 and latency != "independent":
        warnings.append(f"with β ≈ 1 (here {beta:.3f}) a latency growing with g cannot be told "
                        f"apart from a lower acceleration: T1 ≈ o + (L + C/A)·g, so only "
                        f"L + C/A is identified from these times. A transfer-only (echo) run "
                        f"measures o and L directly (accelperf measure offload)")
    lnC, beta_f, o_f, L_f, lnA = x
    C_f, A_f = math.exp(lnC), math.exp(lnA)
    params = {
        "L": FittedParameter("L", L_f, None if np.isnan(se[3]) else float(se[3]),
                             vary=not np.isfinite(fixed[3]) if echo is None else False,
                             note=None),
        "o": FittedParameter("o", o_f, None if np.isnan(se[2]) else float(se[2]),
                             vary=echo is None),
        "C": FittedParameter("C", C_f, float(C_f * se[0]), bounds=(0, math.inf)),
        "A": FittedParameter("A", A_f, float(A_f * se[4]), bounds=(0, math.inf)),
        "beta": FittedParameter("beta", beta_f, float(se[1]), bounds=(0.01, 5.0)),
    }
    if echo_fit:
        o_e, L_e, se_o, se_L = echo_fit
        params["o"] = FittedParameter("o", o_f, se_o, vary=False, note="from the echo run")
        params["L"] = FittedParameter("L", L_f, se_L if dep else None, vary=False,
                                      note="from the echo run")
    if not dep and echo is None:
        params["L"] = FittedParameter("L", 0.0, None, vary=False,
                                      note="not identified: only o + L is")
        params["o"] = FittedParameter("o", o_f, params["o"].stderr, note="this is o + L")
        warnings.append(f"o and L cannot be told apart with granularity-independent latency "
                        f"(an on-chip accelerator): only o + L = {o_f:.4g} s is identified; it "
                        f"is reported as o with L = 0. A transfer-only run would separate them")
    model = LogCA(L=L_f if dep or echo is not None else 0.0, o=o_f, C=C_f, A=A_f, beta=beta_f,
                  latency=kind, unit="seconds", name=name or "fitted")
    s_meas = t0 / t1
    s_model = model.speedup(g)

    falling = _falling_tail(s_meas)
    over = s_model[-1] / s_meas[-1] - 1
    if falling and over > 0.025:
        first = n - falling
        before, last = first - 1, n - 1
        warnings.append(
            f"the measured speedup falls at the large end: {s_meas[last]:.3g} at "
            f"{format_size(g[last])} against {np.median(s_meas[n // 2:first]):.3g} over "
            f"{format_size(g[n // 2])}..{format_size(g[before])}, from {format_size(g[first])} "
            f"on (accelerated {g[before] / t1[before] / 1e9:.3g} -> {g[last] / t1[last] / 1e9:.3g}"
            f" GB/s, host {g[before] / t0[before] / 1e9:.3g} -> {g[last] / t0[last] / 1e9:.3g} "
            f"GB/s). The data have likely outgrown a cache; LogCA has no memory hierarchy, and "
            f"the fitted curve over-predicts the speedup at {format_size(g[last])} by {over:.0%}")
    g1, g_half = _crossings(model, g, s_meas, t0, t1, x, fixed, dep, echo, bootstrap, seed)
    for label, c in (("g1", g1), ("g_A/2", g_half)):
        if c.model is not None and not (g[0] <= c.model <= g[-1]):
            warnings.append(f"the model's {label} = {format_size(c.model)} lies outside the "
                            f"measured range {format_size(g[0])}..{format_size(g[-1])}: it is "
                            f"an extrapolation")
    if frequency_hz is not None:
        model = model.to_cycles(frequency_hz)
        scale = {"L": frequency_hz, "o": frequency_hz, "C": frequency_hz, "A": 1.0, "beta": 1.0}
        params = {k: FittedParameter(p.name, p.value * scale[k],
                                     None if p.stderr is None else p.stderr * scale[k],
                                     p.vary, p.bounds, p.note) for k, p in params.items()}
    method = ("host power law by log-log least squares; o, L, A by relative linear least "
              "squares" + (" with o and L from the echo run" if echo is not None else "")
              + f"; all refined jointly on log host time and log speedup; latency {kind}"
              + (" (chosen by AIC)" if latency == "auto" else ""))
    return FitResult(model, params, g, s_meas, s_model, g1, g_half, tuple(warnings), method)


def _linear_echo(g, echo, dependent):
    cols = [np.ones_like(g)] + ([g] if dependent else [])
    X = np.column_stack(cols) / echo[:, None]
    coef, *_ = np.linalg.lstsq(X, np.ones_like(g), rcond=None)
    r = X @ coef - 1
    s2 = float(r @ r) / max(len(g) - len(coef), 1)
    cov = np.linalg.pinv(X.T @ X) * s2
    se = np.sqrt(np.clip(np.diag(cov), 0, None))
    return (coef[0], coef[1] if dependent else 0.0, float(se[0]),
            float(se[1]) if dependent else None)


def _falling_tail(speedup, drop: float = 0.05) -> int:
    """How many of the largest granularities have a measured speedup more than ``drop``
    below the median of the upper half before them (LogCA's speedup never falls with g)."""
    s = np.asarray(speedup)
    n = s.size
    tail = 0
    while tail < n // 4 and n // 2 < n - tail - 1:
        reference = np.median(s[n // 2:n - tail - 1])
        if s[n - tail - 1] >= (1 - drop) * reference:
            break
        tail += 1
    return tail


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


def _crossings(model, g, s_meas, t0, t1, x, fixed, dep, echo, bootstrap, seed):
    def model_values(m):
        a = break_even_granularity(m) if m.A > 1 else None
        b = half_acceleration_granularity(m)
        return (a.root if a is not None and a.exists else None,
                b.root if b.exists else None)

    g1_model, gh_model = model_values(model)
    samples = {"g1": [], "g_half": []}
    if bootstrap:
        rng = np.random.default_rng(seed)
        base = _residuals(x, g, t0, t1, dep, fixed)
        n = len(g)
        for _ in range(bootstrap):
            r = rng.choice(base, size=base.size, replace=True)
            t0b = np.exp(x[0] + x[1] * np.log(g)) * np.exp(-r[:n])
            # speedup residual s = r_host - r_acc, so r_acc = r_host - s
            t1b = _t1_model(x, g, dep) * np.exp(-(r[:n] - r[n:2 * n]))
            try:
                xb, *_ = _solve(g, t0b, t1b, dep, x, fixed, echo)
                mb = LogCA(L=xb[3], o=xb[2], C=math.exp(xb[0]), A=math.exp(xb[4]), beta=xb[1],
                           latency="dependent" if dep else "independent", unit="seconds")
                a, b = model_values(mb)
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
        return Crossing(measured_crossing(g, s_meas, target), value, se, ci)

    return summarise("g1", g1_model, 1.0), summarise("g_half", gh_model, model.A / 2)
