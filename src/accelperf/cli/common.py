"""What the commands share: the console, option types, model options, small helpers."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console

from ..errors import ModelError
from ..logca import LogCA, preset
from ..logca import presets as preset_table
from ..units import format_size, parse_frequency, parse_size, powers_of_two

console = Console()


# ---------------------------------------------------------------------- option types
class ParsedType(click.ParamType):
    """A click parameter read by one of accelperf's parsers (sizes, frequencies)."""

    def __init__(self, name: str, parser):
        self.name, self.parser = name, parser

    def convert(self, value, param, ctx):
        if isinstance(value, float):
            return value
        try:
            return self.parser(value, name=param.opts[0] if param else self.name)
        except ModelError as exc:
            self.fail(str(exc), param, ctx)


SIZE, FREQUENCY = ParsedType("size", parse_size), ParsedType("frequency", parse_frequency)


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


def fmt_g(value) -> str:
    return "—" if value is None else f"{value:.6g} B ({format_size(value)})"


def single_model(spec, command: str) -> LogCA:
    models = build_models(**spec)
    if len(models) != 1:
        raise ModelError(f"--preset was given {len(models)} times: `logca {command}` analyses "
                         f"one design")
    return models[0]


def figure_path(out: Path | None) -> Path | None:
    if out is not None and out.suffix.lower() not in (".png", ".svg"):
        raise ModelError(f"--out = '{out}' is invalid: figures are written as .png or .svg")
    return out


def size_or_dash(value) -> str:
    return "—" if value is None else format_size(value)


def range_options(func):
    func = click.option("--to", "hi", type=SIZE, default="32MiB", show_default=True,
                        help="Largest granularity.")(func)
    return click.option("--from", "lo", type=SIZE, default="16B", show_default=True,
                        help="Smallest granularity.")(func)


def check_range(lo: float, hi: float) -> None:
    if lo >= hi:
        raise ModelError(f"--from = {lo:g} B and --to = {hi:g} B are invalid: need from < to")


def progress_run(total: int, label: str, func):
    from rich.progress import Progress
    with Progress(console=Console(stderr=True), transient=True,
                  disable=not sys.stderr.isatty()) as bar:
        task = bar.add_task(label, total=total)
        return func(lambda text: bar.update(task, description=text, advance=1))


def granularities(lo: float, hi: float) -> list[int]:
    check_range(lo, hi)
    sizes = [int(g) for g in powers_of_two(lo, hi)]
    if not sizes:
        raise ModelError(f"--from {lo:g} B --to {hi:g} B contains no power of two")
    return sizes


