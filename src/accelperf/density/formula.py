"""Safe arithmetic formulas over NumPy arrays, for user-defined density functions.

A formula is parsed with Python's ``ast`` and walked node by node: only numbers, the
variables the caller allows, + − × ÷ ** and a few functions are accepted. Nothing is
evaluated by ``eval``, so a formula cannot reach Python itself.

Arithmetic is IEEE double precision throughout, constants included: ``1/0`` is inf and
``9**9**9**9`` overflows to inf instead of raising, and the caller (the density bound)
rejects a non-finite result by name. Length and nesting are capped so that no formula can
exhaust the parser's or the walker's stack.
"""

from __future__ import annotations

import ast
import math
import operator

import numpy as np

from ..errors import ModelError

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.Pow: operator.pow}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}
FUNCTIONS = {"sqrt": np.sqrt, "log": np.log, "log2": np.log2, "log10": np.log10,
             "exp": np.exp, "min": np.minimum, "max": np.maximum, "abs": np.abs}
VARIADIC = ("min", "max")        # two or more arguments; every other function takes one
CONSTANTS = {"pi": math.pi, "e": math.e}
MAX_LENGTH = 2000                # characters: a density is a line, not a program
MAX_DEPTH = 100                  # nested operations, far below Python's recursion limit


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
            tree = ast.parse(self.text, mode="eval")
        except SyntaxError as exc:
            raise ModelError(f"formula = {self.text!r} is invalid: syntax error at column "
                             f"{(exc.offset or 1)}: {exc.msg}") from None
        except (ValueError, RecursionError, MemoryError) as exc:    # NUL bytes, deep nests
            raise ModelError(f"formula = {self.text!r} is invalid: "
                             f"{str(exc) or type(exc).__name__}") from None
        depth = _depth(tree.body)
        if depth > MAX_DEPTH:
            raise ModelError(f"formula = {self.text[:40]!r}... is invalid: it nests {depth} "
                             f"operations deep, at most {MAX_DEPTH} are accepted")
        self._check(tree.body)
        self._tree = tree.body

    def _fail(self, node, what: str):
        col = getattr(node, "col_offset", 0) + 1
        allowed = (f"numbers, the variables {', '.join(self.variables)}, + - * / **, and "
                   f"{', '.join(FUNCTIONS)}")
        raise ModelError(f"formula = {self.text!r} is invalid: {what} at column {col}; "
                         f"allowed: {allowed}")

    def _check(self, node) -> None:
        if isinstance(node, ast.BinOp):
            if type(node.op) not in _BINARY:
                self._fail(node, f"operator {type(node.op).__name__} is not allowed")
            self._check(node.left)
            self._check(node.right)
        elif isinstance(node, ast.UnaryOp):
            if type(node.op) not in _UNARY:
                self._fail(node, f"operator {type(node.op).__name__} is not allowed")
            self._check(node.operand)
        elif isinstance(node, ast.Constant):
            if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
                self._fail(node, f"constant {node.value!r} is not a number")
            if isinstance(node.value, int) and node.value.bit_length() > 1024:
                self._fail(node, "a constant beyond 1.8e308 (the largest double)")
        elif isinstance(node, ast.Name):
            if node.id not in self.variables and node.id not in CONSTANTS:
                self._fail(node, f"unknown name {node.id!r}")
        elif isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
                self._fail(node, "only the listed functions may be called")
            if node.keywords or not node.args:
                self._fail(node, f"{node.func.id}() takes positional arguments")
            if node.func.id in VARIADIC and len(node.args) < 2:
                self._fail(node, f"{node.func.id}() takes two or more arguments")
            if node.func.id not in VARIADIC and len(node.args) != 1:
                self._fail(node, f"{node.func.id}() takes one argument, "
                                 f"{len(node.args)} given")
            for arg in node.args:
                self._check(arg)
        else:
            self._fail(node, f"{type(node).__name__} is not allowed")

    def _eval(self, node, env):
        if isinstance(node, ast.BinOp):
            return _BINARY[type(node.op)](self._eval(node.left, env), self._eval(node.right, env))
        if isinstance(node, ast.UnaryOp):
            return _UNARY[type(node.op)](self._eval(node.operand, env))
        if isinstance(node, ast.Constant):
            return np.float64(node.value)
        if isinstance(node, ast.Name):
            return env[node.id] if node.id in env else CONSTANTS[node.id]
        args = [self._eval(a, env) for a in node.args]
        func = FUNCTIONS[node.func.id]
        if node.func.id in ("min", "max"):
            out = args[0]
            for a in args[1:]:
                out = func(out, a)
            return out
        return func(*args)

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
            return self._eval(self._tree, env)

    def __repr__(self) -> str:
        return f"Formula({self.text!r})"


def _depth(root) -> int:
    """How deeply the syntax tree nests, counted without recursion."""
    deepest, stack = 0, [(root, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest
