"""`accelperf explore`: the page it writes, and bad options as one line with exit status 2."""

import json
import re

import pytest

from accelperf.cli import main
from accelperf.explore import MAX_PAGE_BYTES, LpnPanel, build_page


def run(argv, capsys):
    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def page_data(html: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id="explorer-data">(.*?)'
                                r'</script>', html, re.S).group(1))


def test_explore_writes_a_self_contained_page(tmp_path, capsys):
    out = tmp_path / "e.html"
    status, text, err = run(["explore", "--preset", "sparc-t4-engine", "--preset", "sparc-t3",
                             "--kernel", "aes", "--model", "none", "--out", str(out)], capsys)
    assert status == 0, err
    assert "explorer written to" in text
    html = out.read_text()
    assert len(html.encode()) < MAX_PAGE_BYTES
    # nothing fetched: no external script, stylesheet or image in the markup (the scripts'
    # text is left out: Vega's has '<img src=' in a string of its export menu, unused)
    markup = re.sub(r"(<script[^>]*>).*?</script>", r"\1</script>", html, flags=re.S)
    assert markup.count("<script") == 5
    assert not re.search(r'<(script|link|img)[^>]+(src|href)=', markup)
    data = page_data(html)
    assert [m["name"] for m in data["logca"]["models"]] == ["sparc-t4-engine/aes",
                                                            "sparc-t3/aes"]
    assert data["density"]["hierarchy"] == "src-map-c" and data["lpn"] is None
    assert "function speedup_dependent(" in html and "function rho_matmul(" in html


def test_explicit_parameters_and_no_density(tmp_path, capsys):
    out = tmp_path / "e.html"
    status, _, err = run(["explore", "--L", "1500", "--o", "29000", "--C", "90", "--A", "30",
                          "--beta", "1.2", "--latency", "dependent", "--hierarchy", "none",
                          "--model", "none", "--out", str(out)], capsys)
    assert status == 0, err
    data = page_data(out.read_text())
    m = data["logca"]["models"][0]
    assert (m["L"], m["o"], m["C"], m["A"], m["beta"], m["latency"]) == \
        (1500, 29000, 90, 30, 1.2, "dependent")
    assert data["density"] is None


@pytest.mark.parametrize("argv, words", [
    (["--out", "e.txt"], "--out"),
    (["--out", "no/such/dir/e.html"], "does not exist"),
    (["--A", "-2", "--L", "1", "--o", "1", "--C", "1", "--out", "e.html"], "A"),
    (["--L", "1", "--out", "e.html"], "missing --o"),
    (["--preset", "nonesuch", "--kernel", "aes", "--out", "e.html"], "nonesuch"),
    (["--hierarchy", "nonesuch", "--out", "e.html"], "nonesuch"),
    (["--algorithm", "fft", "--out", "e.html"], "--algorithm"),
    (["--model", "no-such-model", "--out", "e.html"], "no-such-model"),
    (["--at", "-4KiB", "--out", "e.html"], "--at"),
    ([], "--out"),
    (["--plotly-js", "plotly.min.js", "--out", "e.html"], "--plotly-js"),   # removed (#25)
])
def test_bad_options_are_one_line_and_status_2(argv, words, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "e.toml").write_text("not = 'a script'\n")
    status, out, err = run(["explore"] + argv, capsys)
    assert status == 2, (out, err)
    assert err.count("\n") == 1 and err.startswith("accelperf: error:") and words in err
    assert not (tmp_path / "e.html").exists()


def test_a_model_without_interface_says_why_in_the_page():
    html = build_page(lpn=LpnPanel(model="toy", missing="no performance interface for toy: "
                                                        "the net deadlocks"))
    assert "This panel is empty: no performance interface for toy: the net deadlocks" in html
    assert page_data(html)["lpn"] == {"model": "toy", "missing": "no performance interface "
                                                                  "for toy: the net deadlocks"}


GATED_NET = """
from accelperf.lpn import Net

def build():
    net = Net("gated")
    job = net.token_type("Job", "size")
    src, busy, done = (net.place(n, job) for n in ("src", "busy", "done"))
    net.transition("fill", inputs={src: 1}, inhibit={busy: 1}, outputs={busy: 1},
                   delay=lambda src: src.size)
    net.transition("drain", inputs={busy: 1}, outputs={done: 1}, delay=5)
    net.start, net.done = src, done
    net.tokens_from_input = lambda sizes: [{"size": s} for s in sizes]
    net.default_input = [3, 4]
    return net.build()
"""


def test_model_without_interface_gives_a_panel_that_says_why(tmp_path):
    """Every library model has an interface now (#23); a net whose inhibitor arc makes its
    timing decide its classes still has none, and the page says why."""
    from accelperf.explore import lpn_panel
    from accelperf.lpn.loader import load_model
    (tmp_path / "gated.py").write_text(GATED_NET)
    panel = lpn_panel("gated", load_model(f"{tmp_path / 'gated.py'}:build"))
    assert panel.missing.startswith("no performance interface for ")
    assert "inhibitor arc on 'busy'" in panel.missing
    assert "This panel is empty: no performance interface" in build_page(lpn=panel)


def test_the_vega_bundle_is_inlined_as_a_module(tmp_path, capsys):
    """Vega from the vl-convert-python package, inline: its top-level names stay out of the
    page's scripts only in a module script, and only window.vegaEmbed is set by it."""
    out = tmp_path / "e.html"
    status, _, err = run(["explore", "--model", "none", "--out", str(out)], capsys)
    assert status == 0, err
    html = out.read_text()
    module = re.search(r'<script type="module">(.*?)</script>', html, re.S).group(1)
    assert "window.vegaEmbed=" in module and len(module) > 500_000
    assert len(html.encode()) < 1_500_000 and "plotly" not in html.lower()


def test_without_vl_convert_the_error_is_one_line(tmp_path, monkeypatch, capsys):
    import sys

    from accelperf.explore.page import vega_script
    monkeypatch.setitem(sys.modules, "vl_convert", None)      # import fails as if absent
    vega_script.cache_clear()
    try:
        status, out, err = run(["explore", "--model", "none", "--out",
                                str(tmp_path / "e.html")], capsys)
    finally:
        vega_script.cache_clear()
    assert status == 2 and err.count("\n") == 1 and "pip install vl-convert-python" in err
    assert not (tmp_path / "e.html").exists()
