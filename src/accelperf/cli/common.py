"""What the commands share: the console, option types, model options, small helpers."""

from __future__ import annotations

import math
import os
import sys
import tempfile
from pathlib import Path

import click
import rich.console
from rich.measure import Measurement

from ..errors import ModelError, invalid
from ..parameters import FILE_FIELD, ParamsFile, nearest, read_params_file  # noqa: F401
from ..units import (REAL_SIZES, format_crossing, format_size, parse_frequency, parse_size,
                     powers_of_two)


class Console(rich.console.Console):
    """A rich console that, when the output is not a terminal, prints each table or line at
    its natural width instead of rich's 80-column default: a pipe or a file then gets whole
    names and numbers, never "…" or a hard wrap in the middle of a sentence."""

    def print(self, *objects, **kwargs):
        if self.is_terminal or self._width is not None or not objects:
            return super().print(*objects, **kwargs)
        options = self.options.update_width(100_000)
        natural = max(Measurement.get(self, options, self.render_str(o) if isinstance(o, str)
                                      else o).maximum for o in objects)
        self._width = max(self.width, natural)
        try:
            return super().print(*objects, **kwargs)
        finally:
            self._width = None


console = Console()


def print_warnings(lines, label: str = "warning") -> None:
    """Each line after its label in yellow, escaped: Rich would read a name in brackets
    (``h[mmap]``, a layer's ``[L2]``) as a markup tag and drop it."""
    from rich.markup import escape
    for line in lines:
        console.print(f"[yellow]{label}:[/yellow] {escape(line)}")


# ---------------------------------------------------------------------- strict commands
class StrictCommand(click.Command):
    """A command that refuses an option given twice (click would keep the last value and
    drop the others without a word). Options declared ``multiple=True`` may repeat. A
    ModelError from the command's work is said in its flags (:mod:`.flags`)."""

    def parse_args(self, ctx, args):
        try:
            _, _, order = self.make_parser(ctx).parse_args(args=list(args))
        except click.UsageError:
            order = []                      # the real parse below reports it
        seen: dict[str, int] = {}
        for param in order:
            if isinstance(param, click.Option) and not (param.multiple or param.count
                                                         or param.is_eager):  # --help twice: help
                seen[param.name] = seen.get(param.name, 0) + 1
                if seen[param.name] == 2:
                    spelled = " / ".join(param.opts + param.secondary_opts)
                    raise click.UsageError(f"{spelled} was given more than once: give it once "
                                           f"(a repeated option would silently override the "
                                           f"first)", ctx)
        return super().parse_args(ctx, args)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except ModelError as exc:       # the model named a field: say the flag typed for it
            from .flags import rewrite
            rewrite(exc, ctx.command_path)
            raise


class StrictGroup(click.Group):
    """A group whose commands and sub-groups are strict as well."""

    command_class = StrictCommand
    group_class = type              # sub-groups are StrictGroups too


# ---------------------------------------------------------------------- option types
class ParsedType(click.ParamType):
    """A click parameter read by one of accelperf's parsers (sizes, frequencies)."""

    def __init__(self, name: str, parser):
        self.name, self.parser = name, parser

    def convert(self, value, param, ctx):
        if isinstance(value, float):
            return value
        # The parser's ModelError already names the option, the value and what is allowed;
        # it reaches the user as is, without click's "Invalid value for ..." in front.
        return self.parser(value, name=param.opts[0] if param else self.name)


SIZE, FREQUENCY = ParsedType("size", parse_size), ParsedType("frequency", parse_frequency)


class RealType(click.ParamType):
    """A finite real number, > 0 when ``positive``, within ``[low, high]`` when given. NaN
    and infinities are refused: click's FLOAT and FloatRange let ``nan`` through every range
    check (a --target of nan made a timing loop wait forever)."""

    name = "number"

    def __init__(self, positive: bool = True, low: float | None = None,
                 high: float | None = None):
        self.positive, self.low, self.high = positive, low, high

    def convert(self, value, param, ctx):
        name = param.opts[0] if param else "value"
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise invalid(name, value, "must be a real number") from None
        if not math.isfinite(number):
            raise invalid(name, value, "must be a finite number")
        if self.positive and number <= 0:
            raise invalid(name, value, "must be > 0")
        if self.low is not None and number < self.low:
            raise invalid(name, value, self._range())
        if self.high is not None and number > self.high:
            raise invalid(name, value, self._range())
        return number

    def _range(self) -> str:
        if self.low is not None and self.high is not None:
            return f"must be between {self.low:g} and {self.high:g}"
        return f"must be >= {self.low:g}" if self.low is not None else f"must be <= {self.high:g}"


POSITIVE = RealType(positive=True)


# ---------------------------------------------------------------------- files
def check_output(path: Path | None, option: str = "--out",
                 suffixes: tuple[str, ...] | None = None) -> Path | None:
    """Refuse an output path before any work starts, rather than after minutes of it.

    The suffix must be one of ``suffixes``; the file's directory must already exist (the
    commands never create directories: a mistyped directory is an error, not a new tree);
    and the file must be creatable or, when it exists, writable, which is tried by opening
    it (a new file is removed again): only the kernel knows about /proc, read-only mounts
    or a full quota, and root passes every permission check.
    """
    if path is None:
        return None
    text = str(path)
    if not text.strip():
        raise invalid(option, text, "give a file name")
    path = Path(path)
    if suffixes and path.suffix.lower() not in suffixes:
        raise invalid(option, text, f"write a {' or '.join(suffixes)} file")
    if path.is_dir():
        raise invalid(option, text, "is a directory; give a file name inside it")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.exists():
        raise invalid(option, text, f"the directory '{parent}' does not exist; create it "
                                    f"first (accelperf does not create directories)")
    if not parent.is_dir():
        raise invalid(option, text, f"'{parent}' is not a directory")
    existed = path.exists()
    flags = os.O_WRONLY | os.O_NONBLOCK | (os.O_APPEND if existed else os.O_CREAT | os.O_EXCL)
    try:
        os.close(os.open(path, flags, 0o644))
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise invalid(option, text, f"cannot be written: {reason}") from None
    if not existed:
        path.unlink()
    try:            # outputs are written beside the target, then renamed over it
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=parent)
        os.close(fd)
        os.unlink(temp)
    except OSError as exc:
        raise invalid(option, text, f"cannot be written: its directory '{parent}' takes no "
                                    f"new files ({exc.strerror or exc})") from None
    return path


def check_output_dir(path: Path | str, option: str = "--out") -> Path:
    """A directory the command will fill: created when missing, but its parent must exist,
    and a file must be creatable inside it (tried, then removed)."""
    text = str(path)
    if not text.strip():
        raise invalid(option, text, "give a directory name")
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise invalid(option, text, "is a file; give a directory")
    if not path.exists():
        parent = path.parent if str(path.parent) else Path(".")
        if not parent.is_dir():
            raise invalid(option, text, f"the directory '{parent}' does not exist; create it "
                                        f"first (accelperf creates only the last level)")
        try:
            path.mkdir()
        except OSError as exc:
            raise invalid(option, text, f"cannot be created: {exc.strerror}") from None
    check_output(path / ".accelperf-write-test", option)
    return path


def model_options(func):
    """Options that describe one or several LogCA models."""
    options = [
        click.option("--preset", "presets", multiple=True, metavar="DEVICE",
                     help="A Table 5 device. Commands that compare models (curve, "
                          "times, advise, ...) take it repeated; one-model commands "
                          "(show, regions, ...) take one."),
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


def build_models(presets, kernels, L, o, C, A, beta, latency, unit, frequency, name) -> list:
    """Models from preset names and/or explicit parameters (explicit ones override presets)."""
    from ..logca import LogCA, preset                 # SciPy: only for the LogCA commands
    from ..logca import presets as preset_table
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
        models = [_overridden(preset(p, k), explicit) for p, k in pairs]
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


def _overridden(model, explicit: dict):
    """A preset with the parameters given on the command line; one that no longer has the
    device's values is labelled so ("sparc-t3/aes" labelled a design with four parameters
    of the user's own), unless --name says what it is."""
    if not explicit:
        return model
    changed = [k for k in ("L", "o", "C", "A", "beta", "latency", "frequency_hz")
               if k in explicit and explicit[k] != getattr(model, k)]
    name = {} if "name" in explicit or not changed else \
        {"name": f"{model.label} with {', '.join(changed)} changed"}
    return model.with_parameters(**explicit, **name)


def fmt_g(value) -> str:
    """A granularity in detail: bytes and size; past any real size (REAL_SIZES) the
    honest statement first and the model's root after it."""
    if value is not None and value > REAL_SIZES:
        return f"{format_crossing(value)} (the model's root: {value:.3g} B)"
    return "—" if value is None else f"{value:.6g} B ({format_size(value)})"


def single_model(spec, command: str):
    models = build_models(**spec)
    if len(models) != 1:
        raise ModelError(f"--preset was given {len(models)} times: `logca {command}` analyses "
                         f"one design")
    return models[0]


def figure_path(out: Path | None, option: str = "--out") -> Path | None:
    """A figure's output path, checked (suffix .png or .svg, writable) before any work."""
    if out is not None and out.suffix.lower() not in (".png", ".svg"):
        raise invalid(option, str(out), "figures are written as .png or .svg")
    return check_output(out, option)


def cycles_text(value: float) -> str:
    """A latency in cycles for a table: whole cycles as such, a fraction (an interface's
    mean over a stream) with one decimal, so that "32 vs 32, 1.56%" cannot appear."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def input_label(text: str, width: int = 40) -> str:
    """An input's name cut to ``width`` characters: a long path keeps its end (the file's
    name), JSON its start."""
    if len(text) <= width:
        return text
    return "…" + text[-(width - 1):] if "/" in text and not text.lstrip().startswith(
        ("[", "{")) else text[:width - 1] + "…"


def size_or_dash(value) -> str:
    return "—" if value is None else format_size(value)


def crossing_size(x: float | None) -> str:
    """A crossing granularity as every command prints it (:func:`accelperf.units.
    format_crossing`: a dash, ``< 1 B``, ``none within 16 EiB`` or the size)."""
    return format_crossing(x)


def size_range(lo: float, hi: float) -> str:
    """An interval of crossing granularities, ``lo..hi``."""
    return f"{crossing_size(lo)}..{crossing_size(hi)}"


def range_options(func):
    func = click.option("--to", "hi", type=SIZE, default="32MiB", show_default=True,
                        help="Largest granularity.")(func)
    return click.option("--from", "lo", type=SIZE, default="16B", show_default=True,
                        help="Smallest granularity.")(func)


def check_range(lo: float, hi: float) -> None:
    if lo >= hi:
        raise ModelError(f"--from = {lo:g} B and --to = {hi:g} B are invalid: need from < to")


def typed(name: str) -> bool:
    """Whether the current command's option ``name`` (its Python name) was given on the
    command line, not left at its default: a default an unused option keeps is no cause to
    refuse it."""
    ctx = click.get_current_context()
    return ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE


def progress_run(total: int | None, label: str, func):
    """Run ``func(tick)`` under a progress bar on stderr when it is a terminal (quiet when
    piped); ``tick(text)`` advances one step and shows ``text``. Without a ``total`` the
    bar is a spinner with the elapsed time."""
    from rich.progress import (Progress, SpinnerColumn, TextColumn, TimeElapsedColumn)
    columns = [] if total is not None else [SpinnerColumn(), TextColumn("{task.description}"),
                                            TimeElapsedColumn()]
    with Progress(*columns, console=Console(stderr=True), transient=True,
                  disable=not sys.stderr.isatty()) as bar:
        task = bar.add_task(label, total=total)
        return func(lambda text: bar.update(task, description=text, advance=1))


def granularities(lo: float, hi: float, one_size: bool = False) -> list[int]:
    """The powers of two from ``lo`` to ``hi``: the whole-byte sizes a measurement runs;
    with ``one_size`` also ``lo == hi``, one size (measured again, `logca fit`'s outlier
    warning suggests it)."""
    if one_size and lo > hi:
        raise ModelError(f"--from = {lo:g} B and --to = {hi:g} B are invalid: need from <= to")
    if not one_size:
        check_range(lo, hi)
    if lo < 1:
        raise invalid("--from", f"{lo:g} B", "a measurement runs on whole bytes: at least 1B")
    sizes = [int(g) for g in powers_of_two(lo, hi)]
    if not sizes:
        raise ModelError(f"--from {lo:g} B --to {hi:g} B contains no power of two")
    return sizes




# ---------------------------------------------------------------------- LPN parameters
def param_options(func):
    """``--params FILE.toml`` and ``--param NAME=VALUE`` (repeatable): values for the named
    delays a model declares (``accelperf lpn show MODEL --parameters``); the command gets
    them as ``params``, a dict, with --param overriding the file."""
    func = click.option("--param", "param_list", multiple=True, metavar="NAME=VALUE",
                        help="Set one named delay of the model (repeatable).")(func)
    return click.option("--params", "params_file", type=click.Path(path_type=Path),
                        metavar="FILE.toml",
                        help="Named delay values, e.g. from `lpn calibrate --out`.")(func)


def with_flag(exc: ModelError, flag: str = "--params") -> ModelError:
    """The params file's refusal (:mod:`accelperf.parameters` names the file as
    ``params file``) with the option it came from in its place."""
    text = str(exc)
    if text.startswith(FILE_FIELD):
        return ModelError(flag + text[len(FILE_FIELD):])
    return exc


def load_params_file(path: Path, model_spec: str | None = None) -> ParamsFile:
    """``--params FILE.toml`` read strictly (:func:`accelperf.parameters.read_params_file`);
    with ``model_spec`` (the command's MODEL), a file naming another model or a parameter
    that model does not declare is refused (:meth:`~accelperf.parameters.ParamsFile.check`)."""
    try:
        read = read_params_file(path)
        if model_spec is None:
            return read
        from ..lpn.loader import load_model
        model = load_model(model_spec)
        return read.check(str(path), (model_spec, model.name), model.name,
                          [p.name for p in model.parameters])
    except ModelError as exc:
        raise with_flag(exc) from None


def read_params(params_file: Path | None, param_list=(), model_spec: str | None = None
                ) -> dict[str, int]:
    """The values of ``--params FILE.toml`` (read by :func:`load_params_file`) then
    ``--param NAME=VALUE``; with ``model_spec``, every name is checked against the model."""
    from ..lpn.params import parse_assignment
    values: dict[str, int] = {}
    if params_file is not None:
        values.update(load_params_file(params_file, model_spec).values)
    for text in param_list:
        name, value = parse_assignment(text)
        values[name] = value
    return values


def refuse_unused(unused: dict, mode: str = "--select", qualifier: str = "") -> None:
    """An option of ``unused`` given on the command line is an error naming it, the mode
    that has no use for it, and what to do instead."""
    ctx = click.get_current_context()
    for name, instead in unused.items():
        if typed(name):
            param = next(p for p in ctx.command.params if p.name == name)
            flag = param.opts[0]
            value = ctx.params[name]
            if isinstance(value, bool):         # a flag, or the second of a --x/--no-x pair
                given = flag if value or not param.secondary_opts else param.secondary_opts[0]
            else:
                given = f"{flag} = {_as_given(value, param.type)}"
            raise ModelError(f"{given} is not used with {mode}"
                             f"{' ' + qualifier if qualifier else ''}: {instead}; leave it out")


def _as_given(value, kind) -> str:
    """A parsed option value as a user would have typed it (1 KiB, not 1024.0)."""
    if kind is SIZE:
        return format_size(value).replace(" ", "")
    if kind is FREQUENCY:
        return f"{value / 1e9:g}GHz" if value >= 1e9 else f"{value / 1e6:g}MHz"
    return f"{value:g}" if isinstance(value, float) else str(value)
