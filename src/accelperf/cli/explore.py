"""`accelperf explore`: the interactive explorer written as one self-contained HTML file."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import ModelError
from ..outputs import write_atomic
from .app import cli
from .common import (FREQUENCY, SIZE, build_models, check_output, model_options,
                     param_options, progress_run, read_params, refuse_unused)


@cli.command("explore")
@model_options
@click.option("--at", type=SIZE, default="4KiB", show_default=True,
              help="The size the LogCA advice starts at (movable in the page).")
@click.option("--hierarchy", "hier", default="src-map-c", show_default=True,
              help="Memory hierarchy of the density panel: a built-in name or a TOML file; "
                   "'none' leaves the panel out.")
@click.option("--algorithm", "algo", default="matmul", show_default=True,
              type=click.Choice(["dot", "matmul", "allpairs"]),   # explore.DENSITY_ALGORITHMS
              help="The density algorithm the page starts with (all three are in the page).")
@click.option("--model", "model_spec", default="jpeg-decoder", show_default=True,
              metavar="MODEL", help="LPN model of the interface panel: a library name or "
                                    "path/to/file.py:build_function; 'none' leaves it out.")
@click.option("--lpn-frequency", type=FREQUENCY, default="75MHz", show_default=True,
              help="Clock of the LPN model, for its latency in seconds and throughput "
                   "(75 MHz: the JPEG core's clock in the demo report).")
@click.option("--delays", is_flag=True,
              help="Sliders for the LPN model's named delays too (`lpn show MODEL "
                   "--parameters`): the interface is extracted again for each delay, at "
                   "its range's ends and at the corners of the box the ranges span (up to "
                   "64), two to four minutes for the JPEG decoder.")
@click.option("--fit", "fit_csv", type=click.Path(dir_okay=False, path_type=Path),
              default=None, metavar="FILE.csv",
              help="Explore LogCA fitted to these measurements with its terms chosen by "
                   "cross-validation (as `logca fit --select`): the kernel floor, β_A and "
                   "host constant get sliders too.")
@click.option("--space", "space_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Input space (TOML) of the LPN panel's interface; default: the one "
                   "shipped for MODEL, else one around its example input.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The HTML file to write (its directory must exist).")
@param_options
def explore(presets, kernels, L, o, C, A, beta, latency, unit, frequency, name, at, hier,
            algo, model_spec, lpn_frequency, delays, space_path, out, params_file=None,
            param_list=(), fit_csv=None):
    """Write an interactive explorer: one HTML file that opens from disk, with no network
    and no server. Drag a LogCA parameter and see the speedup curve, g1, g_A/2, the bound
    and the advice redrawn; edit a memory hierarchy's layers and see the density bound and
    its bottleneck; move an LPN interface's input variables and see latency, throughput
    and the bottleneck transition. Extracting the LPN interface takes a few seconds.

    \b
    Examples:
      accelperf explore --out explorer.html
      accelperf explore --preset sparc-t4-engine --preset sparc-t3 --kernel aes --out e.html
      accelperf explore --L 1500 --o 29000 --C 90 --A 30 --model none --out e.html
      accelperf explore --delays --params examples/params/core_jpeg.toml --out e.html
      accelperf explore --model aes-gcm --space src/accelperf/lpn/analysis/spaces/aes-gcm.toml --out e.html
    """
    from ..explore import DEFAULT_DESIGNS, LogcaPanel, build_page, density_panel, lpn_panel

    out = check_output(out, "--out", suffixes=(".html", ".htm"))
    lpn_off = model_spec.strip().lower() == "none"
    params = read_params(params_file, param_list, None if lpn_off else model_spec)
    if lpn_off and (params or delays):
        raise ModelError("--params, --param and --delays are invalid with --model none: "
                         "they set the LPN model's delays")
    if lpn_off and space_path is not None:
        raise ModelError(f"--space = '{space_path}' is invalid with --model none: it is the "
                         f"LPN model's input space")
    if lpn_off:
        refuse_unused({"lpn_frequency": "it is the LPN model's clock"}, "--model none")
    if hier.strip().lower() == "none":
        refuse_unused({"algo": "it is the density panel's, which --hierarchy none leaves "
                               "out"}, "--hierarchy none")
    explicit = any(v is not None for v in (L, o, C, A, beta))
    if kernels and not presets:
        raise ModelError("--kernel needs --preset: a kernel is looked up on a Table 5 device")
    if fit_csv is not None and not presets and not explicit:
        # the page's only LogCA model is then the fit's: nothing else to label or convert
        refuse_unused({k: "it applies to a --preset or --L/--o/--C/--A model, and the "
                          "fit's model is in seconds" for k in
                       ("name", "latency", "unit", "frequency")}, "--fit",
                      "alone (no --preset, no --L/--o/--C/--A)")
    spec = dict(presets=presets, kernels=kernels, L=L, o=o, C=C, A=A, beta=beta,
                latency=latency, unit=unit, frequency=frequency, name=name)
    fitted = [] if fit_csv is None else [_selected_fit(fit_csv)]
    if not presets and not explicit:
        spec.update(presets=() if fitted else DEFAULT_DESIGNS, kernels=("aes",))
    models = fitted + (build_models(**spec) if spec["presets"] or explicit or not fitted
                       else [])
    logca = LogcaPanel(tuple(models), at=at)
    density = None if hier.strip().lower() == "none" else density_panel(hier, algo)
    lpn = None
    if not lpn_off:
        from ..lpn.loader import load_model
        from ..lpn.analysis.space import load_space
        model = load_model(model_spec, params)
        space = None if space_path is None else load_space(model, space_path)
        lpn = progress_run(None, f"extracting the performance interface of {model_spec}",
                           lambda tick: lpn_panel(model_spec, model, space,
                                                  frequency_hz=lpn_frequency, params=params,
                                                  delays=delays, progress=tick))
    page = build_page(logca, density, lpn)
    write_atomic(out, page)
    click.echo(f"explorer written to {out} ({len(page.encode()) / 1e6:.2f} MB)")
    if lpn is not None and lpn.missing:
        click.echo(f"note: {lpn.missing}", err=True)


__all__ = ["explore"]


def _selected_fit(path: Path):
    """The model `logca fit PATH --select` chooses (no layers: the page has no hierarchy)."""
    from ..logca.choose import choose
    from ..logca.fit import prepare_data
    from ..logca.validation import default_workers
    from ..measure.data import read_timings
    t = read_timings(path)
    d = prepare_data(t.granularity, t.host, t.accel, t.echo, None, None)
    return choose(d, name=f"fit of {path.name}", jackknife=False,
                  workers=default_workers()).model
