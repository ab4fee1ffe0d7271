"""accelperf's objects show themselves in Jupyter (issue 26 item 2): a picture for a net and
a LogCA model, a table for results; registered with IPython's formatters by type name."""
from __future__ import annotations

import sys
import xml.etree.ElementTree as ET

import pytest

from accelperf import notebook
from accelperf.density import hierarchy, matmul, rate_bound
from accelperf.logca import LogCA
from accelperf.logca.advise import advise
from accelperf.lpn import Net, simulate
from accelperf.lpn.analysis import verify
from accelperf.lpn.analysis.interface import extract_interface
from accelperf.lpn.analysis.sizing import size_buffer
from accelperf.lpn.analysis.space import space_from_dict


def _pipeline():
    net = Net("nb-pipe")
    item = net.token_type("Item", "size")
    inbox, done = net.place("inbox", item), net.place("done", item)
    mid = net.place("mid", item, capacity=2)
    net.transition("work", inputs={inbox: 1}, outputs={mid: 1}, delay=lambda inbox: inbox.size)
    net.transition("store", inputs={mid: 1}, outputs={done: 1}, delay=3)
    net.start, net.done = inbox, done
    net.tokens_from_input = lambda sizes: [{"size": s} for s in sizes]
    return net.build()


@pytest.fixture(scope="module")
def model():
    return _pipeline()


def _svg_root(text):
    root = ET.fromstring(text)
    assert root.tag.endswith("svg")
    return root


def test_a_net_shows_its_picture(model):
    text = notebook.svg(model)
    _svg_root(text)
    for name in ("work", "store", "mid"):
        assert name in text
    assert notebook.html(model) is None


def test_a_logca_model_shows_its_speedup_curve():
    text = notebook.svg(LogCA(L=1500, o=2.9e4, C=90, A=19, beta=1.01, name="t2-aes"))
    _svg_root(text)
    assert "speedup" in text.lower()


def test_a_simulation_shows_a_table_of_its_units(model):
    result = simulate(model, [6, 1, 6])
    text = notebook.html(result)
    assert f"latency {result.latency} cycles" in text
    assert text.count("<tr>") == 1 + len(result.commits)        # header + one per unit
    assert "<b>work</b>" in text                                   # the bottleneck


def test_results_show_their_fields_escaped(model):
    bound = rate_bound(matmul(4), hierarchy("src-map-c"))
    text = notebook.html(bound)
    assert "obm-to-block-ram" in text and "<table" in text
    assert "<td>bottleneck</td>" in text
    text = notebook.html(advise(LogCA(L=1500, o=2.9e4, C=90, A=19, beta=1.01), 4096))
    assert "<td>speedup</td>" in text
    space = space_from_dict(model, {
        "input": "list(inbox.size)",
        "places": {"inbox": {"count": 3, "properties": {"size": [1, 4]}}}})
    for result in (verify.latency_bound(model, space, "max"),
                   verify.prove(model, space, "latency <= 1"),
                   size_buffer(model, space, "mid", range(1, 3), "latency <= 100")):
        text = notebook.html(result)
        assert repr(result).split("(")[0] in text and "<table" in text
        assert "<script" not in text


def test_an_interface_shows_a_formula_per_class(model):
    space = space_from_dict(model, {"places": {"inbox": {"count": [1, 50],
                                                        "count_range": "stream",
                                                        "properties": {"size": [1, 8]}}}})
    interface = extract_interface(model, space)
    text = notebook.html(interface)
    assert text.count("<tr>") == 1 + len(interface.classes)
    assert "n_inbox" in text


def test_a_long_value_is_cut_and_markup_is_escaped():
    text = notebook.table(["a"], [["<b>" + "x" * 500]])
    assert "&lt;b&gt;" in text and "…" in text and "x" * 200 not in text


def test_registered_with_a_running_ipython_by_type_name(model):
    interactiveshell = pytest.importorskip("IPython.core.interactiveshell")
    shell = interactiveshell.InteractiveShell.instance()
    try:
        notebook.register_if_running()
        data, _ = shell.display_formatter.format(model)
        assert "image/svg+xml" in data
        data, _ = shell.display_formatter.format(simulate(model, [2, 2]))
        assert "text/html" in data and "latency" in data["text/html"]
    finally:
        interactiveshell.InteractiveShell.clear_instance()


def test_outside_ipython_nothing_is_imported():
    import subprocess
    code = ("import sys, accelperf, accelperf.lpn; "
            "print('IPython' in sys.modules, 'accelperf.lpn.viz' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False"]


def test_every_registered_renderer_names_a_class_that_exists():
    """The registry names classes by module path (so the notebook module imports none of
    them): a class that moves must move here too."""
    import importlib
    for (module, name), (_, renderer) in notebook.RENDERERS.items():
        assert isinstance(getattr(importlib.import_module(module), name), type), (module, name)
        assert callable(getattr(notebook, renderer))


def test_every_result_with_to_dict_is_shown_as_a_table():
    """The module's promise: every result with a to_dict() gets a table in Jupyter (a new
    user found ChosenFit, GranularityResult, QuotedG1 and Prediction shown as plain text).
    The explorer's panels are page data, not results."""
    import importlib
    import inspect
    import pkgutil

    import accelperf
    unshown = []
    for info in pkgutil.walk_packages(accelperf.__path__, "accelperf."):
        if info.name.startswith(("accelperf.cli", "accelperf.explore")) or \
                info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, cls in vars(module).items():
            if inspect.isclass(cls) and cls.__module__ == info.name and \
                    not name.startswith("_") and "to_dict" in vars(cls) and \
                    (info.name, name) not in notebook.RENDERERS:
                unshown.append(f"{info.name}.{name}")
    assert unshown == []


def test_a_fields_table_reads_as_numbers_not_reprs():
    import numpy as np
    from accelperf.logca.fit import fit_logca
    g = 2.0 ** np.arange(4, 20)
    fit = fit_logca(g, 3e-8 + 2.9e-9 * g, 4.3e-8 + 2.9e-9 * g / 5, latency="independent",
                    bootstrap=0, host_constant=True)
    page = notebook.html(fit)
    assert "np.float64" not in page and "None" not in page and "inf<" not in page
    assert notebook.readable({"a": np.float64(4.999999999999998), "b": None,
                              "c": [float("inf"), 2]}) == "{a: 5, b: —, c: [∞, 2]}"
    assert "<table" in notebook.html(fit.g1)
