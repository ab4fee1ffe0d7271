"""Checks of user-supplied numbers, with messages that name the parameter and the range."""

from __future__ import annotations

import math

import numpy as np

from .errors import ModelError, invalid


def size_hint(value) -> str:
    """A sentence for a size typed as the command line takes it ("64KiB") where Python
    wants a number of bytes; empty for anything else."""
    from .units import parse_size
    # a unit is what makes it a size: "256e9" given for a bandwidth is no size typed
    if not isinstance(value, str) or not value.strip()[-1:].isalpha():
        return ""
    try:
        nbytes = parse_size(value)
    except ModelError:
        return ""
    return (f" (a size here is a number of bytes: "
            f"accelperf.units.parse_size({value!r}) = {nbytes:g})")


def real_number(name: str, value, *, positive: bool, allow_inf: bool = False) -> float:
    """``value`` as a float, or a ModelError naming ``name``: it must be a real number,
    finite (or +inf where ``allow_inf``), and > 0 (``positive``) or >= 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise invalid(name, value, "must be a real number" + size_hint(value))
    number = float(value)
    if math.isnan(number) or (math.isinf(number) and not (allow_inf and number > 0)):
        raise invalid(name, value, "must be a finite number" +
                      (" or +inf (unbounded)" if allow_inf else ""))
    if positive and number <= 0:
        raise invalid(name, value, "must be > 0")
    if not positive and number < 0:
        raise invalid(name, value, "must be >= 0")
    return number


def number_array(name: str, values) -> np.ndarray:
    """``values`` (a number, a list or an array) as a float array, or a ModelError naming
    ``name`` and the first entry that is not a number: NumPy's own "could not convert
    string to float" names neither, and None became NaN."""
    if values is None:
        raise invalid(name, None, "must be a number or an array of numbers")
    try:
        return np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        bad = next((v for v in np.asarray(values, dtype=object).ravel()
                    if not isinstance(v, (int, float, np.number))), values)
        raise invalid(name, bad, "must be a number or an array of numbers"
                      + size_hint(bad)) from None
