"""The bottleneck an interface names (issue 27, item 2): on a three-stage pipeline with a
2-entry buffer between its last two stages, the label is the stage simulation finds
busiest, whichever stage is slowest and whatever counts the space includes, in the
command's text and JSON output."""

import json
import textwrap

import pytest

from accelperf.lpn import simulate
from accelperf.lpn.loader import load_model

PIPELINE = textwrap.dedent('''
    from accelperf.lpn import Net


    def build(fetch={fetch}, compute={compute}, writeback={writeback}):
        net = Net("three-stage")
        item, slot = net.token_type("Item"), net.token_type("Slot")
        src, a, b, done = (net.place(n, item) for n in ("items", "fetched", "computed", "done"))
        slots = net.place("slots", slot, initial=[()] * 2)
        net.transition("fetch", inputs={{src: 1}}, outputs={{a: 1}}, delay=fetch)
        net.transition("compute", inputs={{a: 1, slots: 1}}, outputs={{b: 1}}, delay=compute)
        net.transition("writeback", inputs={{b: 1}}, outputs={{done: 1, slots: 1}},
                       delay=writeback)
        net.start, net.done = src, done
        net.tokens_from_input = lambda n: [{{}}] * n
        net.default_input = 10
        return net.build()
''')

ORDERS = {"fetch": (5, 2, 1), "compute": (2, 5, 1), "writeback": (2, 1, 5)}
"""Slowest stage -> (fetch, compute, writeback) delays: first, middle (the issue's own
pipeline) and last."""

SPACES = {"default": None, "1..10": (1, 10), "200..5000": (200, 5000)}


@pytest.fixture(params=list(ORDERS))
def pipeline(request, tmp_path):
    fetch, compute, writeback = ORDERS[request.param]
    path = tmp_path / "pipeline.py"
    path.write_text(PIPELINE.format(fetch=fetch, compute=compute, writeback=writeback))
    return f"{path}:build", request.param


def _space(tmp_path, counts):
    if counts is None:
        return []
    path = tmp_path / "space.toml"
    path.write_text(f'model = "three-stage"\n[places.items]\ncount = [{counts[0]}, '
                    f'{counts[1]}]\n')
    return ["--space", str(path)]


@pytest.mark.parametrize("space", list(SPACES))
def test_the_label_is_the_stage_simulation_finds_busiest(cli, tmp_path, pipeline, space):
    spec, slowest = pipeline
    model = load_model(spec)
    lo, hi = SPACES[space] or (1, 100_000)
    for n in (lo, hi if hi <= 5000 else 5000):
        assert simulate(model, n).bottleneck == slowest
    args = ["lpn", "interface", spec, *_space(tmp_path, SPACES[space])]
    code, out, _ = cli(*args, "--json")
    assert code == 0
    (c,) = json.loads(out)["classes"]
    assert c["bottleneck"] == slowest
    assert [p["bottleneck"] for p in c["phases"]] == [slowest]
    code, out, _ = cli(*args)
    assert code == 0
    labels = [line.split("# bottleneck")[1].strip() for line in out.splitlines()
              if "# bottleneck" in line]
    assert labels == [slowest, slowest]


def test_a_class_sample_is_inside_the_space(tmp_path):
    """The cause of the wrong label: SymPy folds `n >= 1` into a positive count's
    assumptions, so Z3 never saw the bound and sampled an empty stream, on which every
    stage's effective delay is 0 and the first stage won the tie."""
    from accelperf.lpn.analysis.classes import input_classes
    from accelperf.lpn.analysis.space import default_space
    path = tmp_path / "pipeline.py"
    path.write_text(PIPELINE.format(fetch=2, compute=5, writeback=1))
    model = load_model(f"{path}:build")
    (c,) = input_classes(model, default_space(model))
    assert len(c.sample["items"]) == 1


def test_a_bottleneck_that_moves_with_the_input_is_named_with_its_ranges(cli):
    """The block pipeline's class latency is n_blocks*Max(40, 3*mean_blocks_nnz + 4): its
    sample (few coefficients) named colour_convert, which bounds only below 12, while
    entropy decoding bounds the rest of the space (a new user's finding)."""
    from accelperf.lpn.analysis.interface import extract_interface
    from accelperf.lpn.analysis.interfaces.bottleneck import class_bottleneck
    from accelperf.lpn.analysis.space import default_space
    from accelperf.lpn.library import build
    from accelperf.notebook import interface_html
    code, out, _ = cli("lpn", "interface", "block-pipeline")
    assert code == 0
    said = ("entropy_decode; colour_convert at mean_blocks_nnz 0..11; entropy_decode = "
            "colour_convert at mean_blocks_nnz 12")
    assert f"# bottleneck {said}\n" in out.replace("\n    ", " ")
    model = build("block-pipeline")
    iface = extract_interface(model, default_space(model))
    assert class_bottleneck(iface.classes[0], iface.space) == said
    assert said in interface_html(iface)          # the notebook's table says the same


def test_the_bottleneck_scan_at_once_equals_value_by_value():
    """A 100,000-value range took 10 s value by value in SymPy; the exact arrays give the
    same stages on top, ties included, over the same first run of the class's values."""
    import sympy
    from accelperf.lpn.analysis.interfaces import bottleneck
    x = sympy.Symbol("mean_requests_bytes")
    beats = sympy.floor(x / 64 + sympy.Rational(63, 64))
    effective = {"writeback": sympy.Integer(10), "compute": 3 * beats,
                 "dma": sympy.ceiling(x / 64)}
    conditions = [x >= 5, sympy.Or(x <= 400, x >= 900)]       # a first run: 5..400
    fast = bottleneck._tops_at_once(effective, conditions, x, 0, 1000, {})
    slow = bottleneck._tops_one_by_one(effective, conditions, x, 0, 1000, {})
    assert fast == slow and fast[1] == 5 and len(fast[0]) == 396
    assert {("writeback",), ("compute",)} <= set(fast[0])
    with pytest.raises(bottleneck.Inexact):                   # a Float: SymPy's path
        bottleneck._tops_at_once({"a": 0.5 * x}, [], x, 0, 10, {})
