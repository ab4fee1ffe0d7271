"""Checks of user-supplied numbers, with messages that name the parameter and the range."""

from __future__ import annotations

import math

import numpy as np

from .errors import invalid


def real_number(name: str, value, *, positive: bool, allow_inf: bool = False) -> float:
    """``value`` as a float, or a ModelError naming ``name``: it must be a real number,
    finite (or +inf where ``allow_inf``), and > 0 (``positive``) or >= 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise invalid(name, value, "must be a real number")
    number = float(value)
    if math.isnan(number) or (math.isinf(number) and not (allow_inf and number > 0)):
        raise invalid(name, value, "must be a finite number" +
                      (" or +inf (unbounded)" if allow_inf else ""))
    if positive and number <= 0:
        raise invalid(name, value, "must be > 0")
    if not positive and number < 0:
        raise invalid(name, value, "must be >= 0")
    return number
