// accelperf explorer: the page's three charts as Vega views. The Vega runtime (the bundle
// of the vl-convert-python package; of its globals only window.vegaEmbed is set, vega and
// vegaLite are null) is inlined before this script. Each chart is one view, made by
// vegaEmbed when it is first drawn; an update replaces the view's named datasets and
// signals and runs it again (no new view, no re-parse): a redraw costs the dataflow and the SVG.
"use strict";

const CHART_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"];
const REGION_COLOURS = {L: "#8c564b", o: "#e377c2", C: "#17becf", A: "#bcbd22"};
const MARKER_NAMES = ["g1 (speedup 1)", "g_A/2 (speedup A/2)", "peak"];
const BOUND_NAMES = ["A (eq. 3)", "C/L·g^(β−1) (eq. 9)"];
const SWEEP_NAMES = ["latency (max of ε, §4.2)", "latency by phase"];
const PARAMETER_ROWS = ["L", "o", "C", "A"];       // the region strip, top to bottom

const titled = (signal) => ({text: {signal: signal}, fontSize: 14, anchor: "start"});
const logScale = (name, range, domainSignal) =>
  ({name: name, type: "log", domain: {signal: domainSignal}, range: range, nice: false, zero: false});
const axis = (scale, orient, title, extra) =>
  Object.assign({scale: scale, orient: orient, title: title, grid: orient === "bottom" || orient === "left",
                 gridOpacity: 0.5, labelOverlap: true, titleFontWeight: "normal"}, extra || {});
const bottomLegend = (extra) => Object.assign({orient: "bottom", direction: "horizontal"}, extra);
// one line per group of a dataset (Vega draws one path per facet); a mark's name must
// differ from every dataset's (Vega keeps both in one namespace)
const lines = (name, data, groupby, encode) => ({type: "group", from: {facet: {name: name + "-series", data: data, groupby: groupby}},
  marks: [{type: "line", name: name, from: {data: name + "-series"}, encode: {update: encode}}]});

function logcaSpec(width, designs) {
  // The speedup curves (ISCA'17 eq. 8) of every design on log-log axes, the g1 / g_A/2 /
  // peak markers, the bounds (eqs. 3, 9) and, under them on the same x, the optimization
  // regions of §3.2 (Fig. 6) as one strip per parameter.
  // data: curves {g, s, design, width}, markers {g, s, what, colour}, bounds {g, s, what},
  //       regions {p, a, c, said}; signals: title, xlo, xhi, ylo, yhi
  const main = 330, gap = 34, strip = 84;
  return {
    $schema: "https://vega.github.io/schema/vega/v6.json", width: width, height: main + gap + strip,
    autosize: {type: "fit-x", contains: "padding"}, padding: 5,
    signals: [{name: "title", value: ""}, {name: "xlo", value: 1}, {name: "xhi", value: 10},
              {name: "ylo", value: 0.1}, {name: "yhi", value: 10}],
    title: titled("title"),
    data: ["curves", "markers", "bounds", "regions"].map((n) => ({name: n, values: []})),
    scales: [
      logScale("x", "width", "[xlo, xhi]"),
      logScale("y", [main, 0], "[ylo, yhi]"),
      {name: "design", type: "ordinal", domain: designs, range: CHART_COLOURS},
      {name: "marker", type: "ordinal", domain: MARKER_NAMES, range: ["circle", "square", "triangle-up"]},
      {name: "bound", type: "ordinal", domain: BOUND_NAMES, range: [[6, 4], [8, 3, 2, 3]]},
      {name: "parameter", type: "band", domain: PARAMETER_ROWS, range: [main + gap, main + gap + strip], padding: 0.25},
      {name: "region", type: "ordinal", domain: PARAMETER_ROWS, range: PARAMETER_ROWS.map((p) => REGION_COLOURS[p])},
    ],
    axes: [
      axis("x", "bottom", "granularity g (bytes offloaded)", {format: "~s", tickCount: 6}),
      axis("y", "left", "speedup T0/T1 (×)", {format: "~g"}),
      axis("parameter", "left", "10× better gains ≥ 20%", {grid: false, titleFontSize: 10}),
    ],
    legends: [bottomLegend({stroke: "design", title: "design (edited one thick)", symbolType: "stroke"}),
              bottomLegend({shape: "marker", title: "marks"}),
              bottomLegend({strokeDash: "bound", title: "bounds", symbolType: "stroke"})],
    marks: [
      lines("curve", "curves", ["design"], {x: {scale: "x", field: "g"}, y: {scale: "y", field: "s"},
            stroke: {scale: "design", field: "design"}, strokeWidth: {field: "width"}}),
      lines("bound", "bounds", ["what"], {x: {scale: "x", field: "g"}, y: {scale: "y", field: "s"},
            stroke: {value: "#777"}, strokeWidth: {value: 1.5}, strokeDash: {scale: "bound", field: "what"}}),
      {type: "symbol", name: "marker", from: {data: "markers"}, encode: {update: {
        x: {scale: "x", field: "g"}, y: {scale: "y", field: "s"}, shape: {scale: "marker", field: "what"},
        fill: {field: "colour"}, size: {value: 110}, stroke: {value: "white"},
        tooltip: {signal: "datum.what + ': ' + format(datum.g, '.6~g') + ' B, ' + format(datum.s, '.4~g') + '×'"}}}},
      {type: "rect", name: "region", from: {data: "regions"}, encode: {update: {
        x: {scale: "x", field: "a"}, x2: {scale: "x", field: "c"}, y: {scale: "parameter", field: "p"},
        height: {scale: "parameter", band: 1}, fill: {scale: "region", field: "p"},
        stroke: {scale: "region", field: "p"}, tooltip: {field: "said"}}}},
    ],
  };
}
function densitySpec(width, layers) {
  // σ of each layer (Steffen eq. 6) as a horizontal bar on a log axis, the bottleneck red.
  // data: bars {layer, sigma, bottleneck}; signals: title, xlo, xhi
  return {
    $schema: "https://vega.github.io/schema/vega/v6.json", width: width, height: 36 * layers.length,
    autosize: {type: "fit-x", contains: "padding"}, padding: 5,
    signals: [{name: "title", value: "rate each layer allows, σ (Steffen eq. 6)"},
              {name: "xlo", value: 1}, {name: "xhi", value: 10}],
    title: titled("title"),
    data: [{name: "bars", values: []}],
    scales: [logScale("x", "width", "[xlo, xhi]"),
             {name: "y", type: "band", domain: layers, range: "height", padding: 0.2}],
    axes: [axis("x", "bottom", "σ (computations per second)", {format: ".0e"}),
           axis("y", "left", "layer", {grid: false})],
    marks: [{type: "rect", name: "bar", from: {data: "bars"}, encode: {update: {
      x: {value: 0}, x2: {scale: "x", field: "sigma"}, y: {scale: "y", field: "layer"}, height: {scale: "y", band: 1},
      fill: {signal: "datum.bottleneck ? '#d62728' : '#1f77b4'"},
      tooltip: {signal: "datum.layer + ': σ = ' + format(datum.sigma, '.4~g') + ' computations/s'"}}}}],
  };
}

function sweepSpec(width, xTitle) {
  // an LPN interface's latency (OSDI'24 §4.2) against one input variable, log-log: the
  // plain interface, the phase sum and the current setting.
  // data: sweep {x, y, what}, current {x, y}; signals: title, xlo, xhi, ylo, yhi
  return {
    $schema: "https://vega.github.io/schema/vega/v6.json", width: width, height: 260,
    autosize: {type: "fit-x", contains: "padding"}, padding: 5,
    signals: [{name: "title", value: ""}, {name: "xlo", value: 1}, {name: "xhi", value: 10},
              {name: "ylo", value: 1}, {name: "yhi", value: 10}],
    title: titled("title"),
    data: [{name: "sweep", values: []}, {name: "current", values: []}],
    scales: [logScale("x", "width", "[xlo, xhi]"), logScale("y", "height", "[ylo, yhi]"),
             {name: "series", type: "ordinal", domain: SWEEP_NAMES, range: ["#1f77b4", "#ff7f0e"]},
             {name: "dash", type: "ordinal", domain: SWEEP_NAMES, range: [[1, 0], [2, 3]]}],
    axes: [axis("x", "bottom", xTitle, {format: "~s", tickCount: 6}),
           axis("y", "left", "latency (cycles)", {format: "~s", tickCount: 5})],
    legends: [bottomLegend({stroke: "series", strokeDash: "dash", symbolType: "stroke"})],
    marks: [
      lines("sweep-line", "sweep", ["what"], {x: {scale: "x", field: "x"}, y: {scale: "y", field: "y"},
            stroke: {scale: "series", field: "what"}, strokeDash: {scale: "dash", field: "what"}, strokeWidth: {value: 2}}),
      {type: "symbol", name: "current-point", from: {data: "current"}, encode: {update: {
        x: {scale: "x", field: "x"}, y: {scale: "y", field: "y"}, fill: {value: "#2ca02c"}, size: {value: 100},
        tooltip: {signal: "'current: ' + format(datum.y, '.6~g') + ' cycles'"}}}},
    ],
  };
}

function logDomain(values, pad) {
  // [lo, hi] of the positive finite values, widened by the factor `pad` on both sides
  const ok = values.filter((v) => v > 0 && Number.isFinite(v));
  if (!ok.length) return [1, 10];
  let lo = Math.min(...ok), hi = Math.max(...ok);
  if (lo === hi) { lo /= 10; hi *= 10; }
  return [lo / pad, hi * pad];
}

function chartViews(makeSpec, timings) {
  // The page's views by element id. draw(id, update) applies {data: {name: rows},
  // signals: {name: value}} and returns the render's promise; during the load a chart whose
  // box is below the first screen is queued (its view not even made) and drawn after it.
  const views = {}, made = {}, queued = {}, rendering = {};
  // the width of the chart's section: vega-embed makes the chart's own box an inline block
  // as wide as what it holds
  const widthOf = (id) => document.getElementById(id).parentElement.clientWidth;
  const state = {loading: true};
  function render(id, update) {
    if (!made[id]) {
      // the first draw: the update's rows and signals go into the spec, one run draws them
      const el = document.getElementById(id), spec = makeSpec(id, widthOf(id));
      for (const d of spec.data) if (update.data && update.data[d.name]) d.values = update.data[d.name];
      for (const sg of spec.signals) if (update.signals && sg.name in update.signals) sg.value = update.signals[sg.name];
      const start = performance.now();
      made[id] = vegaEmbed(el, spec, {renderer: "svg", actions: false}).then((result) => {
        views[id] = result.view;
        timings.firstDraw[id] = [start, performance.now()];     // ms since navigation start
        return result.view;
      });
      rendering[id] = made[id];
      return rendering[id];
    }
    rendering[id] = made[id].then((view) => {
      for (const [name, value] of Object.entries(update.signals || {})) view.signal(name, value);
      for (const [name, rows] of Object.entries(update.data || {})) view.data(name, rows);
      return view.runAsync();
    });
    return rendering[id];
  }
  function draw(id, update) {
    if (state.loading && !made[id] &&
        document.getElementById(id).getBoundingClientRect().top > window.innerHeight) {
      queued[id] = update;
      return Promise.resolve();
    }
    delete queued[id];                  // a later update replaces a queued first draw
    return render(id, update);
  }
  function drawQueued() {
    // one chart per task, so the page answers input between them
    const ids = Object.keys(queued);
    if (!ids.length) {
      settled().then(() => { timings.allDrawn = performance.now(); document.body.dataset.drawn = "1"; });
      return;
    }
    const update = queued[ids[0]];
    delete queued[ids[0]];
    render(ids[0], update).then(() => setTimeout(drawQueued, 0));
  }
  // the charts follow the page's width, as the boxes they sit in do
  let resizeTimer = null;
  window.addEventListener("resize", () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      for (const [id, view] of Object.entries(views)) rendering[id] = view.width(widthOf(id)).runAsync();
    }, 100);
  });
  const settled = () => Promise.all(Object.values(rendering)).then(() => undefined);
  return {views: views, draw: draw, settled: settled,
          loaded: () => { state.loading = false; setTimeout(drawQueued, 0); }};
}
