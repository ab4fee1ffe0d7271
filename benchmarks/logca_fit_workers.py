"""The wall time of LogCA's chosen-terms fit (issue 36's target: one kernel under 10 s on
the 2-core machine) on the shipped H200 scale kernel (17 sizes, 12 folds, the jackknife
for g1), three ways, run alternately in this process, best of REPEATS each:

* every solve from scratch, in this process (as before accelperf.logca.validation);
* the host's stage shared by the candidates with the same host terms
  (:class:`accelperf.logca.termfit.HostStages`), in this process (``workers=1``);
* the same with the folds solved on every core this process may use (the default of
  `logca fit --select`).

The three fits must be the same to the last bit (the script stops otherwise). The headline
is the first's time over the last's.

Run: PYTHONPATH=src .venv/bin/python benchmarks/logca_fit_workers.py
"""

from __future__ import annotations

import time
from pathlib import Path

import accelperf.logca.validation as validation
from accelperf.density import hierarchy
from accelperf.logca.choose import choose
from accelperf.logca.fit import prepare_data
from accelperf.logca.hierarchy import layers_from_hierarchy
from accelperf.logca.termfit import HostStages
from accelperf.measure.data import read_timings

DATA = Path(__file__).resolve().parent.parent / "examples" / "measurements" / "gpu-h200"
REPEATS = 2


class Unshared(HostStages):
    """Host stages that are never kept: every solve makes its own."""

    def __setitem__(self, key, value) -> None:
        pass


def main() -> None:
    layers = layers_from_hierarchy(hierarchy(str(DATA / "host-layers.toml")))
    t = read_timings(DATA / "gpu-scale.csv")
    data = prepare_data(t.granularity, t.host, t.accel, t.echo, None, None)
    cores = validation.available_cpus()
    ways = {"every solve from scratch, 1 process": (1, Unshared),
            "host stages shared, 1 process": (1, HostStages),
            f"host stages shared, {cores} processes": (cores, HostStages)}
    best = {name: float("inf") for name in ways}
    fits = {}
    for _ in range(REPEATS):
        for name, (workers, stages) in ways.items():
            validation.HostStages = stages
            try:
                start = time.perf_counter()
                fits[name] = choose(data, layers, workers=workers)
                best[name] = min(best[name], time.perf_counter() - start)
            finally:
                validation.HostStages = HostStages
    first = next(iter(fits.values()))
    for name, fit in fits.items():
        if fit.solved.x.tobytes() != first.solved.x.tobytes() or \
                (fit.cv_error, fit.g1) != (first.cv_error, first.g1):
            raise SystemExit(f"{name}: not the same fit as the first")
        print(f"fit of the H200 scale ({data.n} sizes), {name}: {best[name]:.2f} s")
    last = list(ways)[-1]
    print(f"fit_speedup_shared_and_parallel: {best[list(ways)[0]] / best[last]:.2f}")


if __name__ == "__main__":
    main()
