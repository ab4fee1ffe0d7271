"""The LogCA model: execution times and speedup as functions of granularity.

Implements ISCA'17 (Altaf & Wood, "LogCA: A High-Level Performance Model for Hardware
Accelerators") §2:

* ``T0(g) = C·g^β``                                   host time (unaccelerated)
* ``T1(g) = o + L1(g) + C·g^β / A``                   accelerated time (eq. 1)
* ``L1(g) = L`` (granularity-independent) or ``L·g`` (granularity-dependent, §2.3)
* ``speedup(g) = T0(g) / T1(g)``                      eq. 2 (independent), eq. 8 (dependent)

Units follow the model's ``unit``: in ``"cycles"`` (the ISCA paper) L and o are cycles and C is
cycles per byte; in ``"seconds"`` (the CAL short paper) they are seconds and seconds per byte.
With granularity-dependent latency L is per byte. Granularities are always bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from ..errors import ModelError, invalid
from ..validate import number_array, real_number
from . import metrics
from .metrics import Bound, GranularityResult, Peak


Latency = Literal["independent", "dependent"]
Unit = Literal["cycles", "seconds"]
LATENCY_KINDS = ("independent", "dependent")

# The granularities ISCA'17 sweeps (Figs. 3-11): 16 B to "32MB", which steps in powers of two
# and so is 32 MiB = 2^25 bytes. Every command, figure and analysis defaults to it.
DEFAULT_RANGE = (16.0, float(2**25))
UNITS = ("cycles", "seconds")

# Magnitudes a model may have. Beyond them C·g^β, K = C(A−1)/A and ln-space brackets leave
# double precision (1e308) somewhere in the metrics, and no device is that far from 1 in
# any unit: 1e100 seconds is 1e83 universe ages. β spans every kernel of ISCA'17 Table 4
# (0.5 .. 1.7) with room to spare.
MAGNITUDE = 1e100
BETA_RANGE = (1e-3, 100.0)


def _within(name: str, value: float, lo: float, hi: float, allowed: str,
            zero: bool = False) -> float:
    if not (zero and value == 0) and not (lo <= value <= hi):
        raise invalid(name, value, allowed)
    return value


def speedup_array(g, L, o, C, A, beta, dependent):
    """Speedup of eqs. 2 and 8 with NumPy broadcasting over every argument, unchecked.

    This is the hot path: it validates nothing, so parameter sets and granularities can be
    swept as arrays (for example ``L[:, None]`` against ``g[None, :]``). ``dependent`` is a
    boolean (array) selecting ``L·g`` over ``L``.
    """
    # 1 / (offload cost per unit of host work + 1/A): stays finite when C·g^β overflows to
    # inf, and gives 0 at g = 0, where the host time vanishes.
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        host = C * np.power(g, beta)
        latency = np.where(dependent, L * g, L) if np.ndim(dependent) else \
            (L * g if dependent else L)
        return 1.0 / ((o + latency) / host + 1.0 / A)




@dataclass(frozen=True)
class LogCA:
    """A LogCA accelerator model (ISCA'17 Table 1 parameters plus the complexity β).

    Parameters
    ----------
    L : float
        Interface latency, >= 0. Per byte when ``latency="dependent"``.
    o : float
        Host overhead of one offload, >= 0.
    C : float
        Computational index: host time per byte, > 0.
    A : float
        Acceleration: the accelerator's peak speedup over the host, > 0. The metrics
        g1 needs A > 1 (an accelerator that is never faster never breaks even).
    beta : float
        Complexity exponent: host time grows as g^β (ISCA'17 Table 4), > 0.
    latency : {"independent", "dependent"}
        ``L1(g) = L`` (on-chip, pipelined interface) or ``L·g`` (data copied over a bus).
    unit : {"cycles", "seconds"}
        The unit of L, o and C.
    frequency_hz : float, optional
        Host clock used to convert between cycles and seconds.
    name : str, optional
        A label for tables and figure legends.

    Examples
    --------
    >>> m = LogCA(L=3, o=10, C=35, A=6, name="sandy-bridge aes")
    >>> round(float(m.speedup(4096)), 3)
    5.997
    """

    L: float
    o: float
    C: float
    A: float
    beta: float = 1.0
    latency: Latency = "independent"
    unit: Unit = "cycles"
    frequency_hz: float | None = None
    name: str | None = None

    def __repr__(self) -> str:
        # 12 significant digits: a fitted o printed as 4.999999999999998; the text still
        # builds the model again to 1e-12
        numbers = ", ".join(f"{k}={getattr(self, k):.12g}" for k in ("L", "o", "C", "A", "beta"))
        rest = f", latency={self.latency!r}, unit={self.unit!r}"
        if self.frequency_hz is not None:
            rest += f", frequency_hz={self.frequency_hz:.12g}"
        if self.name is not None:
            rest += f", name={self.name!r}"
        return f"LogCA({numbers}{rest})"

    def __post_init__(self) -> None:
        set_ = object.__setattr__  # frozen: normalise through the back door once, here
        set_(self, "L", real_number("L", self.L, positive=False))
        set_(self, "o", real_number("o", self.o, positive=False))
        set_(self, "C", real_number("C", self.C, positive=True))
        set_(self, "A", real_number("A", self.A, positive=True))
        set_(self, "beta", real_number("beta", self.beta, positive=True))
        for name in ("L", "o"):
            _within(name, getattr(self, name), 1 / MAGNITUDE, MAGNITUDE,
                    f"must be 0 or between {1 / MAGNITUDE:g} and {MAGNITUDE:g}", zero=True)
        for name in ("C", "A"):
            _within(name, getattr(self, name), 1 / MAGNITUDE, MAGNITUDE,
                    f"must be between {1 / MAGNITUDE:g} and {MAGNITUDE:g}")
        _within("beta", self.beta, *BETA_RANGE,
                f"must be between {BETA_RANGE[0]:g} and {BETA_RANGE[1]:g}")
        if self.latency not in LATENCY_KINDS:
            raise invalid("latency", self.latency, "must be 'independent' or 'dependent'")
        if self.unit not in UNITS:
            raise invalid("unit", self.unit, "must be 'cycles' or 'seconds'")
        if self.frequency_hz is not None:
            set_(self, "frequency_hz",
                 real_number("frequency_hz", self.frequency_hz, positive=True))

    # ------------------------------------------------------------------ identity
    @property
    def dependent(self) -> bool:
        """True when latency grows with granularity (``L1(g) = L·g``)."""
        return self.latency == "dependent"

    @property
    def label(self) -> str:
        return self.name or (f"L={self.L:g} o={self.o:g} C={self.C:g} A={self.A:g} "
                             f"β={self.beta:g}")

    def parameters(self) -> dict:
        """The model's parameters as a plain dict (JSON-ready)."""
        return {"L": self.L, "o": self.o, "C": self.C, "A": self.A, "beta": self.beta,
                "latency": self.latency, "unit": self.unit,
                "frequency_hz": self.frequency_hz, "name": self.name}

    def with_parameters(self, **changes) -> "LogCA":
        """A copy with some parameters changed (validated like a new model)."""
        unknown = set(changes) - set(self.parameters())
        if unknown:
            raise ModelError(f"unknown LogCA parameter(s) {sorted(unknown)}; "
                             f"valid: L, o, C, A, beta, latency, unit, frequency_hz, name")
        return replace(self, **changes)

    # ------------------------------------------------------------------ times
    @staticmethod
    def _granularity(g):
        arr = number_array("granularity", g)
        if arr.size and not (np.all(np.isfinite(arr)) and np.all(arr >= 0)):
            bad = arr[~(np.isfinite(arr) & (arr >= 0))].ravel()[0]
            raise invalid("granularity", float(bad), "must be a finite number of bytes >= 0")
        return arr

    def latency_time(self, g):
        """``L1(g)``: L, or L·g with granularity-dependent latency."""
        g = self._granularity(g)
        return self.L * g if self.dependent else np.full_like(g, self.L)

    def T0(self, g):
        """Host (unaccelerated) time ``C·g^β`` (ISCA'17 §2); +inf where it exceeds a double
        (large β at large g), which every ratio built on it handles."""
        with np.errstate(over="ignore"):
            return self.C * np.power(self._granularity(g), self.beta)

    def T1(self, g):
        """Accelerated time ``o + L1(g) + C·g^β/A`` (ISCA'17 eq. 1)."""
        g = self._granularity(g)
        return self.o + self.latency_time(g) + self.T0(g) / self.A

    def speedup(self, g):
        """``T0/T1`` (ISCA'17 eq. 2, or eq. 8 with granularity-dependent latency).

        Vectorised: ``g`` may be a scalar or any NumPy array of granularities in bytes.
        """
        g = self._granularity(g)
        return speedup_array(g, self.L, self.o, self.C, self.A, self.beta, self.dependent)

    # ------------------------------------------------------------------ limits
    def large_g_limit(self) -> float:
        """lim_{g→∞} speedup: A (eq. 3; also eq. 9 with β > 1), C/(L + C/A) for
        dependent latency with β = 1, and 0 for dependent latency with β < 1 (eq. 9)."""
        if not self.dependent or self.L == 0 or self.beta > 1:
            return self.A
        if self.beta == 1:
            return self.C / (self.L + self.C / self.A)
        return 0.0

    def small_g_limit(self) -> float:
        """The paper's small-granularity speedup, eqs. 4 and 10: the speedup at g = 1 byte,
        ``C / (o + L + C/A)``. (As g → 0 itself the speedup tends to 0 whenever o + L1 > 0.)"""
        return self.C / (self.o + self.L + self.C / self.A)

    def amdahl_bound(self, g):
        """Speedup with an infinitely fast accelerator, ``C·g^β / (o + L1(g))``: the line the
        curve follows at small g, where overheads dominate (eq. 4's upper bound C/(o+L))."""
        g = self._granularity(g)
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.T0(g) / (self.o + self.latency_time(g))

    def intensity_bound(self, g):
        """``C/L · g^(β−1)``, the large-g bound of eq. 9 (granularity-dependent latency)."""
        g = self._granularity(g)
        if not self.dependent or self.L == 0:
            return np.full_like(g, np.inf)
        with np.errstate(divide="ignore", over="ignore"):
            return self.C / self.L * np.power(g, self.beta - 1)

    @property
    def computational_intensity(self) -> float:
        """C/L (ISCA'17 §2); infinite when L = 0."""
        return self.C / self.L if self.L > 0 else math.inf

    # ------------------------------------------------------------------ units
    def _frequency(self, frequency_hz: float | None) -> float:
        f = frequency_hz if frequency_hz is not None else self.frequency_hz
        if f is None:
            raise ModelError("frequency_hz = None is invalid: converting between cycles and "
                             "seconds needs the host clock frequency (e.g. 3.4e9)")
        return real_number("frequency_hz", f, positive=True)

    def to_seconds(self, frequency_hz: float | None = None) -> "LogCA":
        """The same model with L, o and C in seconds (CAL short paper's units)."""
        if self.unit == "seconds":
            return self
        f = self._frequency(frequency_hz)
        return replace(self, L=self.L / f, o=self.o / f, C=self.C / f, unit="seconds",
                       frequency_hz=f)

    def to_cycles(self, frequency_hz: float | None = None) -> "LogCA":
        """The same model with L, o and C in cycles (ISCA paper's units)."""
        if self.unit == "cycles":
            return self
        f = self._frequency(frequency_hz)
        return replace(self, L=self.L * f, o=self.o * f, C=self.C * f, unit="cycles",
                       frequency_hz=f)

    # ------------------------------------------------------------------ metrics
    def g1(self, method: str = "chandrupatla") -> "GranularityResult":
        """Break-even granularity (speedup 1); see :func:`metrics.break_even_granularity`."""
        return metrics.break_even_granularity(self, method=method)

    def g_half(self, method: str = "chandrupatla") -> "GranularityResult":
        """Granularity of speedup A/2; see :func:`metrics.half_acceleration_granularity`."""
        return metrics.half_acceleration_granularity(self, method=method)

    def g_A(self, method: str = "chandrupatla") -> "GranularityResult":
        """Granularity of speedup A with unbounded acceleration (eq. 13)."""
        return metrics.peak_acceleration_granularity(self, method=method)

    def bound(self) -> "Bound":
        """Compute- or latency-bound (§3.1); see :func:`metrics.bound_type`."""
        return metrics.bound_type(self)

    def peak(self) -> "Peak | None":
        """Interior maximum of the speedup curve, where it has one (Implication 4)."""
        return metrics.peak_speedup(self)
