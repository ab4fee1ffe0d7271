"""`accelperf logca ...`: the LogCA model, its analyses and fits."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import click
from rich.table import Table

from ..errors import ModelError
import numpy as np

from ..logca import DEFAULT_RANGE, ModelSummary, summary
from ..logca import presets as preset_table
from ..report import dump_json
from ..units import format_size, log_grid, parse_frequency, powers_of_two
from .app import cli
from .common import (
    SIZE,
    build_models,
    check_range,
    console,
    fmt_g,
    model_options,
    param_options,
    range_options,
    read_params,
    single_model,
    size_or_dash,
)


@cli.group()
def logca():
    """LogCA: speedup, break-even and half-acceleration granularities, bound type.

    Every command that computes prints --json; with --out it also writes its file (the
    JSON still goes to stdout, "wrote FILE" to stderr). Output paths are checked before
    any work starts.
    """


# ---------------------------------------------------------------------- shared helpers
def output_path(out: Path | None, suffixes=(".png", ".svg")) -> Path | None:
    """``out`` checked before any work: a known suffix, an existing directory, writable
    (tried by opening it; a file that did not exist is removed again)."""
    if out is None:
        return None
    if out.suffix.lower() not in suffixes:
        raise ModelError(f"--out = '{out}' is invalid: write {', '.join(suffixes)}")
    if out.is_dir():
        raise ModelError(f"--out = '{out}' is invalid: it is a directory; give a file name")
    if not out.parent.is_dir():
        raise ModelError(f"--out = '{out}' is invalid: directory '{out.parent}' does not "
                         f"exist (create it first)")
    existed = out.exists()
    try:
        with open(out, "ab"):
            pass
    except OSError as exc:
        raise ModelError(f"--out = '{out}' is invalid: it cannot be written "
                         f"({exc.strerror or exc})") from None
    if not existed:
        out.unlink(missing_ok=True)
    return out


def out_option(text: str):
    return click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help=text)


def json_option(text: str = "Print one JSON object."):
    return click.option("--json", "as_json", is_flag=True, help=text)


def wrote(path: Path) -> None:
    click.echo(f"wrote {path}", err=True)


def save(fig, out: Path) -> None:
    from ..plot import save_figure
    save_figure(fig, out)
    wrote(out)


class ParameterType(click.ParamType):
    """A LogCA parameter that may be uncertain: a number, ``1500±10%``, ``uniform(a, b)``,
    ``normal(mean, sd)`` or ``lognormal(median, s)``."""

    name = "value|distribution"

    def convert(self, value, param, ctx):
        from ..logca.uncertainty import Distribution, parse_parameter
        if isinstance(value, Distribution):
            return value
        try:
            return parse_parameter(param.name, value)
        except ModelError as exc:
            self.fail(str(exc), param, ctx)


def uncertain_model_options(func):
    """model_options whose L, o, C, A and β also take intervals and distributions (the
    options are shared with every logca command; only here do they accept more)."""
    func = model_options(func)
    for param in func.__click_params__:
        if param.name in ("L", "o", "C", "A", "beta"):
            param.type = ParameterType()
    return func


def split_uncertain(spec: dict) -> tuple[dict, dict]:
    """(spec with each parameter at its median, {name: Distribution} of the uncertain ones)."""
    from ..logca.uncertainty import Distribution
    numeric, uncertain = dict(spec), {}
    for name in ("L", "o", "C", "A", "beta"):
        value = spec.get(name)
        if isinstance(value, Distribution):
            numeric[name] = value.central
            if value.kind != "fixed":
                uncertain[name] = value
    return numeric, uncertain


def draws_options(func):
    func = click.option("--seed", type=click.IntRange(0, 2**63 - 1), default=0,
                        show_default=True, help="Seed of the Monte-Carlo draws.")(func)
    return click.option("--draws", type=click.IntRange(1, 1_000_000), default=2000,
                        show_default=True,
                        help="Monte-Carlo draws when a parameter is uncertain.")(func)


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
@json_option("Print one JSON object.")
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
@uncertain_model_options
@click.option("--from", "lo", type=SIZE, default=DEFAULT_RANGE[0], show_default="16B",
              help="Smallest granularity.")
@click.option("--to", "hi", type=SIZE, default=DEFAULT_RANGE[1], show_default="32MiB",
              help="Largest granularity (the paper's 32MB is 32MiB).")
@click.option("--points", type=click.IntRange(2, 100_000), default=400, show_default=True,
              help="Curve points (log-spaced) in figures and CSV.")
@draws_options
@out_option("Write FILE.png, FILE.svg or FILE.csv; without it, print a table.")
@json_option("Print the curve at powers of two as JSON.")
def logca_curve(lo, hi, points, draws, seed, out, as_json, **spec):
    """Speedup against granularity; several --preset/--kernel pairs overlay (Figs. 3, 7).

    A parameter given as an interval or distribution (--L 1500±10%, --o 'lognormal(2.9e4,
    0.2)') adds a Monte-Carlo band (5th-95th percentile) and the distributions of g1 and
    g_A/2 (CAL §5).
    """
    check_range(lo, hi)
    out = output_path(out, (".png", ".svg", ".csv"))
    numeric, uncertain = split_uncertain(spec)
    models = build_models(**numeric)
    band = None
    if uncertain:
        from ..logca.uncertainty import monte_carlo
        if len(models) != 1:
            raise ModelError(f"uncertain {', '.join(uncertain)} with --preset given "
                             f"{len(models)} times: bands are drawn for one model")
        g_band = np.union1d(log_grid(lo, hi, points), powers_of_two(lo, hi))
        band = monte_carlo(models[0], uncertain, g_band, samples=draws, seed=seed)
    if out is not None and out.suffix.lower() == ".csv":
        g = log_grid(lo, hi, points)
        with out.open("w", newline="") as fh:
            writer = csv.writer(fh)
            extra = ["p5", "p95"] if band is not None else []
            writer.writerow(["granularity_bytes"] + [m.label for m in models] + extra)
            curves = [m.speedup(g) for m in models]
            if band is not None:
                curves += [np.interp(np.log(g), np.log(band.granularity), band.band[k])
                           for k in ("p5", "p95")]
            for i, x in enumerate(g):
                writer.writerow([f"{x:.10g}"] + [f"{c[i]:.10g}" for c in curves])
        wrote(out)
    elif out is not None:
        from ..plot.logca import speedup_figure
        save(speedup_figure(models, lo, hi, points=points, band=band), out)
    g = powers_of_two(lo, hi)
    if as_json:
        data = {"granularity_bytes": g.tolist(),
                "speedup": {m.label: m.speedup(g).tolist() for m in models}}
        if band is not None:
            at = np.searchsorted(band.granularity, g)
            data["uncertainty"] = band.to_dict()
            data["uncertainty"]["band_at_granularity_bytes"] = {
                k: band.band[k][at].tolist() for k in band.band}
        click.echo(dump_json(data))
        return
    if out is not None and not sys.stdout.isatty():
        return
    table = Table(title="speedup T0/T1" + ("" if band is None else
                                          f" with the 90% band of {draws} draws"))
    table.add_column("granularity", justify="right")
    for m in models:
        table.add_column(m.label, justify="right")
    if band is not None:
        table.add_column("5%", justify="right")
        table.add_column("95%", justify="right")
        at = np.searchsorted(band.granularity, g)
    for i, x in enumerate(g):
        cells = [f"{float(m.speedup(x)):.4g}" for m in models]
        if band is not None:
            cells += [f"{band.band['p5'][at[i]]:.4g}", f"{band.band['p95'][at[i]]:.4g}"]
        table.add_row(format_size(x), *cells)
    console.print(table)
    if band is not None:
        for label, dist in (("g1", band.g1), ("g_A/2", band.g_half)):
            q = dist.quantiles
            console.print(f"{label}: " + ("does not exist in any draw" if q["p50"] is None else
                          f"median {format_size(q['p50'])}, 90% in {format_size(q['p5'])}.."
                          f"{format_size(q['p95'])} (exists in {dist.exists_fraction:.0%} of "
                          f"the draws)"))


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
@out_option("Draw the regions chart (Fig. 6) to FILE.png or FILE.svg.")
@click.option("--sensitivity", is_flag=True,
              help="With --out, also draw Fig. 5 (each parameter improved) to FILE-sensitivity.")
@json_option("Print one JSON object.")
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
    out = output_path(out)
    if sensitivity and out is None:
        raise ModelError("--sensitivity needs --out FILE.png|svg: it draws a figure")
    if sensitivity:
        output_path(out.with_name(f"{out.stem}-sensitivity{out.suffix}"))
    analysis = optimization_regions(model, factor=factor, threshold=threshold, lo=lo, hi=hi,
                                    samples=sample_points)
    if out is not None:
        from ..plot.regions import regions_figure, sensitivity_figure
        save(regions_figure(analysis), out)
        if sensitivity:
            save(sensitivity_figure(model, factor, lo, hi),
                 out.with_name(f"{out.stem}-sensitivity{out.suffix}"))
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
@out_option("Draw the curve with its bound lines (Fig. 4) to FILE.png or FILE.svg.")
@json_option("Print one JSON object.")
def logca_bounds(lo, hi, out, as_json, **spec):
    """Bound type (compute or latency), the asymptotes that cap the speedup (§3.1), and
    whether the limit is reached at any practical size."""
    from ..logca import bound_type
    from ..logca.metrics import bound_reach
    check_range(lo, hi)
    model = single_model(spec, "bounds")
    out = output_path(out)
    bound = bound_type(model)
    reach = bound_reach(model)
    if out is not None:
        from ..plot.logca import speedup_figure
        save(speedup_figure(model, lo, hi, title=f"Bounds of {model.label}: "
                                                 f"{bound.kind}-bound"), out)
    info = {"bound": bound.kind, **bound.to_dict(), "small_g_limit": model.small_g_limit(),
            "large_g_limit": model.large_g_limit(),
            "computational_intensity": model.computational_intensity,
            "reach": reach.to_dict()}
    if as_json:
        click.echo(dump_json(info))
    else:
        console.print(f"[bold]{bound.kind}-bound[/bold]: speedup → {bound.limit:.4g} "
                      f"({bound.expression}, {bound.equation}). {bound.explanation}.")
        console.print(reach.describe()[0].upper() + reach.describe()[1:] + ".")


@logca.command("whatif")
@model_options
@click.option("--set", "changes", multiple=True, metavar="NAME=VALUE",
              help="A change: o=435, L=/10 (divide), A=*2 (multiply), latency=dependent.")
@out_option("Draw both curves to FILE.png or FILE.svg.")
@json_option("Print one JSON object.")
def logca_whatif(changes, out, as_json, **spec):
    """Speedup, g1 and g_A/2 before and after changing parameters, side by side."""
    from ..logca.whatif import what_if
    model = single_model(spec, "whatif")
    out = output_path(out)
    result = what_if(model, changes)
    if out is not None:
        from ..plot.regions import comparison_figure
        save(comparison_figure(result.before, result.after, *DEFAULT_RANGE,
                               title="What-if: " + ", ".join(changes)), out)
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
@click.option("--factor", type=float, default=10.0, show_default=True,
              help="Improvement of each parameter (L, o divided; C, A multiplied), >= 1.")
@click.option("--threshold", type=float, default=0.2, show_default=True,
              help="Speedup gain that makes a parameter a bottleneck (0.2 = 20%).")
@out_option("Draw one region chart per design to FILE.png or FILE.svg.")
@json_option("Print one JSON object.")
def logca_case_study(name, lo, hi, factor, threshold, out, as_json):
    """The paper's case studies: SPARC crypto evolution, GPU memory interfaces (§5.4)."""
    from ..logca.casestudies import CUTOFF_COLUMNS, run_case_study
    check_range(lo, hi)
    out = output_path(out)
    result = run_case_study(name, factor, threshold, lo, hi)
    if out is not None:
        from ..plot.regions import case_study_figure
        save(case_study_figure(result.analyses, result.study.title), out)
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
              default="auto", show_default=True,
              help="How latency grows with g; auto chooses by AIC.")
@click.option("--frequency", type=str, default=None, metavar="3.65GHz|auto",
              help="Report parameters in cycles of this clock ('auto': the clock measured "
                   "with the data).")
@click.option("--statistic", type=click.Choice(["median", "min"]), default="min",
              show_default=True,
              help="Which of the repeats' statistics to fit (a shared machine only ever "
                   "slows a run down, so the minimum is the default).")
@click.option("--from", "lo", type=SIZE, default=None,
              help="Fit only granularities from this size (e.g. past a per-call constant).")
@click.option("--to", "hi", type=SIZE, default=None,
              help="Fit only granularities up to this size (e.g. before a cache is outgrown).")
@click.option("--host-constant", is_flag=True,
              help="Add a per-call constant to the host model: T0 = c0 + C·g^β.")
@click.option("--bootstrap", type=click.IntRange(0, 10_000), default=200, show_default=True,
              help="Resamples for the g1 / g_A/2 uncertainty.")
@click.option("--monte-carlo", "draws", type=click.IntRange(0, 1_000_000), default=0,
              show_default=True,
              help="Draws of the fitted parameters (from their standard errors) for a speedup "
                   "band and the distributions of g1 and g_A/2; 0 to skip.")
@out_option("Draw Fig. 7 (measured points, fitted curve, g1, g_A/2) to .png or .svg.")
@json_option("Print one JSON object.")
def logca_fit(data, latency, frequency, statistic, lo, hi, host_constant, bootstrap, draws, out,
              as_json):
    """Fit L, o, C, A and β to measured host and accelerated times (ISCA'17 §4)."""
    from ..logca.fit import fit_logca
    from ..measure.data import read_timings
    out = output_path(out)
    if lo is not None and hi is not None:
        check_range(lo, hi)
    freq = None if frequency in (None, "auto") else parse_frequency(frequency, "--frequency")
    timings = read_timings(data, statistic)
    if frequency == "auto":
        freq = timings.core_clock_hz
        if freq is None:
            raise ModelError(f"--frequency auto: '{data}' records no core clock; give one, "
                             f"e.g. --frequency 3.65GHz")
    result = fit_logca(timings.granularity, timings.host, timings.accel, timings.echo,
                       latency=latency, frequency_hz=freq, bootstrap=bootstrap,
                       name=f"fit of {Path(data).name}", lo=lo, hi=hi,
                       host_constant=host_constant)
    band = None
    if draws:
        from ..logca.uncertainty import from_fit, monte_carlo
        band = monte_carlo(result.model, from_fit(result), result.granularity, samples=draws)
    warnings = list(result.warnings)
    if out is not None:
        from ..plot.fit import fit_figure
        save(fit_figure(result, band=band), out)
    if as_json:
        d = result.to_dict()
        d["warnings"] = warnings
        if band is not None:
            d["uncertainty"] = band.to_dict()
        click.echo(dump_json(d))
        return
    unit = result.model.unit
    table = Table(title=f"LogCA fit of {data} ({result.model.latency} latency, {unit})")
    for col in ("parameter", "value", "std. error", "note"):
        table.add_column(col, justify="right" if col != "note" else "left")
    extra = [] if result.host_constant is None else [result.host_constant]
    for p in list(result.parameters.values()) + extra:
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
    if band is not None:
        for label, dist in (("g1", band.g1), ("g_A/2", band.g_half)):
            q = dist.quantiles
            if q["p50"] is not None:
                console.print(f"{label} over {draws} draws of the parameters: median "
                              f"{format_size(q['p50'])}, 90% in {format_size(q['p5'])}.."
                              f"{format_size(q['p95'])}")
    for w in warnings:
        console.print(f"[yellow]warning:[/yellow] {w}")


@logca.command("presets")
@json_option("Print one JSON object.")
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


@logca.command("advise")
@model_options
@click.option("--at", type=SIZE, required=True, help="The offloaded size, e.g. 4KiB.")
@click.option("--factor", type=float, default=10.0, show_default=True,
              help="Improvement tried on each parameter (L, o divided; C, A multiplied), > 1.")
@click.option("--threshold", type=float, default=0.2, show_default=True,
              help="Speedup gain that makes a parameter limiting (0.2 = 20%).")
@json_option("Print one JSON object (a list, fastest first, for several accelerators).")
def logca_advise(at, factor, threshold, as_json, **spec):
    """Does offloading this size pay, by how much, what limits it there, and from which size
    does it pay? Several --preset/--kernel pairs are ranked at that size (ISCA'17 §3)."""
    from ..logca.advise import rank
    models = build_models(**spec)
    ranked = rank(models, at, factor, threshold)
    if as_json:
        rows = [dict(a.to_dict(), rank=i + 1) for i, a in enumerate(ranked)]
        click.echo(dump_json(rows[0] if len(rows) == 1 else rows))
        return
    table = Table(title=f"Offloading {format_size(at)}"
                        + (" — ranked" if len(ranked) > 1 else ""))
    for col in ("accelerator", "speedup", "pays", "bound there", "limited by",
                "pays from"):
        table.add_column(col, justify="left" if col in ("accelerator", "limited by")
                         else "right")
    for a in ranked:
        table.add_row(a.model.label, f"{a.speedup:.4g}", "yes" if a.pays else "no",
                      f"{a.bound} ({a.bound_value:.3g})", ", ".join(
                          f"{p} (+{a.gains[p]:.0%})" for p in a.limited_by) or "—",
                      _break_even_text(a))
    console.print(table)
    for a in ranked:
        if a.break_even_reason:
            console.print(f"[bold]{a.model.label}[/bold]: {a.break_even_reason}")
    console.print(f"limited by: improving the parameter {factor:g}x raises the speedup at "
                  f"{format_size(at)} by at least {threshold:.0%} (ISCA'17 §3.2)")


def _break_even_text(advice) -> str:
    from ..logca.metrics import PRACTICAL_SIZE
    if advice.break_even is None:
        return "never"
    if advice.break_even > PRACTICAL_SIZE:
        return f"never in practice ({advice.break_even:.3g} B)"
    return "every size" if advice.break_even == 0 else size_or_dash(advice.break_even)


@logca.command("design")
@model_options
@click.option("--target", required=True, metavar="'g1<=1KiB'",
              help="The goal: g1, g_half or g_A compared with a size, or speedup(SIZE) with a "
                   "number; operators <=, >=, <, >.")
@click.option("--pair", metavar="X,Y",
              help="Also solve two parameters at once: Y meeting the target for each X "
                   "(a feasibility curve), e.g. o,L.")
@click.option("--points", type=click.IntRange(3, 10_000), default=60, show_default=True,
              help="Points on the feasibility curve.")
@out_option("Draw the feasibility curve (needs --pair) to FILE.png or FILE.svg.")
@json_option("Print one JSON object.")
def logca_design(target, pair, points, out, as_json, **spec):
    """Which L, o, C or A (one at a time, the others held) meets a target exactly, or why
    none can; with --pair, two at once (ISCA'17 §3 backwards)."""
    from ..logca.design import check_pair, feasibility_curve, parse_target, solve_design
    goal = parse_target(target)
    xy = None if pair is None else check_pair(pair)
    out = output_path(out)
    if out is not None and xy is None:
        raise ModelError("--out needs --pair X,Y: the figure is the feasibility curve of two "
                         "parameters")
    model = single_model(spec, "design")
    result = solve_design(model, goal)
    curve = None if xy is None else feasibility_curve(model, goal, *xy, points=points)
    if out is not None:
        from ..plot.design import feasibility_figure
        save(feasibility_figure(curve), out)
    if as_json:
        data = result.to_dict()
        if curve is not None:
            data["feasibility"] = curve.to_dict()
        click.echo(dump_json(data))
        return
    now = "does not exist" if result.current is None else goal.describe(result.current)
    console.print(f"[bold]{model.label}[/bold]: {now} now; target {goal.text} is "
                  + ("met" if result.met_now else "not met"))
    table = Table(title=f"Meeting {goal.text}, one parameter at a time")
    for col in ("parameter", "now", "needed", "change"):
        table.add_column(col, justify="right")
    for p, sol in result.solutions.items():
        if sol.value is None:
            table.add_row(p, f"{sol.current:.4g}", "—",
                          "any value" if sol.possible else "impossible")
        else:
            change = "—" if sol.current == 0 else f"{sol.value / sol.current:.3g}x"
            table.add_row(p, f"{sol.current:.4g}", f"{sol.direction} {sol.value:.6g}", change)
    console.print(table)
    for sol in result.solutions.values():
        if sol.reason:
            console.print(f"[bold]{sol.parameter}[/bold]: {sol.reason}")
    if curve is not None:
        ok = np.isfinite(curve.y)
        console.print(f"feasibility curve {curve.y_parameter}({curve.x_parameter}): "
                      f"{int(ok.sum())} of {curve.x.size} points solvable"
                      + ("" if out is None else f", drawn to {out}"))


@logca.command("times")
@model_options
@range_options
@click.option("--points", type=click.IntRange(2, 100_000), default=300, show_default=True,
              help="Curve points (log-spaced) in the figure.")
@out_option("Draw T0 and T1 against g (ISCA'17 Fig. 1a) to FILE.png or FILE.svg.")
@json_option("Print the times at powers of two.")
def logca_times(lo, hi, points, out, as_json, **spec):
    """Host time T0 and accelerated time T1 against granularity; they cross at g1
    (ISCA'17 Fig. 1a, eq. 1)."""
    check_range(lo, hi)
    out = output_path(out)
    model = single_model(spec, "times")
    if out is not None:
        from ..plot.logca import times_figure
        save(times_figure(model, lo, hi, points=points), out)
    g = powers_of_two(lo, hi)
    t0, t1 = model.T0(g), model.T1(g)
    if as_json:
        click.echo(dump_json({"granularity_bytes": g.tolist(), "unit": model.unit,
                              "T0": t0.tolist(), "T1": t1.tolist(),
                              "offload_cost": (model.o + model.latency_time(g)).tolist()}))
        return
    if out is not None and not sys.stdout.isatty():
        return
    table = Table(title=f"Execution times of {model.label} ({model.unit} per offload)")
    for col in ("granularity", "T0 (host)", "T1 (accelerated)", "o + L1(g)", "T0/T1"):
        table.add_column(col, justify="right")
    for x, a, b in zip(g, t0, t1):
        table.add_row(format_size(x), f"{a:.4g}", f"{b:.4g}",
                      f"{model.o + float(model.latency_time(x)):.4g}", f"{a / b:.4g}")
    console.print(table)


LPN_MAX_SIZE = 16 * 2**20


def _sizes(text: str) -> list[float]:
    """``16B..1MiB`` (the powers of two between) or a comma list ``64B,4KiB,1MiB``."""
    from ..units import parse_size
    if ".." in text:
        lo_text, _, hi_text = text.partition("..")
        lo, hi = parse_size(lo_text, "--sizes"), parse_size(hi_text, "--sizes")
        check_range(lo, hi)
        sizes = powers_of_two(lo, hi).tolist()
    else:
        sizes = [parse_size(x, "--sizes") for x in text.split(",")]
    if len(set(sizes)) < 3:
        raise ModelError(f"--sizes = {text!r} is invalid: a fit needs at least 3 different "
                         f"granularities")
    if len(sizes) > 64:
        raise ModelError(f"--sizes = {text!r} gives {len(sizes)} granularities: at most 64 "
                         f"(each is a simulation)")
    if max(sizes) > LPN_MAX_SIZE:
        raise ModelError(f"--sizes = {text!r} is invalid: at most {format_size(LPN_MAX_SIZE)} "
                         f"per offload (a simulation's time grows with its size: 1 MiB "
                         f"takes about 2 s)")
    return sizes


def _host_csv(path: Path) -> tuple[float, float]:
    """(C, β) from a CSV with columns granularity_bytes and host_cycles."""
    from ..logca.lpn_bridge import host_from_times
    try:
        rows = list(csv.DictReader(path.read_text("utf-8").splitlines()))
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelError(f"--host-csv = '{path}' is invalid: "
                         f"{getattr(exc, 'strerror', None) or exc}") from None
    try:
        g = [float(r["granularity_bytes"]) for r in rows]
        t = [float(r["host_cycles"]) for r in rows]
    except (KeyError, TypeError, ValueError):
        raise ModelError(f"--host-csv = '{path}' is invalid: need numeric columns "
                         f"granularity_bytes and host_cycles") from None
    try:
        return host_from_times(g, t)
    except ModelError as exc:
        raise ModelError(f"--host-csv = '{path}' is invalid: {exc}") from None


@logca.command("from-lpn")
@click.argument("model_name", metavar="MODEL")
@click.option("--sizes", default="64B..1MiB", show_default=True,
              help="Granularities: LO..HI (powers of two) or a comma list.")
@click.option("--host-C", "host_C", type=float,
              help="Host cycles per byte (T0 = C·g^β), e.g. 12.5.")
@click.option("--host-beta", type=float, default=1.0, show_default=True,
              help="Host complexity exponent β.")
@click.option("--host-csv", type=click.Path(dir_okay=False, path_type=Path),
              help="Measured host times instead of --host-C/--host-beta (columns "
                   "granularity_bytes, host_cycles); C and β by log-log regression.")
@click.option("--transfer/--no-transfer", default=True, show_default=True,
              help="Also simulate the link alone (where the model has one) to measure L.")
@out_option("Draw T0, the fitted T1 and the simulated points to FILE.png or FILE.svg.")
@json_option("Print one JSON object.")
@param_options
def logca_from_lpn(model_name, sizes, host_C, host_beta, host_csv, transfer, out, as_json,
                   params_file=None, param_list=()):
    """LogCA's L, o and A of a simulated accelerator (an LPN model): simulate it at each
    granularity, fit ISCA'17 eq. 1 and say whether its latency grows with g."""
    from ..logca.lpn_bridge import fit_from_latency, mapping
    from ..lpn import simulate
    from ..lpn.loader import load_model
    from .common import progress_run
    mp = mapping(model_name)
    grid = _sizes(sizes)
    out = output_path(out)
    if host_csv is not None and host_C is not None:
        raise ModelError("--host-csv and --host-C both given: the host is one or the other")
    if host_csv is not None:
        host_C, host_beta = _host_csv(host_csv)
    elif host_C is None:
        raise ModelError("--host-C is missing: give the host's cycles per byte (e.g. --host-C "
                         "12.5) or --host-csv FILE")
    accel = load_model(mp.model, read_params(params_file, param_list))
    link = load_model(mp.transfer) if transfer and mp.transfer else None
    actual = sorted({mp.input_at(g)[1] for g in grid})
    inputs = {b: mp.input_at(b)[0] for b in actual}

    def latency_at(b):
        return simulate(accel, inputs[b]).latency

    def transfer_at(b):
        return simulate(link, mp.transfer_input_at(b)).latency

    result = progress_run(len(actual), f"simulating {mp.model}", lambda tick: fit_from_latency(
        latency_at, actual, host_C, host_beta, transfer_at if link is not None else None,
        progress=tick))
    if out is not None:
        from ..plot.logca import times_figure
        save(times_figure(result.model, actual[0], actual[-1],
                          measured=(result.granularity, result.t_accel),
                          title=f"{mp.model}: simulated T1 and the fitted LogCA model"), out)
    if as_json:
        click.echo(dump_json({"model": mp.model, "mapping": mp.description,
                              "transfer_model": mp.transfer if link is not None else None,
                              **result.to_dict()}))
        return
    console.print(f"[bold]{mp.model}[/bold]: {mp.description}")
    table = Table(title="LogCA parameters of the simulated accelerator (cycles)")
    for col in ("parameter", "value", "std. error", "note"):
        table.add_column(col, justify="left" if col == "note" else "right")
    for p in result.parameters.values():
        table.add_row(p.name, f"{p.value:.5g}", "—" if p.stderr is None else f"{p.stderr:.3g}",
                      p.note or "")
    console.print(table)
    console.print(f"latency {'grows' if result.dependent else 'does not grow'} with "
                  f"granularity: {result.dependent_reason}")
    console.print(f"fit error of T1: mean {result.mean_error:.2%}, max {result.max_error:.2%} "
                  f"over {result.granularity.size} granularities")
