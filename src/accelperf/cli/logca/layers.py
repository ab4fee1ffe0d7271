"""`--hierarchy`/`--probe` for the LogCA commands: the memory layers a fit uses, and the
table of a hierarchical fit (issue 24)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from ...errors import ModelError
from ...outputs import replacing
from ..common import console, crossing_size, print_warnings, size_or_dash

FROM_DATA = "data"      # --hierarchy data: the caches named in the measurement's header


def hierarchy_options(func):
    func = click.option("--probe", is_flag=True,
                        help="Take the layers from a quick probe of this machine's caches "
                             "(as accelperf density probe --quick; a few seconds).")(func)
    return click.option("--hierarchy", "hier", default=None, metavar="NAME|FILE.toml|data",
                        help="Fit per-layer costs with the memory layers of this density "
                             "hierarchy (the TOML `density bound` reads), or `data`: the "
                             "host caches the data file's header names (accelperf measure "
                             "gpu writes them), as the library's threads see them; chosen "
                             "over plain LogCA by AIC.")(func)


def data_option(func):
    func = click.option("--select", is_flag=True,
                        help="With --data: choose LogCA's terms (host constant, kernel floor, "
                             "the accelerator's β_A, the layers given) by cross-validated "
                             "prediction instead of AIC.")(func)
    return click.option("--data", type=click.Path(dir_okay=False, path_type=Path),
                        default=None, metavar="FILE.csv",
                        help="With --select, --hierarchy or --probe: the measurements "
                             "(accelperf measure ...) the model is fitted to; the command "
                             "then answers for the fitted model.")(func)


def check_hierarchy_options(hier: str | None, probe: bool, data=False, spec=None,
                            select: bool = False) -> bool:
    """Refused before any work: both sources at once; for curve and advise (``data`` is
    not False) a hierarchy without the measurements its costs come from, or with a model
    given as well. True when a hierarchy is asked for."""
    if hier is not None and probe:
        raise ModelError("--hierarchy and --probe both given: the layers come from one or "
                         "the other")
    wanted = hier is not None or probe
    if data is False:
        return wanted
    if select and data is None:
        raise ModelError("--select needs --data FILE.csv: the terms are chosen on measurements")
    wanted = wanted or select
    if wanted and data is None:
        raise ModelError("--hierarchy/--probe needs --data FILE.csv: each layer's costs are "
                         "fitted to measurements (accelperf measure offload|aes --out FILE.csv)")
    if data is not None and not wanted:
        raise ModelError("--data needs --hierarchy NAME|FILE.toml, --probe or --select")
    if wanted:
        refuse_model_beside_data(spec, "the fitted model is drawn and advised")
    return wanted


def refuse_model_beside_data(spec: dict | None, why: str) -> None:
    """Refuse --preset or a parameter given with --data, which gives the model (the one
    given would be ignored in silence)."""
    given = [k for k, v in (spec or {}).items() if v not in (None, ())]
    if given:
        raise ModelError(f"--data gives the model; drop --{given[0].rstrip('s')} ({why})")


def measurement_notes(timings, select: bool) -> list[str]:
    """What a measurement says about how to read its fit: rows it could not pair, a CPU
    standing in for the GPU (`measure gpu --device cpu`), and a GPU run fitted without
    --select."""
    metadata = timings.metadata
    notes = list(timings.notes)
    busy = busy_note(str(metadata.get("load average", "")))
    if busy:
        notes.append(busy)
    if str(metadata.get("gpu", "")).startswith("none"):
        notes.append("measured with --device cpu: the CPU stood in for the GPU, so this fit "
                     "exercises the commands and says nothing about an offload")
    if not select and str(metadata.get("accelperf measure", "")).startswith("gpu "):
        notes.append("a GPU measurement: --select chooses the terms by cross-validated "
                     "prediction and says the g1 to quote (docs/how-to/gpu-pays-off.md)")
    return notes


BUSY_LOAD = 0.5     # load average per core above which other work shared the cores


def busy_note(load: str) -> str | None:
    """A note where the file's header says the machine was busy when it was measured
    ("5.74 on 2 cores": a 4 KiB softmax on such a CPU took 11.5 ms against 46 µs idle)."""
    import re
    found = re.fullmatch(r"\s*([0-9.]+) on ([0-9]+) cores\s*", load)
    if not found or float(found[1]) <= BUSY_LOAD * int(found[2]):
        return None
    return (f"the machine was busy when this was measured (load average {found[1]} on "
            f"{found[2]} cores): other work's time is in the timings; measure again on an "
            f"idle machine before trusting the fit")


def fit_from_data(data: Path, hier: str | None, probe: bool, statistic: str = "min",
                  latency: str = "auto", lo=None, hi=None, host_constant: bool = True,
                  select: bool = False):
    """(HierarchyFit, notes) of the measurements in ``data`` with the layers asked for; for
    curve and advise with the host's per-call constant (as `fit --host-constant`), which
    measurements through a language runtime always have. With ``select`` a
    :class:`~accelperf.logca.choose.ChosenFit` instead: the terms (the layers among them)
    chosen by cross-validated prediction."""
    from ...logca.hierfit import fit_hierarchical
    from ...measure.data import read_timings
    from ...logca.fit import prepare_data
    timings = read_timings(data, statistic)
    # the data's own faults (too few sizes) before a probe spends seconds on the caches
    d = prepare_data(timings.granularity, timings.host, timings.accel, timings.echo, lo, hi)
    layers, notes = load_layers(hier, probe, timings.metadata, data) \
        if (hier is not None or probe) else ((), [])
    notes = measurement_notes(timings, select) + notes
    if select:
        from ...logca.choose import choose
        from ...logca.validation import default_workers
        return choose(d, layers, name=f"fit of {Path(data).name}",
                      workers=default_workers()), notes
    result = fit_hierarchical(timings.granularity, timings.host, timings.accel, layers,
                              timings.echo, latency=latency, lo=lo, hi=hi,
                              host_constant=host_constant, name=f"fit of {Path(data).name}")
    return result, notes


def load_layers(hier: str | None, probe: bool, metadata: dict | None = None,
                data: Path | None = None) -> tuple[tuple, list[str]]:
    """(layers, warnings): from the hierarchy file or built-in, from the caches the data's
    header names (``--hierarchy data``: ``metadata``), or from a quick probe, whose
    warnings name each layer it could not separate from the next."""
    from ...logca.hierarchy import layers_from_hierarchy
    if hier == FROM_DATA:
        from ...logca.host_caches import layers_from_metadata
        try:
            return layers_from_metadata(metadata or {}), []
        except ModelError as exc:
            # the shipped GPU folders keep the host's file beside the data: say so
            beside = sorted(Path(data).parent.glob("*.toml")) if data is not None else []
            hint = f" (this folder has {', '.join(str(b) for b in beside)})" if beside else ""
            raise ModelError(f"--hierarchy = '{FROM_DATA}' is invalid: {exc}; give a "
                             f"hierarchy file of the host instead{hint}") from None
    if hier is not None:
        from ...density import hierarchy
        return layers_from_hierarchy(hierarchy(
            hier, also=f"'{FROM_DATA}' (the caches the measurement's header names)")), []
    from ...measure.crypto import MeasurementError
    from ...measure.memory import probe as run_probe
    try:
        result = run_probe(repeats=3, quick=True)
    except MeasurementError as exc:
        raise ModelError(f"--probe could not measure this machine's caches: {exc}") from None
    warnings = [f"the probe: {w}" for w in result.warnings]
    return layers_from_hierarchy(result.hierarchy()), warnings


def choice(result) -> str:
    """How the fitted model was chosen, for titles."""
    chosen = getattr(result, "chosen", None)
    return f"{chosen} chosen by AIC" if chosen else "terms chosen by cross-validation"


def render_hierarchy_fit(result, data: Path, extra_warnings=()) -> None:
    """The per-layer parameters with standard errors, the AIC choice and the errors of both
    candidates."""
    from .options import parameter_table
    console.print(parameter_table(f"LogCA with a memory hierarchy, fit of {data} "
                                  f"({result.model.base.latency} latency, seconds)",
                                  result.parameters.values()))
    rows = [("plain LogCA", result.plain)]
    if result.hierarchical is not None:
        rows.append(("with the hierarchy", result.hierarchical))
    for label, cand in rows:
        mean, worst = result.errors_of(cand)
        mark = " (chosen)" if cand.kind == result.chosen else ""
        console.print(f"{label}{mark}: AIC {cand.aic:.1f} with {cand.free} free parameters; "
                      f"speedup error mean {mean:.2%}, max {worst:.2%}")
    for label, c in (("g1", result.g1), ("g_A/2", result.g_half)):
        console.print(f"{label}: measured {crossing_size(c.measured)}, model "
                      f"{crossing_size(c.model)}")
    print_warnings(list(extra_warnings) + list(result.warnings), "note")


def hierarchy_curve(data: Path, hier, probe, lo, hi, out, as_json, select=False,
                    points: int = 400) -> None:
    """`logca curve --hierarchy/--probe --data`: the fitted curves beside the measurements."""
    import numpy as np
    from ...report import dump_json
    from ...units import format_size, log_grid, powers_of_two
    from .options import save, wrote
    result, notes = fit_from_data(data, hier, probe, select=select)
    if select:
        models = [("chosen by cross-validation", result.model)]
    else:
        models = [("plain LogCA", result.plain.model)]
        if result.hierarchical is not None:
            models.append(("with the hierarchy", result.hierarchical.model))
    g = powers_of_two(lo, hi)
    if out is not None and out.suffix.lower() == ".csv":
        grid = log_grid(lo, hi, points)
        with replacing(out) as temp, temp.open("w") as fh:
            fh.write("granularity_bytes," + ",".join(label for label, _ in models) + "\n")
            for i, x in enumerate(grid):
                fh.write(f"{x:.10g}," + ",".join(f"{float(m.speedup(x)):.10g}"
                                                 for _, m in models) + "\n")
        wrote(out)
    elif out is not None:
        from ...plot.fit import chosen_fit_figure, hierarchy_fit_figure
        save(chosen_fit_figure(result) if select else hierarchy_fit_figure(result), out)
    if as_json:
        click.echo(dump_json({"granularity_bytes": g.tolist(), "chosen": choice(result),
                              "speedup": {label: m.speedup(g).tolist() for label, m in models},
                              "warnings": notes + list(result.warnings)}))
        return
    if out is not None and not sys.stdout.isatty():
        return                  # the file is the output, as for the plain curve
    measured = dict(zip(result.granularity.tolist(), result.speedup_measured.tolist()))
    table = Table(title=f"speedup T0/T1 fitted to {data} ({choice(result)})")
    for col in ["granularity", "measured"] + [label for label, _ in models]:
        table.add_column(col, justify="right")
    for x in g:
        m = measured.get(float(x))
        table.add_row(format_size(x), "—" if m is None else f"{m:.4g}",
                      *(f"{float(model.speedup(x)):.4g}" for _, model in models))
    console.print(table)
    print_warnings(notes + list(result.warnings), "note")


def hierarchy_show(data: Path, hier, probe, as_json, select=False) -> None:
    """`logca show --hierarchy/--probe --data`: g1, g_A/2 and g_A of the fitted model (the
    first sizes where its speedup reaches 1, A/2, A; A the innermost layer's) beside the
    measured crossings, its peak and its limits."""
    from ...logca.fit import measured_crossing
    from ...report import dump_json
    result, notes = fit_from_data(data, hier, probe, select=select)
    model = result.model
    notes = notes + list(result.warnings)
    rows = [(label, level, value, measured_crossing(result.granularity,
                                                    result.speedup_measured, level))
            for label, level, value in (("g1", 1.0, model.g1()),
                                        ("g_A/2", model.A / 2, model.g_half()),
                                        ("g_A", model.A, model.g_A()))]
    peak_g, peak_s = model.peak()
    if as_json:
        click.echo(dump_json({"chosen": choice(result), "model": model.parameters(),
                              "metrics": {label: {"target": level, "model": value,
                                                  "measured": measured}
                                          for label, level, value, measured in rows},
                              "peak": None if peak_g is None else
                              {"granularity": peak_g, "speedup": peak_s},
                              **curve_ends(model), "warnings": notes}))
        return
    table = Table(title=f"{escape(model.label)}: {choice(result)}")
    for col in ("metric", "speedup", "model", "measured"):
        table.add_column(col, justify="right")
    for label, level, value, measured in rows:
        table.add_row(label, f"{level:.4g}", crossing_size(value), crossing_size(measured))
    console.print(table)
    peak = "none (the speedup still rises at 1e15 B)" if peak_g is None else \
        f"speedup {peak_s:.4g} at {size_or_dash(peak_g)}"
    console.print(f"peak: {peak}; {ends_text(model)}")
    print_warnings(notes, "note")


def curve_ends(model) -> dict:
    """The fitted curve at its two ends, for JSON: the speedup at 1 B and at 1e15 B, and
    its limit as g → ∞ (null when it grows without end)."""
    from ...logca.hierarchy import SEARCH_RANGE
    return {"small_g_limit": float(model.speedup(1.0)),
            "speedup_at_1e15_bytes": float(model.speedup(SEARCH_RANGE[1])),
            "large_g_limit": model.large_g_limit()}


def ends_text(model) -> str:
    """"speedup s at 1 B, t at 1e15 B", and the limit where the curve is still far from it
    there: a β a hair above 1 makes A the limit, reached past any size that exists."""
    from ...logca.hierarchy import SEARCH_RANGE
    at_end, limit = float(model.speedup(SEARCH_RANGE[1])), model.large_g_limit()
    text = f"speedup {float(model.speedup(1.0)):.4g} at 1 B, {at_end:.4g} at 1e15 B"
    if not math.isclose(at_end, limit, rel_tol=0.01, abs_tol=1e-12):
        text += f" (→ {'∞' if math.isinf(limit) else f'{limit:.4g}'} as g → ∞)"
    return text


def hierarchy_bounds(data: Path, hier, probe, out, as_json, select=False) -> None:
    """`logca bounds --hierarchy/--probe --data`: each layer's bound (ISCA'17 §3.1 asked of
    the plain model of the data living there) and the fitted curve's limit."""
    from ...report import dump_json
    from ...units import format_size
    from .options import save
    from ...logca.layerbounds import layer_bounds
    result, notes = fit_from_data(data, hier, probe, select=select)
    model = result.model
    bounds = layer_bounds(model)
    if out is not None:
        from ...plot.fit import chosen_fit_figure, hierarchy_fit_figure
        save(chosen_fit_figure(result, bounds=bounds) if select else
             hierarchy_fit_figure(result, bounds=bounds), out)
    notes = notes + list(result.warnings)
    if as_json:
        click.echo(dump_json({"chosen": choice(result), "layers": [b.to_dict() for b in bounds],
                              **curve_ends(model), "warnings": notes}))
        return
    table = Table(title=f"Bounds of {escape(model.label)}, per memory layer "
                        f"({choice(result)})")
    for col in ("data in", "from", "bound", "speedup →", "90% of it reached"):
        table.add_column(col, justify="left" if col == "data in" else "right")
    for b in bounds:
        r = b.reach
        if r.practical:
            reached = f"at {format_size(r.granularity)}"
        elif r.outermost:
            reached = f"never in practice ({r.speedup_at_end:.3g} at 256 TiB)"
        else:
            reached = f"not in this layer ({r.speedup_at_end:.3g} at {format_size(r.end)})"
        # a threshold's "layer" is the data under it ("mmap" read as the data above)
        name = f"under {b.layer.name} ({format_size(b.layer.capacity_bytes)})" \
            if b.layer.threshold else b.layer.name
        table.add_row(escape(name), format_size(b.start), b.bound.kind,
                      f"{b.bound.limit:.4g} ({b.bound.expression})", reached)
    console.print(table)
    # "under mmap (32 MiB)" beside "beyond from 22.6 MiB" read as two sizes for one boundary
    console.print("from: where the bend into the layer is half way, the layer's size μ over "
                  "the fitted working set w (bytes touched per byte offloaded)")
    console.print(f"the fitted curve: {ends_text(model)}")
    print_warnings(notes, "note")


def hierarchy_advice(data: Path, hier, probe, at, factor, threshold, select=False) -> tuple:
    """((the advice of the fitted model at ``at``,), the fit's notes and warnings): ISCA'17
    §3 asked of the plain LogCA that holds the layer's costs there, with the break-even of
    the whole curve."""
    from dataclasses import replace
    from ...logca.advise import advise
    result, notes = fit_from_data(data, hier, probe, select=select)
    notes = notes + list(result.warnings)
    model = result.model
    advice = advise(model.local_model(at), at, factor, threshold)
    notes += measured_beside_model(result, at, advice.speedup)
    if select:
        # the break-even `logca fit --select` tells the user to quote, not the model's own
        quoted, own = result.g1_to_quote(), result.g1.model
        if quoted.basis not in ("unreliable", "none") and quoted.granularity is not None:
            notes.append(f"pays from: {size_or_dash(quoted.granularity)}, the g1 `logca fit "
                         f"--select` quotes ({quoted.reason}); the model's own g1 is "
                         f"{size_or_dash(own)}")
            return (replace(advice, break_even=quoted.granularity,
                            break_even_reason=None),), notes
        notes.append(f"pays from: the model's g1; the fit quotes {quoted}")
    if model.plain:
        return (advice,), notes
    g1 = model.g1()
    return (replace(advice, break_even=g1, break_even_reason=None if g1 is not None else
                    "the fitted speedup stays below 1 at every size up to 1e15 B"),), notes


NOTED_MODEL_ERROR = 0.10    # a model this far from a measured speedup is said beside it


def measured_beside_model(result, at: float, model_speedup: float) -> list[str]:
    """A note where ``at`` lies within the measured sizes and the model's speedup there is
    over 10% from what the data measure (at ``at``, or on the line between the two
    measured sizes around it): the answer at a measured size should not hide the data."""
    import numpy as np
    from ...logca.holdout import interpolate_neighbours
    from ...units import format_size
    g, s = result.granularity, result.speedup_measured
    if not (g.min() <= at <= g.max()):
        return []
    measured = float(interpolate_neighbours(g, s, np.array([at]))[0])
    off = model_speedup / measured - 1
    if abs(off) <= NOTED_MODEL_ERROR:
        return []
    how = "measure" if np.any(np.isclose(g, at, rtol=1e-9)) else \
        "measure, on the line between the sizes around it,"
    return [f"at {format_size(at)} the data {how} a speedup of {measured:.4g}; the model's "
            f"{model_speedup:.4g} is {off:+.0%} off it there"]
