"""Coverage and cost of the calibration's three uncertainty methods (issue 21, item 1).

A synthetic check where the true delays are known: the block pipeline built with
perturbed delays is simulated on 12 random block streams (each stage the bottleneck of
some), each latency multiplied by (1 + ε), ε ~ N(0, NOISE) (a measurement noise; the
cycles stay fractional, as averaged counters are). From the defaults, the fit and each
method's 68.27 % interval (:mod:`accelperf.lpn.uncertainty`) are computed on TRIALS such
data sets; coverage is the share of (trial, parameter) intervals holding the true value
(nominal: 68 %), width the mean interval width in cycles, cost the simulations and
seconds the method adds after the fit (a fresh cache per method, so none profits from
another's simulations), as a ratio against the fit itself.

Run: .venv/bin/python benchmarks/lpn_calibrate_uncertainty.py   (a few minutes on 2 cores)
Last line: ``profile_coverage: X``.
"""

from __future__ import annotations

import random
import time

import numpy as np

from accelperf.lpn import simulate
from accelperf.lpn.calibrate import Fitter, Measurement
from accelperf.lpn.library import build
from accelperf.lpn.uncertainty import METHODS, estimate

MODEL = "block-pipeline"
TRUE = {"entropy_base": 7, "entropy_per_coeff": 2, "dequant_base": 11, "colour_cycles": 45}
TRIALS = 20
NOISE = 0.01
ROWS = 12


def streams(rng: random.Random) -> list:
    """Dense, sparse and mixed streams, so that each stage is the bottleneck of some."""
    out = [[64] * 20, [0] * 20, [12] * 20, [30] * 10 + [2] * 10]
    while len(out) < ROWS:
        out.append([rng.choice((0, 4, 16, 40, 64)) for _ in range(rng.randint(4, 30))])
    return out


def data(trial: int) -> list[Measurement]:
    rng = random.Random(trial)
    model = build(MODEL, TRUE)
    return [Measurement(f"s{k}", s, simulate(model, s).latency * (1 + rng.gauss(0, NOISE)))
            for k, s in enumerate(streams(rng))]


def main() -> None:
    names = list(TRUE)
    covered = {m: 0 for m in METHODS}
    widths = {m: [] for m in METHODS}
    sims = {m: 0 for m in METHODS}
    seconds = {m: 0.0 for m in METHODS}
    fit_sims, fit_seconds, total = 0, 0.0, 0
    for trial in range(TRIALS):
        measured = data(trial)
        rows = np.arange(len(measured))
        for method in METHODS:
            fitter = Fitter(lambda v: build(MODEL, v), measured)
            start = time.perf_counter()
            values = fitter.fit({n: p.value for n, p in fitter.spec.items()}, names, rows)
            fitted_at, after_fit = time.perf_counter(), fitter.simulations
            found = estimate(method, fitter, values, names, rows, names)
            seconds[method] += time.perf_counter() - fitted_at
            sims[method] += fitter.simulations - after_fit
            if method == METHODS[0]:
                fit_seconds += fitted_at - start
                fit_sims += after_fit
                total += len(names)
            for n in names:
                e = found[n]
                covered[method] += e.low <= TRUE[n] <= e.high
                widths[method].append(e.high - e.low)
    print(f"{MODEL}, true {TRUE}; {TRIALS} trials x {ROWS} inputs, noise {NOISE:.0%} "
          f"(relative, normal); the fit alone: {fit_sims / TRIALS:.0f} simulations, "
          f"{fit_seconds / TRIALS:.2f} s per trial")
    for m in METHODS:
        print(f"{m}: coverage {covered[m] / total:.0%} of {total} intervals (nominal 68%), "
              f"mean width {np.mean(widths[m]):.2f} cycles, {sims[m] / TRIALS:.0f} "
              f"simulations and {seconds[m] / TRIALS:.2f} s per trial "
              f"({seconds[m] / fit_seconds:.1f}x the fit)")
    print(f"profile_coverage: {covered['profile'] / total:.3f}")


if __name__ == "__main__":
    main()
