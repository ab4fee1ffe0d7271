"""One formula language (issue 37 item 2): the same text means the same through every backend.

A space constraint is parsed once (accelperf.formula) and given a meaning by its NumPy, SymPy
and Z3 columns; each is judged here against the same condition written by hand in Python, on
random points of the space. A density formula's JavaScript (printed from its SymPy term) is
run in Node against its NumPy evaluation. The explicit count-range form of a space file
(count_range) and the stall budget of buffer sizing are read through the same parser.
"""
from __future__ import annotations

import json
import random
import shutil
import subprocess
import warnings
from fractions import Fraction

import numpy as np
import pytest
import sympy

from accelperf.density.formula import Formula
from accelperf.errors import ModelError
from accelperf.formula import NOT_MINE, NotAFormula, fold, parse
from accelperf.lpn.analysis.formula import Tokens, place_term, translate
from accelperf.lpn.analysis.sizing import stall_budget
from accelperf.lpn.analysis.space import constraint_exprs, space_from_dict, symbol_ranges, \
    token_symbol
from accelperf.lpn.analysis.space_counts import SpaceFormatWarning
from accelperf.lpn.library import build

# (constraint text, the same condition by hand over the blocks' symbol counts)
CONSTRAINTS = [
    ("sum(blocks.symbols) <= 100", lambda s: sum(s) <= 100),
    ("blocks[0].symbols * 2 - blocks[2].symbols > 7", lambda s: s[0] * 2 - s[2] > 7),
    ("count(blocks) * 20 < sum(blocks.symbols) - count(blocks) % 2",
     lambda s: len(s) * 20 < sum(s) - len(s) % 2),
    ("mean(blocks.symbols) >= 20", lambda s: sum(s) / len(s) >= 20),
    ("(blocks[1].symbols + 3) // 4 != blocks[0].symbols % 5",
     lambda s: (s[1] + 3) // 4 != s[0] % 5),
    ("3/4*sum(blocks.symbols) < 50", lambda s: Fraction(3, 4) * sum(s) < 50),
    ("-blocks[2].symbols + 40 // blocks[1].symbols >= -30",
     lambda s: -s[2] + 40 // s[1] >= -30),
]


@pytest.fixture(scope="module")
def space():
    model = build("jpeg-decoder")
    return model, space_from_dict(model, {"places": {"blocks": {
        "count": 3, "properties": {"symbols": [1, 63]}}}})


def _numpy(text: str, symbols: list[int]) -> bool:
    """The constraint by the NumPy column, the space's terms read from ``symbols``."""
    def leaf(node):
        term = place_term(node, ["blocks"])
        if term is None:
            return NOT_MINE
        values = np.asarray(symbols, float)
        return {"count": lambda: np.float64(len(values)),
                "sum": values.sum, "mean": values.mean,
                "token": lambda: values[term.index]}[term.kind]()

    def refuse(node, part):
        raise AssertionError(f"{node!r}: {part}")
    return bool(fold(parse(text), "numpy", leaf, refuse))


def _sympy(space, text: str, symbols: list[int]) -> bool:
    relation = constraint_exprs(space, text)
    return bool(relation.subs({token_symbol("blocks", i, "symbols"): v
                               for i, v in enumerate(symbols)}))


def _z3(text: str, symbols: list[int]) -> bool:
    import z3
    tokens = {"blocks": Tokens("blocks", [{"symbols": z3.IntVal(v)} for v in symbols])}
    return z3.is_true(z3.simplify(translate(text, tokens)))


@pytest.mark.parametrize("text, by_hand", CONSTRAINTS, ids=[t for t, _ in CONSTRAINTS])
def test_a_constraint_means_the_same_in_python_numpy_sympy_and_z3(space, text, by_hand):
    _, sp = space
    rng = random.Random(37)
    points = [[rng.randint(1, 63) for _ in range(3)] for _ in range(25)]
    points += [[1, 1, 1], [63, 63, 63], [20, 20, 20], [33, 34, 33]]    # edges and ties
    answers = {(by_hand(p), _numpy(text, p), _sympy(sp, text, p), _z3(text, p))
               for p in points}
    assert all(len(set(a)) == 1 for a in answers), answers
    assert {a[0] for a in answers} == {True, False}       # the points tell the texts apart


CONDITIONS = [         # and/or/not and chains: the proofs' conditions (SymPy's one comparison
    ("1 <= blocks[0].symbols < blocks[1].symbols <= 40", lambda s: 1 <= s[0] < s[1] <= 40),
    ("not sum(blocks.symbols) > 90 or blocks[2].symbols == 7 and count(blocks) != 2",
     lambda s: not sum(s) > 90 or s[2] == 7 and len(s) != 2),
]


@pytest.mark.parametrize("text, by_hand", CONDITIONS, ids=[t for t, _ in CONDITIONS])
def test_a_condition_means_the_same_in_python_numpy_and_z3(text, by_hand):
    rng = random.Random(7)
    points = [[rng.randint(1, 63) for _ in range(3)] for _ in range(40)] + [[1, 2, 7]]
    answers = {(by_hand(p), _numpy(text, p), _z3(text, p)) for p in points}
    assert all(len(set(a)) == 1 for a in answers), answers
    assert {a[0] for a in answers} == {True, False}


def test_the_interface_and_the_proof_refuse_the_same_text(space):
    """A property the tokens do not have, and a name that is no term of the space, are
    refused by both paths (SymPy for interfaces, Z3 for proofs), naming the text."""
    model, sp = space
    for text, words in (("sum(blocks.zz) <= 3", "properties"),
                        ("nothing(blocks) <= 3", "nothing")):
        with pytest.raises(ModelError, match="constraint") as sympy_err:
            constraint_exprs(sp, text)
        with pytest.raises(ModelError, match=words) as z3_err:
            translate(text, sp.variables(model))
        assert text in str(sympy_err.value) and text in str(z3_err.value)


def test_one_parser_gives_one_tree_and_refuses_text_that_is_no_formula():
    tree = parse("count(P) % 6 == 0 and P[1].p <= 3 ^ 2")
    assert tree.kind == "logic" and tree.op == "And"
    assert [n.kind for n in tree.args] == ["compare", "compare"]
    assert tree.args[1].args[1].op == "Pow"           # ^ is a power everywhere...
    assert parse("a ^ 2 - 1").op == "Sub"             # ...binding as tightly as **
    assert parse("math.floor(x)").op == "math.floor"
    with pytest.raises(NotAFormula) as err:
        parse("sum(P.p) <=")
    assert err.value.column is not None


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js (node) is not installed")
def test_a_density_formula_computes_the_same_in_javascript_and_numpy():
    texts = ["sqrt(alpha)/(2*s)**1.5", "max(1, log2(alpha))/s + min(alpha, 3, e)",
             "abs(-alpha)**0.5 / log(alpha) - exp(1.5) + log10(alpha) * pi"]
    alpha, s = sympy.symbols("alpha s")
    alphas = [2.0, 17.5, 1e3, 6e5]
    for text in texts:
        f = Formula(text, ("alpha", "s"))
        js = f.javascript(alpha=alpha, s=s)
        program = (f"const f = (alpha, s) => {js};\n"
                   f"process.stdout.write(JSON.stringify({json.dumps(alphas)}"
                   f".map((a) => f(a, 4))));")
        done = subprocess.run([shutil.which("node"), "-e", program], text=True,
                              capture_output=True, timeout=60)
        assert done.returncode == 0, done.stderr
        got = json.loads(done.stdout)
        want = [float(f(alpha=a, s=4.0)) for a in alphas]
        assert np.allclose(got, want, rtol=1e-12), (text, js, got, want)


def test_a_count_range_says_what_it_means():
    model = build("jpeg-decoder")
    place = {"count": "6..8", "properties": {"symbols": [1, 63]}}
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        old = space_from_dict(model, {"places": {"blocks": dict(place)}})
        stream = space_from_dict(model, {"places": {"blocks": dict(
            place, count_range="stream")}})
        each = space_from_dict(model, {"places": {"blocks": dict(place, count_range="each")}})
    notes = [w for w in seen if issubclass(w.category, SpaceFormatWarning)]
    assert len(notes) == 1 and 'read as count_range = "stream"' in str(notes[0].message)
    assert old == stream                                  # the old form is a stream
    assert symbol_ranges(old) == symbol_ranges(stream)
    assert [(p.count, p.properties) for s in each.fixed_counts() for p in s.places] == \
        [(p.count, p.properties) for s in stream.fixed_counts() for p in s.places] == \
        [((n, n), {"symbols": (1, 63)}) for n in (6, 7, 8)]   # verification: the same
    with pytest.raises(ModelError, match="count_range = 'each' is invalid"):
        symbol_ranges(each)                               # no stream for an interface
    for bad in ({"count": 6, "count_range": "each"}, dict(place, count_range="both"),
                dict(place, count_range="each", probe=3)):
        with pytest.raises(ModelError, match="count_range"):
            space_from_dict(model, {"places": {"blocks": bad}})


@pytest.mark.parametrize("text, read", [
    ("stall <= 0.65", (False, Fraction(13, 20))), (" stall<0.05 ", (True, Fraction(1, 20))),
    ("stall <= 1e-3", (False, Fraction(1, 1000))), ("stall <= 5.", (False, Fraction(5))),
    ("stall <= lots", None), ("stall <= -1", None), ("stall <= 0x10", None),
    ("stall >= 3", None), ("latency <= 5", None), ("stall <=", None)])
def test_a_stall_budget_is_read_by_the_formula_parser(text, read):
    assert stall_budget(text) == read


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js (node) is not installed")
def test_a_user_density_formula_reaches_the_explorer_page():
    """The page's rho_<key>(alpha) of a user formula (printed by the formula language's
    SymPy column) computes Python's ρ(α), for a ρ formula and an η formula."""
    from accelperf.density import from_formula
    from accelperf.explore.formulas import density_javascript
    algorithms = {"user_rho": from_formula("sqrt(alpha)/(2*s)**1.5", 4),
                  "user_eta": from_formula("eta = max(alpha, 10)**2 / (2*s^2)", 32)}
    alphas = [1.0, 64.0, 6e5, 3.2e7]
    program = (density_javascript(algorithms) + "\nprocess.stdout.write(JSON.stringify(" +
               json.dumps(alphas) + ".map((a) => [rho_user_rho(a), rho_user_eta(a)])));")
    done = subprocess.run([shutil.which("node"), "-e", program], text=True,
                          capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    want = [[float(algorithms[k].rho(a)) for k in ("user_rho", "user_eta")] for a in alphas]
    assert np.allclose(got, want, rtol=1e-12), (got, want)
