"""The `accelperf` command. Parses, calls the models, renders; computes nothing itself.

Every error a user can cause ends as one line on stderr and exit status 2.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from . import __version__
from .errors import ModelError
from .logca import LogCA, preset, summary
from .logca import presets as preset_table
from .report import dump_json
from .units import format_size, parse_frequency, parse_size, powers_of_two

console = Console()


# ---------------------------------------------------------------------- option types
class SizeType(click.ParamType):
    name = "size"

    def convert(self, value, param, ctx):
        if isinstance(value, float):
            return value
        try:
            return parse_size(value, name=param.opts[0] if param else "size")
        except ModelError as exc:
            self.fail(str(exc), param, ctx)


class FrequencyType(click.ParamType):
    name = "frequency"

    def convert(self, value, param, ctx):
        if isinstance(value, float):
            return value
        try:
            return parse_frequency(value, name=param.opts[0] if param else "frequency")
        except ModelError as exc:
            self.fail(str(exc), param, ctx)


SIZE, FREQUENCY = SizeType(), FrequencyType()


def model_options(func):
    """Options that describe one or several LogCA models."""
    options = [
        click.option("--preset", "presets", multiple=True, metavar="DEVICE",
                     help="A Table 5 device (repeat to overlay several)."),
        click.option("--kernel", "kernels", multiple=True, metavar="KERNEL",
                     help="A Table 4 kernel, one per --preset (or one for all)."),
        click.option("--L", "L", type=float, help="Latency (cycles, or cycles/B if dependent)."),
        click.option("--o", "o", type=float, help="Overhead per offload (cycles)."),
        click.option("--C", "C", type=float, help="Computational index (cycles/B)."),
        click.option("--A", "A", type=float, help="Acceleration (> 1 for g1)."),
        click.option("--beta", type=float, help="Complexity exponent β (default 1)."),
        click.option("--latency", type=click.Choice(["independent", "dependent"]),
                     help="L1(g) = L or L·g."),
        click.option("--unit", type=click.Choice(["cycles", "seconds"]),
                     help="Unit of L, o and C (presets are converted)."),
        click.option("--frequency", type=FREQUENCY, help="Host clock, e.g. 3.4GHz."),
        click.option("--name", help="Label for tables and legends."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def build_models(presets, kernels, L, o, C, A, beta, latency, unit, frequency, name) -> list[LogCA]:
    """Models from preset names and/or explicit parameters (explicit ones override presets)."""
    explicit = {k: v for k, v in dict(L=L, o=o, C=C, A=A, beta=beta, latency=latency,
                                      frequency_hz=frequency, name=name).items() if v is not None}
    if presets:
        if not kernels:
            raise ModelError("--kernel is missing: give one --kernel per --preset "
                             "(valid kernels: " + ", ".join(preset_table.kernels()) + ")")
        if len(kernels) not in (1, len(presets)):
            raise ModelError(f"--kernel was given {len(kernels)} times for {len(presets)} "
                             f"--preset values: give one per --preset, or one for all")
        pairs = zip(presets, kernels if len(kernels) > 1 else kernels * len(presets))
        models = [preset(p, k) for p, k in pairs]
        models = [m.with_parameters(**explicit) if explicit else m for m in models]
        return [m.to_seconds() if unit == "seconds" else m for m in models]
    if kernels:
        raise ModelError("--kernel needs --preset: a kernel is looked up on a Table 5 device")
    missing = [f"--{k}" for k in ("L", "o", "C", "A") if explicit.get(k) is None]
    if missing:
        raise ModelError(f"missing {', '.join(missing)}: give --preset DEVICE --kernel KERNEL "
                         f"or all of --L --o --C --A")
    return [LogCA(L=L, o=o, C=C, A=A, beta=1.0 if beta is None else beta,
                  latency=latency or "independent", unit=unit or "cycles",
                  frequency_hz=frequency, name=name)]


# ---------------------------------------------------------------------- the command tree
@click.group(context_settings=dict(help_option_names=["-h", "--help"]))
@click.version_option(__version__, prog_name="accelperf")
def cli():
    """Will offloading this work to that accelerator pay off, by how much, and what limits it?"""


@cli.group()
def logca():
    """LogCA: speedup, break-even and half-acceleration granularities, bound type."""


def _fmt_g(value) -> str:
    return "—" if value is None else f"{value:.6g} B ({format_size(value)})"


def _render_summary(model: LogCA, info: dict) -> None:
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
    for key, label in (("g1", "g1"), ("g_half", "g_A/2"), ("g_A", "g_A")):
        r = info[key]
        exact = _fmt_g(r["value"]) if r["exists"] else "does not exist"
        if len(r["crossings"]) > 1:
            exact += f"\nfalls below at {_fmt_g(r['crossings'][1])}"
        closed = "—" if r["closed_form"] is None else f"{r['closed_form']:.6g}"
        if r["equation"]:
            closed += f" [{r['equation'].replace(chr(39) + '17', '')}]"
        diff = r["closed_form_relative_error"]
        remarks += [f"[bold]{label}[/bold]: {x}" for x in (r["reason"], r["note"]) if x]
        metrics.add_row(label, f"{r['target_speedup']:g}", exact, closed,
                        "—" if diff is None else f"{diff:.2%}")
    console.print(metrics)
    for line in remarks:
        console.print(line)
    b = info["bound_detail"]
    console.print(f"[bold]{b['kind']}-bound[/bold]: speedup → {b['limit']:.4g} "
                  f"({b['expression']}, {b['equation']}): {b['explanation']}")
    if info["peak"]:
        p = info["peak"]
        console.print(f"[bold]peak[/bold]: speedup {p['speedup']:.4g} at "
                      f"{_fmt_g(p['granularity'])}, falling beyond it (Implication 4)")
    lim = info["limits"]
    console.print(f"speedup at g = 1 B (eqs. 4/10): {lim['small_g']:.4g};  "
                  f"large-g limit: {lim['large_g']:.4g}")


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
        click.echo(dump_json(info))
    else:
        _render_summary(models[0], info)


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
            from .units import log_grid
            g = log_grid(lo, hi, points)
            out.parent.mkdir(parents=True, exist_ok=True)
            with out.open("w", newline="") as fh:
                writer = csv.writer(fh)
                writer.writerow(["granularity_bytes"] + [m.label for m in models])
                curves = [m.speedup(g) for m in models]
                for i, x in enumerate(g):
                    writer.writerow([f"{x:.10g}"] + [f"{c[i]:.10g}" for c in curves])
        elif suffix in (".png", ".svg"):
            from .plot import save_figure
            from .plot.logca import speedup_figure
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


def _single_model(spec, command: str) -> LogCA:
    models = build_models(**spec)
    if len(models) != 1:
        raise ModelError(f"--preset was given {len(models)} times: `logca {command}` analyses "
                         f"one design")
    return models[0]


def _figure_path(out: Path | None) -> Path | None:
    if out is not None and out.suffix.lower() not in (".png", ".svg"):
        raise ModelError(f"--out = '{out}' is invalid: figures are written as .png or .svg")
    return out


def _size_or_dash(value) -> str:
    return "—" if value is None else format_size(value)


def range_options(func):
    func = click.option("--to", "hi", type=SIZE, default="32MiB", show_default=True,
                        help="Largest granularity.")(func)
    return click.option("--from", "lo", type=SIZE, default="16B", show_default=True,
                        help="Smallest granularity.")(func)


def _check_range(lo: float, hi: float) -> None:
    if lo >= hi:
        raise ModelError(f"--from = {lo:g} B and --to = {hi:g} B are invalid: need from < to")


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
    from .logca.regions import optimization_regions
    from .units import log_grid
    _check_range(lo, hi)
    if samples == "powers-of-two":
        sample_points = None
    elif samples.isdigit() and 2 <= int(samples) <= 100_000:
        sample_points = log_grid(lo, hi, int(samples))
    else:
        raise ModelError(f"--samples = {samples!r} is invalid: 'powers-of-two' or a whole "
                         f"number of points from 2 to 100000")
    model = _single_model(spec, "regions")
    out = _figure_path(out)
    if sensitivity and out is None:
        raise ModelError("--sensitivity needs --out FILE.png|svg: it draws a figure")
    analysis = optimization_regions(model, factor=factor, threshold=threshold, lo=lo, hi=hi,
                                    samples=sample_points)
    if out is not None:
        from .plot import save_figure
        from .plot.regions import regions_figure, sensitivity_figure
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
        table.add_row(p, "yes" if r.present else "no", _size_or_dash(r.start),
                      _size_or_dash(r.end), _size_or_dash(r.cutoff),
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
    from .logca import bound_type
    _check_range(lo, hi)
    model = _single_model(spec, "bounds")
    out = _figure_path(out)
    bound = bound_type(model)
    if out is not None:
        from .plot import save_figure
        from .plot.logca import speedup_figure
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
    from .logca.whatif import what_if
    model = _single_model(spec, "whatif")
    out = _figure_path(out)
    result = what_if(model, changes)
    if out is not None:
        from .plot import save_figure
        from .plot.regions import comparison_figure
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
        table.add_row(label, _fmt_g(a.root) if a.exists else "does not exist",
                      _fmt_g(b.root) if b.exists else "does not exist", ratio)
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
    from .logca.casestudies import run_case_study
    _check_range(lo, hi)
    out = _figure_path(out)
    result = run_case_study(name, factor, threshold, lo, hi)
    if out is not None:
        from .plot import save_figure
        from .plot.regions import case_study_figure
        save_figure(case_study_figure(result.analyses, result.study.title), out)
        click.echo(f"wrote {out}", err=True)
    if as_json:
        click.echo(dump_json(result.to_dict()))
        return
    table = Table(title=f"{result.study.title}: cut-off granularities")
    table.add_column("design")
    for p in ("L", "o", "C", "A"):
        table.add_column(f"{p} cut-off", justify="right")
    table.add_column("bands")
    for row, analysis in zip(result.cutoffs(), result.analyses):
        cells = []
        for p in ("L", "o", "C", "A"):
            r = row[p]
            cells.append("absent" if not r["present"] else
                         "whole range" if r["cutoff"] is None else format_size(r["cutoff"]))
        table.add_row(row["design"], *cells,
                      " | ".join(b.parameters or "none" for b in analysis.bands))
    console.print(table)
    for design, why in result.omitted.items():
        console.print(f"omitted: {design} — {why}")


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


@cli.group()
def density():
    """Computational density: the rate a memory hierarchy allows an algorithm (Steffen)."""


@density.command("bound")
@click.option("--algorithm", "algo", required=True, metavar="NAME|FORMULA",
              help="dot, matmul, allpairs, or a formula in alpha and s "
                   "('rho = sqrt(alpha)/(2*s)**1.5' or 'eta = ...').")
@click.option("--operand-bytes", type=float, default=None,
              help="Operand size s in bytes (default 4; 32 for allpairs).")
@click.option("--hierarchy", "hier", default="src-map-c", show_default=True,
              metavar="NAME|FILE.toml", help="A built-in hierarchy or a TOML file.")
@click.option("--compute-ceiling", type=float, default=None,
              help="Peak computations/s of the functional units (units x clock).")
@click.option("--problem-bytes", type=float, default=None, help="Total input size M (bytes).")
@click.option("--computations", type=float, default=None, help="Total computations Z.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Draw ρ(α) with the layers and σ per layer to FILE.png or FILE.svg.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def density_bound(algo, operand_bytes, hier, compute_ceiling, problem_bytes, computations,
                  out, as_json):
    """The highest rate each memory layer allows, the bound and its bottleneck layer."""
    from .density import algorithm, hierarchy, rate_bound
    out = _figure_path(out)
    alg = algorithm(algo, operand_bytes)
    if problem_bytes is not None or computations is not None:
        alg = alg.with_problem(problem_bytes, computations)
    result = rate_bound(alg, hierarchy(hier), compute_ceiling)
    if out is not None:
        from .plot import save_figure
        from .plot.density import density_figure
        save_figure(density_figure(result), out)
        click.echo(f"wrote {out}", err=True)
    if as_json:
        click.echo(dump_json(result.to_dict()))
        return
    table = Table(title=f"{alg.name} ({alg.formula}) on {result.hierarchy.name}")
    for col in ("layer", "μ", "β (B/s)", "λ (s)", "ρ(μ) (1/B)", "σ (1/s)", "βλ/μ"):
        table.add_column(col, justify="right")
    for r in result.layers:
        l = r.layer
        mark = " ◀" if r.name == result.bottleneck else ""
        table.add_row(r.name + mark, format_size(l.size_bytes, binary=False),
                      f"{l.bandwidth_bytes_per_s:.3g}", f"{l.latency_s:.3g}",
                      "—" if r.rho is None else f"{r.rho:.4g}",
                      "no limit" if r.sigma == float("inf") else f"{r.sigma:.4g}",
                      f"{r.latency_factor:.3g}")
    console.print(table)
    line = (f"bound: [bold]{result.bound:.4g}[/bold] computations/s, bottleneck "
            f"[bold]{result.bottleneck}[/bold]")
    if result.compute_ceiling is not None:
        line += (f"; compute ceiling {result.compute_ceiling:.4g}/s: "
                 f"[bold]{result.limited_by}-bound[/bold] by a factor {result.margin:.3g}")
    console.print(line)


@density.command("probe")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="TOML file for the measured hierarchy (use it with --hierarchy FILE).")
@click.option("--repeats", type=click.IntRange(1, 100), default=5, show_default=True,
              help="Repeats per measurement; the median is reported.")
@click.option("--quick", is_flag=True, help="Short runs and a 256 MiB memory working set.")
@click.option("--json", "as_json", is_flag=True, help="Also print the measurements as JSON.")
def density_probe(out, repeats, quick, as_json):
    """Measure this machine's caches and memory: sizes, read bandwidth, latency."""
    from rich.progress import Progress
    from .measure.memory import cache_levels, probe
    if out.suffix.lower() != ".toml":
        raise ModelError(f"--out = '{out}' is invalid: the hierarchy is written as .toml")
    steps = 2 * len(cache_levels())
    with Progress(console=Console(stderr=True), transient=True,
                  disable=not sys.stderr.isatty()) as bar:
        task = bar.add_task("probing", total=steps)
        result = probe(repeats=repeats, quick=quick,
                       progress=lambda text, advance: bar.update(task, description=text,
                                                                 advance=advance))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(result.to_toml(), encoding="utf-8")
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    if as_json:
        click.echo(dump_json({"method": result.method, "repeats": result.repeats,
                              "warnings": result.warnings, "levels": [
                                  {"level": m.level.name, "size_bytes": m.level.size_bytes,
                                   "working_set_bytes": m.working_set_bytes,
                                   "bandwidth_bytes_per_s": m.bandwidth_bytes_per_s,
                                   "bandwidth_spread": list(m.bandwidth_spread),
                                   "latency_s": m.latency_s,
                                   "latency_spread": list(m.latency_spread)}
                                  for m in result.levels],
                              "layers": [l.to_dict() for l in result.hierarchy().layers]}))
        return
    table = Table(title=f"Memory hierarchy of this machine ({result.method.split(' (')[0]}, "
                        f"median of {repeats})")
    for col in ("level", "size", "working set", "read bandwidth", "latency"):
        table.add_column(col, justify="right")
    for m in result.levels:
        table.add_row(m.level.name, format_size(m.level.size_bytes),
                      format_size(m.working_set_bytes),
                      f"{m.bandwidth_bytes_per_s / 1e9:.1f} GB/s",
                      f"{m.latency_s * 1e9:.1f} ns")
    console.print(table)
    click.echo(f"wrote {out}", err=True)


@cli.group()
def lpn():
    """Latency Petri Nets: simulate an accelerator's micro-architecture, draw it."""


def _run_lpn(model, user_input, max_time=None, max_commits=None, trace=False):
    from .lpn import SimulationError, simulate
    try:
        return simulate(model, user_input, max_time=max_time, max_commits=max_commits,
                        trace=trace)
    except SimulationError as exc:
        click.echo(exc.report, err=True)
        raise SystemExit(1) from None


@lpn.command("list")
def lpn_list():
    """The library's example accelerators."""
    from .lpn.library import LIBRARY
    table = Table(title="LPN library models")
    table.add_column("name")
    table.add_column("description")
    for name, builder in LIBRARY.items():
        table.add_row(name, builder().description)
    console.print(table)


@lpn.command("simulate")
@click.argument("model_spec", metavar="MODEL")
@click.option("--input", "input_text", metavar="FILE|JSON",
              help="The accelerator's input for Ψ (a JSON file or inline JSON); default: "
                   "the model's own example input.")
@click.option("--max-time", type=click.IntRange(0), default=None, help="Stop after N cycles.")
@click.option("--max-commits", type=click.IntRange(0), default=None,
              help="Stop after N commits.")
@click.option("--trace", "trace_out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write every firing: .json (Chrome trace events, for Perfetto) or .csv.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def lpn_simulate(model_spec, input_text, max_time, max_commits, trace_out, as_json):
    """Simulate MODEL (a library name or path/to/file.py:build_function)."""
    from .lpn.loader import load_input, load_model
    if trace_out is not None and trace_out.suffix.lower() not in (".json", ".csv"):
        raise ModelError(f"--trace = '{trace_out}' is invalid: write .json (Chrome trace) "
                         f"or .csv")
    model = load_model(model_spec)
    result = _run_lpn(model, load_input(input_text), max_time, max_commits,
                      trace=trace_out is not None)
    if trace_out is not None:
        if trace_out.suffix.lower() == ".csv":
            result.write_trace_csv(trace_out)
        else:
            result.write_chrome_trace(trace_out)
        click.echo(f"wrote {trace_out}", err=True)
    if as_json:
        click.echo(dump_json(result.to_dict()))
        return
    console.print(f"[bold]{model.name}[/bold]: latency [bold]{result.latency}[/bold] cycles, "
                  f"{result.total_commits} commits, bottleneck [bold]{result.bottleneck}"
                  f"[/bold]")
    table = Table()
    for col in ("transition", "commits", "busy cycles", "utilisation"):
        table.add_column(col, justify="right")
    for name, u in result.utilisation.items():
        table.add_row(name, str(result.commits[name]), str(result.busy[name]), f"{u:.1%}")
    console.print(table)


@lpn.command("show")
@click.argument("model_spec", metavar="MODEL")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="FILE.svg or FILE.html.")
@click.option("--simulate", "run", is_flag=True,
              help="Run the model first and colour transitions by utilisation.")
@click.option("--input", "input_text", metavar="FILE|JSON", help="Input for --simulate.")
def lpn_show(model_spec, out, run, input_text):
    """Draw MODEL: places, transitions, weights, capacities, delays."""
    from .lpn.loader import load_input, load_model
    from .lpn.viz import net_html, net_svg
    if out.suffix.lower() not in (".svg", ".html"):
        raise ModelError(f"--out = '{out}' is invalid: write .svg or .html")
    model = load_model(model_spec)
    result = _run_lpn(model, load_input(input_text)) if run or input_text else None
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(net_html(model, result) if out.suffix.lower() == ".html"
                   else net_svg(model, result), encoding="utf-8")
    click.echo(f"wrote {out}", err=True)


@cli.command()
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              default=Path("accelperf-report"), show_default=True,
              help="Directory for index.html, figures and data.")
def demo(out):
    """Run the main analyses on built-in data and write an HTML report."""
    from .demo import build_demo_report
    index = build_demo_report(out)
    click.echo(f"report written to {index}")


# ---------------------------------------------------------------------- entry point
def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def main(argv: list[str] | None = None) -> int:
    """Console entry point: run the command, turning every user error into one line + 2."""
    try:
        cli.main(args=argv, prog_name="accelperf", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("accelperf: aborted", err=True)
        return 130
    except click.UsageError as exc:
        where = f" (in `{exc.ctx.command_path}`)" if exc.ctx else ""
        click.echo(f"accelperf: error: {_one_line(exc.format_message())}{where}", err=True)
        return 2
    except click.ClickException as exc:
        click.echo(f"accelperf: error: {_one_line(exc.format_message())}", err=True)
        return 2
    except ModelError as exc:
        click.echo(f"accelperf: error: {_one_line(exc)}", err=True)
        return 2
    except BrokenPipeError:
        return 0
    except SystemExit as exc:          # a command that reported its own failure
        return exc.code if isinstance(exc.code, int) else 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
