"""The project's exception: invalid input, named and explained."""

from __future__ import annotations

from typing import NoReturn


class ModelError(ValueError):
    """Invalid input to a model, a parser or a command.

    The message names the parameter, the value given and what is allowed, so the
    command line can print it as one line and a notebook user knows what to fix.
    """


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
    raise ModelError(f"{name} = {value!r} is invalid: {allowed}") from None
