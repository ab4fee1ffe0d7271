""""Does offloading g bytes pay, by how much, and what limits it there?" for one or several
accelerators at one granularity (ISCA'17 §3: bounds §3.1, regions §3.2, break-even eq. 5/11).

Since ``speedup = 1 / ((o + L1(g))/(C·g^β) + 1/A)`` (eqs. 2, 8), three upper bounds cap it at
any granularity g, one per cost: the acceleration A (eq. 3), the overhead bound ``C·g^β/o``
(eq. 4 without latency) and the latency bound ``C·g^β/L1(g)``, which is the intensity bound
``C/L·g^(β−1)`` of eq. 9 when latency grows with g. The smallest binds at g: it names the
cost that dominates there. The parameters that limit the speedup at g are those whose improvement by ``factor``
raises it by at least ``threshold`` there: the regions analysis of §3.2 at one point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import ModelError, invalid
from ..units import format_size
from ..validate import real_number
from .metrics import break_even_granularity
from .model import LogCA
from .regions import PARAMETERS, gain_array

BOUND_EXPRESSIONS = {"acceleration": "A", "overhead": "C·g^β/o", "latency": "C·g^β/L1(g)"}


@dataclass(frozen=True)
class Advice:
    """The answer for one accelerator at one granularity.

    ``break_even`` is the smallest granularity (bytes) from which offloading pays: the first
    crossing of speedup 1, 0.0 when it pays at every size, None when it never pays (then
    ``break_even_reason`` says why).
    """

    model: LogCA
    at: float
    speedup: float
    pays: bool
    bound: str                       # "acceleration", "overhead" or "latency"
    bound_value: float
    limited_by: tuple[str, ...]      # parameters, largest gain first
    gains: dict = field(repr=False)  # parameter -> relative speedup gain of the improvement
    break_even: float | None = None
    break_even_reason: str | None = None
    factor: float = 10.0
    threshold: float = 0.2

    def to_dict(self) -> dict:
        return {"model": self.model.label, "at": self.at, "speedup": self.speedup,
                "pays": self.pays, "bound": self.bound, "bound_value": self.bound_value,
                "bound_expression": BOUND_EXPRESSIONS[self.bound],
                "limited_by": list(self.limited_by), "gains": dict(self.gains),
                "break_even": self.break_even, "break_even_reason": self.break_even_reason,
                "factor": self.factor, "threshold": self.threshold,
                "parameters": self.model.parameters()}

    def __repr__(self) -> str:
        verdict = "pays" if self.pays else "does not pay"
        be = ("never" if self.break_even is None else format_size(self.break_even)
              if self.break_even > 0 else "every size")
        limits = ", ".join(self.limited_by) or "nothing"
        return (f"Advice({self.model.label} at {format_size(self.at)}: speedup "
                f"{self.speedup:.4g}, {verdict}; {self.bound}-bound; limited by {limits}; "
                f"pays from {be})")


def binding_bound(model: LogCA, g: float) -> tuple[str, float]:
    """The smallest of the three upper bounds on the speedup at ``g``, and its value."""
    host = float(model.T0(g))
    with np.errstate(divide="ignore"):
        bounds = {"acceleration": model.A,
                  "overhead": host / model.o if model.o > 0 else math.inf,
                  "latency": host / float(model.latency_time(g)) if model.L > 0 else math.inf}
    name = min(bounds, key=bounds.get)
    return name, bounds[name]


def _break_even(model: LogCA) -> tuple[float | None, str | None]:
    if model.A <= 1:
        return None, (f"A = {model.A:g} <= 1: the accelerator is never faster than the host")
    r = break_even_granularity(model)
    if r.flag == "above-everywhere":
        return 0.0, None
    if not r.exists:
        return None, r.reason
    # A curve that falls through 1 (o = 0, Implication 4) pays below its crossing instead.
    if float(model.speedup(r.root / 2)) > 1.0:
        return 0.0, r.reason
    return r.root, r.note


def advise(model: LogCA, at, factor: float = 10.0, threshold: float = 0.2) -> Advice:
    """Speedup, verdict, binding bound, limiting parameters and break-even at ``at`` bytes.

    Examples
    --------
    >>> from accelperf.logca import preset
    >>> a = advise(preset("ultrasparc-t2", "aes"), 4096)
    >>> round(a.speedup, 3), a.pays, a.limited_by
    (7.766, True, ('C', 'o', 'A'))
    """
    g = real_number("at", at, positive=True)
    if not np.isfinite(factor) or factor <= 1:
        raise invalid("factor", factor, "must be a finite number > 1")
    if not np.isfinite(threshold) or threshold <= 0:
        raise invalid("threshold", threshold, "must be a finite fraction > 0 (0.2 = 20%)")
    speedup = float(model.speedup(g))
    gains = {p: float(gain_array(g, model.L, model.o, model.C, model.A, model.beta,
                                 model.dependent, i, factor))
             for i, p in enumerate(PARAMETERS)}
    limited = tuple(sorted((p for p in PARAMETERS if gains[p] >= threshold),
                           key=lambda p: -gains[p]))
    bound, value = binding_bound(model, g)
    break_even, reason = _break_even(model)
    return Advice(model=model, at=g, speedup=speedup, pays=speedup > 1.0, bound=bound,
                  bound_value=value, limited_by=limited, gains=gains, break_even=break_even,
                  break_even_reason=reason, factor=float(factor), threshold=float(threshold))


def rank(models, at, factor: float = 10.0, threshold: float = 0.2) -> tuple[Advice, ...]:
    """Advice for several accelerators at one granularity, fastest first."""
    models = list(models)
    if not models:
        raise ModelError("no accelerator to rank: give at least one model")
    return tuple(sorted((advise(m, at, factor, threshold) for m in models),
                        key=lambda a: -a.speedup))

