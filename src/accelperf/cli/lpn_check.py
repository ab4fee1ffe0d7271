"""`accelperf lpn check MODEL`: the model checker for authors (issue 26 item 3).

Registered on the `lpn` group by cli/lpn.py (``lpn.add_command``), so this module imports
nothing of it."""
from __future__ import annotations

import warnings
from pathlib import Path

import click

from ..report import dump_json
from .common import StrictCommand, console


@click.command("check", cls=StrictCommand)
@click.argument("model_spec", metavar="MODEL")
@click.option("--space", "space_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Input space (TOML): also report transitions that commit for no input "
                   "of it (runs the input-class analysis).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def lpn_check(model_spec, space_path, as_json):
    """Warnings for a model's author: places that grow without bound, transitions that
    never fire, Ψ tokens no transition takes, zero-delay loops, loops that never end, a
    done place nothing fills; each names the element and a fix. Exit status 0 when there is none, 1 when
    there is any.

    \b
    Examples:
      accelperf lpn check jpeg-decoder
      accelperf lpn check examples/three_stage.py:pipeline --json
      accelperf lpn check menshen --space examples/spaces/menshen-100-packets.toml
    """
    from ..lpn.check import ModelCheckWarning, check
    from ..lpn.loader import load_model
    with warnings.catch_warnings():          # build() warns the same findings: say them once
        warnings.simplefilter("ignore", ModelCheckWarning)
        model = load_model(model_spec)
    classes = None
    if space_path is not None:
        from ..lpn.analysis.interfaces.classes import input_classes
        from ..lpn.analysis.space import load_space
        classes = input_classes(model, load_space(model, space_path))
    findings = check(model, classes)
    if as_json:
        click.echo(dump_json({"model": model.name, "findings": [f.to_dict() for f in findings],
                              "ok": not findings}))
    elif not findings:
        console.print(f"{model.name}: no findings")
    else:
        console.print(f"[bold]{model.name}[/bold]: {len(findings)} finding(s)", highlight=False)
        for f in findings:
            click.echo(f"warning: {f.kind}: {f.element}: {f.message}\n  fix: {f.fix}")
    if findings:
        raise SystemExit(1)
