"""The explorer's sliders for a model's named delays (issue 25 with issue 21's parameters):
the interface with the delays kept as symbols, printed to JavaScript, gives at random
parameter values what a fresh extraction of the model built with those values gives
(1e-9 relative); where a delay changes the interface's structure, the slider stops and
the page says where."""

import json
import random
import re
import shutil

import pytest
import sympy

from accelperf.cli import main
from accelperf.explore import build_page, lpn_panel
from accelperf.explore.delays import symbolic_interface
from accelperf.explore.formulas import interface_formulas
from accelperf.lpn.analysis.interface import extract_interface
from accelperf.lpn.analysis.space import default_space, symbol_ranges
from accelperf.lpn.loader import load_model

from test_explore_formulas import close, run_js

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="Node.js (node) is not installed: the "
                                                     "page's JavaScript cannot be run")

# A first stage with a size-dependent delay feeding a second through two slots: the loop
# over the slots makes the second stage's gap (first + second)/2, which is the bottleneck
# only when second_cycles > first_base + per_size·size, so second_cycles has a structure
# boundary inside the range the explorer asks for (half to twice its start).
TWO_STAGES = """
from accelperf.lpn import Net

def build():
    net = Net("two-stage")
    job = net.token_type("Job", "size")
    per = net.parameter("per_size", 2, doc="first stage cycles per unit of size")
    base = net.parameter("first_base", 10, doc="first stage cycles besides its size")
    second = net.parameter("second_cycles", 6, doc="second stage cycles per job")
    src, mid, done = (net.place(n, job) for n in ("src", "mid", "done"))
    slots = net.place("slots", initial=[()] * 2)
    net.transition("first", inputs={src: 1, slots: 1}, outputs={mid: 1},
                   delay=lambda src: per * src.size + base)
    net.transition("second", inputs={mid: 1}, outputs={done: 1, slots: 1}, delay=second)
    net.start, net.done = src, done
    net.tokens_from_input = lambda sizes: [{"size": s} for s in sizes]
    net.default_input = [3, 4, 5]
    return net.build()
"""


@pytest.fixture(scope="module")
def two_stages(tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "two.py"
    path.write_text(TWO_STAGES)
    spec = f"{path}:build"
    model = load_model(spec)
    space = default_space(model)
    result = symbolic_interface(lambda p: load_model(spec, p),
                                lambda m: extract_interface(m, space), symbol_ranges(space))
    return spec, space, result


def fresh_values(spec, space, params, rng, n=25):
    """(input values, latency, phased latency, bottleneck) of the model built with
    ``params`` on ``n`` random inputs of the space, from a fresh extraction."""
    iface = extract_interface(load_model(spec, params), space)
    ranges = symbol_ranges(space)
    out = []
    for _ in range(n):
        point = {s: (rng.randint(int(lo), int(hi)) if s.is_integer
                     else rng.uniform(float(lo), float(hi))) for s, (lo, hi) in ranges.items()}
        cls = next(c for c in iface.classes
                   if all(bool(cond.subs(point)) for cond in c.input_class.conditions))
        effective = {g.transition: float(sympy.sympify(g.effective).evalf(30, subs=point))
                     for g in cls.gaps}
        out.append(({str(s): v for s, v in point.items()},
                    float(sympy.sympify(cls.latency).evalf(30, subs=point)),
                    float(sympy.sympify(cls.phased_latency).evalf(30, subs=point)),
                    max(effective, key=effective.get)))
    return out


def js_agrees_with_fresh_extractions(spec, space, result, vectors, rng, n=25):
    classes = [c.to_dict() for c in interface_formulas(result.interface)]
    cases, expected = [], []
    for params in vectors:
        for values, lat, phased, top in fresh_values(spec, space, params, rng, n):
            cases.append(dict(values, **params))
            expected.append((lat, phased, top))
    got = run_js(f"""const CLASSES = {json.dumps(classes)};
        function check(v) {{
            const hits = CLASSES.map((c) => evalInterface(c, v));
            const k = hits.findIndex((h) => h.inside);
            return [hits[k].latency, hits[k].phased, hits[k].bottleneck]; }}""", cases)
    for case, (lat, phased, top), js in zip(cases, expected, got):
        assert close(js[0], lat) and close(js[1], phased), (case, js, lat, phased)
        assert js[2] == top, (case, js, top)


def random_vectors(result, rng, k):
    """``k`` parameter vectors, each one slider moved to a random value of its range (the
    ranges are checked with the others at their starts)."""
    out = []
    for _ in range(k):
        d = rng.choice(result.sliders)
        out.append({s.name: s.start for s in result.sliders} | {d.name: rng.randint(d.lo, d.hi)})
    return out


def test_every_delay_of_the_two_stage_model_is_a_symbol(two_stages):
    _, _, result = two_stages
    assert {d.name for d in result.sliders} == {"per_size", "first_base", "second_cycles"}
    names = {str(s) for c in result.interface.classes
             for s in sympy.sympify(c.latency).free_symbols}
    assert {"per_size", "first_base"} <= names


def test_a_structure_change_stops_the_slider_and_is_said(two_stages):
    # second_cycles becomes the bottleneck above first_base + per_size·0 = 10 (a mean size
    # of 0 is in the space): the check finds the boundary to the cycle
    _, _, result = two_stages
    second = next(d for d in result.sliders if d.name == "second_cycles")
    assert (second.lo, second.hi) == (3, 10)
    assert "above 10 the structure changes: at second_cycles = 11" in second.note
    assert "--param second_cycles=11" in second.note


def test_the_corners_of_the_delay_box_are_checked(two_stages):
    """Each slider's range is checked alone; the box's 8 corners are checked too, and the
    two where first_base is low and second_cycles high change the structure (the second
    stage becomes the bottleneck: 10 > 6 + per_size·0)."""
    spec, space, result = two_stages
    corners = result.corners
    assert (corners.total, corners.checked, corners.agree) == (8, 8, 6)
    assert not corners.whole_box
    assert {dict(values)["first_base"] for values, _ in corners.failures} == {6}
    assert {dict(values)["second_cycles"] for values, _ in corners.failures} == {10}
    assert {dict(values)["per_size"] for values, _ in corners.failures} == {1, 10}
    # what the check says is what a fresh extraction there gives
    values = dict(corners.failures[0][0])
    fresh = extract_interface(load_model(spec, values), space).classes[0]
    lifted = sympy.sympify(result.interface.classes[0].latency).subs(
        {sympy.Symbol(n, integer=True, nonnegative=True): v for n, v in values.items()})
    point = {s: hi for s, (lo, hi) in symbol_ranges(space).items()}
    point.update({s: lo for s, (lo, hi) in symbol_ranges(space).items()
                  if str(s).startswith("mean_")})
    assert float(lifted.subs(point)) != float(sympy.sympify(fresh.latency).subs(point))


def test_corner_check_samples_a_large_box():
    from accelperf.explore.delays import DelaySlider, check_corners
    sliders = [DelaySlider(f"d{i}", 5, 1, 9) for i in range(8)]          # 256 corners
    seen = []
    box = check_corners(sliders, lambda v: seen.append(v) or (None if v["d0"] == 1
                                                              else "differs"),
                        16, random.Random(1))
    assert (box.total, box.checked) == (256, 16) and len(seen) == 16
    assert all(set(v.values()) <= {1, 9} for v in seen) and len(
        {tuple(v.values()) for v in seen}) == 16
    assert box.agree == sum(v["d0"] == 1 for v in seen) and not box.whole_box
    assert check_corners(sliders[:1], lambda v: None, 16, random.Random(1)) is None
    assert check_corners(sliders, lambda v: None, 0, random.Random(1)) is None


@needs_node
def test_the_page_warns_when_delays_move_together_outside_the_checked_box():
    P = {"delays": [{"name": "a", "start": 2}, {"name": "b", "start": 5},
                    {"name": "c", "start": 1}],
         "corners": {"total": 8, "checked": 8,
                     "failures": [{"values": {"a": 1, "b": 9, "c": 0}, "why": "a term "
                                   "differs by 40.00%"}]}}
    whole = dict(P, corners={"total": 8, "checked": 8, "failures": []})
    sampled = dict(P, corners={"total": 8, "checked": 4, "failures": []})
    got = run_js("function check(c) { return boxWarning(c.P, c.values); }", [
        {"P": P, "values": {"a": 2, "b": 5, "c": 1}},        # at the start
        {"P": P, "values": {"a": 1, "b": 5, "c": 1}},        # one moved: its range checked
        {"P": P, "values": {"a": 1, "b": 9, "c": 1}},        # two moved
        {"P": whole, "values": {"a": 1, "b": 9, "c": 0}},    # every corner agrees
        {"P": sampled, "values": {"a": 1, "b": 9, "c": 1}}])
    assert got[0] == got[1] == got[3] == ""
    assert got[2].startswith("a, b are moved together, outside the checked region")
    assert "1 of the 8 corners of the delay box checked change the interface's structure " \
           "(at a = 1, b = 9, c = 0: a term differs by 40.00%)" in got[2]
    assert "only 4 of the 8 corners of the delay box were checked" in got[4]


@needs_node
def test_two_stage_page_equals_fresh_extraction_at_random_delays(two_stages):
    spec, space, result = two_stages
    rng = random.Random(21)
    js_agrees_with_fresh_extractions(spec, space, result, random_vectors(result, rng, 4), rng)


@needs_node
def test_jpeg_page_equals_fresh_extraction_at_random_delays():
    """The JPEG decoder started from the calibrated values (examples/params/core_jpeg.toml):
    random values of each slider give the interface extracted with ``--params`` there."""
    from accelperf.cli.common import read_params
    from pathlib import Path
    params = read_params(Path(__file__).parents[1] / "examples/params/core_jpeg.toml")
    spec = "jpeg-decoder"
    space = default_space(load_model(spec, params))
    # corners=0: its 64 box corners (64 more extractions) are checked by the CLI, not here
    result = symbolic_interface(lambda p: load_model(spec, dict(params, **p)),
                                lambda m: extract_interface(m, space), symbol_ranges(space),
                                corners=0)
    assert result.corners is None
    names = {d.name for d in result.sliders}
    assert {"entropy_per_symbol", "entropy_base", "idct_cycles", "colour_cycles"} <= names
    assert {d.name: d.start for d in result.sliders}["idct_cycles"] == 67
    # the header stage is the interface's first phase (n_header·(bytes + base)), so its
    # delays are sliders too: nothing in the JPEG interface is fixed
    assert {"header_per_byte", "header_base"} <= names and not result.fixed
    # two sliders moved (a fresh extraction each) at 12 random inputs: the slider checks
    # above already compared the formula with 37 fresh extractions
    rng = random.Random(7)
    vectors = [dict(params, **v) for v in random_vectors(result, rng, 2)]
    js_agrees_with_fresh_extractions(spec, space, result, vectors, rng, n=12)


@needs_node
def test_copy_as_command_names_the_delays_set_otherwise():
    got = run_js("function check(c) { return delayOptions(c.P, c.values); }", [
        {"P": {"delays": [{"name": "a"}, {"name": "b"}], "fixed_delays": [["c", 3, "why"]],
               "declared": {"a": 1, "b": 2, "c": 4}}, "values": {"a": 1, "b": 5}},
        {"P": {"delays": [], "fixed_delays": [], "declared": {}}, "values": {}}])
    assert got == [" --param b=5 --param c=3", ""]


def test_explore_params_file_sets_the_sliders_start(two_stages, tmp_path, capsys):
    spec, _, _ = two_stages
    params = tmp_path / "p.toml"
    params.write_text("[parameters]\nfirst_base = 12\nsecond_cycles = 5\n")
    out = tmp_path / "e.html"
    status = main(["explore", "--model", spec, "--delays", "--params", str(params),
                   "--hierarchy", "none", "--out", str(out)])
    _, err = capsys.readouterr()
    assert status == 0, err
    html = out.read_text()
    data = json.loads(re.search(r'id="explorer-data">(.*?)</script>', html, re.S).group(1))
    starts = {d["name"]: d["start"] for d in data["lpn"]["delays"]}
    assert starts == {"per_size": 2, "first_base": 12, "second_cycles": 5}
    assert data["lpn"]["declared"] == {"per_size": 2, "first_base": 10, "second_cycles": 6}
    assert 'id="lpn-delays"' in html and "The model's named delays" in html


def test_without_delays_the_values_are_fixed_and_listed(two_stages):
    spec, _, _ = two_stages
    panel = lpn_panel(spec, params={"first_base": 12})
    assert panel.delays == ()
    assert ("first_base", 12, "no sliders asked for") in \
        panel.fixed_delays
    assert "first_base</b> = 12 cycles, fixed" in build_page(lpn=panel)


@pytest.mark.parametrize("argv, words", [
    (["--model", "none", "--delays"], "--delays are invalid with --model none"),
    (["--model", "none", "--param", "idct_cycles=70"], "--model none"),
    (["--param", "nonesuch=3"], "nonesuch"),
    (["--param", "idct_cycles=x"], "idct_cycles"),
    (["--params", "no/such.toml"], "--params"),
])
def test_bad_delay_options_are_one_line(argv, words, tmp_path, capsys):
    status = main(["explore", *argv, "--hierarchy", "none", "--out", str(tmp_path / "e.html")])
    _, err = capsys.readouterr()
    assert status == 2 and words in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
