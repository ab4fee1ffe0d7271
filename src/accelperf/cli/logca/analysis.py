"""`logca regions`, `case-study`, `advise`, `design` and `presets`: where a model's
parameters limit it and what would meet a goal (ISCA'17 §3)."""

from __future__ import annotations

import sys

import click
import numpy as np
from rich.markup import escape
from rich.table import Table

from ...logca import presets as preset_table
from ...units import format_size
from ...errors import ModelError
from ...report import dump_json
from ..common import (
    SIZE,
    build_models,
    check_range,
    console,
    model_options,
    print_warnings,
    range_options,
    refuse_unused,
    single_model,
    size_or_dash,
)
from . import logca
from .layers import (check_hierarchy_options, data_option, fit_from_data, hierarchy_advice,
                     hierarchy_options)
from .options import json_option, out_option, output_path, save


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
@hierarchy_options
@data_option
@json_option("Print one JSON object.")
def logca_regions(lo, hi, factor, threshold, samples, out, sensitivity, hier, probe, data, select,
                  as_json, **spec):
    """Optimization regions: where improving L, o, C or A pays (ISCA'17 §3.2).

    With --data and --select, --hierarchy or --probe: the regions of the model fitted to the
    measurements, on its own curve, with each memory layer's extra accelerator (a[layer])
    and copy (l[layer]) cost as parameters too.
    """
    from ...logca.regions import hierarchical_regions, optimization_regions
    from ...units import log_grid
    check_range(lo, hi)
    if samples == "powers-of-two":
        sample_points = None
    elif samples.isdigit() and 2 <= int(samples) <= 100_000:
        sample_points = log_grid(lo, hi, int(samples))
    else:
        raise ModelError(f"--samples = {samples!r} is invalid: 'powers-of-two' or a whole "
                         f"number of points from 2 to 100000")
    layered = check_hierarchy_options(hier, probe, data, spec, select)
    out = output_path(out)
    if sensitivity and out is None:
        raise ModelError("--sensitivity needs --out FILE.png|svg: it draws a figure")
    if sensitivity and layered:
        raise ModelError("--sensitivity draws plain LogCA's Fig. 5 of given parameters; with "
                         "--data drop it (the regions chart shows the fitted model)")
    if sensitivity:
        output_path(out.with_name(f"{out.stem}-sensitivity{out.suffix}"))
    notes = []
    if layered:
        result, notes = fit_from_data(data, hier, probe, select=select)
        model, notes = result.model, notes + list(result.warnings)
        analysis = hierarchical_regions(model, factor=factor, threshold=threshold, lo=lo,
                                        hi=hi, samples=sample_points)
    else:
        model = single_model(spec, "regions")
        analysis = optimization_regions(model, factor=factor, threshold=threshold, lo=lo,
                                        hi=hi, samples=sample_points)
    if out is not None:
        from ...plot.regions import regions_figure, sensitivity_figure
        save(regions_figure(analysis), out)
        if sensitivity:
            save(sensitivity_figure(model, factor, lo, hi),
                 out.with_name(f"{out.stem}-sensitivity{out.suffix}"))
    if as_json:
        click.echo(dump_json(dict(analysis.to_dict(), warnings=notes) if layered else
                             analysis.to_dict()))
        return
    if out is not None and not sys.stdout.isatty():
        return
    table = Table(title=f"Optimization regions of {escape(model.label)}: {factor:g}x improvement, "
                        f">= {threshold:.0%} speedup gain")
    for col in ("parameter", "present", "from", "to", "cut-off", "largest gain"):
        table.add_column(col, justify="right")
    for p, r in analysis.regions.items():
        table.add_row(escape(p), "yes" if r.present else "no", size_or_dash(r.start),
                      size_or_dash(r.end), size_or_dash(r.cutoff),
                      f"{r.max_gain:.1%} at {format_size(r.max_gain_at)}")
    console.print(table)
    console.print("bands: " + ", ".join(
        f"[bold]{escape(b.parameters) or 'none'}[/bold] {format_size(b.start)}–"
        f"{format_size(b.end)}" for b in analysis.bands))
    print_warnings(notes, "note")


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
    from ...logca.casestudies import CUTOFF_COLUMNS, run_case_study
    check_range(lo, hi)
    out = output_path(out)
    result = run_case_study(name, factor, threshold, lo, hi)
    if out is not None:
        from ...plot.regions import case_study_figure
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
@hierarchy_options
@data_option
@json_option("Print one JSON object (a list, fastest first, for several accelerators).")
def logca_advise(at, factor, threshold, hier, probe, data, select, as_json, **spec):
    """Does offloading this size pay, by how much, what limits it there, and from which size
    does it pay? Several --preset/--kernel pairs are ranked at that size (ISCA'17 §3).

    With --data and --select, --hierarchy or --probe: the model fitted to the
    measurements (with the memory layers given), asked at that size (the plain LogCA of the
    layer there) and its break-even from the whole curve.
    """
    from ...logca.advise import rank
    notes = None                    # a fit's notes and warnings, where there is a fit
    if check_hierarchy_options(hier, probe, data, spec, select):
        ranked, notes = hierarchy_advice(data, hier, probe, at, factor, threshold, select)
    else:
        ranked = rank(build_models(**spec), at, factor, threshold)
    if as_json:
        rows = [dict(a.to_dict(), rank=i + 1) for i, a in enumerate(ranked)]
        click.echo(dump_json(dict(rows[0], warnings=notes) if notes is not None else
                             rows[0] if len(rows) == 1 else rows))
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
    print_warnings(notes or [], "note")


def _break_even_text(advice) -> str:
    from ...logca.metrics import PRACTICAL_SIZE
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
@hierarchy_options
@data_option
@json_option("Print one JSON object.")
def logca_design(target, pair, points, out, hier, probe, data, select, as_json, **spec):
    """Which L, o, C or A (one at a time, the others held) meets a target exactly, or why
    none can; with --pair, two at once (ISCA'17 §3 backwards).

    With --data and --select, --hierarchy or --probe: solved on the model fitted to the
    measurements; each memory layer's extra accelerator cost a[layer] and copy cost
    l[layer] can be solved for too, and named in --pair (e.g. --pair 'A,l[L3<-DRAM]').
    """
    from ...logca.design import (check_pair, feasibility_curve, hierarchical_feasibility,
                                 parse_target, solve_design, solve_hierarchical_design)
    goal = parse_target(target)
    layered = check_hierarchy_options(hier, probe, data, spec, select)
    xy = None if pair is None else (tuple(p.strip() for p in pair.split(",")) if layered
                                    and pair.count(",") == 1 else check_pair(pair))
    out = output_path(out)
    if out is not None and xy is None:
        raise ModelError("--out needs --pair X,Y: the figure is the feasibility curve of two "
                         "parameters")
    if xy is None:
        refuse_unused({"points": "the points are of the feasibility curve of --pair X,Y"},
                      "design", "without --pair")
    notes = []
    if layered:
        fitted, notes = fit_from_data(data, hier, probe, select=select)
        model, notes = fitted.model, notes + list(fitted.warnings)
        result = solve_hierarchical_design(model, goal)
        if select and goal.metric == "g1":
            quoted = fitted.g1_to_quote()
            if quoted.granularity is not None and quoted.basis not in ("model",
                                                                       "unreliable"):
                notes.append(f"the design is solved on the model, whose g1 is "
                             f"{size_or_dash(fitted.g1.model)}; `logca fit --select` quotes "
                             f"{size_or_dash(quoted.granularity)} ({quoted.basis}): read the "
                             f"changes as relative to the model's")
        curve = None if xy is None else hierarchical_feasibility(model, goal, *xy,
                                                                 points=points)
    else:
        model = single_model(spec, "design")
        result = solve_design(model, goal)
        curve = None if xy is None else feasibility_curve(model, goal, *xy, points=points)
    if out is not None:
        from ...plot.design import feasibility_figure
        save(feasibility_figure(curve), out)
    if as_json:
        data = result.to_dict()
        if curve is not None:
            data["feasibility"] = curve.to_dict()
        if layered:
            data["warnings"] = notes
        click.echo(dump_json(data))
        if unreachable(result):
            raise SystemExit(1)
        return
    now = "does not exist" if result.current is None else goal.describe(result.current)
    console.print(f"[bold]{escape(model.label)}[/bold]: {now} now; target {goal.text} "
                  f"(read as {goal.read_as}) is " + ("met" if result.met_now else "not met"))
    table = Table(title=f"Meeting {goal.text}, one parameter at a time")
    for col in ("parameter", "now", "needed", "change"):
        table.add_column(col, justify="right")
    for p, sol in result.solutions.items():
        if sol.value is None:
            table.add_row(escape(p), f"{sol.current:.4g}", "—",
                          "any value" if sol.possible else "impossible")
        else:
            change = "—" if sol.current == 0 else f"{sol.value / sol.current:.3g}x"
            if "[" in p:        # a step: the layer's cost factor 1 + step changes
                change = f"{(1 + sol.value) / (1 + sol.current):.3g}x of 1+{escape(p)}"
            table.add_row(escape(p), f"{sol.current:.4g}", f"{sol.direction} {sol.value:.6g}",
                          change)
    console.print(table)
    for sol in result.solutions.values():
        if sol.reason:
            console.print(f"[bold]{escape(sol.parameter)}[/bold]: {escape(sol.reason)}")
    if curve is not None:
        ok = np.isfinite(curve.y)
        console.print(f"feasibility curve {escape(curve.y_parameter)}"
                      f"({escape(curve.x_parameter)}): {int(ok.sum())} of {curve.x.size} "
                      f"points solvable" + ("" if out is None else f", drawn to {out}"))
    print_warnings(notes, "note")
    if unreachable(result):
        raise SystemExit(1)


def unreachable(result) -> bool:
    """A target not met now that no one parameter can meet: exit 1, as a refuted proof
    (docs/reference/errors.md); a script read an all-"impossible" table as success."""
    return not result.met_now and not any(s.possible for s in result.solutions.values())
