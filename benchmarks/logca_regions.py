"""Optimization-region speed: one design at the paper's 22 granularities, and 1,000 designs
in one vectorised call.

Run: .venv/bin/python benchmarks/logca_regions.py
"""

from __future__ import annotations

import numpy as np
from _timing import best_of

from accelperf.logca import preset
from accelperf.logca.regions import optimization_regions, regions_batch




def main():
    model = preset("ultrasparc-t2", "aes")
    one = best_of(20, lambda: optimization_regions(model))
    print(f"one design (exact boundaries, bands, gains at 22 sample points): {one * 1e3:.2f} ms")

    rng = np.random.default_rng(6)
    n = 1000
    params = dict(L=10 ** rng.uniform(-2, 4, n), o=10 ** rng.uniform(0, 8, n),
                  C=10 ** rng.uniform(0, 4, n), A=10 ** rng.uniform(0.2, 2.5, n),
                  beta=rng.uniform(0.2, 2.0, n), dependent=rng.random(n) < 0.5)
    batch = best_of(3, lambda: regions_batch(**params))
    boundaries = sum(len(b) for per in regions_batch(**params).boundaries for b in per)
    print(f"1,000 designs vectorised: {batch:.3f} s ({boundaries} exact boundaries)")
    loop = best_of(1, lambda: [optimization_regions(preset("sparc-t3", "aes"))
                               for _ in range(100)])
    print(f"100 designs one at a time with full result objects: {loop:.3f} s")
    print(f"regions_1000_designs_seconds: {batch:.3f}")


if __name__ == "__main__":
    main()
