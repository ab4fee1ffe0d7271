"""Traced LPN functions: one tree, three evaluations that must agree."""

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from accelperf.lpn import TraceError, both, either, maximum, minimum, negate, where
from accelperf.lpn.expr import evaluate_on as evaluate, trace
from accelperf.lpn.expr_backends import compile_python, to_sympy
from accelperf.lpn.net import TokenType

T = TokenType("Blk", ("x", "y"))
INPUTS = [("a", T), ("b", T)]
SYMS = {(i, n): sp.Symbol(f"t{i}_{n}", integer=True) for i in range(2) for n in ("x", "y")}


def agree(func, tokens):
    """Reference tree walk, generated Python and SymPy give the same integer."""
    try:
        e = trace(func, INPUTS, "test")
    except TraceError:                      # a condition, not a number
        e = trace(func, INPUTS, "test", want="bool")
    ref = evaluate(e, tokens)
    fast = compile_python(e, 2)(*tokens)
    sym = to_sympy(e, lambda i, n: SYMS[(i, n)])
    subs = {SYMS[(i, n)]: tokens[i][T.properties.index(n)] for i in range(2) for n in ("x", "y")}
    value = sym.subs(subs)
    value = bool(value) if e.kind == "bool" else int(value)
    assert ref == fast == value
    return ref


FUNCTIONS = [
    lambda a, b: a.x + b.y * 3 - 7,
    lambda a, b: max(a.x, b.y) - min(a.y, 4, b.x) + abs(a.x - b.x),
    lambda a, b: max([a.x, b.x]) + min(b.y, 7),
    lambda a, b: where(b.y == 0, a.x, (a.x * b.y) / b.y),
    lambda a, b: where(b.y != 0, a.x // b.y + a.x % b.y, -1),
    lambda a, b: abs(a.y) // 3 * (b.x % 5 + 1),
    lambda a, b: (a.x * a.y) // (abs_(b.y) + 1),
    lambda a, b: a.x % (b.x * b.x + 1),
    lambda a, b: where(a.x > b.x, a.x - b.x, b.x - a.x),
    lambda a, b: maximum(a.x, b.y, 5) + minimum(a.y, 3),
    lambda a, b: where(both(a.x >= 0, either(b.y < 2, negate(a.y == b.y))), 1, 0),
    lambda a, b: -a.x + a.y ** 2,
    lambda a, b: (a.x != b.x) & (a.y <= b.y) | ~(a.x > 3),
    lambda a, b: 10 - a.x * 2 + 3 * b.x - (b.y // 4),
]


def abs_(v):
    return maximum(v, -v)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(range(len(FUNCTIONS))),
       st.tuples(st.integers(-10**6, 10**6), st.integers(-10**6, 10**6)),
       st.tuples(st.integers(-10**6, 10**6), st.integers(-10**6, 10**6)))
def test_integer_python_and_sympy_agree(i, a, b):
    agree(FUNCTIONS[i], [a, b])


@pytest.mark.parametrize("func, words", [
    (lambda a, b: a.x if a.y > 0 else 1, "plain bool"),
    (lambda a, b: a.x * 1.5, "is a float"),
    (lambda a, b: a.z, "no 'z'"),
    (lambda a, b: (a.x > 1) + 1, "not a number"),
    (lambda a, b: 0 < a.x < 5, "plain bool"),
    (lambda a, b: a.x and b.x, "plain bool"),
    (lambda a, b: sum(range(a.x)), "index or count"),
    (lambda a, b: __import__("math").sqrt(a.x), "float function"),
    (lambda c: c.x, "takes 1 argument"),
    (lambda a, b: a[b.x].y, "plain integer"),
    (lambda a, b: a[-1].y, "index >= 0"),
])
def test_untraceable_functions_are_rejected_with_their_line(func, words):
    with pytest.raises(TraceError) as err:
        trace(func, INPUTS, "delay of transition 'x'")
    message = str(err.value)
    assert words in message and "delay of transition 'x'" in message
    if "argument" not in words:
        assert "test_lpn_expr.py" in message     # the line that caused it


def test_error_names_the_exact_line_in_a_def():
    def delay(a, b):
        base = a.x * 2
        if base > 10:                           # the offending line
            return base
        return 3
    with pytest.raises(TraceError, match=r"if base > 10:"):
        trace(delay, INPUTS, "delay")


def test_results_must_have_the_right_kind():
    with pytest.raises(TraceError, match="must give a condition"):
        trace(lambda a, b: a.x + 1, INPUTS, "guard", want="bool")
    with pytest.raises(TraceError, match="must give a number"):
        trace(lambda a, b: a.x > 1, INPUTS, "delay")


def test_helpers_on_plain_values():
    assert where(True, 1, 2) == 1 and minimum(3, 1, 2) == 1 and maximum(3, 9) == 9


def test_sympy_form_is_readable():
    e = trace(lambda a, b: maximum(a.x * 3 + 6, 509) // 4, INPUTS, "delay")
    s = to_sympy(e, lambda i, n: sp.Symbol(n))
    assert str(s) == "floor(Max(509, 3*x + 6)/4)"


# ---------------------------------------------------------------- the operator table
def test_every_operator_has_every_backend_and_one_definition():
    from accelperf.lpn.operators import OPERATORS, Operator
    columns = [f for f in Operator.__dataclass_fields__ if f not in ("name", "arity",
                                                                     "operands", "result", "lazy")]
    assert set(columns) == {"evaluate", "python", "sympy", "text", "c", "z3", "javascript"}
    for name, op in OPERATORS.items():
        assert op.name == name and all(callable(getattr(op, c)) for c in columns)


@pytest.mark.parametrize("func, tokens, message", [
    (lambda a, b: a.x / b.x, [(7, 0), (2, 0)], "7 / 2 is not a whole number"),
    (lambda a, b: a.x / b.x, [(7, 0), (0, 0)], "division by zero"),
    (lambda a, b: a.x // b.x, [(7, 0), (0, 0)], "division by zero"),
    (lambda a, b: a.x % b.x, [(7, 0), (0, 0)], "modulo by zero"),
])
def test_division_errors_are_named_in_every_backend(func, tokens, message):
    from accelperf.lpn.operators import EvaluationError
    e = trace(func, INPUTS, "delay")
    with pytest.raises(EvaluationError, match=message):
        evaluate(e, tokens)
    with pytest.raises(EvaluationError, match=message):
        compile_python(e, 2)(*tokens)


def test_where_evaluates_only_the_branch_it_takes():
    e = trace(lambda a, b: where(b.x == 0, 0, a.x // b.x), INPUTS, "delay")
    assert evaluate(e, [(5, 0), (0, 0)]) == 0
    assert compile_python(e, 2)((5, 0), (0, 0)) == 0


def test_exact_division_in_sympy_is_exact():
    e = trace(lambda a, b: (a.x + 2) * b.y / 4, INPUTS, "delay")
    assert str(to_sympy(e, lambda i, n: sp.Symbol(f"{'ab'[i]}_{n}"))) == "b_y*(a_x + 2)/4"


def test_binding_by_name_and_later_tokens_and_counts():
    from accelperf.lpn.expr import count, evaluate, referenced_args, tokens_needed, to_text
    places = [("blocks", T), ("link.rx", T)]
    e = trace(lambda link_rx: link_rx[2].y + count("blocks"), places, "delay")
    assert referenced_args(e) == {1} and tokens_needed([e]) == {1: 3}
    assert to_text(e) == "(t1[2].y + count(blocks))"
    value = evaluate(e, lambda arg, tok: [[(0, 0)], [(0, 1), (0, 2), (0, 30)]][arg][tok],
                     lambda place: {"blocks": 4}[place])
    assert value == 34
    with pytest.raises(TraceError, match="name each parameter after a place"):
        trace(lambda rx: rx.y, places, "delay")
