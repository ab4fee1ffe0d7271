"""The speed of LogCA's chosen-terms fit (issue 36's target: one kernel under 10 s on the
2-core machine): `choose` on the shipped H200 scale kernel (17 sizes, 12 folds, the
jackknife for g1), with the solver's Jacobian in closed form
(:func:`accelperf.logca.termfit.log_times_and_jacobian`) against the same fit with SciPy's
finite differences, run alternately in this process, best of REPEATS each. The headline is
the ratio.

Run: PYTHONPATH=src .venv/bin/python benchmarks/logca_fit_speed.py
"""

from __future__ import annotations

import time
import types
import warnings
from pathlib import Path

from scipy import optimize

import accelperf.logca.termfit as termfit
from accelperf.density import hierarchy
from accelperf.logca.choose import choose
from accelperf.logca.fit import prepare_data
from accelperf.logca.hierarchy import layers_from_hierarchy
from accelperf.measure.data import read_timings

DATA = Path(__file__).resolve().parent.parent / "examples" / "measurements" / "gpu-h200"
REPEATS = 2


def finite_differences(*args, jac=None, **kwargs):
    """least_squares without the closed-form Jacobian (SciPy's 2-point differences)."""
    return optimize.least_squares(*args, **kwargs)


def main() -> None:
    layers = layers_from_hierarchy(hierarchy(str(DATA / "host-layers.toml")))
    t = read_timings(DATA / "gpu-scale.csv")
    data = prepare_data(t.granularity, t.host, t.accel, t.echo, None, None)
    solvers = {"closed form": optimize,
               "finite differences": types.SimpleNamespace(least_squares=finite_differences)}
    best = {name: float("inf") for name in solvers}
    try:
        for _ in range(REPEATS):
            for name, module in solvers.items():
                termfit.optimize = module
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    start = time.process_time()
                    choose(data, layers)
                best[name] = min(best[name], time.process_time() - start)
    finally:
        termfit.optimize = optimize
    for name, seconds in best.items():
        print(f"fit of the H200 scale ({data.n} sizes), Jacobian by {name}: {seconds:.2f} s CPU")
    print(f"fit_speedup_closed_form_jacobian: {best['finite differences'] / best['closed form']:.2f}")


if __name__ == "__main__":
    main()
