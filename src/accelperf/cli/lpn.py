"""`accelperf lpn ...`: Latency Petri Nets."""

from __future__ import annotations

import shlex
import time
from pathlib import Path

import click
from rich.table import Table

from ..errors import ModelError, invalid
from ..outputs import write_atomic
from ..report import dump_json
from .app import cli
from .common import (FREQUENCY, check_output, console, cycles_text, input_label, param_options,
                     read_params, typed)
from .flags import quoted
from .lpn_batch import note_backend, simulate_batch
from .lpn_calibrate import covered_input, lpn_calibrate, lpn_compare, print_parameters
from .lpn_check import lpn_check
from .lpn_verify import PROVED, REFUTED, UNDECIDED, lpn_verify, verdict_status  # noqa: F401
from .stopping import DEFAULT_BUDGET, duration, run_stopping


@cli.group()
def lpn():
    """Latency Petri Nets: simulate an accelerator's micro-architecture, draw it."""


lpn.add_command(lpn_check)
lpn.add_command(lpn_calibrate)
lpn.add_command(lpn_compare)
lpn.add_command(lpn_verify)


def _run_lpn(model, user_input, max_time=None, max_commits=None, trace=False,
             max_firings_per_cycle=None, backend="python", as_json=False):
    """Simulate; a run that cannot finish prints its report and exits 1 (130 on Ctrl-C),
    with ``as_json`` its JSON on stdout as well (:func:`failed_run`)."""
    import warnings

    from ..lpn import Interrupted, SimulationError, simulate
    try:
        with warnings.catch_warnings():          # auto's fallback: noted once, by the CLI
            warnings.simplefilter("ignore", RuntimeWarning)
            return simulate(model, user_input, max_time=max_time, max_commits=max_commits,
                            max_firings_per_cycle=max_firings_per_cycle, trace=trace,
                            backend=backend)
    except SimulationError as exc:
        if as_json and not isinstance(exc, Interrupted):
            # a script reading stdout gets the failure as JSON, not an empty stream
            click.echo(dump_json(failed_run(exc)))
        click.echo(exc.report, err=True)
        raise SystemExit(130 if isinstance(exc, Interrupted) else 1) from None


@lpn.command("list")
def lpn_list():
    """The library's example accelerators.

    On a terminal, a table wrapped to its width; into a pipe or a file, one plain line per
    model (name, a tab, what it models, a tab, what --input takes), for grep and cut.

    \b
    Examples:
      accelperf lpn list
      accelperf lpn list | cut -f1
    """
    from ..lpn.library import LIBRARY
    from rich.markup import escape
    models = [(name, builder()) for name, builder in LIBRARY.items()]
    if not console.is_terminal:
        for name, model in models:
            click.echo(f"{name}\t{model.description}\t{model.input_format or 'none'}")
        return
    table = Table(title="LPN library models (accelperf lpn simulate NAME --input ...)")
    table.add_column("name", no_wrap=True)
    table.add_column("what it models")
    table.add_column("--input")
    for name, model in models:
        table.add_row(name, escape(model.description), escape(model.input_format or "none"))
    console.print(table)


SLOW_PYTHON_SECONDS = 10.0
"""A run on the Python engine (the default) longer than this suggests the compiled one."""


def note_slow_python(backend: str, seconds: float) -> None:
    """A line on stderr after a long run on the Python engine, where a C compiler is at
    hand: a new user waited 100 s for a stream that --backend compiled runs 26x faster."""
    from ..lpn.compiled import compiler_missing
    if backend == "python" and seconds > SLOW_PYTHON_SECONDS and compiler_missing() is None:
        click.echo(f"note: the Python engine took {seconds:.0f} s; --backend compiled runs the "
                   f"same net in C, with the same results, usually tens of times faster",
                   err=True)


@lpn.command("simulate")
@click.argument("model_spec", metavar="MODEL")
@click.argument("more_inputs", nargs=-1, metavar="[INPUT...]")
@click.option("--input", "input_text", metavar="FILE|JSON",
              help="The accelerator's input for Ψ (a file in the model's own format, a JSON "
                   "file or inline JSON); default: the model's own example input. Several "
                   "(--input A B C) run a batch.")
@click.option("--inputs", "inputs_glob", metavar="DIR|GLOB",
              help="Run a batch over every file in DIR, or the files matching GLOB. Workers "
                   "read and parse the files themselves (on a cluster they must see the "
                   "same paths; else add --send-inputs).")
@click.option("--backend", type=click.Choice(["python", "compiled", "auto"]),
              default="python", show_default=True,
              help="Python engine, the net compiled to C once (cached), or compiled when a "
                   "C compiler is available.")
@click.option("--workers", type=click.IntRange(1), default=None,
              help="Processes for a batch (default: all cores).")
@click.option("--scheduler", metavar="tcp://HOST:8786",
              help="Run the batch on this Dask cluster (pip install 'accelperf[dask]').")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the batch's rows to .csv or .parquet as each input finishes (in "
                   "the order they finish; a killed batch keeps every finished row), or to "
                   ".json at the end.")
@click.option("--resume", is_flag=True,
              help="Skip the inputs whose rows are already in --out and append the rest.")
@click.option("--send-inputs", is_flag=True,
              help="With --scheduler: read each input file here and send its bytes, for "
                   "workers that cannot read the paths given (default: send the names).")
@click.option("--max-time", type=click.IntRange(0), default=None,
              help="Stop when the next event is later than cycle N.")
@click.option("--max-commits", type=click.IntRange(0), default=None,
              help="Stop at the commit that passes N (default 100,000,000).")
@click.option("--max-firings-per-cycle", type=click.IntRange(1), default=None,
              help="Stop after N firings start without the clock moving, a zero-delay "
                   "loop (default 1,000,000).")
@click.option("--trace", "trace_out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write every firing: .json (Chrome trace events, for Perfetto) or .csv.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@param_options
def lpn_simulate(model_spec, more_inputs, input_text, inputs_glob, backend, workers,
                 scheduler, out, resume, send_inputs, max_time, max_commits,
                 max_firings_per_cycle, trace_out, as_json, params_file=None, param_list=()):
    """Simulate MODEL (a library name or path/to/file.py:build_function) on one input,
    or on many (a batch: one row per input)."""
    from ..lpn.loader import load_model
    if more_inputs and input_text is None:
        raise invalid("INPUT", more_inputs[0], f"an input is given with --input (--input "
                                               f"{shlex.quote(more_inputs[0])}; several: "
                                               f"--input A B C)")
    # --input A B C: click gives A to --input and B, C as extra arguments.
    texts = ([] if input_text is None else [input_text]) + list(more_inputs)
    limits = dict(max_time=max_time, max_commits=max_commits,
                  max_firings_per_cycle=max_firings_per_cycle)
    if len(texts) > 1 or inputs_glob or out or workers or scheduler or resume:
        if trace_out is not None:
            raise invalid("--trace", str(trace_out), "a batch has no trace: trace one "
                                                     "input at a time")
        return simulate_batch(model_spec, texts, inputs_glob, backend, workers, scheduler,
                              out, limits, as_json, resume, send_inputs,
                              read_params(params_file, param_list, model_spec), params_file)
    check_output(trace_out, "--trace", (".json", ".csv"))
    model = load_model(model_spec, read_params(params_file, param_list, model_spec))
    note_backend(backend)
    began = time.perf_counter()
    try:
        result = _run_lpn(model, covered_input(params_file, model_spec, model, texts[:1]),
                          trace=trace_out is not None, backend=backend, as_json=as_json,
                          **limits)
    finally:            # a run stopped past max_commits took the longest of all
        note_slow_python(backend, time.perf_counter() - began)
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
                  f"[/bold] ({result.backend} engine)")
    table = Table()
    for col in ("transition", "commits", "busy cycles", "utilisation"):
        table.add_column(col, justify="right")
    for name, u in result.utilisation.items():
        table.add_row(name, str(result.commits[name]), str(result.busy[name]), f"{u:.1%}")
    console.print(table)


def failed_run(exc) -> dict:
    """A run that did not finish, as `lpn simulate --json` prints it: why (``stopped``:
    deadlock or limit, the one-line ``error``, the ``report`` of where it stands) and the
    statistics up to that point, under the keys of a finished run's JSON."""
    from ..lpn.outcome import DeadlockError
    return {"ok": False, "stopped": "deadlock" if isinstance(exc, DeadlockError) else "limit",
            "error": str(exc), "report": exc.report, **exc.result.to_dict()}


@lpn.command("show")
@click.argument("model_spec", metavar="MODEL")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="FILE.svg or FILE.html (required unless --parameters).")
@click.option("--parameters", "list_parameters", is_flag=True,
              help="List the named delays the model declares (--param NAME=VALUE sets one).")
@click.option("--simulate", "run", is_flag=True,
              help="With --out: run the model first and colour transitions by utilisation.")
@click.option("--input", "input_text", metavar="FILE|JSON",
              help="With --out: the input to simulate (implies --simulate).")
@param_options
def lpn_show(model_spec, out, list_parameters, run, input_text, params_file=None,
             param_list=()):
    """Draw MODEL: places, transitions, weights, capacities, delays.

    \b
    Examples:
      accelperf lpn show jpeg-decoder --out jpeg.svg
      accelperf lpn show jpeg-decoder --simulate --out jpeg.html   # coloured by utilisation
    """
    from ..lpn.loader import load_input, load_model
    from ..lpn.viz import net_html, net_svg
    if out is None and not list_parameters:
        raise ModelError("--out is missing: give FILE.svg or FILE.html (or --parameters)")
    if out is None:
        # the run only colours the drawing: --parameters alone draws nothing to colour
        if run:
            raise ModelError("--simulate is invalid without --out: it colours the drawing "
                             "by utilisation; add --out FILE.svg or FILE.html")
        if input_text is not None:
            raise ModelError(f"--input = {input_text!r} is invalid without --out: it is "
                             f"the input the drawing is simulated on; add --out FILE.svg "
                             f"or FILE.html")
    check_output(out, "--out", (".svg", ".html"))
    model = load_model(model_spec, read_params(params_file, param_list, model_spec))
    if list_parameters:
        print_parameters(model)
        if out is None:
            return
    result = _run_lpn(model, load_input(input_text, model)) if run or input_text else None
    write_atomic(out, (net_html if out.suffix.lower() == ".html" else net_svg)(model, result))
    click.echo(f"wrote {out}", err=True)


# ---------------------------------------------------------------------- input classes, interfaces
def _check_inside(module, texts, values, phases):
    """Refuse, before any simulation, a --check input the interface does not cover: a
    user's input outside the space is bad input, not an internal error."""
    for text, x in zip(texts, values):
        try:
            module.latency(x, phases)
        except module.OutsideClasses as exc:
            raise ModelError(f"INPUT = {text!r:.60} is invalid for --check: {quoted(exc)}; give "
                             "--space FILE with a space that covers it") from None
        except ValueError as exc:         # the module's Ψ refuses it (a partial MCU)
            raise ModelError(f"INPUT = {text!r:.60} is invalid for --check: {quoted(exc)}") from None


def _space(model, space_path):
    from ..lpn.analysis.space import default_space, load_space
    return default_space(model) if space_path is None else load_space(model, space_path)


@lpn.command("classes")
@click.argument("model_spec", metavar="MODEL")
@click.option("--space", "space_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Input space (TOML); default: the one shipped for MODEL, else one around "
                   "its example input.")
@click.option("--max-classes", type=click.IntRange(1), default=256, show_default=True,
              help="Stop when the space splits into more paths than this.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@param_options
def lpn_classes(model_spec, space_path, max_classes, as_json, params_file=None,
                param_list=()):
    """Input classes of MODEL over an input space (OSDI'24 §4.1, A.2)."""
    from ..lpn.analysis.interfaces.classes import input_classes
    from ..lpn.analysis.space import describe
    from ..lpn.loader import load_model
    model = load_model(model_spec, read_params(params_file, param_list, model_spec))
    space = _space(model, space_path)
    classes = input_classes(model, space, max_classes=max_classes)
    if as_json:
        click.echo(dump_json({"model": model.name, "space": describe(space),
                              "classes": [c.to_dict() for c in classes]}))
        return
    console.print(f"[bold]{model.name}[/bold]: {len(classes)} input class(es) over "
                  f"{space.named}", highlight=False)
    table = Table()
    for col in ("class", "conditions", "commits", "ends"):
        table.add_column(col)
    for c in classes:
        table.add_row(str(c.index), "\n".join(c.readable_conditions()) or "(whole space)",
                      ", ".join(f"{t} x {n}" for t, n in c.commit_counts().items()),
                      "deadlock: " + ", ".join(c.stuck) if c.stuck else "done")
    console.print(table)


@lpn.command("interface")
@click.argument("model_spec", metavar="MODEL")
@click.argument("inputs", nargs=-1, metavar="[INPUT ...]")
@click.option("--space", "space_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Input space (TOML); default: the one shipped for MODEL, else one around "
                   "its example input (each property from 0, or the least value a token "
                   "can finish with, to the example's largest value).")
@click.option("--phases", is_flag=True,
              help="Make the phase-aware form (sum of phases) the module's default.")
@click.option("--plain", is_flag=True,
              help="Make the plain form (§4.2's max over transitions) the module's default. "
                   "Without either, the form more accurate on the space's samples.")
@click.option("--frequency", type=FREQUENCY, default="1GHz", show_default=True,
              help="Clock frequency the module uses for seconds.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the interface as a Python module (.py).")
@click.option("--check", "check_inputs", is_flag=True,
              help="Compare the interface with simulation on the INPUTs (files or JSON); "
                   "exit status 1 when an input's error exceeds --tolerance.")
@click.option("--tolerance", type=click.FloatRange(0, min_open=True), default=0.05,
              show_default=True, help="With --check: the largest relative error that passes.")
@click.option("--max-classes", type=click.IntRange(1), default=256, show_default=True)
@click.option("--timeout", metavar="DURATION", default=DEFAULT_BUDGET, show_default=True,
              help="Time budget of the extraction: past it, exit 3 saying where it was.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@param_options
def lpn_interface(model_spec, inputs, space_path, phases, plain, frequency, out,
                  check_inputs, tolerance, max_classes, timeout, as_json, params_file=None,
                  param_list=()):
    """Performance interface of MODEL (lpn2pi, OSDI'24 §4.2): one formula per input class.

    \b
    Examples:
      accelperf lpn interface darwin
      accelperf lpn interface jpeg-decoder --out jpeg_iface.py    # a stdlib-only module
      accelperf lpn interface jpeg-decoder --check '[1,1,1,1,1,1]' '[63,2,2,2,2,2]'
    """
    from ..lpn.analysis.interfaces.accuracy import check, choose_form
    from ..lpn.analysis.interfaces.assumptions import failed_assumption
    from ..lpn.analysis.interfaces.bottleneck import class_bottleneck
    from ..lpn.analysis.interfaces.emit import load_module, module_source
    from ..lpn.analysis.interfaces.interface import check_interface_request
    from ..lpn.analysis.membership import refuse_outside
    from ..lpn.analysis.interfaces.token_stream import StreamInterface, interface_for
    from ..lpn.loader import load_input, load_model
    from .common import progress_run
    from .lpn_stream import check_input, stream_interface_command
    check_output(out, "--out", (".py",))      # before the extraction's seconds or minutes
    if inputs and not check_inputs:
        raise ModelError(f"INPUT = {inputs[0]!r} is invalid here: inputs go with --check")
    if check_inputs and not inputs:
        raise ModelError("--check is invalid without inputs: give INPUT files or JSON")
    if phases and plain:
        raise ModelError("--phases and --plain are invalid together: give one, or neither "
                         "for the form more accurate on the space's samples")
    if not check_inputs and typed("tolerance"):      # its default asks for nothing
        raise ModelError(f"--tolerance = {tolerance:g} is invalid without --check: it is "
                         f"the error an INPUT of --check may have; add --check INPUT... or "
                         f"leave it out")
    seconds = duration(timeout)
    values = [check_input(text, load_input) for text in inputs]
    model = load_model(model_spec, read_params(params_file, param_list, model_spec))
    check_interface_request(model)
    space = _space(model, space_path)
    refuse_outside(model, space, inputs, values)      # in a second, not after extraction

    def one_form():
        # the stream's forms are known only once the whole-input extraction finds the net
        # steered by token values (in milliseconds), before the pricing that takes seconds
        raise ModelError(f"{'--phases' if phases else '--plain'} is invalid for "
                         f"{model.name}: a stream priced token by token has one form; "
                         f"leave it out")

    def extract(tick):
        iface = interface_for(model, space, max_classes=max_classes, progress=tick,
                              before_stream=one_form if phases or plain else None)
        if isinstance(iface, StreamInterface) or phases or plain:
            return iface, None
        tick("choosing the form")
        return iface, choose_form(model, iface, load_module(module_source(
            iface, model, model_spec, frequency, phases=False)))
    iface, form = run_stopping("lpn interface", "extracting", seconds, extract)
    if isinstance(iface, StreamInterface):      # a stream priced token by token
        return stream_interface_command(model, model_spec, iface, values, inputs, out,
                                        frequency, check_inputs, tolerance, as_json)
    if form is not None:
        phases = form.phases
    source = module_source(iface, model, model_spec, frequency, phases=phases,
                           form_note="" if form is None else form.describe())
    if out is not None:
        write_atomic(out, source)
        click.echo(f"wrote {out}", err=True)
    if check_inputs:
        module = load_module(source)
        _check_inside(module, inputs, values, phases)
        acc = progress_run(len(values), "simulating", lambda advance: check(
            model, module, values, phases=phases, advance=advance))
        # issue 23: an input over the tolerance names the assumption that fails on it
        failures = {i: failed_assumption(model, iface, module, r.input, r.simulated,
                                         phases, tolerance)
                    for i, r in enumerate(acc.rows) if r.error > tolerance}
        if as_json:
            click.echo(dump_json(acc.to_dict() | {"failed_assumptions": {
                inputs[i]: None if f is None else {"assumption": f.assumption,
                                                   "evidence": f.evidence}
                for i, f in failures.items()}}))
        else:
            table = Table(title=f"{model.name}: interface vs simulation")
            for col in ("input", "predicted", "simulated", "error"):
                table.add_column(col, justify="right")
            for r, text in zip(acc.rows, inputs):
                table.add_row(input_label(text), cycles_text(r.predicted), f"{r.simulated:,}",
                              f"{r.error:.2%}")
            console.print(table)
            console.print(f"mean error {acc.mean_error:.2%}, max error {acc.max_error:.2%}"
                          + ("" if acc.max_error <= tolerance else
                             f": over the tolerance {tolerance:.2%}"))
            for i, failure in failures.items():
                console.print(f"{input_label(inputs[i])}: " + (str(failure) if failure else
                                                        "no stated assumption is seen to fail"),
                              markup=False)
        raise SystemExit(0 if acc.max_error <= tolerance else 1)
    if as_json:
        click.echo(dump_json({"model": model.name, "seconds": iface.seconds,
                              "default_form": {"form": "phases" if phases else "plain",
                                               "forced": form is None} |
                              ({} if form is None else form.to_dict()),
                              "classes": [_class_json(c) for c in iface.classes]}))
        return
    for c in iface.classes:
        conds = " and ".join(c.input_class.readable_conditions()) or "the whole space"
        merged = f", the symbolic run's classes {', '.join(map(str, c.grouped))}" \
            if c.grouped else ""
        console.print(f"[bold]class {c.input_class.index}[/bold] ({conds}{merged})")
        console.print(f"  latency = {c.latency}    [dim]# bottleneck "
                      f"{class_bottleneck(c, space)}[/dim]")
        console.print(f"  by phase = {_phased_form(c)}", markup=False)
        for k, ph in enumerate(c.phases, 1):
            # a replayed stream: its closed form is what a full pipeline would give
            replayed = c.schedule is not None and ph.stream == c.schedule.stream
            latency = f"period replay (closed form, pipeline full: {ph.latency})" \
                if replayed else ph.latency
            console.print(f"    phase {k}: {' -> '.join(ph.transitions)}: {latency}"
                          f"    [dim]# bottleneck {ph.bottleneck}[/dim]")
    console.print("default form: " + (form.describe() if form is not None else
                                      ("by phase" if phases else "plain") + " (forced)"))
    console.print(f"[dim]extracted in {iface.seconds:.2f} s[/dim]")


def _phased_form(c) -> str:
    """The by-phase latency as the module computes it (a recurrence is replayed)."""
    if c.schedule is None:
        return str(c.phased_latency)
    others = [f"{ph.bottleneck} phase ({ph.latency})" for ph in c.phases
              if ph.stream != c.schedule.stream]
    return " + ".join([c.schedule.describe()] + others)


def _class_json(c) -> dict:
    return {"index": c.input_class.index, "conditions": c.input_class.readable_conditions(),
            "grouped": list(c.grouped),
            "latency": str(c.latency), "bottleneck": c.bottleneck,
            "phased_latency": str(c.phased_latency), "phased_form": _phased_form(c),
            "phases": [{"transitions": list(p.transitions), "latency": str(p.latency),
                        "bottleneck": p.bottleneck} for p in c.phases],
            "gaps": [{"transition": g.transition, "commits": str(g.commits),
                      "gap": str(g.gap), "effective": str(g.effective), "bound": g.bound}
                     for g in c.gaps]}
