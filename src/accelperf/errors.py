"""The project's exception: invalid input, named and explained."""

from __future__ import annotations

from typing import NoReturn


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


def invalid(name: str, value: object, allowed: str) -> NoReturn:
    """Raise the standard refusal: ModelError ``name = value is invalid: allowed``.

    It raises itself, so a check that forgets ``raise`` still refuses the input (a Ψ
    written ``if size < 1: invalid(...)`` must not go on with the size); the codebase
    writes ``raise invalid(...)`` all the same, so a reader sees where the check ends.
    The refusal is the whole message: an exception being handled when it is raised (a
    ``float()`` that failed) stays in ``__context__`` for a debugger but is not printed.
    """
    raise ModelError(f"{name} = {value!r} is invalid: {allowed}", field=name) from None
