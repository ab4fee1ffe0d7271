"""LogCA speed: vectorised speedup evaluations per second, and the time to find g1, g_A/2
and g_A for 10,000 random parameter sets (batched, and one model at a time).

Run: .venv/bin/python benchmarks/logca_eval.py
"""

from __future__ import annotations

import numpy as np
from _timing import best_of

from accelperf.logca import LogCA, metric_batch, speedup_array




def random_parameters(n, rng):
    return dict(L=10 ** rng.uniform(-2, 4, n), o=10 ** rng.uniform(0, 8, n),
                C=10 ** rng.uniform(0, 4, n), A=10 ** rng.uniform(0.1, 2.5, n),
                beta=rng.uniform(0.1, 2.5, n), dependent=rng.random(n) < 0.5)


def main():
    rng = np.random.default_rng(2017)
    sets, points = 2000, 2048
    p = random_parameters(sets, rng)
    g = np.geomspace(16, 2**25, points)
    col = {k: v[:, None] for k, v in p.items()}

    t = best_of(5, lambda: speedup_array(g[None, :], col["L"], col["o"], col["C"], col["A"],
                                         col["beta"], col["dependent"]))
    per_second = sets * points / t
    print(f"speedup grid: {sets} parameter sets x {points} granularities in {t * 1e3:.1f} ms")

    n = 10_000
    q = random_parameters(n, rng)
    timings = {}
    for metric in ("g1", "g_half", "g_A"):
        timings[metric] = best_of(3, lambda: metric_batch(q["L"], q["o"], q["C"], q["A"],
                                                          q["beta"], q["dependent"], metric))
    batched = sum(timings.values())
    print("batched metrics for 10,000 parameter sets: "
          + ", ".join(f"{k} {v * 1e3:.0f} ms" for k, v in timings.items())
          + f"; all three {batched:.3f} s")

    models = [LogCA(L=q["L"][i], o=q["o"][i], C=q["C"][i], A=q["A"][i], beta=q["beta"][i],
                    latency="dependent" if q["dependent"][i] else "independent")
              for i in range(1000)]
    t_single = best_of(1, lambda: [(m.g1(), m.g_half(), m.g_A()) for m in models])
    print(f"one model at a time (result objects with reasons): 1,000 sets in {t_single:.2f} s "
          f"-> {t_single * 10:.1f} s per 10,000")
    print(f"metrics_10k_sets_seconds: {batched:.3f}")
    print(f"speedup_evaluations_per_second: {per_second:.3e}")


if __name__ == "__main__":
    main()
