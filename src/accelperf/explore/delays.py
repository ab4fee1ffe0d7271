"""An LPN performance interface with the model's named delays kept as symbols, for the
explorer's delay sliders (issue 25; the named parameters are issue 21's, lpn/params.py).

Why not a symbolic extraction: the extractor (lpn2pi, OSDI'24 §4.2 and A.3) reads a model
built with numbers (the design of :mod:`accelperf.lpn.params`) and decides on numbers: it
folds a max of constant gaps into one number, drops the terms its solver proves smaller,
and derives coupling and fill terms from critical cycles and paths at those numbers.
What holds instead: while the interface keeps one structure (the same classes, the same
terms, the same winner of every folded max), each of its numbers is an affine function of
the delays, because mean delays, loop delays Δ = Σ(δ + ḡ·(F/C − 1)) divided by F,
ε_T = N_T·ḡ_T and their sums are linear in them. So, for starting values p0 and one parameter step h_i each:

1. extract at p0 and at p0 + h_i·e_i (n + 1 extractions);
2. where every expression has the same shape in all of them (the tree with its numbers
   masked), each number c becomes c0 + Σ_i (c_i − c0)/h_i·(p_i − p0_i), in exact
   rationals: one formula for every slider position. A parameter that changes no number
   gets no slider; one whose step changes a shape gets none either (the page says why);
3. each slider's range is checked: the interface is extracted again at the range's ends
   (the other parameters at p0) and every lifted expression is compared with it on sample
   inputs (1e-9 relative). Where they differ, the structure changed between p0 and that
   end (a folded max changes its winner: the bottleneck moves; a dropped term becomes the
   largest; a class boundary moves): the range is cut to the half that still agrees
   (one bisection, else to the step) and the page states where it changed.

4. the box the ranges span is checked at its corners (all of them, up to
   ``MAX_CORNERS``; else a seeded sample), each against a fresh extraction. Every
   structural choice above (a max's winner, a dropped term, a class boundary) is a linear
   comparison of affine functions of the delays, so the set of delays where it holds is
   convex: when every corner keeps the structure, so does the whole box. Terms measured
   by simulation are outside that argument. The page warns when several delays are moved
   together and some corner did not keep the structure (or not every corner was checked).

Each extraction costs seconds; the tests also compare random vectors in the box
(``tests/test_explore_delays.py``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from fractions import Fraction

import sympy

from ..errors import ModelError

REL = 1e-9                      # the agreement a lifted formula must show
SAMPLES = 12                    # random inputs per comparison


@dataclass(frozen=True)
class DelaySlider:
    """One named delay the page can move: start value, checked range, what it is."""

    name: str
    start: int
    lo: int
    hi: int
    doc: str = ""
    note: str = ""              # why the range stops short of what was asked, if it does

    def __repr__(self) -> str:
        return f"DelaySlider({self.name} = {self.start} in {self.lo}..{self.hi})"


@dataclass(frozen=True)
class CornerCheck:
    """The corners of the sliders' box compared with fresh extractions (step 4 above):
    ``total`` corners, ``checked`` of them, and for each that did not keep the structure
    its delay values and what differed."""

    total: int
    checked: int
    failures: tuple[tuple[tuple[tuple[str, int], ...], str], ...] = ()

    @property
    def agree(self) -> int:
        return self.checked - len(self.failures)

    @property
    def whole_box(self) -> bool:
        """Every corner checked and each keeps the structure."""
        return self.checked == self.total and not self.failures

    def __repr__(self) -> str:
        return f"CornerCheck({self.agree} of {self.checked} checked corners agree, " \
               f"{self.total} in all)"


@dataclass(frozen=True)
class SymbolicInterface:
    """An interface whose expressions use the sliders' parameters as symbols."""

    interface: object                   # lifted analysis.interface.Interface
    sliders: tuple[DelaySlider, ...]
    fixed: tuple[tuple[str, str], ...]  # (parameter, why it has no slider)
    extractions: int                    # interfaces extracted to build and check it
    corners: CornerCheck | None = None  # None: fewer than two sliders, or not asked for

    def __repr__(self) -> str:
        return (f"SymbolicInterface({len(self.sliders)} slider(s), {len(self.fixed)} fixed, "
                f"{self.extractions} extractions)")


def parameter_symbol(name: str):
    return sympy.Symbol(name, integer=True, nonnegative=True)


# ---------------------------------------------------------------------- shapes and lifting
COMMUTATIVE = (sympy.Add, sympy.Mul, sympy.Max, sympy.Min)


def _shape(expr):
    """(masked tree, numbers in tree order). Every term carries its coefficient, 1
    included (``m·n`` at one value is ``3/2·m·n`` at the next), and the arguments of a
    sum, product, max or min are put in the order of their masked forms, so that a
    changed coefficient cannot reorder them."""
    expr = sympy.sympify(expr)
    if expr.is_Number:
        return "#", [Fraction(str(sympy.Rational(expr)))]
    coefficient, rest = (expr.as_coeff_Mul() if isinstance(expr, sympy.Expr)
                         else (None, expr))
    if coefficient is not None:
        mask, numbers = _shape_of_rest(rest)
        return f"#*{mask}", [Fraction(str(sympy.Rational(coefficient)))] + numbers
    return _shape_of_rest(rest)


def _shape_of_rest(expr):
    if not expr.args:
        return str(expr), []
    parts = [_shape(a) for a in expr.args]
    if expr.func in COMMUTATIVE:
        parts.sort(key=lambda p: p[0])
    mask = f"{expr.func.__name__}({', '.join(p[0] for p in parts)})"
    return mask, [n for p in parts for n in p[1]]


def _rebuild(expr, numbers: list):
    """``expr`` with its numbers (in :func:`_shape`'s order) replaced by ``numbers``."""
    expr = sympy.sympify(expr)
    if expr.is_Number:
        return numbers.pop(0)
    if isinstance(expr, sympy.Expr):
        _, rest = expr.as_coeff_Mul()
        coefficient = numbers.pop(0)
        return coefficient * _rebuild_rest(rest, numbers)
    return _rebuild_rest(expr, numbers)


def _rebuild_rest(expr, numbers: list):
    if not expr.args:
        return expr
    args = list(expr.args)
    order = list(range(len(args)))
    if expr.func in COMMUTATIVE:
        order.sort(key=lambda k: _shape(args[k])[0])
    new = list(args)
    for k in order:
        new[k] = _rebuild(args[k], numbers)
    return expr.func(*new)


def _lift(base, stepped: dict, p0: dict, symbols: dict):
    """``base`` (the expression at p0) with each number an affine function of the
    parameters; ``stepped`` = {name: (h, expression at p0 + h·e_name)}, each of the same
    shape as ``base`` (the caller checks)."""
    numbers = _shape(base)[1]
    coefficients = {name: [(b - a) / h for a, b in zip(numbers, _shape(expr)[1])]
                    for name, (h, expr) in stepped.items()}
    lifted = []
    for k, c0 in enumerate(numbers):
        term = sympy.Rational(c0.numerator, c0.denominator)
        for name, slopes in coefficients.items():
            d = slopes[k]
            if d:
                term += sympy.Rational(d.numerator, d.denominator) * \
                    (symbols[name] - p0[name])
        lifted.append(term)
    return _rebuild(base, lifted)


def _expanded(expr):
    """``expr`` multiplied out: SymPy factors 2·m + 10 as 2·(m + 5) but 3·m + 10 not, so
    only the expanded forms of two extractions have the same shape."""
    expr = sympy.sympify(expr)
    if expr.is_Relational:
        return expr.func(sympy.expand(expr.lhs), sympy.expand(expr.rhs))
    return sympy.expand(expr)


def _expressions(interface) -> list:
    """Every expression the page evaluates, expanded, in a fixed order (the shape of the
    list is part of the structure: classes, gaps, phases)."""
    out = []
    for c in interface.classes:
        out += list(c.input_class.conditions)
        out += [c.latency, c.phased_latency]
        out += [g.effective for g in c.gaps]
        out += [p.latency for p in c.phases]
    return [_expanded(e) for e in out]


def _layout(interface) -> tuple:
    return tuple((c.input_class.index, len(c.input_class.conditions),
                  tuple(g.transition for g in c.gaps),
                  tuple((p.transitions, p.bottleneck) for p in c.phases))
                 for c in interface.classes)


def _with_expressions(interface, exprs: list):
    """``interface`` with its expressions replaced, in :func:`_expressions`' order."""
    it = iter(exprs)
    classes = []
    for c in interface.classes:
        conditions = tuple(next(it) for _ in c.input_class.conditions)
        latency, phased = next(it), next(it)
        gaps = tuple(replace(g, effective=next(it)) for g in c.gaps)
        phases = tuple(replace(p, latency=next(it)) for p in c.phases)
        classes.append(replace(c, input_class=replace(c.input_class, conditions=conditions),
                               latency=latency, phased_latency=phased, gaps=gaps,
                               phases=phases))
    return replace(interface, classes=tuple(classes))


# ---------------------------------------------------------------------- checking
def _agrees(lifted: list, fresh, values: dict, ranges: dict, symbols: dict,
            rng: random.Random) -> str | None:
    """None when every lifted expression, at the parameter ``values``, equals the fresh
    extraction's on random inputs; else what differs."""
    exprs = _expressions(fresh)
    if len(exprs) != len(lifted):
        return "the number of classes or terms changes"
    at = {symbols[n]: sympy.sympify(v) for n, v in values.items()}
    corners = [{s: r[0] for s, r in ranges.items()}, {s: r[1] for s, r in ranges.items()}]
    for k in range(SAMPLES):
        # the space's corners first: a boundary often sits at a range's end (a mean of 0)
        point = corners[k] if k < len(corners) else {
            s: (rng.randint(int(lo), int(hi)) if s.is_integer
                else rng.uniform(float(lo), float(hi))) for s, (lo, hi) in ranges.items()}
        numbers = {s: sympy.sympify(v) for s, v in point.items()}
        for a, b in zip(lifted, exprs):
            # xreplace, not subs: every symbol gets a number, and subs's pattern matching
            # was a quarter of the JPEG decoder's `explore --delays` build
            a = sympy.sympify(a).xreplace({**at, **numbers})
            b = sympy.sympify(b).xreplace(numbers)
            if isinstance(a, sympy.logic.boolalg.BooleanAtom) or a.is_Relational:
                if bool(a) != bool(b):
                    return "a class boundary moves"
                continue
            x, y = float(a.evalf(30)), float(b.evalf(30))
            if abs(x - y) > REL * max(abs(x), abs(y), 1e-300):
                return f"a term differs by {abs(x - y) / max(abs(x), abs(y)):.2%}"
    return None


STEPS = (1, 2, -1, 3)


def _allowed(spec, value: int) -> bool:
    return (spec.minimum is None or value >= spec.minimum) and \
        (spec.maximum is None or value <= spec.maximum)


def _range(spec, start: int) -> tuple[int, int]:
    """The range a slider asks for: half to twice its start, within the declared bounds."""
    lo, hi = start // 2, max(2 * start, start + 8)
    if spec.minimum is not None:
        lo = max(lo, spec.minimum)
    if spec.maximum is not None:
        hi = min(hi, spec.maximum)
    return lo, hi


BISECTIONS = 6                  # checks spent finding where the structure changes, per end
MAX_CORNERS = 64                # corners of the sliders' box checked (the JPEG decoder: 2^6)


def _checked_end(name: str, p0: dict, end: int, check) -> tuple[int, str]:
    """How far towards ``end`` the lifted formula agrees with a fresh extraction, and a
    note saying where it stops agreeing (empty when it reaches ``end``). The lift is exact
    at p0 by construction; between the last value that agrees and the first that does not
    the structure changes (found by bisection, to within a cycle or ``BISECTIONS``
    checks)."""
    start = p0[name]
    if end == start:
        return end, ""
    problem = check(name, end)
    if problem is None:
        return end, ""
    good, bad, why = start, end, problem
    for _ in range(BISECTIONS):
        if abs(bad - good) <= 1:
            break
        mid = (good + bad) // 2 if bad > good else -((-good - bad) // 2)
        problem = check(name, mid)
        if problem is None:
            good = mid
        else:
            bad, why = mid, problem
    side = "above" if bad > start else "below"
    return good, (f"{side} {good} the structure changes: at {name} = {bad} {why} "
                  f"(re-extract there with --param {name}={bad})")


def check_corners(sliders, check, limit: int, rng: random.Random) -> CornerCheck | None:
    """Step 4: ``check(values)`` (None or what differs) at the corners of the sliders' box,
    every one when there are at most ``limit``, else ``limit`` of them drawn with ``rng``.
    None with fewer than two sliders (one slider's corners are its checked ends) or
    ``limit`` 0."""
    if len(sliders) < 2 or limit <= 0:
        return None
    total = 2 ** len(sliders)
    picks = range(total) if total <= limit else sorted(rng.sample(range(total), limit))
    failures = []
    for k in picks:
        # bit i of k: slider i at the top of its range
        values = tuple((d.name, (d.lo, d.hi)[(k >> i) & 1]) for i, d in enumerate(sliders))
        problem = check(dict(values))
        if problem is not None:
            failures.append((values, problem))
    return CornerCheck(total, len(picks), tuple(failures))


# ---------------------------------------------------------------------- entry point
def symbolic_interface(build, extract, space_ranges: dict, progress=None,
                       seed: int = 25, corners: int = MAX_CORNERS) -> SymbolicInterface:
    """The interface of the model ``build(params)`` with its named delays as symbols.

    ``build(params)`` returns the model built with {name: value} overrides (the starting
    values are the first build's), ``extract(model)`` its interface, ``space_ranges``
    {input symbol: (lo, hi)} the input space's ranges for the comparisons; ``progress(text)``
    is told of each extraction; at most ``corners`` corners of the sliders' box are checked
    (0: none)."""
    say = progress or (lambda text: None)
    model = build({})
    specs = {p.name: p for p in getattr(model, "parameters", ())}
    p0 = {n: p.value for n, p in specs.items()}
    symbols = {n: parameter_symbol(n) for n in specs}
    clash = sorted(set(map(str, space_ranges)) & set(specs))
    if clash:
        raise ModelError(f"parameter = {clash[0]!r} is invalid for `explore`: the input "
                         f"space has a symbol of that name")
    say("the interface at the starting values")
    base = extract(model)
    base_exprs, layout = _expressions(base), _layout(base)
    stepped, fixed = {}, []
    extractions = 1
    for name, spec in specs.items():
        # a coefficient that becomes 1 or 0 after a step drops out of the tree (x, not 1·x):
        # a second step size usually avoids it
        for h in STEPS:
            if not _allowed(spec, p0[name] + h):
                continue
            say(f"the interface at {name} = {p0[name] + h}")
            extractions += 1
            other = extract(build({name: p0[name] + h}))
            exprs = _expressions(other)
            if _layout(other) == layout and all(
                    _shape(a)[0] == _shape(b)[0] for a, b in zip(base_exprs, exprs)):
                stepped[name] = (h, exprs)
                break
        else:
            fixed.append((name, "its steps change the interface's classes or terms"))
    lifted = [_lift(e, {n: (h, x[k]) for n, (h, x) in stepped.items()}, p0, symbols)
              for k, e in enumerate(base_exprs)]
    used = set().union(*(sympy.sympify(e).free_symbols for e in lifted)) if lifted else set()
    for name in list(stepped):
        if symbols[name] not in used:
            fixed.append((name, "does not change this interface over its input space"))
            del stepped[name]
    rng = random.Random(seed)
    counter = [extractions]

    def check_at(values: dict) -> str | None:
        say("checking the formula against the interface at "
            + ", ".join(f"{n} = {v}" for n, v in values.items()))
        counter[0] += 1
        return _agrees(lifted, extract(build(values)), dict(p0, **values), space_ranges,
                       symbols, rng)

    def check(name: str, value: int) -> str | None:
        return check_at({name: value})

    sliders = []
    for name in stepped:
        spec = specs[name]
        lo, hi = _range(spec, p0[name])
        notes, ends = [], []
        for end in (lo, hi):
            reached, note = _checked_end(name, p0, end, check)
            ends.append(reached)
            if note:
                notes.append(note)
        sliders.append(DelaySlider(name, p0[name], min(ends), max(ends), spec.doc,
                                   "; ".join(notes)))
    box = check_corners(sliders, check_at, corners, rng)
    return SymbolicInterface(_with_expressions(base, lifted), tuple(sliders), tuple(fixed),
                             counter[0], box)


__all__ = ["DelaySlider", "CornerCheck", "SymbolicInterface", "symbolic_interface",
           "check_corners", "parameter_symbol", "MAX_CORNERS"]
