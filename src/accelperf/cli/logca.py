"""`accelperf logca ...`: the LogCA model, its analyses and fits."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import click
from rich.table import Table

from ..errors import ModelError
from ..logca import LogCA, ModelSummary, summary
from ..logca import presets as preset_table
from ..report import dump_json
from ..units import format_size, parse_frequency, powers_of_two
from .app import cli
from .common import (
    SIZE,
    build_models,
    check_range,
    console,
    figure_path,
    fmt_g,
    model_options,
    range_options,
    single_model,
    size_or_dash,
)


@cli.group()
def logca():
    """LogCA: speedup, break-even and half-acceleration granularities, bound type."""


def _render_summary(info: ModelSummary) -> None:
    model = info.model
    params = Table(title=f"LogCA model: {model.label}", show_header=True)
    for col in ("L", "o", "C", "A", "β", "latency", "unit", "frequency"):
        params.add_column(col, justify="right")
    params.add_row(f"{model.L:g}", f"{model.o:g}", f"{model.C:g}", f"{model.A:g}",
                   f"{model.beta:g}", model.latency, model.unit,
                   "—" if model.frequency_hz is None else f"{model.frequency_hz / 1e9:g} GHz")
    console.print(params)
    metrics = Table(title="Metrics (granularity in bytes)")
    for col in ("metric", "target", "exact", "paper's closed form", "rel. diff"):
        metrics.add_column(col, justify="right")
    remarks = []
    for label, r in zip(("g1", "g_A/2", "g_A"), info.metrics.values()):
        exact = fmt_g(r.root) if r.exists else "does not exist"
        if len(r.roots) > 1:
            exact += f"\nfalls below at {fmt_g(r.roots[1])}"
        closed = "—" if r.closed_form is None else f"{r.closed_form:.6g}"
        if r.equation:
            closed += f" [{r.equation.replace(chr(39) + '17', '')}]"
        diff = r.closed_form_relative_error
        remarks += [f"[bold]{label}[/bold]: {x}" for x in (r.reason, r.note) if x]
        metrics.add_row(label, f"{r.target:g}", exact, closed,
                        "—" if diff is None else f"{diff:.2%}")
    console.print(metrics)
    for line in remarks:
        console.print(line)
    b = info.bound
    console.print(f"[bold]{b.kind}-bound[/bold]: speedup → {b.limit:.4g} "
                  f"({b.expression}, {b.equation}): {b.explanation}")
    if info.peak:
        p = info.peak
        console.print(f"[bold]peak[/bold]: speedup {p.speedup:.4g} at "
                      f"{fmt_g(p.granularity)}, falling beyond it (Implication 4)")
    console.print(f"speedup at g = 1 B (eqs. 4/10): {model.small_g_limit():.4g};  "
                  f"large-g limit: {model.large_g_limit():.4g}")


@logca.command("show")
@model_options
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def logca_show(as_json, **spec):
    """Parameters, g1, g_A/2, g_A, bound type and peak of one model."""
    models = build_models(**spec)
    if len(models) != 1:
        raise ModelError(f"--preset was given {len(models)} times: `logca show` describes "
                         f"one model (use `logca curve` to overlay several)")
    info = summary(models[0])
    if as_json:
        click.echo(dump_json(info.to_dict()))
    else:
        _render_summary(info)


@logca.command("curve")
@model_options
@click.option("--from", "lo", type=SIZE, default="16B", show_default=True,
              help="Smallest granularity.")
@click.option("--to", "hi", type=SIZE, default="32MiB", show_default=True,
              help="Largest granularity (the paper's 32MB is 32MiB).")
@click.option("--points", type=click.IntRange(2, 100_000), default=400, show_default=True,
              help="Curve points (log-spaced) in figures and CSV.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write FILE.png, FILE.svg or FILE.csv; without it, print a table.")
@click.option("--json", "as_json", is_flag=True, help="Print the curve at powers of two as JSON.")
def logca_curve(lo, hi, points, out, as_json, **spec):
    """Speedup against granularity; several --preset/--kernel pairs overlay (Figs. 3, 7)."""
    if lo >= hi:
        raise ModelError(f"--from = {lo:g} B and --to = {hi:g} B are invalid: need from < to")
    models = build_models(**spec)
    if out is not None:
        suffix = out.suffix.lower()
        if suffix == ".csv":
            from ..units import log_grid
            g = log_grid(lo, hi, points)
            out.parent.mkdir(parents=True, exist_ok=True)
            with out.open("w", newline="") as fh:
                writer = csv.writer(fh)
                writer.writerow(["granularity_bytes"] + [m.label for m in models])
                curves = [m.speedup(g) for m in models]
                for i, x in enumerate(g):
                    writer.writerow([f"{x:.10g}"] + [f"{c[i]:.10g}" for c in curves])
        elif suffix in (".png", ".svg"):
            from ..plot import save_figure
            from ..plot.logca import speedup_figure
            save_figure(speedup_figure(models, lo, hi, points=points), out)
        else:
            raise ModelError(f"--out = '{out}' is invalid: write .png, .svg or .csv")
        click.echo(f"wrote {out}", err=True)
        return
    g = powers_of_two(lo, hi)
    if as_json:
        click.echo(dump_json({"granularity_bytes": g.tolist(),
                              "speedup": {m.label: m.speedup(g).tolist() for m in models}}))
        return
    table = Table(title="speedup T0/T1")
    table.add_column("granularity", justify="right")
    for m in models:
        table.add_column(m.label, justify="right")
    for i, x in enumerate(g):
        table.add_row(format_size(x), *(f"{float(m.speedup(x)):.4g}" for m in models))
    console.print(table)


@logca.command("regions")
@model_options
@range_options
@click.option("--factor", type=float, default=10.0, show_default=True,
              help="Improvement of each parameter (L, o divided; C, A multiplied), >= 1.")
@click.option("--threshold", type=float, default=0.2, show_default=True,
              help="Speedup gain that makes a parameter a bottleneck (0.2 = 20%).")
@click.option("--samples", default="powers-of-two", show_default=True, metavar="powers-of-two|N",
              help="Granularities at which the gains are tabulated: the paper's powers of two, "
                   "or N log-spaced points. Region boundaries are exact either way.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Draw the regions chart (Fig. 6) to FILE.png or FILE.svg.")
@click.option("--sensitivity", is_flag=True,
              help="With --out, also draw Fig. 5 (each parameter improved) to FILE-sensitivity.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def logca_regions(lo, hi, factor, threshold, samples, out, sensitivity, as_json, **spec):
    """Optimization regions: where improving L, o, C or A pays (ISCA'17 §3.2)."""
    from ..logca.regions import optimization_regions
    from ..units import log_grid
    check_range(lo, hi)
    if samples == "powers-of-two":
        sample_points = None
    elif samples.isdigit() and 2 <= int(samples) <= 100_000:
        sample_points = log_grid(lo, hi, int(samples))
    else:
        raise ModelError(f"--samples = {samples!r} is invalid: 'powers-of-two' or a whole "
                         f"number of points from 2 to 100000")
    model = single_model(spec, "regions")
    out = figure_path(out)
    if sensitivity and out is None:
        raise ModelError("--sensitivity needs --out FILE.png|svg: it draws a figure")
    analysis = optimization_regions(model, factor=factor, threshold=threshold, lo=lo, hi=hi,
                                    samples=sample_points)
    if out is not None:
        from ..plot import save_figure
        from ..plot.regions import regions_figure, sensitivity_figure
        save_figure(regions_figure(analysis), out)
        click.echo(f"wrote {out}", err=True)
        if sensitivity:
            side = out.with_name(f"{out.stem}-sensitivity{out.suffix}")
            save_figure(sensitivity_figure(model, factor, lo, hi), side)
            click.echo(f"wrote {side}", err=True)
    if as_json:
        click.echo(dump_json(analysis.to_dict()))
        return
    if out is not None and not sys.stdout.isatty():
        return
    table = Table(title=f"Optimization regions of {model.label}: {factor:g}x improvement, "
                        f">= {threshold:.0%} speedup gain")
    for col in ("parameter", "present", "from", "to", "cut-off", "largest gain"):
        table.add_column(col, justify="right")
    for p, r in analysis.regions.items():
        table.add_row(p, "yes" if r.present else "no", size_or_dash(r.start),
                      size_or_dash(r.end), size_or_dash(r.cutoff),
                      f"{r.max_gain:.1%} at {format_size(r.max_gain_at)}")
    console.print(table)
    console.print("bands: " + ", ".join(
        f"[bold]{b.parameters or 'none'}[/bold] {format_size(b.start)}–{format_size(b.end)}"
        for b in analysis.bands))


@logca.command("bounds")
@model_options
@range_options
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Draw the curve with its bound lines (Fig. 4) to FILE.png or FILE.svg.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def logca_bounds(lo, hi, out, as_json, **spec):
    """Bound type (compute or latency) and the asymptotes that cap the speedup (§3.1)."""
    from ..logca import bound_type
    check_range(lo, hi)
    model = single_model(spec, "bounds")
    out = figure_path(out)
    bound = bound_type(model)
    if out is not None:
        from ..plot import save_figure
        from ..plot.logca import speedup_figure
        save_figure(speedup_figure(model, lo, hi, title=f"Bounds of {model.label}: "
                                                         f"{bound.kind}-bound"), out)
        click.echo(f"wrote {out}", err=True)
    info = {"bound": bound.kind, **bound.to_dict(), "small_g_limit": model.small_g_limit(),
            "large_g_limit": model.large_g_limit(),
            "computational_intensity": model.computational_intensity}
    if as_json:
        click.echo(dump_json(info))
    else:
        console.print(f"[bold]{bound.kind}-bound[/bold]: speedup → {bound.limit:.4g} "
                      f"({bound.expression}, {bound.equation}). {bound.explanation}.")


@logca.command("whatif")
@model_options
@click.option("--set", "changes", multiple=True, metavar="NAME=VALUE",
              help="A change: o=435, L=/10 (divide), A=*2 (multiply), latency=dependent.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Draw both curves to FILE.png or FILE.svg.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def logca_whatif(changes, out, as_json, **spec):
    """Speedup, g1 and g_A/2 before and after changing parameters, side by side."""
    from ..logca.whatif import what_if
    model = single_model(spec, "whatif")
    out = figure_path(out)
    result = what_if(model, changes)
    if out is not None:
        from ..plot import save_figure
        from ..plot.regions import comparison_figure
        save_figure(comparison_figure(result.before, result.after, 16.0, float(2**25),
                                      title="What-if: " + ", ".join(changes)), out)
        click.echo(f"wrote {out}", err=True)
    if as_json:
        click.echo(dump_json(result.to_dict()))
        return
    table = Table(title=f"What-if for {model.label}: " + ", ".join(
        f"{k} → {v:g}" if isinstance(v, float) else f"{k} → {v}"
        for k, v in result.changes.items()))
    for col in ("", "before", "after", "change"):
        table.add_column(col, justify="right")
    for label, (a, b) in (("g1", result.g1), ("g_A/2", result.g_half)):
        ratio = "—" if a.root is None or b.root is None else f"{b.root / a.root:.3g}x"
        table.add_row(label, fmt_g(a.root) if a.exists else "does not exist",
                      fmt_g(b.root) if b.exists else "does not exist", ratio)
    for i in range(0, len(result.samples), 3):
        g = result.samples[i]
        sb, sa = result.speedup_before[i], result.speedup_after[i]
        table.add_row(f"speedup at {format_size(g)}", f"{sb:.4g}", f"{sa:.4g}",
                      f"{sa / sb:.3g}x")
    console.print(table)


@logca.command("case-study")
@click.argument("name", type=click.Choice(["crypto", "gpu"]))
@range_options
@click.option("--factor", type=float, default=10.0, show_default=True)
@click.option("--threshold", type=float, default=0.2, show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Draw one region chart per design to FILE.png or FILE.svg.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def logca_case_study(name, lo, hi, factor, threshold, out, as_json):
    """The paper's case studies: SPARC crypto evolution, GPU memory interfaces (§5.4)."""
    from ..logca.casestudies import CUTOFF_COLUMNS, run_case_study
    check_range(lo, hi)
    out = figure_path(out)
    result = run_case_study(name, factor, threshold, lo, hi)
    if out is not None:
        from ..plot import save_figure
        from ..plot.regions import case_study_figure
        save_figure(case_study_figure(result.analyses, result.study.title), out)
        click.echo(f"wrote {out}", err=True)
    if as_json:
        click.echo(dump_json(result.to_dict()))
        return
    table = Table(title=f"{result.study.title}: cut-off granularities")
    for col in CUTOFF_COLUMNS:
        table.add_column(col, justify="left" if col in ("design", "bands") else "right")
    for row in result.cutoffs():
        table.add_row(*row.cells())
    console.print(table)
    for design, why in result.omitted.items():
        console.print(f"omitted: {design} — {why}")


@logca.command("fit")
@click.argument("data", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--latency", type=click.Choice(["independent", "dependent", "auto"]),
              default="auto", show_default=True)
@click.option("--frequency", type=str, default=None, metavar="3.65GHz|auto",
              help="Report parameters in cycles of this clock ('auto': the clock measured "
                   "with the data).")
@click.option("--statistic", type=click.Choice(["median", "min"]), default="min",
              show_default=True,
              help="Which of the repeats' statistics to fit (a shared machine only ever "
                   "slows a run down, so the minimum is the default).")
@click.option("--bootstrap", type=click.IntRange(0, 10_000), default=200, show_default=True,
              help="Resamples for the g1 / g_A/2 uncertainty.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Draw Fig. 7 (measured points, fitted curve, g1, g_A/2) to .png or .svg.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def logca_fit(data, latency, frequency, statistic, bootstrap, out, as_json):
    """Fit L, o, C, A and β to measured host and accelerated times (ISCA'17 §4)."""
    from ..logca.fit import fit_logca
    from ..measure.data import read_timings
    out = figure_path(out)
    timings = read_timings(data, statistic)
    if frequency == "auto":
        freq = timings.core_clock_hz
        if freq is None:
            raise ModelError(f"--frequency auto: '{data}' records no core clock; give one, "
                             f"e.g. --frequency 3.65GHz")
    else:
        freq = None if frequency is None else parse_frequency(frequency, "--frequency")
    result = fit_logca(timings.granularity, timings.host, timings.accel, timings.echo,
                       latency=latency, frequency_hz=freq, bootstrap=bootstrap,
                       name=f"fit of {Path(data).name}")
    if out is not None:
        from ..plot import save_figure
        from ..plot.fit import fit_figure
        save_figure(fit_figure(result), out)
        click.echo(f"wrote {out}", err=True)
    if as_json:
        click.echo(dump_json(result.to_dict()))
        return
    unit = result.model.unit
    table = Table(title=f"LogCA fit of {data} ({result.model.latency} latency, {unit})")
    for col in ("parameter", "value", "std. error", "note"):
        table.add_column(col, justify="right" if col != "note" else "left")
    for p in result.parameters.values():
        table.add_row(p.name, f"{p.value:.5g}", "—" if p.stderr is None else f"{p.stderr:.3g}",
                      p.note or ("fixed" if not p.vary else ""))
    console.print(table)
    console.print(f"speedup error: mean {result.mean_error:.2%}, max {result.max_error:.2%} "
                  f"over {len(result.granularity)} granularities")
    for label, c in (("g1", result.g1), ("g_A/2", result.g_half)):
        ci = "" if c.interval is None else \
            f" (95% {format_size(c.interval[0])}..{format_size(c.interval[1])})"
        console.print(f"{label}: measured {size_or_dash(c.measured)}, model "
                      f"{size_or_dash(c.model)}{ci}")
    for w in result.warnings:
        console.print(f"[yellow]warning:[/yellow] {w}")


@logca.command("presets")
@click.option("--json", "as_json", is_flag=True)
def logca_presets(as_json):
    """The built-in devices (ISCA'17 Table 5) and kernels (Table 4)."""
    devs = preset_table.devices()
    if as_json:
        click.echo(dump_json({"devices": {n: {"title": d.title, "kernels": list(d.kernels)}
                                          for n, d in devs.items()},
                              "kernels": preset_table.kernels(),
                              "omitted": preset_table.omitted()}))
        return
    table = Table(title="LogCA presets (ISCA'17 Tables 4 and 5)")
    for col in ("device", "kernels", "latency", "host clock", "description"):
        table.add_column(col)
    for d in devs.values():
        table.add_row(d.name, ", ".join(d.kernels), d.latency, f"{d.frequency_hz / 1e9:g} GHz",
                      d.title)
    console.print(table)
    for name, why in preset_table.omitted().items():
        console.print(f"[dim]not available: {name} — {why}[/dim]")


