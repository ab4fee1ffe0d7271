"""Which flag the user typed for a field a model names: the one table, and the rewrite.

Model code names what is wrong by its own name for the value (``input``, ``space``,
``kernel``: :attr:`accelperf.errors.ModelError.field`), so a notebook user reads the name
of the argument they passed. Only the command line knows that ``lpn simulate`` reads
``input`` from ``--input``, so it rewrites the message before printing it:

* the field the message starts with (``input[3] (message bytes) = 0 is invalid: ...``)
  becomes the flag (``--input[3] (message bytes) = 0 ...``): the name up to the first
  character that cannot be in a Python name is looked up, the rest stays;
* a field named in backticks inside the text (``leave `input` out``) becomes the flag
  (``leave --input out``).

A field the table does not know stays as the model wrote it; one it knows whose flag the
command does not have (an input of `lpn calibrate --measured`'s file) reads as its plain
name. Every flag here exists on its command (tests/test_flags.py walks the click tree).
"""

from __future__ import annotations

import functools
import re

import click

from ..errors import leading_field

# field -> flag, for every command whose option of that name reads the field.
FLAGS: dict[str, str] = {
    "algorithm": "--algorithm",
    "changes": "--set",                 # logca whatif: the changes, one --set each
    "check": "--check",
    "compute_ceiling": "--compute-ceiling",
    "device": "--device",
    "factor": "--factor",
    "fit": "--fit",
    "hierarchy": "--hierarchy",
    "folds": "--cv",
    "from": "--from",
    "host": "--host",
    "host_beta": "--host-beta",
    "host_C": "--host-C",
    "input": "--input",
    "inputs": "--inputs",
    "interface": "--interface",
    "kernel": "--kernel",
    "measured": "--measured",
    "mode": "--mode",
    "operand_bytes": "--operand-bytes",
    "pair": "--pair",                   # logca design: x_parameter,y_parameter
    "param": "--param",
    "params": "--params",
    "repeats": "--repeats",
    "resume": "--resume",
    "scheduler": "--scheduler",
    "space": "--space",
    "target": "--target",
    "threshold": "--threshold",
    "to": "--to",
    "uncertainty": "--uncertainty",
    "x_parameter": "--pair",
    "y_parameter": "--pair",
}

# command -> {field: flag} where that command reads a field from a flag of another name.
BY_COMMAND: dict[str, dict[str, str]] = {
    "lpn verify": {"tolerance": "--within", "size": "--size", "budget": "--budget",
                   "range": "--range", "property": "--prove", "place": "--size"},
    "measure gpu": {"granularities": "--from"},     # the smallest is the one refused
    # a LogCA preset's device is named by --preset (the field "device" is --device on
    # measure gpu)
    **{command: {"device": "--preset"} for command in (
        "explore", "logca advise", "logca bounds", "logca curve", "logca design",
        "logca regions", "logca show", "logca times", "logca whatif")},
}

_KNOWN = frozenset(FLAGS).union(*BY_COMMAND.values())    # every field the table names
_QUOTED = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`( = |\[)?")


def flag_for(field: str, command: str) -> str | None:
    """The flag of ``field`` on ``command`` (``"lpn simulate"``), or None: also where the
    table names a flag that command does not have (``lpn calibrate`` reads inputs from
    ``--measured``, so a refused input of its file is no ``--input``)."""
    flag = BY_COMMAND.get(command, {}).get(field) or FLAGS.get(field)
    options = _options_of(command)
    return flag if flag and (options is None or flag in options) else None


ROOT: click.Group | None = None
"""The command tree (set by :mod:`accelperf.cli.app`, which imports this module)."""


@functools.lru_cache(maxsize=None)
def _options_of(command: str) -> frozenset | None:
    """The options of ``command`` ("lpn simulate"), or None when it is no command (or the
    tree is not there to ask)."""
    if ROOT is None:
        return None
    node, ctx = ROOT, click.Context(ROOT, info_name="accelperf")
    for name in command.split():
        if not isinstance(node, click.Group):
            return None
        node = node.get_command(ctx, name)
        if node is None:
            return None
        ctx = click.Context(node, parent=ctx, info_name=name)
    if isinstance(node, click.Group):           # the root itself too ("")
        return None
    return frozenset(o for p in node.params if isinstance(p, click.Option)
                     for o in p.opts + p.secondary_opts)


def in_flags(text: str, field: str | None, command: str) -> str:
    """``text`` with its leading ``field`` and its backticked fields written as the flags
    ``command`` reads them from."""
    name = leading_field(text, field)
    flag = name and flag_for(name, command)
    if flag:
        text = flag + text[len(name):]
    # a field the table knows but this command has no flag for reads as its plain name,
    # and so does one it does not know where it is refused (`requests` = [] is invalid)
    return _QUOTED.sub(lambda m: (flag_for(m[1], command) or (
        m[1] if m[1] in _KNOWN or m[2] else f"`{m[1]}`")) + (m[2] or ""), text)


def quoted(exc: BaseException) -> str:
    """An error's text for a message that quotes it: a ModelError's leading field in
    backticks (:meth:`~accelperf.errors.ModelError.embedded`), so that it is said as its
    flag too."""
    embedded = getattr(exc, "embedded", None)
    return embedded() if embedded is not None else str(exc)


def said(text: str) -> str:
    """A model's note or warning as the running command prints it: its backticked fields
    as that command's flags (:func:`in_flags`)."""
    ctx = click.get_current_context(silent=True)
    return in_flags(text, None, command_of(ctx.command_path) if ctx else "")


def command_of(command_path: str) -> str:
    """``"accelperf lpn simulate"`` -> ``"lpn simulate"`` (the program's name dropped)."""
    return command_path.partition(" ")[2]


def rewrite(exc: BaseException, command_path: str) -> None:
    """Rewrite a ModelError's message in place into the flags of its command."""
    if len(exc.args) != 1 or not isinstance(exc.args[0], str):
        return
    text = in_flags(exc.args[0], getattr(exc, "field", None), command_of(command_path))
    exc.args = (text,)
