"""Safe arithmetic formulas over NumPy arrays, for user-defined density functions.

A formula is a text of the one formula language (:mod:`accelperf.formula`), parsed into its
tree and checked against this vocabulary: numbers, the variables the caller allows,
+ − × ÷ ** and a few functions. Nothing is evaluated by ``eval``, so a formula cannot reach
Python itself; the tree is evaluated by the language's NumPy backend.

Arithmetic is IEEE double precision throughout, constants included: ``1/0`` is inf and
``9**9**9**9`` overflows to inf instead of raising, and the caller (the density bound)
rejects a non-finite result by name. Length and nesting are capped so that no formula can
exhaust the parser's or the walker's stack.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ModelError
from ..formula import NOT_MINE, NotAFormula, TooDeep, fold, parse, to_javascript

BINARY = ("Add", "Sub", "Mult", "Div", "Pow")
UNARY = ("UAdd", "USub")
FUNCTIONS = ("sqrt", "log", "log2", "log10", "exp", "min", "max", "abs")
VARIADIC = ("min", "max")        # two or more arguments; every other function takes one
CONSTANTS = {"pi": math.pi, "e": math.e}
MAX_LENGTH = 2000                # characters: a density is a line, not a program
MAX_DEPTH = 100                  # nested operations, far below Python's recursion limit
# The Python syntax a node of the language stands for, as a refusal names it.
_SYNTAX = {"property": "Attribute", "index": "Subscript", "compare": "Compare",
           "logic": "BoolOp"}


class Formula:
    """A parsed formula such as ``"sqrt(alpha) / (2*s)**1.5"``.

    >>> float(Formula("alpha / (2*s**2)", variables=("alpha", "s"))(alpha=1024.0, s=4.0))
    32.0
    """

    def __init__(self, text: str, variables: tuple[str, ...]):
        # ^ reads as a power in most notations; Python would take it as bitwise xor.
        self.text = str(text).strip().replace("^", "**")
        self.variables = variables
        if not self.text:
            raise ModelError("formula = '' is invalid: write an expression such as "
                             "'sqrt(alpha)/(2*s)**1.5'")
        if len(self.text) > MAX_LENGTH:
            raise ModelError(f"formula = {self.text[:40]!r}... is invalid: it is "
                             f"{len(self.text)} characters long, at most {MAX_LENGTH} are "
                             f"accepted")
        try:
            tree = parse(self.text, MAX_DEPTH)
        except NotAFormula as exc:
            where = "" if exc.column is None else f"syntax error at column {exc.column}: "
            raise ModelError(f"formula = {self.text!r} is invalid: {where}{exc.reason}") \
                from None
        except TooDeep as exc:
            raise ModelError(f"formula = {self.text[:40]!r}... is invalid: it nests "
                             f"{exc.depth} operations deep, at most {MAX_DEPTH} are "
                             f"accepted") from None
        self._check(tree)
        self._tree = tree

    @property
    def names(self) -> frozenset[str]:
        """The variables the formula uses (of those it was allowed)."""
        found, stack = set(), [self._tree]
        while stack:
            node = stack.pop()
            if node.kind == "name" and node.op in self.variables:
                found.add(node.op)
            stack.extend(node.args)
        return frozenset(found)

    def _fail(self, node, what: str):
        allowed = (f"numbers, the variables {', '.join(self.variables)}, + - * / **, and "
                   f"{', '.join(FUNCTIONS)}")
        raise ModelError(f"formula = {self.text!r} is invalid: {what} at column "
                         f"{node.column}; allowed: {allowed}")

    def _check(self, node) -> None:
        kind, op = node.kind, node.op
        if kind in ("binary", "unary"):
            if op not in (BINARY if kind == "binary" else UNARY):
                self._fail(node, f"operator {op} is not allowed")
        elif kind == "number":
            if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
                self._fail(node, f"constant {node.value!r} is not a number")
            if isinstance(node.value, int) and node.value.bit_length() > 1024:
                self._fail(node, "a constant beyond 1.8e308 (the largest double)")
        elif kind == "name":
            if op not in self.variables and op not in CONSTANTS:
                self._fail(node, f"unknown name {op!r}")
        elif kind == "call":
            if op not in FUNCTIONS:
                self._fail(node, "only the listed functions may be called")
            if node.keywords or not node.args:
                self._fail(node, f"{op}() takes positional arguments")
            if op in VARIADIC and len(node.args) < 2:
                self._fail(node, f"{op}() takes two or more arguments")
            if op not in VARIADIC and len(node.args) != 1:
                self._fail(node, f"{op}() takes one argument, {len(node.args)} given")
        else:
            self._fail(node, f"{_SYNTAX.get(kind, op)} is not allowed")
        for arg in node.args:
            self._check(arg)

    def _leaf(self, env):
        def leaf(node):
            if node.kind == "call":
                return NOT_MINE
            return env[node.op] if node.op in env else CONSTANTS[node.op]
        return leaf

    def __call__(self, **values):
        missing = [v for v in self.variables if v not in values]
        if missing:
            raise ModelError(f"formula {self.text!r} needs values for {', '.join(missing)}")
        try:
            env = {k: np.asarray(v, float) for k, v in values.items()}
        except (TypeError, ValueError):
            raise ModelError(f"formula {self.text!r} is evaluated on numbers: got "
                             f"{values!r}") from None
        with np.errstate(all="ignore"):
            return fold(self._tree, "numpy", self._leaf(env), _checked_already)

    def sympy(self, **symbols):
        """The formula as a SymPy term, ``symbols`` giving each variable's symbol."""
        return fold(self._tree, "sympy", _symbolic(symbols), _checked_already)

    def javascript(self, **symbols) -> str:
        """The formula as JavaScript source (printed from its SymPy term, as every
        formula of the ``accelperf explore`` page is), ``symbols`` as for :meth:`sympy`."""
        return to_javascript(self._tree, _symbolic(symbols), _checked_already)

    def __repr__(self) -> str:
        return f"Formula({self.text!r})"


def _symbolic(symbols: dict):
    """The leaf function of a SymPy or JavaScript rendering: the variables' symbols and
    the constants π and e."""
    import sympy
    scope = {"pi": sympy.pi, "e": sympy.E, **symbols}
    return lambda node: NOT_MINE if node.kind == "call" else scope[node.op]


def _checked_already(node, part):
    raise AssertionError(f"{node!r}: the formula was checked when it was built")
