"""Translations of a traced expression tree (:mod:`accelperf.lpn.expr`) into other languages.

Each function here renders a tree through one backend column of the operator table
(:data:`accelperf.lpn.operators.OPERATORS`) with :func:`accelperf.lpn.expr.fold`, and says
only how that language reads the leaves (constants, token properties, token counts):
Python text and compiled Python functions (the fast engine), SymPy (performance interfaces),
Z3 terms with the conditions under which a term is defined (verification), and JavaScript
(pages that evaluate a model in the browser). The reference integer evaluation and readable
text stay with the tree, in :mod:`accelperf.lpn.expr`.
"""

from __future__ import annotations

from .expr import Expr, fold, parameter_name, walk
from .operators import PYTHON_HELPERS, z3_mod


def to_python(expr: Expr, token=None, count_of=None) -> str:
    """Python source for the expression. By default ``a{arg}[{index}]`` reads the head
    token's tuple ``a{arg}``; ``token(arg, tok, index)`` and ``count_of(name)`` may render
    the leaves differently. The source may call :data:`PYTHON_HELPERS`."""
    def leaf(node):
        if node.op == "const":
            return repr(node.args[0])
        if node.op == "prop":
            arg, _, index, tok = node.args
            if token is not None:
                return token(arg, tok, index)
            if tok:
                raise ValueError("to_python without token= renders head tokens only")
            return f"a{arg}[{index}]"
        if count_of is None:
            raise ValueError("to_python: the expression counts tokens; give count_of=")
        return count_of(node.args[0])
    return fold(expr, leaf, "python")


def compile_python(expr: Expr, nargs: int):
    """A Python function ``f(a0, ..., a{n-1})`` of the head tokens computing the expression.

    The source is generated from our own tree (never from user text), so compiling it is
    as safe as the tree itself."""
    params = ", ".join(f"a{i}" for i in range(nargs))
    source = f"lambda {params}: {to_python(expr)}"
    return eval(compile(source, "<lpn-expression>", "eval"),
                {"__builtins__": {}, **PYTHON_HELPERS})


def to_sympy(expr: Expr, symbols, counts=None):
    """The expression in SymPy; ``symbols(arg, name)`` gives the symbol of a head-token
    property (``symbols(arg, name, tok)`` is called for later tokens), ``counts(place)`` the
    symbol of a place's token count."""
    import sympy

    def leaf(node):
        if node.op == "const":
            v = node.args[0]
            return sympy.true if v is True else sympy.false if v is False else sympy.Integer(v)
        if node.op == "prop":
            arg, name, _, tok = node.args
            return symbols(arg, name) if tok == 0 else symbols(arg, name, tok)
        if counts is None:
            return sympy.Symbol(f"count_{parameter_name(node.args[0])}", integer=True,
                                nonnegative=True)
        return counts(node.args[0])
    return fold(expr, leaf, "sympy")



def to_z3(expr: Expr, token, count_of):
    """The expression as a Z3 term: ``token(arg, tok)`` gives the Z3 terms (or ints) of a
    token's properties, ``count_of(place name)`` a place's token count. Division by zero
    and inexact ``/`` are not modelled: see :func:`defined_when`."""
    import z3

    def leaf(node):
        if node.op == "const":
            v = node.args[0]
            return z3.BoolVal(v) if isinstance(v, bool) else z3.IntVal(v)
        if node.op == "prop":
            arg, _, index, tok = node.args
            v = token(arg, tok)[index]
            return z3.IntVal(v) if isinstance(v, int) else v
        v = count_of(node.args[0])
        return z3.IntVal(v) if isinstance(v, int) else v
    return fold(expr, leaf, "z3")


def defined_when(expr: Expr, render) -> list:
    """The conditions under which ``expr`` has an integer value (R2: a run stops on
    division by zero or an inexact ``/``), each operand rendered by ``render(node)``."""
    out = []
    for node in walk(expr):
        if node.op in ("div", "floordiv", "mod"):
            a, b = render(node.args[0]), render(node.args[1])
            out.append(b != 0)
            if node.op == "div":
                out.append(z3_mod(a, b) == 0)
    return out


def to_javascript(expr: Expr, token, count_of=None) -> str:
    """JavaScript source for the expression (the ``javascript`` column), for pages that
    evaluate a model in the browser. ``token(arg, tok, index)`` renders a property read,
    ``count_of(place name)`` a token count; the source may call :data:`JAVASCRIPT_HELPERS`."""
    def leaf(node):
        if node.op == "const":
            v = node.args[0]
            return ("true" if v else "false") if isinstance(v, bool) else str(v)
        if node.op == "prop":
            arg, _, index, tok = node.args
            return token(arg, tok, index)
        if count_of is None:
            raise ValueError("to_javascript: the expression counts tokens; give count_of=")
        return count_of(node.args[0])
    return fold(expr, leaf, "javascript")


__all__ = ["to_python", "compile_python", "to_sympy", "to_z3", "defined_when",
           "to_javascript"]
