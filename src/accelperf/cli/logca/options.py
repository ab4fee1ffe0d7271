"""Options and helpers shared by the `accelperf logca` commands: output paths, the
uncertain-parameter type, JSON and Monte-Carlo options."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from ...errors import ModelError
from ..common import check_output, model_options

def output_path(out: Path | None, suffixes=(".png", ".svg")) -> Path | None:
    """``out`` checked before any work, as every command's --out is
    (:func:`..common.check_output`)."""
    return check_output(out, "--out", tuple(suffixes))


def out_option(text: str):
    return click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help=text)


def json_option(text: str = "Print one JSON object."):
    return click.option("--json", "as_json", is_flag=True, help=text)


def wrote(path: Path) -> None:
    click.echo(f"wrote {path}", err=True)


def save(fig, out: Path) -> None:
    from ...plot import save_figure
    save_figure(fig, out)
    wrote(out)


class ParameterType(click.ParamType):
    """A LogCA parameter that may be uncertain: a number, ``1500±10%``, ``uniform(a, b)``,
    ``normal(mean, sd)`` or ``lognormal(median, s)``."""

    name = "value|distribution"

    def convert(self, value, param, ctx):
        from ...logca.uncertainty import Distribution, parse_parameter
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
    from ...logca.uncertainty import Distribution
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


def parameter_table(title: str, parameters) -> Table:
    """Fitted parameters (accelperf.parameters.Parameter) as a table: value, standard
    error, note."""
    table = Table(title=title)
    for col in ("parameter", "value", "std. error", "note"):
        table.add_column(col, justify="left" if col == "note" else "right")
    for p in parameters:
        table.add_row(escape(p.name), f"{p.value:.5g}", "—" if p.stderr is None else f"{p.stderr:.3g}",
                      p.note or "")
    return table
