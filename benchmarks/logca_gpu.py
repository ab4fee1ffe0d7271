"""LogCA on real GPU offloads: fit every other size, predict the rest (issue 36).

For each measurement CSV in DIR (default: the shipped H200 data,
examples/measurements/gpu-h200/), the terms are chosen by cross-validation on the training
half (:func:`accelperf.logca.choose.holdout_check`), and the held-out speedup error is
printed beside the neighbour interpolation's (the line through the two neighbouring training
sizes in ln g - ln speedup), with g1 against the measured crossing (log-log interpolation
where the measured speedup passes 1, over all sizes). The host's layers come from
DIR/host-layers.toml, else from the shipped one. Last line: the held-out error averaged over
the kernels. Targets (issue 36): mean <= 15%, every kernel <= 30%, below the interpolation on
average; g1 within 25%; one kernel's fit under 10 s.

Run: PYTHONPATH=src .venv/bin/python benchmarks/logca_gpu.py [DIR]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from accelperf.density import hierarchy
from accelperf.logca.choose import holdout_check
from accelperf.logca.fit import prepare_data
from accelperf.logca.hierarchy import layers_from_hierarchy
from accelperf.measure.data import read_timings

SHIPPED = Path(__file__).resolve().parent.parent / "examples" / "measurements" / "gpu-h200"


def main(directory: Path) -> None:
    toml = directory / "host-layers.toml"
    layers = layers_from_hierarchy(hierarchy(str(toml if toml.exists() else
                                                 SHIPPED / "host-layers.toml")))
    model_errors, base_errors = [], []
    for path in sorted(directory.glob("*.csv")):
        t = read_timings(path, "min")
        d = prepare_data(t.granularity, t.host, t.accel, t.echo, None, None)
        start = time.perf_counter()
        check = holdout_check(d, layers, name=path.stem)
        seconds = time.perf_counter() - start
        kept = ", ".join(x.term for x in check.fit.terms if x.kept) or "plain"
        g1 = "no crossing measured" if check.g1_measured is None else (
            f"g1 {check.fit.g1.model or float('nan'):.4g} B vs measured "
            f"{check.g1_measured:.4g} B ({check.g1_error:+.1%})" if check.g1_error is not None
            else f"g1 none vs measured {check.g1_measured:.4g} B")
        print(f"{path.stem}: held-out speedup error model {check.model.mean:.1%} "
              f"(max {check.model.max:.1%}), neighbour interpolation {check.baseline.mean:.1%}"
              f" (max {check.baseline.max:.1%}); {g1}; terms: {kept}; fit {seconds:.1f} s")
        model_errors.append(check.model.mean)
        base_errors.append(check.baseline.mean)
    print(f"neighbour_interpolation_mean_error: {np.mean(base_errors):.4f}")
    print(f"gpu_holdout_mean_error: {np.mean(model_errors):.4f}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else SHIPPED)
