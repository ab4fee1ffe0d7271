"""Fit LogCA with a memory hierarchy (:mod:`.hierarchy`) to measured times, and choose it
over plain LogCA only when the data ask for it (Akaike information criterion).

Steps:

1. plain LogCA by :func:`.fit.fit_logca` (no bootstrap): the latency kind (chosen by AIC
   there) and the starting values;
2. the transitions the data can identify: a layer's transition, centred at ``μ_k/w`` for the
   starting w, needs at least ``MIN_SIDE`` measured sizes on each side; the others are left
   out with a warning naming the layer (the fit is still possible without them);
3. both candidates solved by the same bounded nonlinear least squares on the same residuals
   (log host time, log speedup, and log echo time when there is an echo run): plain
   (no transition) and hierarchical (the identified transitions, each with its own
   working-set factor w_k and sharpness s_k for the computations and w'_k, s'_k for the
   copies when the latency is dependent, from several starts, the best refined);
4. AIC = N·ln(SSR/N) + 2k on those residuals; the hierarchical model must lower it by 2 to
   be chosen (the rule ``fit_logca`` applies to the latency kind).

Standard errors come from the Jacobian at the solution, as in :mod:`.fit`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize

from ..errors import ModelError
from ..units import format_size
from .fit import (FittedParameter, GranularityEstimate, SpeedupErrors, fit_logca,
                  measured_crossing, prepare_data)
from .fitsanity import sanity_warnings
from .hierarchy import HierarchicalLogCA, MemoryLayer, scan_grid
from .model import LogCA

MIN_SIDE = 2                         # measured sizes needed on each side of a transition
START_WORKING_SET = 2.0              # source and destination: the least an offload touches
WORKING_SET_STARTS = (1.0, 2.0, 4.0)
# A working set from half the offloaded bytes (a victim last level holds what the level
# inside it evicts, so the two add up) to eight buffers of them.
W_BOUNDS = (0.125, 16.0)
S_BOUNDS = (0.5, 60.0)
QUICK_NFEV = 150                     # evaluations per start before the best is refined
# Vector layout: the plain parameters, then per transition h_k, a_k, l_k, the computations'
# w_k and s_k, and the copies' w'_k and s'_k.
LN_C, BETA, O, LAT, LN_A, C0, LN_W, LN_S, O_ECHO = range(9)
N_FIXED = 9
STEP_BOUNDS = (-0.9, 10.0)


@dataclass(frozen=True)
class Candidate:
    """One solved model: its vector, standard errors, residual sum of squares and AIC."""

    kind: str                        # "plain" or "hierarchical"
    model: HierarchicalLogCA
    x: np.ndarray = field(repr=False)
    stderr: np.ndarray = field(repr=False)
    ssr: float
    aic: float
    free: int
    # the covariance of x from the Jacobian (0 in the rows and columns of held entries)
    covariance: np.ndarray | None = field(default=None, repr=False)


@dataclass(frozen=True)
class HierarchyFit(SpeedupErrors):
    """The chosen model (``model``), both candidates, per-layer parameters with standard
    errors, the speedup errors and g1/g_A/2 against the measured crossings."""

    model: HierarchicalLogCA
    chosen: str
    plain: Candidate = field(repr=False)
    hierarchical: Candidate | None = field(repr=False)
    parameters: dict = field(repr=False)
    granularity: np.ndarray = field(repr=False)
    speedup_measured: np.ndarray = field(repr=False)
    speedup_model: np.ndarray = field(repr=False)
    g1: GranularityEstimate = None
    g_half: GranularityEstimate = None
    left_out: tuple = ()             # layers whose transition the data cannot identify
    warnings: tuple = ()
    plain_fit: object = field(default=None, repr=False)   # fit_logca's own FitResult

    def speedup(self, g):
        """The chosen model's speedup at g."""
        return self.model.speedup(g)

    def errors_of(self, candidate: Candidate) -> tuple[float, float]:
        """(mean, max) relative speedup error of one candidate."""
        e = np.abs(candidate.model.speedup(self.granularity) / self.speedup_measured - 1)
        return float(np.mean(e)), float(np.max(e))

    def to_dict(self) -> dict:
        def cand(c):
            if c is None:
                return None
            mean, worst = self.errors_of(c)
            return {"aic": c.aic, "free_parameters": c.free, "ssr": c.ssr,
                    "error": {"mean": mean, "max": worst}, "model": c.model.parameters()}
        return {"chosen": self.chosen, "model": self.model.parameters(),
                "parameters": {k: p.to_dict() for k, p in self.parameters.items()},
                "plain": cand(self.plain), "hierarchical": cand(self.hierarchical),
                "error": {"mean": self.mean_error, "max": self.max_error,
                          "per_granularity": [
                              {"granularity": float(g), "measured": float(m), "model": float(p)}
                              for g, m, p in zip(self.granularity, self.speedup_measured,
                                                 self.speedup_model)]},
                "g1": self.g1.to_dict(), "g_half": self.g_half.to_dict(),
                "layers_left_out": list(self.left_out), "warnings": list(self.warnings)}

    def __repr__(self) -> str:
        aic = "" if self.hierarchical is None else \
            f", AIC plain {self.plain.aic:.1f} vs hierarchical {self.hierarchical.aic:.1f}"
        return (f"HierarchyFit({self.chosen}{aic}; speedup error mean {self.mean_error:.2%}, "
                f"max {self.max_error:.2%})")


# ---------------------------------------------------------------------- the model of a vector
def model_of_vector(x, layers, dependent: bool, name: str | None = None) -> HierarchicalLogCA:
    """The model a parameter vector (the layout above) stands for."""
    n = len(layers) - 1
    base = LogCA(L=x[LAT] if dependent else 0.0, o=x[O], C=math.exp(x[LN_C]),
                 A=math.exp(x[LN_A]), beta=x[BETA],
                 latency="dependent" if dependent else "independent", unit="seconds",
                 name=name)
    steps = x[N_FIXED:]
    return HierarchicalLogCA(base, layers, tuple(steps[:n]), tuple(steps[n:2 * n]),
                             tuple(steps[2 * n:3 * n]),
                             working_set=tuple(np.exp(steps[3 * n:4 * n])) or 1.0,
                             sharpness=tuple(np.exp(steps[4 * n:5 * n])) or 4.0,
                             host_constant=x[C0], name=name,
                             link_working_set=tuple(np.exp(steps[5 * n:6 * n])) or 1.0,
                             link_sharpness=tuple(np.exp(steps[6 * n:7 * n])) or 4.0)


def _times(x, layers, g, dependent):
    """(T0, T1, echo) of a vector, written out for speed (the model class validates).

    ``x`` may also be a stack of vectors, parameters first (shape (P, draws, 1)), with g
    broadcasting against each: the Monte-Carlo draws of :func:`speedup_draws`."""
    n = len(layers) - 1
    host, h, q, r, _ = _parts(x, layers, g, n)
    link = x[LAT] * g * r if dependent else x[LAT]
    t0 = x[C0] + host * h
    t1 = x[O] + link + host * np.exp(-x[LN_A]) * q
    echo = x[O_ECHO] + link       # the echo call's own overhead: no computation to start
    return t0, t1, echo


def _parts(x, layers, g, n):
    """host = C·g^β, the factors H, Q, R and, per transition, the shares m_k, m'_k with their
    logistic exponents z (what both the times and their Jacobian need)."""
    shares, copies = [], []
    for k, layer in enumerate(layers[:-1]):
        for out, (iw, is_) in ((shares, (3, 4)), (copies, (5, 6))):
            w = np.exp(x[N_FIXED + iw * n + k])
            s = np.exp(x[N_FIXED + is_ * n + k])
            with np.errstate(divide="ignore", over="ignore"):
                z = np.clip(s * (math.log(layer.capacity_bytes) - np.log(w * g)), -700, 700)
            out.append((1.0 / (1.0 + np.exp(z)), z, s))
    h = 1 + sum(x[N_FIXED + k] * shares[k][0] for k in range(n))
    q = 1 + sum(x[N_FIXED + n + k] * shares[k][0] for k in range(n))
    r = 1 + sum(x[N_FIXED + 2 * n + k] * copies[k][0] for k in range(n))
    host = np.exp(x[LN_C] + x[BETA] * np.log(g))
    return host, h, q, r, (shares, copies)


def _residuals(x, d, layers, dependent) -> np.ndarray:
    """Log residuals of the host time, the speedup and (with an echo run) the echo time:
    those :func:`.fit.fit_logca` minimises, so the two fits' AICs compare."""
    t0, t1, echo = _times(x, layers, d.g, dependent)
    # A trial step may take a time through 0 (a step of -1 or less): a huge residual, not
    # NaN and a NumPy warning, sends the solver back.
    r = [np.log(np.clip(t0, 1e-300, None)) - np.log(d.t0)]
    r.append(r[0] - (np.log(np.clip(t1, 1e-300, None)) - np.log(d.t1)))
    if d.echo is not None:
        r.append(np.log(np.clip(echo, 1e-300, None)) - np.log(d.echo))
    return np.concatenate(r)


def _jacobian(x, d, layers, dependent) -> np.ndarray:
    """The exact derivatives of :func:`_residuals` (rows: residuals, columns: the vector
    layout); see :func:`_time_jacobians`."""
    j0, j1, je = _time_jacobians(x, layers, d.g, dependent)
    blocks = [j0, j0 - j1]
    if d.echo is not None:
        blocks.append(je)
    return np.vstack(blocks)


def _time_jacobians(x, layers, g, dependent):
    """The exact derivatives of ln T0, ln T1 and ln echo at each g with respect to every
    entry of x. With the logistic share ``m = 1/(1 + e^z)``,
    ``z = s·(ln μ − ln w − ln g)``: ``∂m/∂ln w = s·m(1 − m)`` and ``∂m/∂ln s = −z·m(1 − m)``;
    the rest is the chain rule through the logarithms of T0, T1 and the echo time. Exact
    derivatives make each solver step one evaluation instead of one per parameter (the
    finite differences cost 9 + 7n evaluations a step)."""
    n = len(layers) - 1
    host, h, q, r, (shares, copies) = _parts(x, layers, g, n)
    lat = x[LAT]
    link = lat * g * r if dependent else lat
    accel = host * math.exp(-x[LN_A])
    t0 = x[C0] + host * h
    t1 = x[O] + link + accel * q
    echo = x[O_ECHO] + link
    lng = np.log(g)
    P = x.size
    j0, j1, je = (np.zeros((g.size, P)) for _ in range(3))
    j0[:, LN_C] = host * h / t0
    j0[:, BETA] = host * h * lng / t0
    j0[:, C0] = 1 / t0
    j1[:, LN_C] = accel * q / t1
    j1[:, BETA] = accel * q * lng / t1
    j1[:, O] = 1 / t1
    j1[:, LN_A] = -accel * q / t1
    dlink = g * r if dependent else np.ones_like(g)
    j1[:, LAT] = dlink / t1
    je[:, LAT] = dlink / echo
    je[:, O_ECHO] = 1 / echo
    for k in range(n):
        m, z, s = shares[k]
        spread = m * (1 - m)
        hk, ak = x[N_FIXED + k], x[N_FIXED + n + k]
        j0[:, N_FIXED + k] = host * m / t0
        j1[:, N_FIXED + n + k] = accel * m / t1
        for col, dm in ((N_FIXED + 3 * n + k, s * spread), (N_FIXED + 4 * n + k, -z * spread)):
            j0[:, col] = host * hk * dm / t0
            j1[:, col] = accel * ak * dm / t1
        if dependent:
            m, z, s = copies[k]
            spread = m * (1 - m)
            lk = x[N_FIXED + 2 * n + k]
            j1[:, N_FIXED + 2 * n + k] = lat * g * m / t1
            je[:, N_FIXED + 2 * n + k] = lat * g * m / echo
            for col, dm in ((N_FIXED + 5 * n + k, s * spread),
                            (N_FIXED + 6 * n + k, -z * spread)):
                j1[:, col] = lat * g * lk * dm / t1
                je[:, col] = lat * g * lk * dm / echo
    return j0, j1, je


def _aic(ssr: float, n_res: int, k: int) -> float:
    return n_res * math.log(max(ssr, 1e-300) / n_res) + 2 * k


def _solve(d, layers, dependent, start, free, lower, upper, max_nfev=4000):
    def residuals(v):
        x = start.copy()
        x[free] = v
        return _residuals(x, d, layers, dependent)

    def jacobian(v):
        x = start.copy()
        x[free] = v
        return _jacobian(x, d, layers, dependent)[:, free]

    x0 = np.clip(start[free], lower[free] + 1e-12, upper[free] - 1e-12)
    sol = optimize.least_squares(residuals, x0, jac=jacobian, bounds=(lower[free], upper[free]),
                                 method="trf", x_scale="jac", max_nfev=max_nfev)
    x = start.copy()
    x[free] = sol.x
    ssr = float(sol.fun @ sol.fun)
    n_res = sol.fun.size
    k = int(free.sum())
    # Columns scaled to unit norm first: o and L (seconds) and the logarithms differ by
    # ten decades, and an unscaled pinv would drop the weak directions as if exact.
    norm = np.linalg.norm(sol.jac, axis=0)
    norm[norm == 0] = 1.0
    js = sol.jac / norm
    cov = np.linalg.pinv(js.T @ js) / np.outer(norm, norm) * ssr / max(n_res - k, 1)
    se = np.full(x.size, np.nan)
    se[free] = np.sqrt(np.clip(np.diag(cov), 0, None))
    full = np.zeros((x.size, x.size))
    full[np.ix_(free, free)] = cov
    return x, se, ssr, _aic(ssr, n_res, k), k, full


def _bounds(n: int):
    lower = np.array([-np.inf, 0.01, 0.0, 0.0, -30.0, 0.0, math.log(0.25), math.log(0.5), 0.0]
                     + ([STEP_BOUNDS[0]] * 3 * n
                        + ([math.log(W_BOUNDS[0])] * n + [math.log(S_BOUNDS[0])] * n) * 2))
    upper = np.array([np.inf, 5.0, np.inf, np.inf, 30.0, np.inf, math.log(64.0), math.log(30.0),
                      np.inf] + ([STEP_BOUNDS[1]] * 3 * n
                                + ([math.log(W_BOUNDS[1])] * n + [math.log(S_BOUNDS[1])] * n) * 2))
    return lower, upper


# ---------------------------------------------------------------------- identifiability
def identifiable_layers(layers, g) -> tuple[tuple[MemoryLayer, ...], list[str]]:
    """The layers whose transition the sizes ``g`` can pin down (at least ``MIN_SIDE`` sizes
    on each side of ``μ/w`` for the starting w), the outermost layer always kept; and a
    warning for each layer left out, naming it and what is needed."""
    g = np.asarray(g, float)
    kept, warnings = [], []
    for layer in layers[:-1]:
        centre = layer.capacity_bytes / START_WORKING_SET
        below, above = int(np.sum(g < centre)), int(np.sum(g > centre))
        if below >= MIN_SIDE and above >= MIN_SIDE:
            kept.append(layer)
            continue
        warnings.append(
            f"layer {layer.name!r} ({format_size(layer.capacity_bytes)}) left out: its "
            f"transition near {format_size(centre)} needs at least {MIN_SIDE} measured sizes "
            f"on each side, the data have {below} below and {above} above")
    return tuple(kept) + (layers[-1],), warnings


# ---------------------------------------------------------------------- the fit
def fit_hierarchical(granularity, t_host, t_accel, layers, t_echo=None,
                     latency: str = "auto", lo=None, hi=None, host_constant: bool = False,
                     name: str | None = None) -> HierarchyFit:
    """Fit plain and hierarchical LogCA (seconds per operation of g bytes) and choose by AIC.

    ``layers`` come from :func:`.hierarchy.layers_from_hierarchy` (a density hierarchy file or
    ``density probe``). With one layer the answer is the plain fit.
    """
    layers = tuple(layers)
    if not layers or not all(isinstance(l, MemoryLayer) for l in layers):
        raise ModelError("layers must be a non-empty sequence of MemoryLayer "
                         "(layers_from_hierarchy(hierarchy))")
    name = name or "fitted"
    plain_fit = fit_logca(granularity, t_host, t_accel, t_echo, latency=latency,
                          bootstrap=0, lo=lo, hi=hi, host_constant=host_constant, name=name)
    d = prepare_data(granularity, t_host, t_accel, t_echo, lo, hi)
    dependent = plain_fit.model.dependent
    kept, warnings = identifiable_layers(layers, d.g)
    m = plain_fit.model
    c0 = 0.0 if plain_fit.host_constant is None else plain_fit.host_constant.value
    base_x = np.array([math.log(m.C), m.beta, m.o, m.L, math.log(m.A), c0,
                       math.log(START_WORKING_SET), math.log(3.0), m.o])
    plain = _plain_candidate(plain_fit, d, (layers[-1],), dependent, base_x, name)
    hier = None
    if len(kept) > 1:
        tries = []
        for base in [base_x] + _inner_start(d, t_echo, latency, host_constant, lo, hi):
            for w in WORKING_SET_STARTS:
                n = len(kept) - 1
                ws = np.concatenate([np.full(n, math.log(w)), np.full(n, math.log(3.0))])
                start = np.concatenate([base, np.full(3 * n, 0.05), ws, ws])
                tries.append(_candidate("hierarchical", d, kept, dependent, start,
                                        host_constant, name, max_nfev=QUICK_NFEV))
        best = min(tries, key=lambda c: c.ssr)             # refine the best start only
        hier = _candidate("hierarchical", d, kept, dependent, best.x, host_constant, name)
    points = d.n * (2 if d.echo is None else 3)        # the measured times it is fitted to
    if hier is not None and hier.free > points:
        warnings.append(f"the hierarchical model has {hier.free} free parameters for {points} "
                        f"measured times: refused (more parameters than data points); "
                        f"measure more sizes or give fewer layers")
        hier = None
    if hier is not None and (vanishing := _vanishing_costs(hier.model)):
        warnings.append(f"the hierarchical model's {'; its '.join(vanishing)}: refused (a "
                        f"time cannot be negative), the plain model is kept")
        hier = None
    chosen = hier if hier is not None and hier.aic < plain.aic - 2 else plain
    s_meas = d.t0 / d.t1
    model = chosen.model
    warnings += _effect_warnings(hier, chosen)
    warnings += sanity_warnings(d, model if hier is not None and chosen is hier else None,
                                layers)
    g1 = GranularityEstimate(measured_crossing(d.g, s_meas, 1.0), model.g1(), None, None)
    g_half = GranularityEstimate(measured_crossing(d.g, s_meas, model.A / 2), model.g_half(),
                                 None, None)
    return HierarchyFit(model, chosen.kind, plain, hier, _parameters(chosen, dependent),
                        d.g, s_meas, np.asarray(model.speedup(d.g), float), g1, g_half,
                        tuple(l.name for l in layers[:-1] if l not in kept), tuple(warnings),
                        plain_fit)


def _inner_start(d, t_echo, latency, host_constant, lo, hi) -> list:
    """Plain LogCA fitted to the smaller half of the sizes, where the data fit the inner
    layers and LogCA holds: the innermost layer's costs to start from (none when that half
    is too small to fit)."""
    k = d.n // 2 + 1
    if k < 6:
        return []
    starts = [_linear_start(d.g[:k], d.t0[:k], d.t1[:k],
                            None if d.echo is None else d.echo[:k], host_constant)]
    try:
        f = fit_logca(d.g, d.t0, d.t1, d.echo, latency=latency, bootstrap=0,
                      hi=float(d.g[k - 1]), host_constant=host_constant)
    except ModelError:
        return starts
    m = f.model
    c0 = 0.0 if f.host_constant is None else f.host_constant.value
    return starts + [np.array([math.log(m.C), m.beta, m.o, m.L, math.log(m.A), c0,
                               math.log(START_WORKING_SET), math.log(3.0), m.o])]


def _linear_start(g, t0, t1, echo, host_constant) -> np.ndarray:
    """β = 1 by relative linear least squares: T0 = c0 + C·g, T1 = o + K·g with K = L + C/A,
    the echo run (when there is one) o + L·g; A = C/(K − L)."""
    def line(t, constant=True):
        X = np.column_stack([np.ones_like(g), g] if constant else [g]) / t[:, None]
        coef, *_ = np.linalg.lstsq(X, np.ones_like(g), rcond=None)
        return (coef[0], coef[1]) if constant else (0.0, coef[0])
    c0, C = line(t0, host_constant)
    o, K = line(t1)
    o_echo, L = line(echo) if echo is not None else (o, 0.0)
    C, K = max(C, 1e-300), max(K, 1e-300)
    A = C / (K - L) if K > L > 0 else C / K
    return np.array([math.log(C), 1.0, max(o, 0.0), max(L, 0.0), math.log(max(A, 1e-6)),
                     max(c0, 0.0), math.log(START_WORKING_SET), math.log(3.0),
                     max(o_echo, 0.0)])


def _candidate(kind, d, layers, dependent, start, host_constant, name,
               max_nfev: int = 4000) -> Candidate:
    n = len(layers) - 1
    lower, upper = _bounds(n)
    free = np.ones(N_FIXED + 7 * n, bool)
    free[LAT] = dependent
    free[C0] = host_constant
    free[LN_W] = free[LN_S] = False             # unused: w and s are per layer, at the end
    free[O_ECHO] = n > 0 and d.echo is not None
    if not dependent:                       # a constant L has no per-byte transfer to scale
        free[N_FIXED + 2 * n:N_FIXED + 3 * n] = False
        start[N_FIXED + 2 * n:N_FIXED + 3 * n] = 0.0
        free[N_FIXED + 5 * n:] = False          # nor the copies' transition
    x, se, ssr, aic, k, cov = _solve(d, layers, dependent, start.copy(), free, lower, upper,
                                     max_nfev)
    return Candidate(kind, model_of_vector(x, layers, dependent, name), x, se, ssr, aic, k, cov)


def _vanishing_costs(model: HierarchicalLogCA) -> list[str]:
    """Each cost per byte that the steps take to zero or below at some size, in words.

    The steps add (``Q = 1 + Σ a_k·m_k``) and each is only bounded below by -90%, so two
    layers' falls can take a cost through zero once the data have outgrown both: on the
    H200 GEMM (examples/measurements/gpu-h200/) the accelerator's fell 88.6% and 15.3%, its
    kernel took a negative time past 1 MiB, the fit matched the copies with it, and
    `logca advise --at 1MiB` divided by the kernel's time of zero. A rise between two falls
    can keep the sum above zero, so the factor itself is scanned (64 points a decade)."""
    g = scan_grid()
    out = []
    for what, steps, factor in (
            ("host cost per byte", model.host_steps, model.host_factor),
            ("accelerator cost per byte", model.accel_steps, model.accel_factor),
            ("copies' cost per byte", model.link_steps, model.link_factor)):
        if float(np.min(factor(g))) <= 0:
            falls = [(layer.name, x) for layer, x in zip(model.layers, steps) if x < 0]
            out.append(f"{what} falls "
                       f"{' and '.join(f'{-x:.1%} beyond {name}' for name, x in falls)}, "
                       f"through zero")
    return out


def _plain_candidate(plain_fit, d, layers, dependent, x, name) -> Candidate:
    """fit_logca's own solution, unchanged (so one layer is exactly plain LogCA), scored on
    the shared residuals."""
    r = _residuals(x, d, layers, dependent)
    ssr = float(r @ r)
    k = sum(p.vary for p in plain_fit.parameters.values()) + \
        (plain_fit.host_constant is not None)
    se = np.full(x.size, np.nan)
    for key, i in (("o", O), ("L", LAT), ("beta", BETA)):
        if plain_fit.parameters[key].stderr is not None:
            se[i] = plain_fit.parameters[key].stderr
    for key, i in (("C", LN_C), ("A", LN_A)):
        par = plain_fit.parameters[key]
        se[i] = np.nan if par.stderr is None else par.stderr / par.value
    if plain_fit.host_constant is not None and plain_fit.host_constant.stderr is not None:
        se[C0] = plain_fit.host_constant.stderr
    model = HierarchicalLogCA(plain_fit.model, layers, host_constant=x[C0], name=name)
    return Candidate("plain", model, x, se, ssr, _aic(ssr, r.size, k), k)


def _parameters(c: Candidate, dependent: bool) -> dict:
    """The chosen candidate's parameters with standard errors (ln C, ln A, ln w and ln s are
    fitted as logarithms, so their errors scale by the value)."""
    x, se = c.x, c.stderr
    lower, upper = _bounds(len(c.model.layers) - 1)
    at_bound = (c.kind == "hierarchical") & ((np.abs(x - lower) <= 1e-6 * (1 + np.abs(lower)))
                                             | (np.abs(x - upper) <= 1e-6 * (1 + np.abs(upper))))

    def p(name, value, err, note=None, index=None):
        if index is not None and at_bound[index]:
            note = f"{note}; at the fit's bound: the data do not pin it"
        return FittedParameter(name, float(value), None if np.isnan(err) else float(err),
                               note=note)
    C, A = math.exp(x[LN_C]), math.exp(x[LN_A])
    out = {"C": p("C", C, C * se[LN_C]), "A": p("A", A, A * se[LN_A]),
           "beta": p("beta", x[BETA], se[BETA]), "o": p("o", x[O], se[O])}
    if dependent:
        out["L"] = p("L", x[LAT], se[LAT])
    if not np.isnan(se[C0]):
        out["c0"] = p("c0", x[C0], se[C0], "host per-call constant")
    model = c.model
    n = len(model.layers) - 1
    for k, layer in enumerate(model.layers[:-1]):
        for i, (letter, what) in enumerate((("h", "host"), ("a", "accelerator's compute"),
                                            ("l", "transfer (L·g)"))):
            if letter == "l" and not dependent:
                continue
            key = f"{letter}[{layer.name}]"
            out[key] = p(key, x[N_FIXED + i * n + k], se[N_FIXED + i * n + k],
                         f"{what} cost per byte beyond {layer.name}", N_FIXED + i * n + k)
        w, s = model.working_set[k], model.sharpness[k]
        out[f"w[{layer.name}]"] = p(f"w[{layer.name}]", w, w * se[N_FIXED + 3 * n + k],
                                    f"working set per offloaded byte: the bend is centred at "
                                    f"{format_size(model.transition(k))}", N_FIXED + 3 * n + k)
        out[f"s[{layer.name}]"] = p(f"s[{layer.name}]", s, s * se[N_FIXED + 4 * n + k],
                                    "sharpness of the bend", N_FIXED + 4 * n + k)
        if dependent:
            w, s = model.link_working_set[k], model.link_sharpness[k]
            out[f"w'[{layer.name}]"] = p(f"w'[{layer.name}]", w, w * se[N_FIXED + 5 * n + k],
                                         f"the copies' working set per offloaded byte: their "
                                         f"bend is centred at "
                                         f"{format_size(layer.capacity_bytes / w)}",
                                         N_FIXED + 5 * n + k)
            out[f"s'[{layer.name}]"] = p(f"s'[{layer.name}]", s, s * se[N_FIXED + 6 * n + k],
                                         "sharpness of the copies' bend", N_FIXED + 6 * n + k)
    return out


def _effect_warnings(hier: Candidate | None, chosen: Candidate) -> list[str]:
    """Each outgrown layer by name and what it does to the speedup (or why the hierarchy
    was not chosen)."""
    if hier is None:
        return []
    out = []
    if chosen is not hier:
        out.append(f"the hierarchy does not earn its {hier.free - chosen.free} extra "
                   f"parameters (AIC {hier.aic:.1f} against plain LogCA's {chosen.aic:.1f}; "
                   f"it must be lower by 2): plain LogCA is reported")
        return out
    m = hier.model
    for k, layer in enumerate(m.layers[:-1]):
        g = m.transition(k)
        bends = [g]
        link = copies = ""
        if m.base.dependent:
            bends.append(layer.capacity_bytes / m.link_working_set[k])
            link = f", transfer {m.link_steps[k]:+.0%}"
            copies = f"; the copies' bend about {format_size(bends[1])}"
        lo, hi = min(bends) / 4, max(bends) * 4      # both bends, with a factor 4 either side
        out.append(f"the data outgrow layer {layer.name!r} ({format_size(layer.capacity_bytes)}"
                   f") about {format_size(g)} offloaded (working set {m.working_set[k]:.3g}"
                   f"×g{copies}): per byte beyond it host {m.host_steps[k]:+.0%}, accelerator "
                   f"{m.accel_steps[k]:+.0%}{link}; the speedup goes from "
                   f"{m.speedup(lo):.3g} at {format_size(lo)} to {m.speedup(hi):.3g} at "
                   f"{format_size(hi)}")
    return out


# ---------------------------------------------------------------------- sensitivity of a fit
def log_speedup_gradient(candidate: Candidate, g) -> np.ndarray:
    """∂ ln speedup(g)/∂x at the candidate's solution, exactly (rows: g, columns: the vector
    layout, as its ``covariance``)."""
    model = candidate.model
    j0, j1, _ = _time_jacobians(candidate.x, model.layers, np.atleast_1d(np.asarray(g, float)),
                                model.base.dependent)
    return j0 - j1
