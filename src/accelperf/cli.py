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
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
