"""Parameters as random variables: Monte-Carlo bands on the speedup curve and the
distributions of g1 and g_{A/2} (the CAL paper, §5, treats LogCA's parameters as random
variables; the ISCA'17 metrics are eqs. 5/6 and 11/12, solved exactly as in :mod:`metrics`).

A parameter is written as a number, an interval or a distribution:

* ``1500``                 fixed
* ``1500±10%``, ``1500+-150``   uniform over [1350, 1650]
* ``uniform(a, b)``        uniform over [a, b]
* ``normal(mean, sd)``     normal, truncated to the parameter's valid range (L, o >= 0;
                           C, A, β > 0)
* ``lognormal(m, s)``      median m, standard deviation s of ln X (so s = 0.2 is about ±20%)

Draws are independent, vectorised (one NumPy array per parameter) and reproducible from
``seed``. Fitted parameters become normal (L, o, β) or lognormal (C and A, fitted as
logarithms) with their standard errors; the fit's correlations are not carried over.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from ..errors import ModelError, invalid
from .metrics import metric_batch
from .model import DEFAULT_RANGE, LogCA, speedup_array

UNCERTAIN = ("L", "o", "C", "A", "beta")
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_PLUSMINUS = re.compile(rf"^\s*({_NUMBER})\s*(?:±|\+-|\+/-)\s*({_NUMBER})\s*(%?)\s*$")
_CALL = re.compile(rf"^\s*(uniform|normal|lognormal)\s*\(\s*({_NUMBER})\s*,\s*({_NUMBER})\s*\)\s*$",
                   re.IGNORECASE)
QUANTILES = (0.05, 0.5, 0.95)
FORMS = "a number, X±P% or X±D, uniform(a, b), normal(mean, sd) or lognormal(median, s)"


@dataclass(frozen=True)
class Distribution:
    """One parameter's distribution (``kind`` "fixed", "uniform", "normal" or "lognormal")."""

    name: str
    kind: str
    a: float
    b: float = 0.0
    text: str = ""

    @property
    def central(self) -> float:
        """The value a single model uses: the median of the distribution."""
        if self.kind in ("fixed", "lognormal"):
            return self.a
        if self.kind == "uniform":
            return 0.5 * (self.a + self.b)
        return float(stats.truncnorm.median(-self.a / self.b, np.inf, loc=self.a, scale=self.b))

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        if self.kind == "fixed":
            return np.full(n, self.a)
        if self.kind == "uniform":
            return rng.uniform(self.a, self.b, n)
        if self.kind == "lognormal":
            return self.a * np.exp(self.b * rng.standard_normal(n))
        # every parameter is >= 0: the normal is truncated at 0
        x = stats.truncnorm.rvs(-self.a / self.b, np.inf, loc=self.a, scale=self.b, size=n, random_state=rng)
        # strictly positive parameters: a draw exactly at 0 is moved to the smallest double
        return np.maximum(x, 0.0) if self.name in ("L", "o") else np.maximum(x, 5e-324)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "a": self.a, "b": self.b, "text": self.text}

    def __repr__(self) -> str:
        return f"Distribution({self.name} ~ {self.text or self.kind})"


def _check_value(name: str, text: str, value: float, what: str) -> float:
    if not math.isfinite(value):
        raise invalid(f"--{name}", text, f"{what} must be finite; write {FORMS}")
    return value


def parse_parameter(name: str, text) -> Distribution:
    """A parameter written as a number, interval or distribution (see the module docstring).

    >>> parse_parameter("L", "1500±10%")
    Distribution(L ~ 1500±10%)
    >>> parse_parameter("L", "1500±10%").a, parse_parameter("L", "1500±10%").b
    (1350.0, 1650.0)
    """
    if name not in UNCERTAIN:
        raise invalid("parameter", name, f"one of {', '.join(UNCERTAIN)}")
    positive = name not in ("L", "o")
    allowed = "> 0" if positive else ">= 0"
    raw = str(text).strip()
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value = float(text)
    else:
        value = None
        try:
            value = float(raw)
        except ValueError:
            pass
    if value is not None:
        _check_value(name, raw, value, "the value")
        if value < 0 or (positive and value == 0):
            raise invalid(f"--{name}", raw, f"must be {allowed}")
        return Distribution(name, "fixed", value, 0.0, raw)
    m = _PLUSMINUS.match(raw)
    if m:
        centre = _check_value(name, raw, float(m.group(1)), "the centre")
        spread = _check_value(name, raw, float(m.group(2)), "the spread")
        half = abs(centre) * spread / 100 if m.group(3) else spread
        if spread < 0 or (m.group(3) and spread >= 100 and positive):
            raise invalid(f"--{name}", raw, "the spread must be >= 0 (and below 100% for a "
                                            "parameter that must stay > 0)")
        lo, hi = centre - half, centre + half
        if lo < 0 or (positive and lo <= 0):
            raise invalid(f"--{name}", raw, f"the interval [{lo:g}, {hi:g}] leaves the valid "
                                            f"range: {name} must be {allowed}")
        return Distribution(name, "uniform" if half > 0 else "fixed", lo if half > 0 else centre,
                            hi if half > 0 else 0.0, raw)
    m = _CALL.match(raw)
    if not m:
        raise invalid(f"--{name}", raw, f"expected {FORMS}")
    kind = m.group(1).lower()
    a = _check_value(name, raw, float(m.group(2)), "the first argument")
    b = _check_value(name, raw, float(m.group(3)), "the second argument")
    if kind == "uniform":
        if not (a < b):
            raise invalid(f"--{name}", raw, "uniform(a, b) needs a < b")
        if a < 0 or (positive and a <= 0):
            raise invalid(f"--{name}", raw, f"uniform(a, b) needs a {allowed}")
    elif kind == "normal":
        if b <= 0:
            raise invalid(f"--{name}", raw, "normal(mean, sd) needs sd > 0")
        if stats.norm.sf(-a / b) < 1e-6:
            raise invalid(f"--{name}", raw, f"normal(mean, sd) puts almost no weight where "
                                            f"{name} is valid ({allowed})")
    else:
        if a <= 0 or b <= 0:
            raise invalid(f"--{name}", raw, "lognormal(median, s) needs median > 0 and s > 0")
    return Distribution(name, kind, a, b, raw)


def from_fit(fit) -> dict[str, Distribution]:
    """Distributions of a :class:`fit.FitResult`'s parameters from their standard errors:
    lognormal for C and A (fitted as logarithms), truncated normal for L, o and β, fixed
    where a parameter has no standard error (held, or not identified)."""
    out = {}
    for name in UNCERTAIN:
        p = fit.parameters[name]
        value = float(getattr(fit.model, name))     # in the model's unit (cycles or seconds)
        se = p.stderr
        if se is not None and p.value != 0:
            se = se * value / p.value
        if se is None or not math.isfinite(se) or se <= 0:
            out[name] = Distribution(name, "fixed", value, 0.0, f"{value:g}")
        elif name in ("C", "A"):
            out[name] = Distribution(name, "lognormal", value, se / value,
                                     f"lognormal({value:g}, {se / value:.3g})")
        else:
            out[name] = Distribution(name, "normal", value, se, f"normal({value:g}, {se:.3g})")
    return out


@dataclass(frozen=True)
class MetricDistribution:
    """Samples of g1 or g_{A/2}: quantiles over the draws where the metric exists."""

    metric: str
    samples: np.ndarray = field(repr=False)      # NaN where the metric does not exist

    @property
    def exists_fraction(self) -> float:
        return float(np.mean(np.isfinite(self.samples))) if self.samples.size else 0.0

    @property
    def quantiles(self) -> dict:
        ok = self.samples[np.isfinite(self.samples)]
        if ok.size == 0:
            return {f"p{round(q * 100)}": None for q in QUANTILES}
        return {f"p{round(q * 100)}": float(np.quantile(ok, q)) for q in QUANTILES}

    def to_dict(self) -> dict:
        ok = self.samples[np.isfinite(self.samples)]
        return {"exists_fraction": self.exists_fraction, **self.quantiles,
                "mean": float(ok.mean()) if ok.size else None}

    def __repr__(self) -> str:
        q = self.quantiles
        if q["p50"] is None:
            return f"MetricDistribution({self.metric}: never exists)"
        return (f"MetricDistribution({self.metric}: median {q['p50']:.4g} B, 90% in "
                f"[{q['p5']:.4g}, {q['p95']:.4g}] B, exists in {self.exists_fraction:.0%})")


@dataclass(frozen=True)
class UncertaintyResult:
    """Monte-Carlo bands of the speedup curve and distributions of g1 and g_{A/2}."""

    model: LogCA                      # the central model (every parameter at its median)
    distributions: dict
    granularity: np.ndarray = field(repr=False)
    band: dict = field(repr=False)    # "p5", "p50", "p95" -> speedup at each granularity
    g1: MetricDistribution = None
    g_half: MetricDistribution = None
    samples: int = 0
    seed: int = 0

    def to_dict(self) -> dict:
        return {"samples": self.samples, "seed": self.seed,
                "distributions": {k: d.to_dict() for k, d in self.distributions.items()},
                "granularity_bytes": self.granularity.tolist(),
                "speedup_band": {k: v.tolist() for k, v in self.band.items()},
                "central_speedup": self.model.speedup(self.granularity).tolist(),
                "g1": self.g1.to_dict(), "g_half": self.g_half.to_dict()}

    def __repr__(self) -> str:
        return (f"UncertaintyResult({self.model.label}, {self.samples} draws, seed "
                f"{self.seed}: {self.g1!r}, {self.g_half!r})")


def monte_carlo(model: LogCA, distributions: dict, granularity=None, samples: int = 2000,
                seed: int = 0) -> UncertaintyResult:
    """Draw every uncertain parameter ``samples`` times (others as in ``model``) and
    evaluate the speedup curve, g1 and g_{A/2} for all draws at once.

    Examples
    --------
    >>> m = LogCA(L=1500, o=2.9e4, C=90, A=19, beta=1.01)
    >>> r = monte_carlo(m, {"o": parse_parameter("o", "2.9e4±20%")}, samples=4000, seed=1)
    >>> q = r.g1.quantiles                  # g1 grows with o + L (eq. 5): ±19% here
    >>> round(q["p5"]), round(q["p50"]), round(q["p95"]), round(m.g1().root)
    (280, 337, 395, 337)
    """
    if isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) or \
            not 1 <= samples <= 1_000_000:
        raise invalid("samples", samples, "a whole number from 1 to 1000000")
    unknown = set(distributions) - set(UNCERTAIN)
    if unknown:
        raise ModelError(f"distributions for {sorted(unknown)} are invalid: only "
                         f"{', '.join(UNCERTAIN)} can be uncertain")
    g = np.geomspace(*DEFAULT_RANGE, 200) if granularity is None else \
        np.asarray(granularity, float)
    rng = np.random.default_rng(seed)
    draws = {name: (distributions[name].sample(rng, samples) if name in distributions
                    else np.full(samples, getattr(model, name))) for name in UNCERTAIN}
    L, o, C, A, beta = (draws[k] for k in UNCERTAIN)
    col = lambda a: a[:, None]
    s = speedup_array(g[None, :], col(L), col(o), col(C), col(A), col(beta), model.dependent)
    band = {f"p{round(q * 100)}": np.quantile(s, q, axis=0) for q in QUANTILES}
    g1 = np.full(samples, np.nan)
    faster = A > 1            # an accelerator never faster than the host has no g1
    if faster.any():
        b = metric_batch(L[faster], o[faster], C[faster], A[faster], beta[faster],
                         model.dependent, "g1")
        g1[faster] = np.where(b.exists, b.first, np.nan)
    b = metric_batch(L, o, C, A, beta, model.dependent, "g_half")
    gh = np.where(b.exists, b.first, np.nan)
    central = model.with_parameters(**{k: d.central for k, d in distributions.items()})
    return UncertaintyResult(central, dict(distributions), g, band,
                             MetricDistribution("g1", g1), MetricDistribution("g_half", gh),
                             samples, seed)


def monte_carlo_hierarchy(fit, granularity=None, samples: int = 2000,
                          seed: int = 0) -> UncertaintyResult:
    """The fitted parameters' uncertainty propagated through LogCA with a memory hierarchy
    (a :class:`.hierfit.HierarchyFit`) to the speedup band, g1 and g_A/2.

    Linearised (the delta method), with the full covariance of the fit's Jacobian, so the
    correlations of the per-layer steps, working sets and sharpnesses with C, A, o and L
    are kept (:func:`from_fit` drops them for plain LogCA). Draws ``z ~ N(0, Σ)`` move
    ``ln speedup(g)`` by ``∇ln s(g)·z`` (the exact gradient) and a crossing g* of the level
    ℓ (1, or A/2) by ``δ ln g* = −(∇ln s(g*) − ∇ln ℓ)·z / (∂ln s/∂ln g)`` (implicit
    function theorem). Why not the nonlinear model at drawn parameters: with 35 parameters
    on 72 residuals the single parameters are poorly pinned (A ± 640% on the shipped AES
    data) while the curve they make together is not; such draws leave the region where
    the fit's covariance means anything (a 90% band from 1e-7 to 1e6 on those data).

    When plain LogCA was chosen the plain path is taken exactly: :func:`monte_carlo` of the
    plain fit with :func:`from_fit`'s distributions (the host constant, if any, held)."""
    from .hierfit import LN_A, log_speedup_gradient
    if isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) or \
            not 1 <= samples <= 1_000_000:
        raise invalid("samples", samples, "a whole number from 1 to 1000000")
    g = np.geomspace(*DEFAULT_RANGE, 200) if granularity is None else \
        np.asarray(granularity, float)
    if fit.chosen != "hierarchical":
        return monte_carlo(fit.plain_fit.model, from_fit(fit.plain_fit), g, samples, seed)
    chosen, model = fit.hierarchical, fit.model
    # Rows of M: the gradients of ln s(g) at each g, then of ln g1 and ln g_A/2. The outputs
    # are drawn from N(0, M·Σ·Mᵀ) directly: Σ itself spans twenty decades (a sharpness
    # the data cannot pin), which would swamp a draw of the parameters in rounding.
    rows = [log_speedup_gradient(chosen, g)]
    crossings = {"g1": model.g1(), "g_half": model.g_half()}
    for label, crossing in crossings.items():
        if crossing is None:
            rows.append(np.zeros((1, chosen.x.size)))
            continue
        grad = log_speedup_gradient(chosen, crossing)[0]
        if label == "g_half":
            grad[LN_A] -= 1.0               # the level A/2 moves with A
        step = 1e-6
        slope = float(np.log(model.speedup(crossing * math.exp(step)) /
                             model.speedup(crossing * math.exp(-step)))) / (2 * step)
        rows.append(-grad[None, :] / slope)
    M = np.vstack(rows)
    rng = np.random.default_rng(seed)
    Y = rng.multivariate_normal(np.zeros(len(M)), M @ chosen.covariance @ M.T, size=samples,
                                method="eigh", check_valid="ignore")
    s = np.asarray(model.speedup(g), float) * np.exp(Y[:, :g.size])
    band = {f"p{round(q * 100)}": np.quantile(s, q, axis=0) for q in QUANTILES}
    metrics = {label: MetricDistribution(label, np.full(samples, np.nan) if c is None else
                                         c * np.exp(Y[:, g.size + i]))
               for i, (label, c) in enumerate(crossings.items())}
    distributions = {name: Distribution(name, "normal", p.value, p.stderr,
                                        f"normal({p.value:g}, {p.stderr:.3g})")
                     for name, p in fit.parameters.items()
                     if p.stderr is not None and p.stderr > 0}
    return UncertaintyResult(model, distributions, g, band, metrics["g1"], metrics["g_half"],
                             samples, seed)
