"""Algorithms characterised by their computational density (Steffen 2007, §3).

η(α) is how many computations can be done with α bytes of local store; the density is
``ρ(α) = η(α)/α`` computations per byte (eq. 1). Given the whole problem (M bytes, Z
computations) the density saturates at Z/M once α >= M, and the re-use penalty is
``φ(α) = (Z/M)/ρ(α)`` (eq. 2): how many times each byte has to be loaded.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from ..errors import ModelError, invalid
from ..validate import real_number
from .formula import Formula


def _positive(name: str, value, *, allow_none: bool = False):
    if value is None and allow_none:
        return None
    return real_number(name, value, positive=True)


@dataclass(frozen=True)
class Algorithm:
    """An algorithm's density. ``eta`` maps local-store bytes (array) to computations."""

    name: str
    eta: Callable = None
    description: str = ""
    formula: str | None = None
    total_bytes: float | None = None          # M
    total_computations: float | None = None   # Z

    def __post_init__(self):
        if not callable(self.eta):
            raise invalid("eta", self.eta, "must be a function of the local-store size α")
        object.__setattr__(self, "total_bytes",
                           _positive("total_bytes", self.total_bytes, allow_none=True))
        object.__setattr__(self, "total_computations",
                           _positive("total_computations", self.total_computations,
                                     allow_none=True))
        if (self.total_bytes is None) != (self.total_computations is None):
            raise ModelError("total_bytes and total_computations go together: give both the "
                             "problem size M and its computations Z, or neither")

    def with_problem(self, total_bytes: float, total_computations: float) -> "Algorithm":
        """The same algorithm on a problem of M bytes needing Z computations."""
        return replace(self, total_bytes=total_bytes, total_computations=total_computations)

    def rho(self, alpha):
        """Computations per byte with a local store of α bytes (eq. 1), saturating at Z/M.

        Values are returned as computed, NaN and negatives included (a plot may want them);
        :func:`accelperf.density.rate_bound` refuses a layer where ρ is not a finite
        number >= 0."""
        try:
            a = np.asarray(alpha, float)
        except (TypeError, ValueError):
            raise invalid("alpha", alpha, "a local-store size in bytes (a number or an array "
                                          "of numbers)") from None
        if a.size and (np.any(~np.isfinite(a)) or np.any(a < 0)):
            raise invalid("alpha", float(a[~(np.isfinite(a) & (a >= 0))].ravel()[0]),
                          "a local-store size must be a finite number of bytes >= 0")
        with np.errstate(all="ignore"):    # overflow and 0/0 become inf/NaN, judged later
            eta = self.eta(a)
            try:
                r = np.asarray(eta, float) / a
            except (TypeError, ValueError):
                raise invalid(f"eta of algorithm {self.name!r}", eta,
                              "must return a number of computations per α") from None
        if self.total_bytes is not None:
            r = np.where(a >= self.total_bytes, self.total_computations / self.total_bytes, r)
        return r

    def reuse_penalty(self, alpha):
        """φ(α) = (Z/M)/ρ(α) (eq. 2): 1 means every byte is loaded once."""
        if self.total_bytes is None:
            raise ModelError("the re-use penalty φ needs the problem: call "
                             "with_problem(total_bytes=M, total_computations=Z) first")
        with np.errstate(all="ignore"):
            return self.total_computations / self.total_bytes / self.rho(alpha)

    def __repr__(self) -> str:
        problem = "" if self.total_bytes is None else \
            f", M={self.total_bytes:g} B, Z={self.total_computations:g}"
        return f"Algorithm({self.name}: {self.formula or self.description}{problem})"


def dot_product(operand_bytes: float = 4) -> Algorithm:
    """Algorithm A, two long vectors: η = α/(2s), so ρ = 1/(2s) (eq. 3)."""
    s = _positive("operand_bytes", operand_bytes)
    return Algorithm("dot", lambda a: a / (2 * s), "dot product of two vectors (A)",
                     f"rho = 1/(2s), s = {s:g} B")


def matmul(operand_bytes: float = 4) -> Algorithm:
    """Algorithm B, square matrix multiply: η = (α/2s)^(3/2), ρ = √α/(2s)^(3/2) (eq. 4)."""
    s = _positive("operand_bytes", operand_bytes)
    return Algorithm("matmul", lambda a: (a / (2 * s)) ** 1.5, "square matrix multiply (B)",
                     f"rho = sqrt(alpha)/(2s)^1.5, s = {s:g} B")


def all_pairs(operand_bytes: float = 32) -> Algorithm:
    """Algorithm C, all-pairs interaction: η = α²/(2s²), ρ = α/(2s²) (eq. 5)."""
    s = _positive("operand_bytes", operand_bytes)
    return Algorithm("allpairs", lambda a: a**2 / (2 * s * s), "all-pairs interaction (C)",
                     f"rho = alpha/(2 s^2), s = {s:g} B")


BUILT_IN = {"dot": dot_product, "matmul": matmul, "allpairs": all_pairs}
ALIASES = {"dot-product": "dot", "a": "dot", "mm": "matmul", "gemm": "matmul", "b": "matmul",
           "all-pairs": "allpairs", "nbody": "allpairs", "c": "allpairs"}


@dataclass(frozen=True, eq=False)
class FormulaEta:
    """η(α) of a user formula (``kind`` "rho": the formula is ρ, η = ρ·α; "eta": it is η)
    with operand size ``s``: evaluated by the formula language's NumPy column, and
    printed by its SymPy column for pages that compute it (:mod:`accelperf.explore`)."""

    formula: Formula
    kind: str
    s: float

    def __call__(self, a):
        value = self.formula(alpha=a, s=self.s)
        return value * a if self.kind == "rho" else value

    def sympy(self, alpha):
        """η as a SymPy term of the symbol ``alpha``, in the operations :meth:`__call__`
        performs."""
        import sympy
        value = self.formula.sympy(alpha=alpha, s=sympy.Float(self.s))
        return value * alpha if self.kind == "rho" else value


def from_formula(text: str, operand_bytes: float = 4, name: str | None = None) -> Algorithm:
    """An algorithm from a formula in α (``alpha``) and s: ``"rho = ..."`` or ``"eta = ..."``;
    a bare expression is ρ(α).

    >>> float(from_formula("eta = alpha**2 / (2*s**2)", operand_bytes=32).rho(0.6e6))
    292.96875
    """
    s = _positive("operand_bytes", operand_bytes)
    body, kind = str(text).strip(), "rho"
    head, sep, rest = body.partition("=")
    if sep and head.strip() in ("rho", "eta"):      # one prefix: "rho = eta = ..." is an error
        body, kind = rest, head.strip()
    f = Formula(body, variables=("alpha", "s"))
    eta = FormulaEta(f, kind, s)
    with np.errstate(all="ignore"):     # values are judged where they are used
        probe = np.asarray(eta(np.array([1.0, 1e6])), float)
    if probe.shape not in ((2,), ()):          # () is a constant η, broadcast over α
        raise ModelError(f"formula = {text!r} is invalid: it must give one number per α")
    size = f" (s = {s:g} B)" if "s" in f.names else ""
    return Algorithm(name or "formula", eta, "user formula", f"{kind} = {f.text}{size}")


def algorithm(name_or_formula: str, operand_bytes: float | None = None) -> Algorithm:
    """A built-in algorithm by name (dot, matmul, allpairs) or a formula string."""
    key = str(name_or_formula).strip().lower()
    key = ALIASES.get(key, key)
    if key in BUILT_IN:
        return BUILT_IN[key]() if operand_bytes is None else BUILT_IN[key](operand_bytes)
    if key and not re.fullmatch(r"[a-z][a-z0-9_-]*", key):   # not a name: a formula
        alg = from_formula(name_or_formula, 4 if operand_bytes is None else operand_bytes)
        if operand_bytes is not None and "s" not in alg.eta.formula.names:
            raise invalid("operand_bytes", operand_bytes,
                          f"given to a formula in s; {alg.formula!r} has "
                          f"none, so the operand size changes nothing (leave it out)")
        return alg
    raise ModelError(f"algorithm = {name_or_formula!r} is invalid: valid algorithms are "
                     f"{', '.join(BUILT_IN)}, or a formula in alpha and s such as "
                     f"'sqrt(alpha)/(2*s)**1.5'", field="algorithm")
