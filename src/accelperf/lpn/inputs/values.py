"""Checks for the plain JSON values a model's Ψ reads (sizes, counts, lists, records).

JSON gives floats, strings, booleans and nulls as readily as integers; Ψ must not truncate
5.7 to 5, take ``true`` for 1, or fail deep inside the simulator on a negative size. Each
check returns the value or raises one ModelError naming the field, the value and what is
allowed.
"""

from __future__ import annotations

import numbers

from ...errors import ModelError, invalid
from . import abridged

LARGEST = 2 ** 40
"""The largest size or count a Ψ accepts unless told otherwise: far beyond any real input,
small enough that nothing overflows on the way to cycles."""


def whole(value, name: str, low: int = 0, high: int = LARGEST) -> int:
    """A whole number in ``[low, high]``; 3.0 is accepted as 3, 3.5 and ``true`` are not."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise invalid(name, abridged(value), f"a whole number from {low} to {high}")
    if isinstance(value, float) and not value.is_integer():
        raise invalid(name, abridged(value), f"a whole number from {low} to {high} (no "
                                             f"fractions)")
    number = int(value)
    if not low <= number <= high:
        raise invalid(name, abridged(value), f"a whole number from {low} to {high}")
    return number


def entries(value, name: str, least: int = 1) -> list:
    """A JSON list with at least ``least`` entries."""
    if not isinstance(value, (list, tuple)):
        raise invalid(name, abridged(value), f"a list (of at least {least} entries)")
    if len(value) < least:
        raise invalid(name, abridged(value), f"a list of at least {least} entries")
    return list(value)


def record(value, name: str, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> dict:
    """A JSON object with exactly the ``required`` keys and any of the ``optional`` ones."""
    keys = ", ".join(required + optional)
    if not isinstance(value, dict):
        raise invalid(name, abridged(value), f"an object with keys {keys}")
    missing = [k for k in required if k not in value]
    unknown = [k for k in value if k not in required + optional]
    if missing or unknown:
        what = f"missing {', '.join(missing)}" if missing else f"unknown {', '.join(unknown)}"
        raise ModelError(f"{name} = {abridged(value)!r} is invalid: {what}; the keys are "
                         f"{keys}", field=name)
    return value
