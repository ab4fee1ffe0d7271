"""Timing helper shared by the benchmark scripts."""

import time


def best_of(repeats, func):
    """The fastest of ``repeats`` runs of ``func()``, in seconds: on a shared machine the
    other runs were slowed by something else, never sped up."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)
