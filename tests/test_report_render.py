"""The HTML report as a browser shows it: headless Chromium renders a report built by
report.py (a matplotlib figure as SVG and PNG, and the demo's wide LPN picture), and the
test checks the screenshot and that every image loaded at a readable size."""

import json
import re
import shutil
import struct
import subprocess

import pytest

from accelperf.report import PAGE_WIDTH_PX, Report, svg_width_px

CHROMIUM = "/usr/bin/chromium"
needs_chromium = pytest.mark.skipif(
    shutil.which(CHROMIUM) is None,
    reason="headless Chromium is not installed (Debian: apt-get install chromium)")

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WINDOW = (1280, 900)

# Appended to a copy of the page: once everything has loaded, write what each image did
# into the DOM, where --dump-dom can read it.
PROBE = """<script>
window.addEventListener('load', () => {
  const images = [...document.images].map(i => ({
    src: i.getAttribute('src'), loaded: i.complete && i.naturalWidth > 0,
    shown: i.getBoundingClientRect().width, natural: i.naturalWidth,
    frame: i.closest('.wide') ? [i.closest('.wide').scrollWidth,
                                 i.closest('.wide').clientWidth] : null}));
  const pres = [...document.querySelectorAll('pre')].map(p => [p.scrollWidth, p.clientWidth]);
  const out = document.createElement('pre');
  out.id = 'render-check';
  out.textContent = JSON.stringify({images: images, pres: pres,
                                    page: document.documentElement.scrollWidth});
  document.body.appendChild(out);
});
</script>"""


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """A report with a small figure (SVG, and its PNG as an image too) and the JPEG
    decoder's LPN picture, which is far wider than the page."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    from accelperf.lpn import simulate
    from accelperf.lpn.library import build
    from accelperf.lpn.viz import net_svg

    out = tmp_path_factory.mktemp("report")
    rep = Report(out, "render test")
    sec = rep.section("Figures", "one narrow, one wide")
    fig = Figure(figsize=(6, 3))
    fig.subplots().plot([1, 2, 3], [3, 1, 2])
    rep.figure(sec, fig, "small", "a small matplotlib figure")
    sec.blocks.append('<figure><img src="figures/small.png" alt="the PNG"></figure>')
    model = build("jpeg-decoder")
    (out / "figures" / "lpn-jpeg.svg").write_text(net_svg(model, simulate(model)), "utf-8")
    sec.blocks.append('<figure><img src="figures/lpn-jpeg.svg" alt="JPEG decoder LPN">'
                      "<figcaption>the decoder</figcaption></figure>")
    # a formula as long as the JPEG decoder's by-phase latency, on one line (issue 33)
    sec.blocks.append("<pre>latency by phase = " + " + ".join(
        f"n_blocks*max(263/3, (3/4)*mean_blocks_symbols + {k})" for k in range(8)) + "</pre>")
    return rep.write()


def chromium(*args, profile) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}",
                           f"--window-size={WINDOW[0]},{WINDOW[1]}", *args],
                          capture_output=True, text=True, timeout=120)


def test_wide_svgs_are_laid_out_at_natural_size(report):
    html = report.read_text()
    wide = svg_width_px(report.parent / "figures" / "lpn-jpeg.svg")
    assert wide > PAGE_WIDTH_PX                      # the case the layout is for
    assert re.search(r'<span class="wide"><a href="figures/lpn-jpeg.svg"[^>]*><img '
                     r'src="figures/lpn-jpeg.svg"[^>]*width="\d+"', html)
    assert 'class="wide"><a href="figures/small.svg"' not in html   # narrow ones untouched


@needs_chromium
def test_the_report_renders_with_every_image_loaded_and_readable(report, tmp_path):
    check = report.with_name("check.html")
    check.write_text(report.read_text().replace("</body>", PROBE + "</body>"))
    run = chromium("--virtual-time-budget=10000", "--dump-dom", check.as_uri(),
                   profile=tmp_path / "profile-dom")
    found = re.search(r'<pre id="render-check">(.*?)</pre>', run.stdout, re.S)
    assert found, run.stderr[-2000:]
    state = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    images = {i["src"]: i for i in state["images"]}
    assert set(images) == {"figures/small.svg", "figures/small.png", "figures/lpn-jpeg.svg"}
    assert all(i["loaded"] for i in images.values()), images
    lpn = images["figures/lpn-jpeg.svg"]
    # Shown at its natural width, so the 11 px labels stay 11 px (squeezed into the page
    # they were about 6 px), inside a frame that scrolls sideways ...
    assert lpn["shown"] == pytest.approx(lpn["natural"], abs=1)
    scroll_width, client_width = lpn["frame"]
    assert scroll_width > client_width
    # ... while the page itself never scrolls sideways, and a long formula wraps
    assert state["page"] <= WINDOW[0]
    assert state["pres"] and all(scroll <= client for scroll, client in state["pres"])
    assert images["figures/small.png"]["shown"] <= PAGE_WIDTH_PX


@needs_chromium
def test_the_screenshot_has_the_window_size(report, tmp_path):
    shot = tmp_path / "report.png"
    run = chromium(f"--screenshot={shot}", "--virtual-time-budget=10000", report.as_uri(),
                   profile=tmp_path / "profile-shot")
    assert shot.exists(), run.stderr[-2000:]
    head = shot.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", head[16:24]) == WINDOW
    assert shot.stat().st_size > 10_000            # a rendered page, not a blank frame


def test_the_demo_wraps_a_long_interface_formula_under_its_first_line():
    from accelperf.demo import SUMMARY_COLUMNS, _wrapped
    formula = ("3*mean_blocks_symbols + n_blocks*max(263/3, (3/4)*mean_blocks_symbols + 69/2, "
               "3*mean_blocks_symbols + 6) - max(263/3, 3*mean_blocks_symbols + 6) + 269")
    lines = _wrapped("latency by phase = ", formula, "    # bottleneck coupling")
    assert len(lines) == 2 and all(len(line) <= SUMMARY_COLUMNS for line in lines[:-1])
    assert lines[1].startswith(" " * len("latency by phase = ") + "3*mean")
    assert " ".join(line.strip() for line in lines).startswith("latency by phase = " + formula)
    assert lines[-1].endswith("# bottleneck coupling")


def test_a_crossing_past_any_real_size_is_not_printed_as_a_size():
    """Issue 33 item 7: discrete-gpu/aes (L·g against C·g^1.01) crosses at 1.3e125 B; the
    report and the CLI say there is none within 2^64 bytes."""
    from accelperf.cli.common import crossing_size, fmt_g
    from accelperf.demo import _g
    from accelperf.logca import preset, summary
    info = summary(preset("discrete-gpu", "aes"))
    assert info.g1.root > 1e100
    for text in (_g(info.g1.root), _g(info.g_half.root), crossing_size(info.g1.root)):
        assert text == "none within 16 EiB"
    assert fmt_g(info.g1.root).startswith("none within 16 EiB (the model's root: 1.35e+125")
    assert _g(337.486) == "337.5 (337 B)" and crossing_size(0.4) == "< 1 B"
    assert crossing_size(2.0 ** 63) == "8 EiB"
