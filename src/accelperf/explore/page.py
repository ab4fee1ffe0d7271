"""The explorer as one self-contained HTML page: no network, no server (issue 25).

The page holds, inline: the Vega runtime (the bundle of the ``vl-convert-python`` package,
0.9 MB), the panels' data as JSON, the models' formulas printed to JavaScript by
:mod:`.formulas`, ``charts.js`` (the three charts as Vega views) and ``explorer.js``
(controls, validation, the panels). It opens from disk.
"""

from __future__ import annotations

import functools
import html
import json
import re
from importlib import resources

from ..errors import ModelError
from .formulas import density_javascript, logca_javascript
from .panels import DensityPanel, LogcaPanel, LpnPanel

MAX_PAGE_BYTES = 5_000_000      # issue 25's budget for the demo's page


@functools.cache
def vega_script() -> str:
    """The JavaScript bundle of Vega, Vega-Lite and vega-embed that ``vl-convert-python``
    ships for offline HTML. It must run as a module script, and of its globals only
    ``window.vegaEmbed`` is usable (``window.vega`` is null), so charts.js uses that.
    The first call in a process takes about a second (the package starts its JavaScript
    engine), hence the cache."""
    try:
        import vl_convert
    except ImportError:
        raise ModelError("the explorer needs the vl-convert-python package for its charts: "
                         "pip install vl-convert-python (a dependency of accelperf)") from None
    return vl_convert.javascript_bundle()


def _inline(text: str) -> str:
    """JavaScript safe inside a <script> element: no early ``</script>`` (``<\\/`` means
    ``</`` in JavaScript strings and regular expressions alike)."""
    return re.sub(r"</(script)", r"<\\/\1", text, flags=re.I)


def _logca_section(panel: LogcaPanel | None) -> str:
    if panel is None:
        return ""
    return """
<section id="logca"><h2>LogCA: speedup against offloaded size</h2>
<p class="intro">T0 = C·g<sup>β</sup>, T1 = o + L1(g) + C·g<sup>β</sup>/A, speedup = T0/T1
(ISCA'17 eqs. 1, 2, 8). Drag a slider or type a value (Enter applies it); the arrow keys move
a focused slider. L and o may be 0 (typed).</p>
<div class="row"><label for="logca-model">edit</label><select id="logca-model"></select>
<label for="logca-latency">latency</label><select id="logca-latency">
<option value="independent">independent: L1 = L</option>
<option value="dependent">dependent: L1 = L·g</option></select></div>
<div id="logca-controls"></div><div id="logca-at-box"></div>
<p class="status" id="logca-status" role="alert"></p>
<div id="logca-chart" class="chart"></div>
<table class="readout"><tbody>
<tr><th>g1, break-even size</th><td id="logca-g1"></td></tr>
<tr><th>g<sub>A/2</sub>, half of A</th><td id="logca-ghalf"></td></tr>
<tr><th>bound</th><td id="logca-bound"></td></tr>
<tr><th>peak</th><td id="logca-peak"></td></tr>
<tr><th>advice</th><td id="logca-advice"></td></tr></tbody></table>
<table class="readout"><caption>Optimization regions: where improving a parameter 10× gains
at least 20% (ISCA'17 §3.2), on the chart's 400-point grid</caption>
<tbody id="logca-regions"></tbody></table>
<p class="timing" id="logca-time"></p></section>"""


def _density_section(panel: DensityPanel | None) -> str:
    if panel is None:
        return ""
    options = "".join(f'<option value="{html.escape(k)}">{html.escape(k)}: '
                      f'{html.escape(a.formula or a.description)}</option>'
                      for k, a in panel.algorithms.items())
    return f"""
<section id="density"><h2>Computational density: the rate a memory hierarchy allows</h2>
<p class="intro">Each layer (store μ bytes, bandwidth β bytes/s, latency λ s) allows
σ = ρ(μ)·β/(1 + βλ/μ) computations per second (Steffen 2007, eq. 6); the smallest σ is the
bound and its layer the bottleneck. Edit a cell and press Enter; bandwidth may be inf.
Hierarchy: {html.escape(panel.hierarchy.name)}.</p>
<div class="row"><label for="density-algorithm">algorithm</label>
<select id="density-algorithm">{options}</select></div>
<table class="layers"><thead><tr><th>layer</th><th>size μ (B)</th><th>bandwidth β (B/s)</th>
<th>latency λ (s)</th><th>σ (computations/s)</th><th></th></tr></thead>
<tbody id="density-layers"></tbody></table>
<p class="status" id="density-status" role="alert"></p>
<p><b>bound:</b> <span id="density-bound"></span></p>
<div id="density-chart" class="chart"></div></section>"""


def _lpn_section(panel: LpnPanel | None) -> str:
    if panel is None:
        return ""
    if panel.missing:
        return (f'<section id="lpn"><h2>LPN performance interface: {html.escape(panel.model)}'
                f'</h2><p class="status" id="lpn-missing" role="alert">This panel is empty: '
                f'{html.escape(panel.missing)}</p></section>')
    return f"""
<section id="lpn"><h2>LPN performance interface: {html.escape(panel.model)}</h2>
<p class="intro">The interface extracted from the net (OSDI'24 §4.2, A.3), evaluated as you
move its input-space variables: latency = max over transitions of ε<sub>T</sub> =
N<sub>T</sub>·ḡ<sub>T</sub>, and by phase, the sum of phases with one bottleneck each.</p>
<div id="lpn-controls"></div>{_delays_block(panel)}
<p class="status" id="lpn-status" role="alert"></p>
<table class="readout"><tbody>
<tr><th>input class</th><td id="lpn-class"></td></tr>
<tr><th>latency (plain interface)</th><td id="lpn-latency"></td></tr>
<tr><th>latency by phase</th><td id="lpn-phased"></td></tr>
<tr><th>throughput (by phase)</th><td id="lpn-throughput"></td></tr>
<tr><th>bottleneck transition</th><td id="lpn-bottleneck"></td></tr></tbody></table>
<table class="readout"><caption>Phases</caption><thead><tr><th>#</th><th>transitions</th>
<th>bottleneck</th><th>latency (cycles)</th></tr></thead><tbody id="lpn-phases"></tbody></table>
<table class="readout"><caption>ε<sub>T</sub> per transition (cycles)</caption>
<tbody id="lpn-effective"></tbody></table>
<div id="lpn-chart" class="chart"></div>
<p>The net (the bottleneck transition is outlined in red):</p>
<div id="lpn-net" class="net">{panel.svg}</div>
<p class="timing" id="lpn-time"></p></section>"""


def _delays_block(panel: LpnPanel) -> str:
    """The sliders' box for the model's named delays and what the page says about them."""
    if not panel.delays and not panel.fixed_delays:
        return ""
    items = "".join(f"<li><b>{html.escape(d.name)}</b> ({d.lo}–{d.hi} cycles, starts at "
                    f"{d.start}): {html.escape(d.doc)}"
                    + (f" — {html.escape(d.note)}" if d.note else "") + "</li>"
                    for d in panel.delays)
    fixed = "".join(f"<li><b>{html.escape(n)}</b> = {v} cycles, fixed: {html.escape(why)}</li>"
                    for n, v, why in panel.fixed_delays)
    if not panel.delays:
        return f"""
<h3>The model's named delays (cycles)</h3>
<p class="intro" id="lpn-delays-intro">The interface was extracted with these values;
<code>accelperf explore --delays</code> gives them sliders.</p>
<ul class="notes" id="lpn-delay-notes">{fixed}</ul>"""
    return f"""
<h3>The model's named delays (cycles)</h3>
<p class="intro" id="lpn-delays-intro">The interface's formulas keep these delays as symbols:
while the interface keeps one structure its numbers are affine in the delays, recovered
exactly from extractions one step apart (accelperf.explore.delays). Each slider's range is
where the formula was checked against a fresh extraction, with the other delays at their
starting values; moving several at once can cross a structure boundary (a new bottleneck, a
class boundary) that these checks did not visit: re-extract with
<code>accelperf lpn interface {html.escape(panel.model)} --param NAME=VALUE</code>.
{_corners_text(panel.corners)}</p>
<div id="lpn-delays"></div><p class="status" id="lpn-delay-warning" role="alert"></p>
<ul class="notes" id="lpn-delay-notes">{items}{fixed}</ul>"""


def _corners_text(corners) -> str:
    """What the check of the delay box's corners found (accelperf.explore.delays, step 4)."""
    if corners is None:
        return ""
    if corners.whole_box:
        return (f"All {corners.total} corners of the box the sliders span keep that "
                f"structure too, so the whole box does (each structural choice holds on a "
                f"convex set of delays; terms measured by simulation aside).")
    said = (f"Of the {corners.total} corners of the box the sliders span, "
            f"{corners.checked} were checked and {corners.agree} keep that structure")
    if corners.failures:
        values, why = corners.failures[0]
        said += (f" (not at {', '.join(f'{n} = {v}' for n, v in values)}: "
                 f"{html.escape(why)})")
    return said + ": the page warns when several delays are moved together."


STYLE = """
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 1.5em auto; color: #222; padding: 0 1em; }
section { border-top: 1px solid #ccc; margin-top: 1.5em; }
.control { display: flex; align-items: center; gap: 0.6em; margin: 0.25em 0; }
.control label { width: 14em; } .control input[type=range] { width: 22em; }
.unit { color: #555; width: 7em; white-space: nowrap; } .error, .status { color: #b00; }
input.bad { border: 2px solid #b00; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.92em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; }
caption { text-align: left; font-weight: 600; white-space: nowrap; }
.row { display: flex; align-items: center; gap: 0.6em; margin: 0.4em 0; }
tr.bottleneck td { background: #fde2e2; }
.net { overflow-x: auto; border: 1px solid #ddd; }
.net g.hot rect { stroke: #d00; stroke-width: 4; }
.timing { color: #777; font-size: 0.8em; }
textarea { width: 100%; font-family: monospace; }
"""


def build_page(logca: LogcaPanel | None = None, density: DensityPanel | None = None,
               lpn: LpnPanel | None = None, title: str = "accelperf explorer") -> str:
    """The explorer page as an HTML string (the caller writes it)."""
    if logca is None and density is None and lpn is None:
        raise ModelError("nothing to explore: give a LogCA model, a hierarchy or an LPN model")
    data = {"logca": logca.to_dict() if logca else None,
            "density": density.to_dict() if density else None,
            "lpn": lpn.to_dict() if lpn else None}
    formulas = [logca_javascript()]
    if density is not None:
        formulas.append(density_javascript(density.algorithms))
    payload = json.dumps(data).replace("<", "\\u003c")     # JSON that cannot close the tag
    charts, runtime = (resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
                       for name in ("charts.js", "explorer.js"))
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>{STYLE}</style>
<script type="module">{_inline(vega_script())}</script>
</head><body>
<h1>{html.escape(title)}</h1>
<p>Every number on this page is computed in your browser from accelperf's own formulas
(printed to JavaScript from the same SymPy expressions the Python package uses). The
settings are kept in the address (share the link); the box below prints the accelperf
commands for them.</p>
<p class="status" id="ignored" role="alert"></p>
{_logca_section(logca)}{_density_section(density)}{_lpn_section(lpn)}
<section id="commands"><h2>As commands</h2>
<textarea id="command" rows="4" readonly aria-label="accelperf commands for these settings">
</textarea><button id="copy-command" type="button">copy as command</button>
<span id="copy-status"></span></section>
<script type="application/json" id="explorer-data">{payload}</script>
<script>{_inline(chr(10).join(formulas))}</script>
<script>{_inline(charts)}</script>
<script>{_inline(runtime)}</script>
</body></html>
"""


__all__ = ["build_page", "vega_script", "MAX_PAGE_BYTES"]
