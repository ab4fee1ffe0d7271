"""`accelperf lpn interface` for a stream priced token by token (issue 33,
:mod:`accelperf.lpn.analysis.interfaces.token_stream`): printing, ``--out``, ``--check``
(every term beside the simulation) and ``--json``. Called by cli/lpn.py when the extraction gives a
:class:`StreamInterface`; imports nothing of it."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from ..errors import ModelError
from ..outputs import write_atomic
from ..report import dump_json
from .common import console, cycles_text, input_label, progress_run
from .flags import quoted


def check_input(text, load_input):
    """An INPUT of --check: JSON (a file or inline), else a file path Ψ reads itself."""
    try:
        return load_input(text)
    except ModelError:
        if Path(text).is_file():
            return text
        raise


def stream_interface_command(model, model_spec, iface, values, inputs, out, frequency,
                             check_inputs, tolerance, as_json):
    from ..lpn.analysis.interfaces.emit import load_module
    from ..lpn.analysis.interfaces.stream_emit import (bottleneck_label, readable,
                                                      stream_module_source)
    label = bottleneck_label(iface)     # seconds over a wide space: once, for both
    source = stream_module_source(iface, model, model_spec, frequency, label)
    if out is not None:                 # checked by the command before the extraction
        write_atomic(out, source)
        click.echo(f"wrote {out}", err=True)
    module = load_module(source)
    if check_inputs:
        _check(model, module, iface, values, inputs, tolerance, as_json)
        return
    if as_json:
        click.echo(dump_json({"model": model.name, "seconds": iface.seconds, "form": "stream",
                              "place": iface.place, "count": list(iface.count),
                              "bottleneck": label,
                              "classes": [_class_json(c) for c in iface.classes]}))
        return
    console.print(f"[bold]{model.name}[/bold]: a stream of {iface.count[0]}..{iface.count[1]}"
                  f" tokens of {iface.place}, priced token by token "
                  f"({len(iface.classes)} class{'es' * (len(iface.classes) != 1)} of a "
                  f"token)", highlight=False)
    console.print("  latency = max over stages T of fill_T(first token) + "
                  "Σ_i work_T(token i) + drain_T(last token)   (and the stream recurrence)",
                  markup=False, highlight=False)
    console.print(f"  bottleneck: {label}", markup=False, highlight=False)
    for c in iface.classes:
        conds = " and ".join(_condition(readable(x)) for x in c.conditions) or "every token"
        console.print(f"[bold]token class {c.index}[/bold] ({conds})", highlight=False)
        console.print(f"  alone = {readable(c.latency)}    # bottleneck {c.bottleneck}"
                      + ("" if c.exact else f"  (fit off by {c.residual:.3g} cycles)"),
                      markup=False, highlight=False)
        for s in c.stages:
            fill = f"fill {readable(s.start)}, drain {readable(c.latency - s.finish)}" \
                if s.timed else "(paced by a later stage: work only)"
            console.print(f"    {s.transition}: work {readable(s.work)}; {fill}",
                          markup=False, highlight=False)
    console.print(f"[dim]extracted in {iface.seconds:.2f} s[/dim]")


def _condition(x) -> str:
    """A class condition as it reads (``a == 1``), not as SymPy spells it (``Eq(a, 1)``);
    --json keeps SymPy's text."""
    import sympy
    if isinstance(x, (sympy.Eq, sympy.Ne)):
        return f"{x.lhs} {'==' if isinstance(x, sympy.Eq) else '!='} {x.rhs}"
    return str(x)


def _class_json(c) -> dict:
    return {"index": c.index, "conditions": [str(x) for x in c.conditions],
            "latency": str(c.latency), "bottleneck": c.bottleneck, "exact": c.exact,
            "stages": [{"transition": s.transition, "commits": str(s.commits),
                        "work": str(s.work), "fill": str(s.start) if s.timed else None,
                        "drain": str(c.latency - s.finish) if s.timed else None}
                       for s in c.stages]}


def _check(model, module, iface, values, inputs, tolerance, as_json):
    from ..lpn.analysis.interfaces.accuracy import check
    for text, x in zip(inputs, values):      # refused before any simulation
        try:
            module.latency(x)
        except (module.OutsideClasses, ValueError) as exc:
            raise ModelError(f"INPUT = {text!r:.60} is invalid for --check: {quoted(exc)}") from None
    acc = progress_run(len(values), "simulating", lambda advance: check(
        model, module, values, advance=advance))
    terms = [module.terms(x) for x in values]
    # a term is a lower bound where its stage never idles: one above the simulation
    # names the assumption that failed
    above = {i: {k: v for k, v in t.items() if v > r.simulated * (1 + 1e-9)}
             for i, (t, r) in enumerate(zip(terms, acc.rows))}
    if as_json:
        click.echo(dump_json(acc.to_dict() | {
            "terms": {inputs[i]: t for i, t in enumerate(terms)},
            "bottleneck": {inputs[i]: module.bottleneck(x) for i, x in enumerate(values)},
            "failed_assumptions": {inputs[i]: {
                "assumption": "a stage's term is a lower bound (it never idles between its "
                              "first and last token)", "evidence": a}
                for i, a in above.items() if a}}))
    else:
        table = Table(title=f"{model.name}: interface vs simulation")
        for col in ("input", "predicted", "simulated", "error", "bottleneck term"):
            table.add_column(col, justify="right")
        for r, text, t, x in zip(acc.rows, inputs, terms, values):
            top = module.bottleneck(x)
            table.add_row(input_label(text), cycles_text(r.predicted), f"{r.simulated:,}",
                          f"{r.error:.2%}", f"{top} {t[top]:,.0f}")
        console.print(table)
        for text, t, r in zip(inputs, terms, acc.rows):
            console.print(f"{input_label(text)}: " + ", ".join(
                f"{k} {v:,.0f} ({v / r.simulated:.1%})" for k, v in
                sorted(t.items(), key=lambda kv: -kv[1])), markup=False, highlight=False)
        console.print(f"mean error {acc.mean_error:.2%}, max error {acc.max_error:.2%}"
                      + ("" if acc.max_error <= tolerance else
                         f": over the tolerance {tolerance:.2%}"), highlight=False)
    raise SystemExit(0 if acc.max_error <= tolerance else 1)
