"""`accelperf demo`: the main analyses on built-in data, written as one HTML report.

Each level adds a section function here; the report lays them out in order.
"""

from __future__ import annotations

from pathlib import Path

from .logca import DEFAULT_RANGE, all_presets, kernels, preset, summary
from .logca.presets import omitted
from .outputs import write_atomic
from .report import Report
from .units import REAL_SIZES, format_crossing, format_size


def _g(value) -> str:
    """A crossing in the tables: the number and its size, or what format_crossing says
    where there is none to print (none, none within 16 EiB)."""
    if value is None or value > REAL_SIZES:
        return format_crossing(value)
    return f"{value:.4g} ({format_size(value)})"


def logca_presets_section(report: Report) -> None:
    """Every Table 5 preset with its exact metrics, and the paper's figure families."""
    from .plot.logca import speedup_figure

    sec = report.section(
        "LogCA: the ISCA'17 presets",
        "Speedup of offloading g bytes, T0/T1 (eqs. 1, 2, 8), for every device of Table 5 "
        "with the kernels of Table 4. g1 is the break-even granularity, g_A/2 where half the "
        "acceleration is reached; 'exact' is the root of the model's equation, 'paper' the "
        "closed form of eqs. 5/6 (granularity-independent latency, exact) or eqs. 11/12 "
        "(granularity-dependent latency: one Newton step, approximate unless β = 1).")
    rows, data = [], {}
    for model in all_presets():
        info = summary(model)
        data[model.name] = info.to_dict()
        g1, gh, peak = info.g1, info.g_half, info.peak
        rows.append([model.name, f"{model.beta:g}", model.latency, _g(g1.root),
                     _g(g1.closed_form), _g(gh.root), _g(gh.closed_form), info.bound.kind,
                     "—" if peak is None else
                     f"{peak.speedup:.3g} at {format_size(peak.granularity)}"])
    sec.table(["device/kernel", "β", "latency", "g1 exact (B)", "g1 paper", "g_A/2 exact",
               "g_A/2 paper", "bound", "peak speedup"], rows,
              caption="Metrics of every Table 5 preset (granularities in bytes)")
    sec.paragraph("Not in the table: " + "; ".join(f"{k}: {v}" for k, v in omitted().items())
                  + ".")
    sec.paragraph(
        "Read literally as cycles per byte, the discrete GPU's latency L = 3000 gives AES and "
        "radix sort a computational intensity C/L below 1, so the model says they never break "
        "even within any realistic size, whereas the paper's Figs. 7 and 9a show them breaking "
        "even: the unit of that table entry is not cycles per byte. The presets keep the "
        "printed numbers and report what they imply.")
    report.data(sec, data, "logca-presets", "every preset's parameters and metrics (JSON)")

    aes = [m for m in all_presets() if m.name.endswith("/aes") and not m.dependent]
    report.figure(sec, speedup_figure(aes, *DEFAULT_RANGE, title="AES on the on-chip crypto "
                                      "accelerators (cf. ISCA'17 Fig. 7)"),
                  "logca-aes", "AES speedup with g1 (circles) and g_A/2 (squares; a ring "
                  "marks a second design at nearly the same size); dashed: A")
    report.figure(sec, speedup_figure(preset("ultrasparc-t2", "aes"), *DEFAULT_RANGE,
                                      title="UltraSPARC T2, AES (cf. ISCA'17 Figs. 3 and 4a)"),
                  "logca-ultrasparc-t2-aes",
                  "One curve with its bounds: A (dashed) and the overhead bound (dotted)")
    report.figure(sec, speedup_figure(preset("apu", "radix-sort"), 16.0, float(2**32),
                                      title="APU, radix sort: sub-linear work, growing latency "
                                            "(Implication 4)"),
                  "logca-apu-radix-sort",
                  "Speedup rises, peaks (triangle) and falls; dash-dot: C/L·g^(β−1) (eq. 9)")
    gpu = [preset(d, k) for d in ("discrete-gpu", "apu") for k in ("gemm", "fft")]
    report.figure(sec, speedup_figure(gpu, *DEFAULT_RANGE, title="GPU kernels (cf. ISCA'17 "
                                      "Fig. 9b, 9c)"),
                  "logca-gpu-kernels", "GEMM and FFT on the discrete GPU and the APU")
    sec.paragraph("Kernels and their β (Table 4): "
                  + ", ".join(f"{k} {b:g}" for k, b in kernels().items()) + ".")


def logca_analysis_section(report: Report) -> None:
    """Sensitivity, optimization regions, bounds and a what-if (ISCA'17 §3, Figs. 4-6)."""
    from .logca.regions import optimization_regions
    from .logca.whatif import what_if
    from .plot.logca import speedup_figure
    from .plot.regions import regions_figure, sensitivity_figure

    sec = report.section(
        "LogCA: what to improve",
        "A parameter is a bottleneck at granularity g when improving it 10x (L and o divided, "
        "C and A multiplied) raises the speedup there by at least 20% (ISCA'17 §3.2). Region "
        "boundaries are exact roots of the gain, not grid points; the paper reads them off its "
        "powers-of-two grid, so its cut-offs are the next power of two.")
    t2 = preset("ultrasparc-t2", "aes")
    analysis = optimization_regions(t2)
    sec.table(["parameter", "present", "from", "to", "cut-off", "largest gain"],
              [[p, "yes" if r.present else "no", _g(r.start), _g(r.end), _g(r.cutoff),
                f"{r.max_gain:.1%}"] for p, r in analysis.regions.items()],
              caption="UltraSPARC T2, AES: optimization regions (bytes)")
    report.figure(sec, sensitivity_figure(t2), "logca-sensitivity-ultrasparc-t2",
                  "Each parameter improved 10x against the base curve (cf. ISCA'17 Fig. 5)")
    report.figure(sec, regions_figure(analysis), "logca-regions-ultrasparc-t2",
                  "Optimization regions with each parameter's range and cut-off (cf. Fig. 6)")
    report.data(sec, analysis.to_dict(), "logca-regions-ultrasparc-t2", "regions (JSON)")
    report.figure(sec, speedup_figure(preset("apu", "fft"), *DEFAULT_RANGE,
                                      title="Compute-bound: APU, FFT (cf. Fig. 4a)"),
                  "logca-bound-compute", "Speedup approaches A (dashed)")
    report.figure(sec, speedup_figure(preset("apu", "radix-sort"), *DEFAULT_RANGE,
                                      title="Latency-bound: APU, radix sort (cf. Fig. 4b)"),
                  "logca-bound-latency", "Speedup held under C/L·g^(β−1) (dash-dot)")
    w = what_if(preset("sparc-t3", "aes"), ["o=435", "L=500"])
    sec.table(["", "before", "after"],
              [["g1", _g(w.g1[0].root), _g(w.g1[1].root)],
               ["g_A/2", _g(w.g_half[0].root), _g(w.g_half[1].root)]] +
              [[f"speedup at {format_size(g)}", f"{a:.3g}", f"{b:.3g}"]
               for g, a, b in zip(w.samples[::4], w.speedup_before[::4], w.speedup_after[::4])],
              caption="What-if: SPARC T3 AES with SPARC T4's interface costs (o = 435, L = 500)")


def logca_answers_section(report: Report) -> None:
    """Answers rather than curves: advise at a few sizes, a design target solved backwards,
    and the speedup band when o and L are uncertain (ISCA'17 §3, CAL §5)."""
    from .logca.advise import rank
    from .logca.design import solve_design
    from .logca.uncertainty import monte_carlo, parse_parameter
    from .plot.logca import speedup_figure

    sec = report.section(
        "LogCA: does it pay at my size?",
        "`accelperf logca advise` at a few sizes for the four SPARC AES designs, ranked: the "
        "speedup, whether it pays, the bound that binds there (acceleration A, overhead "
        "C·g^β/o or latency C·g^β/L1), the parameters whose 10x improvement raises the "
        "speedup there by 20% or more, and the smallest size from which the offload pays.")
    designs = [preset(d, "aes") for d in ("ultrasparc-t2", "sparc-t3", "sparc-t4-engine",
                                          "sparc-t4-instr")]
    rows, data = [], {}
    for g in (64, 1024, 16384):
        ranked = rank(designs, g)
        data[str(g)] = [a.to_dict() for a in ranked]
        for i, a in enumerate(ranked, start=1):
            rows.append([format_size(g), i, a.model.label, f"{a.speedup:.3g}",
                         "yes" if a.pays else "no", a.bound, ", ".join(a.limited_by) or "—",
                         _g(a.break_even)])
    sec.table(["size", "rank", "design", "speedup", "pays", "bound there", "limited by",
               "pays from (B)"], rows, caption="logca advise, several designs ranked per size")
    report.data(sec, data, "logca-advise", "the advice behind the table (JSON)")
    t2 = preset("ultrasparc-t2", "aes")
    design = solve_design(t2, "g1<=64B")
    sec.table(["parameter", "now", "needed for g1 <= 64 B", "why not"],
              [[p, f"{s.current:g}", "—" if s.value is None else
                f"{s.direction} {s.value:.4g}", s.reason or ""]
               for p, s in design.solutions.items()],
              caption="logca design: UltraSPARC T2 AES, each parameter alone (exact roots)")
    uncertain = {"L": parse_parameter("L", "1500±20%"),
                 "o": parse_parameter("o", "lognormal(2.9e4, 0.2)")}
    band = monte_carlo(t2, uncertain, samples=4000, seed=0)
    report.figure(sec, speedup_figure(t2, *DEFAULT_RANGE, band=band,
                                      title="UltraSPARC T2 AES with L = 1500±20% and "
                                            "o ~ lognormal(2.9e4, 0.2)"),
                  "logca-uncertainty-band",
                  "Speedup with its 90% Monte-Carlo band (4000 draws, seed 0)")
    q1, qh = band.g1.quantiles, band.g_half.quantiles
    sec.paragraph(f"Over the draws g1 lies in {format_size(q1['p5'])}..{format_size(q1['p95'])}"
                  f" (median {format_size(q1['p50'])}) and g_A/2 in "
                  f"{format_size(qh['p5'])}..{format_size(qh['p95'])} (90% intervals).")
    report.data(sec, band.to_dict(), "logca-uncertainty-band", "the band and distributions "
                                                               "(JSON)")


def logca_case_studies_section(report: Report) -> None:
    """Both retrospective case studies of ISCA'17 §5.4 (Figs. 10 and 11)."""
    from .logca.casestudies import CASE_STUDIES, CUTOFF_COLUMNS, run_case_study
    from .plot.regions import case_study_figure

    sec = report.section(
        "LogCA case studies",
        "Each design's optimization regions on a shared granularity axis. A parameter's "
        "cut-off is where its 10x improvement stops giving 20%: overhead's region shrinking "
        "from design to design is the interface getting simpler.")
    for name in CASE_STUDIES:
        result = run_case_study(name)
        sec.table(list(CUTOFF_COLUMNS), [row.cells(_g) for row in result.cutoffs()],
                  caption=result.study.title)
        for design, why in result.omitted.items():
            sec.paragraph(f"Omitted: {design}. {why}.")
        report.figure(sec, case_study_figure(result.analyses, result.study.title),
                      f"logca-case-study-{name}", result.study.title)
        report.data(sec, result.to_dict(), f"logca-case-study-{name}", f"{name} case study (JSON)")
    sec.paragraph(
        "Where the paper's words and its Table 5 disagree, the table decides: SPARC T4's "
        "engine has L = 500 > o = 435 cycles, so a 10x lower latency does pay at small "
        "granularities and L appears in its regions, although the text says latency is "
        "absent for on-chip accelerators.")


def density_section(report: Report, probe_machine: bool = True) -> None:
    """Steffen's computational density on the SRC MAP-C and on this machine."""
    from .density import all_pairs, dot_product, hierarchy, matmul, rate_bound
    from .plot.density import density_figure

    sec = report.section(
        "Computational density against a memory hierarchy",
        "Each memory layer (local store μ, bandwidth β, latency λ) allows at most "
        "σ = ρ(μ)·β/(1 + βλ/μ) computations per second (Steffen 2007, eq. 6); the slowest "
        "layer bounds the algorithm and is its bottleneck. ρ(α) is the algorithm's "
        "computations per byte with α bytes of local store.")
    algorithms = [dot_product(4), matmul(4), all_pairs(32)]
    machines = [("SRC MAP-C (§4.1), 50 MAC units at 100 MHz", hierarchy("src-map-c"), 5e9)]
    if probe_machine:
        from .measure.memory import probe
        report.progress("probing this machine's caches and memory: read bandwidth and "
                        "latency per level (quick mode, about 10 s)")
        measured = probe(repeats=3, quick=True, progress=lambda text: report.progress(
            f"probing this machine's caches and memory: {text}"))
        machines.append((f"this machine ({measured.machine.get('cpu', '?')}), measured",
                         measured.hierarchy(), None))
        sec.table(["level", "size", "working set", "read bandwidth", "latency"],
                  [[m.level.name, format_size(m.level.size_bytes),
                    format_size(m.working_set_bytes),
                    f"{m.bandwidth_bytes_per_s / 1e9:.1f} GB/s", f"{m.latency_s * 1e9:.1f} ns"]
                   for m in measured.levels],
                  caption=f"This machine, probed just now ({measured.method}; median of "
                          f"{measured.repeats}, quick mode)")
        for warning in measured.warnings:
            sec.paragraph(f"Warning: {warning}.")
    for title, hier, ceiling in machines:
        rows, data = [], {}
        for alg in algorithms:
            result = rate_bound(alg, hier, ceiling)
            data[alg.name] = result.to_dict()
            rows.append([alg.name, alg.formula, f"{result.bound:.3g}", result.bottleneck,
                         "—" if ceiling is None else
                         f"{result.limited_by} ({result.margin:.3g}x)"])
        sec.table(["algorithm", "ρ(α)", "bound (computations/s)", "bottleneck layer",
                   "limited by"], rows, caption=title)
        slug = "src-map-c" if ceiling else "this-machine"
        report.figure(sec, density_figure(rate_bound(matmul(4), hier, ceiling),
                                          title=f"Matrix multiply on {title}"),
                      f"density-{slug}", f"ρ(α) with the layers marked, and σ per layer: "
                                         f"matrix multiply on {title}")
        report.data(sec, data, f"density-{slug}", f"{title}: every layer's σ (JSON)")
    sec.paragraph("The paper prints 0.46 G computations/s for the dot product through the "
                  "SNAP, but its own formula gives (1/8 B)·1.4 GB/s = 0.175 G; accelperf "
                  "follows the formula.")


def lpn_section(report: Report) -> None:
    """The paper's JPEG decoder on a shipped photo (picture, utilisation, PCIe in front),
    how its bottleneck moves with compression, Darwin's check, and the other accelerators."""
    from .lpn import simulate
    from .lpn.inputs import read_jpeg
    from .lpn.inputs.jpeg import SAMPLES
    from .lpn.library import build, jpeg_decoder_pcie
    from .lpn.library.darwin import darwin_latency_formula
    from .lpn.library.jpeg_decoder import DEFAULT_SAMPLE
    from .lpn.viz import net_svg

    sec = report.section(
        "Latency Petri Nets: the OSDI'24 JPEG decoder on a photograph",
        "The authors' JPEG-decoder LPN (OSDI'24 §3.3, Fig. 4), re-modelled in accelperf and "
        "equal to the authors' own simulator on all 39 of their test images. Ψ reads the "
        "JPEG file itself: one token per 8x8 block with the number of Huffman-coded AC "
        "symbols the entropy decoder reads. Transitions are coloured by utilisation; the "
        "bottleneck is the reddest.")
    report.progress("simulating the JPEG decoder on a shipped photo")
    model = build("jpeg-decoder")
    photo = read_jpeg(SAMPLES / DEFAULT_SAMPLE)
    result = simulate(model, photo)
    write_atomic(report.out / "figures" / "lpn-jpeg-decoder.svg", net_svg(model, result))
    sec.blocks.append('<figure><img src="figures/lpn-jpeg-decoder.svg" alt="JPEG decoder '
                      'LPN"><figcaption>The decoder\'s net after decoding '
                      f"{DEFAULT_SAMPLE} (red = busy)</figcaption></figure>")
    sec.table(["transition", "commits", "utilisation"],
              [[n, result.commits[n], f"{u:.1%}"] for n, u in result.utilisation.items()],
              caption=f"{DEFAULT_SAMPLE}: {photo.width}x{photo.height}, {photo.blocks} "
                      f"blocks; latency {result.latency} cycles "
                      f"({result.latency / 75e6 * 1e6:.0f} µs at the paper's 75 MHz), "
                      f"bottleneck {result.bottleneck}")
    report.data(sec, result.to_dict(), "lpn-jpeg-decoder", "the decoder's run (JSON)")
    report.progress("the same photo behind PCIe links")
    rows = [["decoder alone", result.latency, "—"]]
    for link in ("pcie-gen3-x16", "pcie-gen1-x1"):
        r = simulate(jpeg_decoder_pcie(link), photo)
        rows.append([f"behind {link}, one switch", r.latency,
                     f"+{r.latency - result.latency}"])
    sec.table(["configuration", "end-to-end latency (cycles)", "added by the link"], rows,
              caption="The whole file crosses the link (OSDI'24 §5.2.5); a block is decoded "
                      "once the chunk holding its last byte has arrived")
    rows = []
    for name in sorted(p.name for p in SAMPLES.glob("*_420.jpg")):
        blocks = read_jpeg(SAMPLES / name)
        r = simulate(model, blocks)
        mcus = blocks.blocks // 6
        rows.append([name, blocks.blocks, f"{sum(blocks.symbols) / blocks.blocks:.1f}",
                     r.latency, f"{r.latency / mcus:.0f}", r.bottleneck])
    sec.table(["shipped 4:2:0 photo", "blocks", "AC symbols per block", "latency (cycles)",
               "cycles per MCU", "bottleneck"], rows,
              caption="The bottleneck moves with compression: entropy decoding costs "
                      "3·symbols + 6 cycles per block, the IDCTs and colour conversion a "
                      "fixed 526 cycles per MCU")
    darwin = build("darwin")
    pairs = [dict(ref_len=320, query_len=128, steps=180), dict(ref_len=1000, query_len=400,
                                                               steps=999)]
    sec.table(["ref_len", "query_len", "steps", "simulated", "Fig. 6 formula"],
              [[p["ref_len"], p["query_len"], p["steps"], simulate(darwin, p).latency,
                f"{darwin_latency_formula(**p):g}"] for p in pairs],
              caption="Darwin GACT: the LPN's simulated latency against OSDI'24 Fig. 6")
    report.progress("simulating VTA, Protoacc and Menshen on their default inputs")
    rows = []
    for name in ("vta", "protoacc", "menshen"):
        m = build(name)
        r = simulate(m)
        rows.append([name, m.description, r.latency, r.total_commits, r.bottleneck])
    sec.table(["model", "what it models", "latency (cycles)", "commits", "bottleneck"], rows,
              caption="The paper's other accelerators on their shipped default inputs "
                      "(`accelperf lpn list` says what each takes)")


def interface_section(report: Report) -> None:
    """Performance interfaces (lpn2pi) of Darwin and the JPEG decoder, and their accuracy
    against simulation of the same LPN (OSDI'24 Figs. 4, 6 and Table 3)."""
    import html
    import random

    from .lpn.analysis.interfaces.accuracy import check
    from .lpn.analysis.interfaces.emit import load_module, module_source
    from .lpn.analysis.interfaces.interface import extract_interface
    from .lpn.analysis.space import default_space
    from .lpn.library import build
    from .plot.interface import accuracy_scatter

    sec = report.section(
        "Performance interfaces: latency as a formula",
        "accelperf lpn interface derives one formula per input class from the LPN itself "
        "(OSDI'24 §4.2, A.3): latency = max over transitions of commits x mean commit gap, "
        "and by phase, the sum of phases with one bottleneck each. The generated module "
        "needs only Python's standard library. Below: the latency functions of Darwin (the "
        "phases give Fig. 6) and the JPEG decoder (Fig. 4's shape), then the interfaces "
        "against simulation on generated inputs of 1,000+ blocks.")
    rng = random.Random(2)
    workloads = {
        "darwin": [{"ref_len": rng.randint(100, 2000), "query_len": 4 * rng.randint(250, 900),
                    "steps": rng.randint(100, 5000)} for _ in range(6)],
        "jpeg-decoder": [[max(1, min(63, round(rng.gauss(m, m / 4))))
                          for _ in range(6 * rng.randint(170, 400))] for m in (3, 12, 25, 40)]
                        + [[2] * 1200 + [50] * 1200],
    }
    results = {}
    for name, inputs in workloads.items():
        report.progress(f"extracting the performance interface of {name}")
        model = build(name)
        iface = extract_interface(model, default_space(model))
        source = module_source(iface, model, name, 250e6 if name == "darwin" else 75e6)
        sec.blocks.append(f"<pre>{html.escape(interface_summary(name, iface))}</pre>")
        module = load_module(source)
        results[name] = (check(model, module, inputs, phases=False),
                         check(model, module, inputs, phases=True))
    sec.table(["model", "inputs", "plain mean", "plain max", "by phase mean", "by phase max"],
              [[n, len(p.rows), f"{p.mean_error:.2%}", f"{p.max_error:.2%}",
                f"{q.mean_error:.2%}", f"{q.max_error:.2%}"] for n, (p, q) in results.items()],
              caption="Interface vs simulation (Table 3 style; the paper's are vs RTL: JPEG "
                      "7.04% / 23.39%, Darwin 0.05% / 0.06%)")
    report.figure(sec, accuracy_scatter(results), "lpn-interface-accuracy",
                  "Predicted against simulated latency, one point per input")


def interface_summary(name: str, iface) -> str:
    """Each class's formulas as a reader writes them (Python's ``max``), with its conditions
    and bottlenecks: what `accelperf lpn interface` prints, without the generated module's
    plumbing."""
    from sympy import pycode
    lines = []
    for c in iface.classes:
        conds = " and ".join(c.input_class.readable_conditions()) or "every input"
        lines += [f"# {name}, class {c.input_class.index}: {conds}",
                  *_wrapped("latency          = ", pycode(c.latency),
                            f"    # bottleneck {c.bottleneck}"),
                  *_wrapped("latency by phase = ", pycode(c.phased_latency))]
        lines += [f"    phase {k}: {' -> '.join(ph.transitions)}    # bottleneck {ph.bottleneck}"
                  for k, ph in enumerate(c.phases, 1)]
    return "\n".join(lines)


SUMMARY_COLUMNS = 110
"""Characters per line of a formula in the report's <pre> (1100 px wide, about 140
monospace characters): a longer formula wraps, indented under its first line, instead of
running off the page; a bottleneck comment follows its last line."""


def _wrapped(head: str, formula: str, comment: str = "") -> list[str]:
    """``head + formula`` in lines of at most SUMMARY_COLUMNS, broken at spaces (after a
    comma or around an operator), continuations indented under the formula; ``comment``
    after the last line."""
    import textwrap
    lines = textwrap.wrap(head + formula, SUMMARY_COLUMNS, subsequent_indent=" " * len(head),
                          break_long_words=False, break_on_hyphens=False)
    lines[-1] += comment
    return lines


def lpn_verify_section(report: Report) -> None:
    """The proved best and worst case of the 18-block JPEG space beside random inputs."""
    import random

    from .lpn import simulate
    from .lpn.analysis.space import load_space
    from .lpn.analysis.proofs.verify import latency_bound
    from .lpn.library import build
    from .plot.verify import bounds_figure

    sec = report.section(
        "Latency Petri Nets: proved bounds of the JPEG decoder (lpn verify)",
        "Over every 4:2:0 input of 18 blocks with 1..63 AC symbols each "
        "(examples/spaces/jpeg-decoder-18-blocks.toml), Z3 proves the best and the worst "
        "latency of the jpeg-decoder LPN (OSDI'24 §4.4, §5.3.4) and gives the input that "
        "attains each; accelperf simulates both witnesses. The histogram is what 300 random "
        "inputs of the same space take: sampling does not find the extremes.")
    path = Path(__file__).resolve().parents[2] / "examples" / "spaces" / \
        "jpeg-decoder-18-blocks.toml"
    if not path.is_file():          # an installed copy without the repository's examples
        sec.paragraph(f"The example space {path.name} is not part of this installation.")
        return
    model = build("jpeg-decoder")
    space = load_space(model, path)
    lower, upper = latency_bound(model, space, "min"), latency_bound(model, space, "max")
    rng = random.Random(2024)
    seen = [simulate(model, [rng.randint(1, 63) for _ in range(18)]).latency
            for _ in range(300)]
    sec.table(["case", "proved latency (cycles)", "witness (AC symbols per block)",
               "witness simulated", "seconds"],
              [[r.which, r.bound, " ".join(map(str, r.witness.input)), r.simulated,
                f"{r.seconds:.2f}"] for r in (lower, upper)],
              caption=f"random inputs: {min(seen)}..{max(seen)} cycles")
    report.figure(sec, bounds_figure(seen, lower, upper, "jpeg-decoder, 18 blocks: proved "
                                     "bounds and simulated random inputs"),
                  "lpn-verify-jpeg18", "Proved best and worst case beside 300 random inputs")
    report.data(sec, {"min": lower.to_dict(), "max": upper.to_dict(), "random": seen},
                "lpn-verify-jpeg18", "bounds, witnesses and the random latencies (JSON)")


def measured_aes_section(report: Report) -> None:
    """A short AES-NI measurement on this machine, fitted, beside the paper's Sandy Bridge."""
    from .logca.fit import fit_logca
    from .measure.crypto import MeasurementError, measure_kernel
    from .plot.fit import fit_figure

    sec = report.section(
        "LogCA fitted to this machine's AES-NI",
        "AES-128-CBC timed with `openssl speed`, once with AES-NI masked (OPENSSL_ia32cap, "
        "bit-sliced 'vpaes' code on the host) and once with it, at a few granularities "
        "(a short run: `accelperf measure aes` does the full sweep with repeats). The fit "
        "follows ISCA'17 §4. The dashed curve is the paper's Sandy Bridge AES-NI preset.")
    sizes = [16, 64, 256, 1024, 4096, 65536, 2**20]     # six or more: five parameters
    report.progress(f"measuring this machine: AES-128-CBC with and without AES-NI, "
                    f"openssl speed at {len(sizes)} sizes (about {2 * len(sizes)} s)")
    try:
        measurement = measure_kernel("aes", sizes, "cbc", "vpaes", repeats=1,
                                     progress=lambda text: report.progress(
                                         f"measuring this machine with openssl speed: {text}"))
    except MeasurementError as exc:
        sec.paragraph(f"Not measured on this machine: {exc}.")
        return
    t = measurement.timings()
    fit = fit_logca(t.granularity, t.host, t.accel,
                    latency="independent", bootstrap=50, name="this machine (fit)")
    # A and β are ratios: a "value (seconds)" column gave them a unit
    units = {"L": "s", "o": "s", "C": "s per byte^β", "A": "ratio", "beta": "exponent"}
    sec.table(["parameter", "value", "unit", "std. error", "note"],
              [[p.name, f"{p.value:.4g}", units.get(p.name, ""),
                "—" if p.stderr is None else f"{p.stderr:.2g}", p.note or ""]
               for p in fit.parameters.values()],
              caption=f"Fitted parameters; speedup error mean {fit.mean_error:.1%}, max "
                      f"{fit.max_error:.1%}")
    report.figure(sec, fit_figure(fit, extra=[preset("sandy-bridge", "aes")],
                                  title="AES-CBC on this machine: measured and fitted"),
                  "fit-this-machine-aes", "Measured speedup, the fitted LogCA curve, and the "
                                          "paper's Sandy Bridge preset (dashed)")
    report.data(sec, {"measurement": measurement.metadata, "fit": fit.to_dict()},
                "fit-this-machine-aes", "the measurement's metadata and the fit (JSON)")
    sec.notes("What this fit can and cannot tell (from `logca fit`'s checks):",
              [w + "." for w in fit.warnings])


def explorer_section(report: Report) -> None:
    """The interactive explorer (issue 25) beside the report, linked from it: the SPARC AES
    designs, the SRC MAP-C hierarchy and the JPEG decoder's interface, live in the browser."""
    from .explore import (DEFAULT_DESIGNS, LogcaPanel, build_page, density_panel, lpn_panel)

    sec = report.section(
        "Explore it yourself",
        "The same models in one interactive page that needs no network or server: drag L, o, "
        "C, A or β and see the speedup, g1, g_A/2, the bound and the advice change; edit the "
        "SRC MAP-C layers and see the density bound move; move the JPEG decoder's block "
        "count and symbols per block and see its interface's latency and bottleneck. "
        "`accelperf explore --out explorer.html` writes it for other models.")
    report.progress("extracting the JPEG decoder's interface for the explorer")
    page = build_page(LogcaPanel(tuple(preset(d, "aes") for d in DEFAULT_DESIGNS)),
                      density_panel("src-map-c"),
                      lpn_panel("jpeg-decoder", frequency_hz=75e6))
    write_atomic(report.out / "explorer.html", page)
    # its size as written: the page once carried Plotly (4.9 MB) and the text still said so
    size = len(page.encode())
    sec.blocks.append(f'<p><a href="explorer.html">Open the interactive explorer</a> '
                      f'(explorer.html, one file of {size / 1e6:.2g} MB with its charting '
                      f'code inside).</p>')


def hierarchy_section(report: Report) -> None:
    """This machine's AES offload up to four times its last-level cache (the shipped
    measurement), fitted with and without the memory hierarchy (issue 24)."""
    from importlib import resources

    from .density import hierarchy
    from .logca.hierarchy import layers_from_hierarchy
    from .logca.hierfit import fit_hierarchical
    from .measure.data import read_timings
    from .plot.fit import hierarchy_fit_figure

    shipped = resources.files("accelperf.data").joinpath("measurements")
    sec = report.section(
        "LogCA with this machine's memory hierarchy",
        "The AES offload measured in process on this machine from 16 B to 128 MiB, four times "
        "its 32 MiB last-level cache (`accelperf measure offload --in-process`, shipped as "
        "aes_offload_inprocess.csv), fitted with plain LogCA and with the cache layers that "
        "`accelperf density probe` measured (this-machine.toml): each layer adds a host and "
        "an accelerated cost per byte once the working set outgrows it, with a smooth "
        "transition; AIC chooses between the two models.")
    with resources.as_file(shipped.joinpath("aes_offload_inprocess.csv")) as data, \
            resources.as_file(shipped.joinpath("this-machine.toml")) as toml:
        t = read_timings(data, "min")
        layers = layers_from_hierarchy(hierarchy(str(toml)))
    fit = fit_hierarchical(t.granularity, t.host, t.accel, layers, t.echo, host_constant=True,
                           name="AES offload on this machine")
    rows = []
    for label, cand in (("plain LogCA", fit.plain), ("with the hierarchy", fit.hierarchical)):
        if cand is not None:
            mean, worst = fit.errors_of(cand)
            rows.append([label + (" (chosen)" if cand.kind == fit.chosen else ""),
                         f"{cand.aic:.1f}", cand.free, f"{mean:.2%}", f"{worst:.2%}"])
    sec.table(["model", "AIC", "free parameters", "mean error", "max error"], rows,
              caption="Speedup errors over the measured sizes")
    report.figure(sec, hierarchy_fit_figure(fit), "logca-hierarchy-aes-offload",
                  "Measured speedup (points), plain LogCA (dashed) and LogCA with the memory "
                  "hierarchy (solid); dotted lines where the working set fills a layer")
    report.data(sec, fit.to_dict(), "logca-hierarchy-aes-offload",
                "both fits, per-layer parameters with standard errors (JSON)")
    sec.notes("What the fit says about the layers:", [w + "." for w in fit.warnings])
    if any(w.startswith("check the measurement") for w in fit.warnings):
        # a reader took the demo's warnings about its own data for a broken demo
        sec.paragraph(
            "The \"check the measurement\" notes are the fit's sanity checks "
            "(accelperf.logca.fitsanity) on these shipped data, kept as they are: a fitted "
            "cost per byte that falls past a layer is no cache's doing (leaving a cache never "
            "halves it), so read those layers' parameters as curve fitting, not as what the "
            "cache costs. `accelperf logca fit --select` keeps a term only where it predicts "
            "sizes it was not fitted to.")


def gpu_section(report: Report) -> None:
    from .demo_gpu import gpu_section as section
    section(report)


def build_demo_report(out: str | Path, progress=None) -> Path:
    """Write the demo report into ``out`` and return the path of its index.html.

    ``progress(text)``, when given, hears each section as it starts and each step of the
    two measurements of this machine (AES-NI timed with ``openssl speed``, the memory
    probe)."""
    report = Report(out, title="accelperf demo report", progress=progress)
    logca_presets_section(report)
    logca_analysis_section(report)
    logca_answers_section(report)
    logca_case_studies_section(report)
    measured_aes_section(report)
    hierarchy_section(report)
    gpu_section(report)
    density_section(report)
    lpn_section(report)
    interface_section(report)
    lpn_verify_section(report)
    explorer_section(report)
    return report.write()
