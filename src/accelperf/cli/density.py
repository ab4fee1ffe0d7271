"""`accelperf density ...`: computational density and the memory probe."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from ..errors import ModelError
from ..outputs import write_atomic
from ..report import dump_json
from ..units import format_size
from .app import cli
from .common import (POSITIVE, RealType, check_output, console, figure_path, print_warnings,
                     progress_run)
from .flags import said


@cli.group()
def density():
    """Computational density: the rate a memory hierarchy allows an algorithm (Steffen)."""


@density.command("bound")
@click.option("--algorithm", "algo", required=True, metavar="NAME|FORMULA",
              help="dot, matmul, allpairs, or a formula in alpha and s "
                   "('rho = sqrt(alpha)/(2*s)**1.5' or 'eta = ...').")
@click.option("--operand-bytes", type=RealType(low=1 / 8, high=2 ** 30), default=None,
              help="Operand size s in bytes, from one bit (0.125) to 1 GiB (default 4; 32 "
                   "for allpairs).")
@click.option("--hierarchy", "hier", default="src-map-c", show_default=True,
              metavar="NAME|FILE.toml", help="A built-in hierarchy or a TOML file.")
@click.option("--compute-ceiling", type=POSITIVE, default=None,
              help="Peak computations/s of the functional units (units x clock).")
@click.option("--problem-bytes", type=POSITIVE, default=None,
              help="Total input size M (bytes); needs --computations.")
@click.option("--computations", type=POSITIVE, default=None,
              help="Total computations Z; needs --problem-bytes.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Draw ρ(α) with the layers and σ per layer to FILE.png or FILE.svg "
                   "(the table or --json is printed as well).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def density_bound(algo, operand_bytes, hier, compute_ceiling, problem_bytes, computations,
                  out, as_json):
    """The highest rate each memory layer allows, the bound and its bottleneck layer.

    \b
    Examples:
      accelperf density bound --algorithm matmul
      accelperf density bound --algorithm dot --compute-ceiling 5e9 --out dot.png
      accelperf density bound --algorithm 'rho = sqrt(alpha)/(2*s)**1.5' --json
    """
    from ..density import algorithm, hierarchy, rate_bound
    out = figure_path(out)
    alg = algorithm(algo, operand_bytes)
    if problem_bytes is not None or computations is not None:
        if problem_bytes is None or computations is None:
            raise ModelError("--problem-bytes and --computations go together: give both the "
                             "problem size M and its computations Z, or neither")
        alg = alg.with_problem(problem_bytes, computations)
    result = rate_bound(alg, hierarchy(hier), compute_ceiling)
    if out is not None:
        from ..plot import save_figure
        from ..plot.density import density_figure
        save_figure(density_figure(result), out)
        click.echo(f"wrote {out}", err=True)
    if as_json:
        click.echo(dump_json(dict(result.to_dict(),
                                  warnings=[said(w) for w in result.warnings])))
        return
    table = Table(title=escape(f"{alg.name} ({alg.formula}) on {result.hierarchy.name}"))
    for col in ("layer", "μ", "β (B/s)", "λ (s)", "ρ(μ) (1/B)", "σ (1/s)", "βλ/μ"):
        table.add_column(col, justify="right")
    for r in result.layers:
        l = r.layer
        mark = " ◀" if r.name == result.bottleneck else ""
        table.add_row(escape(r.name) + mark, format_size(l.size_bytes),
                      f"{l.bandwidth_bytes_per_s:.3g}", f"{l.latency_s:.3g}",
                      "—" if r.rho is None else f"{r.rho:.4g}",
                      "no limit" if r.sigma == float("inf") else f"{r.sigma:.4g}",
                      f"{r.latency_factor:.3g}")
    console.print(table)
    if result.bound == float("inf"):
        line = f"bound: [bold]no limit[/bold] from memory (layer {escape(result.bottleneck)})"
    else:
        line = (f"bound: [bold]{result.bound:.4g}[/bold] computations/s, bottleneck "
                f"[bold]{escape(result.bottleneck)}[/bold]")
    if result.compute_ceiling is not None:
        line += (f"; compute ceiling {result.compute_ceiling:.4g}/s: "
                 f"[bold]{result.limited_by}-bound[/bold] by a factor {result.margin:.3g}")
    console.print(line)
    print_warnings(said(w) for w in result.warnings)


@density.command("probe")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="TOML file for the measured hierarchy (use it with --hierarchy FILE); "
                   "its directory must exist.")
@click.option("--repeats", type=click.IntRange(1, 100), default=5, show_default=True,
              help="Repeats per measurement; the median is reported.")
@click.option("--quick", is_flag=True, help="Short runs and a 256 MiB memory working set.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the measurements as one JSON object instead of the table "
                   "(the TOML file is written either way).")
def density_probe(out, repeats, quick, as_json):
    """Measure this machine's caches and memory: sizes, read bandwidth, latency.

    \b
    Examples:
      accelperf density probe --quick --out machine.toml    # about 10 s
      accelperf density bound --algorithm matmul --hierarchy machine.toml
    """
    from ..measure.memory import cache_levels, probe
    check_output(out, "--out", (".toml",))
    result = progress_run(2 * len(cache_levels()), "probing",
                          lambda tick: probe(repeats=repeats, quick=quick, progress=tick))
    write_atomic(out, result.to_toml())
    for warning in result.warnings:
        click.echo(f"accelperf: warning: {warning}", err=True)
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
    else:
        table = Table(title=f"Memory hierarchy of this machine ("
                            f"{result.method.split(' (')[0]}, median of {repeats})")
        for col in ("level", "size", "working set", "read bandwidth", "latency"):
            table.add_column(col, justify="right")
        for m in result.levels:
            table.add_row(m.level.name, format_size(m.level.size_bytes),
                          format_size(m.working_set_bytes),
                          f"{m.bandwidth_bytes_per_s / 1e9:.1f} GB/s",
                          f"{m.latency_s * 1e9:.1f} ns")
        console.print(table)
    click.echo(f"wrote {out}", err=True)
