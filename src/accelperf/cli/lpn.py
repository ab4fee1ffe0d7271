"""`accelperf lpn ...`: Latency Petri Nets."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from ..report import dump_json
from .app import cli
from .common import check_output, console


@cli.group()
def lpn():
    """Latency Petri Nets: simulate an accelerator's micro-architecture, draw it."""


def _run_lpn(model, user_input, max_time=None, max_commits=None, trace=False,
             max_firings_per_cycle=None):
    """Simulate; a run that cannot finish prints its report and exits 1 (130 on Ctrl-C)."""
    from ..lpn import Interrupted, SimulationError, simulate
    try:
        return simulate(model, user_input, max_time=max_time, max_commits=max_commits,
                        max_firings_per_cycle=max_firings_per_cycle, trace=trace)
    except SimulationError as exc:
        click.echo(exc.report, err=True)
        raise SystemExit(130 if isinstance(exc, Interrupted) else 1) from None


@lpn.command("list")
def lpn_list():
    """The library's example accelerators."""
    from ..lpn.library import LIBRARY
    from rich.markup import escape
    table = Table(title="LPN library models (accelperf lpn simulate NAME --input ...)")
    table.add_column("name", no_wrap=True)
    table.add_column("what it models")
    table.add_column("--input")
    for name, builder in LIBRARY.items():
        model = builder()
        table.add_row(name, escape(model.description), escape(model.input_format or "none"))
    console.print(table)


@lpn.command("simulate")
@click.argument("model_spec", metavar="MODEL")
@click.option("--input", "input_text", metavar="FILE|JSON",
              help="The accelerator's input for Ψ (a file in the model's own format, a JSON "
                   "file or inline JSON); default: the model's own example input.")
@click.option("--max-time", type=click.IntRange(0), default=None,
              help="Stop when the next event is later than cycle N.")
@click.option("--max-commits", type=click.IntRange(0), default=None,
              help="Stop after N commits (default 100,000,000).")
@click.option("--max-firings-per-cycle", type=click.IntRange(1), default=None,
              help="Stop after N firings start without the clock moving, a zero-delay "
                   "loop (default 1,000,000).")
@click.option("--trace", "trace_out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write every firing: .json (Chrome trace events, for Perfetto) or .csv.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def lpn_simulate(model_spec, input_text, max_time, max_commits, max_firings_per_cycle,
                 trace_out, as_json):
    """Simulate MODEL (a library name or path/to/file.py:build_function)."""
    from ..lpn.loader import load_input, load_model
    check_output(trace_out, "--trace", (".json", ".csv"))
    model = load_model(model_spec)
    result = _run_lpn(model, load_input(input_text, model), max_time, max_commits,
                      trace=trace_out is not None,
                      max_firings_per_cycle=max_firings_per_cycle)
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
    from ..lpn.loader import load_input, load_model
    from ..lpn.viz import net_html, net_svg
    check_output(out, "--out", (".svg", ".html"))
    model = load_model(model_spec)
    result = _run_lpn(model, load_input(input_text, model)) if run or input_text else None
    out.write_text(net_html(model, result) if out.suffix.lower() == ".html"
                   else net_svg(model, result), encoding="utf-8")
    click.echo(f"wrote {out}", err=True)


