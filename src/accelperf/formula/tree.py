"""The formula language's text and tree: every formula accelperf reads is parsed here, once.

A formula is a line of Python expression syntax, read with :mod:`ast` and never evaluated:
numbers, names, ``P.p`` (a property), ``P[i]`` (an index), calls ``f(x, ...)``
(``math.floor(x)`` is Python's spelling of ``floor(x)``), the arithmetic operators
``+ - * / // % **`` (``^`` is ``**``, as most notations write a power), unary ``+ - not``,
comparisons (chains allowed) and ``and``/``or``. :func:`parse`
turns the text into a tree of :class:`Node`; which names, functions and operators a
formula may use is the business of its *vocabulary* (a density formula knows ``alpha`` and
``sqrt``, a space constraint knows its places and ``sum(P.p)``), and what a tree means is
the business of a backend (:mod:`accelperf.formula.backends`: NumPy evaluation, SymPy,
Z3, JavaScript). Syntax the language has no meaning for (a lambda, a list, ``a if b else
c``, ``<<``) still becomes a node, of kind ``other`` or with its Python operator name, so
that each use can refuse it in its own words.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..errors import ModelError

KINDS = ("number", "name", "property", "index", "call", "binary", "unary", "compare",
         "logic", "other")
"""The kinds of :class:`Node`."""


@dataclass(frozen=True, eq=False)
class Node:
    """One node of a formula's tree.

    ``kind`` is one of :data:`KINDS`; ``op`` the operator's Python name (``Add``,
    ``USub``, ``And``), the function's, name's or property's name, or for ``other`` the
    Python syntax it stands for (``Lambda``); ``args`` the children (a property's token, an
    index's place and position, a call's arguments, the operands); ``value`` a number's
    value or a comparison's operator names; ``column`` (from 1) and ``source`` say where it
    is in the text, for messages; ``keywords``: a call given ``name=value`` arguments."""

    kind: str
    op: str = ""
    args: tuple = ()
    value: object = None
    column: int = 1
    source: str = ""
    keywords: bool = False

    def __repr__(self) -> str:
        return f"Node({self.kind} {self.op or self.value!r}: {self.source!r})"


class NotAFormula(ModelError):
    """Text that is not a formula: ``reason`` says why (Python's words), ``column`` where
    (from 1; None when the parser could not say)."""

    def __init__(self, reason: str, column: int | None):
        super().__init__(f"not a formula ({reason})")
        self.reason, self.column = reason, column


class TooDeep(ModelError):
    """A formula nested deeper than its use accepts (``depth`` levels of syntax)."""

    def __init__(self, depth: int):
        super().__init__(f"it nests {depth} operations deep")
        self.depth = depth


def parse(text: str, max_depth: int | None = None) -> Node:
    """The tree of ``text`` (``^`` read as ``**``, so node sources show ``**``). Raises
    :class:`NotAFormula` for text Python cannot read as an expression and
    :class:`TooDeep` for one nesting more than ``max_depth`` levels of syntax (counted as
    :mod:`ast` nests them), so no formula exhausts a walker's stack."""
    text = text.replace("^", "**")      # a power, as tightly bound as Python's **
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise NotAFormula(exc.msg, exc.offset or 1) from None
    except (ValueError, RecursionError, MemoryError) as exc:    # NUL bytes, deep nests
        raise NotAFormula(str(exc) or type(exc).__name__, None) from None
    if max_depth is not None:
        depth = syntax_depth(tree.body)
        if depth > max_depth:
            raise TooDeep(depth)
    try:
        return _node(tree.body, text)
    except RecursionError:
        raise NotAFormula("nested too deeply", None) from None


def syntax_depth(root) -> int:
    """How deeply a Python syntax tree nests, counted without recursion."""
    deepest, stack = 0, [(root, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


def _node(node, text: str) -> Node:
    def make(kind, op="", args=(), value=None, keywords=False):
        return Node(kind, op, tuple(args), value, getattr(node, "col_offset", 0) + 1,
                    ast.get_source_segment(text, node) or text, keywords)

    def sub(child):
        return _node(child, text)

    if isinstance(node, ast.Constant):
        return make("number", value=node.value)
    if isinstance(node, ast.Name):
        return make("name", node.id)
    if isinstance(node, ast.Attribute):
        return make("property", node.attr, (sub(node.value),))
    if isinstance(node, ast.Subscript):
        return make("index", args=(sub(node.value), sub(node.slice)))
    if isinstance(node, ast.Call):
        return make("call", _dotted(node.func), map(sub, node.args),
                    keywords=bool(node.keywords))
    if isinstance(node, ast.BinOp):
        return make("binary", type(node.op).__name__, (sub(node.left), sub(node.right)))
    if isinstance(node, ast.UnaryOp):
        return make("unary", type(node.op).__name__, (sub(node.operand),))
    if isinstance(node, ast.Compare):
        return make("compare", args=map(sub, [node.left, *node.comparators]),
                    value=tuple(type(op).__name__ for op in node.ops))
    if isinstance(node, ast.BoolOp):
        return make("logic", type(node.op).__name__, map(sub, node.values))
    return make("other", type(node).__name__)


def _dotted(node) -> str:
    """A called function's name: ``f`` or ``math.floor``; "" for any other callee."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return inner and f"{inner}.{node.attr}"
    return ""


def walk(root: Node):
    """Every node of the tree, parents first."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.args))


__all__ = ["Node", "KINDS", "NotAFormula", "TooDeep", "parse", "syntax_depth", "walk"]
