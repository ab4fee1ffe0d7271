// accelperf explorer: the page's controls and charts. The model formulas it calls
// (speedup_*, phi_*, T0, rho_*, sigma_general and each interface's expressions) are
// printed from SymPy by accelperf.explore.formulas and inlined before this script; this
// file holds only generic numerics (a bracketed root finder), validation and the panels;
// charts.js (inlined before it) holds the Vega charts.
"use strict";
// ms since navigation started when this script runs: the HTML and the formulas before it
// are parsed and run (benchmarks/explore_speed.py reports it; the Vega bundle, a module
// script, runs later, before DOMContentLoaded)
const SCRIPT_START = typeof performance !== "undefined" ? performance.now() : 0;

// ------------------------------------------------------------------ numerics (tested in Node)
const X_LIMIT = 700;          // roots in ln g within ±700, as accelperf.logca.metrics

function bisect(f, a, b) {
  // f(a) and f(b) have opposite signs; halve until the bracket is two adjacent doubles
  let fa = f(a);
  for (let i = 0; i < 2000; i++) {
    const m = 0.5 * (a + b);
    if (m <= a || m >= b) break;
    const fm = f(m);
    if (fm === 0) return m;
    if ((fm > 0) === (fa > 0)) { a = m; fa = fm; } else { b = m; }
  }
  return 0.5 * (a + b);
}

function crossings(K, beta, o, L, dependent) {
  // Every granularity where speedup = target, i.e. phi(ln g) = 0. φ is concave in ln g, so
  // there are at most two, on either side of its maximum: a scan for sign changes that
  // also visits that maximum (Implication 4's g* = β·o / (L·(1 − β)), the only case with
  // an interior one), then bisection of each bracket.
  const phi = dependent ? phi_dependent : phi_independent;
  const f = (xv) => phi(xv, K, beta, o, L);
  const step = 0.25, roots = [], xs = [];
  for (let xv = -X_LIMIT; xv <= X_LIMIT + 1e-9; xv += step) xs.push(xv);
  if (dependent && beta < 1 && L > 0 && o > 0) {
    const top = Math.log(beta * o / (L * (1 - beta)));
    if (top > -X_LIMIT && top < X_LIMIT) { xs.push(top); xs.sort((p, q) => p - q); }
  }
  let a = xs[0], fa = f(a), above = fa > 0, below = fa < 0;
  for (let i = 1; i < xs.length; i++) {
    const b = xs[i], fb = f(b);
    if (fb > 0) above = true; else if (fb < 0) below = true;
    if (Number.isFinite(fa) && Number.isFinite(fb) && fa !== 0 && fb !== 0 && (fa > 0) !== (fb > 0))
      roots.push(Math.exp(bisect(f, a, b)));
    a = b; fa = fb;
  }
  if (roots.length) return {exists: true, roots: roots};
  return {exists: false, roots: [], flag: above && !below ? "above-everywhere" : "below-everywhere"};
}

// ---- LogCA with a kernel floor, the accelerator's own β_A, a host constant c0 and host
// steps h_k at layers (accelperf.logca.hierarchy.HierarchicalLogCA, issue 36): the same
// times, and the metrics found as that class finds them (a scan in ln g, then bisection)
const SEARCH = [1, 1e15];
function extended(m) {
  return !!(m.floor || m.c0 || (m.beta_A !== undefined && m.beta_A !== null && m.beta_A !== m.beta) ||
            (m.steps && m.steps.length));
}
function hostFactor(m, gv) {
  // H(g) = 1 + Σ h_k·m_k(g), m_k = 1/(1 + (μ_k/(w_k·g))^s_k) (accelperf.logca.hierarchy.miss_share)
  let H = 1;
  for (const [cap, h, w, sh] of (m.steps || [])) {
    const z = Math.min(700, Math.max(-700, sh * (Math.log(cap) - Math.log(w * gv))));
    H += h * (1 / (1 + Math.exp(z)));
  }
  return H;
}
function hostTime(m, gv) { return (m.c0 || 0) + T0(gv, m.C, m.beta) * hostFactor(m, gv); }
function kernelTime(m, gv) {
  const bA = m.beta_A === undefined || m.beta_A === null ? m.beta : m.beta_A;
  return Math.max(m.floor || 0, m.C * Math.pow(gv, bA) / m.A);
}
function extendedSpeedup(m, gv) {
  const lat = m.latency === "dependent" ? m.L * gv : m.L;
  return hostTime(m, gv) / (m.o + lat + kernelTime(m, gv));
}
function extendedMetric(m, target) {
  // the first g in [1, 1e15] B where the speedup reaches target, 64 points per decade
  const n = Math.floor(64 * Math.log10(SEARCH[1] / SEARCH[0])) + 1;
  const a0 = Math.log(SEARCH[0]), b0 = Math.log(SEARCH[1]);
  const f = (xv) => extendedSpeedup(m, Math.exp(xv)) - target;
  let prev = a0;
  if (f(a0) >= 0) return {exists: true, roots: [SEARCH[0]]};
  for (let i = 1; i < n; i++) {
    const xv = a0 + (b0 - a0) * i / (n - 1);
    if (f(xv) >= 0) return {exists: true, roots: [Math.exp(bisect(f, prev, xv))]};
    prev = xv;
  }
  return {exists: false, roots: [], reason: "the speedup never reaches the target from 1 B to 1e15 B"};
}
function localModel(m, gv) {
  // the plain LogCA that agrees with m at g (HierarchicalLogCA.local_model)
  const scale = Math.pow(gv, m.beta), C = hostTime(m, gv) / scale;
  return {L: m.L, o: m.o, C: C, A: C * scale / kernelTime(m, gv), beta: m.beta, latency: m.latency};
}
function outerModel(m) {
  // the data past every layer: C·H, A·H, the floor dropped (HierarchicalLogCA.layer_model
  // of the outermost layer); the local model at 1e15 B when β_A differs from β
  const bA = m.beta_A === undefined || m.beta_A === null ? m.beta : m.beta_A;
  if (bA !== m.beta) return localModel(m, SEARCH[1]);
  const H = 1 + (m.steps || []).reduce((t, st) => t + st[1], 0);
  return {L: m.L, o: m.o, C: m.C * H, A: m.A * H, beta: m.beta, latency: m.latency};
}

function metric(m, which) {
  // g1 (speedup 1) or g_half (A/2): K = C(1 − s/A)/s, as accelperf.logca.metrics
  if (extended(m)) {
    return extendedMetric(m, which === "g1" ? 1 : m.A / 2);
  }
  if (which === "g1" && m.A <= 1) return {exists: false, reason: "needs A > 1: an accelerator never faster than the host never breaks even"};
  const K = which === "g1" ? m.C * (m.A - 1) / m.A : m.C / m.A;
  const r = crossings(K, m.beta, m.o, m.L, m.latency === "dependent");
  if (!r.exists) {
    const top = peak(m);
    r.reason = r.flag === "above-everywhere"
      ? "the speedup is above the target at every size (no offload cost)"
      : top ? `the speedup peaks at ${fmt(top.speedup, 4)}× at ${fmt(top.granularity, 4)} B and then falls (Implication 4)`
      : "the speedup never reaches the target at any size";
  }
  return r;
}

function speedup(m, gv) {
  if (extended(m)) return extendedSpeedup(m, gv);
  return (m.latency === "dependent" ? speedup_dependent : speedup_independent)(gv, m.L, m.o, m.C, m.A, m.beta);
}

function bound(m) {
  // ISCA'17 §3.1, eqs. 3 and 9 (the rules of accelperf.logca.metrics.bound_type); an
  // extended model's is that of its data past every layer
  if (extended(m)) return bound(outerModel(m));
  if (m.latency !== "dependent" || m.L === 0) return {kind: "compute", limit: m.A, expression: "A"};
  if (m.beta > 1) return {kind: "compute", limit: m.A, expression: "A"};
  return m.beta === 1
    ? {kind: "latency", limit: m.C / (m.L + m.C / m.A), expression: "C/(L + C/A), under C/L"}
    : {kind: "latency", limit: 0, expression: "0, under C/L·g^(β−1)"};
}

function peak(m) {
  // Implication 4: interior maximum at g* = β·o / (L·(1 − β)); an extended model's from a
  // scan (64 points per decade) refined by golden-section search, where it turns down
  if (extended(m)) {
    const gs = grid(SEARCH[0], SEARCH[1], Math.floor(64 * 15) + 1), ss = gs.map((gv) => speedup(m, gv));
    let i = 0;
    for (let k = 1; k < ss.length; k++) if (ss[k] > ss[i]) i = k;
    if (i === 0 || i === ss.length - 1) return null;
    let a = Math.log(gs[i - 1]), b = Math.log(gs[i + 1]);
    const r = (Math.sqrt(5) - 1) / 2, f = (xv) => -speedup(m, Math.exp(xv));
    for (let k = 0; k < 200 && b - a > 1e-12; k++) {
      const c = b - r * (b - a), d = a + r * (b - a);
      if (f(c) < f(d)) b = d; else a = c;
    }
    const gp = Math.exp(0.5 * (a + b));
    return {granularity: gp, speedup: speedup(m, gp)};
  }
  if (m.latency !== "dependent" || m.beta >= 1 || m.L === 0 || m.o === 0) return null;
  const gs = m.beta * m.o / (m.L * (1 - m.beta));
  return {granularity: gs, speedup: speedup(m, gs)};
}

const PARAMETERS = ["L", "o", "C", "A"];
function parametersOf(m) { return m.floor ? PARAMETERS.concat(["floor"]) : PARAMETERS; }
function improved(m, p, factor) {
  const c = Object.assign({}, m);
  if (p === "L" || p === "o" || p === "floor") c[p] = m[p] / factor; else c[p] = m[p] * factor;
  return c;
}

function gain(m, p, gv, factor) { return speedup(improved(m, p, factor), gv) / speedup(m, gv) - 1; }

function advise(m, gv, factor, threshold) {
  // speedup, verdict, binding bound and limiting parameters at one size (logca advise); an
  // extended model is advised through its local model there, as `logca advise --data`
  if (extended(m)) return advise(localModel(m, gv), gv, factor, threshold);
  const s = speedup(m, gv), host = T0(gv, m.C, m.beta);
  const lat = m.latency === "dependent" ? m.L * gv : m.L;
  const bounds = {acceleration: m.A, overhead: m.o > 0 ? host / m.o : Infinity,
                  latency: m.L > 0 ? host / lat : Infinity};
  let name = "acceleration";
  for (const k of ["overhead", "latency"]) if (bounds[k] < bounds[name]) name = k;
  const gains = {};
  for (const p of PARAMETERS) gains[p] = gain(m, p, gv, factor);
  const limited = PARAMETERS.filter((p) => gains[p] >= threshold).sort((a, b) => gains[b] - gains[a]);
  return {speedup: s, pays: s > 1, bound: name, bound_value: bounds[name], limited_by: limited, gains: gains};
}

function fmt(v, digits) {
  // v to `digits` significant digits without trailing zeros after the point (never before:
  // 100000 stays 100000)
  if (v === null || v === undefined) return "—";
  const [mantissa, exponent] = Number(v).toPrecision(digits || 6).split("e");
  const short = mantissa.includes(".") ? mantissa.replace(/0+$/, "").replace(/\.$/, "") : mantissa;
  return exponent === undefined ? short : short + "e" + exponent;
}

function grid(lo, hi, n) {
  const out = new Array(n), a = Math.log(lo), b = Math.log(hi);
  for (let i = 0; i < n; i++) out[i] = Math.exp(a + (b - a) * i / (n - 1));
  return out;
}

function regions(m, gs, factor, threshold) {
  // per parameter, the spans where improving it 10x gains >= threshold (§3.2): found on
  // the grid, each inner edge then bisected in ln g to the grid step's 2^-40 (a 400-point
  // grid alone printed "364027 B" for the CLI's exact 372736)
  const out = {};
  const edge = (p, a, b) => {     // gain - threshold changes sign between a and b
    let lo = Math.log(a), hi = Math.log(b);
    const inLo = gain(m, p, a, factor) >= threshold;
    for (let k = 0; k < 40; k++) {
      const mid = (lo + hi) / 2;
      if ((gain(m, p, Math.exp(mid), factor) >= threshold) === inLo) lo = mid; else hi = mid;
    }
    return Math.exp((lo + hi) / 2);
  };
  for (const p of parametersOf(m)) {
    const runs = [];
    let start = null;
    gs.forEach((gv, i) => {
      const inside = gain(m, p, gv, factor) >= threshold;
      if (inside && start === null) start = i === 0 ? gv : edge(p, gs[i - 1], gv);
      if (!inside && start !== null) { runs.push([start, edge(p, gs[i - 1], gv)]); start = null; }
    });
    if (start !== null) runs.push([start, gs[gs.length - 1]]);
    out[p] = runs;
  }
  return out;
}

function layerRate(layer, rho) {
  // σ of one layer (Steffen eq. 6) with the special cases of accelperf.density.Layer.rate
  const tiny = 2.2250738585072014e-308;
  if (!Number.isFinite(layer.bandwidth) && layer.latency === 0) return {sigma: Infinity, rho: null};
  if (layer.size === 0 && layer.latency > 0) return {sigma: 0, rho: rho(tiny)};
  const r = rho(layer.size || tiny);
  if (!(Number.isFinite(r) && r >= 0)) return {error: "density ρ = " + r + " at this layer is not a finite number >= 0"};
  let sigma;
  if (layer.size === 0) sigma = r * layer.bandwidth;
  else if (!Number.isFinite(layer.bandwidth)) sigma = r * layer.size / layer.latency;
  else sigma = sigma_general(r, layer.size, layer.bandwidth, layer.latency);
  if (!Number.isFinite(sigma)) return {error: "rate σ is beyond the range of a double"};
  return {sigma: sigma, rho: r};
}

function densityBound(layers, rho) {
  const rates = layers.map((l) => layerRate(l, rho));
  const bad = rates.findIndex((r) => r.error);
  if (bad >= 0) return {error: "layer " + layers[bad].name + ": " + rates[bad].error};
  let k = 0;
  rates.forEach((r, i) => { if (r.sigma < rates[k].sigma) k = i; });
  return {rates: rates, bound: rates[k].sigma, bottleneck: layers[k].name};
}

function compiled(cls) {
  // each expression of a class as a function of the class's symbols, compiled once
  if (!cls.compiled) {
    const mk = (src) => new Function(...cls.symbols, '"use strict"; return (' + src + ");");
    cls.compiled = {conditions: cls.condition_js.map(mk), latency: mk(cls.latency_js), phased: mk(cls.phased_js),
                    effective: cls.effective.map(([t, src]) => [t, mk(src)]),
                    phases: cls.phases.map(([ts, b, src]) => [ts, b, mk(src)])};
  }
  return cls.compiled;
}

function evalInterface(cls, values) {
  // a class's plain and phase latency, each transition's ε and the phases at `values`
  const f = compiled(cls), args = cls.symbols.map((n) => values[n]);
  const eff = f.effective.map(([t, fn]) => [t, fn(...args)]);
  let top = 0;
  eff.forEach((e, i) => { if (e[1] > eff[top][1]) top = i; });
  return {inside: f.conditions.every((c) => c(...args)), latency: f.latency(...args),
          phased: f.phased(...args), effective: eff, bottleneck: eff.length ? eff[top][0] : null,
          phases: f.phases.map(([ts, b, fn]) => ({transitions: ts, bottleneck: b, latency: fn(...args)}))};
}

function delayOptions(P, values) {
  // `--param NAME=VALUE` for each named delay whose value is not the model's declared one
  const out = [];
  for (const d of P.delays || []) if (values[d.name] !== P.declared[d.name]) out.push(` --param ${d.name}=${values[d.name]}`);
  for (const [name, value] of P.fixed_delays || []) if (value !== P.declared[name]) out.push(` --param ${name}=${value}`);
  return out.join("");
}

function boxWarning(P, values) {
  // Why the current delays lie outside the checked region, or "" inside it. Checked: each
  // delay moved alone (its slider's range), and the whole box when every one of its
  // corners kept the structure (accelperf.explore.delays, step 4).
  const moved = (P.delays || []).filter((d) => values[d.name] !== d.start).map((d) => d.name);
  const c = P.corners;
  if (moved.length < 2 || (c && c.checked === c.total && !c.failures.length)) return "";
  const at = (f) => Object.entries(f.values).map(([n, v]) => `${n} = ${v}`).join(", ");
  const why = !c ? "the corners of the delay box were not checked"
    : c.failures.length ? `${c.failures.length} of the ${c.checked} corners of the delay box checked change the interface's structure (at ${at(c.failures[0])}: ${c.failures[0].why})`
    : `only ${c.checked} of the ${c.total} corners of the delay box were checked`;
  return `${moved.join(", ")} are moved together, outside the checked region (each delay alone, and the whole box only when all its corners keep the structure): ${why}. ` +
    "The numbers may be off here: run the copied lpn interface command to extract the interface at these values.";
}

if (typeof module !== "undefined") {       // Node, for the tests
  module.exports = {boxWarning, delayOptions, fmt, crossings, metric, speedup, bound, peak, advise, regions, grid, layerRate, densityBound, evalInterface};
}

// ------------------------------------------------------------------ the page
if (typeof document !== "undefined") document.addEventListener("DOMContentLoaded", () => {
  const DATA = JSON.parse(document.getElementById("explorer-data").textContent);
  const $ = (id) => document.getElementById(id);
  const size = (b) => {
    if (b === null || b === undefined) return "—";
    const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let k = 0, v = b;
    while (v >= 1024 && k < units.length - 1) { v /= 1024; k++; }
    return fmt(b, 6) + " B (" + fmt(v, 4) + " " + units[k] + ")";
  };
  const state = {};            // everything the URL fragment carries
  const timings = {logca: [], logcaCompute: [], density: [], lpn: [], lpnCompute: [],
                   scriptStart: SCRIPT_START, domReady: performance.now(), firstDraw: {}};
  window.explorerTimings = timings;

  // ---- charts (charts.js): during the load a chart below the first screen is queued and
  // drawn just after it (its readouts are computed at once either way): the first screen
  // shows sooner. An update's time runs until its chart is rendered.
  const charts = chartViews((id, width) => id === "logca-chart" ? logcaSpec(width, models.map((m) => m.name))
    : id === "density-chart" ? densitySpec(width, D.layers.map((l) => l.name))
    : sweepSpec(width, P.sweep + " (" + P.stream_unit + ")"), timings);
  window.explorerViews = charts.views;
  window.explorerSettled = charts.settled;
  // draw a chart; once it is rendered, keep the update's time in `times` and tell `say` it
  const chart = (id, update, t0, times, say) => charts.draw(id, update).then(() => {
    const ms = performance.now() - t0;
    times.push(ms);
    if (say) say(ms);
  });

  // ---- a slider with a typed-in value; log-scaled sliders move in log10 of the value
  function control(box, spec, onchange) {
    const row = document.createElement("div");
    row.className = "control";
    const id = "in-" + spec.key;
    row.innerHTML = `<label for="${id}">${spec.label}</label>` +
      `<input type="range" id="${id}-slider" aria-label="${spec.label} slider" min="${spec.log ? Math.log10(spec.lo) : spec.lo}" max="${spec.log ? Math.log10(spec.hi) : spec.hi}" step="${spec.log ? 0.01 : spec.step || 0.01}">` +
      `<input type="text" inputmode="decimal" id="${id}" size="12"><span class="unit">${spec.unit || ""}</span>` +
      `<span class="error" id="${id}-error" role="alert"></span>`;
    box.appendChild(row);
    const slider = row.querySelector("input[type=range]"), text = $(id), err = $(id + "-error");
    const set = (v) => {
      text.value = fmt(v, 6);
      if (v > 0 || !spec.log) slider.value = spec.log ? Math.log10(v) : v;
    };
    slider.addEventListener("input", () => {
      let v = spec.log ? Math.pow(10, Number(slider.value)) : Number(slider.value);
      if (spec.integer) v = Math.round(v);
      text.value = fmt(v, 6); err.textContent = ""; text.classList.remove("bad");
      onchange(spec.key, v);
    });
    text.addEventListener("change", () => {
      const raw = text.value.trim(), v = Number(raw);
      const problem = spec.check(raw, v);
      if (problem) {
        err.textContent = `${spec.name} = ${raw || "(empty)"} is invalid: ${problem}`;
        text.classList.add("bad");
        onchange(spec.key, null, err.textContent);
        return;
      }
      err.textContent = ""; text.classList.remove("bad");
      if (v > 0 || !spec.log) slider.value = spec.log ? Math.log10(Math.min(Math.max(v, spec.lo), spec.hi)) : v;
      onchange(spec.key, v);
    });
    return {set: set};
  }
  const number = (lo, hi, zero, integer) => (raw, v) => {
    if (raw === "" || !Number.isFinite(v)) return "must be a finite number";
    if (integer && !Number.isInteger(v)) return "must be a whole number";
    if (zero && v === 0) return null;
    if (v < lo || v > hi) return `must be ${zero ? "0 or " : ""}between ${lo} and ${hi}`;
    return null;
  };

  // ---- the URL fragment
  function readHash() {
    const h = new URLSearchParams(location.hash.slice(1));
    const out = {};
    for (const [k, v] of h) out[k] = v;
    return out;
  }
  let hashTimer = null;
  function writeHash() {
    // after the user pauses: Chromium throttles (and warns about) frequent history updates
    clearTimeout(hashTimer);
    hashTimer = setTimeout(writeHashNow, 150);
    updateCommand();
  }
  function writeHashNow() {
    const h = new URLSearchParams();
    for (const [k, v] of Object.entries(state)) h.set(k, typeof v === "number" ? String(Number(v.toPrecision(12))) : v);
    history.replaceState(null, "", "#" + h.toString());
  }
  window.explorerFlush = () => { clearTimeout(hashTimer); writeHashNow(); };
  // every key the page reads is noted, so one it never reads (a typo, another page's
  // design number) is said with the refused values instead of vanishing
  const addressed = readHash(), readKeys = new Set();
  const initial = new Proxy(addressed, {get: (o, k) => { readKeys.add(k); return o[k]; }});

  // ================================================================ LogCA
  const L = DATA.logca;
  const models = L ? L.models.map((m) => Object.assign({}, m)) : [];
  const ignored = [];            // values in the address that the checks refuse
  const fromHash = (key, check) => {
    if (initial[key] === undefined) return undefined;
    const problem = check(initial[key].trim(), Number(initial[key]));
    if (problem) { ignored.push(`${key} = ${initial[key]} from the address (${problem})`); return undefined; }
    return Number(initial[key]);
  };
  let current = 0;
  const invalid = {};            // key -> message, for the edited model
  const unit = () => models[current].unit === "seconds" ? "s" : "cycles";
  const specs = {
    L: {name: "L", label: "L, interface latency", log: true, lo: 1e-9, hi: 1e9, check: number(1e-100, 1e100, true), unitf: (m) => m.latency === "dependent" ? unit() + "/B" : unit()},
    o: {name: "o", label: "o, offload overhead", log: true, lo: 1e-9, hi: 1e9, check: number(1e-100, 1e100, true), unitf: () => unit()},
    C: {name: "C", label: "C, host time per byte", log: true, lo: 1e-12, hi: 1e6, check: number(1e-100, 1e100, false), unitf: () => unit() + "/B"},
    A: {name: "A", label: "A, acceleration", log: true, lo: 0.1, hi: 1e4, check: number(1e-100, 1e100, false), unitf: () => "×"},
    beta: {name: "β", label: "β, complexity exponent", log: false, lo: 0.3, hi: 2, step: 0.01, check: number(0.001, 100, false), unitf: () => "(T0 ∝ g^β)"},
  };
  // a fitted model's own terms (logca fit --select): the kernel's floor, the accelerator's
  // exponent β_A and the host's per-call constant, editable like the paper's parameters
  if (models.some(extended)) {
    if (models.some((m) => m.floor)) specs.floor = {name: "floor", label: "floor, the kernel's least time", log: true, lo: 1e-9, hi: 1e9, check: number(1e-100, 1e100, true), unitf: () => unit()};
    if (models.some((m) => m.beta_A !== undefined && m.beta_A !== null)) specs.beta_A = {name: "β_A", label: "β_A, the accelerator's exponent", log: false, lo: 0.3, hi: 2, step: 0.01, check: number(0.001, 100, false), unitf: () => "(kernel ∝ g^β_A)"};
    if (models.some((m) => m.c0)) specs.c0 = {name: "c0", label: "c0, host per-call constant", log: true, lo: 1e-9, hi: 1e9, check: number(1e-100, 1e100, true), unitf: () => unit()};
  }
  const valueOf = (m, k) => m[k] === undefined || m[k] === null ? (k === "beta_A" ? m.beta : 0) : m[k];
  const controls = {};
  if (L) {
    const sel = $("logca-model");
    models.forEach((m, i) => { const o = document.createElement("option"); o.value = i; o.textContent = m.name; sel.appendChild(o); });
    models.forEach((m, i) => {
      for (const k of ["L", "o", "C", "A", "beta"]) {
        const v = fromHash(k + i, specs[k].check);
        if (v !== undefined) m[k] = v;
      }
      if (initial["latency" + i] === "dependent" || initial["latency" + i] === "independent") m.latency = initial["latency" + i];
    });
    if (initial.m !== undefined && models[Number(initial.m)]) current = Number(initial.m);
    sel.value = current;
    for (const k of Object.keys(specs)) {
      const s = specs[k];
      controls[k] = control($("logca-controls"), Object.assign({key: k, unit: s.unitf(models[current])}, s), (key, v, msg) => {
        if (v === null) { invalid[key] = msg; } else { delete invalid[key]; models[current][key] = v; }
        drawLogca();
      });
    }
    const latency = $("logca-latency");
    latency.addEventListener("change", () => { models[current].latency = latency.value; drawLogca(); });
    const at = control($("logca-at-box"), {key: "at", name: "size", label: "size for advice", log: true, lo: 1, hi: 2 ** 40, unit: "B", check: number(1, 2 ** 64, false)}, (key, v, msg) => {
      if (v === null) invalid.at = msg; else { delete invalid.at; L.at = v; }
      drawLogca();
    });
    const savedAt = fromHash("at", number(1, 2 ** 64, false));
    if (savedAt !== undefined) L.at = savedAt;
    at.set(L.at);
    const load = () => {
      const m = models[current];
      for (const k of Object.keys(controls)) controls[k].set(valueOf(m, k));
      for (const k of Object.keys(specs)) document.querySelector(`#in-${k} + .unit`).textContent = specs[k].unitf(m);
      latency.value = m.latency;
    };
    sel.addEventListener("change", () => { current = Number(sel.value); for (const k of Object.keys(invalid)) if (k !== "at") delete invalid[k]; document.querySelectorAll("#logca .error").forEach((e) => { e.textContent = ""; }); load(); drawLogca(); });
    load();
  }

  function drawLogca() {
    const t0 = performance.now();
    const m = models[current];
    for (const k of Object.keys(specs)) document.querySelector(`#in-${k} + .unit`).textContent = specs[k].unitf(m);
    const problems = Object.values(invalid);
    $("logca-status").textContent = problems.length ? "Not redrawn: " + problems.join("; ") + ". The chart shows the last valid settings." : "";
    if (problems.length) return;
    const gs = grid(L.range[0], L.range[1], L.points);
    const curves = [];
    models.forEach((mm, i) => {
      for (const gv of gs) curves.push({g: gv, s: speedup(mm, gv), design: mm.name, width: i === current ? 3 : 1.5});
    });
    const g1 = metric(m, "g1"), gh = metric(m, "g_half"), b = bound(m), pk = peak(m);
    const colour = CHART_COLOURS[current % CHART_COLOURS.length];
    const markers = [];
    if (g1.exists) markers.push({g: g1.roots[0], s: speedup(m, g1.roots[0]), what: MARKER_NAMES[0], colour: colour});
    if (gh.exists) markers.push({g: gh.roots[0], s: speedup(m, gh.roots[0]), what: MARKER_NAMES[1], colour: colour});
    if (pk) markers.push({g: pk.granularity, s: pk.speedup, what: MARKER_NAMES[2], colour: colour});
    const bounds = [{g: gs[0], s: m.A, what: BOUND_NAMES[0]}, {g: gs[gs.length - 1], s: m.A, what: BOUND_NAMES[0]}];
    if (b.kind === "latency") for (const gv of gs) bounds.push({g: gv, s: m.C / m.L * Math.pow(gv, m.beta - 1), what: BOUND_NAMES[1]});
    const advice = advise(m, L.at, L.factor, L.threshold);
    const reg = regions(m, gs, L.factor, L.threshold);
    timings.logcaCompute.push(performance.now() - t0);
    // the optimization regions as bars under the curves, one row per parameter (§3.2, Fig. 6)
    const strips = parametersOf(m).flatMap((p) => reg[p].map(([a, c]) => ({p: p, a: a, c: c, said: `${p} limits the speedup from ${size(a)} to ${size(c)}`})));
    const [ylo, yhi] = logDomain(curves.concat(markers, bounds).map((r) => r.s), 1.5);
    chart("logca-chart", {data: {curves: curves, markers: markers, bounds: bounds, regions: strips},
                          signals: {title: m.name + ": speedup against granularity", xlo: gs[0], xhi: gs[gs.length - 1], ylo: ylo, yhi: yhi}},
          t0, timings.logca, (ms) => { $("logca-time").textContent = `updated in ${fmt(ms, 3)} ms (${L.points} points; ` +
            `the model's part ${fmt(timings.logcaCompute[timings.logcaCompute.length - 1], 3)} ms, the rest drawing)`; });
    // readouts
    const second = (r, what) => r.roots.length > 1 ? `; falls back below ${what} at ${size(r.roots[1])} (Implication 4)` : "";
    $("logca-g1").textContent = g1.exists ? size(g1.roots[0]) + second(g1, "1") : "none: " + g1.reason;
    $("logca-g1").dataset.value = g1.exists ? g1.roots[0] : "";
    $("logca-ghalf").textContent = gh.exists ? size(gh.roots[0]) + second(gh, "A/2") : "none: " + gh.reason;
    $("logca-ghalf").dataset.value = gh.exists ? gh.roots[0] : "";
    $("logca-bound").textContent = `${b.kind}-bound: speedup → ${fmt(b.limit, 4)}× (${b.expression})`;
    $("logca-peak").textContent = pk ? `${fmt(pk.speedup, 4)}× at ${size(pk.granularity)}` : "none (the curve does not turn down)";
    $("logca-advice").textContent = `at ${size(L.at)}: speedup ${fmt(advice.speedup, 4)}×, ` +
      (advice.pays ? "pays" : "does not pay") + `; bound there: ${advice.bound} (${fmt(advice.bound_value, 4)}×); ` +
      `limited by ${advice.limited_by.join(", ") || "nothing"} (10× better gains ≥ ${Math.round(L.threshold * 100)}%)`;
    $("logca-regions").innerHTML = parametersOf(m).map((p) => `<tr><td>${p}</td><td>${reg[p].length ? reg[p].map(([a, c]) => size(a) + " – " + size(c)).join("; ") : "not a bottleneck in range"}</td></tr>`).join("");
    state.m = current;
    models.forEach((mm, i) => { for (const k of ["L", "o", "C", "A", "beta"]) state[k + i] = mm[k]; state["latency" + i] = mm.latency; });
    state.at = L.at;
    writeHash();
  }

  // ================================================================ density
  const D = DATA.density;
  function drawDensity() {
    if (!D) return;
    const t0 = performance.now();
    const rho = window["rho_" + D.algorithm];
    const res = densityBound(D.layers, rho);
    const bad = D.layers.map((l) => l.problem).filter(Boolean);
    if (bad.length || res.error) {
      $("density-status").textContent = "Not redrawn: " + (bad.join("; ") || res.error) + ". The chart shows the last valid settings.";
      return;
    }
    $("density-status").textContent = "";
    $("density-bound").textContent = `${fmt(res.bound, 4)} computations/s, bottleneck layer ${res.bottleneck}`;
    $("density-bound").dataset.value = res.bound;
    D.layers.forEach((l, i) => {
      const r = res.rates[i];
      $("density-sigma-" + i).textContent = Number.isFinite(r.sigma) ? fmt(r.sigma, 4) : "unbounded";
      $("density-row-" + i).classList.toggle("bottleneck", l.name === res.bottleneck);
    });
    const shown = D.layers.map((l, i) => [l.name, res.rates[i].sigma]).filter(([, s]) => Number.isFinite(s));
    const [xlo, xhi] = logDomain(shown.map((s) => s[1]), 3);
    chart("density-chart", {data: {bars: shown.map(([layer, sigma]) => ({layer: layer, sigma: sigma, bottleneck: layer === res.bottleneck}))},
                            signals: {xlo: xlo, xhi: xhi}}, t0, timings.density);
    state.alg = D.algorithm;
    D.layers.forEach((l, i) => { state["layer" + i] = [l.size, l.bandwidth, l.latency].join(","); });
    writeHash();
  }
  if (D) {
    D.layers.forEach((l) => { if (l.bandwidth === "inf") l.bandwidth = Infinity; });
    const alg = $("density-algorithm");
    if (initial.alg && window["rho_" + initial.alg]) D.algorithm = initial.alg;
    alg.value = D.algorithm;
    alg.addEventListener("change", () => { D.algorithm = alg.value; drawDensity(); });
    const body = $("density-layers");
    D.layers.forEach((l, i) => {
      const saved = (initial["layer" + i] || "").split(",").map(Number);
      if (saved.length === 3 && Number.isFinite(saved[0]) && saved[0] >= 0 && saved[1] > 0 &&
          Number.isFinite(saved[2]) && saved[2] >= 0) [l.size, l.bandwidth, l.latency] = saved;
      else if (initial["layer" + i] !== undefined) ignored.push(`layer${i} = ${initial["layer" + i]} from the address`);
      const tr = document.createElement("tr");
      tr.id = "density-row-" + i;
      const cell = (field, what, allowInf) => `<td><input type="text" size="10" aria-label="${l.name} ${what}" data-field="${field}" data-inf="${allowInf ? 1 : 0}" value="${l[field]}"></td>`;
      tr.innerHTML = `<td>${l.name}</td>${cell("size", "size (B)", false)}${cell("bandwidth", "bandwidth (B/s)", true)}${cell("latency", "latency (s)", false)}<td id="density-sigma-${i}"></td><td class="error" role="alert"></td>`;
      body.appendChild(tr);
      tr.querySelectorAll("input").forEach((inp) => inp.addEventListener("change", () => {
        const raw = inp.value.trim(), v = /^\+?inf(inity)?$/i.test(raw) && inp.dataset.inf === "1" ? Infinity : Number(raw);
        const field = inp.dataset.field, err = tr.querySelector(".error");
        let problem = null;
        if (raw === "" || Number.isNaN(v) || (!Number.isFinite(v) && inp.dataset.inf !== "1")) problem = "must be a finite number" + (inp.dataset.inf === "1" ? " or inf" : "");
        else if (field === "bandwidth" ? v <= 0 : v < 0) problem = field === "bandwidth" ? "must be > 0" : "must be >= 0";
        const msg = problem ? `${l.name} ${field} = ${raw || "(empty)"} is invalid: ${problem}` : null;
        err.textContent = msg || ""; inp.classList.toggle("bad", !!msg);
        l.problem = msg;
        if (!msg) l[field] = v;
        drawDensity();
      }));
    });
  }

  // ================================================================ LPN interface
  const P = DATA.lpn;
  const values = {};
  function drawLpn() {
    if (!P || P.missing) return;
    const t0 = performance.now();
    const bad = Object.values(P.problems || {});
    if (bad.length) { $("lpn-status").textContent = "Not redrawn: " + bad.join("; ") + "."; return; }
    const hits = P.classes.map((c) => evalInterface(c, values));
    const k = hits.findIndex((h) => h.inside);
    if (k < 0) { $("lpn-status").textContent = "These values lie outside every input class of the interface: no formula applies."; return; }
    const r = hits[k], c = P.classes[k];
    if (!Number.isFinite(r.latency)) { $("lpn-status").textContent = "The interface has no finite value here."; return; }
    $("lpn-status").textContent = "";
    const secs = r.latency / P.frequency_hz;
    const n = P.stream_symbol ? values[P.stream_symbol] : 1;
    $("lpn-class").textContent = `${c.index}: ${c.conditions.join(" and ") || "the whole input space"}`;
    $("lpn-latency").textContent = `${fmt(r.latency, 8)} cycles = ${fmt(secs * 1e6, 5)} µs at ${fmt(P.frequency_hz / 1e6, 4)} MHz`;
    $("lpn-latency").dataset.value = r.latency;
    $("lpn-phased").textContent = `${fmt(r.phased, 8)} cycles`;
    $("lpn-phased").dataset.value = r.phased;
    $("lpn-throughput").textContent = `${fmt(n / (r.phased / P.frequency_hz), 5)} ${P.stream_unit}/s`;
    $("lpn-bottleneck").textContent = r.bottleneck;
    $("lpn-phases").innerHTML = r.phases.map((ph, i) => `<tr><td>${i + 1}</td><td>${ph.transitions}</td><td>${ph.bottleneck}</td><td>${fmt(ph.latency, 8)}</td></tr>`).join("");
    $("lpn-effective").innerHTML = r.effective.map(([t, e]) => `<tr${t === r.bottleneck ? ' class="bottleneck"' : ""}><td>${t}</td><td>${fmt(e, 8)}</td></tr>`).join("");
    document.querySelectorAll("#lpn-net g").forEach((gr) => {
      const title = gr.querySelector("title");
      gr.classList.toggle("hot", !!title && title.textContent.startsWith(r.bottleneck + ":"));
    });
    let sweep = null;
    if (P.sweep) {
      const xs = grid(Math.max(P.ranges[P.sweep][0], 1), P.ranges[P.sweep][1], 200);
      sweep = [xs, xs.map((xv) => evalInterface(c, Object.assign({}, values, {[P.sweep]: xv})))];
    }
    timings.lpnCompute.push(performance.now() - t0);
    if (P.delays.length) $("lpn-delay-warning").textContent = boxWarning(P, values);
    const say = (ms) => { $("lpn-time").textContent = `updated in ${fmt(ms, 3)} ms`; };
    if (P.sweep) {
      const [xs, ys] = sweep;
      const rows = xs.flatMap((xv, i) => [{x: xv, y: ys[i].latency, what: SWEEP_NAMES[0]}, {x: xv, y: ys[i].phased, what: SWEEP_NAMES[1]}]);
      const [ylo, yhi] = logDomain(rows.map((row) => row.y).concat([r.latency]), 1.2);
      chart("lpn-chart", {data: {sweep: rows, current: [{x: values[P.sweep], y: r.latency}]},
                          signals: {title: P.model + ": interface latency", xlo: xs[0], xhi: xs[xs.length - 1], ylo: ylo, yhi: yhi}},
            t0, timings.lpn, say);
    }
    for (const s of Object.keys(values)) state[s] = values[s];
    writeHash();
    if (!P.sweep) { timings.lpn.push(performance.now() - t0); say(timings.lpn[timings.lpn.length - 1]); }
  }
  if (P && !P.missing) {
    P.problems = {};
    for (const s of P.slider_symbols) {
      const [lo, hi] = P.ranges[s];
      const integer = s.startsWith("n_");
      const saved = fromHash(s, number(lo, hi, false, integer));
      values[s] = saved !== undefined ? saved : P.defaults[s];
      control($("lpn-controls"), {key: s, name: s, label: s, log: hi / Math.max(lo, 1e-9) > 1000, lo: Math.max(lo, 1e-9), hi: hi, step: integer ? 1 : 0.1,
        integer: integer, unit: integer ? P.stream_unit : "", check: number(lo, hi, false, integer)},
        (key, v, msg) => { if (v === null) P.problems[key] = msg; else { delete P.problems[key]; values[key] = v; } drawLpn(); }).set(values[s]);
    }
    // the model's named delays: whole cycles, within the range checked against extraction
    for (const d of P.delays) {
      const saved = fromHash(d.name, number(d.lo, d.hi, false, true));
      values[d.name] = saved !== undefined ? saved : d.start;
      control($("lpn-delays"), {key: d.name, name: d.name, label: d.name, log: false, lo: d.lo, hi: d.hi, step: 1,
        integer: true, unit: "cycles", check: number(d.lo, d.hi, false, true)},
        (key, v, msg) => { if (v === null) P.problems[key] = msg; else { delete P.problems[key]; values[key] = v; } drawLpn(); }).set(values[d.name]);
    }
  }

  // ================================================================ copy as command
  // a word as a POSIX shell reads it back: quoted when it holds anything but plain characters
  const shellWord = (s) => /^[\w@%+=:,.\/-]+$/.test(s) ? s : `'${String(s).replace(/'/g, "'\\''")}'`;
  function updateCommand() {
    const lines = [];
    if (L) {
      const m = models[current];
      const p = `--L ${fmt(m.L, 10)} --o ${fmt(m.o, 10)} --C ${fmt(m.C, 10)} --A ${fmt(m.A, 10)} --beta ${fmt(m.beta, 10)} --latency ${m.latency} --unit ${m.unit}` +
        (m.name ? ` --name ${shellWord(m.name)}` : "");
      lines.push(`accelperf logca show ${p}`);
      lines.push(`accelperf logca advise ${p} --at ${Math.round(L.at)}B`);
    }
    if (D) lines.push(`accelperf density bound --algorithm ${D.algorithm} --hierarchy ${shellWord(D.hierarchy_option || D.hierarchy)}` + (D.edited ? "   # with the edited layers in a hierarchy file" : ""));
    if (P && !P.missing) lines.push(`accelperf lpn interface ${P.model}` + delayOptions(P, values));
    $("command").value = lines.join("\n");
  }
  $("copy-command").addEventListener("click", () => {
    const box = $("command");
    box.select();
    const done = () => { $("copy-status").textContent = "copied"; };
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(box.value).then(done, () => { document.execCommand("copy"); done(); });
    else { document.execCommand("copy"); done(); }
  });
  document.querySelectorAll("#density input").forEach((i) => i.addEventListener("change", () => { if (D) D.edited = true; }));

  for (const k of Object.keys(addressed)) {
    if (!readKeys.has(k)) ignored.push(`${k} = ${addressed[k]} from the address (not a setting of this page)`);
  }
  if (ignored.length) $("ignored").textContent = "Ignored: " + ignored.join("; ") + ".";
  if (L) drawLogca();
  drawDensity();
  drawLpn();
  updateCommand();
  charts.settled().then(() => {
    timings.ready = performance.now();     // ms since navigation started: the first screen
    document.body.dataset.ready = "1";
    charts.loaded();
  });
});
