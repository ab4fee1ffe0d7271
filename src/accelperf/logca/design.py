"""Design targets solved backwards: which L, o, C or A meets ``g1 <= 1KiB``,
``g_half <= 8KiB`` or ``speedup(64KiB) >= 5`` exactly (ISCA'17 §3: the decision the paper's
what-if analysis is for).

Each metric is monotone in each parameter with the others held: lower L or o and higher C or
A never raise g1 or g_{A/2} (the crossing condition ``K·g^β = o + L1(g)`` of
:mod:`metrics` has K growing with C and A and the right side growing with L and o) and never
lower the speedup at a fixed g (eqs. 2, 8). So the set of values meeting a target is an
interval with one finite end, found by bisection in the logarithm of the parameter on the
exact metric (every evaluation an exact root, never a grid), vectorised over all parameters
or curve points at once. Where the interval is empty the result says why, from the metric at
the parameter's best limit (L, o → 0; C, A → ∞).
"""

from __future__ import annotations

import math
import operator
import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import invalid
from ..units import format_size, parse_size
from .metrics import metric_batch
from .model import LogCA, speedup_array

DESIGN_PARAMETERS = ("L", "o", "C", "A")
COMPARISONS = {"<=": operator.le, ">=": operator.ge, "<": operator.lt, ">": operator.gt}
_TARGET = re.compile(r"^\s*(g1|g_half|g_A/2|g_a/2|g_A|speedup\s*\(\s*([^)]*?)\s*\))\s*"
                     r"(<=|>=|<|>)\s*(\S+(?:\s+[A-Za-z]+)?)\s*$")   # '4 KiB' as '4KiB'

# How far from the current value the search looks, as a factor either way (1e±60: any
# parameter that has to move further than that is, for a design, impossible).
SPAN = 1e60
METRIC_NAMES = {"g1": "g1", "g_half": "g_A/2", "g_A": "g_A", "speedup": "speedup"}


@dataclass(frozen=True)
class Target:
    """A design target: ``metric op value``, where metric is g1, g_half, g_A or the speedup
    at a granularity ``at`` (bytes)."""

    metric: str            # "g1", "g_half", "g_A" or "speedup"
    op: str                # "<=", ">=", "<" or ">"
    value: float           # bytes for g-metrics, a ratio for the speedup
    at: float | None = None
    text: str = ""

    def met(self, observed) -> np.ndarray:
        """Whether metric values meet the target (NaN, a metric that does not exist, never
        does)."""
        observed = np.asarray(observed, float)
        with np.errstate(invalid="ignore"):
            return np.isfinite(observed) & COMPARISONS[self.op](observed, self.value)

    def describe(self, value: float) -> str:
        if self.metric == "speedup":
            return f"speedup at {format_size(self.at)} = {value:.6g}"
        return f"{METRIC_NAMES[self.metric]} = {format_size(value)}"

    @property
    def read_as(self) -> str:
        """The target as read, sizes in bytes: '4KB' is 4000 B, not 4096 (and a 'kb' is
        no kilobit), which the text alone left unsaid."""
        if self.metric == "speedup":
            return f"speedup at {self.at:.0f} B {self.op} {self.value:g}"
        return f"{METRIC_NAMES[self.metric]} {self.op} {self.value:.0f} B"

    def __repr__(self) -> str:
        return f"Target({self.text})"


def parse_target(text: str) -> Target:
    """``"g1<=1KiB"``, ``"g_half<=8KiB"``, ``"speedup(64KiB)>=5"`` → :class:`Target`."""
    match = _TARGET.match(str(text))
    if not match:
        raise invalid("target", text, "expected METRIC OP VALUE with METRIC one of g1, "
                                      "g_half, g_A or speedup(SIZE) and OP one of <=, >=, <, >,"
                                      " e.g. 'g1<=1KiB' or 'speedup(64KiB)>=5'")
    metric, at_text, op, value_text = match.groups()
    if metric.startswith("speedup"):
        at = parse_size(at_text, name="target speedup(SIZE)")
        try:
            value = float(value_text)
        except ValueError:
            raise invalid("target", text, f"{value_text!r} is not a speedup (a number > 0)") \
                from None
        if not (math.isfinite(value) and value > 0):
            raise invalid("target", text, "the speedup must be a finite number > 0")
        return Target("speedup", op, value, at, str(text).strip())
    metric = {"g_A/2": "g_half", "g_a/2": "g_half"}.get(metric, metric)
    return Target(metric, op, parse_size(value_text, name="--target size"), None,
                  str(text).strip())


def evaluate(target: Target, L, o, C, A, beta, dependent) -> np.ndarray:
    """The target's metric for arrays of parameter sets (NaN where it does not exist)."""
    L, o, C, A, beta, dep = np.broadcast_arrays(*(np.asarray(a, float) for a in
                                                  (L, o, C, A, beta)),
                                                np.asarray(dependent, bool))
    if target.metric == "speedup":
        return np.asarray(speedup_array(target.at, L, o, C, A, beta, dep), float)
    out = np.full(L.shape, np.nan)
    ok = A > 1 if target.metric == "g1" else np.ones(L.shape, bool)   # g1 needs A > 1
    if ok.any():
        batch = metric_batch(L[ok], o[ok], C[ok], A[ok], beta[ok], dep[ok], target.metric)
        out[ok] = np.where(batch.exists, batch.first, np.nan)
    return out


@dataclass(frozen=True)
class ParameterSolution:
    """The value of one parameter (the others held) at which the target is met exactly.

    ``value`` is None when no value meets it (``reason`` says why) or when every value does
    (``reason`` says so too). ``direction`` says which side meets the target: "at most"
    (L, o) or "at least" (C, A). A value with a ``reason`` is the edge where the metric stops
    existing rather than a point where it equals the target (``achieved`` is its value
    there)."""

    parameter: str
    current: float
    value: float | None
    direction: str | None
    achieved: float | None        # the metric at ``value``: equals the target
    reason: str | None

    @property
    def possible(self) -> bool:
        """False when no value of the parameter meets the target (True when one does, or
        when every value does: then ``value`` is None and ``direction`` too)."""
        return self.value is not None or self.achieved is not None

    def __repr__(self) -> str:
        if self.value is None:
            return f"ParameterSolution({self.parameter}: none — {self.reason})"
        return (f"ParameterSolution({self.parameter} {self.direction} {self.value:.6g}, "
                f"now {self.current:.6g})")


@dataclass(frozen=True)
class DesignResult:
    """Per parameter, the value that meets a target (or why none can)."""

    model: LogCA
    target: Target
    current: float | None        # the metric of the model as it is
    met_now: bool
    solutions: dict = field(default_factory=dict)    # parameter -> ParameterSolution

    def to_dict(self) -> dict:
        return {"target": self.target.text, "model": self.model.parameters(),
                "current": self.current, "met_now": self.met_now,
                "solutions": {p: s.value for p, s in self.solutions.items()},
                "directions": {p: s.direction for p, s in self.solutions.items()},
                "reasons": {p: s.reason for p, s in self.solutions.items()}}

    def __repr__(self) -> str:
        # As the command line says it: whether the model meets the target as it is, and
        # per parameter the side that meets it (a bare number reads as "set it to this").
        now = "no such granularity" if self.current is None or not \
            math.isfinite(self.current) else self.target.describe(self.current)
        state = "met already" if self.met_now else "not met now"
        parts = ", ".join(_needed(s) for s in self.solutions.values())
        return (f"DesignResult({self.target.text} for {self.model.label}: {state} "
                f"({now}); {parts})")


def _needed(solution: ParameterSolution) -> str:
    if solution.value is not None:
        return f"{solution.parameter} {solution.direction} {solution.value:.4g}"
    return f"{solution.parameter} {'any' if solution.possible else 'none'}"


def _met(model: LogCA, target: Target, parameters, values) -> np.ndarray:
    """Whether the target is met with each parameters[i] set to values[i] (vectorised)."""
    cols = {p: np.where(parameters == p, values, getattr(model, p)) for p in DESIGN_PARAMETERS}
    observed = evaluate(target, cols["L"], cols["o"], cols["C"], cols["A"], model.beta,
                        model.dependent)
    return target.met(observed)


def _search(met, lo: np.ndarray, hi: np.ndarray):
    """Rows of a monotone yes/no question ``met(values, rows)`` over ln(value) in [lo, hi]:
    the boundary value of each row (NaN where the answer does not change), and the answers
    at the low and high ends."""
    everything = np.arange(lo.size)
    met_lo, met_hi = met(np.exp(lo), everything), met(np.exp(hi), everything)
    rows = np.flatnonzero(met_lo != met_hi)
    a, b, side = lo[rows], hi[rows], met_lo[rows]
    for _ in range(2100):      # 2 × 1050 halvings reach adjacent doubles from any bracket
        mid = 0.5 * (a + b)
        if np.all((mid == a) | (mid == b)):
            break
        same = met(np.exp(mid), rows) == side
        a, b = np.where(same, mid, a), np.where(same, b, mid)
    values = np.full(lo.size, np.nan)
    # The metric is continuous, so both ends of the final bracket give the target to within
    # one unit in the last place; return the end on the met side.
    values[rows] = np.exp(np.where(side, a, b))
    return values, met_lo, met_hi


def _reason(model: LogCA, target: Target, parameter: str, best: float | None) -> str:
    """Why no value of ``parameter`` meets the target: what its best limit still gives."""
    limit = {"L": "L = 0", "o": "o = 0", "C": f"C × {SPAN:.0e}", "A": f"A × {SPAN:.0e}"}
    reached = (f"no {METRIC_NAMES[target.metric]} at all" if best is None or
               not math.isfinite(best) else target.describe(best))
    why = {
        "o": "the latency alone exceeds the budget",
        "L": "the overhead alone exceeds the budget",
        "A": "even unbounded acceleration leaves the offload cost o + L1(g) above the budget",
        "C": "the offload cost cannot be hidden behind more host work at this granularity",
    }[parameter]
    if target.metric == "speedup" and target.value >= model.A and parameter != "A":
        why = f"the speedup never exceeds A = {model.A:g} (eq. 3)"
    return f"no value of {parameter} meets {target.text}: even {limit[parameter]} gives " \
           f"{reached}; {why}"


def _edge(target: Target, parameter: str, value: float, achieved: float,
          direction: str) -> str | None:
    """None where the boundary meets the target exactly; otherwise the boundary is where the
    metric stops existing (sub-linear work with growing latency: the two crossings of the
    target merge at the curve's peak and vanish, Implication 4), said in words."""
    if math.isfinite(achieved) and abs(achieved / target.value - 1) < 1e-6:
        return None
    beyond = "above" if direction == "at most" else "below"
    if target.metric == "g1" and parameter == "A" and abs(value - 1) < 1e-6:
        # "holds up to A = 1 ... below that the speedup never reaches" read as A <= 1
        return (f"{target.text} holds for every A > 1; at A <= 1 the accelerator is never "
                f"faster than the host and there is no g1 at all")
    return (f"{target.text} holds {'up' if direction == 'at most' else 'down'} to "
            f"{parameter} = {value:.6g}, where "
            f"{target.describe(achieved) if math.isfinite(achieved) else 'the metric'} still "
            f"meets it; {beyond} that the speedup never reaches the target's level at all "
            f"(the curve peaks below it, ISCA'17 Implication 4)")


def solve_design(model: LogCA, target: Target | str) -> DesignResult:
    """For each of L, o, C, A (the others held): the value that meets ``target`` exactly.

    Examples
    --------
    >>> from accelperf.logca import preset
    >>> r = solve_design(preset("ultrasparc-t2", "aes"), "g1<=64B")
    >>> round(r.solutions["o"].value), r.solutions["L"].value is None
    (4189, True)
    """
    target = parse_target(target) if isinstance(target, str) else target
    current = float(evaluate(target, model.L, model.o, model.C, model.A, model.beta,
                             model.dependent))
    met_now = bool(target.met(current))
    params = np.array(DESIGN_PARAMETERS)
    now = np.array([getattr(model, p) for p in DESIGN_PARAMETERS])
    scale = np.where(now > 0, now, max(model.o + model.L, model.C, 1.0))
    lo, hi = np.log(scale / SPAN), np.log(scale * SPAN)
    zero = np.isin(params, ("L", "o"))
    values, met_lo, met_hi = _search(lambda v, rows: _met(model, target, params[rows], v),
                                     lo, hi)
    boundary = met_lo != met_hi
    solutions = {}
    for i, p in enumerate(DESIGN_PARAMETERS):
        if boundary[i]:
            v = float(values[i])
            achieved = float(evaluate(target, **_single(model, p, v)))
            direction = "at most" if met_lo[i] else "at least"
            solutions[p] = ParameterSolution(p, float(now[i]), v, direction, achieved,
                                             _edge(target, p, v, achieved, direction))
        elif met_lo[i]:
            solutions[p] = ParameterSolution(p, float(now[i]), None, None, current,
                                             f"met for every value of {p} (the others held)")
        else:
            best_value = 0.0 if zero[i] else float(np.exp(hi[i]))
            best = float(evaluate(target, **_single(model, p, best_value)))
            if zero[i] and target.met(best):
                # o = 0 (or L = 0) exactly changes the curve's shape: with o = 0 and growing
                # latency the speedup starts at A and falls (Implication 4)
                solutions[p] = ParameterSolution(
                    p, float(now[i]), 0.0, "at most", best,
                    f"met only with {p} = 0 exactly ({target.describe(best)}): any {p} > 0 "
                    f"down to {np.exp(lo[i]):.3g} misses it, because {p} = 0 changes the "
                    f"shape of the curve (ISCA'17 Implication 4)")
                continue
            solutions[p] = ParameterSolution(p, float(now[i]), None, None, None,
                                             _reason(model, target, p, best))
    return DesignResult(model, target, current if math.isfinite(current) else None, met_now,
                        solutions)


def _single(model: LogCA, parameter: str, value: float) -> dict:
    cols = {p: getattr(model, p) for p in DESIGN_PARAMETERS}
    cols[parameter] = value
    return dict(**cols, beta=model.beta, dependent=model.dependent)


@dataclass(frozen=True)
class FeasibilityCurve:
    """Two parameters at once: for each value of ``x_parameter``, the value of
    ``y_parameter`` that meets the target exactly (NaN where none does)."""

    model: LogCA
    target: Target
    x_parameter: str
    y_parameter: str
    x: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    y_direction: str = ""       # "at most" or "at least": the feasible side of the curve

    def to_dict(self) -> dict:
        return {"target": self.target.text, "x_parameter": self.x_parameter,
                "y_parameter": self.y_parameter, "x": self.x.tolist(),
                "y": [None if not math.isfinite(v) else v for v in self.y.tolist()],
                "feasible_side": self.y_direction}


def feasibility_curve(model: LogCA, target: Target | str, x_parameter: str,
                      y_parameter: str, points: int = 60, spread: float = 1e3
                      ) -> FeasibilityCurve:
    """The boundary of the feasible region in the (x, y) plane: x over ``current / spread``
    .. ``current · spread`` (log-spaced), y solved exactly at each x."""
    target = parse_target(target) if isinstance(target, str) else target
    for name, p in (("x_parameter", x_parameter), ("y_parameter", y_parameter)):
        if p not in DESIGN_PARAMETERS:
            raise invalid(name, p, "parameters are L, o, C and A")
    if x_parameter == y_parameter:
        raise invalid("pair", f"{x_parameter},{y_parameter}", "give two different parameters")
    x_now = getattr(model, x_parameter)
    x_scale = x_now if x_now > 0 else max(model.o + model.L, 1.0)
    xs = np.geomspace(x_scale / spread, x_scale * spread, points)
    y_now = getattr(model, y_parameter)
    y_scale = y_now if y_now > 0 else max(model.o + model.L, model.C, 1.0)
    lo = np.full(points, math.log(y_scale / SPAN))
    hi = np.full(points, math.log(y_scale * SPAN))
    held = {p: np.full(points, getattr(model, p)) for p in DESIGN_PARAMETERS}
    held[x_parameter] = xs

    def met(y_values, rows):
        cols = {p: v[rows] for p, v in held.items()}
        cols[y_parameter] = y_values
        return target.met(evaluate(target, cols["L"], cols["o"], cols["C"], cols["A"],
                                   model.beta, model.dependent))

    ys, _, _ = _search(met, lo, hi)
    direction = "at most" if y_parameter in ("L", "o") else "at least"
    return FeasibilityCurve(model, target, x_parameter, y_parameter, xs, ys, direction)


def check_pair(text: str) -> tuple[str, str]:
    """``"o,L"`` → ("o", "L")."""
    parts = [p.strip() for p in str(text).split(",")]
    if len(parts) != 2 or not all(p in DESIGN_PARAMETERS for p in parts) or parts[0] == parts[1]:
        raise invalid("--pair", text, "two different parameters of L, o, C, A separated by a "
                                      "comma, e.g. o,L")
    return parts[0], parts[1]



# ---------------------------------------------------------------------- with a memory hierarchy
# Bisection steps in ln(value): from a bracket of ln(1e120) to 1e-13, i.e. the value to a
# relative 1e-13 (each step one exact root of the hierarchical model, so not to the last ulp
# as for plain LogCA, whose batch makes 2100 steps cheap).
HIERARCHY_STEPS = 64
STEP_SPAN = 1e6              # a step's cost factor 1 + a_k searched over /1e6 .. ×1e6


def hierarchical_metric(model, target: Target) -> float:
    """The target's metric on a :class:`.hierarchy.HierarchicalLogCA` (NaN where it does not
    exist): g1, g_A/2 and g_A the first sizes where its speedup reaches 1, A/2 and A (A the
    innermost layer's), the speedup at the target's size."""
    if target.metric == "speedup":
        return float(model.speedup(target.at))
    if model.plain:
        return float(evaluate(target, model.base.L, model.base.o, model.base.C, model.base.A,
                              model.base.beta, model.base.dependent))
    level = {"g1": 1.0, "g_half": model.A / 2, "g_A": model.A}[target.metric]
    g = model.granularity_for(level)
    return math.nan if g is None else g


def _to_search(name: str, value: float) -> float:
    """The variable the search bisects: ln(value) for L, o, C, A; ln(1 + step) for a
    per-layer step (which lives above −1)."""
    return math.log(1 + value) if "[" in name else math.log(value)


def _from_search(name: str, u: float) -> float:
    return math.expm1(u) if "[" in name else math.exp(u)


def _hierarchical_boundary(met, name: str, span_lo: float, span_hi: float):
    """(value, met at the low end, met at the high end): a bisection on ``met(value)``, a
    yes/no question monotone in the parameter, over its search variable."""
    a, b = span_lo, span_hi
    met_lo, met_hi = met(_from_search(name, a)), met(_from_search(name, b))
    if met_lo == met_hi:
        return None, met_lo, met_hi
    for _ in range(HIERARCHY_STEPS):
        mid = 0.5 * (a + b)
        if met(_from_search(name, mid)) == met_lo:
            a = mid
        else:
            b = mid
    return _from_search(name, a if met_lo else b), met_lo, met_hi


def _search_range(model, name: str) -> tuple[float, float]:
    now = model.value_of(name)
    if "[" in name:
        centre = _to_search(name, now)
        return centre - math.log(STEP_SPAN), centre + math.log(STEP_SPAN)
    b = model.base
    scale = now if now > 0 else max(b.o + b.L, b.C, 1.0)
    return math.log(scale / SPAN), math.log(scale * SPAN)


def solve_hierarchical_design(model, target: Target | str) -> DesignResult:
    """:func:`solve_design` for LogCA with a memory hierarchy: for each tunable parameter
    (L, o, C, A and the per-layer steps a[layer], l[layer]; see
    :meth:`.hierarchy.HierarchicalLogCA.tunable`), the others held, the value that meets
    ``target`` on the hierarchical model, to a relative 1e-13 by bisection.

    The speedup at every size falls as L, o or a step grows and rises with A, so the set
    meeting a target is again an interval with one finite end; C is monotone too unless
    the host's per-call constant dominates, where the bisection returns one boundary. With
    one layer and no host constant the plain solution is returned (exact)."""
    target = parse_target(target) if isinstance(target, str) else target
    if model.plain:
        return solve_design(model.base, target)
    current = hierarchical_metric(model, target)
    solutions = {}
    for name in model.tunable():
        now = model.value_of(name)

        def met(value, name=name):
            return bool(target.met(hierarchical_metric(model.with_value(name, value), target)))
        lo, hi = _search_range(model, name)
        value, met_lo, met_hi = _hierarchical_boundary(met, name, lo, hi)
        if value is not None:
            achieved = hierarchical_metric(model.with_value(name, value), target)
            direction = "at most" if met_lo else "at least"
            solutions[name] = ParameterSolution(name, now, value, direction, achieved,
                                                _edge(target, name, value, achieved, direction))
        elif met_lo:
            solutions[name] = ParameterSolution(name, now, None, None, current,
                                                f"met for every value of {name} (the others "
                                                f"held)")
        else:
            solutions[name] = ParameterSolution(
                name, now, None, None, None,
                f"no value of {name} from {_from_search(name, lo):.6g} to "
                f"{_from_search(name, hi):.6g} meets {target.text} (the others held)")
    return DesignResult(model, target, current if math.isfinite(current) else None,
                        bool(target.met(current)), solutions)


def hierarchical_feasibility(model, target: Target | str, x_parameter: str, y_parameter: str,
                             points: int = 60, spread: float = 1e3) -> FeasibilityCurve:
    """:func:`feasibility_curve` for LogCA with a memory hierarchy: x over its value
    ``/spread .. ×spread`` (a step's cost factor 1 + a_k), y solved at each x as in
    :func:`solve_hierarchical_design`. A per-layer parameter may be either."""
    target = parse_target(target) if isinstance(target, str) else target
    if model.plain and "[" not in x_parameter + y_parameter:
        return feasibility_curve(model.base, target, x_parameter, y_parameter, points, spread)
    names = model.tunable()
    for p in (x_parameter, y_parameter):
        if p not in names:
            raise invalid("x_parameter" if p == x_parameter else "y_parameter", p,
                          f"parameters are {', '.join(names)}")
    if x_parameter == y_parameter:
        raise invalid("pair", f"{x_parameter},{y_parameter}", "give two different parameters")
    centre = _to_search(x_parameter, model.value_of(x_parameter))
    xs = np.array([_from_search(x_parameter, u) for u in
                   np.linspace(centre - math.log(spread), centre + math.log(spread), points)])
    lo, hi = _search_range(model, y_parameter)
    ys = np.full(points, np.nan)
    for i, x in enumerate(xs):
        moved = model.with_value(x_parameter, float(x))

        def met(value):
            return bool(target.met(hierarchical_metric(moved.with_value(y_parameter, value),
                                                       target)))
        value, _, _ = _hierarchical_boundary(met, y_parameter, lo, hi)
        ys[i] = np.nan if value is None else value
    direction = "at least" if y_parameter in ("C", "A") else "at most"
    return FeasibilityCurve(model, target, x_parameter, y_parameter, xs, ys, direction)
