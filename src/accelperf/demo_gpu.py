"""The demo report's GPU section (issue 36): the shipped H200 offloads, fitted with the
terms cross-validation keeps, judged on sizes left out against the neighbour interpolation,
and one kernel's speedup curve (g1 with its interval) and optimization regions."""

from __future__ import annotations

from pathlib import Path

from .report import Report

GPU_DATA = Path(__file__).resolve().parents[2] / "examples" / "measurements" / "gpu-h200"


def gpu_section(report: Report, data: Path = GPU_DATA) -> None:
    from .density import hierarchy
    from .logca.choose import choose, holdout_check
    from .logca.fit import prepare_data
    from .logca.hierarchy import layers_from_hierarchy
    from .logca.regions import hierarchical_regions
    from .logca.validation import default_workers
    from .measure.data import read_timings
    from .plot.fit import chosen_fit_figure
    from .plot.regions import regions_figure
    from .units import format_size

    sec = report.section(
        "Will my GPU pay off? Real offloads to an NVIDIA H200",
        "An elementwise scale, a sort and an fp32 GEMM offloaded from a 16-thread Xeon to an "
        "H200 over PCIe gen 5 with PyTorch, host, accelerated and copies-only runs "
        "(examples/measurements/gpu-h200/). LogCA's terms (host constant, the kernel's "
        "floor, the GPU's own exponent β_A, the host's cache layers, glibc's mmap "
        "threshold) are kept only where they lower the cross-validated speedup error. Each "
        "kernel is fitted on every other size and predicts the rest, beside the line "
        "through the two neighbouring sizes (no model) and the fit anchored at its "
        "training sizes (the model's shape pinned to the measured points).")
    if not data.is_dir():
        sec.paragraph(f"Not drawn: the measurements are not at {data} (a source checkout "
                      f"has them).")
        return
    layers = layers_from_hierarchy(hierarchy(str(data / "host-layers.toml")))
    rows, timings = [], {}
    for path in sorted(data.glob("gpu-*.csv")):
        report.progress(f"fitting {path.name} on every other size")
        t = read_timings(path)
        d = prepare_data(t.granularity, t.host, t.accel, t.echo, None, None)
        timings[path.stem] = d
        c = holdout_check(d, layers, name=path.stem, workers=default_workers())
        rows.append([path.stem, ", ".join(x.term for x in c.fit.terms if x.kept) or "plain",
                     f"{c.model.mean:.1%}", f"{c.baseline.mean:.1%}",
                     f"{c.anchored.mean:.1%}",
                     format_size(c.fit.g1.model) if c.fit.g1.model else "—",
                     format_size(c.g1_measured) if c.g1_measured else "—"])
    sec.table(["kernel", "terms kept", "held-out error", "neighbour interpolation",
               "anchored", "g1 (model)", "g1 (measured)"], rows,
              caption="Fitted on every other size, the held-out sizes predicted; measured g1 "
                      "is where the measured speedup passes 1 (log-log interpolation)")
    report.progress("fitting gpu-gemm on all sizes (with the jackknife for g1)")
    fit = choose(timings["gpu-gemm"], layers, name="fp32 GEMM on an H200",
                 workers=default_workers())
    report.figure(sec, chosen_fit_figure(fit, title="fp32 GEMM offloaded to an H200"),
                  "gpu-gemm-fit", "Measured speedup, the chosen model and g1 with its 95% "
                                  "jackknife interval")
    regions = hierarchical_regions(fit.model, lo=float(fit.granularity[0]),
                                   hi=float(fit.granularity[-1]))
    report.figure(sec, regions_figure(regions, title="fp32 GEMM on an H200: where a 10x "
                                                     "better parameter pays 20% or more"),
                  "gpu-gemm-regions", "Optimization regions (ISCA'17 Fig. 6) of the fitted "
                                      "model, the kernel's floor included")
    # the table above is of the training halves: these notes are of another fit, say which
    whole = f"fp32 GEMM fitted on all {len(fit.granularity)} sizes (the curve above)"
    sec.notes(f"Why each term was kept or left out, {whole}:",
              [f"{t.term}: {t.reason}." for t in fit.terms])
    if fit.warnings:
        sec.notes(f"What the fit flags, {whole}:", [w + "." for w in fit.warnings])
