"""The explorer's JavaScript computes what Python computes (issue 25: 1e-9 relative on random
settings). The page's formulas (printed from SymPy) and its runtime (explorer.js) run in
Node here; the browser test checks the same numbers on the page itself."""

import json
import math
import random
import shutil
import subprocess
from importlib import resources

import pytest
import sympy

from accelperf.density import algorithm, hierarchy, rate_bound
from accelperf.density.hierarchy import Hierarchy, Layer
from accelperf.explore.formulas import density_javascript, interface_formulas, logca_javascript
from accelperf.logca import LogCA
from accelperf.logca.advise import advise
from accelperf.logca.layerbounds import layer_bounds
from accelperf.logca.metrics import bound_type, peak_speedup
from accelperf.lpn.expr import evaluate_on, trace
from accelperf.lpn.expr_backends import to_javascript
from accelperf.lpn.operators import JAVASCRIPT_HELPERS
from accelperf.lpn.net import TokenType

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="Node.js (node) is not installed: the "
                                                     "page's JavaScript cannot be run")
ALGORITHMS = {k: algorithm(k) for k in ("dot", "matmul", "allpairs")}
REL = 1e-9


def run_js(source: str, cases: list) -> list:
    """Run ``source`` (which defines ``check(case)``) on every case in one Node process."""
    runtime = resources.files("accelperf.explore").joinpath("explorer.js").read_text()
    program = "\n".join([JAVASCRIPT_HELPERS, logca_javascript(),
                         density_javascript(ALGORITHMS), runtime, source,
                         "const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));",
                         "process.stdout.write(JSON.stringify(cases.map((c) => { try { return "
                         "check(c); } catch (e) { return {error: String(e.message)}; } })));"])
    done = subprocess.run([NODE, "-e", program], input=json.dumps(cases), text=True,
                          capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def close(a, b, rel=REL):
    if a is None or b is None:
        return a is b
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


# ---------------------------------------------------------------- the operator table's column
Blk = TokenType("Blk", ("x", "y"))
FUNCTIONS = [
    lambda a, b: a.x + b.y * 3 - 7,
    lambda a, b: max(a.x, b.y) - min(a.y, 4, b.x) + abs(a.x - b.x),
    lambda a, b: a.x // (abs(b.y) + 1) + a.x % (abs(b.x) + 2) - (-a.y) % 5,
    lambda a, b: a.x * 2 // -3 + (b.y - 9) % -4,
    lambda a, b: (a.x * 6) / 3 - -a.y,
]


def test_javascript_column_matches_reference_evaluation():
    from accelperf.lpn import where
    funcs = FUNCTIONS + [lambda a, b: where((a.x > b.x) & (a.y <= b.y) | ~(a.x == 3),
                                                a.x, -b.y),
                         lambda a, b: where((a.x != b.y) & (a.y < 0) | (b.x >= a.x), 1, 0)]
    rng = random.Random(25)
    trees = [trace(f, [("a", Blk), ("b", Blk)], "test") for f in funcs]
    cases, expected = [], []
    for k, tree in enumerate(trees):
        for _ in range(60):
            toks = [(rng.randint(-10**6, 10**6), rng.randint(-10**6, 10**6)) for _ in range(2)]
            cases.append({"k": k, "t": toks})
            expected.append(evaluate_on(tree, toks))
    body = ",\n".join(f"(t) => {to_javascript(tree, lambda a, tok, i: f't[{a}][{i}]')}"
                      for tree in trees)
    got = run_js(f"const F = [{body}];\nfunction check(c) {{ return F[c.k](c.t); }}", cases)
    assert got == expected


def test_javascript_column_reports_division_errors():
    tree = trace(lambda a, b: a.x / b.x, [("a", Blk), ("b", Blk)], "delay")
    src = to_javascript(tree, lambda a, tok, i: f"t[{a}][{i}]")
    got = run_js(f"function check(t) {{ return {src}; }}", [[[7, 0], [2, 0]], [[7, 0], [0, 0]],
                                                           [[8, 0], [2, 0]]])
    assert got == [{"error": "7 / 2 is not a whole number"},
                   {"error": "7 / 0: division by zero"}, 4]


# ---------------------------------------------------------------- LogCA
def random_model(rng: random.Random) -> LogCA:
    dependent = rng.random() < 0.5
    return LogCA(L=0.0 if rng.random() < 0.1 else 10 ** rng.uniform(-2, 4) / (300 if dependent else 1),
                 o=0.0 if rng.random() < 0.1 else 10 ** rng.uniform(0, 5),
                 C=10 ** rng.uniform(-1, 3), A=10 ** rng.uniform(0.05, 3),
                 beta=rng.choice([1.0, rng.uniform(0.5, 1.7)]),
                 latency="dependent" if dependent else "independent")


def as_js(m: LogCA) -> dict:
    return {"L": m.L, "o": m.o, "C": m.C, "A": m.A, "beta": m.beta, "latency": m.latency}


def test_logca_page_numbers_equal_python_on_random_settings():
    rng = random.Random(2025)
    models = [random_model(rng) for _ in range(150)]
    sizes = [2 ** rng.uniform(2, 30) for _ in models]
    got = run_js("""function check(c) {
        const m = c.m, g1 = metric(m, "g1"), gh = metric(m, "g_half"), b = bound(m), p = peak(m);
        const a = advise(m, c.at, 10, 0.2);
        return {s: speedup(m, c.at), g1: g1.exists ? g1.roots : null, gh: gh.exists ? gh.roots : null,
                bound: b.kind, limit: b.limit, expression: b.expression, peak: p && p.granularity, pays: a.pays,
                binding: a.bound, limited: a.limited_by, gains: a.gains};
    }""", [{"m": as_js(m), "at": g} for m, g in zip(models, sizes)])
    checked = 0
    for m, g, js in zip(models, sizes, got):
        assert close(js["s"], float(m.speedup(g))), m
        for key, r in (("g1", m.g1()), ("gh", m.g_half())):
            if r.exists:
                assert js[key] is not None and len(js[key]) == len(r.roots), (m, key, js, r)
                assert all(close(a, b) for a, b in zip(js[key], r.roots)), (m, key, js[key], r)
                checked += 1
            else:
                assert js[key] is None, (m, key, js[key], r)
        b = bound_type(m)
        assert js["bound"] == b.kind and close(js["limit"], b.limit)
        assert js["expression"] == b.expression
        p = peak_speedup(m)
        assert close(js["peak"], None if p is None else p.granularity)
        a = advise(m, g)
        assert js["pays"] == a.pays and js["binding"] == a.bound
        # equal gains (o = 0 makes L/10 and C·10 the same) may be listed in either order
        assert sorted(js["limited"]) == sorted(a.limited_by), (m, g, js, a)
        assert all(close(1 + js["gains"][p], 1 + a.gains[p]) for p in "LoCA")  # speedup ratios
    assert checked > 150             # most random models have both metrics


def test_two_crossings_close_to_the_peak_are_both_found():
    # Implication 4: sub-linear work, growing latency; the speedup rises through 1 and falls
    # back within a few percent of g* (closer than one step of the page's scan)
    from scipy.optimize import brentq
    base = LogCA(L=0.01, o=100, C=1.0, A=50, beta=0.5, latency="dependent")
    # C such that the peak (at g* = β·o/(L·(1 − β)), independent of C) is 1.00001
    C = brentq(lambda c: peak_speedup(base.with_parameters(C=c)).speedup - 1.00001, 0.01, 100)
    m = base.with_parameters(C=C)
    r = m.g1()
    assert r.exists and len(r.roots) == 2 and r.roots[1] / r.roots[0] < 1.05
    got = run_js("function check(m) { return metric(m, 'g1'); }", [as_js(m)])[0]
    assert got["exists"] and len(got["roots"]) == 2
    assert all(close(a, b) for a, b in zip(got["roots"], r.roots))


def test_logca_metric_that_does_not_exist_is_said_not_nan():
    # dependent latency, β = 1, C/L below 1: never breaks even (ISCA'17 eq. 9)
    m = LogCA(L=100, o=10, C=35, A=6, latency="dependent")
    assert not m.g1().exists
    got = run_js("function check(m) { return metric(m, 'g1'); }", [as_js(m)])[0]
    assert got["exists"] is False and "never reaches" in got["reason"]
    # sub-linear work with growing latency: the reason names the peak (Implication 4)
    m = LogCA(L=15, o=4e8, C=290, A=7, beta=0.94, latency="dependent")   # APU, radix sort
    got = run_js("function check(m) { return metric(m, 'g_half'); }", [as_js(m)])[0]
    assert not m.g_half().exists and got["exists"] is False
    assert got["reason"].startswith("the speedup peaks at 3.087× at 4.178e+8 B")


# ---------------------------------------------------------------- density
def test_density_page_numbers_equal_python_on_random_hierarchies():
    rng = random.Random(6)
    cases, expected = [], []
    for _ in range(120):
        layers = [Layer("regs", 0.0, math.inf, 0.0)]
        for i in range(rng.randint(1, 4)):
            layers.append(Layer(f"l{i}", rng.choice([0.0, 10 ** rng.uniform(2, 9)]),
                                rng.choice([math.inf, 10 ** rng.uniform(6, 12)]),
                                rng.choice([0.0, 10 ** rng.uniform(-9, -3)])))
        key = rng.choice(list(ALGORITHMS))
        res = rate_bound(ALGORITHMS[key], Hierarchy("h", tuple(layers)))
        expected.append(res)
        cases.append({"alg": key, "layers": [
            {"name": l.name, "size": l.size_bytes, "latency": l.latency_s,
             "bandwidth": "inf" if math.isinf(l.bandwidth_bytes_per_s) else
             l.bandwidth_bytes_per_s} for l in layers]})
    got = run_js("""function check(c) {
        c.layers.forEach((l) => { if (l.bandwidth === "inf") l.bandwidth = Infinity; });
        const r = densityBound(c.layers, globalThis["rho_" + c.alg]);
        return {bound: Number.isFinite(r.bound) ? r.bound : "inf", bottleneck: r.bottleneck,
                sigmas: r.rates.map((x) => Number.isFinite(x.sigma) ? x.sigma : "inf")};
    }""", cases)
    for res, js in zip(expected, got):
        assert js["bottleneck"] == res.bottleneck
        assert (js["bound"] == "inf") if math.isinf(res.bound) else close(js["bound"], res.bound)
        for rate, s in zip(res.layers, js["sigmas"]):
            assert (s == "inf") if math.isinf(rate.sigma) else close(s, rate.sigma), (rate, s)


def test_density_of_a_builtin_hierarchy():
    res = rate_bound(algorithm("matmul"), hierarchy("src-map-c"))
    layers = [{"name": l.name, "size": l.size_bytes, "latency": l.latency_s,
               "bandwidth": "inf" if math.isinf(l.bandwidth_bytes_per_s) else
               l.bandwidth_bytes_per_s} for l in hierarchy("src-map-c").layers]
    got = run_js("""function check(ls) {
        ls.forEach((l) => { if (l.bandwidth === "inf") l.bandwidth = Infinity; });
        return densityBound(ls, rho_matmul); }""", [layers])[0]
    assert got["bottleneck"] == res.bottleneck == "obm-to-block-ram"
    assert close(got["bound"], res.bound)


# ---------------------------------------------------------------- the JPEG interface
@pytest.fixture(scope="module")
def jpeg_interface():
    from extracted import default_interface
    return default_interface("jpeg-decoder")[1]


def test_jpeg_interface_latency_equals_python_on_random_inputs(jpeg_interface):
    rng = random.Random(17)
    classes = interface_formulas(jpeg_interface)
    cls, formulas = jpeg_interface.classes[0], classes[0]
    symbols = {str(s): s for e in (cls.latency, cls.phased_latency)
               for s in sympy.sympify(e).free_symbols}
    assert set(formulas.symbols) >= {"n_blocks", "mean_blocks_symbols"}
    cases, expected = [], []
    for _ in range(200):
        values = {"n_blocks": rng.randint(6, 6_000_000),
                  "mean_blocks_symbols": rng.uniform(1, 63)}
        values.update({s: rng.randint(1, 63) for s in formulas.symbols if s not in values})
        subs = {symbols[s]: v for s, v in values.items() if s in symbols}
        expected.append((float(cls.latency.evalf(30, subs=subs)),
                         float(cls.phased_latency.evalf(30, subs=subs)),
                         max(cls.gaps, key=lambda gp: float(sympy.sympify(gp.effective)
                                                            .evalf(30, subs=subs))).transition))
        cases.append({"cls": formulas.to_dict(), "values": values})
    got = run_js("""function check(c) {
        const r = evalInterface(c.cls, c.values);
        return [r.latency, r.phased, r.bottleneck, r.inside]; }""", cases)
    for (lat, phased, top), js in zip(expected, got):
        assert close(js[0], lat) and close(js[1], phased)
        assert js[2] == top and js[3] is True


def test_the_page_picks_the_class_python_picks(tmp_path):
    """fig2-pipeline's interface has several input classes with conditions: for random
    values the first class whose conditions hold in JavaScript is the one whose SymPy
    conditions hold, and its latency is the same."""
    from accelperf.lpn.analysis.space import symbol_ranges
    from extracted import default_interface
    model, interface = default_interface("fig2-pipeline")
    space = interface.space
    assert len(interface.classes) > 1
    formulas = [f.to_dict() for f in interface_formulas(interface)]
    ranges = {str(s): (int(lo), int(hi)) for s, (lo, hi) in symbol_ranges(space).items()}
    rng = random.Random(3)
    cases, expected = [], []
    for _ in range(150):
        values = {s: rng.randint(*ranges[s]) for s in ranges}
        subs = {sympy.Symbol(s, integer=True): v for s, v in values.items()}
        picked = next((k for k, c in enumerate(interface.classes)
                       if all(bool(cond.subs(subs)) for cond in c.input_class.conditions)),
                      None)
        lat = None if picked is None else \
            float(interface.classes[picked].latency.subs(subs).evalf(30))
        expected.append((picked, lat))
        cases.append(values)
    got = run_js(f"""const CLASSES = {json.dumps(formulas)};
        function check(v) {{
            const hits = CLASSES.map((c) => evalInterface(c, v));
            const k = hits.findIndex((h) => h.inside);
            return [k < 0 ? null : k, k < 0 ? null : hits[k].latency]; }}""", cases)
    assert any(p is not None for p, _ in expected)
    for (picked, lat), (k, js_lat) in zip(expected, got):
        assert k == picked and close(js_lat, lat)


def test_numbers_are_shown_without_losing_digits():
    # a typed value is shown, then read back from the box: 100000 must not become 1
    values = [100000, 29000, 1500, 1.5e6, 0.0001234, 337.486123, 120000, 1e-100, 2.10216e20,
              1e20]
    got = run_js("function check(v) { return fmt(v, 6); }", values)
    assert got == ["100000", "29000", "1500", "1.5e+6", "0.0001234", "337.486", "120000",
                   "1e-100", "2.10216e+20", "1e+20"]
    assert all(float(text) == pytest.approx(v, rel=5e-6) for text, v in zip(got, values))


# ---------------------------------------------------------------- LogCA with a GPU's terms
def random_extended(rng: random.Random):
    """A HierarchicalLogCA with a kernel floor, β_A, a host constant and host steps, in
    the ranges of the H200 fits (seconds)."""
    from accelperf.logca.hierarchy import HierarchicalLogCA, MemoryLayer
    dependent = rng.random() < 0.7
    base = LogCA(L=10 ** rng.uniform(-11.5, -10) if dependent else 10 ** rng.uniform(-6, -4),
                 o=10 ** rng.uniform(-5.5, -4), C=10 ** rng.uniform(-12, -9),
                 A=10 ** rng.uniform(0.3, 3), beta=rng.uniform(0.9, 1.5), unit="seconds",
                 latency="dependent" if dependent else "independent")
    steps = rng.choice([0, 1, 2])
    layers = tuple(MemoryLayer(f"L{k}", 2.0 ** rng.uniform(15, 28)) for k in range(steps))
    layers = tuple(sorted(layers, key=lambda l: l.capacity_bytes)) + \
        (MemoryLayer("DRAM", math.inf),)
    return HierarchicalLogCA(
        base, layers, host_steps=tuple(rng.uniform(-0.5, 15) for _ in range(steps)),
        working_set=1.0, sharpness=8.0,
        host_constant=rng.choice([0.0, 10 ** rng.uniform(-6, -5)]),
        floor=rng.choice([0.0, 10 ** rng.uniform(-5.5, -4.5)]),
        accel_beta=rng.choice([None, rng.uniform(0.9, 1.5)]))


def test_extended_logca_page_numbers_equal_python():
    from accelperf.explore.panels import logca_dict
    rng = random.Random(36)
    models = [random_extended(rng) for _ in range(80)]
    sizes = [2 ** rng.uniform(12, 28) for _ in models]
    got = run_js("""function check(c) {
        const m = c.m, g1 = metric(m, "g1"), gh = metric(m, "g_half"), b = bound(m);
        const a = advise(m, c.at, 10, 0.2);
        return {s: speedup(m, c.at), g1: g1.exists ? g1.roots[0] : null,
                gh: gh.exists ? gh.roots[0] : null, limit: b.limit, kind: b.kind,
                gains: a.gains};
    }""", [{"m": logca_dict(m), "at": g} for m, g in zip(models, sizes)])
    for m, g, js in zip(models, sizes, got):
        assert close(js["s"], float(m.speedup(g))), (m, g, js)
        assert close(js["g1"], m.g1()), (m, js["g1"], m.g1())
        assert close(js["gh"], m.g_half()), (m, js["gh"], m.g_half())
        last = layer_bounds(m)[-1].bound
        assert close(js["limit"], last.limit) and js["kind"] == last.kind, (m, js, last)
        local = advise(m.local_model(g), g, 10, 0.2)
        for p, gain in local.gains.items():
            assert close(js["gains"][p], gain), (m, p, js["gains"], local.gains)


def test_the_pages_regions_are_the_exact_ones():
    """The page found a region's edges on its 400-point grid and printed them to six
    digits ("364027 B" beside the CLI's exact 372736 B): its edges are now bisected."""
    from accelperf.logca import preset
    from accelperf.logca.regions import optimization_regions
    models = [preset("ultrasparc-t2", "aes"), preset("sparc-t3", "aes"),
              LogCA(L=3000, o=50000, C=5, A=8), preset("apu", "radix-sort")]
    lo, hi = 16.0, float(2**25)
    got = run_js("""function check(c) {
        return regions(c.m, grid(c.lo, c.hi, 400), 10, 0.2);
    }""", [{"m": as_js(m), "lo": lo, "hi": hi} for m in models])
    compared = 0
    for m, js in zip(models, got):
        exact = optimization_regions(m, 10.0, 0.2, lo, hi)
        for p, r in exact.regions.items():
            assert len(js[p]) == len(r.intervals), (m, p, js[p], r.intervals)
            for (a, b), (x, y) in zip(js[p], r.intervals):
                assert close(a, x, 1e-9) and close(b, y, 1e-9), (m, p, (a, b), (x, y))
                compared += 1
    assert compared >= 8
