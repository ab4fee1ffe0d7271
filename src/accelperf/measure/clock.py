"""The core clock, measured: a timed chain of dependent additions.

On virtual machines /proc/cpuinfo's "cpu MHz" is the nominal TSC rate, not the frequency
the core runs at; a chain of additions that each wait for the previous one runs at one
addition per core cycle, so counting them over a known time measures the real clock.
"""

from __future__ import annotations

import statistics
import time

from .native import load_kernels


def core_clock_hz(repeats: int = 5, target_s: float = 0.05) -> float | None:
    """Median core clock over ``repeats`` runs, or None without the compiled kernel."""
    lib = load_kernels()
    if lib is None:
        return None
    n = 1 << 16
    while True:
        start = time.perf_counter()
        lib.add_chain(n)
        if time.perf_counter() - start > target_s / 4:
            break
        n *= 4
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        lib.add_chain(n)
        rates.append(8 * n / (time.perf_counter() - start))
    return float(statistics.median(rates))
