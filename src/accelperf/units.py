"""Sizes, frequencies and time units.

Size convention
---------------
``KB``, ``MB`` and ``GB`` are decimal (10^3, 10^6, 10^9 bytes) and ``KiB``, ``MiB`` and
``GiB`` are binary (2^10, 2^20, 2^30 bytes), as in IEC 80000-13. The LogCA paper's axes
(16B ... 32MB) step in powers of two, so its "KB" and "MB" are KiB and MiB: its
largest granularity, "32MB", is 2^25 = 33,554,432 bytes. To reproduce its sweeps write
``--from 16B --to 32MiB``.

Both are read; sizes are always *printed* in binary units (:func:`format_size`), so one
table never shows "600 KB" beside "512 KiB". Rates stay decimal (GB/s = 10^9 bytes/s), as
bandwidths are quoted everywhere.
"""

from __future__ import annotations

import math
import re

import numpy as np

from .errors import ModelError, invalid

_SIZE_FACTORS = {
    "": 1, "B": 1,
    "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
    "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40,
    "K": 2**10, "M": 2**20, "G": 2**30,  # bare prefixes as most tools read them
}
_FREQ_FACTORS = {"": 1.0, "HZ": 1.0, "KHZ": 1e3, "MHZ": 1e6, "GHZ": 1e9}
_NUMBER_UNIT = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*$")


def _split(text: str, name: str, what: str) -> tuple[float, str]:
    text = str(text)
    match = _NUMBER_UNIT.match(text) if len(text) <= 100 else None
    if not match:
        raise invalid(name, text if len(text) <= 100 else text[:100] + "...",
                      f"expected {what}")
    return float(match.group(1)), match.group(2).upper()


def _number(value: int | float, name: str, what: str) -> float:
    try:
        return float(value)
    except OverflowError:              # an int beyond the largest double
        digits = int(value.bit_length() * math.log10(2)) + 1
        raise invalid(name, f"<an integer of {digits} digits>", f"{what} below 1.8e308") \
            from None


def parse_size(text: str | int | float, name: str = "size") -> float:
    """Bytes in a size such as ``"16B"``, ``"32KiB"``, ``"1.5MB"`` or ``4096``.

    >>> parse_size("32MiB")
    33554432.0
    >>> parse_size("2KB")
    2000.0
    """
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value, unit = _number(text, name, "a size in bytes"), ""
    else:
        value, unit = _split(text, name, "a size like 16B, 4KiB, 1.5MB or 32MiB "
                                   "(units B, KB/KiB, MB/MiB, GB/GiB)")
    if unit not in _SIZE_FACTORS:
        raise invalid(name, text, "unknown unit; use B, KB/KiB, MB/MiB or GB/GiB")
    size = value * _SIZE_FACTORS[unit]
    if not math.isfinite(size) or size <= 0:
        raise invalid(name, text, "a size must be a finite number of bytes > 0")
    return size


BARE_HZ_FLOOR = 1e5
"""Hz: a frequency written without a unit below this is taken for a forgotten MHz or GHz
(a clock of 100 kHz or less is written with its unit)."""


def parse_frequency(text: str | int | float, name: str = "frequency") -> float:
    """Hertz in a frequency such as ``"3.4GHz"``, ``"2270MHz"`` or ``3.4e9``."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value, unit = _number(text, name, "a frequency in Hz"), ""
    else:
        value, unit = _split(text, name, "a frequency like 3.4GHz, 2270MHz or 3.4e9")
    if unit not in _FREQ_FACTORS:
        raise invalid(name, text, "unknown unit; use Hz, kHz, MHz or GHz")
    hz = value * _FREQ_FACTORS[unit]
    if not math.isfinite(hz) or hz <= 0:
        raise invalid(name, text, "a frequency must be finite and > 0")
    if not unit and hz < BARE_HZ_FLOOR:
        # `--frequency 250` meant 250 MHz, and gave a clock 10^6 times too slow in silence
        raise invalid(name, text, f"a bare number is hertz, and {value:g} Hz is no clock: "
                                  f"give the unit ({value:g}MHz, {value:g}GHz), or write "
                                  f"{value:g}Hz if you mean it")
    return hz


def format_size(nbytes: float) -> str:
    """Human-readable size in binary units, the one way accelperf prints sizes:
    ``format_size(2048) == '2 KiB'``, ``format_size(600e3) == '586 KiB'``."""
    if nbytes is None or not math.isfinite(nbytes):
        return str(nbytes)
    base, units = 1024.0, ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
    value, i = float(nbytes), 0
    while abs(value) >= base and i < len(units) - 1:
        value /= base
        i += 1
    if abs(value) >= 1e4:  # beyond EiB: fall back to scientific notation in bytes
        return f"{nbytes:.3g} B"
    # three digits print 1000..1023 as "1.02e+03" (a demo's peak at "1.02e+03 KiB")
    text = f"{value:.0f}" if abs(value) >= 999.5 else f"{value:.3g}"
    return f"{text} {units[i]}"


REAL_SIZES = 2.0 ** 64
"""16 EiB, 2^64 bytes (a 64-bit address space): no offload is larger. A crossing granularity past it exists only in the model's
algebra (discrete-gpu/aes: L·g against C·g^1.01 crosses at 1.3e125 B), so it is printed as
none within this size, not as an astronomical number."""


def format_crossing(nbytes: float | None) -> str:
    """A crossing granularity (g1, g_A/2, g_A, an end of their intervals) as printed
    everywhere: a dash where there is none, ``< 1 B`` below a byte (the accelerator wins at
    every size one can offload; a fit with no overhead puts it at 1e-19 B), ``none within
    16 EiB`` past :data:`REAL_SIZES`, else the size."""
    if nbytes is None:
        return "—"
    if nbytes < 1:
        return "< 1 B"
    if nbytes > REAL_SIZES:
        return f"none within {format_size(REAL_SIZES)}"
    return format_size(nbytes)


def _check_range(lo, hi) -> None:
    finite = all(isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)
                 and math.isfinite(x) for x in (lo, hi))
    if not (finite and 0 < lo <= hi):
        raise ModelError(f"granularity range {lo!r}..{hi!r} is invalid: need finite "
                         f"numbers of bytes with 0 < from <= to")


def powers_of_two(lo: float, hi: float) -> np.ndarray:
    """The powers of two from ``lo`` to ``hi`` bytes inclusive (the paper's sweep points)."""
    _check_range(lo, hi)
    first, last = math.ceil(math.log2(lo) - 1e-12), math.floor(math.log2(hi) + 1e-12)
    return np.exp2(np.arange(first, last + 1, dtype=float))


def log_grid(lo: float, hi: float, points: int = 400) -> np.ndarray:
    """``points`` granularities evenly spaced on a log axis from ``lo`` to ``hi``."""
    _check_range(lo, hi)
    if isinstance(points, bool) or not isinstance(points, (int, np.integer)) or points < 1:
        raise invalid("points", points, "a whole number >= 1")
    return np.geomspace(lo, hi, points)
