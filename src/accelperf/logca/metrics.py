"""LogCA performance metrics: g1, g_{A/2}, g_A, the peak of the curve and the bound type.

Every metric is a granularity where the speedup reaches a target ``s`` (0 < s < A). From
``T0 = s·T1`` (ISCA'17 eq. 1) the condition is ``K·g^β = o + L1(g)`` with ``K = C·(1 − s/A)/s``:

* g1      (s = 1):    K = C·(A − 1)/A       paper: eq. 5 (independent), eq. 11 (dependent)
* g_{A/2} (s = A/2):  K = C/A               paper: eq. 6, eq. 12
* g_A     (speedup A with A → ∞ in T1):  C·g^β/(o + L1) = A, again K = C/A   paper: eq. 13

So g_A equals g_{A/2} exactly, as the paper remarks after eq. 13.

Working in x = ln g, ``φ(x) = ln K + βx − ln(o + L1(eˣ))`` has the sign of ``speedup − s``.
``ln(o + L·eˣ)`` is convex in x, so φ is concave: there are at most two crossings, and
φ and the speedup share one maximiser. With granularity-dependent latency and β < 1 that
maximiser is interior, ``g* = β·o / (L·(1 − β))`` (from dφ/dx = 0), which is where the curve
of Implication 4 turns down. Concavity also gives analytic brackets for every crossing, so
each root is found by a bracketed method and never by guessing.

The paper's eqs. 11–13 are one Newton step on ``K·g^β − L·g − o`` from g = 1: exact for
β = 1 and approximate otherwise. The results report them beside the exact root.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from fractions import Fraction

import numpy as np
from scipy import optimize
from scipy.optimize import elementwise

from ..errors import invalid
from ..units import REAL_SIZES, format_size
if TYPE_CHECKING:  # pragma: no cover - annotations only: model.py imports this module
    from .model import LogCA

# Status of a crossing search (one code per situation a user needs told apart).
RISING, TWO, FALLING, TANGENT, ABOVE, BELOW, BEYOND = range(7)
FLAGS = {RISING: "converged", TWO: "converged", FALLING: "converged", TANGENT: "converged",
         ABOVE: "above-everywhere", BELOW: "below-everywhere", BEYOND: "beyond-range"}

# Roots are sought for granularities in [e^-X_LIMIT, e^X_LIMIT] bytes (about 1e-304 .. 1e304).
X_LIMIT = 700.0
BRACKET_METHODS = ("chandrupatla", "brentq", "brenth", "bisect", "ridder", "toms748")


def _phi(x, lnK, beta, ln_o, ln_L, dependent):
    """Sign of (speedup − target) in x = ln g: ``ln K + βx − ln(o + L1(eˣ))``."""
    ln_latency = np.where(dependent, ln_L + x, ln_L)
    return lnK + beta * x - np.logaddexp(ln_o, ln_latency)


@dataclass(frozen=True)
class CrossingBatch:
    """Vectorised crossings of ``speedup = target`` for many parameter sets.

    ``first`` and ``second`` are granularities in bytes (NaN where absent); ``status`` holds
    the codes RISING, TWO, FALLING, TANGENT, ABOVE, BELOW and BEYOND of this module.
    """

    status: np.ndarray
    first: np.ndarray
    second: np.ndarray
    converged: np.ndarray
    evaluations: np.ndarray

    @property
    def exists(self) -> np.ndarray:
        return self.status <= TANGENT


def _find_roots(f, left, right, args, method: str):
    """Roots of ``f`` inside brackets [left, right] (arrays), by a bracketed method."""
    if left.size == 0:
        return left.copy(), np.zeros(0, bool), np.zeros(0, int)
    if method == "chandrupatla":
        res = elementwise.find_root(f, (left, right), args=args,
                                    tolerances=dict(xatol=1e-300, xrtol=4 * np.finfo(float).eps,
                                                    fatol=0.0, frtol=0.0))
        return np.asarray(res.x, float), np.asarray(res.success, bool), np.asarray(res.nfev)
    roots, ok, nfev = np.empty_like(left), np.zeros(left.shape, bool), np.zeros(left.shape, int)
    for i in range(left.size):
        one = tuple(np.asarray(a)[i] if np.ndim(a) else a for a in args)
        sol = optimize.root_scalar(lambda x: float(f(x, *one)), bracket=(left[i], right[i]),
                                   method=method, xtol=1e-300, rtol=4 * np.finfo(float).eps)
        roots[i], ok[i], nfev[i] = sol.root, sol.converged, sol.function_calls
    return roots, ok, nfev


def solve_crossings(K, beta, o, L, dependent, method: str = "chandrupatla") -> CrossingBatch:
    """All granularities where ``K·g^β = o + L1(g)``, vectorised over broadcast arrays.

    Parameters are arrays (or scalars) of the reduced coefficient ``K`` (see the module
    docstring), β, o, L and a boolean ``dependent``. Inputs are assumed valid (K, β > 0,
    o, L >= 0); :class:`LogCA` validates them for the single-model API.
    """
    if method not in BRACKET_METHODS:
        raise invalid("method", method, f"must be one of {', '.join(BRACKET_METHODS)}")
    K, beta, o, L, dep = np.broadcast_arrays(*(np.asarray(a, float) for a in (K, beta, o, L)),
                                             np.asarray(dependent, bool))
    K, beta, o, L, dep = (np.ravel(a).copy() for a in (K, beta, o, L, dep))
    n = K.size
    with np.errstate(divide="ignore"):
        lnK, ln_o, ln_L = np.log(K), np.log(o), np.log(L)
    status = np.full(n, RISING)
    first, second = np.full(n, np.nan), np.full(n, np.nan)
    lo, hi = np.full(n, np.nan), np.full(n, np.nan)      # bracket of the first crossing
    lo2, hi2 = np.full(n, np.nan), np.full(n, np.nan)    # bracket of the falling crossing

    varying = dep & (L > 0)             # L1 grows with g
    flat = ~varying                     # o + L1 is a constant c
    c = o + np.where(dep, 0.0, L)
    with np.errstate(divide="ignore", invalid="ignore"):
        # --- constant cost: K g^β = c, one rising crossing (x0 exact); none if c == 0.
        x0 = (np.log(c) - lnK) / beta
        m = flat & (c > 0)
        lo[m], hi[m] = x0[m] - 1.0, x0[m] + 1.0
        status[flat & (c == 0)] = ABOVE

        # Bounds used below: φ <= lnK + βx − ln o  and  φ <= lnK + (β−1)x − ln L.
        left_by_o = (ln_o - lnK) / beta - 1.0
        # --- super-linear, growing latency: one rising crossing.
        m = varying & (beta > 1)
        right = np.maximum(np.where(o > 0, (ln_o + math.log(2) - lnK) / beta, -np.inf),
                           (ln_L + math.log(2) - lnK) / (beta - 1)) + 1.0
        left = np.where(o > 0, left_by_o, (ln_L - lnK) / (beta - 1) - 1.0)
        lo[m], hi[m] = left[m], right[m]

        # --- linear, growing latency: (K − L)·g = o, solved in closed form, which is exact
        # here; a root search on φ would take ln K − ln L, losing the digits K − L keeps.
        # A gap within rounding of K (the speedup's asymptote equals the target, e.g.
        # C = A = 1.01, L = 0.01 for g1) is no gap: the target is only approached.
        m = varying & (beta == 1)
        up = (K - L) > 16 * np.finfo(float).eps * K
        direct = m & up & (o > 0)
        first[direct] = o[direct] / (K[direct] - L[direct])
        far = direct & ~(first < math.exp(X_LIMIT))
        status[far], first[far] = BEYOND, np.nan
        status[m & up & (o == 0)] = ABOVE
        status[m & ~up] = BELOW

        # --- sub-linear, growing latency: rises to a peak at g* then falls (Implication 4).
        m = varying & (beta < 1)
        falling_only = m & (o == 0)     # speedup starts at A and falls
        xf = (lnK - ln_L) / (1 - beta)
        lo2[falling_only], hi2[falling_only] = xf[falling_only] - 1.0, xf[falling_only] + 1.0
        status[falling_only] = FALLING
        peaked = m & (o > 0)
        x_peak = np.log(beta * o / (L * (1 - beta)))
        phi_peak = _phi(x_peak, lnK, beta, ln_o, ln_L, True)
        two = peaked & (phi_peak > 0)
        status[two] = TWO
        lo[two], hi[two] = left_by_o[two], x_peak[two]
        lo2[two], hi2[two] = x_peak[two], np.maximum(xf[two] + 1.0, x_peak[two] + 1.0)
        tangent = peaked & (phi_peak == 0)
        status[tangent] = TANGENT
        first[tangent] = np.exp(x_peak[tangent])
        status[peaked & (phi_peak < 0)] = BELOW

    args = (lnK, beta, ln_o, ln_L, dep)
    converged = np.ones(n, bool)   # and-ed with each root search below
    evaluations = np.zeros(n, int)
    for brk_lo, brk_hi, out in ((lo, hi, first), (lo2, hi2, second)):
        todo = np.isfinite(brk_lo) & (status != ABOVE) & (status != BELOW)
        # Keep brackets inside representable granularities; a root outside is reported.
        a, b = np.clip(brk_lo, -X_LIMIT, X_LIMIT), np.clip(brk_hi, -X_LIMIT, X_LIMIT)
        sub = tuple(arr[todo] for arr in args)
        with np.errstate(over="ignore"):
            fa, fb = _phi(a[todo], *sub), _phi(b[todo], *sub)
        bad = np.zeros(n, bool)
        bad[todo] = (fa * fb > 0) | (a[todo] >= b[todo])
        # A falling crossing beyond the representable range leaves the rising one standing.
        only_second = bad & (status == TWO) & (out is second)
        status[only_second] = RISING
        todo &= ~only_second
        bad &= ~only_second
        status[bad] = BEYOND
        todo &= ~bad
        idx = np.flatnonzero(todo)
        x, ok, nfev = _find_roots(_phi, a[idx], b[idx], tuple(arr[idx] for arr in args), method)
        out[idx] = np.exp(x)
        converged[idx] &= ok
        evaluations[idx] += nfev
    # FALLING keeps its single root in `first` for a uniform "first crossing" view.
    fo = status == FALLING
    first[fo], second[fo] = second[fo], np.nan
    return CrossingBatch(status=status, first=first, second=second, converged=converged,
                         evaluations=evaluations)


def metric_coefficient(C, A, metric: str):
    """The reduced coefficient K of the module docstring for a metric name."""
    if metric == "g1":
        return C * (A - 1.0) / A
    if metric in ("g_half", "g_A"):
        return C / A
    raise invalid("metric", metric, "must be 'g1', 'g_half' or 'g_A'")


def metric_batch(L, o, C, A, beta, dependent, metric: str = "g1",
                 method: str = "chandrupatla") -> CrossingBatch:
    """g1, g_{A/2} or g_A for arrays of parameter sets at once (no per-set Python loop)."""
    A = np.asarray(A, float)
    if metric == "g1" and np.any(A <= 1):
        raise invalid("A", float(A[A <= 1].ravel()[0]) if A.ndim else float(A),
                      "must be > 1 for g1: an accelerator never faster than the host "
                      "never breaks even")
    return solve_crossings(metric_coefficient(np.asarray(C, float), A, metric), beta, o, L,
                           dependent, method=method)


# ---------------------------------------------------------------------- result objects
@dataclass(frozen=True)
class GranularityResult:
    """A granularity at which the speedup reaches a target (styled on scipy's RootResults).

    Attributes
    ----------
    metric : str
        "g1", "g_half", "g_A" or "speedup=<s>".
    target : float
        The speedup sought.
    root : float or None
        The exact granularity in bytes (the first crossing where there are two).
    roots : tuple of float
        Every crossing, rising then falling.
    exists, converged : bool
    flag : str
        "converged", "above-everywhere", "below-everywhere" or "beyond-range".
    reason : str or None
        Why the metric does not exist, or how the curve crosses, in words.
    closed_form : float or None
        The paper's closed form (None when the paper gives none or it is not positive).
    equation : str or None
        Which equation gave ``closed_form``.
    """

    metric: str
    target: float
    root: float | None
    roots: tuple[float, ...]
    exists: bool
    converged: bool
    flag: str
    reason: str | None
    closed_form: float | None
    equation: str | None
    function_calls: int = 0
    note: str | None = field(default=None, compare=False)

    @property
    def value(self) -> float | None:
        return self.root

    @property
    def closed_form_relative_error(self) -> float | None:
        """|closed form − exact| / exact, where both exist."""
        if self.root is None or self.closed_form is None or self.root == 0:
            return None
        return abs(self.closed_form - self.root) / self.root

    def to_dict(self) -> dict:
        return {"value": self.root, "exists": self.exists, "reason": self.reason,
                "closed_form": self.closed_form, "equation": self.equation,
                "crossings": list(self.roots), "target_speedup": self.target,
                "converged": self.converged, "flag": self.flag,
                "closed_form_relative_error": self.closed_form_relative_error,
                "note": self.note}

    def __repr__(self) -> str:
        if not self.exists:
            return f"GranularityResult({self.metric}: does not exist — {self.reason})"
        cf = "" if self.closed_form is None else \
            f", closed_form={self.closed_form:.6g} ({self.equation})"
        more = "" if len(self.roots) < 2 else f", second crossing={self.roots[1]:.6g}"
        return (f"GranularityResult({self.metric}={self.root:.6g} B "
                f"[{format_size(self.root)}]{more}{cf}, flag={self.flag!r})")


@dataclass(frozen=True)
class Peak:
    """The interior maximum of a speedup curve that rises then falls (Implication 4)."""

    granularity: float
    speedup: float

    def to_dict(self) -> dict:
        return {"granularity": self.granularity, "speedup": self.speedup}

    def __repr__(self) -> str:
        return f"Peak(speedup={self.speedup:.6g} at g={self.granularity:.6g} B " \
               f"[{format_size(self.granularity)}])"


@dataclass(frozen=True)
class Bound:
    """Compute- or latency-bound (ISCA'17 §3.1) and the large-g limit that applies."""

    kind: str            # "compute" or "latency"
    limit: float         # lim_{g→∞} speedup
    expression: str      # the limit's expression, e.g. "A" or "C/(L + C/A), under C/L"
    equation: str
    explanation: str

    def to_dict(self) -> dict:
        return {"kind": self.kind, "limit": self.limit, "expression": self.expression,
                "equation": self.equation, "explanation": self.explanation}

    def __repr__(self) -> str:
        return f"Bound({self.kind}-bound, speedup → {self.limit:.6g} [{self.expression}])"


# ---------------------------------------------------------------------- closed forms
def _closed_form(model: LogCA, metric: str) -> tuple[float | None, str | None, str | None]:
    """(value, equation, note) of the paper's closed form; value None where not positive."""
    C, A, o, L, b = model.C, model.A, model.o, model.L, model.beta
    if metric.startswith("speedup="):
        return None, None, None
    if not model.dependent:
        scale = A / (A - 1) if metric == "g1" else A
        eq = "ISCA'17 eq. 5" if metric == "g1" else "ISCA'17 eq. 6"
        if metric == "g_A":
            eq += " (g_A coincides with g_A/2)"
        if o + L == 0:
            return None, eq, None
        # in logs: (x)^(1/β) overflows a double for small β long before the root does
        ln_value = math.log(scale * (o + L) / C) / b
        if ln_value > math.log(np.finfo(float).max):
            return None, eq, f"{eq} gives a granularity beyond 1e308 bytes"
        return math.exp(ln_value), eq, None
    # In exact rationals of the given doubles: near the paper's condition (C·β ≈ A·L) the
    # denominator cancels, and in floating point the closed form would be off by far more
    # than the root it is shown beside (e.g. 1.7e-7 relative at C - A·L = 1.3e-9).
    C, A, o, L, b = (Fraction(v) for v in (C, A, o, L, b))
    if metric == "g1":
        num, den, eq = C * (b - 1) * (A - 1) + A * o, C * b * (A - 1) - A * L, "ISCA'17 eq. 11"
    else:
        num, den = C * (b - 1) + A * o, C * b - A * L
        eq = "ISCA'17 eq. 12" if metric == "g_half" else "ISCA'17 eq. 13"
    raw = _ratio(num, den)
    if not math.isfinite(raw) or raw <= 0:
        return None, eq, (f"{eq} gives {raw:.4g}, not a granularity: the paper's condition "
                          f"{'C/L' if metric == 'g1' else '(C/A)/L'} > 1/β fails")
    return raw, eq, None


def _ratio(num: Fraction, den: Fraction) -> float:
    """num/den rounded once to a double; inf when den is 0 or the value overflows."""
    if den == 0:
        return math.inf
    try:
        return float(num / den)
    except OverflowError:
        return math.inf if (num > 0) == (den > 0) else -math.inf


# ---------------------------------------------------------------------- explanations
def _fmt(x: float) -> str:
    return f"{x:.4g}"


def _explain(model: LogCA, metric: str, target: float, status: int, roots) -> str | None:
    """Words for a user: why a metric does not exist, or how the curve crosses it."""
    what = {"g1": "speedup 1 (break-even)", "g_half": f"speedup A/2 = {_fmt(target)}",
            "g_A": f"speedup A = {_fmt(model.A)} even with unbounded acceleration"}.get(
        metric, f"speedup {_fmt(target)}")
    u = model.unit
    if status == ABOVE:
        if not model.dependent or model.L == 0:
            return (f"o + L = 0: there is no offload cost, so the speedup is {_fmt(model.A)} "
                    f"at every granularity and never crosses {_fmt(target)}")
        return (f"o = 0 and β = 1: the speedup is {_fmt(model.large_g_limit())} at every "
                f"granularity, above {_fmt(target)}, so there is no crossing")
    if status == BELOW:
        if model.beta == 1:
            limit = (model.C / (model.L + model.C / model.A) if metric != "g_A"
                     else model.C / model.L)
            return (f"never reaches {what}: with granularity-dependent latency and β = 1 the "
                    f"speedup only approaches {_fmt(limit)} at large granularities "
                    f"(ISCA'17 eq. 9) because moving a byte costs L = {_fmt(model.L)} {u}/B "
                    f"while the accelerator saves at most "
                    f"{_fmt(model.C * (1 - 1 / model.A) if metric == 'g1' else model.C / model.A)}"
                    f" {u}/B; computational intensity C/L = {_fmt(model.C / model.L)}")
        peak = peak_speedup(model)
        if peak is not None:
            best = (peak.speedup if metric != "g_A"
                    else float(model.amdahl_bound(peak.granularity)))
            return (f"never reaches {what}: with granularity-dependent latency and sub-linear "
                    f"complexity (β = {_fmt(model.beta)}) the speedup peaks at {_fmt(best)} at "
                    f"g = {format_size(peak.granularity)} and then falls (Implication 4)")
        return f"never reaches {what}"
    if status == BEYOND:
        return (f"{what} would be reached only beyond the representable granularities "
                f"(1e-304 .. 1e304 bytes)")
    if status == TWO:
        return (f"the speedup rises through {_fmt(target)} at {format_size(roots[0])} and "
                f"falls back below it at {format_size(roots[1])} (Implication 4: sub-linear "
                f"complexity with granularity-dependent latency)")
    if status == FALLING:
        return (f"o = 0: the speedup starts near A = {_fmt(model.A)} at tiny granularities and "
                f"falls through {_fmt(target)} at {format_size(roots[0])}; offloading pays "
                f"only below it")
    if status == TANGENT:
        return f"the speedup touches {_fmt(target)} at its peak only"
    return None


def _result(model: LogCA, metric: str, target: float, K: float, method: str) -> GranularityResult:
    batch = solve_crossings(K, model.beta, model.o, model.L, model.dependent, method=method)
    status = int(batch.status[0])
    roots = tuple(float(r) for r in (batch.first[0], batch.second[0]) if np.isfinite(r))
    closed, equation, note = _closed_form(model, metric)
    exists = status <= TANGENT
    if exists and roots[-1] > REAL_SIZES:
        far = (f"a crossing lies at {roots[-1]:.3g} bytes, beyond 2^64: the model's "
               f"parameters imply it is never reached in practice")
        note = far if note is None else f"{note}; {far}"
    return GranularityResult(
        metric=metric, target=target, root=roots[0] if exists else None,
        roots=roots if exists else (), exists=exists,
        converged=bool(batch.converged[0]) if exists else False,
        flag=FLAGS[status], reason=_explain(model, metric, target, status, roots),
        closed_form=closed, equation=equation, function_calls=int(batch.evaluations[0]),
        note=note)


def _need_acceleration(model: LogCA, what: str) -> None:
    if model.A <= 1:
        raise invalid("A", model.A, f"must be > 1 for {what}: an accelerator that is never "
                                    f"faster than the host never breaks even")


def break_even_granularity(model: LogCA, method: str = "chandrupatla") -> GranularityResult:
    """g1: the granularity where the speedup is 1 (ISCA'17 eq. 5; eq. 11 when dependent).

    Examples
    --------
    >>> from accelperf.logca import LogCA
    >>> m = LogCA(L=3, o=10, C=35, A=6)          # Sandy Bridge AES-NI, Table 5
    >>> round(break_even_granularity(m).root, 6)  # (6/5)·(13/35)
    0.445714
    """
    _need_acceleration(model, "g1")
    return _result(model, "g1", 1.0, metric_coefficient(model.C, model.A, "g1"), method)


def half_acceleration_granularity(model: LogCA, method: str = "chandrupatla") -> GranularityResult:
    """g_{A/2}: the granularity where the speedup is A/2 (ISCA'17 eq. 6; eq. 12 when dependent)."""
    return _result(model, "g_half", model.A / 2, metric_coefficient(model.C, model.A, "g_half"),
                   method)


def peak_acceleration_granularity(model: LogCA, method: str = "chandrupatla") -> GranularityResult:
    """g_A: where an accelerator with unbounded acceleration reaches speedup A (ISCA'17 eq. 13).

    Exactly equal to g_{A/2} (see the module docstring), as the paper observes."""
    return _result(model, "g_A", model.A, metric_coefficient(model.C, model.A, "g_A"), method)


def granularity_for_speedup(model: LogCA, speedup: float,
                            method: str = "chandrupatla") -> GranularityResult:
    """The granularity (or two) where the speedup equals any target 0 < speedup < A."""
    s = float(speedup)
    if not (0 < s < model.A):
        raise invalid("speedup", speedup, f"must lie strictly between 0 and A = {model.A:g}; "
                                          f"the curve never reaches A itself (eq. 3)")
    return _result(model, f"speedup={s:g}", s, model.C * (1 - s / model.A) / s, method)


def peak_speedup(model: LogCA) -> Peak | None:
    """The curve's interior maximum, or None where it is monotone or peaks at g → 0.

    With granularity-dependent latency and β < 1 (Implication 4) the speedup is largest at
    ``g* = β·o / (L·(1 − β))``, where d(T1/T0)/dg = 0.
    """
    if not model.dependent or model.beta >= 1 or model.L == 0 or model.o == 0:
        return None
    g = model.beta * model.o / (model.L * (1 - model.beta))
    return Peak(granularity=g, speedup=float(model.speedup(g)))


def bound_type(model: LogCA) -> Bound:
    """Compute-bound (speedup → A) or latency-bound (speedup ≤ C/L·g^(β−1)), ISCA'17 §3.1."""
    if not model.dependent or model.L == 0:
        return Bound("compute", model.A, "A", "ISCA'17 eq. 3",
                     "latency does not grow with granularity, so the speedup approaches the "
                     "acceleration A at large granularities")
    if model.beta > 1:
        return Bound("compute", model.A, "A", "ISCA'17 eq. 9",
                     "super-linear work outgrows the linear transfer time, so the speedup "
                     "still approaches A at large granularities")
    kind_text = ("levels off at C/(L + C/A)" if model.beta == 1
                 else "falls towards 0 (Implication 4)")
    # the expression of the limit itself: "speedup → 10 [C/L·g^(β−1)]" read as C/L = 10
    # where C/L was 12.5 and the limit C/(L + C/A)
    limit = "C/(L + C/A), under C/L" if model.beta == 1 else "0, under C/L·g^(β−1)"
    return Bound("latency", model.large_g_limit(), limit, "ISCA'17 eq. 9",
                 f"transfer time grows as fast as or faster than the work (β = "
                 f"{model.beta:g} <= 1), so the speedup is capped by the computational "
                 f"intensity C/L = {model.C / model.L:.4g} and {kind_text}")


# Bytes beyond any addressable memory (256 TiB: the 48-bit virtual address space of x86-64
# and ARMv8): an asymptote approached only past it is, for every practical purpose, never
# reached by one offload.
PRACTICAL_SIZE = 2.0**48


@dataclass(frozen=True)
class BoundReach:
    """Whether the large-g limit of §3.1 is approached at a practical size: where the speedup
    reaches ``fraction`` of it, and the speedup at :data:`PRACTICAL_SIZE`."""

    limit: float
    fraction: float
    granularity: float | None       # None: the curve never reaches fraction·limit
    speedup_at_practical: float
    practical: bool                 # reached at or below PRACTICAL_SIZE

    def describe(self) -> str:
        if self.limit == 0:
            return (f"the speedup falls towards 0 at large granularities; it is "
                    f"{self.speedup_at_practical:.3g} at 2^48 bytes (256 TiB)")
        target = self.fraction * self.limit
        if self.practical:
            return (f"the speedup reaches {self.fraction:.0%} of its limit ({target:.4g}) at "
                    f"{format_size(self.granularity)}")
        where = ("at no representable size" if self.granularity is None
                 else f"only at {self.granularity:.3g} bytes")
        return (f"the limit {self.limit:.4g} is beyond any practical size: the speedup is "
                f"{self.speedup_at_practical:.3g} at 2^48 bytes (256 TiB, the largest address "
                f"space) and reaches {self.fraction:.0%} of the limit {where}")

    def to_dict(self) -> dict:
        return {"limit": self.limit, "fraction": self.fraction,
                "granularity": self.granularity, "practical": self.practical,
                "practical_size": PRACTICAL_SIZE,
                "speedup_at_practical_size": self.speedup_at_practical, "text": self.describe()}


def bound_reach(model: LogCA, fraction: float = 0.9) -> BoundReach:
    """Where the speedup gets within ``fraction`` of its large-g limit (eqs. 3, 9), exactly."""
    if not (0 < fraction < 1):
        raise invalid("fraction", fraction, "must lie strictly between 0 and 1")
    limit = model.large_g_limit()
    at_practical = float(model.speedup(PRACTICAL_SIZE))
    if limit == 0:
        return BoundReach(0.0, fraction, None, at_practical, False)
    r = granularity_for_speedup(model, fraction * limit)
    g = r.root if r.exists else None
    return BoundReach(limit, fraction, g, at_practical, g is not None and g <= PRACTICAL_SIZE)


@dataclass(frozen=True)
class ModelSummary:
    """Every metric of one model (the `logca show` result): g1, g_{A/2}, g_A, the bound,
    the peak and the limits of eqs. 3/4/9/10."""

    model: LogCA
    g1: GranularityResult
    g_half: GranularityResult
    g_A: GranularityResult
    bound: Bound
    peak: Peak | None

    @property
    def metrics(self) -> dict[str, GranularityResult]:
        """The three granularity metrics by their JSON key, in table order."""
        return {"g1": self.g1, "g_half": self.g_half, "g_A": self.g_A}

    def to_dict(self) -> dict:
        m = self.model
        return {
            "parameters": m.parameters(),
            **{key: r.to_dict() for key, r in self.metrics.items()},
            "bound": self.bound.kind,
            "bound_detail": self.bound.to_dict(),
            "peak": None if self.peak is None else self.peak.to_dict(),
            "limits": {"small_g": m.small_g_limit(), "large_g": m.large_g_limit(),
                       "computational_intensity": m.computational_intensity},
            "units": {"granularity": "bytes", "time": m.unit},
        }

    def __repr__(self) -> str:
        g1 = "none" if self.g1.root is None else format_size(self.g1.root)
        gh = "none" if self.g_half.root is None else format_size(self.g_half.root)
        return (f"ModelSummary({self.model.label}: g1 {g1}, g_A/2 {gh}, "
                f"{self.bound.kind}-bound → {self.bound.limit:.4g})")


def summary(model: LogCA, method: str = "chandrupatla") -> ModelSummary:
    """Every metric of one model (``.to_dict()`` is the `logca show --json` object)."""
    return ModelSummary(model=model, g1=break_even_granularity(model, method),
                        g_half=half_acceleration_granularity(model, method),
                        g_A=peak_acceleration_granularity(model, method),
                        bound=bound_type(model), peak=peak_speedup(model))
