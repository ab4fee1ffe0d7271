"""`logca show`, `curve`, `bounds`, `times` and `whatif`: one model's curve and metrics."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import click
import numpy as np
from rich.table import Table

from ...logca import DEFAULT_RANGE, ModelSummary, summary
from ...logca.metrics import bound_reach
from ...units import format_size, log_grid, powers_of_two
from ...errors import ModelError
from ...outputs import replacing
from ...report import dump_json
from ..common import (
    SIZE,
    build_models,
    check_range,
    console,
    crossing_size,
    fmt_g,
    model_options,
    range_options,
    refuse_unused,
    single_model,
    size_range,
)
from . import logca
from .layers import (check_hierarchy_options, data_option, hierarchy_bounds, hierarchy_curve,
                     hierarchy_options, hierarchy_show, refuse_model_beside_data)
from .options import (draws_options, json_option, out_option, output_path, save,
                      split_uncertain, uncertain_model_options, wrote)


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
        # g_A is where the speedup would reach A were A unbounded (eq. 13), not where it does
        target = f"{r.target:g} if A→∞" if label == "g_A" else f"{r.target:g}"
        metrics.add_row(label, target, exact, closed,
                        "—" if diff is None else f"{diff:.2%}")
    console.print(metrics)
    for line in remarks:
        console.print(line)
    b = info.bound
    console.print(f"[bold]{b.kind}-bound[/bold]: speedup → {b.limit:.4g} "
                  f"({b.expression}, {b.equation}): {b.explanation}")
    reach = bound_reach(model)
    if reach.limit > 0 and not reach.practical:
        # β a hair above 1 makes A the limit; the speedup at any real size is the answer
        console.print(f"  but {reach.describe()}")
    if info.peak:
        p = info.peak
        console.print(f"[bold]peak[/bold]: speedup {p.speedup:.4g} at "
                      f"{fmt_g(p.granularity)}, falling beyond it (Implication 4)")
    console.print(f"speedup at g = 1 B (eqs. 4/10): {model.small_g_limit():.4g};  "
                  f"large-g limit: {model.large_g_limit():.4g}")


@logca.command("show")
@model_options
@hierarchy_options
@data_option
@json_option("Print one JSON object.")
def logca_show(hier, probe, data, select, as_json, **spec):
    """Parameters, g1, g_A/2, g_A, bound type and peak of one model.

    With --data and --select, --hierarchy or --probe: those of the model fitted to the
    measurements (the bound per memory layer is `logca bounds`).
    """
    if check_hierarchy_options(hier, probe, data, spec, select):
        return hierarchy_show(data, hier, probe, as_json, select)
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
@hierarchy_options
@data_option
@out_option("Write FILE.png, FILE.svg or FILE.csv; without it, print a table.")
@json_option("Print the curve at powers of two as JSON.")
def logca_curve(lo, hi, points, draws, seed, hier, probe, data, select, out, as_json, **spec):
    """Speedup against granularity; several --preset/--kernel pairs overlay (Figs. 3, 7).

    A parameter given as an interval or distribution (--L 1500±10%, --o 'lognormal(2.9e4,
    0.2)') adds a Monte-Carlo band (5th-95th percentile) and the distributions of g1 and
    g_A/2 (CAL §5). With --data and --select, --hierarchy or --probe, the curve of the model
    fitted to the measurements, beside plain LogCA and the measured points.
    """
    check_range(lo, hi)
    out = output_path(out, (".png", ".svg", ".csv"))
    layered = check_hierarchy_options(hier, probe, data, spec, select)
    numeric, uncertain = ({}, ()) if layered else split_uncertain(spec)
    if not uncertain:
        # the draws are of an uncertain parameter's distribution; without one there are none
        why = "no parameter is uncertain (e.g. --L 1500±10%)"
        refuse_unused({"draws": why, "seed": why}, "this curve")
    if layered:
        return hierarchy_curve(data, hier, probe, lo, hi, out, as_json, select, points)
    models = build_models(**numeric)
    labels = [m.label for m in models]
    if len(set(labels)) < len(labels):
        twice = next(x for x in labels if labels.count(x) > 1)
        raise ModelError(f"two curves are named {twice!r}: the table, CSV and JSON tell them "
                         f"apart by name (--name labels every --preset given; give each "
                         f"device once, or leave --name out)")
    band = None
    if uncertain:
        from ...logca.uncertainty import monte_carlo
        if len(models) != 1:
            raise ModelError(f"uncertain {', '.join(uncertain)} with --preset given "
                             f"{len(models)} times: bands are drawn for one model")
        g_band = np.union1d(log_grid(lo, hi, points), powers_of_two(lo, hi))
        band = monte_carlo(models[0], uncertain, g_band, samples=draws, seed=seed)
    if out is not None and out.suffix.lower() == ".csv":
        g = log_grid(lo, hi, points)
        with replacing(out) as temp, temp.open("w", newline="") as fh:
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
        from ...plot.logca import speedup_figure
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
    if out is None or sys.stdout.isatty():
        _print_curve_table(models, g, band, draws)
    if band is not None:        # the band's summary is printed even beside a written file
        _print_band_summary(band)


def _print_curve_table(models, g, band, draws) -> None:
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


def _print_band_summary(band) -> None:
    for label, dist in (("g1", band.g1), ("g_A/2", band.g_half)):
        q = dist.quantiles
        console.print(f"{label}: " + ("does not exist in any draw" if q["p50"] is None else
                      f"median {crossing_size(q['p50'])}, 90% in "
                      f"{size_range(q['p5'], q['p95'])} (exists in {dist.exists_fraction:.0%} of "
                      f"the draws)"))


@logca.command("bounds")
@model_options
@range_options
@hierarchy_options
@data_option
@out_option("Draw the curve with its bound lines (Fig. 4) to FILE.png or FILE.svg.")
@json_option("Print one JSON object.")
def logca_bounds(lo, hi, hier, probe, data, select, out, as_json, **spec):
    """Bound type (compute or latency), the asymptotes that cap the speedup (§3.1), and
    whether the limit is reached at any practical size.

    With --data and --select, --hierarchy or --probe: of the model fitted to the
    measurements, the bound of each memory layer's plain model (the data living in that
    layer) and of the curve far past every cache.
    """
    from ...logca import bound_type
    check_range(lo, hi)
    # the bounds are limits of the whole curve; the range only frames the plain figure
    if check_hierarchy_options(hier, probe, data, spec, select):
        why = "the fitted figure spans the measured sizes"
        refuse_unused({"lo": why, "hi": why}, "--data")
        return hierarchy_bounds(data, hier, probe, output_path(out), as_json, select)
    if out is None:
        why = "the range frames only the figure"
        refuse_unused({"lo": why, "hi": why}, "bounds", "without --out")
    model = single_model(spec, "bounds")
    out = output_path(out)
    bound = bound_type(model)
    reach = bound_reach(model)
    if out is not None:
        from ...plot.logca import speedup_figure
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
@click.option("--at", "sizes", type=SIZE, multiple=True, metavar="SIZE",
              help="Compare the speedup at this size (repeatable; default 16 B, 128 B, 1 KiB, "
                   "... up to 32 MiB, a factor of 8 apart).")
@click.option("--data", type=click.Path(dir_okay=False, path_type=Path), default=None,
              metavar="FILE.csv",
              help="Start from LogCA fitted to these measurements (as `logca fit FILE` "
                   "fits it) instead of parameters given.")
@out_option("Draw both curves to FILE.png or FILE.svg.")
@json_option("Print one JSON object.")
def logca_whatif(changes, sizes, data, out, as_json, **spec):
    """Speedup, g1 and g_A/2 before and after changing parameters, side by side.

    With --data: of plain LogCA fitted to the measurements (the fitted L, o, C, A, β in
    their units), so a fit's "what if PCIe halves L" needs no copying of numbers.
    """
    from ...logca.whatif import what_if
    out = output_path(out)
    model = fitted_plain(data, spec) if data is not None else single_model(spec, "whatif")
    result = what_if(model, changes, sorted(sizes) if sizes else None)
    if out is not None:
        from ...plot.regions import comparison_figure
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
    for i in range(0, len(result.samples), 1 if sizes else 3):
        g = result.samples[i]
        sb, sa = result.speedup_before[i], result.speedup_after[i]
        table.add_row(f"speedup at {format_size(g)}", f"{sb:.4g}", f"{sa:.4g}",
                      f"{sa / sb:.3g}x")
    console.print(table)


def fitted_plain(data: Path, spec: dict):
    """Plain LogCA fitted to ``data`` as `logca fit FILE` fits it; refused beside a model
    given by --preset or parameters (which would be ignored)."""
    from ...logca.fit import fit_logca
    from ...measure.data import read_timings
    refuse_model_beside_data(spec, "the changes go in --set")
    t = read_timings(data)
    return fit_logca(t.granularity, t.host, t.accel, t.echo, bootstrap=0,
                     name=f"fit of {data.name}").model


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
        from ...plot.logca import times_figure
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
