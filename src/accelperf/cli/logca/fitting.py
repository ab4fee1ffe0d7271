"""`logca fit` and `logca from-lpn`: LogCA parameters from measurements or simulations."""

from __future__ import annotations

import csv
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from ...units import format_size, parse_frequency, powers_of_two
from ...errors import ModelError
from ...report import dump_json
from ..common import (SIZE, check_range, console, crossing_size, param_options, print_warnings,
                      read_params, refuse_unused, size_range, typed)
from . import logca
from .layers import (check_hierarchy_options, fit_from_data, hierarchy_options,
                     load_layers, measurement_notes, render_hierarchy_fit)
from .options import json_option, out_option, output_path, parameter_table, save


@logca.command("fit")
@click.argument("data", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--latency", type=click.Choice(["independent", "dependent", "auto"]),
              default="auto", show_default=True,
              help="How latency grows with g; auto chooses by AIC.")
@click.option("--frequency", type=str, default=None, metavar="3.65GHz|auto",
              help="Report parameters in cycles of this clock ('auto': the clock measured "
                   "with the data).")
@click.option("--statistic", type=click.Choice(["median", "min"]), default="min",
              show_default=True,
              help="Which of the repeats' statistics to fit (a shared machine only ever "
                   "slows a run down, so the minimum is the default).")
@click.option("--from", "lo", type=SIZE, default=None,
              help="Fit only granularities from this size (e.g. past a per-call constant).")
@click.option("--to", "hi", type=SIZE, default=None,
              help="Fit only granularities up to this size (e.g. before a cache is outgrown).")
@click.option("--host-constant", is_flag=True,
              help="Add a per-call constant to the host model: T0 = c0 + C·g^β.")
@click.option("--bootstrap", type=click.IntRange(0, 10_000), default=200, show_default=True,
              help="Resamples for the g1 / g_A/2 uncertainty.")
@click.option("--monte-carlo", "draws", type=click.IntRange(0, 1_000_000), default=0,
              show_default=True,
              help="Draws of the fitted parameters (from their standard errors) for a speedup "
                   "band and the distributions of g1 and g_A/2; 0 to skip.")
@click.option("--select", is_flag=True,
              help="Choose the model's terms (host constant, kernel floor, the accelerator's "
                   "β_A, per-byte latency, the --hierarchy's layers) by cross-validated "
                   "prediction, with a robust loss.")
@click.option("--cv", "cv", type=int, default=None, metavar="K",
              help="K-fold cross-validated speedup error beside the training error (folds "
                   "refitted from scratch); with --select, the folds the choice uses.")
@click.option("--workers", type=click.IntRange(1), default=None,
              help="With --select: processes the folds are solved in (default: every core "
                   "this process may use; the fit is the same with any number).")
@click.option("--predict", "predict_csv", type=click.Path(dir_okay=False, path_type=Path),
              default=None, metavar="TEST.csv",
              help="Predict the speedup at this file's granularities and report the error.")
@hierarchy_options
@out_option("Draw Fig. 7 (measured points, fitted curve, g1, g_A/2) to .png or .svg.")
@json_option("Print one JSON object.")
def logca_fit(data, latency, frequency, statistic, lo, hi, host_constant, bootstrap, draws, hier,
              probe, out, as_json, select=False, cv=None, predict_csv=None, workers=None):
    """Fit L, o, C, A and β to measured host and accelerated times (ISCA'17 §4).

    With --hierarchy or --probe, also fit how the host and accelerated costs per byte
    change as the data outgrow each memory layer, and keep that model if AIC prefers it.
    """
    from ...logca.fit import fit_logca
    from ...measure.data import read_timings
    out = output_path(out)
    if cv is not None and cv < 2:
        raise ModelError(f"--cv = {cv} is invalid: at least 2 folds")
    if lo is not None and hi is not None:
        check_range(lo, hi)
    check_hierarchy_options(hier, probe)
    test = None if predict_csv is None else read_test(predict_csv, statistic)
    if select:
        refuse_unused(NOT_WITH_SELECT)
        return fit_selected(data, statistic, lo, hi, hier, probe, cv, test, as_json, out,
                            workers)
    if workers is not None:
        raise ModelError(f"--workers = {workers} is not used without --select: it sets the "
                         f"processes that --select solves its folds in; leave it out")
    if hier is not None or probe:
        layers_flag = "--hierarchy" if hier is not None else "--probe"
        refuse_unused(NOT_WITH_LAYERS, layers_flag, "without --select")
        if cv is not None:
            raise ModelError(f"--cv = {cv} is not offered with {layers_flag} alone (each fold "
                             f"would refit every layer's parameters); add --select, whose "
                             f"terms are chosen by cross-validation")
        return fit_with_layers(data, latency, statistic, lo, hi, host_constant, hier, probe,
                               out, as_json, draws, test)
    freq = None if frequency in (None, "auto") else parse_frequency(frequency, "--frequency")
    timings = read_timings(data, statistic)
    if cv is not None and cv > len(timings.granularity):
        raise ModelError(f"--cv = {cv} is invalid: between 2 and the number of sizes "
                         f"({len(timings.granularity)})")
    if frequency == "auto":
        freq = timings.core_clock_hz
        if freq is None:
            raise ModelError(f"--frequency auto: '{data}' records no core clock; give one, "
                             f"e.g. --frequency 3.65GHz")
    result = fit_logca(timings.granularity, timings.host, timings.accel, timings.echo,
                       latency=latency, frequency_hz=freq, bootstrap=bootstrap,
                       name=f"fit of {Path(data).name}", lo=lo, hi=hi,
                       host_constant=host_constant)
    band = None
    if draws:
        from ...logca.uncertainty import from_fit, monte_carlo
        band = monte_carlo(result.model, from_fit(result), result.granularity, samples=draws)
    warnings = measurement_notes(timings, False) + list(result.warnings)
    extra_json = {}
    if cv is not None:
        extra_json["cv"] = {"folds": cv, "mean": plain_cv(timings, cv, latency, lo, hi,
                                                          host_constant)}
    if test is not None:
        extra_json["predict"] = predict_with_baseline(result, test)
        warnings += predict_warnings(timings, test, result.granularity)
    if out is not None:
        from ...plot.fit import fit_figure
        save(fit_figure(result, band=band), out)
    if as_json:
        d = result.to_dict()
        d["warnings"] = warnings
        d.update(extra_json)
        if band is not None:
            d["uncertainty"] = band.to_dict()
        click.echo(dump_json(d))
        return
    unit = result.model.unit
    table = Table(title=f"LogCA fit of {data} ({result.model.latency} latency, {unit})")
    for col in ("parameter", "value", "std. error", "note"):
        table.add_column(col, justify="right" if col != "note" else "left")
    extra = [] if result.host_constant is None else [result.host_constant]
    for p in list(result.parameters.values()) + extra:
        table.add_row(p.name, f"{p.value:.5g}", "—" if p.stderr is None else f"{p.stderr:.3g}",
                      p.note or ("fixed" if not p.vary else ""))
    console.print(table)
    console.print(f"speedup error: mean {result.mean_error:.2%}, max {result.max_error:.2%} "
                  f"over {len(result.granularity)} granularities")
    for label, c in (("g1", result.g1), ("g_A/2", result.g_half)):
        ci = "" if c.interval is None else \
            f" (95% {size_range(*c.interval)})"
        console.print(f"{label}: measured {crossing_size(c.measured)}, model "
                      f"{crossing_size(c.model)}{ci}")
    if band is not None:
        print_draws(band, draws)
    print_holdout(extra_json)
    print_warnings(warnings)


def plain_cv(timings, k: int, latency, lo, hi, host_constant) -> float:
    """The plain fit's K-fold cross-validated speedup error, each fold refitted."""
    import numpy as np
    from ...logca.fit import fit_logca, prepare_data
    from ...logca.holdout import fold_indices, predict
    d = prepare_data(timings.granularity, timings.host, timings.accel, timings.echo, lo, hi)
    errors = []
    for train, test in fold_indices(d.n, k):
        if train.size < 3:
            raise ModelError(f"--cv = {k} is invalid: a fold keeps {train.size} sizes, a fit "
                             f"needs 3")
        r = fit_logca(d.g[train], d.t0[train], d.t1[train],
                      None if d.echo is None else d.echo[train], latency=latency,
                      bootstrap=0, host_constant=host_constant)
        errors.extend(predict(r.speedup, d.g[test], d.t0[test] / d.t1[test]).errors)
    return float(np.mean(errors))


def read_test(path, statistic):
    """The --predict file's timings; its errors name --predict, not the training data."""
    from ...measure.data import read_timings
    try:
        return read_timings(path, statistic)
    except ModelError as exc:
        raise ModelError(str(exc).replace("data = ", "--predict = ", 1)) from None


def predict_warnings(train, test, fitted, anchored: bool = False) -> list[str]:
    """Why --predict's error may be no held-out error of this fit: its file measured another
    kernel than the data, or only sizes the fit was given (``fitted``: then the line, and
    the anchored curve where one is printed (``anchored``), pass through those measurements
    and repeat them)."""
    import numpy as np
    from ...units import format_size
    out = []
    if train.kernel != test.kernel:
        out.append(f"--predict's file measured kernel '{test.kernel}', the data "
                   f"'{train.kernel}': its error is not this kernel's held-out error")
    for key in ("gpu", "host cpu"):
        ours, theirs = (str(t.metadata.get(key, "")).split(",")[0].strip()
                        for t in (train, test))
        if ours and theirs and ours != theirs:
            out.append(f"--predict's file was measured on another machine ({key} "
                       f"{theirs!r}, the data's {ours!r}): its error is how the model "
                       f"carries over to that machine, not this fit's held-out error")
            break
    seen = np.isin(test.granularity, fitted)
    if seen.any() and not seen.all():
        out.append(f"{int(seen.sum())} of --predict's {seen.size} sizes were fitted: their "
                   f"errors repeat the fit, not predict it")
    beyond = test.granularity[(test.granularity < np.min(fitted)) |
                              (test.granularity > np.max(fitted))]
    if beyond.size:
        out.append(f"{beyond.size} of --predict's sizes lie beyond the fitted "
                   f"{format_size(np.min(fitted))}..{format_size(np.max(fitted))} "
                   f"({', '.join(format_size(g) for g in beyond[:4])}"
                   f"{', ...' if beyond.size > 4 else ''}): there the model and the line "
                   f"extrapolate")
    if seen.all():
        through = ("the line and the anchored curve, which pass through the fitted "
                   "measurements, give that same error" if anchored else
                   "the line, which passes through the fitted measurements, gives that "
                   "same error")
        out.append(f"--predict's file has only sizes the fit was given: its error is how "
                   f"the two files' measurements differ, not a prediction, and {through}")
    return out


def predict_test(speedup, test):
    from ...logca.holdout import predict
    return predict(speedup, test.granularity, test.host / test.accel)


def predict_with_baseline(result, test) -> dict:
    """--predict's JSON: the fit's prediction of the test file's speedups, and beside it the
    model-free baseline, the line through the two neighbouring fitted sizes
    (:func:`~accelperf.logca.holdout.interpolate_neighbours`): a model is worth its
    parameters at sizes it did not see only where it beats that line."""
    from ...logca.holdout import interpolate_neighbours
    g, s = result.granularity, result.speedup_measured
    return dict(predict_test(result.speedup, test).to_dict(),
                neighbour_interpolation=predict_test(
                    lambda x: interpolate_neighbours(g, s, x), test).to_dict())


def print_holdout(extra: dict) -> None:
    if "cv" in extra:
        console.print(f"cross-validated speedup error ({extra['cv']['folds']} folds, each "
                      f"refitted): mean {extra['cv']['mean']:.2%}")
    if "predict" in extra:
        p = extra["predict"]
        console.print(f"predicted at {len(p['per_granularity'])} test granularities: speedup "
                      f"error mean {p['mean']:.2%}, max {p['max']:.2%}")
        b = p["neighbour_interpolation"]
        console.print(f"a line between the neighbouring fitted sizes (no model): speedup "
                      f"error mean {b['mean']:.2%}, max {b['max']:.2%}"
                      + (": the model predicts these sizes worse" if b["mean"] < p["mean"]
                         else ""))
    if "predict" in extra.get("anchored", {}):
        p = extra["anchored"]["predict"]
        console.print(f"anchored at the measured sizes: speedup error mean {p['mean']:.2%}, "
                      f"max {p['max']:.2%}")


MEANINGS = {"C": "host seconds per byte^β", "beta": "host complexity exponent β",
            "A": "acceleration: the kernel takes C·g^β/A",
            "o": "offload overhead, s", "L": "copy time per byte, s (o + L·g)",
            "latency": "how the copy time grows with g", "unit": "",
            "c0": "host per-call constant, s", "floor": "kernel's least time (launch), s",
            "beta_A": "the accelerator's complexity exponent",
            "h": "host's extra cost per byte beyond the layer or threshold"}
# With β_A ≠ β, A is no speedup by itself (A < 1 read as "slower than the host"): the
# kernel's time is C·g^β_A/A, so its speedup over the host's C·g^β grows as g^(β−β_A)
A_WITH_BETA_A = "kernel takes C·g^β_A/A, A·g^(β−β_A) times less than C·g^β: A < 1 alone is " \
                "no slowdown"


# Options of the plain and layered fits that --select has no use for, and what it does
# instead: given on the command line with --select, each is an error, not silently dropped.
NOT_WITH_SELECT = {
    "bootstrap": "its g1 interval is the jackknife over the cross-validation refits",
    "draws": "its g1 interval is the jackknife over the cross-validation refits",
    "host_constant": "the host constant is a term it chooses (host-constant)",
    "latency": "the echo run, or the per-byte-latency term it chooses, decides the latency",
    "frequency": "its parameters are in seconds",
}


# ... and those of the plain fit that the layered one (--hierarchy or --probe, AIC-chosen)
# does not use.
NOT_WITH_LAYERS = {
    "bootstrap": "its g1 has no resampled interval (each resample would refit every "
                 "layer); --monte-carlo N draws its parameters instead",
    "frequency": "its parameters are in seconds",
}


def fit_selected(data, statistic, lo, hi, hier, probe, cv, test, as_json, out=None,
                 workers=None) -> None:
    """`logca fit --select`: the terms chosen by cross-validated prediction; with ``out``
    its figure (measured points, the model, g1 and its interval)."""
    from ...logca.choose import choose
    from ...logca.fit import prepare_data
    from ...logca.validation import default_workers
    from ...measure.data import read_timings
    timings = read_timings(data, statistic)
    layers, notes = load_layers(hier, probe, timings.metadata, data) \
        if (hier is not None or probe) else ((), [])
    d = prepare_data(timings.granularity, timings.host, timings.accel, timings.echo, lo, hi)
    result = choose(d, layers, folds=cv, name=f"fit of {Path(data).name}",
                    workers=workers or default_workers())
    # the fit as the Python API gives it (cv, the anchored curve's g1, the g1 to quote),
    # and with --predict its errors on the test file beside the neighbour line's
    report = result.to_dict()
    if test is not None:
        check = result.predict(test.granularity, test.host / test.accel)
        report["predict"] = dict(check.model.to_dict(), neighbour_interpolation=check.
                                 neighbour_interpolation.to_dict())
        report["anchored"]["predict"] = check.anchored.to_dict()
    warnings = measurement_notes(timings, True) + notes + list(result.warnings) + \
        ([] if test is None else predict_warnings(timings, test, result.granularity,
                                                  anchored=True))
    if out is not None:
        from ...plot.fit import chosen_fit_figure
        save(chosen_fit_figure(result), out)
    if as_json:
        click.echo(dump_json(dict(report, warnings=warnings)))
        return
    table = Table(title=f"LogCA fit of {Path(data).name}, terms chosen by cross-validation")
    for col in ("parameter", "value", "meaning"):
        table.add_column(col, justify="left" if col == "meaning" else "right")
    params = result.parameters()
    for k, v in params.items():
        meaning = MEANINGS.get(k.split("[")[0], "")
        if k == "A" and "beta_A" in params:
            # the kernel's own speedup over the sizes measured says what A = 0.011 means
            g = result.granularity[[0, -1]]
            ratio = params["A"] * g ** (params["beta"] - params["beta_A"])
            meaning = f"{A_WITH_BETA_A}; here {ratio[0]:.3g} at {format_size(g[0])} to " \
                      f"{ratio[1]:.3g} at {format_size(g[1])}"
        # escaped: Rich would read h[mmap] as a markup tag and print "h"
        table.add_row(escape(k), v if isinstance(v, str) else f"{v:.5g}", meaning)
    console.print(table)
    for t in result.terms:
        console.print(f"{t.term}: {t.reason}")
    console.print(f"speedup error: mean {result.mean_error:.2%}, max {result.max_error:.2%} "
                  f"(at {format_size(result.worst_granularity)}) over "
                  f"{len(result.granularity)} granularities")
    c = result.g1
    # the jackknife spreads the noise only: a shape the model lacks moves g1 outside it
    ci = "" if c.interval is None else \
        f" (95% jackknife over the noise {size_range(*c.interval)})"
    console.print(f"g1: measured {crossing_size(c.measured)}, model "
                  f"{crossing_size(c.model)}{ci}, anchored at the measured sizes "
                  f"{crossing_size(result.anchored_g1)}")
    console.print(f"g1 to quote: {escape(str(result.g1_to_quote()))}")
    print_holdout(report)
    print_warnings(warnings)


def fit_with_layers(data, latency, statistic, lo, hi, host_constant, hier, probe, out,
                    as_json, draws=0, test=None) -> None:
    """`logca fit --hierarchy/--probe`: plain and hierarchical LogCA, chosen by AIC; with
    --monte-carlo N the fit's covariance propagated to a speedup band, g1 and g_A/2
    (bootstrap resampling is not offered here: it would refit the 35 parameters each
    time); with ``test`` (--predict) its speedups predicted."""
    result, notes = fit_from_data(data, hier, probe, statistic, latency, lo, hi, host_constant)
    extra = {}
    if test is not None:
        from ...measure.data import read_timings
        extra["predict"] = predict_with_baseline(result, test)
        notes = notes + predict_warnings(read_timings(data, statistic), test,
                                         result.granularity)
    band = None
    if draws:
        from ...logca.uncertainty import monte_carlo_hierarchy
        band = monte_carlo_hierarchy(result, result.granularity, samples=draws)
    if out is not None:
        from ...plot.fit import hierarchy_fit_figure
        save(hierarchy_fit_figure(result, band=band), out)
    if as_json:
        d = dict(result.to_dict(), warnings=notes + list(result.warnings), **extra)
        if band is not None:
            d["uncertainty"] = band.to_dict()
        click.echo(dump_json(d))
        return
    render_hierarchy_fit(result, data, notes)
    if band is not None:
        print_draws(band, draws)
    print_holdout(extra)


def print_draws(band, draws: int) -> None:
    """g1 and g_A/2 over the draws of the fitted parameters (the plain and the layered fit)."""
    for label, dist in (("g1", band.g1), ("g_A/2", band.g_half)):
        q = dist.quantiles
        if q["p50"] is not None:
            console.print(f"{label} over {draws} draws of the parameters: median "
                          f"{format_size(q['p50'])}, 90% in {format_size(q['p5'])}.."
                          f"{format_size(q['p95'])}")


LPN_MAX_SIZE = 16 * 2**20


def transfer_model(name: str, values: dict):
    """The link-alone model with the accelerator's parameters that it declares too: L is
    read off it, so a slower link given with --param must slow it as well (it was built
    with its defaults, and a link set to 1 B/cycle and 1000 cycles of flight moved the
    difference into o and A instead)."""
    from ...lpn.loader import load_model
    declared = {p.name for p in load_model(name).parameters}
    return load_model(name, {k: v for k, v in values.items() if k in declared})


def _sizes(text: str) -> list[float]:
    """``16B..1MiB`` (the powers of two between) or a comma list ``64B,4KiB,1MiB``."""
    from ...units import parse_size
    if ".." in text:
        lo_text, _, hi_text = text.partition("..")
        lo, hi = parse_size(lo_text, "--sizes"), parse_size(hi_text, "--sizes")
        check_range(lo, hi)
        sizes = powers_of_two(lo, hi).tolist()
    else:
        sizes = [parse_size(x, "--sizes") for x in text.split(",")]
    if len(set(sizes)) < 3:
        raise ModelError(f"--sizes = {text!r} is invalid: a fit needs at least 3 different "
                         f"granularities")
    if len(sizes) > 64:
        raise ModelError(f"--sizes = {text!r} gives {len(sizes)} granularities: at most 64 "
                         f"(each is a simulation)")
    if max(sizes) > LPN_MAX_SIZE:
        raise ModelError(f"--sizes = {text!r} is invalid: at most {format_size(LPN_MAX_SIZE)} "
                         f"per offload (a simulation's time grows with its size: 1 MiB "
                         f"takes about 2 s)")
    return sizes


def _host_csv(path: Path) -> tuple[float, float]:
    """(C, β) from a CSV with columns granularity_bytes and host_cycles."""
    from ...logca.lpn_bridge import host_from_times
    try:
        rows = list(csv.DictReader(path.read_text("utf-8-sig").splitlines()))
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelError(f"--host-csv = '{path}' is invalid: "
                         f"{getattr(exc, 'strerror', None) or exc}") from None
    try:
        g = [float(r["granularity_bytes"]) for r in rows]
        t = [float(r["host_cycles"]) for r in rows]
    except (KeyError, TypeError, ValueError):
        raise ModelError(f"--host-csv = '{path}' is invalid: need numeric columns "
                         f"granularity_bytes and host_cycles (found "
                         f"{', '.join(rows[0]) if rows else 'no rows'})") from None
    try:
        return host_from_times(g, t)
    except ModelError as exc:
        raise ModelError(f"--host-csv = '{path}' is invalid: {exc}") from None


@logca.command("from-lpn")
@click.argument("model_name", metavar="MODEL")
@click.option("--sizes", default="64B..1MiB", show_default=True,
              help="Granularities: LO..HI (powers of two) or a comma list.")
@click.option("--host-C", "host_C", type=float,
              help="Host cycles per byte (T0 = C·g^β), e.g. 12.5.")
@click.option("--host-beta", type=float, default=1.0, show_default=True,
              help="Host complexity exponent β.")
@click.option("--host-csv", type=click.Path(dir_okay=False, path_type=Path),
              help="Measured host times instead of --host-C/--host-beta (columns "
                   "granularity_bytes, host_cycles); C and β by log-log regression.")
@click.option("--transfer/--no-transfer", default=True, show_default=True,
              help="Also simulate the link alone (where the model has one) to measure L.")
@out_option("Draw T0, the fitted T1 and the simulated points to FILE.png or FILE.svg.")
@json_option("Print one JSON object.")
@param_options
def logca_from_lpn(model_name, sizes, host_C, host_beta, host_csv, transfer, out, as_json,
                   params_file=None, param_list=()):
    """LogCA's L, o and A of a simulated accelerator (an LPN model): simulate it at each
    granularity, fit ISCA'17 eq. 1 and say whether its latency grows with g."""
    from ...logca.lpn_bridge import fit_from_latency, mapping
    from ...lpn import simulate
    from ...lpn.loader import load_model
    from ..common import progress_run
    mp = mapping(model_name)
    grid = _sizes(sizes)
    out = output_path(out)
    if host_csv is not None and host_C is not None:
        raise ModelError("--host-csv and --host-C both given: the host is one or the other")
    if host_csv is not None and typed("host_beta"):
        raise ModelError(f"--host-beta = {host_beta:g} is not used with --host-csv: the "
                         f"regression of its times gives β; leave one out")
    if host_csv is not None:
        host_C, host_beta = _host_csv(host_csv)
    elif host_C is None:
        raise ModelError("--host-C is missing: give the host's cycles per byte (e.g. --host-C "
                         "12.5) or --host-csv FILE")
    values = read_params(params_file, param_list, mp.model)
    accel = load_model(mp.model, values)
    link = transfer_model(mp.transfer, values) if transfer and mp.transfer else None
    actual = sorted({mp.input_at(g)[1] for g in grid})
    inputs = {b: mp.input_at(b)[0] for b in actual}

    def latency_at(b):
        return simulate(accel, inputs[b]).latency

    def transfer_at(b):
        return simulate(link, mp.transfer_input_at(b)).latency

    result = progress_run(len(actual), f"simulating {mp.model}", lambda tick: fit_from_latency(
        latency_at, actual, host_C, host_beta, transfer_at if link is not None else None,
        progress=tick))
    if out is not None:
        from ...plot.logca import times_figure
        save(times_figure(result.model, actual[0], actual[-1],
                          measured=(result.granularity, result.t_accel),
                          title=f"{mp.model}: simulated T1 and the fitted LogCA model"), out)
    if as_json:
        click.echo(dump_json({"model": mp.model, "mapping": mp.description,
                              "transfer_model": mp.transfer if link is not None else None,
                              **result.to_dict()}))
        return
    console.print(f"[bold]{mp.model}[/bold]: {mp.description}")
    console.print(parameter_table("LogCA parameters of the simulated accelerator (cycles)",
                                  result.parameters.values()))
    console.print(f"latency {'grows' if result.dependent else 'does not grow'} with "
                  f"granularity: {result.dependent_reason}")
    console.print(f"fit error of T1: mean {result.mean_error:.2%}, max {result.max_error:.2%} "
                  f"over {result.granularity.size} granularities")
    print_warnings(result.warnings)
