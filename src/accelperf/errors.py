"""The project's exception: invalid input, named and explained."""

from __future__ import annotations

import re
from typing import NoReturn

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ANOTHER_WORD = re.compile(r" [A-Za-z_]")


class ModelError(ValueError):
    """Invalid input to a model, a parser or a command.

    The message names the parameter, the value given and what is allowed, so the
    command line can print it as one line and a notebook user knows what to fix.

    ``field`` is the name the message starts with, when it starts with one: the model's
    own name for the value (``input``, ``space``, ``kernel``), never a command-line flag.
    The command line, which alone knows which flag the user typed for a field, rewrites
    that leading name (and a field named in backticks inside the text) into the flag
    before it prints the message (``accelperf.cli.flags``).
    """

    field: str | None = None

    def __init__(self, *args, field: str | None = None):
        super().__init__(*args)
        if field is not None:
            self.field = field      # in __dict__, so it survives pickling to a worker

    def embedded(self) -> str:
        """The message with the name of its leading field in backticks, for a message that
        quotes this one (``INPUT = '[63]' is invalid for `check`: `input`[0] = ...``):
        the command line then says the flag of the inner field as well."""
        text = str(self)
        name = leading_field(text, self.field)
        if name is None or _ANOTHER_WORD.match(self.field, len(name)):
            return text     # a field of several words ("request size") is no flag's name
        return f"`{name}`{text[len(name):]}"


def leading_field(text: str, field: str | None) -> str | None:
    """The name that ``text`` starts with when it starts with ``field``: ``input`` for
    ``input[3] (bytes) = 0 is invalid`` and the field ``input[3] (bytes)``; None when it
    does not (``inputs = 0`` does not start with the field ``input``)."""
    name, lead = _NAME.match(field or ""), _NAME.match(text)
    if name and lead and text.startswith(field) and lead.end() == name.end():
        return name.group()
    return None


class FormatNote(UserWarning):
    """A note on how an input written in an older or implicit form is read (a space
    file's count range without ``count_range``). The command line prints it, one line,
    after the command's answer (exit status 0, 1 or 3), never beside a refusal, which
    stays one line."""


def invalid(name: str, value: object, allowed: str) -> NoReturn:
    """Raise the standard refusal: ModelError ``name = value is invalid: allowed``.

    It raises itself, so a check that forgets ``raise`` still refuses the input (a Ψ
    written ``if size < 1: invalid(...)`` must not go on with the size); the codebase
    writes ``raise invalid(...)`` all the same, so a reader sees where the check ends.
    The refusal is the whole message: an exception being handled when it is raised (a
    ``float()`` that failed) stays in ``__context__`` for a debugger but is not printed.
    """
    raise ModelError(f"{name} = {value!r} is invalid: {allowed}", field=name) from None


def install_hint(extra: str) -> str:
    """How to install an optional extra, from PyPI and in a clone of the repository (a
    new user in a clone tried the PyPI form, which installs the package a second time)."""
    return (f"pip install 'accelperf[{extra}]' (in a clone of the repository: "
            f".venv/bin/pip install -e '.[{extra}]')")
