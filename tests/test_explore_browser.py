"""The explorer in a real browser: Debian's chromium driven by Playwright (issue 25).

Moves sliders with the keyboard and types values, then checks the displayed g1 and the
JPEG interface's latency against Python, that every chart's Vega view holds its data and
drew its marks in the SVG, that nothing was fetched and nothing logged an error, that bad
input is said inline, and that the state survives a reload from the URL.
Update times are printed (never asserted); the screenshot is kept and its path printed.
"""

import math
import shlex
import shutil
import statistics
import time
from urllib.parse import parse_qs, urlsplit

import pytest

from accelperf.cli import main

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
try:
    from playwright.sync_api import sync_playwright
except ImportError:                  # pragma: no cover - depends on the environment
    sync_playwright = None

pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (apt-get install chromium)"),
    pytest.mark.skipif(sync_playwright is None, reason="playwright is not installed "
                                                       "(pip install -e '.[test]')"),
]
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
REL = 1e-9


@pytest.fixture(scope="module")
def page_file(tmp_path_factory):
    out = tmp_path_factory.mktemp("explore") / "explorer.html"
    assert main(["explore", "--out", str(out)]) == 0       # the demo's models: SPARC AES,
    return out                                             # src-map-c, jpeg-decoder


@pytest.fixture(scope="module")
def jpeg_interface():
    from extracted import default_interface
    return default_interface("jpeg-decoder")[1]


@pytest.fixture(scope="module")
def browser():
    """One chromium for the module (a launch is most of a second of the CPUs); each test
    gets a context of its own, with its own storage, cache and history."""
    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield launched
        launched.close()


@pytest.fixture()
def browser_page(browser):
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    log = {"errors": [], "requests": []}
    page.on("console", lambda m: log["errors"].append(m.text) if m.type == "error"
            else None)
    page.on("pageerror", lambda e: log["errors"].append(str(e)))
    page.on("request", lambda r: log["requests"].append(r.url))
    yield page, log
    context.close()


def fragment(page) -> dict:
    page.evaluate("window.explorerFlush()")        # the page writes the URL after a pause
    return {k: v[0] for k, v in parse_qs(urlsplit(page.url).fragment).items()}


def shown(page, element_id) -> float:
    return float(page.get_attribute(f"#{element_id}", "data-value"))


def svg_marks(page, chart, mark) -> int:
    """How many shapes the Vega mark named ``mark`` drew in ``chart``'s SVG."""
    return page.locator(f"#{chart} svg g.{mark} > path").count()


def view_data(page, chart, name) -> list[dict]:
    return page.evaluate(f"window.explorerViews[{chart!r}].data({name!r})")


def test_every_chart_draws_its_data(page_file, browser_page):
    """The three Vega views exist once the page is drawn: their datasets hold the points the
    page computed (400 per LogCA design), their marks are in the SVG, the chart's points are
    the model's, and loading fetched nothing and logged no error."""
    from collections import Counter

    from accelperf.logca.presets import preset
    page, log = browser_page
    page.goto(page_file.as_uri())
    page.wait_for_selector("body[data-drawn='1']", state="attached", timeout=30_000)
    curves = view_data(page, "logca-chart", "curves")
    designs = ["ultrasparc-t2", "sparc-t3", "sparc-t4-engine", "sparc-t4-instr"]
    assert Counter(r["design"] for r in curves) == {f"{d}/aes": 400 for d in designs}
    model = preset("ultrasparc-t2", "aes")                  # the edited one, drawn thick
    for r in curves[:400:57]:
        assert r["design"] == "ultrasparc-t2/aes" and r["width"] == 3
        assert abs(r["s"] - model.speedup(r["g"])) <= REL * model.speedup(r["g"])
    assert svg_marks(page, "logca-chart", "curve") == 4
    markers = view_data(page, "logca-chart", "markers")
    assert [m["what"] for m in markers] == ["g1 (speedup 1)", "g_A/2 (speedup A/2)"]
    assert markers[0]["g"] == shown(page, "logca-g1")
    assert svg_marks(page, "logca-chart", "marker") == 2
    regions = view_data(page, "logca-chart", "regions")
    assert regions and svg_marks(page, "logca-chart", "region") == len(regions)
    assert svg_marks(page, "logca-chart", "bound") == 1          # A; not latency-bound
    bars = view_data(page, "density-chart", "bars")              # fpga-registers: no limit
    assert [(b["layer"], b["bottleneck"]) for b in bars] == [("obm-to-block-ram", True),
                                                             ("main-ram-via-snap", False)]
    assert bars[0]["sigma"] == shown(page, "density-bound")
    fills = page.eval_on_selector_all("#density-chart svg g.bar > path",
                                      "ps => ps.map(p => p.getAttribute('fill'))")
    assert fills == ["#d62728", "#1f77b4"]                       # the bottleneck in red
    sweep = view_data(page, "lpn-chart", "sweep")
    assert len(sweep) == 400 and svg_marks(page, "lpn-chart", "sweep-line") == 2
    assert view_data(page, "lpn-chart", "current")[0]["y"] == shown(page, "lpn-latency")
    assert svg_marks(page, "lpn-chart", "current-point") == 1
    # an update replaces the data of the same view: A moved, the curve follows
    page.fill("#in-A", "40")
    page.press("#in-A", "Enter")
    page.evaluate("window.explorerSettled()")
    moved = model.with_parameters(A=40)
    curves = view_data(page, "logca-chart", "curves")
    g, s = curves[399]["g"], curves[399]["s"]
    assert abs(s - moved.speedup(g)) <= REL * moved.speedup(g)
    assert svg_marks(page, "logca-chart", "curve") == 4
    # the charts follow the window's width (the page's sections are at most 1100 px wide)
    width = "() => Number(document.querySelector('#logca-chart svg').getAttribute('width'))"
    assert page.evaluate(width) > 1000
    page.set_viewport_size({"width": 800, "height": 900})
    page.wait_for_function(f"({width})() < 800", timeout=10_000)
    assert log["errors"] == []
    assert [u for u in log["requests"] if not u.startswith("file://")] == []


def test_explorer_in_chromium(page_file, jpeg_interface, browser_page, tmp_path):
    from accelperf.logca import LogCA
    page, log = browser_page
    start = time.perf_counter()
    page.goto(page_file.as_uri())
    page.wait_for_selector("body[data-ready='1']", timeout=30_000)
    load = time.perf_counter() - start

    # --- LogCA: three keyboard steps on the A slider (log-scaled: 10^0.01 each), a typed o
    slider = page.locator("#in-A-slider")
    slider.focus()
    for _ in range(3):
        slider.press("ArrowRight")
    page.fill("#in-C", "100000")                 # shown back as typed, not as "1"
    page.press("#in-C", "Enter")
    assert page.input_value("#in-C") == "100000"
    page.fill("#in-C", "90")
    page.press("#in-C", "Enter")
    page.fill("#in-o", "5000")
    page.press("#in-o", "Enter")
    state = fragment(page)
    m = LogCA(L=float(state["L0"]), o=float(state["o0"]), C=float(state["C0"]),
              A=float(state["A0"]), beta=float(state["beta0"]), latency=state["latency0"])
    assert m.o == 5000 and m.A > 19                  # the preset's A = 19, moved up
    g1 = m.g1().root
    assert abs(shown(page, "logca-g1") - g1) <= REL * g1
    assert abs(shown(page, "logca-ghalf") - m.g_half().root) <= REL * m.g_half().root

    # --- bad input: said inline, the last valid chart stays, no NaN anywhere
    page.fill("#in-A", "-3")
    page.press("#in-A", "Enter")
    assert "A = -3 is invalid" in page.inner_text("#in-A-error")
    assert "Not redrawn" in page.inner_text("#logca-status")
    assert abs(shown(page, "logca-g1") - g1) <= REL * g1
    page.fill("#density-layers tr:nth-child(2) input[data-field=size]", "-1")
    page.press("#density-layers tr:nth-child(2) input[data-field=size]", "Enter")
    assert "size = -1 is invalid: must be >= 0" in page.inner_text("#density-layers")
    assert "NaN" not in page.inner_text("body")

    # --- the JPEG interface: typed block count, keyboard on the mean-symbols slider
    page.fill("#in-n_blocks", "6000")
    page.press("#in-n_blocks", "Enter")
    mean = page.locator("#in-mean_blocks_symbols-slider")
    mean.focus()
    for _ in range(5):
        mean.press("ArrowLeft")
    state = fragment(page)
    cls = jpeg_interface.classes[0]
    subs = {s: float(state[str(s)]) for s in cls.latency.free_symbols}
    expected = float(cls.latency.evalf(30, subs=subs))
    assert abs(shown(page, "lpn-latency") - expected) <= REL * expected
    assert page.inner_text("#lpn-bottleneck") in {g.transition for g in cls.gaps}
    assert page.locator("#lpn-net g.hot").count() == 1

    # --- timing of updates (reported, not asserted): a 400-point LogCA curve, the interface
    for _ in range(10):
        slider.press("ArrowLeft")
        mean.press("ArrowRight")
    timings = page.evaluate("window.explorerTimings")

    # --- copy as command, and the state in the URL survives a reload
    page.click("#copy-command")
    commands = page.input_value("#command").splitlines()
    assert commands[0].startswith("accelperf logca show --L")
    for line in commands:                  # what the page prints runs (the LPN one is slow)
        if not line.startswith("accelperf lpn"):
            assert main(shlex.split(line.split("#")[0])[1:]) == 0, line
    screenshot = tmp_path / "explorer.png"
    page.screenshot(path=str(screenshot), full_page=True)
    url = page.url
    page.goto("about:blank")
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']")
    assert fragment(page)["o0"] == "5000" and fragment(page)["n_blocks"] == "6000"
    assert page.inner_text("#ignored") == ""        # every key the page writes it reads

    assert log["errors"] == []
    assert [u for u in log["requests"] if not u.startswith("file://")] == []
    assert screenshot.stat().st_size > 10_000
    ms = {k: statistics.median(v[1:]) for k, v in timings.items()
          if isinstance(v, list) and len(v) > 1}
    print(f"\nexplorer: loaded in {load:.2f} s (ready {timings['ready'] / 1000:.2f} s after "
          f"navigation started); median update, whole (model part): "
          f"LogCA 400 points {ms['logca']:.1f} ms ({ms['logcaCompute']:.1f} ms), "
          f"JPEG interface {ms['lpn']:.1f} ms ({ms['lpnCompute']:.1f} ms); page "
          f"{page_file.stat().st_size / 1e6:.2f} MB; screenshot {screenshot}")
    assert all(math.isfinite(v) for v in ms.values())


def test_demo_report_link_opens_the_explorer(tmp_path, browser_page):
    from accelperf.demo import explorer_section
    from accelperf.report import Report
    page, log = browser_page
    report = Report(tmp_path / "report", title="explorer")
    explorer_section(report)
    page.goto(report.write().as_uri())
    page.click("text=Open the interactive explorer")
    page.wait_for_selector("body[data-ready='1']", timeout=30_000)
    assert page.url.split("#")[0].endswith("/report/explorer.html")
    assert page.inner_text("#logca-g1").startswith("337.486 B")     # UltraSPARC T2, AES
    assert log["errors"] == []
    assert [u for u in log["requests"] if not u.startswith("file://")] == []


def test_bad_values_in_the_address_are_ignored_and_said(page_file, browser_page):
    page, log = browser_page
    page.goto(page_file.as_uri() + "#A0=-5&n_blocks=0&layer1=-1,2,3&o0=300&zz=1&o7=2")
    page.wait_for_selector("body[data-ready='1']", timeout=30_000)
    said = page.inner_text("#ignored")
    assert "A0 = -5 from the address" in said and "n_blocks = 0 from the address" in said
    assert "layer1 = -1,2,3 from the address" in said
    # keys the page never reads (a typo; a design the page does not have) were dropped
    assert "zz = 1 from the address (not a setting of this page)" in said
    assert "o7 = 2 from the address (not a setting of this page)" in said
    assert "o0 = 300" not in said
    assert page.input_value("#in-o") == "300" and page.input_value("#in-A") == "19"
    assert "NaN" not in page.inner_text("body") and log["errors"] == []


def test_delay_sliders_in_chromium(tmp_path, browser_page):
    """A named delay moved with the keyboard: the page's latency is the interface of the
    model built with that value (a fresh extraction), and the copied command sets it."""
    import sympy

    from accelperf.lpn.analysis.interface import extract_interface
    from accelperf.lpn.analysis.space import default_space
    from accelperf.lpn.loader import load_model
    from test_explore_delays import TWO_STAGES
    (tmp_path / "two.py").write_text(TWO_STAGES)
    spec, out = f"{tmp_path / 'two.py'}:build", tmp_path / "e.html"
    assert main(["explore", "--model", spec, "--delays", "--param", "first_base=12",
                 "--hierarchy", "none", "--out", str(out)]) == 0
    page, log = browser_page
    page.goto(out.as_uri())
    page.wait_for_selector("body[data-ready='1']", timeout=30_000)
    assert page.input_value("#in-first_base") == "12"
    slider = page.locator("#in-second_cycles-slider")
    slider.focus()
    for _ in range(3):
        slider.press("ArrowRight")                 # 6 -> 9 cycles, inside its checked range
    assert page.inner_text("#lpn-delay-warning") == ""          # one delay moved: checked
    page.fill("#in-first_base", "15")
    page.press("#in-first_base", "Enter")
    # two moved, and a corner of the box (first_base low, second_cycles high) changes the
    # structure: the page says this combination was not checked
    warning = page.inner_text("#lpn-delay-warning")
    assert warning.startswith("first_base, second_cycles are moved together, outside the "
                              "checked region"), warning
    assert "corners of the delay box checked change the interface's structure" in warning
    assert "Of the 8 corners of the box the sliders span, 8 were checked" in \
        page.inner_text("#lpn-delays-intro")
    state = fragment(page)
    assert (state["second_cycles"], state["first_base"]) == ("9", "15")
    model = load_model(spec, {"first_base": 15, "second_cycles": 9})
    cls = extract_interface(model, default_space(model)).classes[0]
    subs = {s: float(state[str(s)]) for s in sympy.sympify(cls.latency).free_symbols}
    expected = float(sympy.sympify(cls.latency).evalf(30, subs=subs))
    assert abs(shown(page, "lpn-latency") - expected) <= REL * expected
    command = page.input_value("#command").splitlines()[-1]
    assert command.endswith(f"lpn interface {spec} --param first_base=15 "
                            f"--param second_cycles=9")
    page.fill("#in-second_cycles", "40")              # beyond the checked range: said
    page.press("#in-second_cycles", "Enter")
    said = page.inner_text("#in-second_cycles-error")
    # with first_base = 12 the second stage takes over above 12 cycles (a mean size of 0)
    assert said == "second_cycles = 40 is invalid: must be between 3 and 12", said
    assert "above 12 the structure changes" in page.inner_text("#lpn-delay-notes")
    assert log["errors"] == []


def test_a_fitted_gpu_model_in_chromium(tmp_path, browser_page):
    """`explore --fit` of the shipped H200 GEMM: the floor has a slider, g1 is the model's
    (HierarchicalLogCA.g1) and moving the floor moves it as Python says."""
    from pathlib import Path

    from accelperf.cli.explore import _selected_fit
    data = Path(__file__).resolve().parent.parent / "examples" / "measurements" / \
        "gpu-h200" / "gpu-gemm.csv"
    out = tmp_path / "gpu.html"
    assert main(["explore", "--fit", str(data), "--model", "none", "--hierarchy", "none",
                 "--out", str(out)]) == 0
    model = _selected_fit(data)
    page, log = browser_page
    page.goto(out.as_uri())
    page.wait_for_function("document.getElementById('logca-g1').dataset.value !== undefined")
    assert shown(page, "logca-g1") == pytest.approx(model.g1(), rel=REL)
    page.fill("#in-floor", str(model.floor / 10))
    page.press("#in-floor", "Enter")
    moved = model.with_value("floor", float(page.input_value("#in-floor")))
    assert shown(page, "logca-g1") == pytest.approx(moved.g1(), rel=REL)
    assert log["errors"] == []


def test_copied_commands_name_the_hierarchy_file_and_the_model(browser_page, tmp_path):
    # the copied density command said --hierarchy my-soc (the name inside the file), which
    # no command takes, and the LogCA ones dropped --name
    soc = tmp_path / "my soc.toml"
    soc.write_text('name = "my-soc"\n[[layer]]\nname = "sram"\nsize_bytes = 65536\n'
                   'bandwidth_bytes_per_s = 256e9\nlatency_s = 1e-9\n[[layer]]\n'
                   'name = "dram"\nsize_bytes = 8e9\nbandwidth_bytes_per_s = 50e9\n')
    out = tmp_path / "e.html"
    assert main(["explore", "--L", "3000", "--o", "50000", "--C", "5", "--A", "8",
                 "--name", "my-acc", "--hierarchy", str(soc), "--model", "none",
                 "--out", str(out)]) == 0
    page, log = browser_page
    page.goto(out.as_uri())
    page.wait_for_selector("body[data-ready='1']", timeout=30_000)
    page.click("#copy-command")
    commands = page.input_value("#command").splitlines()
    assert all("--name my-acc" in c for c in commands if c.startswith("accelperf logca"))
    (density,) = [c for c in commands if c.startswith("accelperf density")]
    assert shlex.split(density)[-1] == str(soc)
    for line in commands:
        assert main(shlex.split(line)[1:]) == 0, line
    assert log["errors"] == []
