"""The models' formulas as JavaScript, printed from SymPy so the page computes what Python does.

Nothing here is written twice by hand: each formula is built once as a SymPy expression
(from the paper's equations, from a density algorithm's own η, or from an extracted
performance interface) and printed with SymPy's JavaScript code printer. The generic
numerics the page needs besides (a bracketed root finder in ln g) are in ``explorer.js``;
``tests/test_explore_formulas.py`` runs both in Node against the Python models.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..errors import ModelError

# Positive reals: SymPy then keeps ``g**beta`` as is instead of guarding branch cuts.
g, L, o, C, A, beta, x, K = sympy.symbols("g L o C A beta x K", positive=True)
mu, bandwidth, latency_s = sympy.symbols("mu bandwidth latency_s", positive=True)
# No assumptions on α: SymPy then keeps η(α)/α in the operations the Python η performs
# ((α/2s)^1.5/α, not 0.0442·√α), so the page rounds and underflows (μ → 0) as Python does.
alpha = sympy.Symbol("alpha")


def _function(name: str, params: tuple, expr) -> str:
    """``function name(p1, p2) { return <expr>; }`` printed by SymPy."""
    return (f"function {name}({', '.join(str(p) for p in params)}) {{ "
            f"return {sympy.jscode(expr)}; }}")


# ---------------------------------------------------------------------- LogCA
def logca_expressions() -> dict:
    """T0, T1 and the speedup of ISCA'17 eqs. 1, 2 and 8 for both latency kinds, and the
    sign function of the metrics module (``φ(x) = ln K + βx − ln(o + L1(eˣ))`` in
    x = ln g, K = C(1 − s/A)/s), as SymPy expressions."""
    T0 = C * g**beta                                   # host time
    out = {"T0": T0}
    for kind, L1 in (("independent", L), ("dependent", L * g)):
        T1 = o + L1 + T0 / A                           # eq. 1
        out[f"T1_{kind}"] = T1
        out[f"speedup_{kind}"] = T0 / T1               # eq. 2 / eq. 8
        out[f"phi_{kind}"] = sympy.log(K) + beta * x - sympy.log(o + L1.subs(g, sympy.exp(x)))
    return out


def logca_javascript() -> str:
    """The LogCA functions as JavaScript source: ``T0(g, C, beta)``,
    ``T1_independent(g, L, o, C, A, beta)``, ``speedup_dependent(...)`` and the crossing
    sign ``phi_independent(x, K, beta, o, L)``."""
    exprs = logca_expressions()
    lines = [_function("T0", (g, C, beta), exprs["T0"])]
    for kind in ("independent", "dependent"):
        lines.append(_function(f"T1_{kind}", (g, L, o, C, A, beta), exprs[f"T1_{kind}"]))
        lines.append(_function(f"speedup_{kind}", (g, L, o, C, A, beta),
                               exprs[f"speedup_{kind}"]))
        lines.append(_function(f"phi_{kind}", (x, K, beta, o, L), exprs[f"phi_{kind}"]))
    return "\n".join(lines)


# ---------------------------------------------------------------------- density
def density_expression(algorithm):
    """ρ(α) = η(α)/α (Steffen eq. 1) of an algorithm, traced by calling its own η on a
    SymPy symbol, or for a user formula (:func:`accelperf.density.from_formula`) printed by
    the formula language's SymPy column; a ModelError when η is neither (a function of
    the user's own using NumPy)."""
    printed = getattr(algorithm.eta, "sympy", None)     # a user formula: its SymPy column
    try:
        with sympy.evaluate(False):        # the Python η's own operations, in its order
            eta = printed(alpha) if printed else algorithm.eta(alpha)
            rho = sympy.sympify(eta) / alpha
    except (TypeError, AttributeError, sympy.SympifyError) as exc:
        raise ModelError(f"algorithm = {algorithm.name!r} is invalid for `explore`: its η "
                         f"cannot be printed as a formula ({type(exc).__name__}); use a "
                         f"built-in algorithm (dot, matmul, allpairs) or a formula "
                         f"(from_formula)") from None
    return rho


def rate_expression():
    """σ = ρ(μ)·β/(1 + βλ/μ), Steffen eq. 6, with ρ(μ) as the symbol ``rho``."""
    rho = sympy.Symbol("rho", nonnegative=True)
    return rho, rho * bandwidth / (1 + bandwidth * latency_s / mu)


def density_javascript(algorithms: dict) -> str:
    """``rho_<key>(alpha)`` per algorithm and ``sigma_general(rho, mu, bandwidth,
    latency_s)``; the special layers (unbounded, empty store, infinite bandwidth) are
    handled in ``explorer.js`` as :meth:`density.Layer.rate` does."""
    rho, sigma = rate_expression()
    lines = [_function("sigma_general", (rho, mu, bandwidth, latency_s), sigma)]
    for key, algo in algorithms.items():
        lines.append(_function(f"rho_{key}", (alpha,), density_expression(algo)))
    return "\n".join(lines)


# ---------------------------------------------------------------------- LPN interfaces
@dataclass(frozen=True)
class InterfaceFormulas:
    """One input class of an interface as JavaScript expressions of its symbols."""

    index: int
    conditions: tuple[str, ...]        # readable, as `lpn interface` prints them
    condition_js: tuple[str, ...]
    latency_js: str                    # plain: max over transitions of ε_T (§4.2)
    phased_js: str                     # by phase: the sum of phases
    effective: tuple[tuple[str, str], ...]   # (transition, ε_T in JS)
    phases: tuple[tuple[str, str, str], ...]  # (transitions "a -> b", bottleneck, latency JS)
    symbols: tuple[str, ...]

    def to_dict(self) -> dict:
        return {"index": self.index, "conditions": list(self.conditions),
                "condition_js": list(self.condition_js), "latency_js": self.latency_js,
                "phased_js": self.phased_js,
                "effective": [list(e) for e in self.effective],
                "phases": [list(p) for p in self.phases], "symbols": list(self.symbols)}


def _js(expr) -> str:
    return sympy.jscode(sympy.sympify(expr))


def interface_formulas(interface) -> tuple[InterfaceFormulas, ...]:
    """Every class of an extracted :class:`~accelperf.lpn.analysis.interfaces.interface.Interface`
    (OSDI'24 §4.2, A.3) printed as JavaScript."""
    out = []
    for c in interface.classes:
        exprs = [c.latency, c.phased_latency] + [gap.effective for gap in c.gaps] + \
            [ph.latency for ph in c.phases] + list(c.input_class.conditions)
        names = sorted({str(s) for e in exprs for s in sympy.sympify(e).free_symbols})
        out.append(InterfaceFormulas(
            index=c.input_class.index,
            conditions=tuple(c.input_class.readable_conditions()),
            condition_js=tuple(_js(cond) for cond in c.input_class.conditions),
            latency_js=_js(c.latency), phased_js=_js(c.phased_latency),
            effective=tuple((gap.transition, _js(gap.effective)) for gap in c.gaps),
            phases=tuple((" -> ".join(ph.transitions), ph.bottleneck, _js(ph.latency))
                         for ph in c.phases),
            symbols=tuple(names)))
    return tuple(out)


def stream_formulas(interface) -> tuple[InterfaceFormulas, ...]:
    """A stream priced token by token (:class:`~accelperf.lpn.analysis.interfaces.token_stream.
    StreamInterface`) as the panel's classes, for ``n`` tokens alike (the count symbol and
    the token's own symbols are the sliders): per stage its term ``fill + n·work +
    drain``, the latency their maximum (what the stream recurrence gives for identical
    tokens: the bottleneck stage busy from its fill to its drain)."""
    from ..lpn.analysis.space import count_symbol
    n = count_symbol(interface.place)
    out = []
    for c in interface.classes:
        terms = []
        for st in c.stages:
            term = n * st.work
            if st.timed:
                term += st.start + c.latency - st.finish
            terms.append((st.transition, sympy.sympify(term)))
        latency = sympy.Max(*[t for _, t in terms])
        exprs = [latency] + list(c.conditions)
        names = sorted({str(x) for e in exprs for x in sympy.sympify(e).free_symbols})
        phase = ((" -> ".join(st.transition for st in c.stages), c.bottleneck, _js(latency)),)
        out.append(InterfaceFormulas(
            index=c.index, conditions=tuple(str(x) for x in c.conditions),
            condition_js=tuple(_js(x) for x in c.conditions), latency_js=_js(latency),
            phased_js=_js(latency), effective=tuple((t, _js(e)) for t, e in terms),
            phases=phase, symbols=tuple(names)))
    return tuple(out)


__all__ = ["logca_expressions", "stream_formulas", "logca_javascript", "density_expression",
           "density_javascript", "rate_expression", "interface_formulas",
           "InterfaceFormulas"]
