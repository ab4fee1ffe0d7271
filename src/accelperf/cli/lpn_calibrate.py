"""`accelperf lpn calibrate` and `accelperf lpn compare`: a model against measured cycles.

Both read ``--measured DATA.csv`` (columns ``input``: a file relative to the CSV's folder,
as ``--input`` takes it, or inline JSON; ``cycles``: the measured latency). The model code
(:mod:`accelperf.lpn.calibrate`) does no file I/O; this module reads the CSV, the TOML and
the hardware trace and writes the parameter file and the figure.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import click
from rich.table import Table

from ..errors import ModelError, invalid
from ..report import dump_json
from ..outputs import write_atomic
from .common import StrictCommand, check_output, console, figure_path, nearest, \
    param_options, print_warnings, read_params, typed


def print_parameters(model) -> None:
    """The named delays ``model`` declares (``lpn show MODEL --parameters``)."""
    if not model.parameters:
        console.print(f"{model.name} declares no parameters")
        return
    table = Table(title=f"{model.name}: named delays (set with --param NAME=VALUE or "
                        f"--params FILE.toml)")
    for col in ("parameter", "value", "default", "allowed", "meaning"):
        table.add_column(col, justify="right" if col in ("value", "default") else "left")
    for p in model.parameters:
        table.add_row(p.name, str(p.value), str(p.default), p.allowed(), p.doc)
    console.print(table)


def fit_list(text: str, model) -> list[str]:
    """``--fit A,B,...``: names the model declares, each once."""
    declared = [p.name for p in model.parameters]
    fit = [n.strip() for n in text.split(",") if n.strip()]
    if not fit:
        raise invalid("--fit", text, f"a comma-separated list of parameters to fit, e.g. "
                                     f"{','.join(declared[:2]) or 'idct_cycles'} (leave "
                                     f"--fit out to fit every one)")
    for i, n in enumerate(fit):
        if n not in declared:
            raise invalid("--fit", n, f"model {model.name!r} declares "
                                      f"{', '.join(declared) or 'no parameters'}"
                                      f"{nearest(n, declared)}")
        if n in fit[:i]:
            raise invalid("--fit", text, f"{n!r} is given twice: name each parameter once")
    return fit


def found(columns) -> str:
    """What a CSV's header holds, for a message about a missing column."""
    names = [c for c in columns if c]
    return f"found {', '.join(names)}" if names else "found no header"


def read_measured(path: Path, model) -> list:
    """The rows of ``--measured`` as Measurements, every one checked before any work:
    columns, cycles (a number > 0) and the input (readable, accepted by Ψ)."""
    from ..lpn.calibrate import Measurement, whole
    from ..lpn.loader import load_input
    text = str(path)
    if not path.is_file():
        raise invalid("--measured", text, "no such file (a CSV with columns input,cycles)")
    try:
        with path.open(newline="", encoding="utf-8-sig") as fh:
            # the file's own line numbers, as an editor shows them (comments counted)
            kept = [(number, line) for number, line in enumerate(fh, start=1)
                    if not line.startswith("#")]
        reader = csv.DictReader(line for _, line in kept)
        rows = [(kept[reader.line_num - 1][0], row) for row in reader]
        header = list(reader.fieldnames or ())
        columns = set(header)
    except (UnicodeDecodeError, csv.Error) as exc:
        raise invalid("--measured", text, f"not a readable CSV ({exc})") from None
    missing = {"input", "cycles"} - columns
    if missing:
        raise invalid("--measured", text, f"a CSV with the columns input,cycles (it lacks "
                                          f"{', '.join(sorted(missing))}; {found(header)})")
    out = []
    for number, row in rows:
        name = (row["input"] or "").strip()
        where = f"line {number} ({name or 'empty input'})"
        if None in row or None in row.values():          # too few fields, or too many
            fields = sum(v is not None for k, v in row.items() if k is not None) + \
                len(row.get(None, ()))
            raise ModelError(f"--measured {where} is invalid: it has {fields} field(s), the "
                             f"header has {len(header)} ({', '.join(header)})")
        try:
            cycles = float(row["cycles"])
        except (TypeError, ValueError):
            cycles = math.nan
        if not math.isfinite(cycles) or cycles <= 0:
            raise invalid(f"--measured {where}: cycles", row["cycles"],
                          "a number of cycles > 0 (fractions allowed, e.g. an average)")
        candidate = path.parent / name
        try:
            source = str(candidate) if name and candidate.exists() else name
        except OSError:                      # inline JSON longer than a file name may be
            source = name
        try:
            value = load_input(source, model)
            model.marking(value)                            # Ψ accepts it
        except ModelError as exc:
            raise ModelError(f"--measured {where}: {exc.embedded()}") from None
        out.append(Measurement(name, value, whole(cycles)))
    if not out:
        raise invalid("--measured", text, "it holds no rows")
    return out


def model_builder(model_spec: str, start: dict):
    """A builder(values) of MODEL with ``start`` then ``values`` set."""
    from ..lpn.loader import load_model
    return lambda values: load_model(model_spec, {**start, **values})


@click.command("calibrate", cls=StrictCommand)
@click.argument("model_spec", metavar="MODEL")
@click.option("--measured", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="CSV of input,cycles (inputs relative to the CSV's folder, or JSON).")
@click.option("--fit", "fit_names", metavar="A,B,...",
              help="Parameters to fit (default: every one the model declares).")
@click.option("--folds", type=click.IntRange(2), default=5, show_default=True,
              help="Folds of the cross-validation (at most one per measured input; the "
                   "default takes one per input when there are fewer than 5).")
@click.option("--uncertainty", type=click.Choice(["profile", "bootstrap", "linear"]),
              default="profile", show_default=True,
              help="How each value's 68% interval and standard error are found.")
@click.option("--starts", type=click.IntRange(1), default=3, show_default=True,
              help="Points the search starts from (the start values and seeded others).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the fitted values as PARAMS.toml (read back by --params).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@param_options
def lpn_calibrate(model_spec, measured, fit_names, folds, uncertainty, starts, out, as_json,
                  params_file=None, param_list=()):
    """Fit MODEL's named delays to measured latencies (least relative error, whole
    cycles): fitted values with a 68% interval (profile, bootstrap or linear) and a
    standard error, error before and after, a k-fold
    cross-validated error (each fold refitted from scratch), the worst inputs and the
    parameters the data cannot pin down. Exit status 1 when even the best fit is far off
    the measurements (the file is still written, with a warning header).

    \b
    Examples:
      accelperf lpn calibrate jpeg-decoder --measured data.csv --out params.toml
      accelperf lpn calibrate jpeg-decoder --measured data.csv --fit idct_cycles,header_base
    """
    from ..lpn.calibrate import calibrate
    from ..lpn.loader import load_model
    check_output(out, "--out", (".toml",))
    start = read_params(params_file, param_list, model_spec)   # a file's names are checked:
    model = load_model(model_spec, start)       # an unknown name left came from --param
    fit = None if fit_names is None else fit_list(fit_names, model)
    rows = read_measured(measured, model)
    if folds > len(rows) and typed("folds"):
        # the default asks for fewer folds on few inputs; a number typed is meant
        raise ModelError(f"--folds = {folds} is invalid: between 2 and the number of "
                         f"measured inputs ({len(rows)})")
    result = calibrate(model_builder(model_spec, start), rows, fit=fit, folds=folds,
                       uncertainty=uncertainty, starts=starts)
    if out is not None:
        write_atomic(out, _params_file(result, f"accelperf lpn calibrate {model_spec} "
                                               f"--measured {measured}"))
        click.echo(f"wrote {out}", err=True)
    if as_json:
        click.echo(dump_json(result.to_dict()))
    else:
        _print_calibration(result)
    if result.refused:
        click.echo(f"error: {result.refused}", err=True)
        raise SystemExit(1)


def _params_file(result, command: str) -> str:
    """The ``--out`` file: a header (a warning first when the fit is refused or does not
    predict the inputs it was not fitted on), the values with a comment on each one the
    data do not determine, and ``[coverage]``."""
    why = result.refused or result.unpredictive
    header = [f"WARNING: not a calibration to use: {why}"] if why else []
    cv = result.cross_validated
    header += [command, f"error after the fit: mean {result.after.mean:.3%}, max "
                        f"{result.after.max:.3%} over {len(result.rows)} inputs" +
               ("" if cv is None else f"; cross-validated mean {cv.mean:.3%}, max "
                                      f"{cv.max:.3%}")]
    text = result.params.dumps(result.model, "\n".join(header))
    if result.coverage is None:
        return text
    table = result.coverage.to_table()
    lines = ["", "# What the calibration inputs covered (lpn simulate and compare warn on an",
             "# input outside it): per fitted delay, the range over those inputs of the",
             "# latency's relative change per cycle of it; the moves of the delays that",
             "# change none of them (their split is not determined).", "[coverage]",
             f"inputs = {table['inputs']}",
             "share = { " + ", ".join(f"{n} = [{lo!r}, {hi!r}]" for n, (lo, hi)
                                       in table["share"].items()) + " }",
             "unidentified = [" + ", ".join("{ " + ", ".join(f"{n} = {c!r}" for n, c
                                                             in v.items()) + " }"
                                            for v in table["unidentified"]) + "]"]
    return text + "\n".join(lines) + "\n"


def covered_input(params_file: Path | None, model_spec: str, model, texts: list[str]):
    """``lpn simulate``'s one input (``texts``: its text, or none for the model's
    default), read for ``model`` and checked against the ``--params`` file's coverage."""
    from ..lpn.loader import load_input
    user_input = load_input(texts[0] if texts else None, model)
    coverage_warning(params_file, model_spec, model, [(texts[0] if texts else "",
                                                        user_input)])
    return user_input


def _coverage_table(params_file: Path | None, model_spec: str) -> dict | None:
    """The ``[coverage]`` table of the ``--params`` file (written by ``lpn calibrate
    --out``), or None without a file or without the table."""
    from .common import load_params_file
    return None if params_file is None else load_params_file(params_file, model_spec).coverage


def coverage_warning(params_file: Path | None, model_spec: str, model, inputs) -> None:
    """Warn once (stderr) when an input ((name, input) pairs) of ``model`` (built from
    ``model_spec`` with ``--params``) lies outside the ``[coverage]`` of the ``--params``
    file; files without it pass."""
    from ..lpn.coverage import Coverage, check_inputs
    table = _coverage_table(params_file, model_spec)
    if table is None:
        return
    why = check_inputs(Coverage.from_table(table, f"--params {params_file}: [coverage]"),
                       model_builder(model_spec, {}),
                       {p.name: p.value for p in model.parameters}, inputs)
    if why:
        click.echo(f"warning: {why}", err=True)


def coverage_unchecked(params_file: Path | None, model_spec: str) -> None:
    """A batch's note (stderr) that the ``[coverage]`` of its ``--params`` file is not
    checked: each input would take a simulation more per fitted delay, on this process,
    where the batch spreads its inputs over workers."""
    if _coverage_table(params_file, model_spec) is None:
        return
    click.echo(f"note: --params {params_file}: a batch does not check its inputs against "
               f"the file's [coverage] (one simulation more per fitted delay and input); "
               f"simulate an input alone (--input X) to be warned when it lies outside",
               err=True)


def _print_calibration(result) -> None:
    table = Table(title=f"{result.model}: fitted on {len(result.rows)} inputs "
                        f"({result.simulations} simulations; uncertainty by "
                        f"{result.uncertainty_method})")
    for col in ("parameter", "default", "fitted", "68% interval", "std. error"):
        table.add_column(col, justify="left" if col == "parameter" else "right")
    for p in result.parameters:
        table.add_row(p.name + ("" if p.fitted_here else " (held)") +
                      ("" if p.identified else " (not identified)"), str(p.default),
                      str(p.fitted), "—" if p.interval is None else
                      f"{p.interval[0]}..{p.interval[1]}",
                      "—" if p.stderr is None else f"{p.stderr:.3g}")
    console.print(table)
    cv = result.cross_validated
    console.print(f"error before: mean {result.before.mean:.3%}, max {result.before.max:.3%}")
    console.print(f"error after:  mean {result.after.mean:.3%}, max {result.after.max:.3%} "
                  f"(on the inputs fitted; {result.agreeing} of {result.starts} starts reach "
                  f"this optimum)")
    # "too few inputs" with 6 inputs and 6 parameters read as a contradiction of the docs
    too_few = ("— (too few inputs: leaving a fold out would leave fewer inputs to fit "
               "than parameters to fit; measure more inputs or fit fewer delays)")
    console.print("cross-validated: " + (too_few if cv is None else
                                         f"mean {cv.mean:.3%}, max {cv.max:.3%} "
                                         f"({result.folds} folds, each refitted without "
                                         f"it, then predicted)"))
    console.print("worst inputs after the fit: " + "; ".join(
        f"{r.name} {r.error:+.3%}" for r in result.worst()))
    print_warnings(result.warnings)


@click.command("compare", cls=StrictCommand)
@click.argument("model_spec", metavar="MODEL")
@click.option("--measured", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="CSV of input,cycles (inputs relative to the CSV's folder, or JSON).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Plot the relative error against input size to FILE.png or FILE.svg.")
@click.option("--trace", "trace_path", type=click.Path(dir_okay=False, path_type=Path),
              help="The hardware's events (CSV of event,cycle) on one input of --measured.")
@click.option("--transition", metavar="NAME",
              help="With --trace: the LPN transition whose commits the events are.")
@click.option("--event", metavar="NAME",
              help="With --trace: the event name to align (default: --transition).")
@click.option("--trace-input", metavar="INPUT",
              help="With --trace: the row of --measured the trace was taken on (default: "
                   "the row whose file name matches the trace's).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@param_options
def lpn_compare(model_spec, measured, out, trace_path, transition, event, trace_input,
                as_json, params_file=None, param_list=()):
    """Where MODEL and the hardware part: measured against simulated cycles per input,
    and, with a hardware trace, the first event where their timing diverges.

    \b
    Examples:
      accelperf lpn compare jpeg-decoder --measured data.csv --out errors.png
      accelperf lpn compare jpeg-decoder --measured data.csv --trace photo.csv --transition idct_y
    """
    from ..lpn import simulate
    from ..lpn.calibrate import InputError, whole
    from ..lpn.trace_align import align_trace
    from ..lpn.loader import load_model
    figure_path(out)
    if (trace_path is None) != (transition is None):
        raise ModelError("--trace and --transition go together: the hardware's events and "
                         "the transition that models the unit they come from")
    if trace_path is None:
        for flag, value, what in (
                ("--event", event, "the trace's events to align"),
                ("--trace-input", trace_input, "the row of --measured the trace was taken on")):
            if value is not None:
                raise ModelError(f"{flag} = {value!r} is invalid without --trace: it names "
                                 f"{what}; add --trace FILE --transition NAME or leave it out")
    values = read_params(params_file, param_list, model_spec)
    model = load_model(model_spec, values)      # as in lpn_calibrate: from --param
    if transition is not None and transition not in [t.name for t in model.transitions]:
        raise invalid("--transition", transition, f"model {model.name!r} has "
                      f"{', '.join(t.name for t in model.transitions)}")
    # read before the measured inputs are loaded and simulated: a wrong trace fails now
    events = None if trace_path is None else _read_events(trace_path, event or transition)
    rows = read_measured(measured, model)
    traced = None if trace_path is None else _trace_row(rows, trace_path, trace_input,
                                                        Path(measured).parent)
    coverage_warning(params_file, model_spec, model, [(r.name, r.input) for r in rows])
    # The compiled engine when a compiler is found: one library serves any --params.
    results = [InputError(r.name, r.cycles, whole(simulate(model, r.input, backend="auto")
                                                  .latency)) for r in rows]
    alignment = None
    if events is not None:
        run = simulate(model, traced.input, trace=True)
        commits = [f.end for f in run.trace if f.transition == transition]
        alignment = align_trace(events, commits, f"{event or transition} events",
                                f"{transition} commits")
    sizes = [_size(r.input) for r in rows]
    if out is not None:
        from ..plot import save_figure
        from ..plot.calibration import error_figure
        save_figure(error_figure(model.name, sizes, [r.error for r in results]), out)
        click.echo(f"wrote {out}", err=True)
    from ..lpn.analysis.interfaces.accuracy import ErrorSummary
    summary = ErrorSummary.of(r.error for r in results)
    if as_json:
        click.echo(dump_json({
            "model": model.name,
            "inputs": [{"input": r.name, "size": s, "measured": r.measured,
                        "simulated": r.simulated, "error": r.error}
                       for r, s in zip(results, sizes)],
            "error": summary.to_dict(),
            "trace": None if alignment is None else
            {"input": traced.name, **alignment.to_dict()}}))
        _counts_agree(alignment, traced)
        return
    table = Table(title=f"{model.name} against {measured}")
    for col in ("input", "size", "measured", "simulated", "error"):
        table.add_column(col, justify="left" if col == "input" else "right")
    for r, s in zip(results, sizes):
        table.add_row(r.name, str(s), str(r.measured), str(r.simulated), f"{r.error:+.3%}")
    console.print(table)
    console.print(f"error: mean {summary.mean:.3%}, max {summary.max:.3%} over "
                  f"{len(results)} inputs")
    if alignment is not None:
        console.print(f"trace of {traced.name}: {alignment.summary()}")
    _counts_agree(alignment, traced)


def _size(value) -> int:
    """An input's size for the plot: blocks of a JPEG, else its length (1 for a scalar)."""
    blocks = getattr(value, "blocks", None)
    if isinstance(blocks, int):
        return blocks
    try:
        return len(value)
    except TypeError:
        return 1


def _read_events(path: Path, name: str) -> list[int]:
    text = str(path)
    if not path.is_file():
        raise invalid("--trace", text, "no such file (a CSV of event,cycle rows)")
    with path.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        rows = [(reader.line_num, row) for row in reader]       # the file's line numbers
    if not rows or {"event", "cycle"} - set(reader.fieldnames or ()):
        raise invalid("--trace", text, f"a CSV with the columns event,cycle and a row of "
                                       f"them ({found(reader.fieldnames or ())})")
    cycles = []
    for number, row in rows:
        if row["event"] != name:
            continue
        try:
            cycles.append(int(row["cycle"]))
        except (TypeError, ValueError):
            raise invalid(f"--trace line {number}: cycle", row["cycle"],
                          "a whole number of cycles") from None
        if len(cycles) > 1 and cycles[-1] < cycles[-2]:
            raise invalid(f"--trace line {number}: cycle", cycles[-1],
                          f"at or after the {name!r} event before it (cycle {cycles[-2]}): "
                          f"a trace's events come in time order")
    if not cycles:
        found = sorted({r["event"] for _, r in rows})
        raise invalid("--trace", text, f"it has no {name!r} events (it has "
                                       f"{', '.join(found)}; pick one with --event)")
    return cycles


def _counts_agree(alignment, traced) -> None:
    """Exit 1 where the trace has another number of events than the model's commits on
    that input: the trace was taken on another input (a wrong --trace-input printed a
    divergence and exited 0), or the model's structure differs from the hardware's."""
    if alignment is None or alignment.hardware_events == alignment.model_events:
        return
    click.echo(f"accelperf: lpn compare: the trace has {alignment.hardware_events} "
               f"{alignment.hardware_label}, the model {alignment.model_events} "
               f"{alignment.model_label} on {traced.name}: was the trace taken on that "
               f"input (--trace-input)? If it was, the model's structure differs from the "
               f"hardware's", err=True)
    raise SystemExit(1)


def _same_file(a: str, b: str) -> bool:
    try:
        return Path(a).is_file() and Path(b).is_file() and Path(a).samefile(b)
    except OSError:
        return False


def _trace_row(rows, trace_path: Path, trace_input: str | None, base: Path):
    if trace_input is not None:
        # the row's spelling, or the same file by another path (a row's path is read
        # from the --measured file's folder)
        match = [r for r in rows if r.name == trace_input] or \
            [r for r in rows if _same_file(str(base / r.name), trace_input)]
    else:
        match = [r for r in rows if Path(r.name).stem == trace_path.stem]
    if len(match) != 1:
        raise invalid("--trace-input", trace_input or trace_path.stem,
                      "the input column of exactly one row of --measured (the input the "
                      "trace was taken on)")
    return match[0]
