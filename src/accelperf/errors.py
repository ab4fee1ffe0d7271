"""The project's exception: invalid input, named and explained."""

from __future__ import annotations


class ModelError(ValueError):
    """Invalid input to a model, a parser or a command.

    The message names the parameter, the value given and what is allowed, so the
    command line can print it as one line and a notebook user knows what to fix.
    """


def invalid(name: str, value: object, allowed: str) -> ModelError:
    """Build the standard message: ``name = value is invalid: allowed``."""
    return ModelError(f"{name} = {value!r} is invalid: {allowed}")
