"""Path conditions: are they satisfiable, and an input that satisfies them (Z3).

Conditions are SymPy relations over the input space's symbols (the symbolic executor
builds them from the traced expression trees with :func:`accelperf.lpn.expr_backends.to_sympy`);
this module translates them to Z3 once per question. Token values and counts are integers,
a stream's means are reals.
"""

from __future__ import annotations

import random
import threading

import sympy
import z3

from ....errors import ModelError


def _to_z3(expr, env: dict, ctx: z3.Context, memo: dict | None = None):
    """SymPy -> Z3 (in ``ctx``) for what the operator table's SymPy column produces.

    ``memo`` ({id of a SymPy subexpression: its Z3 term}, one per translation into
    ``ctx``, while the expressions translated are alive) keeps a subexpression met again
    from being translated again: the space's constraints and a class's conditions share
    most of their subtrees (the PCIe decoder's questions visited 301,560 nodes, 44,263 of
    them distinct). Z3 keeps one node per distinct term of a context, so the terms
    asserted are the very nodes, with the same ids, that translating every occurrence
    makes. The memo also holds a reference to each compound subterm until the question
    is asserted, and that changes Z3's search (see :class:`Solver`)."""
    if memo is None or not getattr(expr, "args", ()):
        return _translate(expr, env, ctx, memo)
    term = memo.get(id(expr))
    if term is None:
        term = memo[id(expr)] = _translate(expr, env, ctx, memo)
    return term


def _translate(expr, env: dict, ctx: z3.Context, memo: dict | None):
    """One node of :func:`_to_z3`, its arguments through the memo."""
    if expr is sympy.true or expr == sympy.true:
        return z3.BoolVal(True, ctx)
    if expr is sympy.false or expr == sympy.false:
        return z3.BoolVal(False, ctx)
    if isinstance(expr, sympy.Symbol):
        if expr not in env:
            env[expr] = (z3.Int if expr.is_integer else z3.Real)(expr.name, ctx)
        return env[expr]
    if isinstance(expr, sympy.Integer):
        return z3.IntVal(int(expr), ctx)
    if isinstance(expr, sympy.Rational):
        return z3.RealVal(f"{expr.p}/{expr.q}", ctx)
    if isinstance(expr, sympy.Piecewise):
        out = None
        for value, cond in reversed(expr.args):
            v, c = _to_z3(value, env, ctx, memo), _to_z3(cond, env, ctx, memo)
            out = v if out is None else z3.If(c, v, out)
        return out
    args = [_to_z3(a, env, ctx, memo) for a in expr.args]
    if isinstance(expr, sympy.Add):
        return z3.Sum(args)
    if isinstance(expr, sympy.Mul):
        out = args[0]
        for a in args[1:]:
            out = out * a
        return out
    if isinstance(expr, sympy.Pow) and expr.exp.is_Integer:
        e = int(expr.exp)
        if e == -1:
            return 1 / z3.ToReal(args[0]) if z3.is_int(args[0]) else 1 / args[0]
        if e > 0:
            out = args[0]
            for _ in range(e - 1):
                out = out * args[0]
            return out
    if isinstance(expr, sympy.floor):
        return z3.ToInt(args[0]) if not z3.is_int(args[0]) else args[0]
    if isinstance(expr, sympy.Mod):
        return args[0] % args[1]
    if isinstance(expr, sympy.Abs):
        return z3.If(args[0] >= 0, args[0], -args[0])
    if isinstance(expr, (sympy.Max, sympy.Min)):
        out = args[0]
        for a in args[1:]:
            out = z3.If(a > out, a, out) if isinstance(expr, sympy.Max) else \
                z3.If(a < out, a, out)
        return out
    relations = {sympy.Eq: lambda a, b: a == b, sympy.Ne: lambda a, b: a != b,
                 sympy.Lt: lambda a, b: a < b, sympy.Le: lambda a, b: a <= b,
                 sympy.Gt: lambda a, b: a > b, sympy.Ge: lambda a, b: a >= b}
    for kind, make in relations.items():
        if isinstance(expr, kind):
            return make(*args)
    if isinstance(expr, sympy.And):
        return z3.And(args)
    if isinstance(expr, sympy.Or):
        return z3.Or(args)
    if isinstance(expr, sympy.Not):
        return z3.Not(args[0])
    raise ModelError(f"condition {expr} uses {type(expr).__name__}, which the class "
                     f"analysis cannot hand to Z3")


def _signs(env: dict) -> list:
    """What SymPy knows of each symbol's sign, for Z3. SymPy folds a range's lower bound
    into its symbol's assumptions (``n >= 1`` is True for a positive count), so without
    this a stream's count could be 0 or negative to Z3, and a class's sample an empty
    stream (issue 27: every stage's effective delay 0 there, and the first stage named
    the bottleneck)."""
    out = []
    for sym, var in env.items():
        if sym.is_positive:
            out.append(var > 0)
        elif sym.is_nonnegative:
            out.append(var >= 0)
    return out


_ASKING: set = set()
"""The contexts of the questions Z3 is answering now (one, but for threads), for
:func:`interrupt_questions`."""
_ASKING_LOCK = threading.Lock()


def interrupt_questions() -> None:
    """Stop every question Z3 is answering now (its check returns ``unknown``): what
    Ctrl-C and a run's time budget do (:mod:`accelperf.cli.stopping`). Each question has
    a context of its own, which ``z3.main_ctx().interrupt()`` does not reach."""
    with _ASKING_LOCK:
        for ctx in _ASKING:
            ctx.interrupt()


def _check(s) -> z3.CheckSatResult:
    """``s.check()``, interruptible by :func:`interrupt_questions`."""
    with _ASKING_LOCK:
        _ASKING.add(s.ctx)
    try:
        return s.check()
    finally:
        with _ASKING_LOCK:
            _ASKING.discard(s.ctx)


class Solver:
    """Satisfiability of path conditions on top of the space's own constraints.

    Every question is asked in a Z3 context of its own, so its answer is a function of
    the question alone (and the emitted module one of the model and space). In the one
    context Z3 shares by default its search on a hard question depended on everything
    the process had asked before: whether the credit link's credit-round term is ever
    negative ran out of its 10 s in a fresh process (unknown: its max(0, ...) kept) and
    was proved never after the AES-GCM stream or the pipeline over a link had been
    extracted (dropped), and the module's text changed with it.

    Z3's search also depends on which subterms of an assertion the caller still holds
    when it is added: its preprocessing treats a term with more than one reference as
    shared. With only the top terms held, that same question ran out of its 10 s in a
    context of its own; with every compound subterm held (:func:`_to_z3`'s memo, for a
    question's whole translation) Z3 proves it in 0.3 s, the max(0, ...) is dropped, and
    the credit link's extraction takes 8 s instead of 13. Which terms are held is fixed
    by the question, so the answer still is a function of the question alone."""

    def __init__(self, base: list, timeout_ms: int = 10_000):
        self.base = list(base)
        ctx, env, memo = z3.Context(), {}, {}
        for c in self.base:                 # what Z3 cannot take is refused now
            _to_z3(c, env, ctx, memo)
        self.timeout_ms = timeout_ms
        self.queries = 0
        # conditions -> Z3's answer: a function of the question, so asked once (a
        # class's conditions are asked again term by term; 29% of Fig. 2's questions)
        self._answers: dict = {}

    def _solver(self, conditions) -> tuple:
        """(a Z3 solver holding the space and ``conditions`` in a fresh context, its
        variables {symbol: Z3 variable})."""
        ctx, env = z3.Context(), {}
        s = z3.Solver(ctx=ctx)
        s.set("timeout", self.timeout_ms)
        memo: dict = {}
        s.add(*[_to_z3(c, env, ctx, memo) for c in [*self.base, *conditions]])
        s.add(*_signs(env))
        return s, env

    def _answer(self, conditions) -> z3.CheckSatResult:
        self.queries += 1
        key = tuple(conditions)
        if key not in self._answers:
            s = self._solver(conditions)[0]
            answer = _check(s)
            if answer != z3.unknown or s.reason_unknown() != "interrupted":
                self._answers[key] = answer
            return answer
        return self._answers[key]

    def possible(self, conditions) -> bool:
        """Whether some input of the space meets every condition (unknown counts as
        possible, so no input is silently dropped)."""
        return self._answer(conditions) != z3.unsat

    def decided_possible(self, conditions) -> bool:
        """Whether Z3 finds an input of the space that meets every condition (unknown
        counts as impossible: for a point to be relied on, not a class to be kept)."""
        return self._answer(conditions) == z3.sat

    def constant(self, expr, ranges: dict):
        """The one value ``expr`` takes when each of its symbols may be anything in its
        range ({symbol: (lo, hi)}, the space's constraints left out), or None when it can
        take two (or Z3 cannot tell)."""
        ctx, env = z3.Context(), {}
        s = z3.Solver(ctx=ctx)
        s.set("timeout", self.timeout_ms)
        value = _to_z3(sympy.sympify(expr), env, ctx)
        for sym, var in env.items():
            if sym not in ranges:
                return None
            lo, hi = ranges[sym]
            s.add(var >= lo, var <= hi)
        if _check(s) != z3.sat:
            return None
        one = s.model().eval(value, model_completion=True)
        s.add(value != one)
        if _check(s) != z3.unsat:
            return None
        if z3.is_int_value(one):
            return sympy.Integer(one.as_long())
        if z3.is_true(one) or z3.is_false(one):
            return sympy.true if z3.is_true(one) else sympy.false
        return sympy.Rational(one.numerator_as_long(), one.denominator_as_long())

    def _lowest(self, s, var, *first):
        """The value of ``var`` that keeps the assertions of ``s`` satisfiable and
        minimises the terms ``first`` in turn, then ``var`` itself (Z3's objectives are
        lexicographic), or None when Z3 finds none in time."""
        o = z3.Optimize(ctx=s.ctx)
        o.set("timeout", self.timeout_ms)
        o.add(*s.assertions())
        for term in (*first, var):
            o.minimize(term)
        if _check(o) != z3.sat:
            return None
        return o.model().eval(var, model_completion=True)

    def sample(self, conditions, ranges: dict, rng: random.Random | None = None,
               prefer_low=()) -> dict | None:
        """Values of the symbols of ``ranges`` ({symbol: (lo, hi)}) meeting the
        conditions, or None. Symbols in ``prefer_low`` take their lowest possible value;
        with ``rng`` each other symbol is pinned in turn to a random value of its range
        when that stays satisfiable (a random point, not always the solver's first)."""
        s, env = self._solver(conditions)
        if _check(s) == z3.unsat:
            return None
        order = [sym for sym in ranges if sym not in prefer_low]
        if rng is not None:
            rng.shuffle(order)
        for sym in prefer_low:
            var = _to_z3(sym, env, s.ctx)
            value = self._lowest(s, var)
            if value is not None:
                s.add(var == value)
        for sym in order:
            var = _to_z3(sym, env, s.ctx)
            if rng is not None:
                lo, hi = ranges[sym]
                target = rng.randint(lo, hi)
                s.push()
                s.add(var == target)
                if _check(s) == z3.sat:
                    continue
                s.pop()
                # The value nearest the target, the lower of two: Z3's own model is
                # whichever its search met first (a stream's fitted stage times, and so
                # its emitted module, changed with what the process had asked before).
                value = self._lowest(s, var, z3.If(var >= target, var - target,
                                                   target - var))
                if value is None:
                    return None
                s.add(var == value)
                continue
            if _check(s) != z3.sat:
                return None
            s.add(var == s.model().eval(var, model_completion=True))
        if _check(s) != z3.sat:
            return None
        m = s.model()
        out = {}
        for sym in ranges:
            v = m.eval(_to_z3(sym, env, s.ctx), model_completion=True)
            out[sym] = int(v.as_long()) if z3.is_int_value(v) else \
                sympy.Rational(v.numerator_as_long(), v.denominator_as_long())
        return out


__all__ = ["Solver", "interrupt_questions"]
